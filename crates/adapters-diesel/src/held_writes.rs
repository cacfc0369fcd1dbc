//! The last writes of a PostgreSQL write unit of work, held and sent together.
//!
//! A unit of work ends with writes nothing in it reads back: the lots it changed, their ledger
//! entries and the events of its changes. Each was a statement of its own, a round trip while
//! the unit of work holds its rows' locks; a hot lot's writers wait on those locks one after
//! another, so every round trip there is paid by each of them in turn. Such writes are held in
//! the transaction and sent as one statement (`WITH w0 AS (UPDATE …), w1 AS (INSERT …) …`)
//! just before the unit of work's next statement of any kind (`DieselTx::conn`) or its commit:
//! whatever runs after a held write still sees it, and an error of a held write still fails the
//! unit of work before it commits.
//!
//! Each write in the statement touches other rows (a lot held twice is sent before the second
//! write is held: PostgreSQL leaves the outcome of two updates of one row in one statement
//! unspecified), so the order in which PostgreSQL runs them does not matter. The statement's
//! text depends only on which writes it holds and how many rows each has; small ones, the
//! shapes of every hot path, are kept prepared by the connection like any other statement.

use chrono::NaiveDateTime;
use diesel::PgConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};
use roastery_ports::StoreError;
use roastery_ports::repo::StoreResult;

use crate::error::OrStoreError;
use crate::green_row::GreenLotChange;
use crate::store::DieselTx;
use crate::trace::EntryRow;

/// Most rows one held write may have; a larger one is sent at once, on its own.
pub(crate) const HELD_ROWS: usize = 16;
/// Most writes held at a time: the statement's text and binds stay small.
const HELD_WRITES: usize = 8;
/// Statements with more writes, or writes of more rows, are not kept prepared: their shapes are
/// those of bulk operations, too many to keep one each per connection.
const KEPT_WRITES: usize = 4;
const KEPT_ROWS: usize = 4;

/// An event to store, unnumbered (`event.rs`).
pub(crate) struct NewEvent {
    pub(crate) id: String,
    pub(crate) event_type: String,
    pub(crate) subject_id: String,
    pub(crate) subject_type: &'static str,
    pub(crate) operation: String,
    pub(crate) client_id: String,
    pub(crate) created_date: NaiveDateTime,
}

/// One write held until the unit of work's next statement.
pub(crate) enum HeldWrite {
    /// A green lot's row (`green.rs`), which must exist.
    GreenLot {
        change: Box<GreenLotChange>,
        item: Option<String>,
        id: String,
    },
    Ledger(Vec<EntryRow>),
    Events(Vec<NewEvent>),
}

impl HeldWrite {
    fn rows(&self) -> usize {
        match self {
            HeldWrite::GreenLot { .. } => 1,
            HeldWrite::Ledger(rows) => rows.len(),
            HeldWrite::Events(rows) => rows.len(),
        }
    }

