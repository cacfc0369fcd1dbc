//! EUDR due diligence of source green lots: one row per lot holding the domain's JSON document
//! (plots with every coordinate's digits as sent), replaced whole by each `setDueDiligence`.
//!
//! A write reaches here with the green lot's row already locked (it loads the lot first), so
//! replacing the row needs no lock of its own.

use chrono::NaiveDateTime;
use std::borrow::Cow;
use std::sync::LazyLock;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamp};
use roastery_domain::due_diligence::{ANSWER_DOCUMENT_MAX, DueDiligence, SourceLot, is_source};
use roastery_domain::ledger::{Direction, Reference};
use roastery_domain::stock::{LotKind, number};
use roastery_ports::repo::{DueDiligenceRepo, SizedSource, StoreResult};
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::id_set::IDS;
use crate::product::CHUNK;
use crate::row::uuid;
use crate::schema::green_lot_due_diligence;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};
use crate::trace::{LOT_TABLES, OneIdStatement, reached_sql};

#[derive(Queryable, Insertable)]
#[diesel(table_name = green_lot_due_diligence)]
struct DueDiligenceRow {
    green_lot_id: String,
    document: String,
    statement_count: i32,
    updated_date: NaiveDateTime,
}

#[derive(QueryableByName)]
struct SourceRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    origin_id: String,
    #[diesel(sql_type = BigInt)]
    lot_number: i64,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    openings: i64,
}

/// A green lot with the size of its due diligence and, within the read's bound, the document.
#[derive(QueryableByName)]
struct SizedSourceRow {
    #[diesel(embed)]
    lot: SourceRow,
    #[diesel(sql_type = Nullable<BigInt>)]
    size: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    document: Option<String>,
    #[diesel(sql_type = Nullable<Timestamp>)]
    updated_date: Option<NaiveDateTime>,
}

/// The columns of [`SourceRow`], of the green lots `g`.
const SOURCE_COLUMNS: &str = "g.id, g.origin_id, g.lot_number, g.name, \
     CAST((SELECT COUNT(*) FROM ledger_entries e \
            WHERE e.lot_id = g.id AND e.kind = 'OPENING') AS BIGINT) AS openings";

/// The lot of `row` when it is a source lot.
fn source_lot(row: SourceRow) -> StoreResult<Option<SourceLot>> {
    let id = uuid("green lot", &row.id)?;
    if !is_source(id, uuid("green lot", &row.origin_id)?, row.openings > 0) {
        return Ok(None);
    }
    Ok(Some(SourceLot {
        id,
        lot_number: number(LotKind::Green.prefix(), row.lot_number),
        number: row.lot_number,
        name: row.name,
    }))
}

#[derive(QueryableByName)]
struct SizeRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = BigInt)]
    size: i64,
}

impl DueDiligenceRepo for DieselTx {
    fn put_due_diligence(&mut self, lot_id: Uuid, due_diligence: &DueDiligence) -> StoreResult<()> {
        let row = DueDiligenceRow {
            green_lot_id: lot_id.to_string(),
            document: due_diligence
                .to_document()
                .map_err(|e| corrupt("due diligence", e))?,
            statement_count: i32::try_from(due_diligence.statements.len())
                .map_err(|e| corrupt("due diligence", e))?,
            updated_date: to_db(due_diligence.updated_date),
        };
        on_backend!(self.conn()?, |c| diesel::delete(
            green_lot_due_diligence::table.find(&row.green_lot_id)
        )
        .execute(c))
        .store()?;
        on_backend!(self.conn()?, |c| diesel::insert_into(
            green_lot_due_diligence::table
        )
        .values(&row)
        .execute(c))
        .store()?;
        Ok(())
    }

