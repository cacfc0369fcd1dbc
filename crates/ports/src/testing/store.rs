//! The in-memory store: its data, its transactions and newest-first paging over its records.
//!
//! A transaction works on a copy of the data and replaces the original on commit, so a failed
//! use case leaves nothing behind, exactly like a rolled-back database transaction.

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::tables::*;
use crate::Store;
use crate::error::{AppError, StoreError};
use crate::lock::Rows;
use crate::repo::StoreResult;
use roastery_lock::RowLocks;

/// Everything the in-memory store holds.
#[derive(Debug, Clone, Default)]
pub struct MemData {
    pub system: SystemData,
    pub accounts: AccountData,
    pub locations: Vec<roastery_domain::location::Location>,
    pub projects: Vec<roastery_domain::project::Project>,
    pub green: GreenData,
    pub roast: RoastData,
    pub blend: BlendData,
    pub cupping: CuppingData,
    pub physical: PhysicalData,
    pub product: ProductData,
    pub order: OrderData,
    pub ledger: Vec<roastery_domain::ledger::LedgerEntry>,
    pub due_diligence: Vec<(Uuid, roastery_domain::due_diligence::DueDiligence)>,
    pub events: EventData,
    pub plan: PlanData,
    pub submissions: SubmissionData,
    pub listing: ListingData,
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