    fn green_lot(&self) -> Option<&str> {
        match self {
            HeldWrite::GreenLot { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// The writes a unit of work holds, in the order it made them.
#[derive(Default)]
pub(crate) struct HeldWrites {
    writes: Vec<HeldWrite>,
}

impl HeldWrites {
    pub(crate) fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    pub(crate) fn take(&mut self) -> Vec<HeldWrite> {
        std::mem::take(&mut self.writes)
    }

    /// Whether `write` may join the writes held: not past the bound, and not a second write of
    /// a row held already.
    fn has_room_for(&self, write: &HeldWrite) -> bool {
        self.writes.len() < HELD_WRITES
            && match write.green_lot() {
                Some(id) => !self.writes.iter().any(|w| w.green_lot() == Some(id)),
                None => true,
            }
    }
}

impl DieselTx {
    /// Whether this unit of work holds writes of `rows` rows (a PostgreSQL write unit of work,
    /// and a write small enough); otherwise the write is sent at once.
    pub(crate) fn holds(&self, rows: usize) -> bool {
        self.held.is_some() && rows <= HELD_ROWS
    }

    /// Holds `write` until the unit of work's next statement or its commit; first sends the
    /// writes held when `write` may not join them.
    pub(crate) fn hold(&mut self, write: HeldWrite) -> StoreResult<()> {
        if write.rows() == 0 {
            // Nothing to write (a weight set to what it was has no ledger entry).
            return Ok(());
        }
        if self.held.as_ref().is_some_and(|h| !h.has_room_for(&write)) {
            self.send_held()?;
        }
        match self.held.as_mut() {
            Some(held) => {
                held.writes.push(write);
                Ok(())
            }
            None => Err(StoreError::Internal(
                "a write held outside a PostgreSQL write unit of work".into(),
            )),
        }
    }
}

/// Sends `writes` as one statement, and checks that each lot written was there.
pub(crate) fn send(c: &mut PgConnection, writes: &[HeldWrite]) -> StoreResult<()> {
    let sent: Sent = HeldStatement { writes }.get_result(c).store()?;
    let lots = writes.iter().filter_map(HeldWrite::green_lot);
    let expected = lots.clone().count();
    if sent.updated.len() != expected {
        return Err(StoreError::Internal(format!(
            "{} of {expected} held lot updates answered",
            sent.updated.len()
        )));
    }
    for (id, updated) in lots.zip(sent.updated) {
        if updated != 1 {
            return Err(StoreError::Internal(format!(
                "green lot {id} is not stored"
            )));
        }
    }
    Ok(())
}

/// Rows updated by each held lot update, in the order held.
#[derive(QueryableByName)]
struct Sent {
    #[diesel(sql_type = Array<BigInt>)]
    updated: Vec<i64>,
}

/// The held writes as one statement: each a data-modifying `WITH` query, which PostgreSQL runs
/// to completion whether or not the statement reads it; the statement answers how many rows
/// each lot update changed.
struct HeldStatement<'a> {
    writes: &'a [HeldWrite],
}

kept_statement!(HeldStatement);

impl QueryFragment<Pg> for HeldStatement<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let kept =
            self.writes.len() <= KEPT_WRITES && self.writes.iter().all(|w| w.rows() <= KEPT_ROWS);
        if !kept {
            out.unsafe_to_cache_prepared();
        }
        for (n, write) in self.writes.iter().enumerate() {
            out.push_sql(if n == 0 { "WITH " } else { ", " });
            out.push_sql(&format!("w{n} AS ("));
            match write {
                HeldWrite::GreenLot { change, item, id } => {
                    crate::green::push_green_lot_update(&mut out, change, item, id)?;
                    out.push_sql(" RETURNING 1");
                }
                HeldWrite::Ledger(rows) => push_ledger_insert(&mut out, rows)?,
                HeldWrite::Events(rows) => push_events_insert(&mut out, rows)?,
            }
            out.push_sql(")");
        }
        out.push_sql(" SELECT CAST(ARRAY[");
        let lots = self
            .writes
            .iter()
            .enumerate()
            .filter(|(_, w)| w.green_lot().is_some());
        for (i, (n, _)) in lots.enumerate() {
            if i > 0 {
                out.push_sql(", ");
            }
            out.push_sql(&format!("(SELECT COUNT(*) FROM w{n})"));
        }
        out.push_sql("] AS BIGINT[]) AS updated");
        Ok(())
    }
}

fn push_ledger_insert<'b>(out: &mut AstPass<'_, 'b, Pg>, rows: &'b [EntryRow]) -> QueryResult<()> {
    out.push_sql(
        "INSERT INTO ledger_entries (id, lot_id, lot_type, kind, delta_micros, \
         weight_after_micros, unit, reference_id, reference_type, operation, client_id, \
         created_date) VALUES ",
    );
    for (i, row) in rows.iter().enumerate() {
        // Every field named: a column added to the row and not written here is a compile error.
        let EntryRow {
            id,
            lot_id,
            lot_type,
            kind,
            delta_micros,
            weight_after_micros,
            unit,
            reference_id,
            reference_type,
            operation,
            client_id,
            created_date,
        } = row;
        out.push_sql(if i == 0 { "(" } else { ", (" });
        out.push_bind_param::<Text, _>(id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(lot_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(lot_type)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(kind)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(delta_micros)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(weight_after_micros)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(unit)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(reference_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(reference_type)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(operation)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(client_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(created_date)?;
        out.push_sql(")");
    }
    Ok(())
}

fn push_events_insert<'b>(out: &mut AstPass<'_, 'b, Pg>, rows: &'b [NewEvent]) -> QueryResult<()> {
    // Unnumbered; `writer_xid` is the column's default, the inserting transaction's id.
    out.push_sql(
        "INSERT INTO events (id, event_type, subject_id, subject_type, operation, client_id, \
         created_date) VALUES ",
    );
    for (i, row) in rows.iter().enumerate() {
        let NewEvent {
            id,
            event_type,
            subject_id,
            subject_type,
            operation,
            client_id,
            created_date,
        } = row;
        out.push_sql(if i == 0 { "(" } else { ", (" });
        out.push_bind_param::<Text, _>(id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(event_type)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(subject_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(*subject_type)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(operation)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(client_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(created_date)?;
        out.push_sql(")");
    }
    Ok(())
}
