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

#[cfg(test)]
mod handler_tests {
    use chrono::{TimeZone, Utc};
    use roastery_app::Roastery;
    use roastery_app::roast::RecordRoast;
    use roastery_ports::repo::RoastRepo;
    use roastery_ports::testing::InMemoryStore;
    use rust_decimal::Decimal;
    use serde_json::{Value, json};

    use super::*;
    use crate::call::testing::{answer, call, green_lot_at, kg};
    use crate::ops::Operation;

    fn body(value: &Value) -> Vec<u8> {
        serde_json::to_vec(value).unwrap()
    }

    /// A location and two roasted lots of 5 kg at it.
    fn two_roasted_lots(app: &Roastery<InMemoryStore>) -> (Uuid, [Uuid; 2]) {
        let (location, green) = green_lot_at(app, 20);
        let lots = ["Roast A", "Roast B"].map(|name| {
            app.record_roast(RecordRoast {
                name: name.into(),
                location_id: location,
                roasted_date: Utc.with_ymd_and_hms(2026, 11, 20, 8, 0, 0).unwrap(),
                weight: kg(5),
                green_lots: vec![(green, kg(6))],
                profile_id: None,
                details: None,
                curves: Vec::new(),
                projects: Vec::new(),
            })
            .unwrap()
            .roasted_lot
            .lot
            .id
        });
        (location, lots)
    }

    fn remaining(app: &Roastery<InMemoryStore>, lot: Uuid) -> Decimal {
        app.store()
            .read(|tx| Ok(tx.roasted_lot(lot)?))
            .unwrap()
            .expect("stored")
            .stock
            .weight()
            .amount()
    }

    fn blend(location: Uuid, roasted_lots: Value) -> Value {
        json!({"data": {
            "name": "House blend",
            "locationId": location,
            "blendedDate": "2026-11-21T09:00:00Z",
            "roastedLots": roasted_lots
        }})
    }

    /// Each roasted lot is taken from by its own `usedWeight`, and the answer is the blended
    /// lot: their sum, its sources in the client's order.
    #[actix_web::test]
    async fn create_blend_takes_each_roasted_lot_used_weight() {
        let (ctx, app) = call(Operation::CreateBlend);
        let (location, [a, b]) = two_roasted_lots(&app);
        let request = blend(
            location,
            json!([
                {"id": b, "usedWeight": {"amount": 1.5, "unit": "KG"}},
                {"id": a, "usedWeight": {"amount": 2, "unit": "KG"}}
            ]),
        );
        let (status, answered) = answer(create_blend(ctx, &body(&request)).await).await;
        assert_eq!(status, 200, "{answered}");
        let blended = &answered["result"]["blendedLot"];
        assert_eq!(blended["name"], "House blend", "{answered}");
        assert_eq!(blended["weight"], json!({"amount": 3.5, "unit": "KG"}));
        assert_eq!(blended["location"]["id"], json!(location));
        assert_eq!(blended["blendedDate"], "2026-11-21T09:00:00Z");
        assert_eq!(blended["roastedLots"][0]["id"], json!(b), "{answered}");
        assert_eq!(blended["roastedLots"][1]["id"], json!(a), "{answered}");
        assert_eq!(remaining(&app, b), Decimal::new(35, 1));
        assert_eq!(remaining(&app, a), Decimal::from(3));
    }

    /// A roasted lot without `usedWeight` is named by its path, and nothing is taken.
    #[actix_web::test]
    async fn create_blend_names_a_missing_used_weight_by_its_path() {
        let (ctx, app) = call(Operation::CreateBlend);
        let (location, [a, b]) = two_roasted_lots(&app);
        let request = blend(
            location,
            json!([{"id": a, "usedWeight": {"amount": 2, "unit": "KG"}}, {"id": b}]),
        );
        let (status, answered) = answer(create_blend(ctx, &body(&request)).await).await;
        assert_eq!(status, 400, "{answered}");
        assert_eq!(answered["error"]["code"], "missing_parameter", "{answered}");
        assert_eq!(
            answered["error"]["message"],
            "data.roastedLots[1].usedWeight is required"
        );
        assert_eq!(remaining(&app, a), Decimal::from(5));
    }
}
