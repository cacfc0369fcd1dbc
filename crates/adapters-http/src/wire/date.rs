//! Date filters of listings.

use serde::Deserialize;
use utoipa::ToSchema;

use super::value::Instant;

/// `from` inclusive, `to` exclusive.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DateRange {
    pub from: Option<Instant>,
    pub to: Option<Instant>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DateFrom {
    pub from: Option<Instant>,
}
