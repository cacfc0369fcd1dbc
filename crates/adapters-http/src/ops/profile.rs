//! inventory.roast profiles: importing a processing profile and reading profiles by id.

use actix_web::HttpResponse;
use roastery_app::plan::SetProfilePlanning;
use roastery_app::profile::{ImportProfile, ProfileView};
use roastery_domain::planning::{LossSource, Planning};
use roastery_domain::profile::ComponentDraft;
use roastery_domain::weight::RequestedWeight;
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, NameDto, NameRef, ObjectRefDto, ReadRequest, WeightDto, WriteRequest, names, required,
    weight_input,
};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentData {
    #[schema(value_type = Amount, required = true)]
    pub percentage: Option<Amount>,
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub green_lot_ids: Option<Vec<Uuid>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportProfileData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    pub external_id: Option<String>,
    pub profile_group: Option<NameRef>,
    #[schema(value_type = Vec<ComponentData>, required = true)]
    pub components: Option<Vec<ComponentData>>,
    pub reference_roast_id: Option<Uuid>,
    pub projects: Option<Vec<NameRef>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDto {
    pub percentage: Amount,
    pub green_lots: Vec<ObjectRefDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileDto {
    pub id: Uuid,
    pub name: String,
    #[schema(required = true)]
    pub external_id: Option<String>,
    /// `SINGLE_ORIGIN` (one component) or `PRE_ROAST_BLEND`.
    pub profile_type: String,
    #[schema(required = true)]
    pub profile_group: Option<NameDto>,
    pub components: Vec<ComponentDto>,
    #[schema(required = true)]
    pub reference_roast: Option<ObjectRefDto>,
    pub projects: Vec<ObjectRefDto>,
    pub planning: PlanningDto,
}

/// A profile's planning data (api-decisions §15).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanningDto {
    /// Percentage; set, or derived from the last 10 roasts; null when neither.
    #[schema(value_type = Option<Amount>, required = true)]
    pub expected_loss: Option<Amount>,
    /// `SET`, `ROASTS` or null.
    #[schema(required = true)]
    pub expected_loss_source: Option<&'static str>,
    #[schema(required = true)]
    pub batch_size: Option<BatchSizeDto>,
}

/// Green weight per roast, in KG.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchSizeDto {
    pub min: WeightDto,
    pub max: WeightDto,
}

impl From<Planning> for PlanningDto {
    fn from(p: Planning) -> Self {
        Self {
            expected_loss: p.expected_loss.map(Amount),
            expected_loss_source: p.source.map(LossSource::as_str),
            batch_size: p.batch_size.map(|b| BatchSizeDto {
                min: WeightDto::kg(b.min.in_kg()),
                max: WeightDto::kg(b.max.in_kg()),
            }),
        }
    }
}

impl From<ProfileView> for ProfileDto {
    fn from(v: ProfileView) -> Self {
        let p = v.profile;
        Self {
            id: p.id,
            profile_type: p.profile_type().as_str().to_owned(),
            name: p.name,
            external_id: p.external_id,
            profile_group: p.profile_group.map(|name| NameDto { name }),
            components: p
                .components
                .into_iter()
                .map(|c| ComponentDto {
                    percentage: Amount(c.percentage),
                    green_lots: c.green_lots.into_iter().map(Into::into).collect(),
                })
                .collect(),
            reference_roast: v.reference_roast.map(Into::into),
            projects: p.projects.into_iter().map(Into::into).collect(),
            planning: v.planning.into(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileResult {
    pub profile: ProfileDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProfilesResult {
    pub profiles: Vec<ProfileDto>,
}

pub(super) async fn import_profile<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ImportProfileData>>(body)?.data()?;
    let components = required(data.components, "data.components")?
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            Ok(ComponentDraft {
                percentage: required(c.percentage, &format!("data.components[{i}].percentage"))?.0,
                green_lot_ids: required(
                    c.green_lot_ids,
                    &format!("data.components[{i}].greenLotIds"),
                )?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let cmd = ImportProfile {
        name: required(data.name, "data.name")?,
        external_id: data.external_id,
        profile_group: data.profile_group.and_then(|g| g.name),
        components,
        reference_roast_id: data.reference_roast_id,
        projects: names(data.projects, "data.projects")?,
    };
    let view = ctx.run(move |app| app.import_profile(cmd)).await?;
    ctx.ok(ProfileResult {
        profile: view.into(),
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileIdsFilter {
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub profile_ids: Option<Vec<Uuid>>,
}

pub(super) async fn profiles_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ProfileIdsFilter>>(body)?.into_parts();
    let ids = required(
        filter.and_then(|f| f.profile_ids),
        "params.filter.profileIds",
    )?;
    ctx.page_of(
        &pagination,
        move |app, page| app.profiles_by_ids(ids, page),
        |items| ProfilesResult {
            profiles: items.into_iter().map(Into::into).collect(),
        },
    )
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetProfilePlanningData {
    #[schema(value_type = Uuid, required = true)]
    pub profile_id: Option<Uuid>,
    /// Percentage, 0 ≤ x < 100, up to 2 decimals; null or absent: derived from the roasts.
    #[schema(value_type = Option<Amount>)]
    pub expected_loss: Option<Amount>,
    /// Green weight per roast, 0 < min ≤ max; null or absent: none.
    pub batch_size: Option<BatchSizeData>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct BatchSizeData {
    #[schema(value_type = WeightDto, required = true)]
    pub min: Option<WeightDto>,
    #[schema(value_type = WeightDto, required = true)]
    pub max: Option<WeightDto>,
}

pub(super) async fn set_profile_planning<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetProfilePlanningData>>(body)?.data()?;
    let profile_id = required(data.profile_id, "data.profileId")?;
    let batch_size = match data.batch_size {
        None => None,
        Some(b) => {
            let min = weight_input(b.min, "data.batchSize.min")?;
            let max = weight_input(b.max, "data.batchSize.max")?;
            Some((
                RequestedWeight {
                    amount: min.amount,
                    unit: min.unit,
                },
                RequestedWeight {
                    amount: max.amount,
                    unit: max.unit,
                },
            ))
        }
    };
    let cmd = SetProfilePlanning {
        profile_id,
        expected_loss: data.expected_loss.map(|a| a.0),
        batch_size,
    };
    let view = ctx.run(move |app| app.set_profile_planning(cmd)).await?;
    ctx.ok(ProfileResult {
        profile: view.into(),
    })
}
