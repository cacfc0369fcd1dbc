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
