//! The ledger (append-only: rows are inserted and read, never updated or deleted; triggers refuse
//! both) and the genealogy of lots.
//!
//! A trace is one recursive query over the edges of the genealogy: transfers (ledger
//! `TRANSFER_OUT` entries, merges included), roast and blend sources (which cover lots older than
//! the ledger too) and shipments. `UNION` (not `UNION ALL`) in the recursive part drops edges
//! already reached, so weight moved back and forth between two lots cannot loop.
//!
//! On PostgreSQL everything a trace shows (that query, the lots, locations, orders and cuppings
//! it reaches) is one statement answering one row of JSON ([`trace_parts_sql`]): one round trip,
//! one snapshot with no transaction. SQLite, in process, reads the parts one query each inside
//! one read transaction.
//!
//! Raw SQL here interpolates only ids that are [`Uuid`] values (hex digits and dashes) and fixed
//! words, so nothing a client sends reaches the statement text; the trace's lot id is a bind
//! parameter.

use chrono::NaiveDateTime;
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use diesel::connection::TransactionManager;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Integer, Nullable, Text, Timestamp, Untyped};
use roastery_domain::cupping::{Cupping, CuppingState};
use roastery_domain::ledger::{Direction, Edge, EdgeKind, EntryKind, LedgerEntry, Reference};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::repo::*;
use roastery_ports::view::LocationRef;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::held_writes::HeldWrite;
use crate::id_set::IDS;
use crate::order::{ItemRow, OrderRow, ShipmentRow};
use crate::product::CHUNK;
use crate::row::uuid;
use crate::schema::ledger_entries;
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

type Tm = <AnyConnection as Connection>::TransactionManager;

#[derive(Queryable, QueryableByName, Insertable)]
#[diesel(table_name = ledger_entries)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct EntryRow {
    pub(crate) id: String,
    pub(crate) lot_id: String,
    pub(crate) lot_type: String,
    pub(crate) kind: String,
    pub(crate) delta_micros: i64,
    pub(crate) weight_after_micros: i64,
    pub(crate) unit: String,
    pub(crate) reference_id: Option<String>,
    pub(crate) reference_type: Option<String>,
    pub(crate) operation: String,
    pub(crate) client_id: String,
    #[diesel(deserialize_as = StoredInstant)]
    pub(crate) created_date: NaiveDateTime,
}

/// The ledger entries of the lots, or naming them as the other side of a movement. Both columns
/// are indexed (`lot_id` first in `ledger_entries_lot_newest`): one index search per id on each
/// database (PostgreSQL's `BitmapOr`, SQLite's multi-index `OR`).
const ENTRIES_TOUCHING: &str = "SELECT id, lot_id, lot_type, kind, delta_micros, \
     weight_after_micros, unit, reference_id, reference_type, operation, client_id, created_date \
     FROM ledger_entries WHERE lot_id {ids} OR reference_id {ids}";

/// The orders that shipped from the lots, oldest first.
const ORDERS_SHIPPED_FROM: &str = "SELECT id, external_id, order_date, customer, customer_type, \
     status, created_at, updated_at, shipped_date FROM orders \
     WHERE id IN (SELECT order_id FROM shipments WHERE lot_id {ids}) ORDER BY order_date, id";

fn entry_row(e: &LedgerEntry) -> EntryRow {
    EntryRow {
        id: e.id.to_string(),
        lot_id: e.lot.id.to_string(),
        lot_type: e.lot.kind.reference_type().to_owned(),
        kind: e.kind.as_str().to_owned(),
        delta_micros: e.delta_micros,
        weight_after_micros: e.weight_after.micros(),
        unit: e.unit().as_str().to_owned(),
        reference_id: e.reference.map(|r| r.id().to_string()),
        reference_type: e.reference.map(|r| r.type_name().to_owned()),
        operation: e.operation.clone(),
        client_id: e.client_id.clone(),
        created_date: to_db(e.created_date),
    }
}

fn lot_ref(id: &str, lot_type: &str) -> StoreResult<TypedLotRef> {
    TypedLotRef::parse(uuid("lot", id)?, lot_type).map_err(|e| corrupt("lot reference", e.0))
}

