//! Row locks of PostgreSQL write units of work.
//!
//! A loader of rows that a write unit of work may change first locks them with
//! `SELECT … FOR UPDATE`, then reads them: under READ COMMITTED the read after the lock sees the
//! latest committed version, and nobody else can change the rows until this transaction ends, so
//! the whole-row write-back that follows cannot lose a concurrent update. Where one statement
//! can do both, the lock is the read: a single green lot is loaded `FOR UPDATE`, and a
//! transfer's lock answers every lot of its origin (`green_row.rs`, `LockedOrigin`), which its loads
//! of source and target then use, so the lots stay locked for fewer round trips.
//!
//! Deadlocks are avoided by one global order:
//! - every lock statement locks its rows in primary-key order, in one statement, and a use case
//!   locks the rows of one table in one statement (a green lot is locked together with every lot
//!   of its origin: a transfer may go on to merge into any of them; a shipment loads all its
//!   green lots in one call, then all its roasted lots, then its blended lots by ascending id);
//! - tables are locked in one order: orders, then lots (green, roasted, blended), then products,
//!   then the lot-number counters, which every use case takes last.
//!
//! Two transactions naming the same rows in opposite orders therefore wait for each other at
//! most in one direction. The store tests `opposite_shipments_on_postgres` and
//! `opposite_blends_on_postgres` check that PostgreSQL reports no deadlock for them. Should a
//! deadlock still occur, the database aborts one transaction and the unit of work is retried.
//!
//! SQLite has one writer at a time (`BEGIN IMMEDIATE`); nothing is locked here.

use diesel::prelude::*;
use diesel::{PgConnection, QueryResult};

use roastery_lock::RowLocks;
use roastery_ports::lock::Rows;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::schema::{blended_lots, cuppings, green_lots, orders, products, roasted_lots};
use crate::store::DieselTx;

/// A table whose rows a write unit of work locks, and the column it finds them by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Locked {
    GreenLotOrigins,
    GreenLots,
    RoastedLots,
    BlendedLots,
    Cuppings,
    OrdersById,
    OrdersByExternalId,
    ProductsByExternalId,
}

impl DieselTx {
    /// Whether the load of this one green lot is to take its lock (noted by `lock_rows` just
    /// before); the note is taken.
    pub(crate) fn locks_green_lot_on_load(&mut self, key: &str) -> bool {
        if self.lock_on_load.as_deref() == Some(key) {
            self.lock_on_load = None;
            return true;
        }
        false
    }
}

impl Locked {
    /// `SELECT id FROM … WHERE key = ANY($1) ORDER BY id FOR UPDATE`. Written with Diesel's
    /// query builder rather than as SQL text so that each is a prepared statement the connection
    /// keeps (Diesel caches `= ANY($1)` queries, never raw SQL): every write runs one, and
    /// PostgreSQL then parses and plans it once per connection, not once per write.
    fn run(self, c: &mut PgConnection, keys: &[String]) -> QueryResult<usize> {
        macro_rules! lock {
            ($table:ident, $which:expr) => {
                $table::table
                    .select($table::id)
                    .filter($which)
                    .order($table::id)
                    .for_update()
                    .execute(c)
            };
        }
        match self {
            // Locked and read at once (`green_row.rs`).
            Self::GreenLotOrigins => crate::green_row::lock_origin(c, keys).map(|o| o.len()),
            Self::GreenLots => lock!(green_lots, green_lots::id.eq_any(keys)),
            Self::RoastedLots => lock!(roasted_lots, roasted_lots::id.eq_any(keys)),
            Self::BlendedLots => lock!(blended_lots, blended_lots::id.eq_any(keys)),
            Self::Cuppings => lock!(cuppings, cuppings::id.eq_any(keys)),
            Self::OrdersById => lock!(orders, orders::id.eq_any(keys)),
            Self::OrdersByExternalId => lock!(orders, orders::external_id.eq_any(keys)),
            Self::ProductsByExternalId => lock!(products, products::external_id.eq_any(keys)),
        }
    }
}

/// The only way rows get locked: through [`ForUpdate::load`](roastery_lock::ForUpdate::load),
/// which the loaders `…_for_update` of each repository call before they read.
impl RowLocks for DieselTx {
    type Error = roastery_ports::StoreError;

