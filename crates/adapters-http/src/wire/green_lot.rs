//! A green lot as every operation answers it (green lot operations, and a roast's green lots
//! after it).

use roastery_app::green_lot::GreenLotView;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::reference::{LocationRefDto, ProjectNameDto};
use super::value::{Instant, PriceDto, WeightDto};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreenLotDto {
    pub id: Uuid,
    pub lot_number: String,
    pub name: String,
    #[schema(required = true)]
    pub ico_number: Option<String>,
    #[schema(required = true)]
    pub external_id: Option<String>,
    pub weight: WeightDto,
    #[schema(required = true)]
    pub price: Option<PriceDto>,
    #[schema(required = true)]
    pub location: Option<LocationRefDto>,
    pub projects: Vec<ProjectNameDto>,
    pub last_modified_date: Instant,
    pub registration_date: Instant,
    #[schema(required = true)]
    pub consumed_date: Option<Instant>,
}

impl From<GreenLotView> for GreenLotDto {
    fn from(v: GreenLotView) -> Self {
        let lot = v.lot;
        Self {
            id: lot.id,
            lot_number: lot.number(),
            weight: lot.weight().into(),
            price: lot.price.map(Into::into),
            location: v.location.map(|l| LocationRefDto {
                id: l.id,
                external_id: l.external_id,
            }),
            projects: lot.projects.into_iter().map(Into::into).collect(),
            last_modified_date: lot.last_modified_date.into(),
            registration_date: lot.registration_date.into(),
            consumed_date: lot.stock.consumed_at().map(Into::into),
            name: lot.name,
            ico_number: lot.ico_number,
            external_id: lot.external_id,
        }
    }
}
