//! inventory.green.

use actix_web::HttpResponse;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_ports::Store;
use roastery_ports::green_lot::{ImportGreenLot, SetGreenLotWeight, TransferGreenLot};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    DateFrom, GreenLotDto, NameDto, NameRef, PriceDto, ReadRequest, WeightDto, WriteRequest, names,
    price_input, required, weight_input,
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
}

impl From<(Uuid, GreenLotDetails)> for GreenLotDetailsDto {
    fn from((green_lot_id, d): (Uuid, GreenLotDetails)) -> Self {
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
    ctx.page(
        GreenLotDetailsResult {
            green_lot_details: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
