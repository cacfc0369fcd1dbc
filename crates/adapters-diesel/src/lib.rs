//! Diesel implementation of Roastery's store, on SQLite (embedded default) and PostgreSQL.
//!
//! One code base serves both databases through [`AnyConnection`]: portable SQL types only (text
//! ids, integer micro-units, timestamps in UTC); what the multi-backend connection cannot express
//! (upserts, `RETURNING`, multi-row inserts) runs on the concrete connection (`on_backend!`),
//! the same statement on both. On SQLite a write
//! unit of work is `BEGIN IMMEDIATE`: writers take turns. On PostgreSQL a write unit of work is a
//! READ COMMITTED transaction whose loaders lock the rows it may change (`lock.rs`), in a fixed
//! order, so writers of different rows run in parallel on any number of server instances and
//! writers of the same rows queue; none loses an update. Reads run concurrently on snapshots.
//!
//! Rows never leave this crate: every module turns its rows into domain values and back.

/// One newest-first listing page of a boxed query: the rows after the page's keyset position,
/// ordered by (`$at`, `$id`) descending, one row more than the page holds, as a statement
/// PostgreSQL plans once (`newest_first`).
macro_rules! newest_first {
    ($query:ident, $page:expr, $at:expr, $id:expr) => {{
        let mut query = $query;
        if let Some(after) = $crate::newest_first::After::page($at, $id, $page)? {
            query = query.filter(after);
        }
        $crate::newest_first::PageQuery::new(query.order(($at.desc(), $id.desc())), $page)
    }};
}

/// Runs `$body` with `$c` bound to the concrete connection of either backend: for the statements
/// [`AnyConnection`]'s multi-backend cannot express, such as multi-row inserts.
macro_rules! on_backend {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::connection::AnyConnection::Postgresql($c) => $body,
            $crate::connection::AnyConnection::Sqlite($c) => $body,
        }
    };
}

/// Inserts the rows of the slice `$rows` into `$table` on the concrete connection `$c`, in one
/// statement. Diesel never keeps a statement over a slice (its text depends on the length) but
/// keeps one over an array, so the common counts (1 to 4 rows: one lot's ledger entry, a
/// transfer's two) are inserted as arrays and PostgreSQL does not parse and plan them again at
/// every write.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $rows:expr) => {{
        let rows = $rows;
        if let Ok(rows) = <&[_; 1]>::try_from(rows) {
            diesel::insert_into($table).values(rows).execute($c)
        } else if let Ok(rows) = <&[_; 2]>::try_from(rows) {
            diesel::insert_into($table).values(rows).execute($c)
        } else if let Ok(rows) = <&[_; 3]>::try_from(rows) {
            diesel::insert_into($table).values(rows).execute($c)
        } else if let Ok(rows) = <&[_; 4]>::try_from(rows) {
            diesel::insert_into($table).values(rows).execute($c)
        } else {
            diesel::insert_into($table).values(rows).execute($c)
        }
    }};
}

/// Makes `$ty` (a `QueryFragment<Pg>` whose text never changes, whatever its bound values) a
/// statement Diesel runs on PostgreSQL and keeps prepared by its text: no static query id (the
/// cache keys on the text), rows read by name.
macro_rules! kept_statement {
    ($ty:ident) => {
        impl diesel::query_builder::QueryId for $ty<'_> {
            type QueryId = ();
            const HAS_STATIC_QUERY_ID: bool = false;
        }

        impl diesel::query_builder::Query for $ty<'_> {
            type SqlType = diesel::sql_types::Untyped;
        }

        impl diesel::RunQueryDsl<diesel::PgConnection> for $ty<'_> {}
    };
}

mod account;
mod blend;
mod connection;
mod cupping;
mod due_diligence;
mod error;
mod event;
mod green;
mod green_row;
mod held_writes;
mod id_set;
mod item_cache;
pub mod libpq;
mod listing;
mod location;
mod lock;
mod lot_source;
mod migrate;
mod newest_first;
mod order;
mod physical;
mod plan;
mod product;
mod profile;
mod project;
mod rate_limit;
mod references;
mod roast;
mod row;
mod schema;
mod sqlite_reader;
mod statements;
mod store;
mod submission;
mod system;
mod time;
mod trace;

pub use connection::{
    AnyConnection, Backend, DatabaseUrl, PoolOptions, default_application_name, redact,
};
pub use rate_limit::PgRateLimit;
pub use store::{DieselStore, DieselTx};
