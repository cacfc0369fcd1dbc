//! inventory.roast: roasted lots, roast details and curves; recording a roast, importing a roast
//! log and setting a roasted lot's weight. Profiles are in `profile.rs`.

use actix_web::HttpResponse;
use roastery_app::Roastery;
use roastery_app::roast::{
    CurveDraft, RecordRoast, RecordedRoast, RoastDetailsView, RoastedLotView, SetRoastedLotWeight,
};
use roastery_app::roast_log::ImportRoastLog;
use roastery_domain::measure::{Measure, Unit};
use roastery_domain::page::{JoinedPage, Page};
use roastery_domain::roast_curve::{self, DataPoint, RoastCurve};
use roastery_domain::roast_details::RoastDetailsDraft;
use roastery_ports::{AppError, Store};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, DateFrom, GreenLotDto, Instant, LocationRefDto, LogLotData, LotSourceDto, NameDto,
    NameRef, ObjectRefDto, ProjectNameDto, ReadRequest, UsedLotData, WeightDto, WriteRequest,
    names, required, rule, used_lots, used_lots_weight_optional, weight_input,
};

// ---- roasted lots ----

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeightLossDto {
    pub amount: Amount,
    pub unit: String,
    /// Of the used green weight, rounded half-even to 2 decimals.
    pub percentage: Amount,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRefDto {
    pub id: Uuid,
    pub name: String,
    #[schema(required = true)]
    pub external_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastedLotDto {
    pub id: Uuid,
    pub lot_number: String,
    pub name: String,
    /// The `roastUUID` of the Artisan log the roast was imported from; null otherwise.
    #[schema(required = true)]
    pub external_id: Option<String>,
    pub weight: WeightDto,
    pub weight_loss: WeightLossDto,
    pub green_lots: Vec<LotSourceDto>,
    #[schema(required = true)]
    pub profile: Option<ProfileRefDto>,
    pub location: LocationRefDto,
    pub roasted_date: Instant,
    pub projects: Vec<ProjectNameDto>,
    #[schema(required = true)]
    pub consumed_date: Option<Instant>,
}

impl TryFrom<RoastedLotView> for RoastedLotDto {
    type Error = ApiError;

    fn try_from(v: RoastedLotView) -> Result<Self, ApiError> {
        let lot = v.lot;
        let loss = lot.weight_loss().map_err(ApiError::internal)?;
        Ok(Self {
            id: lot.id,
            lot_number: lot.lot_number(),
            name: lot.name,
            external_id: lot.external_id,
            weight: lot.stock.weight().into(),
            weight_loss: WeightLossDto {
                amount: Amount(loss.amount.amount()),
                unit: loss.amount.unit().as_str().to_owned(),
                percentage: Amount(loss.percentage),
            },
            green_lots: lot.sources.into_iter().map(Into::into).collect(),
            profile: v.profile.map(|p| ProfileRefDto {
                id: p.id,
                name: p.name,
                external_id: p.external_id,
            }),
            location: v.location.into(),
            roasted_date: lot.roasted_date.into(),
            projects: lot.projects.into_iter().map(Into::into).collect(),
            consumed_date: lot.stock.consumed_at().map(Into::into),
        })
    }
}

fn roasted_dtos(views: Vec<RoastedLotView>) -> Result<Vec<RoastedLotDto>, ApiError> {
    views.into_iter().map(TryInto::try_into).collect()
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastedLotsResult {
    pub roasted_lots: Vec<RoastedLotDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastedLotResult {
    pub roasted_lot: RoastedLotDto,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListRoastedLotsFilter {
    pub roasted_date: Option<DateFrom>,
}

pub(super) async fn list_roasted_lots<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListRoastedLotsFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let from = filter
        .and_then(|f| f.roasted_date)
        .and_then(|d| d.from)
        .map(|i| i.0);
    roasted_lots_page(
        ctx,
        move |app| app.roasted_lot_listing(from, page),
        move |app| app.list_roasted_lots(from, page),
    )
    .await
}

/// A page of roasted lots: their stored items when the store has them all, else from the
/// domain.
async fn roasted_lots_page<S: Store>(
    ctx: Ctx<S>,
    stored: impl FnOnce(&Roastery<S>) -> Result<Option<JoinedPage>, AppError> + Send + 'static,
    domain: impl FnOnce(&Roastery<S>) -> Result<Page<RoastedLotView>, AppError> + Send + 'static,
) -> Result<HttpResponse, ApiError> {
    if let Some(stored) = ctx.read(stored).await? {
        return ctx.stored_page("roastedLots", stored);
    }
    let page = ctx.run(domain).await?;
    ctx.page(
        RoastedLotsResult {
            roasted_lots: roasted_dtos(page.items)?,
        },
        page.next,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastedLotIdsFilter {
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub roasted_lot_ids: Option<Vec<Uuid>>,
}

fn roasted_lot_ids(filter: Option<RoastedLotIdsFilter>) -> Result<Vec<Uuid>, ApiError> {
    required(
        filter.and_then(|f| f.roasted_lot_ids),
        "params.filter.roastedLotIds",
    )
}

pub(super) async fn roasted_lots_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<RoastedLotIdsFilter>>(body)?.into_parts();
    let ids = roasted_lot_ids(filter)?;
    let page = ctx.page_request(&pagination)?;
    let asked = ids.clone();
    roasted_lots_page(
        ctx,
        move |app| app.roasted_lot_listing_by_ids(asked, page),
        move |app| app.roasted_lots_by_ids(ids, page),
    )
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetRoastedLotWeightData {
    #[schema(value_type = Uuid, required = true)]
    pub roasted_lot_id: Option<Uuid>,
    #[schema(value_type = WeightDto, required = true)]
    pub weight: Option<WeightDto>,
}

pub(super) async fn set_roasted_lot_weight<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetRoastedLotWeightData>>(body)?.data()?;
    let cmd = SetRoastedLotWeight {
        roasted_lot_id: required(data.roasted_lot_id, "data.roastedLotId")?,
        weight: weight_input(data.weight, "data.weight")?,
    };
    let view = ctx.run(move |app| app.set_roasted_lot_weight(cmd)).await?;
    ctx.ok(RoastedLotResult {
        roasted_lot: view.try_into()?,
    })
}

// ---- roast details ----

/// `"name"` or `{"name": "name"}`. Decoded by what the JSON is (a string or an object), never
/// by trying shapes in turn: an array is a wrong type, as everywhere.
#[derive(Debug, ToSchema)]
#[serde(untagged)]
pub enum NameInput {
    Name(String),
    Object(NameRef),
}

impl<'de> Deserialize<'de> for NameInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameOrObject;
        impl<'de> serde::de::Visitor<'de> for NameOrObject {
            type Value = NameInput;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an object with a `name`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NameInput, E> {
                Ok(NameInput::Name(v.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<NameInput, A::Error> {
                NameRef::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(NameInput::Object)
            }
        }
        deserializer.deserialize_any(NameOrObject)
    }
}

impl NameInput {
    fn into_name(self) -> Option<String> {
        match self {
            Self::Name(name) => Some(name),
            Self::Object(r) => r.name,
        }
    }
}

/// A temperature, time or roast value: `{"amount", "unit"}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MeasureDto {
    #[schema(value_type = Amount, required = true)]
    pub amount: Option<Amount>,
    #[schema(value_type = String, required = true)]
    pub unit: Option<String>,
}

impl MeasureDto {
    fn parse<U: Unit>(dto: Option<Self>, field: &str) -> Result<Option<Measure<U>>, ApiError> {
        let Some(dto) = dto else { return Ok(None) };
        let amount = required(dto.amount, &format!("{field}.amount"))?;
        let unit = required(dto.unit, &format!("{field}.unit"))?;
        Measure::parse(amount.0, &unit)
            .map(Some)
            .map_err(|e| rule(field, e))
    }
}

impl<U: Unit> From<Measure<U>> for MeasureDto {
    fn from(m: Measure<U>) -> Self {
        Self {
            amount: Some(Amount(m.amount())),
            unit: Some(m.unit().as_str().to_owned()),
        }
    }
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastDetailsData {
    pub roast_technician: Option<NameInput>,
    pub note: Option<String>,
    pub start_temperature: Option<MeasureDto>,
    pub end_temperature: Option<MeasureDto>,
    pub roast_value: Option<MeasureDto>,
    pub roast_value2: Option<MeasureDto>,
    pub roast_duration: Option<MeasureDto>,
    pub first_crack_time: Option<MeasureDto>,
    pub color_change_time: Option<MeasureDto>,
    pub machine: Option<NameInput>,
}

impl RoastDetailsData {
    fn into_draft(self) -> Result<RoastDetailsDraft, ApiError> {
        const F: &str = "data.details";
        Ok(RoastDetailsDraft {
            roast_technician: self.roast_technician.and_then(NameInput::into_name),
            note: self.note,
            start_temperature: MeasureDto::parse(
                self.start_temperature,
                &format!("{F}.startTemperature"),
            )?,
            end_temperature: MeasureDto::parse(
                self.end_temperature,
                &format!("{F}.endTemperature"),
            )?,
            roast_value: MeasureDto::parse(self.roast_value, &format!("{F}.roastValue"))?,
            roast_value2: MeasureDto::parse(self.roast_value2, &format!("{F}.roastValue2"))?,
            roast_duration: MeasureDto::parse(self.roast_duration, &format!("{F}.roastDuration"))?,
            first_crack_time: MeasureDto::parse(
                self.first_crack_time,
                &format!("{F}.firstCrackTime"),
            )?,
            color_change_time: MeasureDto::parse(
                self.color_change_time,
                &format!("{F}.colorChangeTime"),
            )?,
            machine: self.machine.and_then(NameInput::into_name),
        })
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastDetailsDto {
    #[schema(required = true)]
    pub roast_technician: Option<NameDto>,
    #[schema(required = true)]
    pub note: Option<String>,
    #[schema(required = true)]
    pub start_temperature: Option<MeasureDto>,
    #[schema(required = true)]
    pub end_temperature: Option<MeasureDto>,
    #[schema(required = true)]
    pub roast_value: Option<MeasureDto>,
    #[schema(required = true)]
    pub roast_value2: Option<MeasureDto>,
    #[schema(required = true)]
    pub roast_duration: Option<MeasureDto>,
    #[schema(required = true)]
    pub first_crack_time: Option<MeasureDto>,
    #[schema(required = true)]
    pub color_change_time: Option<MeasureDto>,
    #[schema(required = true)]
    pub machine: Option<NameDto>,
    pub roasted_lot: ObjectRefDto,
}

impl From<RoastDetailsView> for RoastDetailsDto {
    fn from(v: RoastDetailsView) -> Self {
        let d = v.details;
        Self {
            roast_technician: d.roast_technician.map(|name| NameDto { name }),
            note: d.note,
            start_temperature: d.start_temperature.map(Into::into),
            end_temperature: d.end_temperature.map(Into::into),
            roast_value: d.roast_value.map(Into::into),
            roast_value2: d.roast_value2.map(Into::into),
            roast_duration: d.roast_duration.map(Into::into),
            first_crack_time: d.first_crack_time.map(Into::into),
            color_change_time: d.color_change_time.map(Into::into),
            machine: d.machine.map(|name| NameDto { name }),
            roasted_lot: v.roasted_lot.into(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastDetailsResult {
    pub roast_details: Vec<RoastDetailsDto>,
}

pub(super) async fn roast_details_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<RoastedLotIdsFilter>>(body)?.into_parts();
    let ids = roasted_lot_ids(filter)?;
    ctx.page_of(
        &pagination,
        move |app, page| app.roast_details_by_ids(ids, page),
        |items| RoastDetailsResult {
            roast_details: items.into_iter().map(Into::into).collect(),
        },
    )
    .await
}

// ---- roast curves ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataPointData {
    /// Milliseconds since the roast started; fractions are rounded half-even to whole ms.
    #[schema(value_type = Amount, required = true)]
    pub time: Option<Amount>,
    #[schema(value_type = Amount, required = true)]
    pub value: Option<Amount>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurveData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(value_type = String, required = true)]
    pub unit: Option<String>,
    pub data_points: Option<Vec<DataPointData>>,
}

impl CurveData {
    fn into_draft(self, field: &str) -> Result<CurveDraft, ApiError> {
        let points = self.data_points.unwrap_or_default();
        let mut data_points = Vec::with_capacity(points.len());
        for (i, p) in points.into_iter().enumerate() {
            let time = required(p.time, &format!("{field}.dataPoints[{i}].time"))?;
            data_points.push(DataPoint {
                time_ms: roast_curve::whole_millis(time.0).ok_or_else(|| {
                    ApiError::invalid_parameter(format!(
                        "{field}.dataPoints[{i}].time: {} is not a time in milliseconds",
                        time.0
                    ))
                })?,
                value: required(p.value, &format!("{field}.dataPoints[{i}].value"))?.0,
            });
        }
        Ok(CurveDraft {
            name: required(self.name, &format!("{field}.name"))?,
            unit: required(self.unit, &format!("{field}.unit"))?,
            data_points,
        })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DataPointDto {
    pub time: i64,
    pub value: Amount,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastCurveDto {
    pub name: String,
    pub unit: String,
    pub data_points: Vec<DataPointDto>,
}

impl From<RoastCurve> for RoastCurveDto {
    fn from(c: RoastCurve) -> Self {
        Self {
            name: c.name,
            unit: c.unit,
            data_points: c
                .data_points
                .into_iter()
                .map(|p| DataPointDto {
                    time: p.time_ms,
                    value: Amount(p.value),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastCurvesResult {
    pub roast_curves: Vec<RoastCurveDto>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoastCurvesFilter {
    #[schema(value_type = Uuid, required = true)]
    pub roasted_lot_id: Option<Uuid>,
}

pub(super) async fn roast_curves_by_id<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<RoastCurvesFilter>>(body)?.into_parts();
    let id = required(
        filter.and_then(|f| f.roasted_lot_id),
        "params.filter.roastedLotId",
    )?;
    let curves = ctx.run(move |app| app.roast_curves(id)).await?;
    ctx.ok(RoastCurvesResult {
        roast_curves: curves.into_iter().map(Into::into).collect(),
    })
}

// ---- recording a roast ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordRoastData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(value_type = Uuid, required = true)]
    pub location_id: Option<Uuid>,
    #[schema(value_type = Instant, required = true)]
    pub roasted_date: Option<Instant>,
    #[schema(value_type = WeightDto, required = true)]
    pub weight: Option<WeightDto>,
    #[schema(value_type = Vec<UsedLotData>, required = true)]
    pub green_lots: Option<Vec<UsedLotData>>,
    pub profile_id: Option<Uuid>,
    pub details: Option<RoastDetailsData>,
    pub curves: Option<Vec<CurveData>>,
    pub projects: Option<Vec<NameRef>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordRoastResult {
    pub roasted_lot: RoastedLotDto,
    /// The green lots used, after the roast.
    pub green_lots: Vec<GreenLotDto>,
}

impl TryFrom<RecordedRoast> for RecordRoastResult {
    type Error = ApiError;

    fn try_from(done: RecordedRoast) -> Result<Self, ApiError> {
        Ok(Self {
            roasted_lot: done.roasted_lot.try_into()?,
            green_lots: done.green_lots.into_iter().map(Into::into).collect(),
        })
    }
}

pub(super) async fn record_roast<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<RecordRoastData>>(body)?.data()?;
    let cmd = RecordRoast {
        name: required(data.name, "data.name")?,
        location_id: required(data.location_id, "data.locationId")?,
        roasted_date: required(data.roasted_date, "data.roastedDate")?.0,
        weight: weight_input(data.weight, "data.weight")?,
        green_lots: used_lots(data.green_lots, "data.greenLots")?,
        profile_id: data.profile_id,
        details: data.details.map(RoastDetailsData::into_draft).transpose()?,
        curves: data
            .curves
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, c)| c.into_draft(&format!("data.curves[{i}]")))
            .collect::<Result<_, _>>()?,
        projects: names(data.projects, "data.projects")?,
    };
    let done = ctx.run(move |app| app.record_roast(cmd)).await?;
    ctx.ok(RecordRoastResult::try_from(done)?)
}

// ---- importing a roast log ----

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportRoastLogData {
    /// `ARTISAN`: an Artisan `.alog` file (a Python literal) or Artisan's JSON export.
    #[schema(value_type = String, required = true)]
    pub format: Option<String>,
    /// The text of the log file.
    #[schema(value_type = String, required = true)]
    pub content: Option<String>,
    #[schema(value_type = Uuid, required = true)]
    pub location_id: Option<Uuid>,
    /// `usedWeight` may be left out when exactly one green lot is given: the log's green weight
    /// is used.
    #[schema(value_type = Vec<LogLotData>, required = true)]
    pub green_lots: Option<Vec<LogLotData>>,
    /// Default: the log's `title`.
    pub name: Option<String>,
    pub profile_id: Option<Uuid>,
    pub projects: Option<Vec<NameRef>>,
}

pub(super) async fn import_roast_log<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ImportRoastLogData>>(body)?.data()?;
    // Field by field in the order the request lists them: each field's presence, then its form.
    let format = required(data.format, "data.format")?;
    if format != "ARTISAN" {
        return Err(ApiError::invalid_parameter(format!(
            "data.format: `{format}` is not a roast log format; use ARTISAN"
        )));
    }
    let content = required(data.content, "data.content")?;
    let location_id = required(data.location_id, "data.locationId")?;
    let green_lots = used_lots_weight_optional(data.green_lots, "data.greenLots")?;
    let projects = names(data.projects, "data.projects")?;
    let log = crate::artisan::read_log(&content)
        .map_err(|e| ApiError::invalid_parameter(format!("data.{e}")))?;
    let cmd = ImportRoastLog {
        log,
        location_id,
        green_lots,
        name: data.name,
        profile_id: data.profile_id,
        projects,
    };
    let done = ctx.run(move |app| app.import_roast_log(cmd)).await?;
    ctx.ok(RecordRoastResult::try_from(done)?)
}

#[cfg(test)]
mod handler_tests {
    use roastery_ports::repo::GreenLotRepo;
    use rust_decimal::Decimal;
    use serde_json::{Value, json};

    use super::*;
    use crate::call::testing::{answer, call, green_lot_at};
    use crate::ops::Operation;

    fn body(value: &Value) -> Vec<u8> {
        serde_json::to_vec(value).unwrap()
    }

    fn roast(location: Uuid, green_lots: Value) -> Value {
        json!({"data": {
            "name": "Roast 1",
            "locationId": location,
            "roastedDate": "2026-11-20T08:00:00Z",
            "weight": {"amount": 3.5, "unit": "KG"},
            "greenLots": green_lots
        }})
    }

    /// The roast's fields reach the use case under their wire names, each green lot with the
    /// weight taken from it, and the answer is the roasted lot and the green lots after it.
    #[actix_web::test]
    async fn record_roast_takes_each_green_lot_used_weight_and_answers_the_lots_after_it() {
        let (ctx, app) = call(Operation::RecordRoast);
        let (location, lot) = green_lot_at(&app, 10);
        let request = roast(
            location,
            json!([{"id": lot, "usedWeight": {"amount": 4, "unit": "KG"}}]),
        );
        let (status, answered) = answer(record_roast(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");
        let roasted = &answered["result"]["roastedLot"];
        assert_eq!(roasted["name"], "Roast 1", "{answered}");
        assert_eq!(roasted["weight"], json!({"amount": 3.5, "unit": "KG"}));
        assert_eq!(roasted["location"]["id"], json!(location));
        assert_eq!(roasted["roastedDate"], "2026-11-20T08:00:00Z");
        assert_eq!(roasted["greenLots"][0]["id"], json!(lot), "{answered}");
        let green = &answered["result"]["greenLots"];
        assert_eq!(green[0]["id"], json!(lot), "{answered}");
        assert_eq!(green[0]["weight"], json!({"amount": 6, "unit": "KG"}));
        let stored = app
            .store()
            .read(|tx| Ok(tx.green_lot(lot)?))
            .unwrap()
            .expect("stored");
        assert_eq!(stored.stock.weight().amount(), Decimal::from(6));
    }

    /// A request's `greenLots` for a green lot and a used weight.
    type LotsOf = fn(Uuid, &Value) -> Value;

    /// `usedWeight` is required for every green lot of a recorded roast (unlike a roast log's),
    /// named by its path, and no weight is taken.
    #[actix_web::test]
    async fn record_roast_needs_the_used_weight_of_every_green_lot() {
        let used = json!({"amount": 4, "unit": "KG"});
        let cases: [(LotsOf, &str); 4] = [
            (|_, _| Value::Null, "data.greenLots"),
            (
                |_, used| json!([{"usedWeight": used}]),
                "data.greenLots[0].id",
            ),
            (
                |lot, _| json!([{"id": lot}]),
                "data.greenLots[0].usedWeight",
            ),
            (
                |lot, used| json!([{"id": lot, "usedWeight": used}, {"id": lot, "usedWeight": {"unit": "KG"}}]),
                "data.greenLots[1].usedWeight.amount",
            ),
        ];
        for (lots, path) in cases {
            let (ctx, app) = call(Operation::RecordRoast);
            let (location, lot) = green_lot_at(&app, 10);
            let request = roast(location, lots(lot, &used));
            let (status, answered) = answer(record_roast(ctx, &body(&request)).await).await;
            assert_eq!(status, 400, "{path}: {answered}");
            assert_eq!(answered["error"]["code"], "missing_parameter", "{answered}");
            assert_eq!(answered["error"]["message"], format!("{path} is required"));
            let stored = app
                .store()
                .read(|tx| Ok(tx.green_lot(lot)?))
                .unwrap()
                .expect("stored");
            assert_eq!(stored.stock.weight().amount(), Decimal::from(10));
        }
    }
}
