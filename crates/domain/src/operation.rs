//! The operations of the API, named once: use cases record the name on the events and ledger
//! entries they write, and the HTTP adapter routes, guards and documents each one from its
//! registry entry. A name is stored data and the path clients call, so it never changes once
//! released; a test in the HTTP adapter holds the registry to exactly this list.

use std::fmt;

macro_rules! operations {
    ($($variant:ident = $name:literal,)*) => {
        /// Every operation of the API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($variant,)*
        }

        impl Operation {
            /// Every operation, in the order of the document.
            pub const ALL: &'static [Operation] = &[$(Operation::$variant,)*];

            /// The operation called `name`, if there is one.
            pub fn find(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Operation::$variant),)*
                    _ => None,
                }
            }

            /// Its name: the path clients call and the `operation` of stored events and ledger
            /// entries (`mrp.order.setOrders`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Operation::$variant => $name,)*
                }
            }
        }
    };
}

operations! {
    ImportLocation = "core.location.importLocation",
    ListLocations = "core.location.listLocations",
    ImportProject = "core.project.importProject",
    ListProjects = "core.project.listProjects",

    ImportGreenLot = "inventory.green.importGreenLot",
    TransferGreenLotToLocation = "inventory.green.transferGreenLotToLocation",
    SetGreenLotWeight = "inventory.green.setGreenLotWeight",
    ListGreenLots = "inventory.green.listGreenLots",
    GetGreenLotDetailsByIds = "inventory.green.getGreenLotDetailsByIds",
    SetDueDiligence = "inventory.green.setDueDiligence",

    ListRoastedLots = "inventory.roast.listRoastedLots",
    GetRoastedLotsByIds = "inventory.roast.getRoastedLotsByIds",
    GetRoastDetailsByIds = "inventory.roast.getRoastDetailsByIds",
    GetRoastCurvesById = "inventory.roast.getRoastCurvesById",
    GetProfilesByIds = "inventory.roast.getProfilesByIds",
    RecordRoast = "inventory.roast.recordRoast",
    ImportProfile = "inventory.roast.importProfile",
    SetProfilePlanning = "inventory.roast.setProfilePlanning",
    SetRoastedLotWeight = "inventory.roast.setRoastedLotWeight",
    ImportRoastLog = "inventory.roast.importRoastLog",

    CreateBlend = "inventory.blend.createBlend",
    ListBlendedLots = "inventory.blend.listBlendedLots",

    ListCuppings = "quality.cupping.listCuppings",
    GetCuppingsByIds = "quality.cupping.getCuppingsByIds",
    ListCuppingResults = "quality.cupping.listCuppingResults",
    CreateCupping = "quality.cupping.createCupping",
    SetCuppingState = "quality.cupping.setCuppingState",
    RecordCuppingResults = "quality.cupping.recordCuppingResults",

    ListPhysicalAnalyses = "quality.physical.listPhysicalAnalyses",
    RecordPhysicalAnalysis = "quality.physical.recordPhysicalAnalysis",

    SyncProducts = "mrp.product.syncProducts",
    ListProducts = "mrp.product.listProducts",
    SetRecipe = "mrp.product.setRecipe",
    GetNetRequirements = "mrp.plan.getNetRequirements",
    GetRunOut = "mrp.plan.getRunOut",
    SetOrders = "mrp.order.setOrders",
    ListOrders = "mrp.order.listOrders",
    SetOrderStatus = "mrp.order.setOrderStatus",
    ShipOrder = "mrp.order.shipOrder",

    TraceLot = "inventory.trace.traceLot",
    GetCost = "inventory.trace.getCost",
    GetDueDiligence = "inventory.trace.getDueDiligence",
    ExportEpcis = "inventory.trace.exportEpcis",
    ListLedgerEntries = "inventory.trace.listLedgerEntries",

    ListEvents = "core.event.listEvents",
    CreateWebhook = "core.event.createWebhook",
    ListWebhooks = "core.event.listWebhooks",
    DeleteWebhook = "core.event.deleteWebhook",
    ListDeliveries = "core.event.listDeliveries",

    VerifyStatements = "eudr.statement.verifyStatements",
    PreviewStatement = "eudr.statement.previewStatement",
    SubmitStatement = "eudr.statement.submitStatement",
    AmendStatement = "eudr.statement.amendStatement",
    WithdrawStatement = "eudr.statement.withdrawStatement",
    ListSubmissions = "eudr.statement.listSubmissions",
    GetSubmissionsByIds = "eudr.statement.getSubmissionsByIds",
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Units of work the service runs by itself, outside any call: the events they cause name them
/// where a call names its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// Polling the EU information system for submitted statements.
    EudrPoll,
    /// Verifying upstream statements again.
    EudrReverify,
    /// Rendering missing or outdated listing items at start-up.
    RenderListing,
}

impl Task {
    pub const fn name(self) -> &'static str {
        match self {
            Task::EudrPoll => "eudr.poll",
            Task::EudrReverify => "eudr.reverify",
            Task::RenderListing => "roastery.listing.render",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_finds_its_operation_and_no_other() {
        for op in Operation::ALL {
            assert_eq!(Operation::find(op.name()), Some(*op), "{op:?}");
        }
        let mut names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operation::ALL.len());
    }

    #[test]
    fn names_are_matched_exactly() {
        assert_eq!(
            Operation::find("mrp.order.setOrders"),
            Some(Operation::SetOrders)
        );
        for name in [
            "",
            "mrp.order",
            "mrp.order.setOrders/extra",
            "mrp.order.SetOrders",
            " mrp.order.setOrders",
        ] {
            assert_eq!(Operation::find(name), None, "{name:?}");
        }
    }

    /// Stored events carry these names: they never change (the operations' are held to the
    /// committed OpenAPI document).
    #[test]
    fn tasks_keep_their_stored_names() {
        assert_eq!(Task::EudrPoll.name(), "eudr.poll");
        assert_eq!(Task::EudrReverify.name(), "eudr.reverify");
        assert_eq!(Task::RenderListing.name(), "roastery.listing.render");
    }

    #[test]
    fn tasks_are_not_operations() {
        for task in [Task::EudrPoll, Task::EudrReverify, Task::RenderListing] {
            assert_eq!(Operation::find(task.name()), None);
        }
    }
}
