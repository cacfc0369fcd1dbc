//! Repository ports: what one transaction can read and write.
//!
//! Repositories return [`StoreError`] only; rules about what may be stored live in the domain and
//! the use cases. Listing methods take a [`PageRequest`] and return newest first, ordered by an
//! immutable instant with the id as tie-breaker.
//!
//! A write unit of work that changes a stored row loads it with a `…_for_update` loader, which
//! locks it first, and hands the [`ForUpdate`] back to the method that writes it (see
//! [`crate::lock`]); plain loaders never lock.

use chrono::{DateTime, Utc};
use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::cost::CostLot;
use roastery_domain::cupping::{Cupping, CuppingState};
use roastery_domain::cupping_result::{CuppingResult, Score, ScoringState};
use roastery_domain::due_diligence::{DueDiligence, SourceLot};
use roastery_domain::event::{Change, Changes, Event, EventType, Subject};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::ledger::{Direction, Edge, LedgerEntry, Reference};
use roastery_domain::location::Location;
use roastery_domain::order::{Order, OrderStatus};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::physical_analysis::PhysicalAnalysis;
use roastery_domain::planning::{ProfilePlanning, Recipe, RoastYield, SkuDemand};
use roastery_domain::product::{Product, Sku, Variant};
use roastery_domain::profile::Profile;
use roastery_domain::project::Project;
use roastery_domain::roast_curve::RoastCurve;
use roastery_domain::roast_details::RoastDetails;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::submission::Submission;
use roastery_domain::webhook::{DeliveryStatus, Webhook, WebhookStatus};
use roastery_domain::weight::Weight;
use uuid::Uuid;

use crate::error::StoreError;
use crate::lock::ForUpdate;
use crate::view::LocationRef;

pub type StoreResult<T> = Result<T, StoreError>;

/// Settings and gapless sequences.
pub trait SystemRepo {
    fn ping(&mut self) -> StoreResult<()>;
    /// The value of setting `name`, storing `value` first if it has none.
    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String>;
    /// Sets setting `name` to `value`, whether it had one or not.
    fn put_setting(&mut self, name: &str, value: &str) -> StoreResult<()>;
    /// The next number of `sequence` (1, 2, ...). Rolled back with the transaction, so numbers
    /// have no gaps and no duplicates.
    fn next_number(&mut self, sequence: &str) -> StoreResult<i64>;
}

/// A service account with the argon2id hash of its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub account: Account,
    pub secret_hash: String,
}

/// What a stored token resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredGrant {
    pub grant: AccessGrant,
    pub account_active: bool,
}

pub trait AccountRepo {
    fn insert_account(&mut self, credentials: &Credentials) -> StoreResult<()>;
    fn account(&mut self, client_id: &str) -> StoreResult<Option<Credentials>>;
    fn accounts(&mut self) -> StoreResult<Vec<Account>>;
    fn set_account_revoked(&mut self, client_id: &str, at: DateTime<Utc>) -> StoreResult<()>;
    /// Stores a token by the SHA-256 of its value; the value itself is never stored.
    fn insert_token(&mut self, token_hash: &str, grant: &AccessGrant) -> StoreResult<()>;
    fn grant_for_token(&mut self, token_hash: &str) -> StoreResult<Option<StoredGrant>>;
    fn delete_tokens_expired_before(&mut self, at: DateTime<Utc>) -> StoreResult<usize>;
}

pub trait LocationRepo {
    fn insert_location(&mut self, location: &Location) -> StoreResult<()>;
    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>>;
    /// The stored locations among `ids`, each once, in any order, in one query.
    fn locations_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Location>>;
    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>>;
    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>>;
    /// The stored locations among `ids` by id, read in one query (repeated ids read once).
    fn locations_by_id(
        &mut self,
        ids: impl IntoIterator<Item = Uuid>,
    ) -> StoreResult<std::collections::HashMap<Uuid, Location>>
    where
        Self: Sized,
    {
        let mut ids: Vec<Uuid> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(std::collections::HashMap::new());
        }
        Ok(self
            .locations_by_ids(&ids)?
            .into_iter()
            .map(|l| (l.id, l))
            .collect())
    }
}

