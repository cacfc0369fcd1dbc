//! The operations: one registry entry each, from which routing, scope checks and the OpenAPI
//! document are derived, and one module per subject (`core.location` in `location.rs`, `green.*` in `green.rs`) holding the handlers and their DTOs. A
//! handler decodes its DTO, calls one use case and encodes the answer; rules live in the domain.
//!
//! Adding an operation is adding its entry below, its handler and its use case: an entry without
//! a handler, a request or a result that has no schema, or a scope that does not exist fails to
//! compile, and every name that is not an entry answers 405 (see docs/ARCHITECTURE.md).

mod blend;
mod cupping;
mod eudr;
mod event;
pub(crate) mod green;
mod location;
mod mrp;
mod physical;
mod plan;
mod profile;
mod project;
mod registry;
mod roast;
mod trace;

use crate::call::Ctx;
use crate::error::ApiError;
use crate::wire::NoFilter;

pub(crate) use blend::BlendedLotDto;
pub(crate) use registry::{Contract, SchemaSet, Shape};
pub(crate) use roast::RoastedLotDto;

/// `getDueDiligence`'s result DTO, for the command line: its `plots` written whole.
pub(crate) fn due_diligence_result(
    report: roastery_domain::due_diligence::DueDiligenceReport,
) -> Result<trace::DueDiligenceReportResult, ApiError> {
    trace::DueDiligenceReportResult::whole(report)
}

/// `getNetRequirements`' result DTO, for the command line.
pub(crate) fn net_requirements_result(
    plan: roastery_app::plan::Plan,
) -> plan::NetRequirementsResult {
    plan.into()
}

