//! Statements over a set of ids, written so that their text does not depend on the ids.
//!
//! Such a statement names the set by [`IDS`] (`WHERE g.id {ids}`). On PostgreSQL that becomes
//! `= ANY($n)` with the ids bound as one text array; on SQLite `IN (SELECT value FROM
//! json_each(?))` with the ids bound as one JSON array. The text is the same for one id or a
//! thousand, so Diesel prepares the statement once per connection and keeps it, and neither
//! database parses it at every call (a `sql_query` is never kept; on SQLite, parsing a statement
//! with a hundred ids written out was a tenth of the server's time for `getRoastedLotsByIds`).
//! PostgreSQL still plans these statements at each execution: for one start or a few, a plan
//! for the bound ids looks cheaper to it than a generic one (`pg_prepared_statements` counts
//! custom plans only), except in a report's transaction (`Store::read_report`), which asks for
//! the generic plan (a report read as one statement outside a transaction binds its one start
//! as one value instead, `due_diligence.rs`). A semi-join (`IN (SELECT unnest($n))`) was tried
//! and planned slower still. The listing items of lots asked by id are read by joining the ids
//! as rows in the asked order ([`AskedIds`]): one generic plan, an index probe per id.

use std::cell::OnceCell;

use diesel::backend::Backend;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Array, Text};
use diesel::sqlite::Sqlite;
use diesel::sqlite::SqliteConnection;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::store::DieselTx;

/// Where a statement's text says "is one of the ids".
pub(crate) const IDS: &str = "{ids}";

/// Ids to bind, in the form the database's statement takes, made when first bound: a text array
/// on PostgreSQL, a JSON array on SQLite.
struct BoundIds {
    ids: Vec<Uuid>,
    texts: OnceCell<Vec<String>>,
    json: OnceCell<String>,
}

impl BoundIds {
    fn new(ids: &[Uuid]) -> Self {
        Self {
            ids: ids.to_vec(),
            texts: OnceCell::new(),
            json: OnceCell::new(),
        }
    }

    fn texts(&self) -> &Vec<String> {
        self.texts
            .get_or_init(|| self.ids.iter().map(Uuid::to_string).collect())
    }

    fn json(&self) -> &String {
        self.json.get_or_init(|| json_array(&self.ids))
    }
}

/// `sql` with each [`IDS`] as "is one of the ids", the ids bound.
struct KeptForIds<'a> {
    sql: &'a str,
    ids: BoundIds,
}

impl<'a> KeptForIds<'a> {
    fn new(sql: &'a str, ids: &[Uuid]) -> Self {
        Self {
            sql,
            ids: BoundIds::new(ids),
        }
    }
}

kept_statement!(KeptForIds);

impl diesel::RunQueryDsl<SqliteConnection> for KeptForIds<'_> {}

impl<DB: Backend> QueryFragment<DB> for KeptForIds<'_>
where
    BoundIds: OneOf<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let mut parts = self.sql.split(IDS);
        if let Some(first) = parts.next() {
            out.push_sql(first);
        }
        for part in parts {
            self.ids.push_any(&mut out)?;
            out.push_sql(part);
        }
        Ok(())
    }
}

/// `["…","…"]`: ids as a JSON array (a UUID's text needs no escaping).
fn json_array(ids: &[Uuid]) -> String {
    let mut json = String::with_capacity(2 + ids.len() * 39);
    json.push('[');
    for (at, id) in ids.iter().enumerate() {
        if at > 0 {
            json.push(',');
        }
        json.push('"');
        json.push_str(id.hyphenated().encode_lower(&mut Uuid::encode_buffer()));
        json.push('"');
    }
    json.push(']');
    json
}

/// How a database's statement says "is one of the ids", the ids bound once.
trait OneOf<DB: Backend> {
    /// After a value: "equals one of the ids" (what [`IDS`] stands for).
    fn push_any<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()>;
    /// After `FROM`: the ids as rows `a(value, key)`, `key` their place in the asked order
    /// ([`AskedIds`]).
    fn push_rows<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()>;
}

