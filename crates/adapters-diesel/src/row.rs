//! What every repository's rows share: stored ids and the bounds of a listing page.

use chrono::{DateTime, Utc};
use diesel::pg::{Pg, PgValue};
use diesel::sql_types::Text;
use diesel::sqlite::{Sqlite, SqliteValue};
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

/// A stored weight: micro-units in the unit stored beside them.
pub(crate) fn weight_from_db(what: &str, micros: i64, unit: &str) -> StoreResult<Weight> {
    let unit = WeightUnit::parse(unit).map_err(|e| corrupt(what, e))?;
    Weight::from_micros(micros, unit).map_err(|e| corrupt(what, e))
}

/// A `LIMIT` written into a statement's text rather than bound. With the limit bound,
/// PostgreSQL's generic plan of a listing page guesses a tenth of the table and loses to a
/// custom plan, so the kept statement is planned again at every execution; with it written,
/// the generic plan (an index range scan) is kept. Each page size is one kept statement.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiteralLimit(u32);

impl LiteralLimit {
    /// One row more than the page holds: it only tells whether another page exists.
    pub(crate) fn overfetch(page: &PageRequest) -> Self {
        Self(page.limit.get().saturating_add(1))
    }
}

impl<DB: diesel::backend::Backend> diesel::query_builder::QueryFragment<DB> for LiteralLimit {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        out.push_sql(" LIMIT ");
        out.push_sql(&self.0.to_string());
        Ok(())
    }
}

/// A text id column read into a [`Uuid`] without an owned copy of its text (as rows of the
/// listing pages read it, 51 a page).
#[derive(Debug, Clone, Copy, diesel::deserialize::FromSqlRow)]
pub(crate) struct StoredUuid(Uuid);

impl From<StoredUuid> for Uuid {
    fn from(id: StoredUuid) -> Self {
        id.0
    }
}

impl diesel::deserialize::FromSql<Text, Sqlite> for StoredUuid {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> diesel::deserialize::Result<Self> {
        Ok(Self(Uuid::try_parse(value.read_text())?))
    }
}

impl diesel::deserialize::FromSql<Text, Pg> for StoredUuid {
    fn from_sql(value: PgValue<'_>) -> diesel::deserialize::Result<Self> {
        Ok(Self(Uuid::try_parse_ascii(value.as_bytes())?))
    }
}
