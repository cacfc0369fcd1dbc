//! Roastery's driven ports: the contracts the use cases (`roastery-app`) need from the outside
//! world and the adapters implement.
//!
//! A [`Store`] runs one unit of work (one transaction) over the repositories (`repo`,
//! `listing`); a [`Clock`] tells the time and an [`IdGen`] makes ids and secrets; `eudr` is the
//! EU information system, `rate_limit` a limit shared by instances. Rows a write changes are
//! typed ([`lock::ForUpdate`]). `testing` is the in-memory store the use cases' tests run on.
//!
//! Nothing here is a use case, and nothing here knows SQL or HTTP.

pub mod error;
pub mod eudr;
pub mod listing;
pub mod lock;
pub mod locked;
pub mod rate_limit;
pub mod repo;
pub mod secret;
pub mod store;
pub mod system;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod trace_parts;
pub mod view;

use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use error::{AppError, ItemFailure, Rejection, StoreError};
pub use store::{PoolState, Repos, Store};

/// The current time. Adapters truncate it to microseconds, the precision both databases keep.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// New identifiers and secrets.
pub trait IdGen: Send + Sync + 'static {
    /// A new record id (time-ordered UUID v7).
    fn new_id(&self) -> Uuid;
    /// `bytes` random bytes as URL-safe base64 without padding (`A-Z a-z 0-9 - _`).
    fn random_token(&self, bytes: usize) -> String;
}