registry::operations! {
    ImportLocation {
        name: "core.location.importLocation",
        scope: CoreLocation,
        shape: Write<location::ImportLocationData, location::LocationResult>,
        handler: location::import_location,
        summary: "Import a location (a warehouse or roasting site).",
    }
    ListLocations {
        name: "core.location.listLocations",
        scope: CoreLocation,
        shape: Page<NoFilter, location::LocationsResult>,
        handler: location::list_locations,
        summary: "List locations, newest first.",
    }
    ImportProject {
        name: "core.project.importProject",
        scope: CoreProject,
        shape: Write<project::ImportProjectData, project::ProjectResult>,
        handler: project::import_project,
        summary: "Import a project; names are unique.",
    }
    ListProjects {
        name: "core.project.listProjects",
        scope: CoreProject,
        shape: Page<NoFilter, project::ProjectsResult>,
        handler: project::list_projects,
        summary: "List projects, newest first.",
    }

    ImportGreenLot {
        name: "inventory.green.importGreenLot",
        scope: InventoryGreen,
        shape: Write<green::ImportGreenLotData, green::GreenLotResult>,
        handler: green::import_green_lot,
        summary: "Import a green lot from an external system.",
    }
    TransferGreenLotToLocation {
        name: "inventory.green.transferGreenLotToLocation",
        scope: InventoryGreen,
        shape: Write<green::TransferData, green::TransferResult>,
        handler: green::transfer,
        summary: "Move weight of a green lot to another location.",
    }
    SetGreenLotWeight {
        name: "inventory.green.setGreenLotWeight",
        scope: InventoryGreen,
        shape: Write<green::SetWeightData, green::GreenLotResult>,
        handler: green::set_weight,
        summary: "Set the weight of a green lot; zero consumes it.",
    }
    ListGreenLots {
        name: "inventory.green.listGreenLots",
        scope: InventoryGreen,
        shape: Page<green::ListFilter, green::GreenLotsResult>,
        handler: green::list_green_lots,
        summary: "List green lots, newest registration first.",
    }
    GetGreenLotDetailsByIds {
        name: "inventory.green.getGreenLotDetailsByIds",
        scope: InventoryGreen,
        shape: Page<green::DetailsFilter, green::GreenLotDetailsResult>,
        handler: green::details_by_ids,
        summary: "Read the details of green lots by id, with their EUDR due diligence.",
    }
    SetDueDiligence {
        name: "inventory.green.setDueDiligence",
        scope: InventoryGreen,
        shape: Write<green::SetDueDiligenceData, green::DueDiligenceResult>,
        handler: green::set_due_diligence,
        summary: "Replace the EUDR due diligence (plots, statements) of a source green lot.",
    }

    ListRoastedLots {
        name: "inventory.roast.listRoastedLots",
        scope: InventoryRoast,
        shape: Page<roast::ListRoastedLotsFilter, roast::RoastedLotsResult>,
        handler: roast::list_roasted_lots,
        summary: "List roasted lots, newest roast first.",
    }
    GetRoastedLotsByIds {
        name: "inventory.roast.getRoastedLotsByIds",
        scope: InventoryRoast,
        shape: Page<roast::RoastedLotIdsFilter, roast::RoastedLotsResult>,
        handler: roast::roasted_lots_by_ids,
        summary: "Read roasted lots by id.",
    }
    GetRoastDetailsByIds {
        name: "inventory.roast.getRoastDetailsByIds",
        scope: InventoryRoast,
        shape: Page<roast::RoastedLotIdsFilter, roast::RoastDetailsResult>,
        handler: roast::roast_details_by_ids,
        summary: "Read roast details by roasted lot id.",
    }
    GetRoastCurvesById {
        name: "inventory.roast.getRoastCurvesById",
        scope: InventoryRoast,
        shape: Read<roast::RoastCurvesFilter, roast::RoastCurvesResult>,
        handler: roast::roast_curves_by_id,
        summary: "Read the roast curves of one roasted lot.",
    }
    GetProfilesByIds {
        name: "inventory.roast.getProfilesByIds",
        scope: InventoryRoast,
        shape: Page<profile::ProfileIdsFilter, profile::ProfilesResult>,
        handler: profile::profiles_by_ids,
        summary: "Read processing profiles by id.",
    }
    RecordRoast {
        name: "inventory.roast.recordRoast",
        scope: InventoryRoast,
        shape: Write<roast::RecordRoastData, roast::RecordRoastResult>,
        handler: roast::record_roast,
        summary: "Record a roast: take green weight and create a roasted lot.",
    }
    ImportProfile {
        name: "inventory.roast.importProfile",
        scope: InventoryRoast,
        shape: Write<profile::ImportProfileData, profile::ProfileResult>,
        handler: profile::import_profile,
        summary: "Import a processing profile.",
    }
    SetProfilePlanning {
        name: "inventory.roast.setProfilePlanning",
        scope: InventoryRoast,
        shape: Write<profile::SetProfilePlanningData, profile::ProfileResult>,
        handler: profile::set_profile_planning,
        summary: "Set a profile's expected loss (or derive it from its last roasts) and batch size.",
    }
    SetRoastedLotWeight {
        name: "inventory.roast.setRoastedLotWeight",
        scope: InventoryRoast,
        shape: Write<roast::SetRoastedLotWeightData, roast::RoastedLotResult>,
        handler: roast::set_roasted_lot_weight,
        summary: "Set the weight of a roasted lot; zero consumes it.",
    }
    ImportRoastLog {
        name: "inventory.roast.importRoastLog",
        scope: InventoryRoast,
        shape: Write<roast::ImportRoastLogData, roast::RecordRoastResult>,
        handler: roast::import_roast_log,
        summary: "Import an Artisan roast log as a complete roast; once per roastUUID (a retry answers the existing roasted lot).",
    }

    CreateBlend {
        name: "inventory.blend.createBlend",
        scope: InventoryBlend,
        shape: Write<blend::CreateBlendData, blend::BlendedLotResult>,
        handler: blend::create_blend,
        summary: "Blend roasted lots into a new blended lot.",
    }
    ListBlendedLots {
        name: "inventory.blend.listBlendedLots",
        scope: InventoryBlend,
        shape: Page<blend::ListBlendedLotsFilter, blend::BlendedLotsResult>,
        handler: blend::list_blended_lots,
        summary: "List blended lots, newest blend first.",
    }

    ListCuppings {
        name: "quality.cupping.listCuppings",
        scope: QualityCupping,
        shape: Page<cupping::ListCuppingsFilter, cupping::CuppingsResult>,
        handler: cupping::list_cuppings,
        summary: "List cuppings, newest start first.",
    }
    GetCuppingsByIds {
        name: "quality.cupping.getCuppingsByIds",
        scope: QualityCupping,
        shape: Page<cupping::CuppingIdsFilter, cupping::CuppingsResult>,
        handler: cupping::get_cuppings_by_ids,
        summary: "Read cuppings by id.",
    }
    ListCuppingResults {
        name: "quality.cupping.listCuppingResults",
        scope: QualityCupping,
        shape: Page<cupping::CuppedCoffeeIdsFilter, cupping::CuppingResultsResult>,
        handler: cupping::list_cupping_results,
        summary: "Read the results of cupped coffees.",
    }
    CreateCupping {
        name: "quality.cupping.createCupping",
        scope: QualityCupping,
        shape: Write<cupping::CreateCuppingData, cupping::CuppingResultEnvelope>,
        handler: cupping::create_cupping,
        summary: "Create a cupping session.",
    }
    SetCuppingState {
        name: "quality.cupping.setCuppingState",
        scope: QualityCupping,
        shape: Write<cupping::SetCuppingStateData, cupping::CuppingResultEnvelope>,
        handler: cupping::set_cupping_state,
        summary: "Move a cupping along DRAFT → OPEN → CLOSED.",
    }
    RecordCuppingResults {
        name: "quality.cupping.recordCuppingResults",
        scope: QualityCupping,
        shape: Write<cupping::RecordCuppingResultsData, cupping::CuppingResultsResult>,
        handler: cupping::record_cupping_results,
        summary: "Record results of an open cupping.",
    }

    ListPhysicalAnalyses {
        name: "quality.physical.listPhysicalAnalyses",
        scope: QualityPhysical,
        shape: Page<physical::ListPhysicalAnalysesFilter, physical::PhysicalAnalysesResult>,
        handler: physical::list_physical_analyses,
        summary: "List physical analyses, newest first.",
    }
    RecordPhysicalAnalysis {
        name: "quality.physical.recordPhysicalAnalysis",
        scope: QualityPhysical,
        shape: Write<physical::RecordPhysicalAnalysisData, physical::PhysicalAnalysisResult>,
        handler: physical::record_physical_analysis,
        summary: "Record a physical analysis of a lot.",
    }

    SyncProducts {
        name: "mrp.product.syncProducts",
        scope: MrpProduct,
        shape: Bulk<mrp::ProductData, mrp::SyncedProductsResult>,
        handler: mrp::sync_products,
        summary: "Create or update products and add variants (≤50).",
    }
    ListProducts {
        name: "mrp.product.listProducts",
        scope: MrpProduct,
        shape: Page<NoFilter, mrp::ProductsResult>,
        handler: mrp::list_products,
        summary: "List products, newest first.",
    }
    SetRecipe {
        name: "mrp.product.setRecipe",
        scope: MrpProduct,
        shape: Write<mrp::SetRecipeData, mrp::ProductResult>,
        handler: mrp::set_recipe,
        summary: "Set the profiles a product is roasted from, in percentages; [] removes the recipe.",
    }
    GetNetRequirements {
        name: "mrp.plan.getNetRequirements",
        scope: MrpPlan,
        shape: Read<plan::NetRequirementsFilter, plan::NetRequirementsResult>,
        handler: plan::net_requirements,
        summary: "What to roast for the open orders: demand, profiles and batches, green lots, shortfalls.",
    }
    GetRunOut {
        name: "mrp.plan.getRunOut",
        scope: MrpPlan,
        shape: Page<plan::RunOutFilter, plan::RunOutResult>,
        handler: plan::run_out,
        summary: "When each green lot runs out at its recent use, soonest first.",
    }
    SetOrders {
        name: "mrp.order.setOrders",
        scope: MrpOrder,
        shape: Bulk<mrp::OrderData, mrp::SyncedOrdersResult>,
        handler: mrp::set_orders,
        summary: "Create or update orders by externalId (≤50).",
    }
    ListOrders {
        name: "mrp.order.listOrders",
        scope: MrpOrder,
        shape: Page<mrp::ListOrdersFilter, mrp::OrdersResult>,
        handler: mrp::list_orders,
        summary: "List orders, newest order date first.",
    }
    SetOrderStatus {
        name: "mrp.order.setOrderStatus",
        scope: MrpOrder,
        shape: Write<mrp::SetOrderStatusData, mrp::OrderResult>,
        handler: mrp::set_order_status,
        summary: "Move an order along its status machine.",
    }
    ShipOrder {
        name: "mrp.order.shipOrder",
        scope: MrpOrder,
        shape: Write<mrp::ShipOrderData, mrp::OrderResult>,
        handler: mrp::ship_order,
        summary: "Ship an order from lots: takes quantity × package size from each; completes it.",
    }

    TraceLot {
        name: "inventory.trace.traceLot",
        scope: InventoryTrace,
        shape: Read<trace::TraceFilterData, trace::TraceResult>,
        handler: trace::trace_lot,
        summary: "The whole genealogy of a lot, upstream or downstream: lots, edges, orders, cuppings.",
    }
    GetCost {
        name: "inventory.trace.getCost",
        scope: InventoryTrace,
        shape: Read<trace::CostFilterData, trace::CostResult>,
        handler: trace::cost,
        summary: "What a lot or an order cost, per kg and in total, per currency, through the genealogy.",
    }
    GetDueDiligence {
        name: "inventory.trace.getDueDiligence",
        scope: InventoryTrace,
        shape: Read<trace::DueDiligenceFilterData, trace::DueDiligenceReportResult>,
        handler: trace::due_diligence,
        summary: "The EUDR due diligence behind a lot or an order: source lots, statements, plots, completeness.",
    }
    ExportEpcis {
        name: "inventory.trace.exportEpcis",
        scope: InventoryTrace,
        shape: Read<trace::ExportEpcisFilterData, trace::ExportEpcisResult>,
        handler: trace::export_epcis,
        summary: "A GS1 EPCIS 2.0 document of a lot's genealogy (upstream by default) or of an order: one event per ledger operation, CBV 2.0 event hashes as ids.",
    }
    ListLedgerEntries {
        name: "inventory.trace.listLedgerEntries",
        scope: InventoryTrace,
        shape: Page<trace::LedgerFilterData, trace::LedgerEntriesResult>,
        handler: trace::list_ledger_entries,
        summary: "Ledger entries (every change of a lot's weight), newest first.",
    }

    ListEvents {
        name: "core.event.listEvents",
        scope: CoreEvent,
        shape: Page<event::ListEventsFilter, event::EventsResult>,
        handler: event::list_events,
        summary: "The change feed: one event per resource each committed write created or changed, oldest first by sequence; endCursor is never null (poll with it). Paging on sees every event exactly once, in order.",
    }
    CreateWebhook {
        name: "core.event.createWebhook",
        scope: CoreEvent,
        shape: Write<event::CreateWebhookData, event::WebhookResult>,
        handler: event::create_webhook,
        summary: "Register an https receiver for events (Standard Webhooks signatures); the signing secret is answered only here.",
    }
    ListWebhooks {
        name: "core.event.listWebhooks",
        scope: CoreEvent,
        shape: Page<NoFilter, event::WebhooksResult>,
        handler: event::list_webhooks,
        summary: "List webhooks, newest first (without their secrets).",
    }
    DeleteWebhook {
        name: "core.event.deleteWebhook",
        scope: CoreEvent,
        shape: Write<event::DeleteWebhookData, event::DeleteWebhookResult>,
        handler: event::delete_webhook,
        summary: "Delete a webhook and its deliveries.",
    }
    ListDeliveries {
        name: "core.event.listDeliveries",
        scope: CoreEvent,
        shape: Page<event::ListDeliveriesFilter, event::DeliveriesResult>,
        handler: event::list_deliveries,
        summary: "A webhook's deliveries (one per event), newest first, with the last attempt's outcome.",
    }

    VerifyStatements {
        name: "eudr.statement.verifyStatements",
        scope: EudrStatement,
        shape: Write<eudr::VerifyStatementsData, green::DueDiligenceResult>,
        handler: eudr::verify_statements,
        summary: "Verify a source lot's statements with the EU information system (verifyDeclaration) and record the outcomes.",
    }
    PreviewStatement {
        name: "eudr.statement.previewStatement",
        scope: EudrStatement,
        shape: Write<eudr::FileStatementData, eudr::PreviewResult>,
        handler: eudr::preview_statement,
        summary: "The due diligence statement Roastery would file for source lots, and every EU rule it would break.",
    }
    SubmitStatement {
        name: "eudr.statement.submitStatement",
        scope: EudrStatement,
        shape: Write<eudr::FileStatementData, eudr::SubmissionResult>,
        handler: eudr::submit_statement,
        summary: "File a due diligence statement for source lots with the EU information system (submitDds).",
    }
    AmendStatement {
        name: "eudr.statement.amendStatement",
        scope: EudrStatement,
        shape: Write<eudr::AmendStatementData, eudr::SubmissionResult>,
        handler: eudr::amend_statement,
        summary: "Replace a filed statement (amendDds), within 72 hours of submission while AVAILABLE.",
    }
    WithdrawStatement {
        name: "eudr.statement.withdrawStatement",
        scope: EudrStatement,
        shape: Write<eudr::WithdrawStatementData, eudr::SubmissionResult>,
        handler: eudr::withdraw_statement,
        summary: "Withdraw a filed statement (withdrawDds), within 72 hours of submission.",
    }
    ListSubmissions {
        name: "eudr.statement.listSubmissions",
        scope: EudrStatement,
        shape: Page<eudr::ListSubmissionsFilter, eudr::SubmissionsResult>,
        handler: eudr::list_submissions,
        summary: "List statements filed with the EU information system, newest first.",
    }
    GetSubmissionsByIds {
        name: "eudr.statement.getSubmissionsByIds",
        scope: EudrStatement,
        shape: Read<eudr::SubmissionsByIdsFilter, eudr::SubmissionsResult>,
        handler: eudr::submissions_by_ids,
        summary: "Read filed statements by id.",
    }
}

#[cfg(test)]
mod tests {
    use roastery_domain::scope::Scope;

    use super::*;

    #[test]
    fn names_are_unique_and_each_scope_is_its_namespace() {
        let mut names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
        for op in Operation::ALL {
            assert_eq!(Scope::of_operation(op.name()), Some(op.scope()), "{op:?}");
            assert_eq!(Operation::find(op.name()), Some(*op));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operation::ALL.len());
    }

    #[test]
    fn only_entries_are_found() {
        for name in [
            "",
            "core.location",
            "core.location.importLocation/extra",
            "core.location.ImportLocation",
        ] {
            assert_eq!(Operation::find(name), None, "{name}");
        }
    }
}
