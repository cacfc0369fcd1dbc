//! mrp.plan: what must be roasted for the open orders, and when each green lot runs out
//! (api-decisions §15). Every weight is answered in KG, rounded half-even to grams.

use actix_web::HttpResponse;
use roastery_app::plan::{Plan, RunOutLine};
use roastery_domain::planning::{MissingItem, NetRequirements};
use roastery_domain::stock::{LotKind, number};
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{Amount, Instant, ReadRequest, WeightDto};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetRequirementsFilter {
    /// Orders with `orderDate` up to this instant; absent: no limit.
    pub until: Option<Instant>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DemandDto {
    pub sku: String,
    pub product_id: Uuid,
    pub bags: i64,
    pub weight: WeightDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchDto {
    pub green_weight: WeightDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileNeedDto {
    pub profile_id: Uuid,
    pub name: String,
    pub roasted_demand: WeightDto,
    pub roasted_on_hand: WeightDto,
    pub roasted_needed: WeightDto,
    /// Percentage, or null when the profile has none (see `missing`).
    #[schema(value_type = Option<Amount>, required = true)]
    pub expected_loss: Option<Amount>,
    #[schema(required = true)]
    pub green_needed: Option<WeightDto>,
    pub batches: Vec<BatchDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllocationDto {
    pub green_lot_id: Uuid,
    pub lot_number: String,
    /// The lot's weight before this plan.
    pub available: WeightDto,
    pub allocated: WeightDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShortfallDto {
    pub profile_id: Uuid,
    /// 0-based index of the profile's component whose green lots ran out.
    pub component_index: usize,
    pub weight: WeightDto,
}

/// `{"sku", "reason": "NO_RECIPE"}` or `{"profileId", "reason": "NO_EXPECTED_LOSS"}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MissingPlanDataDto {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<Uuid>,
    pub reason: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetRequirementsResult {
    #[schema(required = true)]
    pub until: Option<Instant>,
    pub demand: Vec<DemandDto>,
    pub profiles: Vec<ProfileNeedDto>,
    pub green_lots: Vec<AllocationDto>,
    pub shortfalls: Vec<ShortfallDto>,
    pub missing: Vec<MissingPlanDataDto>,
}

impl From<Plan> for NetRequirementsResult {
    fn from(plan: Plan) -> Self {
        let NetRequirements {
            demand,
            profiles,
            green_lots,
            shortfalls,
            missing,
        } = plan.requirements;
        Self {
            until: plan.until.map(Instant),
            demand: demand
                .into_iter()
                .map(|d| DemandDto {
                    sku: d.sku.to_string(),
                    product_id: d.product_id,
                    bags: d.bags,
                    weight: WeightDto::kg(d.weight),
                })
                .collect(),
            profiles: profiles
                .into_iter()
                .map(|p| ProfileNeedDto {
                    profile_id: p.profile_id,
                    name: p.name,
                    roasted_demand: WeightDto::kg(p.roasted_demand),
                    roasted_on_hand: WeightDto::kg(p.roasted_on_hand),
                    roasted_needed: WeightDto::kg(p.roasted_needed),
                    expected_loss: p.expected_loss.map(Amount),
                    green_needed: p.green_needed.map(WeightDto::kg),
                    batches: p
                        .batches
                        .into_iter()
                        .map(|g| BatchDto {
                            green_weight: WeightDto::kg(g),
                        })
                        .collect(),
                })
                .collect(),
            green_lots: green_lots
                .into_iter()
                .map(|a| AllocationDto {
                    green_lot_id: a.green_lot_id,
                    lot_number: number(LotKind::Green.prefix(), a.lot_number),
                    available: WeightDto::kg(a.available),
                    allocated: WeightDto::kg(a.allocated),
                })
                .collect(),
            shortfalls: shortfalls
                .into_iter()
                .map(|s| ShortfallDto {
                    profile_id: s.profile_id,
                    component_index: s.component_index,
                    weight: WeightDto::kg(s.weight),
                })
                .collect(),
            missing: missing
                .into_iter()
                .map(|(item, reason)| {
                    let (sku, profile_id) = match item {
                        MissingItem::Sku(sku) => (Some(sku.to_string()), None),
                        MissingItem::Profile(id) => (None, Some(id)),
                    };
                    MissingPlanDataDto {
                        sku,
                        profile_id,
                        reason: reason.as_str(),
                    }
                })
                .collect(),
        }
    }
}

pub(super) async fn net_requirements<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<NetRequirementsFilter>>(body)?.into_parts();
    let until = filter.unwrap_or_default().until.map(|i| i.0);
    let plan = ctx.run(move |app| app.net_requirements(until)).await?;
    ctx.ok(NetRequirementsResult::from(plan))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutFilter {
    /// Days of use to judge on, 1–365 (default 28).
    pub window: Option<i64>,
    pub location_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutDto {
    pub green_lot_id: Uuid,
    pub lot_number: String,
    pub weight: WeightDto,
    /// What roasts and shipments took per day over the window.
    pub use_per_day: WeightDto,
    /// `YYYY-MM-DD`, or null when nothing was used in the window.
    #[schema(required = true)]
    pub run_out_date: Option<String>,
}

impl From<RunOutLine> for RunOutDto {
    fn from(l: RunOutLine) -> Self {
        Self {
            green_lot_id: l.green_lot_id,
            lot_number: number(LotKind::Green.prefix(), l.lot_number),
            weight: WeightDto::kg(l.weight.in_kg()),
            use_per_day: WeightDto::kg(l.run_out.use_per_day),
            run_out_date: l
                .run_out
                .run_out_date
                .map(|d| d.format("%Y-%m-%d").to_string()),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutResult {
    pub green_lots: Vec<RunOutDto>,
}

pub(super) async fn run_out<S: Store>(ctx: Ctx<S>, body: &[u8]) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<RunOutFilter>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let page = ctx.page_request(&pagination)?;
    let (window, location) = (filter.window, filter.location_id);
    let page = ctx
        .run(move |app| app.run_out(window, location, page))
        .await?;
    ctx.page(
        RunOutResult {
            green_lots: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
