//! inventory.trace: the ledger and the genealogy of lots.

use actix_web::HttpResponse;
use roastery_app::due_diligence::DueDiligenceOf;
use roastery_app::epcis::EpcisOf;
use roastery_app::plan::CostOf;
use roastery_app::trace::{ListLedgerEntries, Trace, TraceLotView, TracedCupping};
use roastery_domain::cost::{Amounts, Cost, money6};
use roastery_domain::decimal::from_micros;
use roastery_domain::due_diligence::DueDiligenceReport;
use roastery_domain::ledger::{Direction, Edge, LedgerEntry, Reference};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::number;
use roastery_domain::stored_plots::range_within;
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

use super::green::{DueDiligenceDto, StatementDto};
use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::shared::{Shared, SharedJson};
use crate::wire::{
    Amount, DateRange, Instant, LocationRefDto, ReadRequest, WeightDto, required, rule,
};

/// `{"id", "type"}`: a lot (`INVENTORY_GREEN`, `INVENTORY_ROAST`, `INVENTORY_BLEND`) or an
/// `ORDER`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TraceRefDto {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub ref_type: &'static str,
}

impl From<Reference> for TraceRefDto {
    fn from(r: Reference) -> Self {
        Self {
            id: r.id(),
            ref_type: r.type_name(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntryDto {
    pub id: Uuid,
    pub lot: TraceRefDto,
    /// `OPENING`, `IMPORT`, `TRANSFER_OUT`, `TRANSFER_IN`, `SET_WEIGHT`, `ROAST_INPUT`,
    /// `ROAST_OUTPUT`, `BLEND_INPUT`, `BLEND_OUTPUT`, `SHIPMENT`.
    pub kind: &'static str,
    /// Signed, in the lot's unit.
    pub delta: WeightDto,
    pub weight_after: WeightDto,
    /// `namespace.operation`.
    pub operation: String,
    /// The other side of the move, or null.
    #[schema(required = true)]
    pub reference: Option<TraceRefDto>,
    pub client_id: String,
    pub created_date: Instant,
}

impl From<LedgerEntry> for LedgerEntryDto {
    fn from(e: LedgerEntry) -> Self {
        Self {
            id: e.id,
            lot: Reference::Lot(e.lot).into(),
            kind: e.kind.as_str(),
            delta: WeightDto {
                amount: Some(Amount(from_micros(e.delta_micros))),
                unit: Some(e.unit().as_str().to_owned()),
            },
            weight_after: e.weight_after.into(),
            operation: e.operation,
            reference: e.reference.map(Into::into),
            client_id: e.client_id,
            created_date: e.created_date.into(),
        }
    }
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerFilterData {
    pub lot_id: Option<Uuid>,
    pub created_date: Option<DateRange>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntriesResult {
    pub ledger_entries: Vec<LedgerEntryDto>,
}

pub(super) async fn list_ledger_entries<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<LedgerFilterData>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let range = filter.created_date.unwrap_or_default();
    let cmd = ListLedgerEntries {
        lot_id: filter.lot_id,
        created_from: range.from.map(|i| i.0),
        created_to: range.to.map(|i| i.0),
    };
    let page = ctx.page_request(&pagination)?;
    let page = ctx
        .run(move |app| app.list_ledger_entries(cmd, page))
        .await?;
    ctx.page(
        LedgerEntriesResult {
            ledger_entries: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceFilterData {
    #[schema(value_type = Uuid, required = true)]
    pub lot_id: Option<Uuid>,
    /// `UPSTREAM` or `DOWNSTREAM`.
    #[schema(value_type = String, required = true)]
    pub direction: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceLotDto {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub lot_type: &'static str,
    pub lot_number: String,
    pub name: String,
    pub weight: WeightDto,
    #[schema(required = true)]
    pub location: Option<LocationRefDto>,
    #[schema(required = true)]
    pub consumed_date: Option<Instant>,
    /// 0 for the asked lot; otherwise the smallest number of edges from it.
    pub depth: u32,
}

impl From<TraceLotView> for TraceLotDto {
    fn from(v: TraceLotView) -> Self {
        Self {
            id: v.lot.lot.id,
            lot_type: v.lot.lot.kind.reference_type(),
            lot_number: number(v.lot.lot.kind.prefix(), v.lot.lot_number),
            name: v.lot.name,
            weight: v.lot.weight.into(),
            location: v.location.map(|l| LocationRefDto {
                id: l.id,
                external_id: l.external_id,
            }),
            consumed_date: v.lot.consumed_at.map(Into::into),
            depth: v.depth,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TraceEdgeDto {
    /// The input side.
    pub from: TraceRefDto,
    pub to: TraceRefDto,
    /// `TRANSFER`, `ROAST`, `BLEND` or `SHIPMENT`.
    pub kind: &'static str,
    /// The weight that flowed, in the `from` lot's unit.
    pub weight: WeightDto,
    pub date: Instant,
}

impl From<Edge> for TraceEdgeDto {
    fn from(e: Edge) -> Self {
        Self {
            from: Reference::Lot(e.from).into(),
            to: e.to.into(),
            kind: e.kind.as_str(),
            weight: e.weight.into(),
            date: e.date.into(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceOrderDto {
    pub id: Uuid,
    pub external_id: String,
    #[schema(required = true)]
    pub customer: Option<String>,
    #[schema(required = true)]
    pub customer_type: Option<String>,
    pub status: String,
    #[schema(required = true)]
    pub shipped_date: Option<Instant>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceCuppingDto {
    pub id: Uuid,
    pub cupping_number: String,
    pub state: &'static str,
    pub cupped_lot: TraceRefDto,
}

impl From<TracedCupping> for TraceCuppingDto {
    fn from(c: TracedCupping) -> Self {
        Self {
            id: c.id,
            cupping_number: number(roastery_domain::cupping::CUPPING_PREFIX, c.number),
            state: c.state.as_str(),
            cupped_lot: Reference::Lot(c.cupped_lot).into(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TraceResult {
    pub lots: Vec<TraceLotDto>,
    pub edges: Vec<TraceEdgeDto>,
    pub orders: Vec<TraceOrderDto>,
    pub cuppings: Vec<TraceCuppingDto>,
}

impl From<Trace> for TraceResult {
    fn from(t: Trace) -> Self {
        Self {
            lots: t.lots.into_iter().map(Into::into).collect(),
            edges: t.edges.into_iter().map(Into::into).collect(),
            orders: t
                .orders
                .into_iter()
                .map(|o| TraceOrderDto {
                    id: o.id,
                    external_id: o.external_id,
                    customer: o.customer,
                    customer_type: o.customer_type.map(|t| t.as_str().to_owned()),
                    status: o.status.as_str().to_owned(),
                    shipped_date: o.shipped_date.map(Into::into),
                })
                .collect(),
            cuppings: t.cuppings.into_iter().map(Into::into).collect(),
        }
    }
}

pub(super) async fn trace_lot<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<TraceFilterData>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let lot_id = required(filter.lot_id, "params.filter.lotId")?;
    let direction = required(filter.direction, "params.filter.direction")?;
    let direction = Direction::parse(&direction).map_err(|e| rule("params.filter.direction", e))?;
    // Not `ctx.read`, although the store reads a trace at once: a deep genealogy takes long,
    // and an async worker must not wait on it.
    let trace = ctx.run(move |app| app.trace_lot(lot_id, direction)).await?;
    ctx.ok(TraceResult::from(trace))
}

/// Exactly one of `lotId` (a green, roasted or blended lot) or `orderId`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DueDiligenceFilterData {
    pub lot_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
}

/// `{"id", "type", "lotNumber", "name"}`
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLotDto {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub lot_type: &'static str,
    pub lot_number: String,
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceDueDiligenceDto {
    pub lot: SourceLotDto,
    #[schema(required = true)]
    pub due_diligence: Option<DueDiligenceDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MissingDto {
    pub id: Uuid,
    pub lot_number: String,
    /// `NO_DUE_DILIGENCE` or `NO_STATEMENT`.
    pub reason: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DueDiligenceReportResult {
    /// Every source green lot upstream, once, by lot number.
    pub sources: Vec<SourceDueDiligenceDto>,
    /// Every distinct statement of the sources, by reference number.
    pub statements: Vec<StatementDto>,
    /// One GeoJSON `FeatureCollection` of every source's plots.
    #[schema(value_type = Object)]
    pub plots: ReportPlotsDto,
    /// True when every source has due diligence with at least one statement.
    pub complete: bool,
    pub missing: Vec<MissingDto>,
}

/// `result.plots`: written whole, or feature by feature from slices of the sources' plots,
/// the same text either way (compact).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ReportPlotsDto {
    Whole(SharedJson),
    Features(FeatureCollectionDto),
}

/// A GeoJSON `FeatureCollection` as `Plots::to_json` writes it.
#[derive(Debug, Serialize)]
pub struct FeatureCollectionDto {
    #[serde(rename = "type")]
    kind: &'static str,
    features: Vec<FeatureDto>,
}

/// A GeoJSON `Feature` as `Plots::to_json` writes it.
#[derive(Debug, Serialize)]
pub struct FeatureDto {
    #[serde(rename = "type")]
    kind: &'static str,
    geometry: SharedJson,
    properties: Box<RawValue>,
}

impl DueDiligenceReportResult {
    /// The answer of `getDueDiligence`: the sources' plots shared with its body, and
    /// `result.plots` written from slices of them (no plot is held twice).
    pub fn new(r: DueDiligenceReport, shared: &mut Shared) -> Result<Self, ApiError> {
        let outside = || ApiError::internal("a plot's geometry outside its source's plots");
        // Each plot of `result.plots`: its source, where its geometry lies in the source's
        // plots, its properties.
        let placed = r
            .plots()
            .map_err(ApiError::internal)?
            .into_iter()
            .map(|plot| {
                let range = r
                    .sources
                    .get(plot.source)
                    .and_then(|s| s.due_diligence.as_ref())
                    .and_then(|d| range_within(d.plots.answer(), plot.geometry.get()))
                    .ok_or_else(outside)?;
                Ok((plot.source, range, plot.properties))
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        Self::of(r, shared, |plots_of| {
            let features = placed
                .into_iter()
                .map(|(source, range, properties)| {
                    let geometry = plots_of
                        .get(source)
                        .and_then(Option::as_ref)
                        .and_then(|plots| plots.slice(range))
                        .ok_or_else(outside)?;
                    Ok(FeatureDto {
                        kind: "Feature",
                        geometry,
                        properties,
                    })
                })
                .collect::<Result<_, ApiError>>()?;
            Ok(ReportPlotsDto::Features(FeatureCollectionDto {
                kind: "FeatureCollection",
                features,
            }))
        })
    }

    /// The result with `result.plots` written whole into one text (for the command line, which
    /// writes it indented: the plots are written compact in it, as in an answer).
    pub fn whole(r: DueDiligenceReport) -> Result<Self, ApiError> {
        let plots = r.plots_json().map_err(ApiError::internal)?;
        Self::of(r, &mut Shared::default(), |_| {
            Ok(ReportPlotsDto::Whole(SharedJson::new(plots)))
        })
    }

    /// The result of `r`, its `plots` made by `plots` from each source's shared plots (by
    /// source).
    fn of(
        r: DueDiligenceReport,
        shared: &mut Shared,
        plots: impl FnOnce(&[Option<SharedJson>]) -> Result<ReportPlotsDto, ApiError>,
    ) -> Result<Self, ApiError> {
        let mut plots_of = Vec::with_capacity(r.sources.len());
        let sources = r
            .sources
            .into_iter()
            .map(|s| {
                let due_diligence = s.due_diligence.map(|d| DueDiligenceDto::new(d, shared));
                plots_of.push(due_diligence.as_ref().map(|d| d.plots.clone()));
                SourceDueDiligenceDto {
                    lot: SourceLotDto {
                        id: s.lot.id,
                        lot_type: LotKind::Green.reference_type(),
                        lot_number: s.lot.lot_number,
                        name: s.lot.name,
                    },
                    due_diligence,
                }
            })
            .collect();
        Ok(Self {
            sources,
            statements: r.statements.into_iter().map(Into::into).collect(),
            plots: plots(&plots_of)?,
            complete: r.complete,
            missing: r
                .missing
                .into_iter()
                .map(|m| MissingDto {
                    id: m.id,
                    lot_number: m.lot_number,
                    reason: m.reason.as_str(),
                })
                .collect(),
        })
    }
}

pub(super) async fn due_diligence<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<DueDiligenceFilterData>>(body)?.into_parts();
    let filter = required(filter, "params.filter")?;
    let of = match (filter.lot_id, filter.order_id) {
        (Some(id), None) => DueDiligenceOf::Lot(id),
        (None, Some(id)) => DueDiligenceOf::Order(id),
        (None, None) => return Err(ApiError::missing_parameter("params.filter.lotId")),
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_parameter(
                "params.filter: give exactly one of lotId or orderId",
            ));
        }
    };
    let report = ctx.run(move |app| app.due_diligence_of(of)).await?;
    let mut shared = Shared::default();
    let result = DueDiligenceReportResult::new(report, &mut shared)?;
    ctx.ok_shared(result, shared)
}

// --- Costs (api-decisions §15) ------------------------------------------------------------------

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostFilterData {
    /// A green, roasted or blended lot; exactly one of `lotId` and `orderId`.
    pub lot_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
}

/// An amount of one currency, never converted.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoneyDto {
    pub currency: &'static str,
    pub amount: Amount,
}

fn money(amounts: Amounts) -> Vec<MoneyDto> {
    amounts
        .into_iter()
        .map(|(currency, amount)| MoneyDto {
            currency,
            amount: Amount(money6(amount)),
        })
        .collect()
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostLotRefDto {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub lot_type: &'static str,
    pub lot_number: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostInputDto {
    pub lot: CostLotRefDto,
    /// The weight it gave, in KG.
    pub weight: WeightDto,
    pub cost_per_kg: Vec<MoneyDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MissingPriceDto {
    pub id: Uuid,
    pub lot_number: String,
    /// `NO_PRICE`.
    pub reason: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostResult {
    pub cost_per_kg: Vec<MoneyDto>,
    pub total: Vec<MoneyDto>,
    /// Every green lot upstream has a price.
    pub complete: bool,
    pub missing: Vec<MissingPriceDto>,
    pub inputs: Vec<CostInputDto>,
}

impl From<Cost> for CostResult {
    fn from(c: Cost) -> Self {
        Self {
            cost_per_kg: money(c.cost_per_kg),
            total: money(c.total),
            complete: c.complete,
            missing: c
                .missing
                .into_iter()
                .map(|m| MissingPriceDto {
                    id: m.id,
                    lot_number: number(LotKind::Green.prefix(), m.lot_number),
                    reason: "NO_PRICE",
                })
                .collect(),
            inputs: c
                .inputs
                .into_iter()
                .map(|i| CostInputDto {
                    lot: CostLotRefDto {
                        id: i.lot.id,
                        lot_type: i.lot.kind.reference_type(),
                        lot_number: number(i.lot.kind.prefix(), i.lot_number),
                    },
                    weight: WeightDto::kg(i.weight),
                    cost_per_kg: money(i.cost_per_kg),
                })
                .collect(),
        }
    }
}

pub(super) async fn cost<S: Store>(ctx: Ctx<S>, body: &[u8]) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<CostFilterData>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let of = match (filter.lot_id, filter.order_id) {
        (Some(lot), None) => CostOf::Lot(lot),
        (None, Some(order)) => CostOf::Order(order),
        _ => {
            return Err(ApiError::invalid_parameter(
                "params.filter: give exactly one of lotId and orderId",
            ));
        }
    };
    let cost = ctx.run(move |app| app.cost(of)).await?;
    ctx.ok(CostResult::from(cost))
}

/// Exactly one of `lotId` (a green, roasted or blended lot, with `direction`, default
/// `UPSTREAM`) or `orderId` (what stands upstream of its shipments).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportEpcisFilterData {
    pub lot_id: Option<Uuid>,
    /// `UPSTREAM` (default) or `DOWNSTREAM`; with `lotId` only.
    pub direction: Option<String>,
    pub order_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ExportEpcisResult {
    /// A GS1 EPCIS 2.0 `EPCISDocument` (JSON-LD): `@context`, `type`, `schemaVersion` `2.0`,
    /// `creationDate`, `epcisBody.eventList` (api-decisions §16).
    #[schema(value_type = Object)]
    pub document: Box<RawValue>,
}

pub(super) async fn export_epcis<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<ExportEpcisFilterData>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let of = match (filter.lot_id, filter.order_id) {
        (Some(id), None) => {
            let direction = match filter.direction {
                None => Direction::Upstream,
                Some(d) => Direction::parse(&d).map_err(|e| rule("params.filter.direction", e))?,
            };
            EpcisOf::Lot(id, direction)
        }
        (None, Some(id)) => EpcisOf::Order(id),
        _ => {
            return Err(ApiError::invalid_parameter(
                "params.filter: give exactly one of lotId or orderId",
            ));
        }
    };
    // Not `ctx.read`: a deep genealogy takes long, and an async worker must not wait on it.
    let document = ctx.run(move |app| app.export_epcis(of)).await?;
    let document = RawValue::from_string(document).map_err(ApiError::internal)?;
    ctx.ok(ExportEpcisResult { document })
}

#[cfg(test)]
mod tests {
    use actix_web::body::{BodySize, MessageBody};
    use actix_web::http::header;
    use chrono::DateTime;
    use roastery_domain::due_diligence::{
        DueDiligence, DueDiligenceDraft, DueDiligenceInput, SourceDueDiligence, SourceLot,
        StatementInput, report,
    };
    use roastery_domain::stored_plots::StoredPlots;

    use super::*;
    use crate::wire::{Envelope, NoMeta};

    fn source(n: u128, due_diligence: Option<DueDiligence>) -> SourceDueDiligence {
        SourceDueDiligence {
            lot: SourceLot {
                id: Uuid::from_u128(n),
                lot_number: format!("PG-{n}"),
                number: i64::try_from(n).unwrap(),
                name: format!("Lot \"{n}\""),
            },
            due_diligence,
        }
    }

    /// Sources whose plots were written today, stored otherwise (wound clockwise, properties
    /// out of order, with brackets in their strings) and absent.
    fn sources() -> Vec<SourceDueDiligence> {
        let ring = |i: usize| {
            let (x, y) = (i % 100, i / 100);
            format!(
                r#"{{"type":"Feature","geometry":{{"type":"Polygon","coordinates":[[[{x}.1,{y}.1],[{x}.2,{y}.1],[{x}.2,{y}.2],[{x}.1,{y}.2],[{x}.1,{y}.1]]]}},"properties":{{"ProducerName":"Finca {i} ]}}"}}}}"#
            )
        };
        let features: Vec<String> = (0..300).map(ring).collect();
        let written = DueDiligenceDraft::parse(DueDiligenceInput {
            country_of_production: "CO".into(),
            production_from: "2025-10-01".into(),
            production_to: "2026-02-28".into(),
            plots: format!(
                r#"{{"type":"FeatureCollection","features":[{}]}}"#,
                features.join(",")
            ),
            statements: vec![StatementInput {
                reference_number: "A1".into(),
                verification_number: None,
                kind: "DDS".into(),
                role: "OWN".into(),
            }],
            ..DueDiligenceInput::default()
        })
        .unwrap()
        .decide(DateTime::UNIX_EPOCH);
        let legacy = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"lotNumber":"x","Z":"[{"},"geometry":{"type":"Polygon","coordinates":[[[0.1,0.1],[0.1,0.2],[0.2,0.2],[0.2,0.1],[0.1,0.1]]]}}]}"#;
        let legacy = DueDiligence {
            plots: StoredPlots::from_stored(legacy.to_owned()).unwrap(),
            country_of_production: "ET".into(),
            ..written.clone()
        };
        vec![
            source(1, Some(written)),
            source(2, None),
            source(3, Some(legacy)),
        ]
    }

    #[actix_web::test]
    async fn a_report_is_answered_as_written_whole_sharing_the_plots() {
        let mut shared = Shared::default();
        let spliced = DueDiligenceReportResult::new(report(sources()), &mut shared).unwrap();
        let answer = crate::shared::json_response(
            &Envelope {
                ok: true,
                result: spliced,
                meta: NoMeta {},
            },
            shared,
        )
        .unwrap();
        assert_eq!(
            answer.headers().get(header::CONTENT_TYPE).unwrap(),
            "application/json"
        );
        let BodySize::Sized(len) = answer.body().size() else {
            panic!("a body of known length");
        };
        let body = actix_web::body::to_bytes(answer.into_body()).await.unwrap();
        assert_eq!(len, u64::try_from(body.len()).unwrap());
        let whole = serde_json::to_vec(&Envelope {
            ok: true,
            result: DueDiligenceReportResult::whole(report(sources())).unwrap(),
            meta: NoMeta {},
        })
        .unwrap();
        assert!(body.len() > 100_000, "{}", body.len());
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&whole)
        );
    }
}