pub trait ProjectRepo {
    fn insert_project(&mut self, project: &Project) -> StoreResult<()>;
    fn project_by_name(&mut self, name: &str) -> StoreResult<Option<Project>>;
    fn list_projects(&mut self, page: &PageRequest) -> StoreResult<Page<Project>>;
}

/// Green lots (inventory.green). Roasting loads and writes back green lots through this trait too.
pub trait GreenLotRepo {
    fn insert_green_lot(&mut self, lot: &GreenLot) -> StoreResult<()>;
    /// Writes back every field of a stored lot but its id, origin, lot number and registration
    /// date (those never change).
    fn update_green_lot(&mut self, lot: &ForUpdate<GreenLot>) -> StoreResult<()>;
    fn green_lot(&mut self, id: Uuid) -> StoreResult<Option<GreenLot>>;
    /// [`Self::green_lot`], locked alone.
    fn green_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<GreenLot>>>;
    /// The lot a transfer takes from and the active lot of its origin at `location_id` (which may
    /// be the same lot), locked with every lot of their origin in one go: the transfer may go on
    /// to merge into any of them, and two transfers between the same lots must not each hold one.
    #[expect(
        clippy::type_complexity,
        reason = "a source and its optional target, both locked"
    )]
    fn green_lot_to_transfer(
        &mut self,
        id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<(ForUpdate<GreenLot>, Option<ForUpdate<GreenLot>>)>>;
    /// The stored lots among `ids`, in the order of `ids`; unknown ids are skipped.
    fn green_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<GreenLot>>;
    /// [`Self::green_lots_by_ids`], all locked in one go.
    fn green_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<GreenLot>>>;
    fn green_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<GreenLot>>;
    /// The active (not consumed) lot of origin `origin_id` at `location_id`, if any (at most one).
    fn active_green_lot_at(
        &mut self,
        origin_id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<GreenLot>>;
    /// Lots modified at or after `modified_from` (all when `None`), newest registration first
    /// (keyset on registration date, id).
    fn list_green_lots(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<GreenLot>>;
}

/// Roasted lots, their details and curves (inventory.roast).
///
/// A roasted lot keeps its sources (`LotSource`) in the order they were given. By-ids loaders
/// return the records found in any order; the use cases put them in the asked order.
pub trait RoastRepo {
    fn insert_roasted_lot(&mut self, lot: &RoastedLot) -> StoreResult<()>;
    /// Writes the current weight, consumed date and last-modified date of a stored lot.
    fn update_roasted_lot_stock(&mut self, lot: &ForUpdate<RoastedLot>) -> StoreResult<()>;
    fn roasted_lot(&mut self, id: Uuid) -> StoreResult<Option<RoastedLot>>;
    fn roasted_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<RoastedLot>>>;
    fn roasted_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<RoastedLot>>;
    /// [`Self::roasted_lots_by_ids`], all locked in one go.
    fn roasted_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<RoastedLot>>>;
    /// The roasted lot imported from the roast log with this `roastUUID`.
    fn roasted_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<RoastedLot>>;
    /// Newest roasted date first; `from` (inclusive) filters on the roasted date.
    fn list_roasted_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<RoastedLot>>;
    fn insert_roast_details(&mut self, lot_id: Uuid, details: &RoastDetails) -> StoreResult<()>;
    fn roast_details_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, RoastDetails)>>;
    /// Stores the curves of a roast, keeping their order.
    fn insert_roast_curves(&mut self, lot_id: Uuid, curves: &[RoastCurve]) -> StoreResult<()>;
    fn roast_curves(&mut self, lot_id: Uuid) -> StoreResult<Vec<RoastCurve>>;
}

/// Processing profiles (inventory.roast), an aggregate of their own that roasts refer to.
pub trait ProfileRepo {
    fn insert_profile(&mut self, profile: &Profile) -> StoreResult<()>;
    fn profile(&mut self, id: Uuid) -> StoreResult<Option<Profile>>;
    fn profile_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Profile>>;
    fn profiles_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Profile>>;
}

/// Blended lots (inventory.blend).
pub trait BlendRepo {
    fn insert_blended_lot(&mut self, lot: &BlendedLot) -> StoreResult<()>;
    fn blended_lot(&mut self, id: Uuid) -> StoreResult<Option<BlendedLot>>;
    fn blended_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<BlendedLot>>>;
    /// Writes the current weight, consumed date and last-modified date of a stored lot.
    fn update_blended_lot_stock(&mut self, lot: &ForUpdate<BlendedLot>) -> StoreResult<()>;
    /// Newest blended date first; `from` (inclusive) filters on the blended date.
    fn list_blended_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<BlendedLot>>;
}

/// Which cuppings a listing returns: `startDate` from (inclusive) / to (exclusive), and a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CuppingFilter {
    pub start_from: Option<DateTime<Utc>>,
    pub start_to: Option<DateTime<Utc>>,
    pub state: Option<CuppingState>,
}

