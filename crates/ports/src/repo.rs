//! Repository ports: what one transaction can read and write.
//!
//! Repositories return [`StoreError`] only; rules about what may be stored live in the domain and
//! the use cases. Listing methods take a [`PageRequest`] and return newest first, ordered by an
//! immutable instant with the id as tie-breaker.

use chrono::{DateTime, Utc};
use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::location::Location;
use roastery_domain::order::{Order, OrderStatus};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::{Product, Sku, Variant};
use roastery_domain::project::Project;
use uuid::Uuid;

use crate::error::StoreError;

pub type StoreResult<T> = Result<T, StoreError>;

/// Settings and gapless sequences.
pub trait SystemRepo {
    fn ping(&mut self) -> StoreResult<()>;
    /// The value of setting `name`, storing `value` first if it has none.
    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String>;
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
    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>>;
    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>>;
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
    fn update_green_lot(&mut self, lot: &GreenLot) -> StoreResult<()>;
    fn green_lot(&mut self, id: Uuid) -> StoreResult<Option<GreenLot>>;
    /// The stored lots among `ids`, in the order of `ids`; unknown ids are skipped.
    fn green_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<GreenLot>>;
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

/// Roasted lots, roasts, profiles and curves (inventory.roast).
pub trait RoastRepo {}

/// Blended lots (inventory.blend).
pub trait BlendRepo {}

/// Cuppings, cupped coffees and results (quality.cupping).
pub trait CuppingRepo {}

/// Physical analyses (quality.physical).
pub trait PhysicalRepo {}

/// A synced product that changed: the product as it will be and the variants it gains (already
/// part of `product.variants`, at its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductUpdate {
    pub product: Product,
    pub added: Vec<Variant>,
}

/// Products and variants (mrp.product).
///
/// Bulk methods take a whole batch so that a store can write it in a number of statements that
/// does not grow with the batch.
pub trait ProductRepo {
    /// The stored products (with every variant) of these external ids; unknown ids are left out.
    fn products_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Product>>;
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
    fn insert_orders(&mut self, orders: &[Order]) -> StoreResult<()>;
    /// Stores customer, customer type, status, `updated_at` and the items of each order (the
    /// order date and creation time never change).
    fn update_orders(&mut self, orders: &[Order]) -> StoreResult<()>;
    fn order(&mut self, id: Uuid) -> StoreResult<Option<Order>>;
    /// Newest `orderDate` first.
    fn list_orders(&mut self, filter: &OrderFilter, page: &PageRequest)
    -> StoreResult<Page<Order>>;
}
