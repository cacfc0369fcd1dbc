//! inventory.roast profiles: importing a processing profile and reading profiles by id.

use actix_web::HttpResponse;
use roastery_domain::profile::ComponentDraft;
use roastery_ports::Store;
use roastery_ports::profile::{ImportProfile, ProfileView};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, NameDto, NameRef, ObjectRefDto, ReadRequest, WriteRequest, names, required,
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
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.profiles_by_ids(ids, page)).await?;
    ctx.page(
        ProfilesResult {
            profiles: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