fn unit(code: &str) -> StoreResult<WeightUnit> {
    WeightUnit::parse(code).map_err(|e| corrupt("weight unit", e))
}

fn entry(row: EntryRow) -> StoreResult<LedgerEntry> {
    let reference = match (&row.reference_id, &row.reference_type) {
        (Some(id), Some(t)) => Some(
            Reference::parse(uuid("ledger entry", id)?, t)
                .ok_or_else(|| corrupt("ledger entry", t))?,
        ),
        _ => None,
    };
    Ok(LedgerEntry {
        id: uuid("ledger entry", &row.id)?,
        lot: lot_ref(&row.lot_id, &row.lot_type)?,
        kind: EntryKind::parse(&row.kind).ok_or_else(|| corrupt("ledger entry", &row.kind))?,
        delta_micros: row.delta_micros,
        weight_after: Weight::from_micros(row.weight_after_micros, unit(&row.unit)?)
            .map_err(|e| corrupt("ledger entry", e))?,
        reference,
        operation: row.operation,
        client_id: row.client_id,
        created_date: from_db(row.created_date),
    })
}

/// Also read from JSON (a trace's one statement on PostgreSQL), like [`crate::order::OrderRow`].
#[derive(QueryableByName, serde::Deserialize)]
struct EdgeRow {
    #[diesel(sql_type = Text)]
    from_id: String,
    #[diesel(sql_type = Text)]
    from_type: String,
    #[diesel(sql_type = Text)]
    to_id: String,
    #[diesel(sql_type = Text)]
    to_type: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = BigInt)]
    weight_micros: i64,
    #[diesel(sql_type = Text)]
    weight_unit: String,
    #[diesel(sql_type = Timestamp)]
    at: NaiveDateTime,
}

#[derive(QueryableByName, serde::Deserialize)]
struct LotRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    lot_type: String,
    #[diesel(sql_type = BigInt)]
    lot_number: i64,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    weight_micros: i64,
    #[diesel(sql_type = Text)]
    weight_unit: String,
    #[diesel(sql_type = Nullable<Text>)]
    location_id: Option<String>,
    #[diesel(sql_type = Nullable<Timestamp>)]
    consumed_at: Option<NaiveDateTime>,
}

#[derive(QueryableByName)]
struct AuditRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    lot_type: String,
    #[diesel(sql_type = BigInt)]
    lot_number: i64,
    #[diesel(sql_type = BigInt)]
    weight_micros: i64,
    #[diesel(sql_type = Text)]
    weight_unit: String,
    #[diesel(sql_type = Integer)]
    consumed: i32,
    #[diesel(sql_type = BigInt)]
    ledger_micros: i64,
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = Text)]
    id: String,
}

/// One kind of edge of the genealogy: the columns (from, to, kind, weight, date, key) of the table
/// it is stored in, and the columns its two ends are found by.
struct EdgeSource {
    /// The edge's columns, in the order of `reached`.
    columns: &'static str,
    /// The table (and the join giving the edge's date).
    tables: &'static str,
    /// A condition the rows must meet besides the end they are looked up by, if any.
    only: Option<&'static str>,
    from: &'static str,
    to: &'static str,
    /// What the edge's two ends are: a trace steps onto an edge only from an end of that kind,
    /// so each reached edge is looked up in the sources it can continue in, not in all four.
    from_is: End,
    to_is: End,
}

