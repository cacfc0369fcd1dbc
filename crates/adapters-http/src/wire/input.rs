//! Request pieces several operations share, checked for shape only: a weight or a price as given
//! (its sign is judged by the use case after the lookups, so that an unknown lot ranks before a
//! negative weight), the lots a roast or blend uses, lists of names.

use roastery_app::green_lot::{PriceInput, WeightInput};
use roastery_domain::price::Currency;
use roastery_domain::weight::WeightUnit;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::value::{NameRef, PriceDto, WeightDto, required, rule};
use crate::error::ApiError;

/// A weight's shape: an amount and a known unit.
pub fn weight_input(dto: Option<WeightDto>, field: &str) -> Result<WeightInput, ApiError> {
    let dto = required(dto, field)?;
    let amount = required(dto.amount, &format!("{field}.amount"))?;
    let unit = required(dto.unit, &format!("{field}.unit"))?;
    let unit = WeightUnit::parse(&unit).map_err(|e| rule(field, e))?;
    Ok(WeightInput {
        amount: amount.0,
        unit,
    })
}

/// A price's shape: an amount and an ISO 4217 currency.
pub fn price_input(dto: PriceDto, field: &str) -> Result<PriceInput, ApiError> {
    let amount = required(dto.amount, &format!("{field}.amount"))?;
    let code = required(dto.currency, &format!("{field}.currency"))?;
    let currency = Currency::parse(&code).map_err(|e| rule(field, e))?;
    Ok(PriceInput {
        amount: amount.0,
        currency,
    })
}

/// `[{"id", "usedWeight"}]` of a roast or blend.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsedLotData {
    #[schema(value_type = Uuid, required = true)]
    pub id: Option<Uuid>,
    #[schema(value_type = WeightDto, required = true)]
    pub used_weight: Option<WeightDto>,
}

/// `[{"id", "usedWeight"}]` of a roast log: `usedWeight` may be left out when exactly one green
/// lot is given (the log's green weight is used).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogLotData {
    #[schema(value_type = Uuid, required = true)]
    pub id: Option<Uuid>,
    pub used_weight: Option<WeightDto>,
}

/// Every lot with its used weight, both required.
pub fn used_lots(
    lots: Option<Vec<UsedLotData>>,
    field: &str,
) -> Result<Vec<(Uuid, WeightInput)>, ApiError> {
    let lots = lots.map(|l| l.into_iter().map(|l| (l.id, l.used_weight)).collect());
    used_lot_list(lots, field, weight_input)
}

/// Every lot, required, with its used weight where given (a roast log's own green weight stands
/// in for a missing one).
pub fn used_lots_weight_optional(
    lots: Option<Vec<LogLotData>>,
    field: &str,
) -> Result<Vec<(Uuid, Option<WeightInput>)>, ApiError> {
    let lots = lots.map(|l| l.into_iter().map(|l| (l.id, l.used_weight)).collect());
    used_lot_list(lots, field, |weight, field| {
        weight.map(|w| weight_input(Some(w), field)).transpose()
    })
}

/// `(id, usedWeight)` of each lot of a list.
type LotWeights = Vec<(Option<Uuid>, Option<WeightDto>)>;

fn used_lot_list<W>(
    lots: Option<LotWeights>,
    field: &str,
    weight: impl Fn(Option<WeightDto>, &str) -> Result<W, ApiError>,
) -> Result<Vec<(Uuid, W)>, ApiError> {
    required(lots, field)?
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            Ok((
                required(l.0, &format!("{field}[{i}].id"))?,
                weight(l.1, &format!("{field}[{i}].usedWeight"))?,
            ))
        })
        .collect()
}

/// `[{"name"}]` (projects, varieties, certifications): the list may be absent, every name is
/// required.
pub fn names(list: Option<Vec<NameRef>>, field: &str) -> Result<Vec<String>, ApiError> {
    list.unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, n)| required(n.name, &format!("{field}[{i}].name")))
        .collect()
}
