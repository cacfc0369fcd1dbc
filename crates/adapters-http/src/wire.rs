//! Wire types shared by every operation: exact decimal numbers, instants, weights, prices, the
//! read and write request shapes, the success envelope, and the pieces several namespaces read or
//! write (references, date filters, used lots, name lists, green lots). A handler module holds
//! only its own operations' requests and results; whatever two namespaces share lives here, so no
//! handler module borrows another's types.
//!
//! Amounts never pass through floating point: a JSON number is read from its own text into a
//! decimal and written back as text.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;

mod date;
mod event;
mod green_lot;
mod input;
mod reference;
mod value;

pub use date::{DateFrom, DateRange};
pub use event::{EventDto, SubjectDto};
pub use green_lot::GreenLotDto;
pub use input::{
    LogLotData, UsedLotData, names, price_input, used_lots, used_lots_weight_optional, weight_input,
};
pub use reference::{
    LocationRefDto, LotRefDto, LotSourceDto, NameDto, ObjectRefDto, ProjectNameDto,
};
pub use value::{Amount, Instant, NameRef, PriceDto, WeightDto, raw_object, required, rule};

/// Pagination of a read: `limit` 1..100 (default 50), `after` an opaque cursor.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct PaginationDto {
    pub limit: Option<i64>,
    pub after: Option<String>,
}

/// `{"params": {"filter": F, "pagination": {...}}}`; `params` may be absent.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ReadRequest<F> {
    pub params: Option<ReadParams<F>>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ReadParams<F> {
    pub filter: Option<F>,
    pub pagination: Option<PaginationDto>,
}

impl<F> ReadRequest<F> {
    pub fn into_parts(self) -> (Option<F>, PaginationDto) {
        match self.params {
            None => (None, PaginationDto::default()),
            Some(p) => (p.filter, p.pagination.unwrap_or_default()),
        }
    }
}

/// A read with no filter.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NoFilter {}

/// `{"data": T}`
#[derive(Debug, Deserialize, ToSchema)]
pub struct WriteRequest<T> {
    pub data: Option<T>,
}

impl<T> WriteRequest<T> {
    pub fn data(self) -> Result<T, ApiError> {
        required(self.data, "data")
    }
}

/// `{"ok": true, "result": R, "meta": M}`
#[derive(Debug, Serialize, ToSchema)]
pub struct Envelope<R, M> {
    pub ok: bool,
    pub result: R,
    pub meta: M,
}

/// `meta` of calls that do not page: `{}`.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct NoMeta {}

/// `meta` of listings: `{"pagination": {"endCursor": ...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PageMeta {
    pub pagination: PageInfo,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    #[schema(required = true)]
    pub end_cursor: Option<String>,
}
