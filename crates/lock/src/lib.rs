//! Rows loaded for change.
//!
//! A write unit of work that loads a row, changes it and writes it back must hold the row's lock
//! from the load to the commit; otherwise, on PostgreSQL under READ COMMITTED, a concurrent
//! writer's change is overwritten without any error. [`ForUpdate`] turns that rule into a type:
//! every repository method that writes back a loaded row takes a `ForUpdate`, and the only way to
//! make one is [`ForUpdate::load`], which has the store lock the rows ([`RowLocks::lock_rows`])
//! before it loads them.
//!
//! Who may make one is decided by the crate graph. `roastery-ports` re-exports [`ForUpdate`] and
//! [`Rows`] but not [`RowLocks`]; only the stores (the in-memory store in `roastery-ports`, the
//! Diesel store) depend on this crate and implement `RowLocks` for their transactions, and
//! `deny.toml` refuses any other crate that depends on it directly. A use case
//! (`roastery-app`) sees its transaction only as `Repos`, cannot name `RowLocks` to ask for it
//! and so cannot call [`ForUpdate::load`]; it gets a `ForUpdate` from a store's locking loader
//! and can only replace the value with the next state of the same row ([`ForUpdate::replace`]).
//! The tests that show it are in `crates/app/src/lock_proof.rs`.

use std::fmt;
use std::ops::Deref;

use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::cupping::Cupping;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::order::Order;
use roastery_domain::product::Product;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use uuid::Uuid;

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

/// How a store locks rows in a write unit of work. Implemented by each store's transaction.
pub trait RowLocks {
    type Error;

    /// Locks `rows` until the unit of work ends; rows that do not exist lock nothing. A store
    /// whose database runs one writer at a time, or a read unit of work, locks nothing.
    fn lock_rows(&mut self, rows: Rows<'_>) -> Result<(), Self::Error>;
}

/// What identifies the row a value was loaded from: a replacement must keep it.
pub trait Keyed {
    type Key: PartialEq + fmt::Debug;

    fn key(&self) -> Self::Key;
}

macro_rules! keyed_by_id {
    ($($t:ty),*) => {$(
        impl Keyed for $t {
            type Key = Uuid;

            fn key(&self) -> Uuid {
                self.id
            }
        }
    )*};
}

keyed_by_id!(GreenLot, RoastedLot, BlendedLot, Order);

impl Keyed for Cupping {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.id()
    }
}

impl Keyed for Product {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.id
    }
}

/// A lot whose stock (weight, consumption) may be changed while it is held for update: the
/// stock is never the row's key.
pub trait Stocked {
    fn stock_mut(&mut self) -> &mut Stock;
}

macro_rules! stocked {
    ($($t:ty),*) => {$(
        impl Stocked for $t {
            fn stock_mut(&mut self) -> &mut Stock {
                &mut self.stock
            }
        }
    )*};
}

stocked!(GreenLot, RoastedLot, BlendedLot);

/// A value loaded after its rows were locked in this unit of work: what a repository method
/// that writes back a loaded row requires.
///
/// It derefs to the value, so a use case reads it; it changes only by
/// [`ForUpdate::replace`], with the next state of the same row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForUpdate<T>(T);

/// A replacement that would have put another row's value in place of the locked one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherRow {
    pub locked: String,
    pub offered: String,
}

impl fmt::Display for OtherRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the row {} is locked, not {}: a value loaded for update is replaced only by the \
             next state of the same row",
            self.locked, self.offered
        )
    }
}

impl std::error::Error for OtherRow {}

impl<T> ForUpdate<T> {
    /// Locks `rows`, then loads with `load`. The only constructor: a `ForUpdate` always comes
    /// from a load that followed its lock.
    pub fn load<Tx: RowLocks + ?Sized>(
        tx: &mut Tx,
        rows: Rows<'_>,
        load: impl FnOnce(&mut Tx) -> Result<T, Tx::Error>,
    ) -> Result<Self, Tx::Error> {
        tx.lock_rows(rows)?;
        load(tx).map(Self)
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: Keyed> ForUpdate<T> {
    /// Puts `next`, the next state of the locked row, in place of the value.
    pub fn replace(&mut self, next: T) -> Result<(), OtherRow> {
        let (locked, offered) = (self.0.key(), next.key());
        if locked != offered {
            return Err(OtherRow {
                locked: format!("{locked:?}"),
                offered: format!("{offered:?}"),
            });
        }
        self.0 = next;
        Ok(())
    }

    /// Changes the value in place with `change` (a domain transition), which must leave it
    /// the same row; if it does not, the value is left as it was.
    pub fn change<R>(&mut self, change: impl FnOnce(&mut T) -> R) -> Result<R, OtherRow>
    where
        T: Clone,
    {
        let before = self.0.clone();
        let result = change(&mut self.0);
        let (locked, now) = (before.key(), self.0.key());
        if locked != now {
            self.0 = before;
            return Err(OtherRow {
                locked: format!("{locked:?}"),
                offered: format!("{now:?}"),
            });
        }
        Ok(result)
    }
}

impl<T: Stocked> ForUpdate<T> {
    /// The lot's stock, to take weight from (several lots' at once, as a blend does).
    pub fn stock_mut(&mut self) -> &mut Stock {
        self.0.stock_mut()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder {
        calls: Vec<&'static str>,
    }

    impl RowLocks for Recorder {
        type Error = String;

        fn lock_rows(&mut self, _: Rows<'_>) -> Result<(), String> {
            self.calls.push("lock");
            Ok(())
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Row {
        id: u8,
        value: u8,
    }

    impl Keyed for Row {
        type Key = u8;

        fn key(&self) -> u8 {
            self.id
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
            type Error = &'static str;
            fn lock_rows(&mut self, _: Rows<'_>) -> Result<(), &'static str> {
                Err("lock timeout")
            }
        }
        let mut loaded = false;
        let result = ForUpdate::load(&mut Refuses, Rows::Orders(&[]), |_| {
            loaded = true;
            Ok(())
        });
        assert_eq!(result, Err("lock timeout"));
        assert!(!loaded);
    }

    fn locked_row() -> ForUpdate<Row> {
        ForUpdate::load(&mut Recorder::default(), Rows::Orders(&[]), |_| {
            Ok(Row { id: 1, value: 0 })
        })
        .unwrap()
    }

    #[test]
    fn a_locked_value_is_replaced_by_the_next_state_of_its_row() {
        let mut row = locked_row();
        row.replace(Row { id: 1, value: 9 }).unwrap();
        assert_eq!(row.value, 9);
        assert_eq!(row.change(|r| r.value += 1), Ok(()));
        assert_eq!(row.value, 10);
    }

    #[test]
    fn another_rows_value_never_takes_the_place_of_a_locked_one() {
        let mut row = locked_row();
        let err = row.replace(Row { id: 2, value: 9 }).unwrap_err();
        assert_eq!(err.locked, "1");
        assert_eq!(*row, Row { id: 1, value: 0 });
        assert!(row.change(|r| r.id = 3).is_err());
        assert_eq!(*row, Row { id: 1, value: 0 }, "left as it was");
    }
}