/// What one end of a kind of edge always is.
#[derive(Clone, Copy)]
enum End {
    /// A lot of this type (`TypedLotRef` type names).
    Lot(&'static str),
    /// A lot of any type, never an order.
    AnyLot,
    Order,
}

impl End {
    /// The condition that `column`, the type of a reached end, is this kind of end.
    fn condition(self, column: &str) -> String {
        match self {
            End::Lot(lot_type) => format!("{column} = '{lot_type}'"),
            End::AnyLot => format!("{column} <> 'ORDER'"),
            End::Order => format!("{column} = 'ORDER'"),
        }
    }
}

/// Transfers (ledger `TRANSFER_OUT` entries, merges included), roast and blend sources (which
/// cover lots older than the ledger too) and shipments. Each is looked up by an indexed column.
const EDGE_SOURCES: [EdgeSource; 4] = [
    EdgeSource {
        columns: "e.lot_id, e.lot_type, e.reference_id, e.reference_type, 'TRANSFER', \
                  -e.delta_micros, e.unit, e.created_date, e.id",
        tables: "ledger_entries e",
        only: Some("e.kind = 'TRANSFER_OUT'"),
        from: "e.lot_id",
        to: "e.reference_id",
        from_is: End::AnyLot,
        to_is: End::AnyLot,
    },
    EdgeSource {
        columns: "s.green_lot_id, 'INVENTORY_GREEN', s.roasted_lot_id, 'INVENTORY_ROAST', \
                  'ROAST', s.used_micros, s.used_unit, rl.roasted_date, \
                  s.roasted_lot_id || '/' || CAST(s.position AS TEXT)",
        tables: "roast_sources s JOIN roasted_lots rl ON rl.id = s.roasted_lot_id",
        only: None,
        from: "s.green_lot_id",
        to: "s.roasted_lot_id",
        from_is: End::Lot("INVENTORY_GREEN"),
        to_is: End::Lot("INVENTORY_ROAST"),
    },
    EdgeSource {
        columns: "s.roasted_lot_id, 'INVENTORY_ROAST', s.blended_lot_id, 'INVENTORY_BLEND', \
                  'BLEND', s.used_micros, s.used_unit, bl.blended_date, \
                  s.blended_lot_id || '/' || CAST(s.position AS TEXT)",
        tables: "blend_sources s JOIN blended_lots bl ON bl.id = s.blended_lot_id",
        only: None,
        from: "s.roasted_lot_id",
        to: "s.blended_lot_id",
        from_is: End::Lot("INVENTORY_ROAST"),
        to_is: End::Lot("INVENTORY_BLEND"),
    },
    EdgeSource {
        columns: "sh.lot_id, sh.lot_type, sh.order_id, 'ORDER', 'SHIPMENT', sh.weight_micros, \
                  sh.weight_unit, sh.shipped_date, sh.order_id || '/' || CAST(sh.position AS TEXT)",
        tables: "shipments sh",
        only: None,
        from: "sh.lot_id",
        to: "sh.order_id",
        from_is: End::AnyLot,
        to_is: End::Order,
    },
];

impl EdgeSource {
    /// The column of this edge that a trace in `direction` reaches it by.
    fn near(&self, direction: Direction) -> &'static str {
        match direction {
            Direction::Downstream => self.from,
            Direction::Upstream => self.to,
        }
    }

    /// What the end of this edge that a trace in `direction` reaches it by always is.
    fn near_is(&self, direction: Direction) -> End {
        match direction {
            Direction::Downstream => self.from_is,
            Direction::Upstream => self.to_is,
        }
    }

    /// The edges whose near end meets `key` (`= 'id'`, `IN ('id', …)`, or `= ` a column of
    /// `reached` when `from` names it too), where `only` holds too, if given.
    fn at(&self, direction: Direction, from: &str, key: &str, only: Option<&str>) -> String {
        let (columns, tables, near) = (self.columns, self.tables, self.near(direction));
        let near_key = format!("{near} {key}");
        let conditions = [self.only, only, Some(near_key.as_str())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" AND ");
        format!("SELECT {columns} FROM {from}{tables} WHERE {conditions}")
    }
}

/// The recursive query of a trace from its starts: the edges at the starts, then, level by level,
/// the edges at the far end of those reached. Every step looks each kind of edge up by its
/// index, so the cost follows the size of the answer, not of the whole genealogy. PostgreSQL
/// allows one reference to the recursive relation (hence `LATERAL`), SQLite no `LATERAL` but
/// several recursive selects.
/// The trace from several starts at once (lots or orders: ids are unique across tables), whose
/// ids are [`IDS`]: the same text for any starts, written once per backend and direction.
fn trace_from_sql(postgres: bool, direction: Direction) -> &'static str {
    fn write(postgres: bool, direction: Direction) -> String {
        let reached = reached_sql(postgres, IDS, direction);
        format!(
            "WITH RECURSIVE {reached} \
             SELECT from_id, from_type, to_id, to_type, kind, weight_micros, weight_unit, at \
               FROM reached ORDER BY at, edge_key"
        )
    }
    static SQLITE_DOWN: LazyLock<String> = LazyLock::new(|| write(false, Direction::Downstream));
    static SQLITE_UP: LazyLock<String> = LazyLock::new(|| write(false, Direction::Upstream));
    static PG_DOWN: LazyLock<String> = LazyLock::new(|| write(true, Direction::Downstream));
    static PG_UP: LazyLock<String> = LazyLock::new(|| write(true, Direction::Upstream));
    match (postgres, direction) {
        (false, Direction::Downstream) => &SQLITE_DOWN,
        (false, Direction::Upstream) => &SQLITE_UP,
        (true, Direction::Downstream) => &PG_DOWN,
        (true, Direction::Upstream) => &PG_UP,
    }
}