    fn due_diligence_of(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, DueDiligence)>> {
        let mut found = Vec::new();
        for chunk in lot_ids.chunks(CHUNK) {
            let ids: Vec<String> = chunk.iter().map(Uuid::to_string).collect();
            let rows: Vec<DueDiligenceRow> = green_lot_due_diligence::table
                .filter(green_lot_due_diligence::green_lot_id.eq_any(&ids))
                .load(self.conn()?)
                .store()?;
            for r in rows {
                let d = DueDiligence::from_document(&r.document, from_db(r.updated_date))
                    .map_err(|e| corrupt("due diligence", e))?;
                found.push((uuid("due diligence", &r.green_lot_id)?, d));
            }
        }
        Ok(found)
    }

    fn due_diligence_sizes(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, u64)>> {
        let mut found = Vec::new();
        for chunk in lot_ids.chunks(1000) {
            let rows: Vec<SizeRow> = self.load_for_ids(
                "SELECT green_lot_id AS id, CAST(LENGTH(document) AS BIGINT) AS size \
                   FROM green_lot_due_diligence WHERE green_lot_id {ids}",
                chunk,
            )?;
            for r in rows {
                found.push((
                    uuid("due diligence", &r.id)?,
                    u64::try_from(r.size).unwrap_or(0),
                ));
            }
        }
        Ok(found)
    }

    fn source_green_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<SourceLot>> {
        let mut found = Vec::new();
        for chunk in lot_ids.chunks(1000) {
            let rows: Vec<SourceRow> = self.load_for_ids(
                &format!("SELECT {SOURCE_COLUMNS} FROM green_lots g WHERE g.id {IDS}"),
                chunk,
            )?;
            for r in rows {
                found.extend(source_lot(r)?);
            }
        }
        Ok(found)
    }

    fn sized_source_green_lots(
        &mut self,
        lot_ids: &[Uuid],
        read_up_to: u64,
    ) -> StoreResult<Vec<SizedSource>> {
        // The documents come with the lots when those of every asked lot fit the bound
        // together (a superset of the sources': nothing past the bound is read). Only for ids
        // asked in one chunk, so the bound written into the text takes one of few values and
        // the statement stays kept; past a chunk the caller reads the documents itself.
        let budget = if lot_ids.len() <= 1000 {
            budget(read_up_to)
        } else {
            0
        };
        let mut found = Vec::new();
        for chunk in lot_ids.chunks(1000) {
            let rows: Vec<SizedSourceRow> =
                self.load_for_ids(&sized_sources_sql(budget, &format!("g.id {IDS}")), chunk)?;
            found.extend(sized_sources(rows)?);
        }
        Ok(found)
    }

    // One statement: the upstream trace, its green lots and the starts that are green lots,
    // their due diligence. On PostgreSQL one round trip, one snapshot without a transaction.
    fn upstream_sources(
        &mut self,
        starts: &[Reference],
        read_up_to: u64,
    ) -> StoreResult<Vec<SizedSource>> {
        if starts.is_empty() {
            return Ok(Vec::new());
        }
        let bound = budget(read_up_to);
        let ids: Vec<Uuid> = starts.iter().map(|start| start.id()).collect();
        if let (AnyConnection::Postgresql(c), [id]) = (self.conn()?, ids.as_slice()) {
            let rows: Vec<SizedSourceRow> = OneIdStatement {
                sql: upstream_sources_text(Form::OneId, bound),
                id: id.to_string(),
            }
            .load(c)
            .store()?;
            return sized_sources(rows);
        }
        let form = match self.conn()? {
            AnyConnection::Postgresql(_) => Form::Ids,
            AnyConnection::Sqlite(_) => Form::Json,
        };
        let rows: Vec<SizedSourceRow> =
            self.load_for_ids(&upstream_sources_text(form, bound), &ids)?;
        sized_sources(rows)
    }
}

/// `read_up_to` as the bound written into a statement.
fn budget(read_up_to: u64) -> i64 {
    i64::try_from(read_up_to).unwrap_or(i64::MAX)
}