impl OneOf<Pg> for BoundIds {
    fn push_any<'b>(&'b self, out: &mut AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("= ANY(");
        out.push_bind_param::<Array<Text>, _>(self.texts())?;
        out.push_sql(")");
        Ok(())
    }

    fn push_rows<'b>(&'b self, out: &mut AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("unnest(");
        out.push_bind_param::<Array<Text>, _>(self.texts())?;
        out.push_sql(") WITH ORDINALITY AS a(value, key)");
        Ok(())
    }
}

/// SQLite has no arrays: the ids are one JSON array, read back as rows by `json_each`.
impl OneOf<Sqlite> for BoundIds {
    fn push_any<'b>(&'b self, out: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("IN (SELECT value FROM json_each(");
        out.push_bind_param::<Text, _>(self.json())?;
        out.push_sql("))");
        Ok(())
    }

    /// `json_each` of an array has the columns `key` (the element's index) and `value`.
    fn push_rows<'b>(&'b self, out: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("json_each(");
        out.push_bind_param::<Text, _>(self.json())?;
        out.push_sql(") AS a");
        Ok(())
    }
}

/// The asked ids as the rows `a(value, key)` of a statement's `FROM`, `value` the id's text and
/// `key` its place in the asked order (ascending): one bound text array on PostgreSQL
/// (`unnest … WITH ORDINALITY`), one bound JSON array on SQLite (`json_each`), so the text is the
/// same for any ids and the statement is kept.
pub(crate) struct AskedIds(BoundIds);

impl AskedIds {
    pub(crate) fn new(ids: &[Uuid]) -> Self {
        Self(BoundIds::new(ids))
    }
}

impl<DB: Backend> QueryFragment<DB> for AskedIds
where
    BoundIds: OneOf<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.push_rows(&mut out)
    }
}

impl DieselTx {
    /// The rows of `sql`, in which every [`IDS`] stands for "is one of `ids`".
    pub(crate) fn load_for_ids<T>(&mut self, sql: &str, ids: &[Uuid]) -> StoreResult<Vec<T>>
    where
        T: QueryableByName<Pg> + QueryableByName<Sqlite> + 'static,
    {
        let statement = KeptForIds::new(sql, ids);
        match self.conn()? {
            AnyConnection::Postgresql(c) => statement.load::<T>(c).store(),
            AnyConnection::Sqlite(c) => statement.load::<T>(c).store(),
        }
    }
}

#[cfg(test)]
mod tests {
    use diesel::debug_query;

    use super::*;

    #[test]
    fn every_mark_is_one_bound_array_on_either_database() {
        let ids = [Uuid::from_u128(1), Uuid::from_u128(2)];
        let sql = "SELECT id FROM a WHERE id {ids} UNION SELECT id FROM b WHERE ref {ids}";
        let kept = KeptForIds::new(sql, &ids);
        let text = debug_query::<Pg, _>(&kept).to_string();
        assert!(
            text.starts_with(
                "SELECT id FROM a WHERE id = ANY($1) UNION SELECT id FROM b WHERE ref = ANY($2)"
            ),
            "{text}"
        );
        let lite = debug_query::<Sqlite, _>(&kept).to_string();
        assert!(
            lite.starts_with(
                "SELECT id FROM a WHERE id IN (SELECT value FROM json_each(?)) \
                 UNION SELECT id FROM b WHERE ref IN (SELECT value FROM json_each(?))"
            ),
            "{lite}"
        );
        assert_eq!(
            kept.ids.json(),
            &format!(r#"["{}","{}"]"#, ids[0], ids[1]),
            "the ids as a JSON array"
        );
        assert_eq!(json_array(&[]), "[]");
        // One text for any number of ids: what the statement caches key on.
        let one = KeptForIds::new(sql, &ids[..1]);
        for text_of in [
            |k: &KeptForIds<'_>| debug_query::<Pg, _>(k).to_string(),
            |k: &KeptForIds<'_>| debug_query::<Sqlite, _>(k).to_string(),
        ] {
            let (many, one) = (text_of(&kept), text_of(&one));
            assert_eq!(many.split(" -- ").next(), one.split(" -- ").next());
        }
    }
}
