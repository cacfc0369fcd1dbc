//! core.location: importing and listing locations.

use actix_web::HttpResponse;
use roastery_app::location::ImportLocation;
use roastery_domain::location::Location;
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{NoFilter, ReadRequest, WriteRequest, required};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportLocationData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    pub external_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocationDto {
    pub id: Uuid,
    pub name: String,
    #[schema(required = true)]
    pub external_id: Option<String>,
}

impl From<Location> for LocationDto {
    fn from(l: Location) -> Self {
        Self {
            id: l.id,
            name: l.name,
            external_id: l.external_id,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LocationResult {
    pub location: LocationDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LocationsResult {
    pub locations: Vec<LocationDto>,
}

pub(super) async fn import_location<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ImportLocationData>>(body)?.data()?;
    let cmd = ImportLocation {
        name: required(data.name, "data.name")?,
        external_id: data.external_id,
    };
    let location = ctx.run(move |app| app.import_location(cmd)).await?;
    ctx.ok(LocationResult {
        location: location.into(),
    })
}

pub(super) async fn list_locations<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (_, pagination) = decode::<ReadRequest<NoFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_locations(page)).await?;
    ctx.page(
        LocationsResult {
            locations: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
