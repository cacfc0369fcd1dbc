//! core.project: importing and listing projects.

use actix_web::HttpResponse;
use roastery_app::project::ImportProject;
use roastery_domain::project::Project;
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
pub struct ImportProjectData {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDto {
    pub id: Uuid,
    pub name: String,
    #[schema(required = true)]
    pub description: Option<String>,
}

impl From<Project> for ProjectDto {
    fn from(p: Project) -> Self {
        Self {
            id: p.id,
            name: p.name,
            description: p.description,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectResult {
    pub project: ProjectDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectsResult {
    pub projects: Vec<ProjectDto>,
}

pub(super) async fn import_project<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ImportProjectData>>(body)?.data()?;
    let cmd = ImportProject {
        name: required(data.name, "data.name")?,
        description: data.description,
    };
    let project = ctx.run(move |app| app.import_project(cmd)).await?;
    ctx.ok(ProjectResult {
        project: project.into(),
    })
}

pub(super) async fn list_projects<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (_, pagination) = decode::<ReadRequest<NoFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_projects(page)).await?;
    ctx.page(
        ProjectsResult {
            projects: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
