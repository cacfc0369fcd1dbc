//! inventory.blend: creating blends from roasted lots and listing blended lots.

use actix_web::HttpResponse;
use roastery_app::blend::{BlendedLotView, CreateBlend};
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    DateFrom, Instant, LocationRefDto, LotSourceDto, NameRef, ObjectRefDto, ReadRequest,
    UsedLotData, WeightDto, WriteRequest, names, required, used_lots,
};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlendedLotDto {
    pub id: Uuid,
    pub lot_number: String,
    pub name: String,
    pub weight: WeightDto,
    pub roasted_lots: Vec<LotSourceDto>,
    pub location: LocationRefDto,
    pub blended_date: Instant,
    pub projects: Vec<ObjectRefDto>,
    #[schema(required = true)]
    pub consumed_date: Option<Instant>,
}

impl From<BlendedLotView> for BlendedLotDto {
    fn from(v: BlendedLotView) -> Self {
        let lot = v.lot;
        Self {
            id: lot.id,
            lot_number: lot.lot_number(),
            name: lot.name,
            weight: lot.stock.weight().into(),
            roasted_lots: lot.sources.into_iter().map(Into::into).collect(),
            location: v.location.into(),
            blended_date: lot.blended_date.into(),
            projects: lot.projects.into_iter().map(Into::into).collect(),
            consumed_date: lot.stock.consumed_at().map(Into::into),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlendedLotResult {
    pub blended_lot: BlendedLotDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlendedLotsResult {
    pub blended_lots: Vec<BlendedLotDto>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateBlendData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    #[schema(value_type = Uuid, required = true)]
    pub location_id: Option<Uuid>,
    #[schema(value_type = Instant, required = true)]
    pub blended_date: Option<Instant>,
    #[schema(value_type = Vec<UsedLotData>, required = true)]
    pub roasted_lots: Option<Vec<UsedLotData>>,
    pub projects: Option<Vec<NameRef>>,
}

pub(super) async fn create_blend<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<CreateBlendData>>(body)?.data()?;
    let cmd = CreateBlend {
        name: required(data.name, "data.name")?,
        location_id: required(data.location_id, "data.locationId")?,
        blended_date: required(data.blended_date, "data.blendedDate")?.0,
        roasted_lots: used_lots(data.roasted_lots, "data.roastedLots")?,
        projects: names(data.projects, "data.projects")?,
    };
    let view = ctx.run(move |app| app.create_blend(cmd)).await?;
    ctx.ok(BlendedLotResult {
        blended_lot: view.into(),
    })
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListBlendedLotsFilter {
    pub blended_date: Option<DateFrom>,
}

pub(super) async fn list_blended_lots<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListBlendedLotsFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let from = filter
        .and_then(|f| f.blended_date)
        .and_then(|d| d.from)
        .map(|i| i.0);
    if let Some(stored) = ctx
        .read(move |app| app.blended_lot_listing(from, page))
        .await?
    {
        return ctx.stored_page("blendedLots", stored);
    }
    let page = ctx
        .run(move |app| app.list_blended_lots(from, page))
        .await?;
    ctx.page(
        BlendedLotsResult {
            blended_lots: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