impl CuppingFilter {
    pub fn matches(&self, c: &Cupping) -> bool {
        self.start_from.is_none_or(|from| c.start_date() >= from)
            && self.start_to.is_none_or(|to| c.start_date() < to)
            && self.state.is_none_or(|s| c.state() == s)
    }
}

/// Cuppings, cupped coffees and results (quality.cupping).
pub trait CuppingRepo {
    /// Whether a green, roasted or blended lot with this id exists (consumed lots exist too).
    /// Physical analyses use it as well.
    fn lot_exists(&mut self, kind: LotKind, id: Uuid) -> StoreResult<bool>;
    fn insert_cupping(&mut self, cupping: &Cupping) -> StoreResult<()>;
    fn cupping(&mut self, id: Uuid) -> StoreResult<Option<Cupping>>;
    /// [`Self::cupping`], locked: also what recording results holds, so that the cupping cannot
    /// close meanwhile.
    fn cupping_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Cupping>>>;
    /// Stores the state of a cupping.
    fn update_cupping_state(&mut self, cupping: &ForUpdate<Cupping>) -> StoreResult<()>;
    /// Newest `startDate` first.
    fn list_cuppings(
        &mut self,
        filter: &CuppingFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Cupping>>;
    /// The cuppings found among `ids`, in the order of `ids`.
    fn cuppings_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Cupping>>;
    fn insert_cupping_results(&mut self, results: &[CuppingResult]) -> StoreResult<()>;
    /// The results of these cupped coffees: in the order of `cupped_coffee_ids`, then oldest
    /// recorded first (id as tie-breaker).
    fn cupping_results(&mut self, cupped_coffee_ids: &[Uuid]) -> StoreResult<Vec<CuppingResult>>;
    /// Final score and scoring state of every result of these cupped coffees, by cupped coffee id.
    fn result_scores(
        &mut self,
        cupped_coffee_ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Score, ScoringState)>>;
}

/// Which physical analyses a listing returns: `analysisDate` from (inclusive) / to (exclusive),
/// and the analysed lots (any when empty).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhysicalFilter {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub lot_ids: Vec<Uuid>,
}

impl PhysicalFilter {
    pub fn matches(&self, a: &PhysicalAnalysis) -> bool {
        self.from.is_none_or(|from| a.analysis_date >= from)
            && self.to.is_none_or(|to| a.analysis_date < to)
            && (self.lot_ids.is_empty() || self.lot_ids.contains(&a.analysed_lot.id))
    }
}

