//! Row locks of PostgreSQL write units of work.
//!
//! A loader of rows that a write unit of work may change first locks them with
//! `SELECT … FOR UPDATE`, then reads them: under READ COMMITTED the read after the lock sees the
//! latest committed version, and nobody else can change the rows until this transaction ends, so
//! the whole-row write-back that follows cannot lose a concurrent update.
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

use diesel::RunQueryDsl;
use diesel::sql_types::{Array, Text};

use roastery_ports::repo::StoreResult;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::store::DieselTx;

/// A table whose rows a write unit of work locks, and the column it finds them by. The names
/// are constants of this crate, never input, so they can be part of the SQL text.
#[derive(Debug, Clone, Copy)]
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

impl Locked {
    fn sql(self) -> &'static str {
        match self {
            Self::GreenLotOrigins => {
                "SELECT 1 FROM green_lots WHERE origin_id IN \
                 (SELECT origin_id FROM green_lots WHERE id = ANY($1)) ORDER BY id FOR UPDATE"
            }
            Self::GreenLots => "SELECT 1 FROM green_lots WHERE id = ANY($1) ORDER BY id FOR UPDATE",
            Self::RoastedLots => {
                "SELECT 1 FROM roasted_lots WHERE id = ANY($1) ORDER BY id FOR UPDATE"
            }
            Self::BlendedLots => {
                "SELECT 1 FROM blended_lots WHERE id = ANY($1) ORDER BY id FOR UPDATE"
            }
            Self::Cuppings => "SELECT 1 FROM cuppings WHERE id = ANY($1) ORDER BY id FOR UPDATE",
            Self::OrdersById => "SELECT 1 FROM orders WHERE id = ANY($1) ORDER BY id FOR UPDATE",
            Self::OrdersByExternalId => {
                "SELECT 1 FROM orders WHERE external_id = ANY($1) ORDER BY id FOR UPDATE"
            }
            Self::ProductsByExternalId => {
                "SELECT 1 FROM products WHERE external_id = ANY($1) ORDER BY id FOR UPDATE"
            }
        }
    }
}

impl DieselTx {
    /// In a PostgreSQL write unit of work, locks the rows of `what` whose key is among `keys`
    /// (in primary-key order); elsewhere does nothing. Rows that do not exist lock nothing.
    pub(crate) fn lock(&mut self, what: Locked, keys: &[String]) -> StoreResult<()> {
        if !self.lock_rows || keys.is_empty() {
            return Ok(());
        }
        match self.conn() {
            AnyConnection::Postgresql(c) => diesel::sql_query(what.sql())
                .bind::<Array<Text>, _>(keys)
                .execute(c)
                .store()
                .map(drop),
            AnyConnection::Sqlite(_) => Ok(()),
        }
    }

    pub(crate) fn lock_one(&mut self, what: Locked, key: &str) -> StoreResult<()> {
        self.lock(what, &[key.to_owned()])
    }
}
