//! Projects.

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::Project;

use super::store::{MemTx, page_newest_first};
use crate::error::StoreError;
use crate::repo::*;

impl ProjectRepo for MemTx {
    fn insert_project(&mut self, project: &Project) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Project, project.id), Change::Created);
        if (self.data.projects.iter()).any(|p| p.id == project.id || p.name == project.name) {
            return Err(StoreError::Duplicate(format!("project {}", project.name)));
        }
        self.data.projects.push(project.clone());
        Ok(())
    }

    fn project_by_name(&mut self, name: &str) -> StoreResult<Option<Project>> {
        Ok(self.data.projects.iter().find(|p| p.name == name).cloned())
    }

    fn list_projects(&mut self, page: &PageRequest) -> StoreResult<Page<Project>> {
        page_newest_first(
            self.data.projects.iter().cloned(),
            |p| (p.created_at, p.id),
            page,
        )
    }
}