/// Physical analyses (quality.physical).
pub trait PhysicalRepo {
    fn insert_physical_analysis(&mut self, analysis: &PhysicalAnalysis) -> StoreResult<()>;
    /// Newest `analysisDate` first.
    fn list_physical_analyses(
        &mut self,
        filter: &PhysicalFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<PhysicalAnalysis>>;
}

/// A synced product that changed: the product as it will be and the variants it gains (already
/// part of `product.variants`, at its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductUpdate {
    pub product: ForUpdate<Product>,
    pub added: Vec<Variant>,
}

/// Products and variants (mrp.product).
///
/// Bulk methods take a whole batch so that a store can write it in a number of statements that
/// does not grow with the batch.
pub trait ProductRepo {
    /// The stored products (with every variant) of these external ids; unknown ids are left out.
    fn products_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Product>>;
    /// [`Self::products_by_external_ids`], all locked in one go.
    fn products_for_update(
        &mut self,
        external_ids: &[String],
    ) -> StoreResult<Vec<ForUpdate<Product>>>;
    /// For each of these SKUs that is stored: the SKU and the external id of its product.
    fn sku_owners(&mut self, skus: &[Sku]) -> StoreResult<Vec<(Sku, String)>>;
    fn insert_products(&mut self, products: &[Product]) -> StoreResult<()>;
    /// Stores the new name and `updated_at` of each product and appends its added variants.
    fn update_products(&mut self, updates: &[ProductUpdate]) -> StoreResult<()>;
    /// Newest first by creation time.
    fn list_products(&mut self, page: &PageRequest) -> StoreResult<Page<Product>>;
}

/// What `listOrders` filters on; every part is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrderFilter {
    /// Inclusive.
    pub order_date_from: Option<DateTime<Utc>>,
    /// Exclusive.
    pub order_date_to: Option<DateTime<Utc>>,
    pub status: Option<OrderStatus>,
}

impl OrderFilter {
    pub fn matches(&self, order: &Order) -> bool {
        self.order_date_from
            .is_none_or(|from| order.order_date >= from)
            && self.order_date_to.is_none_or(|to| order.order_date < to)
            && self.status.is_none_or(|s| order.status == s)
    }
}

/// Orders and their items (mrp.order).
pub trait OrderRepo {
    /// The stored orders (with their items) of these external ids; unknown ids are left out.
    fn orders_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Order>>;
    /// [`Self::orders_by_external_ids`], all locked in one go.
    fn orders_for_update(&mut self, external_ids: &[String]) -> StoreResult<Vec<ForUpdate<Order>>>;
    fn insert_orders(&mut self, orders: &[Order]) -> StoreResult<()>;
    /// Stores customer, customer type, status, `updated_at` and the items of each order (the
    /// order date and creation time never change).
    fn update_orders(&mut self, orders: &[ForUpdate<Order>]) -> StoreResult<()>;
    fn order(&mut self, id: Uuid) -> StoreResult<Option<Order>>;
    fn order_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Order>>>;
    /// Stores the shipped date and the shipments of an order, with its status and `updated_at`.
    fn record_shipments(&mut self, order: &ForUpdate<Order>) -> StoreResult<()>;
    /// Newest `orderDate` first.
    fn list_orders(&mut self, filter: &OrderFilter, page: &PageRequest)
    -> StoreResult<Page<Order>>;
}

/// Which ledger entries a listing returns: one lot's, `createdDate` from (inclusive) / to
/// (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LedgerFilter {
    pub lot_id: Option<Uuid>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl LedgerFilter {
    pub fn matches(&self, e: &LedgerEntry) -> bool {
        self.lot_id.is_none_or(|id| e.lot.id == id)
            && self.from.is_none_or(|from| e.created_date >= from)
            && self.to.is_none_or(|to| e.created_date < to)
    }
}

/// A lot's weight beside the sum of its ledger entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LotAudit {
    pub lot: TypedLotRef,
    pub lot_number: i64,
    pub weight: Weight,
    pub consumed: bool,
    /// Sum of the lot's entries' deltas, in micro-units of the lot's unit.
    pub ledger_micros: i64,
}