    /// In a PostgreSQL write unit of work, locks `rows` (in primary-key order); elsewhere does
    /// nothing. Rows that do not exist lock nothing.
    fn lock_rows(&mut self, rows: Rows<'_>) -> StoreResult<()> {
        if !self.locking {
            return Ok(());
        }
        let texts = |ids: &[Uuid]| ids.iter().map(Uuid::to_string).collect::<Vec<_>>();
        let (what, keys) = match rows {
            Rows::GreenLotOrigin(id) => (Locked::GreenLotOrigins, vec![id.to_string()]),
            Rows::GreenLots(ids) => (Locked::GreenLots, texts(ids)),
            Rows::RoastedLots(ids) => (Locked::RoastedLots, texts(ids)),
            Rows::BlendedLots(ids) => (Locked::BlendedLots, texts(ids)),
            Rows::Cuppings(ids) => (Locked::Cuppings, texts(ids)),
            Rows::Orders(ids) => (Locked::OrdersById, texts(ids)),
            Rows::OrdersByExternalId(keys) => (Locked::OrdersByExternalId, keys.to_vec()),
            Rows::ProductsByExternalId(keys) => (Locked::ProductsByExternalId, keys.to_vec()),
        };
        if keys.is_empty() {
            return Ok(());
        }
        // One lot of a kind whose plain loader can lock it: the load takes the lock itself
        // (`SELECT … FOR UPDATE`, one round trip instead of two). A lock noted and not taken by
        // the load that follows fails the unit of work at commit (`store.rs`), so it can never
        // let a write through unlocked.
        if let (Locked::GreenLots, [key]) = (what, keys.as_slice())
            && matches!(self.conn()?, AnyConnection::Postgresql(_))
        {
            self.lock_on_load = Some(key.clone());
            return Ok(());
        }
        match self.conn()? {
            // A transfer's lots are read by the statement that locks them.
            AnyConnection::Postgresql(c) if what == Locked::GreenLotOrigins => {
                let locked = crate::green_row::lock_origin(c, &keys).store()?;
                self.locked_origin = Some(locked);
                Ok(())
            }
            AnyConnection::Postgresql(c) => what.run(c, &keys).store().map(drop),
            AnyConnection::Sqlite(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use diesel::Connection;
    use diesel::connection::{Instrumentation, InstrumentationEvent, SimpleConnection};

    use super::Locked;

    #[derive(Default, Clone)]
    struct Cached(Arc<Mutex<Vec<String>>>);

    impl Instrumentation for Cached {
        fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event {
                self.0.lock().unwrap().push(sql.to_owned());
            }
        }
    }

    /// Every lock statement is prepared once per connection and then reused: the second run of
    /// each caches nothing new.
    #[test]
    fn lock_statements_are_prepared_once_per_connection() {
        let Ok(url) = std::env::var("ROASTERY_TEST_DATABASE_URL") else {
            eprintln!("skipped: ROASTERY_TEST_DATABASE_URL is not set");
            return;
        };
        let mut c = crate::libpq::connect(&url).unwrap();
        // Temporary tables of the same names shadow any real ones for this session only.
        c.batch_execute(
            "CREATE TEMPORARY TABLE green_lots (id text PRIMARY KEY, origin_id text NOT NULL,
                 lot_number bigint NOT NULL DEFAULT 1, name text NOT NULL DEFAULT 'n',
                 ico_number text, external_id text, weight_micros bigint NOT NULL DEFAULT 0,
                 weight_unit text NOT NULL DEFAULT 'KG', consumed_at timestamp,
                 price_micros bigint, price_currency text, location_id text,
                 projects text NOT NULL DEFAULT '[]', details text NOT NULL DEFAULT '{}',
                 registration_date timestamp NOT NULL DEFAULT now(),
                 last_modified_date timestamp NOT NULL DEFAULT now());
             CREATE TEMPORARY TABLE roasted_lots (id text PRIMARY KEY);
             CREATE TEMPORARY TABLE blended_lots (id text PRIMARY KEY);
             CREATE TEMPORARY TABLE cuppings (id text PRIMARY KEY);
             CREATE TEMPORARY TABLE orders (id text PRIMARY KEY, external_id text);
             CREATE TEMPORARY TABLE products (id text PRIMARY KEY, external_id text);
             INSERT INTO green_lots (id, origin_id) VALUES ('a', 'o'), ('b', 'o'), ('c', 'p');",
        )
        .unwrap();
        let cached = Cached::default();
        c.set_instrumentation(cached.clone());
        let all = [
            Locked::GreenLotOrigins,
            Locked::GreenLots,
            Locked::RoastedLots,
            Locked::BlendedLots,
            Locked::Cuppings,
            Locked::OrdersById,
            Locked::OrdersByExternalId,
            Locked::ProductsByExternalId,
        ];
        c.transaction(|c| {
            for round in 0..2 {
                for what in all {
                    let keys = ["b".to_owned(), format!("key-{round}")];
                    let locked = what.run(c, &keys)?;
                    if matches!(what, Locked::GreenLotOrigins) {
                        assert_eq!(locked, 2, "a and b share origin o");
                    }
                }
            }
            diesel::QueryResult::Ok(())
        })
        .unwrap();
        let cached = cached.0.lock().unwrap().clone();
        assert_eq!(cached.len(), all.len(), "{cached:#?}");
        assert!(
            cached.iter().all(|sql| sql.ends_with("FOR UPDATE")),
            "{cached:#?}"
        );
    }
}
