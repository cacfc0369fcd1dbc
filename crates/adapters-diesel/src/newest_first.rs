//! Newest-first pages: the keyset position a page starts after, written per backend, and the
//! page statement with its limit in the text. Together they let PostgreSQL keep one generic plan
//! per listing statement for every cursor and page: with the limit bound, the generic plan
//! guessed a tenth of the table and lost to each call's custom plan; with the position visible,
//! each call's custom plan estimated fewer rows than the generic one. Either way PostgreSQL
//! planned every page anew.

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::expression::{AppearsOnTable, Expression, ValidGrouping, is_aggregate};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, Text, Timestamp};
use diesel::sqlite::Sqlite;
use diesel::{QueryResult, RunQueryDsl};
use roastery_domain::page::PageRequest;
use roastery_ports::repo::StoreResult;

use crate::connection::MultiBackend;
use crate::row::{LiteralLimit, keyset};
use crate::time::to_db;

/// How a statement writes the keyset position of a page.
#[derive(Clone, Copy)]
pub(crate) enum Form {
    /// `(at <= :at AND (at < :at OR id < :id))`: SQLite's plan for it is an index range seek.
    Range,
    /// `(at, id) < ((SELECT :at), (SELECT :id))`: the same rows and the same index range, with
    /// the position hidden from PostgreSQL's planner, so that every cursor's estimate is the
    /// generic plan's and the generic plan is kept. Other filters of the page stay visible, so
    /// a selective one is still planned for its value.
    HiddenRow,
}

/// Writes "the rows below `(at, id)` in `(at_column, id_column)` order", parenthesised.
pub(crate) fn walk_after<'b, DB, At, Id>(
    mut out: AstPass<'_, 'b, DB>,
    form: Form,
    at_column: &'b At,
    id_column: &'b Id,
    (at, id): &'b (NaiveDateTime, String),
) -> QueryResult<()>
where
    DB: Backend,
    At: QueryFragment<DB>,
    Id: QueryFragment<DB>,
    NaiveDateTime: ToSql<Timestamp, DB>,
    String: ToSql<Text, DB>,
{
    out.push_sql("(");
    match form {
        Form::Range => {
            at_column.walk_ast(out.reborrow())?;
            out.push_sql(" <= ");
            out.push_bind_param::<Timestamp, _>(at)?;
            out.push_sql(" AND (");
            at_column.walk_ast(out.reborrow())?;
            out.push_sql(" < ");
            out.push_bind_param::<Timestamp, _>(at)?;
            out.push_sql(" OR ");
            id_column.walk_ast(out.reborrow())?;
            out.push_sql(" < ");
            out.push_bind_param::<Text, _>(id)?;
            out.push_sql(")");
        }
        Form::HiddenRow => {
            out.push_sql("(");
            at_column.walk_ast(out.reborrow())?;
            out.push_sql(", ");
            id_column.walk_ast(out.reborrow())?;
            out.push_sql(") < ((SELECT ");
            out.push_bind_param::<Timestamp, _>(at)?;
            out.push_sql("), (SELECT ");
            out.push_bind_param::<Text, _>(id)?;
            out.push_sql("))");
        }
    }
    out.push_sql(")");
    Ok(())
}

/// A column or other name written as it is.
#[derive(Clone, Copy)]
pub(crate) struct Name(pub(crate) &'static str);

impl<DB: Backend> QueryFragment<DB> for Name {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(self.0);
        Ok(())
    }
}

/// A filter of a Diesel query: the rows after a page's keyset position, in (`At`, `Id`)
/// descending order.
pub(crate) struct After<At, Id> {
    at_column: At,
    id_column: Id,
    position: (NaiveDateTime, String),
}

/// The keyset position `page` starts after, as stored (instant, id), or `None` for a first page.
pub(crate) fn position(page: &PageRequest) -> StoreResult<Option<(NaiveDateTime, String)>> {
    Ok(keyset(page)?.map(|(at, id)| (to_db(at), id.to_string())))
}

impl<At, Id> After<At, Id> {
    /// The filter of `page`'s rows, or `None` for a first page.
    pub(crate) fn page(
        at_column: At,
        id_column: Id,
        page: &PageRequest,
    ) -> StoreResult<Option<Self>> {
        Ok(position(page)?.map(|position| Self {
            at_column,
            id_column,
            position,
        }))
    }
}