/// A lot as a trace shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedLot {
    pub lot: TypedLotRef,
    pub lot_number: i64,
    pub name: String,
    pub weight: Weight,
    pub location_id: Option<Uuid>,
    pub consumed_at: Option<DateTime<Utc>>,
}

/// A cupped coffee of a traced lot: its cupping and the lot it cupped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedCupping {
    pub id: Uuid,
    pub number: i64,
    pub state: CuppingState,
    pub cupped_lot: TypedLotRef,
}

/// Everything a trace shows, as stored, read at once ([`TraceRepo::trace_parts`]); the use case
/// puts it in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParts {
    /// The asked lot, under the kind it is stored as.
    pub start: TypedLotRef,
    /// Every edge reachable from `start`, as [`TraceRepo::trace_edges`] answers them.
    pub edges: Vec<Edge>,
    /// The stored lots among `start` and the lots at either end of `edges`, in any order.
    pub lots: Vec<TracedLot>,
    /// The stored locations of these lots, in any order.
    pub locations: Vec<LocationRef>,
    /// The orders shipped from any of these lots (with their items and shipments), by order
    /// date, then id.
    pub orders: Vec<Order>,
    /// The cupped coffees of these lots, by cupping id, then the coffee's position in its
    /// cupping.
    pub cuppings: Vec<TracedCupping>,
}

/// EUDR due diligence of source green lots.
pub trait DueDiligenceRepo {
    /// Stores the due diligence of a green lot, replacing any it had.
    fn put_due_diligence(&mut self, lot_id: Uuid, due_diligence: &DueDiligence) -> StoreResult<()>;
    /// The due diligence of those of these green lots that have one, in any order.
    fn due_diligence_of(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, DueDiligence)>>;
    /// The length of the stored due diligence of those of these green lots that have one (its
    /// document's characters, plots included), in any order: what reading it would cost,
    /// known without reading it.
    fn due_diligence_sizes(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, u64)>>;
    /// Those of these green lots that are source lots (imported, or with an `OPENING` ledger
    /// entry), with their lot number and name, in any order.
    fn source_green_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<SourceLot>>;
    /// [`Self::source_green_lots`], each with the size [`Self::due_diligence_sizes`] gives it
    /// and, where the store can read it in the same go, its due diligence, in any order: a
    /// report learns which sources to read, what reading them costs and, within its bound,
    /// their contents in one read. Due diligence is returned only when that of all of
    /// `lot_ids` (sources or not) is at most `read_up_to` characters in all, so no more than
    /// that is ever read; a store may also leave it unread within the bound (the Diesel store
    /// past 1,000 ids), and the caller then reads it with [`Self::due_diligence_of`].
    fn sized_source_green_lots(
        &mut self,
        lot_ids: &[Uuid],
        read_up_to: u64,
    ) -> StoreResult<Vec<SizedSource>> {
        let sources = self.source_green_lots(lot_ids)?;
        let ids: Vec<Uuid> = sources.iter().map(|s| s.id).collect();
        let sizes: std::collections::HashMap<Uuid, u64> =
            self.due_diligence_sizes(&ids)?.into_iter().collect();
        let total = sizes.values().fold(0_u64, |t, n| t.saturating_add(*n));
        let mut read: std::collections::HashMap<Uuid, DueDiligence> =
            if sizes.is_empty() || total > read_up_to {
                std::collections::HashMap::new()
            } else {
                self.due_diligence_of(&ids)?.into_iter().collect()
            };
        Ok(sources
            .into_iter()
            .map(|lot| SizedSource {
                size: sizes.get(&lot.id).copied(),
                due_diligence: read.remove(&lot.id),
                lot,
            })
            .collect())
    }
    /// The source green lots among `starts` and upstream of them (what a due-diligence report
    /// covers), sized and read as [`Self::sized_source_green_lots`] reads those lots, seen in one
    /// snapshot even outside a transaction ([`crate::Store::read_report_statement`]): the
    /// Diesel store reads them with one statement. This default reads them one query at a time,
    /// in one snapshot only inside the transaction the caller provides.
    fn upstream_sources(
        &mut self,
        starts: &[Reference],
        read_up_to: u64,
    ) -> StoreResult<Vec<SizedSource>>
    where
        Self: TraceRepo + Sized,
    {
        let edges = self.upstream_edges(starts)?;
        let mut green: Vec<Uuid> = edges
            .iter()
            .map(|e| e.from)
            .chain(starts.iter().filter_map(|start| match start {
                Reference::Lot(lot) => Some(*lot),
                Reference::Order(_) => None,
            }))
            .filter(|lot| lot.kind == roastery_domain::stock::LotKind::Green)
            .map(|lot| lot.id)
            .collect();
        green.sort_unstable();
        green.dedup();
        self.sized_source_green_lots(&green, read_up_to)
    }
}

