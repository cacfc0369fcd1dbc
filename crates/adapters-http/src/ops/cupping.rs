//! quality.cupping: cuppings, their cupped coffees with result summaries, and cupping results.

use actix_web::HttpResponse;
use roastery_app::cupping::{
    CreateCupping, CuppingView, RecordCuppingResults, ResultInput, SetCuppingState,
};
use roastery_domain::cupping::CuppingState;
use roastery_domain::cupping_result::{CuppingResult, NewSensorialAttribute, ScoringState};
use roastery_ports::Store;
use roastery_ports::repo::CuppingFilter;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, DateRange, Instant, LotRefDto, NameRef, ReadRequest, WriteRequest, required, rule,
};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultSummaryDto {
    #[schema(required = true)]
    pub average_score: Option<Amount>,
    pub result_count: usize,
    #[schema(required = true)]
    pub min_score: Option<Amount>,
    #[schema(required = true)]
    pub max_score: Option<Amount>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppedCoffeeDto {
    pub id: Uuid,
    pub cupped_coffee_number: String,
    /// Equals `resultSummary.averageScore`; null without included results.
    #[schema(required = true)]
    pub average_score: Option<Amount>,
    pub cupped_lot: LotRefDto,
    pub result_summary: ResultSummaryDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppingDto {
    pub id: Uuid,
    pub cupping_number: String,
    pub start_date: Instant,
    /// `DRAFT`, `OPEN` or `CLOSED`.
    pub state: String,
    pub cupping_sheet: NameRef,
    pub cupped_coffees: Vec<CuppedCoffeeDto>,
}

impl From<CuppingView> for CuppingDto {
    fn from(v: CuppingView) -> Self {
        let cupped_coffees = v
            .coffees()
            .map(|(cc, s)| CuppedCoffeeDto {
                id: cc.id,
                cupped_coffee_number: cc.display_number(),
                average_score: s.average_score.map(Amount),
                cupped_lot: cc.lot.into(),
                result_summary: ResultSummaryDto {
                    average_score: s.average_score.map(Amount),
                    result_count: s.result_count,
                    min_score: s.min_score.map(Amount),
                    max_score: s.max_score.map(Amount),
                },
            })
            .collect();
        let c = v.cupping;
        Self {
            id: c.id(),
            cupping_number: c.display_number(),
            start_date: c.start_date().into(),
            state: c.state().as_str().to_owned(),
            cupping_sheet: NameRef {
                name: Some(c.cupping_sheet().to_owned()),
            },
            cupped_coffees,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorialAttributeDto {
    pub name: String,
    pub score: Amount,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppingResultDto {
    pub id: Uuid,
    pub cupped_coffee_id: Uuid,
    #[schema(required = true)]
    pub note: Option<String>,
    pub final_score: Amount,
    /// `INCLUDED` or `EXCLUDED`.
    pub scoring_state: String,
    #[schema(required = true)]
    pub evaluator: Option<NameRef>,
    pub sensorial_attributes: Vec<SensorialAttributeDto>,
}

impl From<CuppingResult> for CuppingResultDto {
    fn from(r: CuppingResult) -> Self {
        Self {
            id: r.id,
            cupped_coffee_id: r.cupped_coffee_id,
            note: r.note,
            final_score: Amount(r.final_score.value()),
            scoring_state: r.scoring_state.as_str().to_owned(),
            evaluator: r.evaluator.map(|name| NameRef { name: Some(name) }),
            sensorial_attributes: r
                .sensorial_attributes
                .into_iter()
                .map(|a| SensorialAttributeDto {
                    name: a.name,
                    score: Amount(a.score.value()),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CuppingResultEnvelope {
    pub cupping: CuppingDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CuppingsResult {
    pub cuppings: Vec<CuppingDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppingResultsResult {
    pub cupping_results: Vec<CuppingResultDto>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoffeeInput {
    #[schema(value_type = Uuid, required = true)]
    pub lot_id: Option<Uuid>,
    #[serde(rename = "type")]
    #[schema(value_type = String, required = true)]
    pub lot_type: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCuppingData {
    #[schema(value_type = Instant, required = true)]
    pub start_date: Option<Instant>,
    #[schema(value_type = NameRef, required = true)]
    pub cupping_sheet: Option<NameRef>,
    /// `DRAFT` (default) or `OPEN`.
    pub state: Option<String>,
    #[schema(value_type = Vec<CoffeeInput>, required = true)]
    pub coffees: Option<Vec<CoffeeInput>>,
}

fn state(value: &str, field: &str) -> Result<CuppingState, ApiError> {
    CuppingState::parse(value).map_err(|e| rule(field, e))
}

pub(super) async fn create_cupping<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<CreateCuppingData>>(body)?.data()?;
    let sheet = required(data.cupping_sheet, "data.cuppingSheet")?;
    let coffees = required(data.coffees, "data.coffees")?
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let field = format!("data.coffees[{i}]");
            let id = required(c.lot_id, &format!("{field}.lotId"))?;
            LotRefDto::parse(Some(id), c.lot_type, &field)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cmd = CreateCupping {
        start_date: required(data.start_date, "data.startDate")?.0,
        cupping_sheet: required(sheet.name, "data.cuppingSheet.name")?,
        state: data.state.map(|s| state(&s, "data.state")).transpose()?,
        coffees,
    };
    let view = ctx.run(move |app| app.create_cupping(cmd)).await?;
    ctx.ok(CuppingResultEnvelope {
        cupping: view.into(),
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetCuppingStateData {
    #[schema(value_type = Uuid, required = true)]
    pub cupping_id: Option<Uuid>,
    #[schema(value_type = String, required = true)]
    pub state: Option<String>,
}

pub(super) async fn set_cupping_state<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetCuppingStateData>>(body)?.data()?;
    let cmd = SetCuppingState {
        cupping_id: required(data.cupping_id, "data.cuppingId")?,
        state: state(&required(data.state, "data.state")?, "data.state")?,
    };
    let view = ctx.run(move |app| app.set_cupping_state(cmd)).await?;
    ctx.ok(CuppingResultEnvelope {
        cupping: view.into(),
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorialAttributeInput {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(value_type = Amount, required = true)]
    pub score: Option<Amount>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultData {
    #[schema(value_type = Uuid, required = true)]
    pub cupped_coffee_id: Option<Uuid>,
    pub evaluator: Option<NameRef>,
    /// 0 to 100.
    #[schema(value_type = Amount, required = true)]
    pub final_score: Option<Amount>,
    /// `INCLUDED` (default) or `EXCLUDED`.
    pub scoring_state: Option<String>,
    pub note: Option<String>,
    pub sensorial_attributes: Option<Vec<SensorialAttributeInput>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordCuppingResultsData {
    #[schema(value_type = Uuid, required = true)]
    pub cupping_id: Option<Uuid>,
    #[schema(value_type = Vec<ResultData>, required = true)]
    pub results: Option<Vec<ResultData>>,
}

fn result_input(i: usize, r: ResultData) -> Result<ResultInput, ApiError> {
    let field = format!("data.results[{i}]");
    let sensorial_attributes = r
        .sensorial_attributes
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(j, a)| {
            Ok(NewSensorialAttribute {
                name: required(a.name, &format!("{field}.sensorialAttributes[{j}].name"))?,
                score: Some(
                    required(a.score, &format!("{field}.sensorialAttributes[{j}].score"))?.0,
                ),
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(ResultInput {
        cupped_coffee_id: required(r.cupped_coffee_id, &format!("{field}.cuppedCoffeeId"))?,
        final_score: Some(required(r.final_score, &format!("{field}.finalScore"))?.0),
        scoring_state: r
            .scoring_state
            .map(|s| ScoringState::parse(&s).map_err(|e| rule(&format!("{field}.scoringState"), e)))
            .transpose()?,
        evaluator: r.evaluator.and_then(|e| e.name),
        note: r.note,
        sensorial_attributes,
    })
}

pub(super) async fn record_cupping_results<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<RecordCuppingResultsData>>(body)?.data()?;
    let cupping_id = required(data.cupping_id, "data.cuppingId")?;
    let results = required(data.results, "data.results")?
        .into_iter()
        .enumerate()
        .map(|(i, r)| result_input(i, r))
        .collect::<Result<Vec<_>, _>>()?;
    let cmd = RecordCuppingResults {
        cupping_id,
        results,
    };
    let recorded = ctx.run(move |app| app.record_cupping_results(cmd)).await?;
    ctx.ok(CuppingResultsResult {
        cupping_results: recorded.into_iter().map(Into::into).collect(),
    })
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListCuppingsFilter {
    pub start_date: Option<DateRange>,
    pub state: Option<String>,
}

pub(super) async fn list_cuppings<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListCuppingsFilter>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let range = filter.start_date.unwrap_or_default();
    let filter = CuppingFilter {
        start_from: range.from.map(|i| i.0),
        start_to: range.to.map(|i| i.0),
        state: filter
            .state
            .map(|s| state(&s, "params.filter.state"))
            .transpose()?,
    };
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_cuppings(filter, page)).await?;
    ctx.page(
        CuppingsResult {
            cuppings: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppingIdsFilter {
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub cupping_ids: Option<Vec<Uuid>>,
}

pub(super) async fn get_cuppings_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<CuppingIdsFilter>>(body)?.into_parts();
    let ids = required(
        filter.and_then(|f| f.cupping_ids),
        "params.filter.cuppingIds",
    )?;
    ctx.page_of(
        &pagination,
        move |app, page| app.get_cuppings_by_ids(ids, page),
        |items| CuppingsResult {
            cuppings: items.into_iter().map(Into::into).collect(),
        },
    )
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CuppedCoffeeIdsFilter {
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub cupped_coffee_ids: Option<Vec<Uuid>>,
}

pub(super) async fn list_cupping_results<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<CuppedCoffeeIdsFilter>>(body)?.into_parts();
    let ids = required(
        filter.and_then(|f| f.cupped_coffee_ids),
        "params.filter.cuppedCoffeeIds",
    )?;
    ctx.page_of(
        &pagination,
        move |app, page| app.list_cupping_results(ids, page),
        |items| CuppingResultsResult {
            cupping_results: items.into_iter().map(Into::into).collect(),
        },
    )
    .await
}

#[cfg(test)]
mod handler_tests {
    use chrono::{TimeZone, Utc};
    use roastery_app::Roastery;
    use roastery_domain::stock::{LotKind, TypedLotRef};
    use roastery_ports::repo::CuppingRepo;
    use roastery_ports::testing::InMemoryStore;
    use rust_decimal::Decimal;
    use serde_json::{Value, json};

    use super::*;
    use crate::call::testing::{answer, call, green_lot_at};
    use crate::ops::Operation;

    fn body(value: &Value) -> Vec<u8> {
        serde_json::to_vec(value).unwrap()
    }

    /// An open cupping of one green lot: `(cupping, cupped coffee)`.
    fn open_cupping(app: &Roastery<InMemoryStore>) -> (Uuid, Uuid) {
        let (_, lot) = green_lot_at(app, 10);
        let view = app
            .create_cupping(CreateCupping {
                start_date: Utc.with_ymd_and_hms(2026, 11, 20, 8, 0, 0).unwrap(),
                cupping_sheet: "SCA".into(),
                state: Some(CuppingState::Open),
                coffees: vec![TypedLotRef {
                    id: lot,
                    kind: LotKind::Green,
                }],
            })
            .unwrap();
        let coffee = view.cupping.coffees()[0].id;
        (view.cupping.id(), coffee)
    }

    fn stored(app: &Roastery<InMemoryStore>, coffee: Uuid) -> Vec<CuppingResult> {
        app.store()
            .read(|tx| Ok(tx.cupping_results(&[coffee])?))
            .unwrap()
    }

    /// Every field of a result, its sensorial attributes included, reaches the use case under
    /// its wire name, and the answer writes the recorded result back under the same names.
    #[actix_web::test]
    async fn record_cupping_results_maps_each_result_in_and_back() {
        let (ctx, app) = call(Operation::RecordCuppingResults);
        let (cupping, coffee) = open_cupping(&app);
        let sent = json!({
            "cuppedCoffeeId": coffee,
            "evaluator": {"name": "Ana"},
            "finalScore": 86.25,
            "scoringState": "EXCLUDED",
            "note": "calibration cup",
            "sensorialAttributes": [{"name": "Acidity", "score": 8.5}]
        });
        let request = json!({"data": {"cuppingId": cupping, "results": [sent]}});
        let (status, answered) = answer(record_cupping_results(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");

        let [r] = stored(&app, coffee).try_into().expect("one result");
        assert_eq!(r.evaluator.as_deref(), Some("Ana"));
        assert_eq!(r.final_score.value(), Decimal::new(8625, 2));
        assert_eq!(r.scoring_state, ScoringState::Excluded);
        assert_eq!(r.note.as_deref(), Some("calibration cup"));
        assert_eq!(r.sensorial_attributes[0].name, "Acidity");
        assert_eq!(r.sensorial_attributes[0].score.value(), Decimal::new(85, 1));

        let mut answered_result = answered["result"]["cuppingResults"][0].clone();
        let id = answered_result
            .as_object_mut()
            .and_then(|o| o.remove("id"))
            .unwrap_or_default();
        assert_eq!(id, json!(r.id), "{answered}");
        assert_eq!(answered_result, sent, "{answered}");
    }

    /// A result needs only its cupped coffee and final score: it is counted (`INCLUDED`),
    /// without evaluator, note or attributes, each answered as such.
    #[actix_web::test]
    async fn record_cupping_results_takes_the_optional_fields_left_out() {
        let (ctx, app) = call(Operation::RecordCuppingResults);
        let (cupping, coffee) = open_cupping(&app);
        let request = json!({"data": {"cuppingId": cupping,
            "results": [{"cuppedCoffeeId": coffee, "finalScore": 80}]}});
        let (status, answered) = answer(record_cupping_results(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");
        let r = &answered["result"]["cuppingResults"][0];
        assert_eq!(r["scoringState"], "INCLUDED", "{answered}");
        assert_eq!(r["evaluator"], Value::Null);
        assert_eq!(r["note"], Value::Null);
        assert_eq!(r["sensorialAttributes"], json!([]));
        assert_eq!(stored(&app, coffee).len(), 1);
    }

    /// A request's `data` for a cupping and its cupped coffee.
    type DataOf = fn(Uuid, Uuid) -> Value;

    /// A required field left out is named by its path, down to a sensorial attribute, and
    /// nothing is recorded.
    #[actix_web::test]
    async fn record_cupping_results_names_the_missing_field_by_its_path() {
        let cases: [(DataOf, &str); 6] = [
            (
                |_, coffee| json!({"results": [{"cuppedCoffeeId": coffee, "finalScore": 80}]}),
                "data.cuppingId",
            ),
            (|cupping, _| json!({"cuppingId": cupping}), "data.results"),
            (
                |cupping, _| json!({"cuppingId": cupping, "results": [{"finalScore": 80}]}),
                "data.results[0].cuppedCoffeeId",
            ),
            (
                |cupping, coffee| {
                    json!({"cuppingId": cupping, "results": [
                        {"cuppedCoffeeId": coffee, "finalScore": 80},
                        {"cuppedCoffeeId": coffee}
                    ]})
                },
                "data.results[1].finalScore",
            ),
            (
                |cupping, coffee| {
                    json!({"cuppingId": cupping, "results": [{"cuppedCoffeeId": coffee,
                        "finalScore": 80, "sensorialAttributes": [{"score": 8}]}]})
                },
                "data.results[0].sensorialAttributes[0].name",
            ),
            (
                |cupping, coffee| {
                    json!({"cuppingId": cupping, "results": [{"cuppedCoffeeId": coffee,
                    "finalScore": 80, "sensorialAttributes": [
                        {"name": "Body", "score": 8}, {"name": "Acidity"}
                    ]}]})
                },
                "data.results[0].sensorialAttributes[1].score",
            ),
        ];
        for (data, path) in cases {
            let (ctx, app) = call(Operation::RecordCuppingResults);
            let (cupping, coffee) = open_cupping(&app);
            let request = json!({"data": data(cupping, coffee)});
            let (status, answered) =
                answer(record_cupping_results(ctx, &body(&request)).await).await;
            assert_eq!(status, 400, "{path}: {answered}");
            assert_eq!(answered["error"]["code"], "missing_parameter", "{answered}");
            assert_eq!(answered["error"]["message"], format!("{path} is required"));
            assert!(stored(&app, coffee).is_empty(), "{path}");
        }
    }
}