/// The green lots `g` that `filter` keeps, as [`SizedSourceRow`]s: each with the size of its due
/// diligence and, when the documents of all of them fit `budget` characters together, the
/// document.
fn sized_sources_sql(budget: i64, filter: &str) -> String {
    format!(
        "SELECT {SOURCE_COLUMNS}, \
                CAST(LENGTH(d.document) AS BIGINT) AS size, \
                CASE WHEN SUM(LENGTH(d.document)) OVER () <= {budget} \
                     THEN d.document END AS document, \
                d.updated_date \
           FROM green_lots g \
           LEFT JOIN green_lot_due_diligence d ON d.green_lot_id = g.id \
          WHERE {filter}"
    )
}

/// How a statement of [`upstream_sources_sql`] names its starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// SQLite: [`IDS`], a bound JSON array.
    Json,
    /// PostgreSQL: [`IDS`], a bound array.
    Ids,
    /// PostgreSQL, one start: `$1`, looked up by primary key, so that PostgreSQL keeps a
    /// generic plan (over an array it plans at every call: a custom plan looks cheaper).
    OneId,
}

/// [`sized_sources_sql`] of the green lots among the starts and upstream of them.
fn upstream_sources_sql(form: Form, bound: i64) -> String {
    let (postgres, start, starts) = match form {
        Form::Json => (false, String::new(), IDS),
        Form::Ids => (true, String::new(), IDS),
        // The start looked up by primary key in each table that may hold it: one row whatever
        // the id, for the planner too, so a generic plan costs what one made for the id does.
        Form::OneId => {
            let lookups = std::iter::once("orders")
                .chain(LOT_TABLES.map(|(_, table)| table))
                .map(|table| format!("SELECT id FROM {table} WHERE id = $1"))
                .collect::<Vec<_>>()
                .join(" UNION ALL ");
            (
                true,
                format!("start (id) AS ({lookups}), "),
                "IN (SELECT id FROM start)",
            )
        }
    };
    let reached = reached_sql(postgres, starts, Direction::Upstream);
    let green = LotKind::Green.reference_type();
    format!(
        "WITH RECURSIVE {start}{reached}, \
         green (id) AS ( \
             SELECT from_id FROM reached WHERE from_type = '{green}' \
             UNION SELECT id FROM green_lots WHERE id {starts} \
         ) {}",
        sized_sources_sql(bound, "g.id IN (SELECT id FROM green)")
    )
}

/// [`upstream_sources_sql`], written once for the bounds a report reads with.
fn upstream_sources_text(form: Form, bound: i64) -> Cow<'static, str> {
    static KEPT: LazyLock<Vec<(Form, i64, String)>> = LazyLock::new(|| {
        let bounds = [budget(ANSWER_DOCUMENT_MAX), i64::MAX];
        [Form::Json, Form::Ids, Form::OneId]
            .into_iter()
            .flat_map(|form| bounds.map(|b| (form, b, upstream_sources_sql(form, b))))
            .collect()
    });
    KEPT.iter()
        .find(|(f, b, _)| *f == form && *b == bound)
        .map_or_else(
            || Cow::Owned(upstream_sources_sql(form, bound)),
            |(_, _, sql)| Cow::Borrowed(sql.as_str()),
        )
}

/// The source lots among `rows`, with what was read of their due diligence.
fn sized_sources(rows: Vec<SizedSourceRow>) -> StoreResult<Vec<SizedSource>> {
    let mut found = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(lot) = source_lot(r.lot)? else {
            continue;
        };
        let due_diligence = match (r.document, r.updated_date) {
            (Some(document), Some(updated)) => Some(
                DueDiligence::from_document(&document, from_db(updated))
                    .map_err(|e| corrupt("due diligence", e))?,
            ),
            _ => None,
        };
        found.push(SizedSource {
            lot,
            size: r.size.map(|n| u64::try_from(n).unwrap_or(0)),
            due_diligence,
        });
    }
    Ok(found)
}