/// A source green lot as a report reads it ([`DueDiligenceRepo::sized_source_green_lots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SizedSource {
    pub lot: SourceLot,
    /// The length of its stored due diligence (its document's characters); `None`: it has none.
    pub size: Option<u64>,
    /// Its due diligence, when it was read with the lot.
    pub due_diligence: Option<DueDiligence>,
}

/// Which submissions a listing shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmissionFilter {
    pub status: Option<String>,
    pub green_lot_id: Option<Uuid>,
}

/// Statements filed with the EU information system, and the claims of the instances polling it.
pub trait SubmissionRepo {
    /// Stores a new submission (notes `submission.created`).
    fn insert_submission(&mut self, submission: &Submission) -> StoreResult<()>;
    /// A submission, locked for this unit of work.
    fn submission_for_update(&mut self, id: Uuid) -> StoreResult<Option<Submission>>;
    /// Stores a changed submission and drops any claim on it (notes `submission.updated`).
    fn update_submission(&mut self, submission: &Submission) -> StoreResult<()>;
    /// The stored submissions among `ids`, in any order.
    fn submissions_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Submission>>;
    /// Newest first by submission time.
    fn list_submissions(
        &mut self,
        filter: &SubmissionFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Submission>>;
    /// Claims up to `limit` submissions due for polling at `now` and held by no unexpired
    /// claim, until `lease_until`; rows another unit of work is claiming are skipped.
    fn claim_due_submissions(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
    ) -> StoreResult<Vec<Submission>>;
    /// Whether `lease` still holds the submission's claim.
    fn holds_submission(&mut self, id: Uuid, lease: Uuid) -> StoreResult<bool>;
    /// The weight each of these lots came in with: its `IMPORT` or `OPENING` ledger entry.
    fn imported_weights(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>>;
    /// Every green lot with due diligence holding at least one statement.
    fn lots_with_statements(&mut self) -> StoreResult<Vec<Uuid>>;
    /// Claims the re-verification of a lot's statements until `lease_until`, unless an
    /// unexpired claim holds it; whether it did.
    fn claim_verification(
        &mut self,
        lot_id: Uuid,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
    ) -> StoreResult<bool>;
}

/// The ledger (append-only: there is no method to change or remove an entry) and the genealogy.
pub trait TraceRepo {
    fn insert_ledger_entries(&mut self, entries: &[LedgerEntry]) -> StoreResult<()>;
    /// Newest `createdDate` first.
    fn list_ledger_entries(
        &mut self,
        filter: &LedgerFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<LedgerEntry>>;
    /// Every lot with the sum of its entries.
    fn ledger_audit(&mut self) -> StoreResult<Vec<LotAudit>>;
    /// Every edge reachable from `start` in `direction`, any depth, found in one query: ledger
    /// transfers, roast and blend sources, shipments.
    fn trace_edges(&mut self, start: TypedLotRef, direction: Direction) -> StoreResult<Vec<Edge>>;
    /// Every edge reachable upstream from any of `starts` (lots or orders), any depth, found in
    /// one query, like [`Self::trace_edges`].
    fn upstream_edges(&mut self, starts: &[Reference]) -> StoreResult<Vec<Edge>>;
    /// The stored lots among `lots`, in any order.
    fn traced_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<TracedLot>>;
    /// The ledger entries of these lots and those naming one of them as reference, in any
    /// order, in one query.
    fn ledger_entries_touching(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<LedgerEntry>>;
    /// The orders shipped from any of these lots (with their shipments).
    fn orders_shipped_from(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Order>>;
    /// The cuppings that cupped any of these lots.
    fn cuppings_of_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Cupping>>;
    /// What a trace from the green, roasted or blended lot `lot_id` in `direction` shows, seen
    /// in one snapshot even outside a transaction ([`crate::Store::read_statement`]); `None`
    /// when no lot has this id.
    fn trace_parts(
        &mut self,
        lot_id: Uuid,
        direction: Direction,
    ) -> StoreResult<Option<TraceParts>>;
}

/// A green lot and what roasts and shipments took from it since some instant (run-out dates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotUse {
    pub id: Uuid,
    pub lot_number: i64,
    pub weight: Weight,
    /// Σ of its `ROAST_INPUT` and `SHIPMENT` deltas since then, negated, in micro-units of the
    /// lot's unit.
    pub used_micros: i64,
}

/// What production planning and costs read (api-decisions §15), each a bounded number of
/// statements whatever the number of orders, profiles or lots.
pub trait PlanRepo {
    /// The stored planning data of those of these profiles that have one, in any order.
    fn profile_plannings(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, ProfilePlanning)>>;
    /// Stores a profile's planning data, replacing what it had; notes the profile as updated.
    fn put_profile_planning(
        &mut self,
        id: Uuid,
        planning: &ProfilePlanning,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// The last `per_profile` roasted lots of each of these profiles (newest `roastedDate`
    /// first, then id), as (profile id, yield), in any order.
    fn recent_roasts(
        &mut self,
        profile_ids: &[Uuid],
        per_profile: usize,
    ) -> StoreResult<Vec<(Uuid, RoastYield)>>;
    /// The weights of the unconsumed roasted lots of these profiles, as (profile id, weight).
    fn roasted_on_hand(&mut self, profile_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>>;
    fn product_by_id(&mut self, id: Uuid) -> StoreResult<Option<Product>>;
    /// The recipes of those of these products that have one, in any order.
    fn recipes_of(&mut self, product_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Recipe)>>;
    /// Stores a product's recipe (`None` removes it); notes the product as updated.
    fn put_recipe(
        &mut self,
        product_id: Uuid,
        recipe: Option<&Recipe>,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// The bags per SKU of the items of the orders `OPEN` or `IN_PROGRESS` with `orderDate` ≤
    /// `until` (every such order without one), with each SKU's product and package size, in
    /// any order.
    fn open_demand(&mut self, until: Option<DateTime<Utc>>) -> StoreResult<Vec<SkuDemand>>;
    /// Every unconsumed green lot (at `location` when given) with what it gave to roasts and
    /// shipments from `since` on, in any order.
    fn green_lot_use(
        &mut self,
        since: DateTime<Utc>,
        location: Option<Uuid>,
    ) -> StoreResult<Vec<GreenLotUse>>;
    /// Those of these lots that are stored, with what their cost is made of, in any order.
    fn cost_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<CostLot>>;
}

/// The change feed's outbox.
///
/// Repository write methods note what they create or change ([`EventRepo::record_change`]);
/// `Roastery::write` turns the notes into events and stores them in the same transaction, so
/// an event exists exactly when its change committed. A store refuses to commit a unit of work
/// whose notes were not turned into events.
pub trait EventRepo {
    /// Notes that this unit of work created or changed `subject`.
    fn record_change(&mut self, subject: Subject, change: Change);
    /// The changes noted so far, leaving none.
    fn take_changes(&mut self) -> Changes;
    /// Stores events of this unit of work. A store that cannot number them in commit order
    /// here leaves them unnumbered until [`EventRepo::place_events`] does.
    fn insert_events(&mut self, events: &[Event]) -> StoreResult<()>;
    /// Numbers the stored events whose transactions have finished, after every number already
    /// handed out, so that a reader paging by sequence never skips one. Runs in a write unit
    /// of work.
    fn place_events(&mut self) -> StoreResult<()>;
    /// Numbered events after `after`, oldest first, of these types (any when empty).
    fn list_events(
        &mut self,
        types: &[EventType],
        after: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>>;
    /// The highest sequence number handed out (0 when none).
    fn last_sequence(&mut self) -> StoreResult<i64>;
    /// Deletes numbered events created before `before` and delivered or given up on by every
    /// webhook; returns how many.
    fn delete_events_before(&mut self, before: DateTime<Utc>) -> StoreResult<usize>;
}

/// One event to one webhook, as `listDeliveries` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: Uuid,
    pub webhook_id: Uuid,
    pub event_id: Uuid,
    /// Attempts made so far.
    pub attempt: u32,
    pub status: DeliveryStatus,
    /// The receiver's status code of the last attempt, if it answered.
    pub http_status: Option<u16>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    pub created_date: DateTime<Utc>,
}

/// A delivery claimed for one attempt, with what it takes to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub delivery: Delivery,
    pub webhook: Webhook,
    pub event: Event,
    /// Identifies this claim: only its holder records the attempt's outcome.
    pub lease: Uuid,
}

/// What one attempt came to, to be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub delivery_id: Uuid,
    pub lease: Uuid,
    pub status: DeliveryStatus,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    /// When to try again (`PENDING` only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub at: DateTime<Utc>,
}

/// Webhooks and their deliveries.
pub trait WebhookRepo {
    fn insert_webhook(&mut self, webhook: &Webhook) -> StoreResult<()>;
    fn webhook(&mut self, id: Uuid) -> StoreResult<Option<Webhook>>;
    /// Newest first by creation time.
    fn list_webhooks(&mut self, page: &PageRequest) -> StoreResult<Page<Webhook>>;
    /// Deletes a webhook with its deliveries; false when there was none.
    fn delete_webhook(&mut self, id: Uuid) -> StoreResult<bool>;
    /// A webhook's deliveries, newest first.
    fn list_deliveries(
        &mut self,
        webhook_id: Uuid,
        page: &PageRequest,
    ) -> StoreResult<Page<Delivery>>;
    /// Creates a pending delivery for every numbered event each active webhook wants and has
    /// not been given yet (a webhook starts with the events numbered after its creation);
    /// returns how many. Webhooks another unit of work is enqueuing for are skipped.
    fn enqueue_deliveries(
        &mut self,
        now: DateTime<Utc>,
        new_id: &mut dyn FnMut() -> Uuid,
    ) -> StoreResult<usize>;
    /// Claims up to `limit` pending deliveries due at `now` of active webhooks, none held by an
    /// unexpired claim, until `lease_until`; deliveries another unit of work is claiming are
    /// skipped. A webhook never holds more than `per_webhook` unexpired claims (those of every
    /// instance counted), so a receiver that never answers ties up only its own queue; among
    /// webhooks, the one whose oldest due delivery has waited longest is served first.
    fn claim_deliveries(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
        per_webhook: usize,
    ) -> StoreResult<Vec<ClaimedDelivery>>;
    /// Stores an attempt's outcome when `record.lease` still holds the delivery; returns the
    /// delivery's webhook when it did.
    fn record_attempt(&mut self, record: &AttemptRecord) -> StoreResult<Option<Webhook>>;
    /// Stores a webhook's failure count and status.
    fn update_webhook_health(
        &mut self,
        id: Uuid,
        consecutive_failures: u32,
        status: WebhookStatus,
    ) -> StoreResult<()>;
    /// Pending deliveries by due time: how many, and the creation time of the oldest.
    fn pending_deliveries(&mut self) -> StoreResult<(u64, Option<DateTime<Utc>>)>;
}
