//! Rows loaded for change: [`ForUpdate`], the proof a repository method that writes back a
//! loaded row requires, and [`Rows`], what a store's locking loader locks.
//!
//! Only the stores make a `ForUpdate` (`roastery-lock` says how the crate graph ensures it): a
//! use case gets one from a locking loader (`green_lot_for_update`, `orders_for_update`, …),
//! reads it, and replaces it only with the next state of the same row. Which rows a loader
//! locks, and in which order use cases take them so that two units of work never wait for each
//! other in a cycle, is written in `adapters-diesel/src/lock.rs`.

pub use roastery_lock::{ForUpdate, Keyed, OtherRow, Rows, Stocked};

use crate::error::StoreError;

/// How a use case changes a row it holds for update, with the store's error when the change
/// would put another row's value in its place (a fault of the code, answered as one).
pub trait LockedRow<T> {
    /// Applies `transition` to the value in place: `lot.apply(|l| l.set_weight(w, now))??`.
    fn apply<R>(&mut self, transition: impl FnOnce(&mut T) -> R) -> Result<R, StoreError>;
    /// Puts `next`, the next state of the same row, in place of the value.
    fn put(&mut self, next: T) -> Result<(), StoreError>;
}

impl<T: Keyed + Clone> LockedRow<T> for ForUpdate<T> {
    fn apply<R>(&mut self, transition: impl FnOnce(&mut T) -> R) -> Result<R, StoreError> {
        Ok(self.change(transition)?)
    }

    fn put(&mut self, next: T) -> Result<(), StoreError> {
        Ok(self.replace(next)?)
    }
}

impl From<OtherRow> for StoreError {
    fn from(e: OtherRow) -> Self {
        StoreError::Internal(e.to_string())
    }
}
