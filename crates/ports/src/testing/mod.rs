//! An in-memory [`Store`] with a manual clock and sequential ids, for the use cases' tests.
//!
//! A transaction works on a copy of the data and replaces the original on commit, so a failed
//! use case leaves nothing behind, exactly like a rolled-back database transaction.

mod account;
mod blend;
mod cupping;
mod event;
pub use cupping::register_lot;
mod green;
mod listing;
mod location;
mod order;
mod physical;
mod plan;
mod product;
mod profile;
mod project;
mod roast;
mod submission;
mod system;
mod trace;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, TimeDelta, Utc};
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use crate::error::{AppError, StoreError};
use crate::lock::Rows;
use crate::repo::StoreResult;
use crate::{Clock, IdGen, Store};
use roastery_lock::RowLocks;

/// Everything the in-memory store holds.
#[derive(Debug, Clone, Default)]
pub struct MemData {
    pub system: system::SystemData,
    pub accounts: account::AccountData,
    pub locations: Vec<roastery_domain::location::Location>,
    pub projects: Vec<roastery_domain::project::Project>,
    pub green: green::GreenData,
    pub roast: roast::RoastData,
    pub blend: blend::BlendData,
    pub cupping: cupping::CuppingData,
    pub physical: physical::PhysicalData,
    pub product: product::ProductData,
    pub order: order::OrderData,
    pub ledger: Vec<roastery_domain::ledger::LedgerEntry>,
    pub due_diligence: Vec<(Uuid, roastery_domain::due_diligence::DueDiligence)>,
    pub events: event::EventData,
    pub plan: plan::PlanData,
    pub submissions: submission::SubmissionData,
    pub listing: listing::ListingData,
}

/// One transaction: a private copy of the data.
#[derive(Debug)]
pub struct MemTx {
    pub data: MemData,
    /// Changes noted and not yet turned into events.
    pub changes: roastery_domain::event::Changes,
    /// Lots written and their items not stored yet.
    pub written: crate::listing::WrittenLots,
}

#[derive(Debug, Clone, Default)]
pub struct InMemoryStore {
    data: Arc<Mutex<MemData>>,
}

impl Store for InMemoryStore {
    type Tx = MemTx;

    fn read<T>(&self, work: impl FnOnce(&mut MemTx) -> Result<T, AppError>) -> Result<T, AppError> {
        let data = self.data.lock().unwrap_or_else(PoisonError::into_inner);
        let mut tx = MemTx {
            data: data.clone(),
            changes: Default::default(),
            written: Default::default(),
        };
        drop(data);
        work(&mut tx)
    }

    fn write<T>(
        &self,
        mut work: impl FnMut(&mut MemTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        // Holding the lock for the whole unit of work serialises writers, like BEGIN IMMEDIATE.
        let mut data = self.data.lock().unwrap_or_else(PoisonError::into_inner);
        let mut tx = MemTx {
            data: data.clone(),
            changes: Default::default(),
            written: Default::default(),
        };
        let value = work(&mut tx)?;
        if !tx.changes.is_empty() {
            return Err(StoreError::Internal(
                "changes were noted but no events written (write through Roastery::write)".into(),
            )
            .into());
        }
        *data = tx.data;
        Ok(value)
    }
}

/// Writers run one at a time (see [`InMemoryStore::write`]): nothing to lock.
impl RowLocks for MemTx {
    type Error = StoreError;

    fn lock_rows(&mut self, _: Rows<'_>) -> StoreResult<()> {
        Ok(())
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self {
            now: Arc::new(Mutex::new(
                DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
            )),
        }
    }
}

impl ManualClock {
    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now += by;
    }

    pub fn now_value(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.now_value()
    }
}

/// Ids counting up from 1 in the low bits of a v7-shaped UUID, so they sort in creation order.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl IdGen for SequentialIds {
    fn new_id(&self) -> Uuid {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0000 | u128::from(n))
    }

    fn random_token(&self, bytes: usize) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{n:0>width$}", width = bytes.max(4))
    }
}

/// Newest-first keyset paging over records held in memory.
pub fn page_newest_first<T: Clone>(
    records: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> (DateTime<Utc>, Uuid),
    page: &PageRequest,
) -> Result<Page<T>, StoreError> {
    let after = page
        .keyset()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut rows: Vec<T> = records
        .into_iter()
        .filter(|r| after.is_none_or(|a| key(r) < a))
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(key(r)));
    rows.truncate(page.limit.as_usize() + 1);
    Ok(Page::from_overfetch(rows, page.limit, key))
}
