//! Roastery's driven ports and its use cases.
//!
//! The ports are what the use cases need from the outside world: a [`Store`] that runs one unit of
//! work (one transaction) over the repositories, a [`Clock`] and an [`IdGen`]. The use cases are
//! methods of [`Roastery`], generic over the store: one use case is one call of `Store::read` or
//! `Store::write`, so every operation of the API is one transaction.
//!
//! Adapters implement the ports (`adapters-diesel`) or call the use cases (`adapters-http`, the
//! command line). Nothing here knows about SQL, HTTP or JSON.

pub mod account;
pub mod blend;
pub mod cupping;
pub mod due_diligence;
pub mod epcis;
pub mod error;
pub mod eudr;
pub mod event;
pub mod green_lot;
pub mod listing;
pub mod location;
pub mod lock;
mod lot_sources;
pub mod order;
pub mod physical;
pub mod plan;
pub mod product;
pub mod profile;
pub mod project;
pub mod rate_limit;
pub mod reference;
pub mod repo;
pub mod roast;
pub mod roast_log;
pub mod secret;
pub mod store;
pub mod submission;
pub mod system;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod trace;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use error::{AppError, ItemFailure, Rejection, StoreError};
pub use store::{PoolState, Repos, Store};

use repo::{EventRepo, SystemRepo};

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

/// Who calls the use cases: the client id and the operation, recorded on every ledger entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub client_id: Arc<str>,
    /// The operation called (`inventory.roast.importRoastLog`); when `None`, each use case names
    /// its own operation.
    pub operation: Option<&'static str>,
}

impl Caller {
    /// The caller of use cases run by the service itself (e.g. the command line).
    pub const SYSTEM: &'static str = "system";
}

impl Default for Caller {
    fn default() -> Self {
        Self {
            client_id: Arc::from(Self::SYSTEM),
            operation: None,
        }
    }
}

/// The use cases, generic over the store.
pub struct Roastery<S: Store> {
    store: S,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    caller: Caller,
    eudr_enforce: due_diligence::EudrEnforce,
    /// The base of EPCIS identifiers; when unset, that of the installation id.
    epcis_base: Option<roastery_domain::epcis::EpcisBase>,
    eudr_timing: submission::EudrTiming,
    /// Told after a unit of work committed events (wakes this instance's delivery loop).
    events_committed: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl<S: Store> Clone for Roastery<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            clock: self.clock.clone(),
            ids: self.ids.clone(),
            caller: self.caller.clone(),
            eudr_enforce: self.eudr_enforce,
            epcis_base: self.epcis_base.clone(),
            eudr_timing: self.eudr_timing,
            events_committed: self.events_committed.clone(),
        }
    }
}

impl<S: Store> Roastery<S> {
    pub fn new(store: S, clock: Arc<dyn Clock>, ids: Arc<dyn IdGen>) -> Self {
        Self {
            store,
            clock,
            ids,
            caller: Caller::default(),
            eudr_enforce: due_diligence::EudrEnforce::Off,
            epcis_base: None,
            eudr_timing: submission::EudrTiming::default(),
            events_committed: None,
        }
    }

    /// The same use cases, calling `notify` after each unit of work that committed events.
    pub fn notifying_events(self, notify: Arc<dyn Fn() + Send + Sync>) -> Self {
        Self {
            events_committed: Some(notify),
            ..self
        }
    }

    /// Runs `work` as one write unit of work of `operation` (unless the caller named the
    /// operation it called) and stores, in the same transaction, one event per resource the
    /// repositories noted as created or changed. Use cases that change resources write
    /// through here: the store refuses to commit noted changes that were not turned into
    /// events.
    pub(crate) fn write<T>(
        &self,
        operation: &'static str,
        mut work: impl FnMut(&mut S::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let mut emitted = false;
        let value = self.store.write(|tx| {
            // A retried unit of work starts from nothing noted.
            drop(tx.take_changes());
            let value = work(tx)?;
            let changes = tx.take_changes();
            emitted = !changes.is_empty();
            if emitted {
                let origin = roastery_domain::event::EventOrigin {
                    operation: self.caller.operation.unwrap_or(operation).to_owned(),
                    client_id: self.caller.client_id.to_string(),
                    created_date: self.clock.now(),
                };
                tx.insert_events(&changes.into_events(&origin, || self.ids.new_id()))?;
            }
            Ok(value)
        })?;
        if emitted && let Some(notify) = &self.events_committed {
            notify();
        }
        Ok(value)
    }

    /// The same use cases, run on behalf of `caller`.
    pub fn acting_as(&self, caller: Caller) -> Self {
        Self {
            caller,
            ..self.clone()
        }
    }

    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Ledger entries for the movements of one operation (`operation` unless the caller named
    /// the operation it called).
    pub(crate) fn ledger_entries(
        &self,
        operation: &'static str,
        now: DateTime<Utc>,
        movements: &[roastery_domain::ledger::Movement],
    ) -> Vec<roastery_domain::ledger::LedgerEntry> {
        let origin = roastery_domain::ledger::Origin {
            operation: self.caller.operation.unwrap_or(operation).to_owned(),
            client_id: self.caller.client_id.to_string(),
            created_date: now,
        };
        roastery_domain::ledger::entries(movements, &origin, || self.ids.new_id())
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Whether the store answers (for health checks).
    pub fn ping(&self) -> Result<(), AppError> {
        self.store.read(|tx| Ok(tx.ping()?))
    }

    /// The deployment-wide key that signs pagination cursors, created on first use. Every server
    /// instance on one database reads the same key, so each accepts the others' cursors.
    pub fn cursor_key(&self) -> Result<Vec<u8>, AppError> {
        let fresh = self.ids.random_token(32);
        let key = self
            .store
            .write(|tx| Ok(tx.setting_or_insert("cursor_key", &fresh)?))?;
        Ok(key.into_bytes())
    }
}