/// The recursive relation `reached` of the edges of a trace from the lots or orders whose id
/// meets `starts` (`IN (...)`), for a `WITH RECURSIVE` clause.
pub(crate) fn reached_sql(postgres: bool, starts: &str, direction: Direction) -> String {
    let (far, far_type) = match direction {
        Direction::Downstream => ("r.to_id", "r.to_type"),
        Direction::Upstream => ("r.from_id", "r.from_type"),
    };
    // On PostgreSQL a step looks a reached end up only in the sources whose near end is of its
    // kind: the condition names only the outer row, a one-time filter checked before the
    // source's index is probed at all. SQLite is not given it: there the same condition made
    // traces and reports about a fifth slower (its planner weighs the join differently).
    let each = |from: &str, key: &str, step: bool, union: &str| {
        EDGE_SOURCES
            .iter()
            .map(|source| {
                let kind = step.then(|| source.near_is(direction).condition(far_type));
                source.at(direction, from, key, kind.as_deref())
            })
            .collect::<Vec<_>>()
            .join(union)
    };
    let first = each("", starts, false, " UNION ALL ");
    let next = if postgres {
        format!(
            "SELECT x.* FROM reached r CROSS JOIN LATERAL ({}) x",
            each("", &format!("= {far}"), true, " UNION ALL ")
        )
    } else {
        each("reached r, ", &format!("= {far}"), false, " UNION ")
    };
    format!(
        "reached (from_id, from_type, to_id, to_type, kind, weight_micros, weight_unit, at, \
                  edge_key) AS ( \
             {first} UNION {next} \
         )"
    )
}

/// The three lot tables: the kind of their lots and the table's name.
pub(crate) const LOT_TABLES: [(LotKind, &str); 3] = [
    (LotKind::Green, "green_lots"),
    (LotKind::Roasted, "roasted_lots"),
    (LotKind::Blended, "blended_lots"),
];

