//! Roastery's use cases: methods of [`Roastery`], generic over the ports of `roastery-ports`,
//! one module per subject. One use case is one call of `Store::read` or `Store::write`, so
//! every operation of the API is one transaction; writes go through [`Roastery::write`], which
//! also stores, in the same transaction, the events and listing items of what the unit of work
//! changed.
//!
//! The inbound adapters (`adapters-http`, the command line) call these; the use cases know
//! neither SQL nor HTTP.

pub mod account;
pub mod blend;
pub mod cupping;
pub mod due_diligence;
pub mod epcis;
pub mod eudr_settings;
pub mod event;
pub mod green_lot;
pub mod listing;
pub mod location;
mod lock_proof;
mod lot_sources;
mod lot_turn;
pub mod order;
pub mod physical;
pub mod plan;
pub mod product;
pub mod profile;
pub mod project;
pub mod reference;
pub mod roast;
pub mod roast_log;
pub mod submission;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod trace;
mod upsert;

pub use roastery_ports::{
    AppError, Clock, IdGen, ItemFailure, PoolState, Rejection, Repos, Store, StoreError,
};

use std::sync::Arc;

use chrono::{DateTime, Utc};

use roastery_domain::operation::{Operation, Task};
use roastery_ports::listing::{ListingRender, ListingRepo};
use roastery_ports::repo::{EventRepo, SystemRepo};

/// Who calls the use cases: the client id and the operation, recorded on every ledger entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub client_id: Arc<str>,
    /// The operation called (`ImportRoastLog`); when `None`, each use case names its own
    /// operation.
    pub operation: Option<Operation>,
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
    eudr_enforce: eudr_settings::EudrEnforce,
    /// The base of EPCIS identifiers; when unset, that of the installation id.
    epcis_base: Option<roastery_domain::epcis::EpcisBase>,
    eudr_timing: eudr_settings::EudrTiming,
    /// Told after a unit of work committed events (wakes this instance's delivery loop).
    events_committed: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Renders the listing items of the lots a write changes; without it none are stored.
    listing: Option<Arc<dyn ListingRender>>,
    /// Writes to one lot take turns here before they reach the store (see [`lot_turn`]).
    lot_turns: Arc<lot_turn::LotTurns>,
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
            listing: self.listing.clone(),
            lot_turns: Arc::clone(&self.lot_turns),
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
            eudr_enforce: eudr_settings::EudrEnforce::Off,
            epcis_base: None,
            eudr_timing: eudr_settings::EudrTiming::default(),
            events_committed: None,
            listing: None,
            lot_turns: Arc::default(),
        }
    }

    /// The same use cases, storing with every lot a write changes its listing item rendered by
    /// `render`.
    pub fn rendering_listings(self, render: Arc<dyn ListingRender>) -> Self {
        Self {
            listing: Some(render),
            ..self
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
    /// repositories noted as created or changed, and the listing item of every lot written. Use cases that change resources write
    /// through here: the store refuses to commit noted changes that were not turned into
    /// events.
    pub(crate) fn write<T>(
        &self,
        operation: Operation,
        work: impl FnMut(&mut S::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.write_as(operation.name(), work)
    }

    /// [`Roastery::write`] for a unit of work of the service's own `task`.
    pub(crate) fn write_task<T>(
        &self,
        task: Task,
        work: impl FnMut(&mut S::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.write_as(task.name(), work)
    }

    fn write_as<T>(
        &self,
        operation: &'static str,
        mut work: impl FnMut(&mut S::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let mut emitted = false;
        let value = self.store.write(|tx| {
            // A retried unit of work starts from nothing noted.
            drop(tx.take_changes());
            drop(tx.take_written_lots());
            let value = work(tx)?;
            self.store_listing_items(tx)?;
            let changes = tx.take_changes();
            emitted = !changes.is_empty();
            if emitted {
                let origin = roastery_domain::event::EventOrigin {
                    operation: self
                        .caller
                        .operation
                        .map_or(operation, Operation::name)
                        .to_owned(),
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
        operation: Operation,
        now: DateTime<Utc>,
        movements: &[roastery_domain::ledger::Movement],
    ) -> Vec<roastery_domain::ledger::LedgerEntry> {
        let origin = roastery_domain::ledger::Origin {
            operation: self.caller.operation.unwrap_or(operation).name().to_owned(),
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