impl<At, Id> Expression for After<At, Id> {
    type SqlType = Bool;
}

impl<At, Id, QS> AppearsOnTable<QS> for After<At, Id>
where
    At: AppearsOnTable<QS>,
    Id: AppearsOnTable<QS>,
{
}

impl<At, Id> ValidGrouping<()> for After<At, Id> {
    type IsAggregate = is_aggregate::No;
}

impl<At, Id> QueryId for After<At, Id> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<At: QueryFragment<Pg>, Id: QueryFragment<Pg>> QueryFragment<Pg> for After<At, Id> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        walk_after(
            out,
            Form::HiddenRow,
            &self.at_column,
            &self.id_column,
            &self.position,
        )
    }
}

impl<At: QueryFragment<Sqlite>, Id: QueryFragment<Sqlite>> QueryFragment<Sqlite> for After<At, Id> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        walk_after(
            out,
            Form::Range,
            &self.at_column,
            &self.id_column,
            &self.position,
        )
    }
}

impl<At, Id> QueryFragment<MultiBackend> for After<At, Id>
where
    Self: QueryFragment<Pg> + QueryFragment<Sqlite>,
{
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, MultiBackend>) -> QueryResult<()> {
        MultiBackend::walk_variant_ast(self, pass)
    }
}

/// An ordered query with one row more than `page` holds, its limit written into the text
/// ([`LiteralLimit`]): one kept statement per page size.
pub(crate) struct PageQuery<Q> {
    query: Q,
    limit: LiteralLimit,
}

impl<Q> PageQuery<Q> {
    pub(crate) fn new(query: Q, page: &PageRequest) -> Self {
        Self {
            query,
            limit: LiteralLimit::overfetch(page),
        }
    }
}

impl<Q: Query> Query for PageQuery<Q> {
    type SqlType = Q::SqlType;
}

impl<Q> QueryId for PageQuery<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<DB: Backend, Q: QueryFragment<DB>> QueryFragment<DB> for PageQuery<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        self.limit.walk_ast(out)
    }
}

impl<Q, C> RunQueryDsl<C> for PageQuery<Q> {}

#[cfg(test)]
mod tests {
    use roastery_domain::page::Position;
    use roastery_ports::Store;
    use roastery_ports::repo::GreenLotRepo;

    use crate::listing::tests::{first_of, listed_lots, plans};

    /// A boxed listing (here the lots' own rows, as read when an item is missing) keeps one
    /// generic plan on PostgreSQL for its first page and one for the pages after a cursor:
    /// after PostgreSQL's five trial custom plans of each, none is made again.
    #[test]
    fn boxed_pages_on_postgresql_keep_their_generic_plans() {
        let Some((_db, store)) = listed_lots("newest_first_plan", 1000) else {
            return;
        };
        let first = first_of(50);
        for _ in 0..12 {
            let lots = store
                .read_statement(|tx| Ok(tx.list_green_lots(None, &first)?))
                .unwrap();
            assert_eq!(lots.items.len(), 50);
        }
        let mut page = first;
        let mut seen = Vec::new();
        for _ in 0..13 {
            let lots = store
                .read_statement(|tx| Ok(tx.list_green_lots(None, &page)?))
                .unwrap();
            assert_eq!(lots.items.len(), 50);
            seen.extend(lots.items.iter().map(|l| (l.registration_date, l.id)));
            let last = lots.items.last().unwrap();
            page.after = Some(Position::Keyset {
                at: last.registration_date,
                id: last.id,
            });
        }
        assert!(
            seen.windows(2).all(|pair| pair[0] > pair[1]),
            "newest first, each once: {seen:?}"
        );
        let lots = "\"green_lots\".\"weight_micros\"";
        for (what, parts, calls) in [
            ("first page", [lots, "LIMIT 51", "!WHERE"], 13),
            ("after a cursor", [lots, "LIMIT 51", "WHERE"], 12),
        ] {
            let plans = plans(&store, &parts);
            assert_eq!(plans.len(), 1, "{what}: one kept statement: {plans:?}");
            assert!(plans[0].custom_plans <= 5, "{what}: {plans:?}");
            assert!(plans[0].generic_plans >= calls - 5, "{what}: {plans:?}");
        }
    }
}
