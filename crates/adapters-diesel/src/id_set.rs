//! Raw statements over a set of ids, written so that their text does not depend on the ids.
//!
//! Such a statement names the set by [`IDS`] (`WHERE g.id {ids}`). On PostgreSQL that becomes
//! `= ANY($n)` with the ids bound as one text array: the text is the same for one id or a
//! thousand, so Diesel prepares the statement once per connection and keeps it, and PostgreSQL
//! stops parsing it at every call (a `sql_query` is never kept). PostgreSQL still plans these
//! statements at each execution: for one start or a few, a plan for the bound ids looks cheaper
//! to it than a generic one (`pg_prepared_statements` counts custom plans only), except in a
//! report's transaction (`Store::read_report`), which asks for the generic plan. A semi-join
//! (`IN (SELECT unnest($n))`) was tried and planned slower still; it is used where a generic
//! plan is kept, for listing items by ids ([`in_ids`]). On SQLite [`IDS`] becomes an `IN (...)`
//! list of the ids written out: SQLite prepares in process, in microseconds.
//!
//! Only [`Uuid`] values (hex digits and dashes) are ever written into a statement's text.

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Array, Bool, Text};
use diesel::sqlite::Sqlite;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::store::DieselTx;

/// Where a statement's text says "is one of the ids".
pub(crate) const IDS: &str = "{ids}";

/// `sql` with each [`IDS`] as `= ANY(…)` of the ids, bound.
struct KeptForIds<'a> {
    sql: &'a str,
    ids: Vec<String>,
}

kept_statement!(KeptForIds);

impl QueryFragment<Pg> for KeptForIds<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut parts = self.sql.split(IDS);
        if let Some(first) = parts.next() {
            out.push_sql(first);
        }
        for part in parts {
            out.push_sql("= ANY(");
            out.push_bind_param::<Array<Text>, _>(&self.ids)?;
            out.push_sql(")");
            out.push_sql(part);
        }
        Ok(())
    }
}

/// `column IN (SELECT unnest($n))` with the ids bound, as an expression of Diesel's query builder
/// (PostgreSQL only) in a typed query Diesel keeps (a `dsl::sql` fragment is never kept). For a
/// statement PostgreSQL keeps one generic plan of: there `= ANY($n)` of a bound array searches the
/// array linearly for every row a scan reads (a hundred ids over a small table: ten thousand
/// comparisons), while the semi-join probes a hash or an index per id.
pub(crate) struct InIds<C> {
    column: C,
    ids: Vec<String>,
}

/// `column` is one of `ids`.
pub(crate) fn in_ids<C>(column: C, ids: &[Uuid]) -> InIds<C> {
    InIds {
        column,
        ids: ids.iter().map(Uuid::to_string).collect(),
    }
}

impl<C> Expression for InIds<C> {
    type SqlType = Bool;
}

impl<C: QueryId> QueryId for InIds<C> {
    type QueryId = InIds<C::QueryId>;
    // The text depends only on the column: the ids are one bound array.
    const HAS_STATIC_QUERY_ID: bool = C::HAS_STATIC_QUERY_ID;
}

impl<C: ValidGrouping<GB>, GB> ValidGrouping<GB> for InIds<C> {
    type IsAggregate = C::IsAggregate;
}

impl<C: AppearsOnTable<QS>, QS> AppearsOnTable<QS> for InIds<C> {}

impl<C: SelectableExpression<QS>, QS> SelectableExpression<QS> for InIds<C> {}

impl<C: QueryFragment<Pg>> QueryFragment<Pg> for InIds<C> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.column.walk_ast(out.reborrow())?;
        out.push_sql(" IN (SELECT unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.ids)?;
        out.push_sql("))");
        Ok(())
    }
}

/// `'a', 'b'` for an `IN` list of ids.
fn id_list(ids: &[Uuid]) -> String {
    ids.iter()
        .map(|id| format!("'{id}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `sql` as SQLite runs it: each [`IDS`] an `IN (...)` list.
fn with_id_list(sql: &str, ids: &[Uuid]) -> String {
    sql.replace(IDS, &format!("IN ({})", id_list(ids)))
}

impl DieselTx {
    /// The rows of `sql`, in which every [`IDS`] stands for "is one of `ids`".
    pub(crate) fn load_for_ids<T>(&mut self, sql: &str, ids: &[Uuid]) -> StoreResult<Vec<T>>
    where
        T: QueryableByName<Pg> + QueryableByName<Sqlite> + 'static,
    {
        match self.conn()? {
            AnyConnection::Postgresql(c) => KeptForIds {
                sql,
                ids: ids.iter().map(Uuid::to_string).collect(),
            }
            .load::<T>(c)
            .store(),
            AnyConnection::Sqlite(c) => diesel::sql_query(with_id_list(sql, ids))
                .load::<T>(c)
                .store(),
        }
    }
}

#[cfg(test)]
mod tests {
    use diesel::debug_query;

    use super::*;

    #[test]
    fn every_mark_is_one_bound_array_on_postgres_and_a_written_list_on_sqlite() {
        let ids = [Uuid::from_u128(1), Uuid::from_u128(2)];
        let sql = "SELECT id FROM a WHERE id {ids} UNION SELECT id FROM b WHERE ref {ids}";
        let kept = KeptForIds {
            sql,
            ids: ids.iter().map(Uuid::to_string).collect(),
        };
        let text = debug_query::<Pg, _>(&kept).to_string();
        assert!(
            text.starts_with(
                "SELECT id FROM a WHERE id = ANY($1) UNION SELECT id FROM b WHERE ref = ANY($2)"
            ),
            "{text}"
        );
        // One text for any number of ids: what the statement cache keys on.
        let one = KeptForIds {
            sql,
            ids: vec![ids[0].to_string()],
        };
        let one = debug_query::<Pg, _>(&one).to_string();
        assert_eq!(text.split(" -- ").next(), one.split(" -- ").next());
        assert_eq!(
            with_id_list("SELECT id FROM a WHERE id {ids}", &ids),
            format!("SELECT id FROM a WHERE id IN ('{}', '{}')", ids[0], ids[1])
        );
    }
}
