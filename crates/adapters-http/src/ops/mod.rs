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
pub(crate) use roastery_domain::operation::Operation;

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
        scope: CoreLocation,
        shape: Write<location::ImportLocationData, location::LocationResult>,
        handler: location::import_location,
        summary: "Import a location (a warehouse or roasting site).",
    }
    ListLocations {
        scope: CoreLocation,
        shape: Page<NoFilter, location::LocationsResult>,
        handler: location::list_locations,
        summary: "List locations, newest first.",
    }
    ImportProject {
        scope: CoreProject,
        shape: Write<project::ImportProjectData, project::ProjectResult>,
        handler: project::import_project,
        summary: "Import a project; names are unique.",
    }
    ListProjects {
        scope: CoreProject,
        shape: Page<NoFilter, project::ProjectsResult>,
        handler: project::list_projects,
        summary: "List projects, newest first.",
    }

    ImportGreenLot {
        scope: InventoryGreen,
        shape: Write<green::ImportGreenLotData, green::GreenLotResult>,
        handler: green::import_green_lot,
        summary: "Import a green lot from an external system.",
    }
    TransferGreenLotToLocation {
        scope: InventoryGreen,
        shape: Write<green::TransferData, green::TransferResult>,
        handler: green::transfer,
        summary: "Move weight of a green lot to another location.",
    }
    SetGreenLotWeight {
        scope: InventoryGreen,
        shape: Write<green::SetWeightData, green::GreenLotResult>,
        handler: green::set_weight,
        summary: "Set the weight of a green lot; zero consumes it.",
    }
    ListGreenLots {
        scope: InventoryGreen,
        shape: Page<green::ListFilter, green::GreenLotsResult>,
        handler: green::list_green_lots,
        summary: "List green lots, newest registration first.",
    }
    GetGreenLotDetailsByIds {
        scope: InventoryGreen,
        shape: Page<green::DetailsFilter, green::GreenLotDetailsResult>,
        handler: green::details_by_ids,
        summary: "Read the details of green lots by id, with their EUDR due diligence.",
    }
    SetDueDiligence {
        scope: InventoryGreen,
        shape: Write<green::SetDueDiligenceData, green::DueDiligenceResult>,
        handler: green::set_due_diligence,
        summary: "Replace the EUDR due diligence (plots, statements) of a source green lot.",
    }

    ListRoastedLots {
        scope: InventoryRoast,
        shape: Page<roast::ListRoastedLotsFilter, roast::RoastedLotsResult>,
        handler: roast::list_roasted_lots,
        summary: "List roasted lots, newest roast first.",
    }
    GetRoastedLotsByIds {
        scope: InventoryRoast,
        shape: Page<roast::RoastedLotIdsFilter, roast::RoastedLotsResult>,
        handler: roast::roasted_lots_by_ids,
        summary: "Read roasted lots by id.",
    }
    GetRoastDetailsByIds {
        scope: InventoryRoast,
        shape: Page<roast::RoastedLotIdsFilter, roast::RoastDetailsResult>,
        handler: roast::roast_details_by_ids,
        summary: "Read roast details by roasted lot id.",
    }
    GetRoastCurvesById {
        scope: InventoryRoast,
        shape: Read<roast::RoastCurvesFilter, roast::RoastCurvesResult>,
        handler: roast::roast_curves_by_id,
        summary: "Read the roast curves of one roasted lot.",
    }
    GetProfilesByIds {
        scope: InventoryRoast,
        shape: Page<profile::ProfileIdsFilter, profile::ProfilesResult>,
        handler: profile::profiles_by_ids,
        summary: "Read processing profiles by id.",
    }
    RecordRoast {
        scope: InventoryRoast,
        shape: Write<roast::RecordRoastData, roast::RecordRoastResult>,
        handler: roast::record_roast,
        summary: "Record a roast: take green weight and create a roasted lot.",
    }
    ImportProfile {
        scope: InventoryRoast,
        shape: Write<profile::ImportProfileData, profile::ProfileResult>,
        handler: profile::import_profile,
        summary: "Import a processing profile.",
    }
    SetProfilePlanning {
        scope: InventoryRoast,
        shape: Write<profile::SetProfilePlanningData, profile::ProfileResult>,
        handler: profile::set_profile_planning,
        summary: "Set a profile's expected loss (or derive it from its last roasts) and batch size.",
    }
    SetRoastedLotWeight {
        scope: InventoryRoast,
        shape: Write<roast::SetRoastedLotWeightData, roast::RoastedLotResult>,
        handler: roast::set_roasted_lot_weight,
        summary: "Set the weight of a roasted lot; zero consumes it.",
    }
    ImportRoastLog {
        scope: InventoryRoast,
        shape: Write<roast::ImportRoastLogData, roast::RecordRoastResult>,
        handler: roast::import_roast_log,
        summary: "Import an Artisan roast log as a complete roast; once per roastUUID (a retry answers the existing roasted lot).",
    }

    CreateBlend {
        scope: InventoryBlend,
        shape: Write<blend::CreateBlendData, blend::BlendedLotResult>,
        handler: blend::create_blend,
        summary: "Blend roasted lots into a new blended lot.",
    }
    ListBlendedLots {
        scope: InventoryBlend,
        shape: Page<blend::ListBlendedLotsFilter, blend::BlendedLotsResult>,
        handler: blend::list_blended_lots,
        summary: "List blended lots, newest blend first.",
    }

    ListCuppings {
        scope: QualityCupping,
        shape: Page<cupping::ListCuppingsFilter, cupping::CuppingsResult>,
        handler: cupping::list_cuppings,
        summary: "List cuppings, newest start first.",
    }
    GetCuppingsByIds {
        scope: QualityCupping,
        shape: Page<cupping::CuppingIdsFilter, cupping::CuppingsResult>,
        handler: cupping::get_cuppings_by_ids,
        summary: "Read cuppings by id.",
    }
    ListCuppingResults {
        scope: QualityCupping,
        shape: Page<cupping::CuppedCoffeeIdsFilter, cupping::CuppingResultsResult>,
        handler: cupping::list_cupping_results,
        summary: "Read the results of cupped coffees.",
    }
    CreateCupping {
        scope: QualityCupping,
        shape: Write<cupping::CreateCuppingData, cupping::CuppingResultEnvelope>,
        handler: cupping::create_cupping,
        summary: "Create a cupping session.",
    }
    SetCuppingState {
        scope: QualityCupping,
        shape: Write<cupping::SetCuppingStateData, cupping::CuppingResultEnvelope>,
        handler: cupping::set_cupping_state,
        summary: "Move a cupping along DRAFT → OPEN → CLOSED.",
    }
    RecordCuppingResults {
        scope: QualityCupping,
        shape: Write<cupping::RecordCuppingResultsData, cupping::CuppingResultsResult>,
        handler: cupping::record_cupping_results,
        summary: "Record results of an open cupping.",
    }

    ListPhysicalAnalyses {
        scope: QualityPhysical,
        shape: Page<physical::ListPhysicalAnalysesFilter, physical::PhysicalAnalysesResult>,
        handler: physical::list_physical_analyses,
        summary: "List physical analyses, newest first.",
    }
    RecordPhysicalAnalysis {
        scope: QualityPhysical,
        shape: Write<physical::RecordPhysicalAnalysisData, physical::PhysicalAnalysisResult>,
        handler: physical::record_physical_analysis,
        summary: "Record a physical analysis of a lot.",
    }

    SyncProducts {
        scope: MrpProduct,
        shape: Bulk<mrp::ProductData, mrp::SyncedProductsResult>,
        handler: mrp::sync_products,
        summary: "Create or update products and add variants (≤50).",
    }
    ListProducts {
        scope: MrpProduct,
        shape: Page<NoFilter, mrp::ProductsResult>,
        handler: mrp::list_products,
        summary: "List products, newest first.",
    }
    SetRecipe {
        scope: MrpProduct,
        shape: Write<mrp::SetRecipeData, mrp::ProductResult>,
        handler: mrp::set_recipe,
        summary: "Set the profiles a product is roasted from, in percentages; [] removes the recipe.",
    }
    GetNetRequirements {
        scope: MrpPlan,
        shape: Read<plan::NetRequirementsFilter, plan::NetRequirementsResult>,
        handler: plan::net_requirements,
        summary: "What to roast for the open orders: demand, profiles and batches, green lots, shortfalls.",
    }
    GetRunOut {
        scope: MrpPlan,
        shape: Page<plan::RunOutFilter, plan::RunOutResult>,
        handler: plan::run_out,
        summary: "When each green lot runs out at its recent use, soonest first.",
    }
    SetOrders {
        scope: MrpOrder,
        shape: Bulk<mrp::OrderData, mrp::SyncedOrdersResult>,
        handler: mrp::set_orders,
        summary: "Create or update orders by externalId (≤50).",
    }
    ListOrders {
        scope: MrpOrder,
        shape: Page<mrp::ListOrdersFilter, mrp::OrdersResult>,
        handler: mrp::list_orders,
        summary: "List orders, newest order date first.",
    }
    SetOrderStatus {
        scope: MrpOrder,
        shape: Write<mrp::SetOrderStatusData, mrp::OrderResult>,
        handler: mrp::set_order_status,
        summary: "Move an order along its status machine.",
    }
    ShipOrder {
        scope: MrpOrder,
        shape: Write<mrp::ShipOrderData, mrp::OrderResult>,
        handler: mrp::ship_order,
        summary: "Ship an order from lots: takes quantity × package size from each; completes it.",
    }

    TraceLot {
        scope: InventoryTrace,
        shape: Read<trace::TraceFilterData, trace::TraceResult>,
        handler: trace::trace_lot,
        summary: "The whole genealogy of a lot, upstream or downstream: lots, edges, orders, cuppings.",
    }
    GetCost {
        scope: InventoryTrace,
        shape: Read<trace::CostFilterData, trace::CostResult>,
        handler: trace::cost,
        summary: "What a lot or an order cost, per kg and in total, per currency, through the genealogy.",
    }
    GetDueDiligence {
        scope: InventoryTrace,
        shape: Read<trace::DueDiligenceFilterData, trace::DueDiligenceReportResult>,
        handler: trace::due_diligence,
        summary: "The EUDR due diligence behind a lot or an order: source lots, statements, plots, completeness.",
    }
    ExportEpcis {
        scope: InventoryTrace,
        shape: Read<trace::ExportEpcisFilterData, trace::ExportEpcisResult>,
        handler: trace::export_epcis,
        summary: "A GS1 EPCIS 2.0 document of a lot's genealogy (upstream by default) or of an order: one event per ledger operation, CBV 2.0 event hashes as ids.",
    }
    ListLedgerEntries {
        scope: InventoryTrace,
        shape: Page<trace::LedgerFilterData, trace::LedgerEntriesResult>,
        handler: trace::list_ledger_entries,
        summary: "Ledger entries (every change of a lot's weight), newest first.",
    }

    ListEvents {
        scope: CoreEvent,
        shape: Page<event::ListEventsFilter, event::EventsResult>,
        handler: event::list_events,
        summary: "The change feed: one event per resource each committed write created or changed, oldest first by sequence; endCursor is never null (poll with it). Paging on sees every event exactly once, in order.",
    }
    CreateWebhook {
        scope: CoreEvent,
        shape: Write<event::CreateWebhookData, event::WebhookResult>,
        handler: event::create_webhook,
        summary: "Register an https receiver for events (Standard Webhooks signatures); the signing secret is answered only here.",
    }
    ListWebhooks {
        scope: CoreEvent,
        shape: Page<NoFilter, event::WebhooksResult>,
        handler: event::list_webhooks,
        summary: "List webhooks, newest first (without their secrets).",
    }
    DeleteWebhook {
        scope: CoreEvent,
        shape: Write<event::DeleteWebhookData, event::DeleteWebhookResult>,
        handler: event::delete_webhook,
        summary: "Delete a webhook and its deliveries.",
    }
    ListDeliveries {
        scope: CoreEvent,
        shape: Page<event::ListDeliveriesFilter, event::DeliveriesResult>,
        handler: event::list_deliveries,
        summary: "A webhook's deliveries (one per event), newest first, with the last attempt's outcome.",
    }

    VerifyStatements {
        scope: EudrStatement,
        shape: Write<eudr::VerifyStatementsData, green::DueDiligenceResult>,
        handler: eudr::verify_statements,
        summary: "Verify a source lot's statements with the EU information system (verifyDeclaration) and record the outcomes.",
    }
    PreviewStatement {
        scope: EudrStatement,
        shape: Write<eudr::FileStatementData, eudr::PreviewResult>,
        handler: eudr::preview_statement,
        summary: "The due diligence statement Roastery would file for source lots, and every EU rule it would break.",
    }
    SubmitStatement {
        scope: EudrStatement,
        shape: Write<eudr::FileStatementData, eudr::SubmissionResult>,
        handler: eudr::submit_statement,
        summary: "File a due diligence statement for source lots with the EU information system (submitDds).",
    }
    AmendStatement {
        scope: EudrStatement,
        shape: Write<eudr::AmendStatementData, eudr::SubmissionResult>,
        handler: eudr::amend_statement,
        summary: "Replace a filed statement (amendDds), within 72 hours of submission while AVAILABLE.",
    }
    WithdrawStatement {
        scope: EudrStatement,
        shape: Write<eudr::WithdrawStatementData, eudr::SubmissionResult>,
        handler: eudr::withdraw_statement,
        summary: "Withdraw a filed statement (withdrawDds), within 72 hours of submission.",
    }
    ListSubmissions {
        scope: EudrStatement,
        shape: Page<eudr::ListSubmissionsFilter, eudr::SubmissionsResult>,
        handler: eudr::list_submissions,
        summary: "List statements filed with the EU information system, newest first.",
    }
    GetSubmissionsByIds {
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
    fn each_scope_is_its_namespace() {
        for op in Operation::ALL {
            assert_eq!(Scope::of_operation(op.name()), Some(op.scope()), "{op:?}");
        }
    }

    /// The document lists operations in the order of `Operation::ALL`; the entries keep it, so
    /// reading this file reads the document.
    #[test]
    fn entries_are_every_operation_once_in_its_order() {
        assert_eq!(ENTRIES, Operation::ALL);
    }
}
