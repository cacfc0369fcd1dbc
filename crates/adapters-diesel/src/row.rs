//! What every repository's rows share: stored ids and the bounds of a listing page.

use chrono::{DateTime, Utc};
use roastery_domain::page::PageRequest;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::StoreError;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::error::corrupt;

/// Parses a stored uuid.
pub(crate) fn uuid(what: &str, text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|e| corrupt(what, e))
}

/// The keyset a listing page starts after. Use cases check the cursor kind before calling.
pub(crate) fn keyset(page: &PageRequest) -> StoreResult<Option<(DateTime<Utc>, Uuid)>> {
    page.keyset()
        .map_err(|e| StoreError::Internal(e.to_string()))
}

/// One row more than the page holds: it only tells whether another page exists.
pub(crate) fn overfetch(page: &PageRequest) -> i64 {
    i64::from(page.limit.get()) + 1
}

/// A stored weight: micro-units in the unit stored beside them.
pub(crate) fn weight_from_db(what: &str, micros: i64, unit: &str) -> StoreResult<Weight> {
    let unit = WeightUnit::parse(unit).map_err(|e| corrupt(what, e))?;
    Weight::from_micros(micros, unit).map_err(|e| corrupt(what, e))
}

/// A query whose `LIMIT` is written into its SQL rather than bound. With the limit bound,
/// PostgreSQL's generic plan of a listing page guesses a tenth of the table and loses to a
/// custom plan, so the kept statement is planned again at every execution; with it written,
/// the generic plan (an index range scan) is kept. Each page size is one kept statement.
#[derive(Debug, Clone)]
pub(crate) struct LiteralLimit<Q> {
    query: Q,
    limit: u32,
}

impl<Q> LiteralLimit<Q> {
    pub(crate) fn of(query: Q, page: &PageRequest) -> Self {
        Self {
            query,
            limit: page.limit.get().saturating_add(1),
        }
    }
}

impl<Q: diesel::query_builder::Query> diesel::query_builder::Query for LiteralLimit<Q> {
    type SqlType = Q::SqlType;
}

impl<Q, DB> diesel::query_builder::QueryFragment<DB> for LiteralLimit<Q>
where
    DB: diesel::backend::Backend,
    Q: diesel::query_builder::QueryFragment<DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        out.push_sql(" LIMIT ");
        out.push_sql(&self.limit.to_string());
        Ok(())
    }
}

impl<Q> diesel::query_builder::QueryId for LiteralLimit<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q, C> diesel::RunQueryDsl<C> for LiteralLimit<Q> {}
