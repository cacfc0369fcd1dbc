//! inventory.green.

use actix_web::HttpResponse;
use roastery_app::due_diligence::SetDueDiligence;
use roastery_app::green_lot::{ImportGreenLot, SetGreenLotWeight, TransferGreenLot};
use roastery_domain::due_diligence::{
    DueDiligence, DueDiligenceInput, Statement, StatementInput, SupplierInput,
};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::shared::{Shared, SharedJson};
use crate::wire::{
    DateFrom, GreenLotDto, Instant, NameDto, NameRef, PriceDto, ReadRequest, WeightDto,
    WriteRequest, names, price_input, required, weight_input,
};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocationExternalRef {
    #[schema(value_type = String, required = true)]
    pub external_id: Option<String>,
}

/// Green lot details as importers give them and `getGreenLotDetailsByIds` returns them.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailsData {
    pub note: Option<String>,
    pub grade: Option<String>,
    pub crop_year: Option<String>,
    pub processing_methods: Option<Vec<String>>,
    /// ISO 3166-1 alpha-3 codes.
    pub countries_of_origin: Option<Vec<String>>,
    pub varieties: Option<Vec<NameRef>>,
    pub certifications: Option<Vec<NameRef>>,
}

impl DetailsData {
    fn into_details(self) -> Result<GreenLotDetails, ApiError> {
        Ok(GreenLotDetails {
            note: self.note,
            grade: self.grade,
            crop_year: self.crop_year,
            processing_methods: self.processing_methods.unwrap_or_default(),
            countries_of_origin: self.countries_of_origin.unwrap_or_default(),
            varieties: names(self.varieties, "data.details.varieties")?,
            certifications: names(self.certifications, "data.details.certifications")?,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportGreenLotData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(value_type = String, required = true)]
    pub external_id: Option<String>,
    #[schema(value_type = WeightDto, required = true)]
    pub weight: Option<WeightDto>,
    pub ico_number: Option<String>,
    pub price: Option<PriceDto>,
    pub location: Option<LocationExternalRef>,
    pub location_id: Option<Uuid>,
    pub projects: Option<Vec<NameRef>>,
    pub details: Option<DetailsData>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferData {
    #[schema(value_type = Uuid, required = true)]
    pub green_lot_id: Option<Uuid>,
    #[schema(value_type = WeightDto, required = true)]
    pub weight: Option<WeightDto>,
    #[schema(value_type = Uuid, required = true)]
    pub destination_location_id: Option<Uuid>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetWeightData {
    #[schema(value_type = Uuid, required = true)]
    pub green_lot_id: Option<Uuid>,
    #[schema(value_type = WeightDto, required = true)]
    pub weight: Option<WeightDto>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListFilter {
    pub last_modified_date: Option<DateFrom>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailsFilter {
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub green_lot_ids: Option<Vec<Uuid>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotResult {
    pub green_lot: GreenLotDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferResult {
    pub source_green_lot: GreenLotDto,
    pub destination_green_lot: GreenLotDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotsResult {
    pub green_lots: Vec<GreenLotDto>,
}

/// `{"from", "to"}`: dates `YYYY-MM-DD`, from ≤ to.
#[derive(Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ProductionPeriodDto {
    #[schema(value_type = String, format = Date, required = true)]
    pub from: Option<String>,
    #[schema(value_type = String, format = Date, required = true)]
    pub to: Option<String>,
}

/// A supplier as `setDueDiligence` takes it: only `name` is required.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupplierData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    pub address: Option<String>,
    pub email: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: Option<String>,
}

/// A statement as `setDueDiligence` takes it: `verificationNumber` may be left out.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatementData {
    /// 1–50 letters or digits, unique within a lot.
    #[schema(value_type = String, required = true)]
    pub reference_number: Option<String>,
    /// 1–50 letters or digits.
    pub verification_number: Option<String>,
    /// `DDS` or `SIMPLIFIED_DECLARATION`.
    #[schema(value_type = String, required = true)]
    pub kind: Option<String>,
    /// `OWN` (filed by this business) or `UPSTREAM` (received from the supplier).
    #[schema(value_type = String, required = true)]
    pub role: Option<String>,
}

/// A supplier as answered: every field present (null when unknown).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupplierDto {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(required = true)]
    pub address: Option<String>,
    #[schema(required = true)]
    pub email: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[schema(required = true)]
    pub country: Option<String>,
}

/// A statement as answered: every field present (null when unknown).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatementDto {
    /// 1–50 letters or digits, unique within a lot.
    #[schema(value_type = String, required = true)]
    pub reference_number: Option<String>,
    #[schema(required = true)]
    pub verification_number: Option<String>,
    /// `DDS` or `SIMPLIFIED_DECLARATION`.
    #[schema(value_type = String, required = true)]
    pub kind: Option<String>,
    /// `OWN` (filed by this business) or `UPSTREAM` (received from the supplier).
    #[schema(value_type = String, required = true)]
    pub role: Option<String>,
    /// What the EU information system last said of the statement; null until verified.
    /// Answered only (ignored in requests).
    #[serde(default)]
    #[schema(required = true)]
    pub verification: Option<VerificationDto>,
}

/// `{"result", "status", "checkedDate"}`
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationDto {
    /// `EXISTING_USABLE`, `EXISTING_NON_USABLE` or `NON_EXISTENT`.
    pub result: String,
    /// The statement's status in the IS, or null.
    #[schema(required = true)]
    pub status: Option<String>,
    pub checked_date: Instant,
}

impl From<Statement> for StatementDto {
    fn from(s: Statement) -> Self {
        Self {
            reference_number: Some(s.reference_number),
            verification_number: s.verification_number,
            kind: Some(s.kind.as_str().to_owned()),
            role: Some(s.role.as_str().to_owned()),
            verification: s.verification.map(|v| VerificationDto {
                result: v.result,
                status: v.status,
                checked_date: v.checked_date.into(),
            }),
        }
    }
}

/// The EUDR due diligence of a source green lot (api-decisions §12).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DueDiligenceDto {
    pub hs_code: String,
    pub country_of_production: String,
    pub production_period: ProductionPeriodDto,
    /// GeoJSON `FeatureCollection`.
    #[schema(value_type = Object)]
    pub plots: SharedJson,
    pub suppliers: Vec<SupplierDto>,
    pub statements: Vec<StatementDto>,
    pub updated_date: Instant,
}

impl DueDiligenceDto {
    /// Its plots, a GeoJSON (RFC 7946) `FeatureCollection` of Point, MultiPoint, Polygon or
    /// MultiPolygon features answered as stored (coordinates with the digits they were sent
    /// with), are shared with the answer's body.
    pub fn new(d: DueDiligence, shared: &mut Shared) -> Self {
        Self {
            plots: shared.json(d.plots.into_answer()),
            hs_code: d.hs_code,
            country_of_production: d.country_of_production,
            production_period: ProductionPeriodDto {
                from: Some(d.production_period.from.to_string()),
                to: Some(d.production_period.to.to_string()),
            },
            suppliers: d
                .suppliers
                .into_iter()
                .map(|s| SupplierDto {
                    name: Some(s.name),
                    address: s.address,
                    email: s.email,
                    country: s.country,
                })
                .collect(),
            statements: d.statements.into_iter().map(Into::into).collect(),
            updated_date: d.updated_date.into(),
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetDueDiligenceData {
    #[schema(value_type = Uuid, required = true)]
    pub green_lot_id: Option<Uuid>,
    /// ISO 3166-1 alpha-2, upper case.
    #[schema(value_type = String, required = true)]
    pub country_of_production: Option<String>,
    #[schema(value_type = ProductionPeriodDto, required = true)]
    pub production_period: Option<ProductionPeriodDto>,
    /// GeoJSON `FeatureCollection` of 1–10,000 plots.
    #[schema(value_type = Object, required = true)]
    #[serde(default, deserialize_with = "crate::wire::raw_object")]
    pub plots: Option<Box<RawValue>>,
    pub suppliers: Option<Vec<SupplierData>>,
    pub statements: Option<Vec<StatementData>>,
    /// Six digits beginning `0901`; `090111` when absent.
    pub hs_code: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotWithDetailsDto {
    #[serde(flatten)]
    pub lot: GreenLotDto,
    pub details: GreenLotDetailsDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DueDiligenceResult {
    pub green_lot: GreenLotWithDetailsDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotDetailsDto {
    pub green_lot_id: Uuid,
    #[schema(required = true)]
    pub note: Option<String>,
    #[schema(required = true)]
    pub grade: Option<String>,
    #[schema(required = true)]
    pub crop_year: Option<String>,
    pub processing_methods: Vec<String>,
    pub countries_of_origin: Vec<String>,
    pub varieties: Vec<NameDto>,
    pub certifications: Vec<NameDto>,
    /// EUDR due diligence of a source lot; null until set.
    #[schema(required = true)]
    pub due_diligence: Option<DueDiligenceDto>,
}

impl GreenLotDetailsDto {
    pub(super) fn new(
        (green_lot_id, d, due_diligence): (Uuid, GreenLotDetails, Option<DueDiligence>),
        shared: &mut Shared,
    ) -> Self {
        let named = |list: Vec<String>| list.into_iter().map(|name| NameDto { name }).collect();
        Self {
            green_lot_id,
            note: d.note,
            grade: d.grade,
            crop_year: d.crop_year,
            processing_methods: d.processing_methods,
            countries_of_origin: d.countries_of_origin,
            varieties: named(d.varieties),
            certifications: named(d.certifications),
            due_diligence: due_diligence.map(|d| DueDiligenceDto::new(d, shared)),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotDetailsResult {
    pub green_lot_details: Vec<GreenLotDetailsDto>,
}

pub(super) async fn import_green_lot<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ImportGreenLotData>>(body)?.data()?;
    let name = required(data.name, "data.name")?;
    let external_id = required(data.external_id, "data.externalId")?;
    let weight = weight_input(data.weight, "data.weight")?;
    let price = data
        .price
        .map(|p| price_input(p, "data.price"))
        .transpose()?;
    let location_external_id = data
        .location
        .map(|l| required(l.external_id, "data.location.externalId"))
        .transpose()?;
    let cmd = ImportGreenLot {
        name: Some(name),
        external_id: Some(external_id),
        weight,
        ico_number: data.ico_number,
        price,
        location_id: data.location_id,
        location_external_id,
        projects: names(data.projects, "data.projects")?,
        details: data.details.unwrap_or_default().into_details()?,
    };
    let view = ctx.run(move |app| app.import_green_lot(cmd)).await?;
    ctx.ok(GreenLotResult {
        green_lot: view.into(),
    })
}

pub(super) async fn transfer<S: Store>(ctx: Ctx<S>, body: &[u8]) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<TransferData>>(body)?.data()?;
    let cmd = TransferGreenLot {
        green_lot_id: required(data.green_lot_id, "data.greenLotId")?,
        weight: weight_input(data.weight, "data.weight")?,
        destination_location_id: required(
            data.destination_location_id,
            "data.destinationLocationId",
        )?,
    };
    let moved = ctx.run(move |app| app.transfer_green_lot(cmd)).await?;
    ctx.ok(TransferResult {
        source_green_lot: moved.source.into(),
        destination_green_lot: moved.destination.into(),
    })
}

pub(super) async fn set_weight<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetWeightData>>(body)?.data()?;
    let cmd = SetGreenLotWeight {
        green_lot_id: required(data.green_lot_id, "data.greenLotId")?,
        weight: weight_input(data.weight, "data.weight")?,
    };
    let view = ctx.run(move |app| app.set_green_lot_weight(cmd)).await?;
    ctx.ok(GreenLotResult {
        green_lot: view.into(),
    })
}

pub(super) async fn list_green_lots<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListFilter>>(body)?.into_parts();
    let from = filter
        .and_then(|f| f.last_modified_date)
        .and_then(|d| d.from)
        .map(|i| i.0);
    let page = ctx.page_request(&pagination)?;
    if let Some(stored) = ctx
        .read(move |app| app.green_lot_listing(from, page))
        .await?
    {
        return ctx.stored_page("greenLots", stored);
    }
    let page = ctx.run(move |app| app.list_green_lots(from, page)).await?;
    ctx.page(
        GreenLotsResult {
            green_lots: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

pub(super) async fn details_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<DetailsFilter>>(body)?.into_parts();
    let filter = required(filter, "params.filter")?;
    let ids = required(filter.green_lot_ids, "params.filter.greenLotIds")?;
    let page = ctx.page_request(&pagination)?;
    let page = ctx
        .run(move |app| app.green_lot_details_by_ids(ids, page))
        .await?;
    let mut shared = Shared::default();
    let result = GreenLotDetailsResult {
        green_lot_details: page
            .items
            .into_iter()
            .map(|item| GreenLotDetailsDto::new(item, &mut shared))
            .collect(),
    };
    ctx.page_shared(result, page.next, shared)
}

pub(super) async fn set_due_diligence<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetDueDiligenceData>>(body)?.data()?;
    let green_lot_id = required(data.green_lot_id, "data.greenLotId")?;
    let country = required(data.country_of_production, "data.countryOfProduction")?;
    let period = required(data.production_period, "data.productionPeriod")?;
    let from = required(period.from, "data.productionPeriod.from")?;
    let to = required(period.to, "data.productionPeriod.to")?;
    let plots = required(data.plots, "data.plots")?;
    let suppliers = data
        .suppliers
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(SupplierInput {
                name: required(s.name, &format!("data.suppliers[{i}].name"))?,
                address: s.address,
                email: s.email,
                country: s.country,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let statements = data
        .statements
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let field = |name: &str| format!("data.statements[{i}].{name}");
            Ok(StatementInput {
                reference_number: required(s.reference_number, &field("referenceNumber"))?,
                verification_number: s.verification_number,
                kind: required(s.kind, &field("kind"))?,
                role: required(s.role, &field("role"))?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let cmd = SetDueDiligence {
        green_lot_id,
        input: DueDiligenceInput {
            country_of_production: country,
            production_from: from,
            production_to: to,
            plots: plots.get().to_owned(),
            suppliers,
            statements,
            hs_code: data.hs_code,
        },
    };
    let set = ctx.run(move |app| app.set_due_diligence(cmd)).await?;
    let mut shared = Shared::default();
    let details = GreenLotDetailsDto::new(
        (set.view.lot.id, set.details, set.due_diligence),
        &mut shared,
    );
    let result = DueDiligenceResult {
        green_lot: GreenLotWithDetailsDto {
            lot: set.view.into(),
            details,
        },
    };
    ctx.ok_shared(result, shared)
}

#[cfg(test)]
mod handler_tests {
    use roastery_app::Roastery;
    use roastery_domain::due_diligence::{StatementKind, StatementRole};
    use roastery_ports::repo::DueDiligenceRepo;
    use roastery_ports::testing::InMemoryStore;
    use serde_json::{Value, json};

    use super::*;
    use crate::call::testing::{answer, call, green_lot_at};
    use crate::ops::Operation;

    const PLOTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.60,2.050]},"properties":{"Area":2}}]}"#;

    /// The request's bytes, with `"@plots"` standing for [`PLOTS`] as written (serde_json
    /// would write its numbers shorter).
    fn body(value: &Value) -> Vec<u8> {
        value.to_string().replace("\"@plots\"", PLOTS).into_bytes()
    }

    /// A source green lot: one imported.
    fn source_lot(app: &Roastery<InMemoryStore>) -> Uuid {
        green_lot_at(app, 10).1
    }

    /// A request with only the required fields.
    fn minimal(lot: Uuid) -> Value {
        json!({"data": {
            "greenLotId": lot,
            "countryOfProduction": "CO",
            "productionPeriod": {"from": "2025-10-01", "to": "2026-02-28"},
            "plots": "@plots",
        }})
    }

    fn stored(app: &Roastery<InMemoryStore>, lot: Uuid) -> Option<DueDiligence> {
        app.store()
            .read(|tx| Ok(tx.due_diligence_of(&[lot])?))
            .unwrap()
            .into_iter()
            .find(|(id, _)| *id == lot)
            .map(|(_, d)| d)
    }

    /// Every field sent reaches the use case under its wire name, the optional ones included,
    /// and the answer writes the stored due diligence back under the same names.
    #[actix_web::test]
    async fn set_due_diligence_maps_every_field_in_and_back() {
        let (ctx, app) = call(Operation::SetDueDiligence);
        let lot = source_lot(&app);
        let mut request = minimal(lot);
        request["data"]["hsCode"] = json!("090121");
        request["data"]["suppliers"] = json!([{
            "name": "Finca El Mirador",
            "address": "Vereda La Union, Pitalito",
            "email": "finca@example.com",
            "country": "CO"
        }]);
        request["data"]["statements"] = json!([{
            "referenceNumber": "25COABC123",
            "verificationNumber": "VX12345",
            "kind": "SIMPLIFIED_DECLARATION",
            "role": "UPSTREAM"
        }]);
        let (status, answered) = answer(set_due_diligence(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");

        let d = stored(&app, lot).expect("stored");
        assert_eq!(d.hs_code, "090121");
        assert_eq!(d.country_of_production, "CO");
        assert_eq!(d.production_period.from.to_string(), "2025-10-01");
        assert_eq!(d.production_period.to.to_string(), "2026-02-28");
        assert!(
            d.plots.answer().contains("[-75.60,2.050]"),
            "{}",
            d.plots.answer()
        );
        let s = &d.suppliers[0];
        assert_eq!(s.name, "Finca El Mirador");
        assert_eq!(s.address.as_deref(), Some("Vereda La Union, Pitalito"));
        assert_eq!(s.email.as_deref(), Some("finca@example.com"));
        assert_eq!(s.country.as_deref(), Some("CO"));
        let st = &d.statements[0];
        assert_eq!(st.reference_number, "25COABC123");
        assert_eq!(st.verification_number.as_deref(), Some("VX12345"));
        assert_eq!(st.kind, StatementKind::SimplifiedDeclaration);
        assert_eq!(st.role, StatementRole::Upstream);

        let lot_answered = &answered["result"]["greenLot"];
        assert_eq!(lot_answered["id"], json!(lot), "{answered}");
        assert_eq!(lot_answered["details"]["greenLotId"], json!(lot));
        let dd = &lot_answered["details"]["dueDiligence"];
        assert_eq!(dd["hsCode"], "090121", "{answered}");
        assert_eq!(dd["countryOfProduction"], "CO");
        assert_eq!(
            dd["productionPeriod"],
            json!({"from": "2025-10-01", "to": "2026-02-28"})
        );
        assert_eq!(dd["plots"], serde_json::from_str::<Value>(PLOTS).unwrap());
        assert_eq!(dd["suppliers"], request["data"]["suppliers"]);
        assert_eq!(
            dd["statements"],
            json!([{
                "referenceNumber": "25COABC123",
                "verificationNumber": "VX12345",
                "kind": "SIMPLIFIED_DECLARATION",
                "role": "UPSTREAM",
                "verification": null
            }])
        );
        assert!(dd["updatedDate"].is_string(), "{answered}");
    }

    /// The contract's optional fields may be left out: `suppliers` and `statements` default to
    /// none, `hsCode` to `090111`, a supplier needs only its name and a statement no
    /// verification number; each left-out field is answered as null.
    #[actix_web::test]
    async fn set_due_diligence_takes_the_optional_fields_left_out() {
        let (ctx, app) = call(Operation::SetDueDiligence);
        let lot = source_lot(&app);
        let (status, answered) = answer(set_due_diligence(ctx, &body(&minimal(lot))).await).await;
        assert_eq!(status, 200, "{answered}");
        let dd = &answered["result"]["greenLot"]["details"]["dueDiligence"];
        assert_eq!(dd["hsCode"], "090111", "{answered}");
        assert_eq!(dd["suppliers"], json!([]));
        assert_eq!(dd["statements"], json!([]));

        let (ctx, app) = call(Operation::SetDueDiligence);
        let lot = source_lot(&app);
        let mut request = minimal(lot);
        request["data"]["suppliers"] = json!([{"name": "Finca El Mirador"}]);
        request["data"]["statements"] =
            json!([{"referenceNumber": "25COABC123", "kind": "DDS", "role": "OWN"}]);
        let (status, answered) = answer(set_due_diligence(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");
        let dd = &answered["result"]["greenLot"]["details"]["dueDiligence"];
        assert_eq!(
            dd["suppliers"],
            json!([{"name": "Finca El Mirador", "address": null, "email": null, "country": null}]),
            "{answered}"
        );
        assert_eq!(dd["statements"][0]["verificationNumber"], Value::Null);
        assert_eq!(dd["statements"][0]["kind"], "DDS");
        assert_eq!(dd["statements"][0]["role"], "OWN");
        let d = stored(&app, lot).expect("stored");
        assert_eq!(d.suppliers[0].address, None);
        assert_eq!(d.statements[0].verification_number, None);
    }

    /// A change to a complete request.
    type Change = Box<dyn Fn(&mut Value)>;

    /// A required field left out, or sent under another spelling than its camelCase wire name,
    /// is named by its path in the request, and nothing is stored.
    #[actix_web::test]
    async fn set_due_diligence_names_the_missing_field_by_its_path() {
        let supplier = json!({"name": "Finca El Mirador"});
        let statement = json!({"referenceNumber": "25COABC123", "kind": "DDS", "role": "OWN"});
        let without = |field: &str, value: &Value| {
            let mut v = value.clone();
            v.as_object_mut().map(|o| o.remove(field));
            v
        };
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|r| drop(r["data"].as_object_mut().map(|o| o.remove("greenLotId")))),
                "data.greenLotId",
            ),
            (
                Box::new(|r| {
                    let data = r["data"].as_object_mut().unwrap();
                    let country = data.remove("countryOfProduction").unwrap();
                    data.insert("country_of_production".into(), country);
                }),
                "data.countryOfProduction",
            ),
            (
                Box::new(|r| {
                    drop(
                        r["data"]
                            .as_object_mut()
                            .map(|o| o.remove("productionPeriod")),
                    )
                }),
                "data.productionPeriod",
            ),
            (
                Box::new(|r| r["data"]["productionPeriod"] = json!({"to": "2026-02-28"})),
                "data.productionPeriod.from",
            ),
            (
                Box::new(|r| r["data"]["productionPeriod"] = json!({"from": "2025-10-01"})),
                "data.productionPeriod.to",
            ),
            (
                Box::new(|r| drop(r["data"].as_object_mut().map(|o| o.remove("plots")))),
                "data.plots",
            ),
            (
                Box::new({
                    let s = without("name", &supplier);
                    let supplier = supplier.clone();
                    move |r| r["data"]["suppliers"] = json!([supplier, s])
                }),
                "data.suppliers[1].name",
            ),
            (
                Box::new({
                    let s = without("referenceNumber", &statement);
                    move |r| r["data"]["statements"] = json!([s])
                }),
                "data.statements[0].referenceNumber",
            ),
            (
                Box::new({
                    let s = without("kind", &statement);
                    move |r| r["data"]["statements"] = json!([s])
                }),
                "data.statements[0].kind",
            ),
            (
                Box::new({
                    let s = without("role", &statement);
                    let statement = statement.clone();
                    move |r| r["data"]["statements"] = json!([statement, s])
                }),
                "data.statements[1].role",
            ),
        ];
        for (change, path) in cases {
            let (ctx, app) = call(Operation::SetDueDiligence);
            let lot = source_lot(&app);
            let mut request = minimal(lot);
            change(&mut request);
            let (status, answered) = answer(set_due_diligence(ctx, &body(&request)).await).await;
            assert_eq!(status, 400, "{path}: {answered}");
            assert_eq!(answered["error"]["code"], "missing_parameter", "{answered}");
            assert_eq!(
                answered["error"]["message"],
                format!("{path} is required"),
                "{answered}"
            );
            assert!(stored(&app, lot).is_none(), "{path}");
        }
    }
}
