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

#[cfg(test)]
mod handler_tests {
    use roastery_app::Roastery;
    use roastery_ports::repo::LocationRepo;
    use roastery_ports::testing::InMemoryStore;
    use serde_json::{Value, json};

    use super::*;
    use crate::call::testing::{answer, call};
    use crate::ops::Operation;

    async fn import(request: Value) -> (u16, Value, Roastery<InMemoryStore>) {
        let (ctx, app) = call(Operation::ImportLocation);
        let (status, answered) =
            answer(import_location(ctx, &serde_json::to_vec(&request).unwrap()).await).await;
        (status, answered, app)
    }

    /// `name` and `externalId` reach the use case under their wire names and come back in the
    /// answer beside the new id; the stored location is the one answered.
    #[actix_web::test]
    async fn import_location_maps_name_and_external_id() {
        let (status, answered, app) =
            import(json!({"data": {"name": "Hamburg", "externalId": "WH-1"}})).await;
        assert_eq!(status, 200, "{answered}");
        let location = &answered["result"]["location"];
        assert_eq!(location["name"], "Hamburg", "{answered}");
        assert_eq!(location["externalId"], "WH-1");
        let id: Uuid = serde_json::from_value(location["id"].clone()).unwrap();
        let stored = app
            .store()
            .read(|tx| Ok(tx.location(id)?))
            .unwrap()
            .expect("stored");
        assert_eq!(stored.name, "Hamburg");
        assert_eq!(stored.external_id.as_deref(), Some("WH-1"));
    }

    /// `externalId` is optional and answered as null; `name` is required, named by its path.
    #[actix_web::test]
    async fn import_location_needs_only_its_name() {
        let (status, answered, _) = import(json!({"data": {"name": "Hamburg"}})).await;
        assert_eq!(status, 200, "{answered}");
        assert_eq!(answered["result"]["location"]["externalId"], Value::Null);
        assert!(
            answered["result"]["location"]
                .as_object()
                .is_some_and(|l| l.contains_key("externalId")),
            "{answered}"
        );

        let (status, answered, _) = import(json!({"data": {"externalId": "WH-1"}})).await;
        assert_eq!(status, 400, "{answered}");
        assert_eq!(answered["error"]["code"], "missing_parameter");
        assert_eq!(answered["error"]["message"], "data.name is required");
    }
}