/// Everything a trace from the lot `$1` shows, in one PostgreSQL statement: one row whose
/// columns are the start lot's type (NULL: no lot has this id) and JSON arrays (NULL: none) of
/// the reached edges (in the order of [`trace_sql`]), the stored lots at their ends (with the
/// columns of [`LotRow`]), those lots' locations, the orders shipped from them (with items and
/// shipments, by order date) and their cupped coffees. Timestamps come as JSON writes them:
/// ISO 8601 to the microsecond, all a timestamp column keeps, whatever `DateStyle` says.
fn trace_parts_sql(direction: Direction) -> String {
    let starts = LOT_TABLES
        .iter()
        .enumerate()
        .map(|(pick, (kind, table))| {
            format!(
                "SELECT id, '{t}' AS lot_type, {pick} AS pick FROM {table} WHERE id = $1",
                t = kind.reference_type()
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let lots = LOT_TABLES
        .iter()
        .map(|(kind, table)| {
            format!(
                "SELECT l.id, n.lot_type, l.lot_number, l.name, l.weight_micros, \
                        l.weight_unit, l.location_id, l.consumed_at \
                   FROM nodes n JOIN {table} l ON l.id = n.id WHERE n.lot_type = '{t}'",
                t = kind.reference_type()
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let reached = reached_sql(true, "IN (SELECT id FROM start)", direction);
    format!(
        "WITH RECURSIVE \
         start (id, lot_type) AS (SELECT id, lot_type FROM ({starts}) s ORDER BY pick LIMIT 1), \
         {reached}, \
         nodes (id, lot_type) AS ( \
             SELECT id, lot_type FROM start \
             UNION SELECT from_id, from_type FROM reached \
             UNION SELECT to_id, to_type FROM reached WHERE to_type <> 'ORDER' \
         ), \
         lots AS ({lots}) \
         SELECT (SELECT lot_type FROM start) AS start_type, \
           CAST((SELECT json_agg(r ORDER BY r.at, r.edge_key) FROM reached r) AS TEXT) AS edges, \
           CAST((SELECT json_agg(l) FROM lots l) AS TEXT) AS lots, \
           CAST((SELECT json_agg(json_build_object('id', loc.id, 'external_id', loc.external_id)) \
                   FROM locations loc WHERE loc.id IN (SELECT location_id FROM lots)) \
                AS TEXT) AS locations, \
           CAST((SELECT json_agg(json_build_object( \
                     'order', o, \
                     'items', (SELECT json_agg(i ORDER BY i.position) \
                                 FROM (SELECT order_id, position, sku, quantity \
                                         FROM order_items WHERE order_id = o.id) i), \
                     'shipments', (SELECT json_agg(s ORDER BY s.position) \
                                     FROM (SELECT order_id, position, sku, lot_id, lot_type, \
                                                  lot_number, quantity, weight_micros, \
                                                  weight_unit, shipped_date \
                                             FROM shipments WHERE order_id = o.id) s) \
                   ) ORDER BY o.order_date, o.id) \
                   FROM (SELECT id, external_id, order_date, customer, customer_type, status, \
                                created_at, updated_at, shipped_date \
                           FROM orders \
                          WHERE id IN (SELECT order_id FROM shipments \
                                        WHERE lot_id IN (SELECT id FROM lots))) o) \
                AS TEXT) AS orders, \
           CAST((SELECT json_agg(json_build_object( \
                     'id', c.id, 'cupping_number', c.cupping_number, 'state', c.state, \
                     'position', cc.position, 'lot_id', cc.lot_id, 'lot_type', cc.lot_type)) \
                   FROM cupped_coffees cc JOIN cuppings c ON c.id = cc.cupping_id \
                  WHERE cc.lot_id IN (SELECT id FROM lots)) \
                AS TEXT) AS cuppings"
    )
}

/// [`trace_parts_sql`] for `direction`, written once.
fn trace_parts_statement(direction: Direction) -> &'static str {
    static DOWNSTREAM: LazyLock<String> = LazyLock::new(|| trace_parts_sql(Direction::Downstream));
    static UPSTREAM: LazyLock<String> = LazyLock::new(|| trace_parts_sql(Direction::Upstream));
    match direction {
        Direction::Downstream => &DOWNSTREAM,
        Direction::Upstream => &UPSTREAM,
    }
}

/// A PostgreSQL statement with one id bound at each `$1` ([`trace_parts_sql`], a report's
/// sources from one start), which Diesel prepares once per connection and keeps: `sql_query` is
/// never kept, so PostgreSQL would parse and plan the whole recursive statement on every trace
/// (about 1 ms), while a kept one is planned for good once its plan no longer depends on the
/// id. (Over an array of ids it would: the planner sizes a bound array only when it sees it.)
pub(crate) struct OneIdStatement {
    pub(crate) sql: Cow<'static, str>,
    pub(crate) id: String,
}

impl QueryId for OneIdStatement {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for OneIdStatement {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for OneIdStatement {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut parts = self.sql.split("$1");
        if let Some(first) = parts.next() {
            out.push_sql(first);
        }
        for part in parts {
            out.push_bind_param::<Text, _>(&self.id)?;
            out.push_sql(part);
        }
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for OneIdStatement {}

/// The one row of [`trace_parts_sql`].
#[derive(QueryableByName)]
struct TracePartsRow {
    #[diesel(sql_type = Nullable<Text>)]
    start_type: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    edges: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    lots: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    locations: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    orders: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    cuppings: Option<String>,
}

#[derive(serde::Deserialize)]
struct LocationJson {
    id: String,
    external_id: Option<String>,
}

#[derive(serde::Deserialize)]
struct OrderJson {
    order: OrderRow,
    items: Option<Vec<ItemRow>>,
    shipments: Option<Vec<ShipmentRow>>,
}

#[derive(serde::Deserialize)]
struct CuppedJson {
    id: String,
    cupping_number: i64,
    state: String,
    position: i32,
    lot_id: String,
    lot_type: String,
}

/// The rows of a JSON array column (NULL: none).
fn json_rows<T: serde::de::DeserializeOwned>(
    what: &str,
    json: Option<String>,
) -> StoreResult<Vec<T>> {
    json.map_or(Ok(Vec::new()), |json| {
        serde_json::from_str(&json).map_err(|e| corrupt(what, e))
    })
}

fn trace_parts_of(lot_id: Uuid, row: TracePartsRow) -> StoreResult<Option<TraceParts>> {
    let Some(start_type) = row.start_type else {
        return Ok(None);
    };
    let edges = json_rows::<EdgeRow>("edge", row.edges)?
        .into_iter()
        .map(edge)
        .collect::<StoreResult<_>>()?;
    let lots = json_rows::<LotRow>("lot", row.lots)?
        .into_iter()
        .map(traced_lot)
        .collect::<StoreResult<_>>()?;
    let locations = json_rows::<LocationJson>("location", row.locations)?
        .into_iter()
        .map(|l| {
            Ok(LocationRef {
                id: uuid("location", &l.id)?,
                external_id: l.external_id,
            })
        })
        .collect::<StoreResult<_>>()?;
    let orders = json_rows::<OrderJson>("order", row.orders)?
        .into_iter()
        .map(|o| {
            let items = o.items.unwrap_or_default();
            crate::order::order(o.order, items, o.shipments.unwrap_or_default())
        })
        .collect::<StoreResult<_>>()?;
    let mut cupped = json_rows::<CuppedJson>("cupped coffee", row.cuppings)?
        .into_iter()
        .map(|c| {
            let cupping = TracedCupping {
                id: uuid("cupping", &c.id)?,
                number: c.cupping_number,
                state: CuppingState::parse(&c.state).map_err(|e| corrupt("cupping", e))?,
                cupped_lot: lot_ref(&c.lot_id, &c.lot_type)?,
            };
            Ok((c.position, cupping))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    // By id as the other stores order them (a UUID's order, not the text collation's).
    cupped.sort_by_key(|(position, c)| (c.id, *position));
    Ok(Some(TraceParts {
        start: lot_ref(&lot_id.to_string(), &start_type)?,
        edges,
        lots,
        locations,
        orders,
        cuppings: cupped.into_iter().map(|(_, c)| c).collect(),
    }))
}

fn traced_lot(r: LotRow) -> StoreResult<TracedLot> {
    Ok(TracedLot {
        lot: lot_ref(&r.id, &r.lot_type)?,
        lot_number: r.lot_number,
        name: r.name,
        weight: Weight::from_micros(r.weight_micros, unit(&r.weight_unit)?)
            .map_err(|e| corrupt("lot", e))?,
        location_id: r
            .location_id
            .as_deref()
            .map(|l| uuid("lot", l))
            .transpose()?,
        consumed_at: r.consumed_at.map(from_db),
    })
}

fn edge(r: EdgeRow) -> StoreResult<Edge> {
    Ok(Edge {
        from: lot_ref(&r.from_id, &r.from_type)?,
        to: Reference::parse(uuid("edge", &r.to_id)?, &r.to_type)
            .ok_or_else(|| corrupt("edge", &r.to_type))?,
        kind: EdgeKind::parse(&r.kind).ok_or_else(|| corrupt("edge", &r.kind))?,
        weight: Weight::from_micros(r.weight_micros, unit(&r.weight_unit)?)
            .map_err(|e| corrupt("edge", e))?,
        date: from_db(r.at),
    })
}

impl DieselTx {
    pub(crate) fn load_sql<T>(&mut self, sql: String) -> StoreResult<Vec<T>>
    where
        T: QueryableByName<diesel::pg::Pg> + QueryableByName<diesel::sqlite::Sqlite> + 'static,
    {
        on_backend!(self.conn()?, |c| diesel::sql_query(sql.clone())
            .load::<T>(c))
        .store()
    }
}

impl TraceRepo for DieselTx {
    fn insert_ledger_entries(&mut self, entries: &[LedgerEntry]) -> StoreResult<()> {
        let rows: Vec<EntryRow> = entries.iter().map(entry_row).collect();
        if self.holds(rows.len()) {
            return self.hold(HeldWrite::Ledger(rows));
        }
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| insert_rows!(
                c,
                ledger_entries::table,
                chunk
            ))
            .store()?;
        }
        Ok(())
    }

    fn list_ledger_entries(
        &mut self,
        filter: &LedgerFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<LedgerEntry>> {
        let mut query = ledger_entries::table.into_boxed();
        if let Some(lot_id) = filter.lot_id {
            query = query.filter(ledger_entries::lot_id.eq(lot_id.to_string()));
        }
        if let Some(from) = filter.from {
            query = query.filter(ledger_entries::created_date.ge(to_db(from)));
        }
        if let Some(to) = filter.to {
            query = query.filter(ledger_entries::created_date.lt(to_db(to)));
        }
        let rows: Vec<EntryRow> = newest_first!(
            query,
            page,
            ledger_entries::created_date,
            ledger_entries::id
        )
        .load(self.conn()?)
        .store()?;
        let entries = rows
            .into_iter()
            .map(entry)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(entries, page.limit, |e| {
            (e.created_date, e.id)
        }))
    }

    fn ledger_audit(&mut self) -> StoreResult<Vec<LotAudit>> {
        let sql = "\
            SELECT l.id, l.lot_type, l.lot_number, l.weight_micros, l.weight_unit, l.consumed, \
                   CAST(COALESCE(SUM(e.delta_micros), 0) AS BIGINT) AS ledger_micros \
              FROM (SELECT id, 'INVENTORY_GREEN' AS lot_type, lot_number, weight_micros, \
                           weight_unit, CASE WHEN consumed_at IS NULL THEN 0 ELSE 1 END AS consumed \
                      FROM green_lots \
                    UNION ALL \
                    SELECT id, 'INVENTORY_ROAST', lot_number, weight_micros, weight_unit, \
                           CASE WHEN consumed_at IS NULL THEN 0 ELSE 1 END FROM roasted_lots \
                    UNION ALL \
                    SELECT id, 'INVENTORY_BLEND', lot_number, weight_micros, weight_unit, \
                           CASE WHEN consumed_at IS NULL THEN 0 ELSE 1 END FROM blended_lots) l \
              LEFT JOIN ledger_entries e ON e.lot_id = l.id \
             GROUP BY l.id, l.lot_type, l.lot_number, l.weight_micros, l.weight_unit, l.consumed \
             ORDER BY l.lot_type, l.lot_number";
        let rows: Vec<AuditRow> = self.load_sql(sql.to_owned())?;
        rows.into_iter()
            .map(|r| {
                Ok(LotAudit {
                    lot: lot_ref(&r.id, &r.lot_type)?,
                    lot_number: r.lot_number,
                    weight: Weight::from_micros(r.weight_micros, unit(&r.weight_unit)?)
                        .map_err(|e| corrupt("lot", e))?,
                    consumed: r.consumed != 0,
                    ledger_micros: r.ledger_micros,
                })
            })
            .collect()
    }

    fn trace_edges(&mut self, start: TypedLotRef, direction: Direction) -> StoreResult<Vec<Edge>> {
        let postgres = matches!(self.conn()?, AnyConnection::Postgresql(_));
        let rows: Vec<EdgeRow> =
            self.load_for_ids(trace_from_sql(postgres, direction), &[start.id])?;
        rows.into_iter().map(edge).collect()
    }

    fn upstream_edges(&mut self, starts: &[Reference]) -> StoreResult<Vec<Edge>> {
        if starts.is_empty() {
            return Ok(Vec::new());
        }
        let postgres = matches!(self.conn()?, AnyConnection::Postgresql(_));
        let ids: Vec<Uuid> = starts.iter().map(|r| r.id()).collect();
        let rows: Vec<EdgeRow> =
            self.load_for_ids(trace_from_sql(postgres, Direction::Upstream), &ids)?;
        rows.into_iter().map(edge).collect()
    }

    fn ledger_entries_touching(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<LedgerEntry>> {
        if lot_ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<EntryRow> = self.load_for_ids(ENTRIES_TOUCHING, lot_ids)?;
        rows.into_iter().map(entry).collect()
    }

    fn traced_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<TracedLot>> {
        let mut found = Vec::with_capacity(lots.len());
        for chunk in lots.chunks(1000) {
            // Every table asked is given every id (ids are unique across tables), so the text
            // depends only on which tables are asked; a lot found under another kind than the
            // one asked for is not what was asked.
            let selects: Vec<String> = [
                (LotKind::Green, "green_lots"),
                (LotKind::Roasted, "roasted_lots"),
                (LotKind::Blended, "blended_lots"),
            ]
            .into_iter()
            .filter(|(kind, _)| chunk.iter().any(|l| l.kind == *kind))
            .map(|(kind, table)| {
                format!(
                    "SELECT id, '{t}' AS lot_type, lot_number, name, weight_micros, \
                     weight_unit, location_id, consumed_at FROM {table} WHERE id {IDS}",
                    t = kind.reference_type(),
                )
            })
            .collect();
            if selects.is_empty() {
                continue;
            }
            let ids: Vec<Uuid> = chunk.iter().map(|l| l.id).collect();
            let asked: HashSet<&TypedLotRef> = chunk.iter().collect();
            let rows: Vec<LotRow> = self.load_for_ids(&selects.join(" UNION ALL "), &ids)?;
            for r in rows {
                let lot = traced_lot(r)?;
                if asked.contains(&lot.lot) {
                    found.push(lot);
                }
            }
        }
        Ok(found)
    }

    fn orders_shipped_from(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Order>> {
        if lot_ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<OrderRow> = self.load_for_ids(ORDERS_SHIPPED_FROM, lot_ids)?;
        self.with_items(rows)
    }

    fn cuppings_of_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Cupping>> {
        let mut cupping_ids: Vec<Uuid> = Vec::new();
        for chunk in lot_ids.chunks(1000) {
            let rows: Vec<IdRow> = self.load_for_ids(
                "SELECT DISTINCT cupping_id AS id FROM cupped_coffees WHERE lot_id {ids}",
                chunk,
            )?;
            for r in rows {
                cupping_ids.push(uuid("cupping", &r.id)?);
            }
        }
        cupping_ids.sort();
        cupping_ids.dedup();
        let mut cuppings = Vec::new();
        for chunk in cupping_ids.chunks(100) {
            cuppings.extend(self.cuppings_by_ids(chunk)?);
        }
        Ok(cuppings)
    }

    fn trace_parts(
        &mut self,
        lot_id: Uuid,
        direction: Direction,
    ) -> StoreResult<Option<TraceParts>> {
        match self.conn()? {
            // One statement: one round trip, and one snapshot without a transaction.
            AnyConnection::Postgresql(c) => {
                let row: TracePartsRow = OneIdStatement {
                    sql: Cow::Borrowed(trace_parts_statement(direction)),
                    id: lot_id.to_string(),
                }
                .get_result(c)
                .store()?;
                trace_parts_of(lot_id, row)
            }
            // An embedded database costs no round trips: the parts are read one query each,
            // in one read transaction so that they agree.
            AnyConnection::Sqlite(_) => self.in_read_transaction(|tx| {
                roastery_ports::trace_parts::trace_parts_by_parts(tx, lot_id, direction)
            }),
        }
    }
}

impl DieselTx {
    /// Runs `work` in a read transaction of its own (a savepoint inside a unit of work's).
    fn in_read_transaction<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> StoreResult<T>,
    ) -> StoreResult<T> {
        Tm::begin_transaction(self.conn()?).store()?;
        match work(self) {
            Ok(value) => {
                Tm::commit_transaction(self.conn()?).store()?;
                Ok(value)
            }
            Err(err) => {
                // A failed rollback leaves the connection broken; it is then discarded.
                if let Err(rollback) = Tm::rollback_transaction(self.conn()?) {
                    tracing::warn!(error = %rollback, "rollback failed");
                }
                Err(err)
            }
        }
    }
}
