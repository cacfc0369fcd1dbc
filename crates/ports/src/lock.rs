//! Rows loaded for change.
//!
//! A write unit of work that loads a row, changes it and writes it back must hold the row's lock
//! from the load to the commit; otherwise, on PostgreSQL under READ COMMITTED, a concurrent
//! writer's change is overwritten without any error. [`ForUpdate`] turns that rule into a type:
//! every repository method that writes back a loaded row takes a `ForUpdate`, and the only way to
//! make one is [`ForUpdate::load`], which has the store lock the rows ([`RowLocks::lock_rows`])
//! before it loads them.
//!
//! Use cases see their transaction only as [`Repos`](crate::Repos), which does not include
//! [`RowLocks`]: they get a `ForUpdate` from a store's locking loader (`green_lot_for_update`,
//! `orders_for_update`, …) and cannot make one themselves. Passing an unlocked row fails to
//! compile:
//!
//! ```compile_fail,E0308
//! use roastery_ports::{AppError, Repos, Store};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(lot) = tx.green_lot(id)? else { return Ok(()) };
//!         tx.update_green_lot(&lot)?; // a `GreenLot`, not a `ForUpdate<GreenLot>`
//!         Ok(())
//!     })
//! }
//! ```
//!
//! and so does building the proof by hand, from a use case's transaction:
//!
//! ```compile_fail,E0277
//! use roastery_ports::{AppError, Store};
//! use roastery_ports::lock::{ForUpdate, Rows};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let lot = ForUpdate::load(tx, Rows::GreenLots(&[id]), |tx| tx.green_lot(id))?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! while the locking loader compiles:
//!
//! ```
//! use roastery_ports::{AppError, Store};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(lot) = tx.green_lot_for_update(id)? else { return Ok(()) };
//!         tx.update_green_lot(&lot)?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! Which rows a loader locks, and in which order use cases take them so that two units of work
//! never wait for each other in a cycle, is written in `adapters-diesel/src/lock.rs`.

use std::ops::{Deref, DerefMut};

use uuid::Uuid;

use crate::repo::StoreResult;

/// Rows a write unit of work locks before it loads them, each kind found by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows<'a> {
    /// Every green lot of the origin of this lot: a transfer may merge into any of them.
    GreenLotOrigin(Uuid),
    GreenLots(&'a [Uuid]),
    RoastedLots(&'a [Uuid]),
    BlendedLots(&'a [Uuid]),
    Cuppings(&'a [Uuid]),
    Orders(&'a [Uuid]),
    OrdersByExternalId(&'a [String]),
    ProductsByExternalId(&'a [String]),
}

/// How a store locks rows in a write unit of work. Implemented by each store's transaction and
/// deliberately not part of [`Repos`](crate::Repos): only a store's loaders build
/// [`ForUpdate`] values.
pub trait RowLocks {
    /// Locks `rows` until the unit of work ends; rows that do not exist lock nothing. A store
    /// whose database runs one writer at a time, or a read unit of work, locks nothing.
    fn lock_rows(&mut self, rows: Rows<'_>) -> StoreResult<()>;
}

/// A value loaded after its rows were locked in this unit of work: what a repository method
/// that writes back a loaded row requires.
///
/// It derefs to the value, so a use case reads it and applies domain transitions to it in
/// place; it replaces the value only with the next state of the same rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForUpdate<T>(T);

impl<T> ForUpdate<T> {
    /// Locks `rows`, then loads with `load`. The only constructor: a `ForUpdate` always comes
    /// from a load that followed its lock.
    pub fn load<Tx: RowLocks + ?Sized>(
        tx: &mut Tx,
        rows: Rows<'_>,
        load: impl FnOnce(&mut Tx) -> StoreResult<T>,
    ) -> StoreResult<Self> {
        tx.lock_rows(rows)?;
        load(tx).map(Self)
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> ForUpdate<Option<T>> {
    /// The locked row, if it exists.
    pub fn transpose(self) -> Option<ForUpdate<T>> {
        self.0.map(ForUpdate)
    }
}

impl<T> ForUpdate<Vec<T>> {
    /// Each of the locked rows.
    pub fn into_each(self) -> Vec<ForUpdate<T>> {
        self.0.into_iter().map(ForUpdate).collect()
    }
}

impl<A, B> ForUpdate<(A, B)> {
    /// Both parts of what was loaded under one lock.
    pub fn unzip(self) -> (ForUpdate<A>, ForUpdate<B>) {
        let (a, b) = self.0;
        (ForUpdate(a), ForUpdate(b))
    }
}

impl<T> Deref for ForUpdate<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for ForUpdate<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder {
        calls: Vec<&'static str>,
    }

    impl RowLocks for Recorder {
        fn lock_rows(&mut self, _: Rows<'_>) -> StoreResult<()> {
            self.calls.push("lock");
            Ok(())
        }
    }

    #[test]
    fn a_value_for_update_is_loaded_after_its_rows_are_locked() {
        let mut tx = Recorder::default();
        let id = Uuid::nil();
        let loaded = ForUpdate::load(&mut tx, Rows::GreenLots(&[id]), |tx| {
            tx.calls.push("load");
            Ok(7)
        })
        .unwrap();
        assert_eq!(*loaded, 7);
        assert_eq!(tx.calls, ["lock", "load"]);
    }

    #[test]
    fn a_failed_lock_loads_nothing() {
        struct Refuses;
        impl RowLocks for Refuses {
            fn lock_rows(&mut self, _: Rows<'_>) -> StoreResult<()> {
                Err(crate::StoreError::Unavailable("lock timeout".into()))
            }
        }
        let mut loaded = false;
        let result = ForUpdate::load(&mut Refuses, Rows::Orders(&[]), |_| {
            loaded = true;
            Ok(())
        });
        assert!(result.is_err());
        assert!(!loaded);
    }
}
