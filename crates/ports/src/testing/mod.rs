//! An in-memory [`Store`] with a manual clock and sequential ids, for the use cases' tests.
//!
//! The store itself is in `store.rs`, what it holds in `tables.rs`, and each subject's
//! repository in its own module beside them.

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
mod store;
mod submission;
mod system;
mod tables;
mod trace;

pub use store::{InMemoryStore, MemData, MemTx, page_newest_first};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, TimeDelta, Utc};
use uuid::Uuid;

use crate::{Clock, IdGen};

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
