//! Projects.

use diesel::prelude::*;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::Project;
use roastery_ports::repo::*;

use crate::error::OrStoreError;
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

#[derive(Queryable, Insertable)]
#[diesel(table_name = projects)]
struct ProjectRow {
    id: String,
    name: String,
    description: Option<String>,
    created_at: chrono::NaiveDateTime,
}

impl ProjectRow {
    fn into_domain(self) -> StoreResult<Project> {
        Ok(Project {
            id: uuid("project", &self.id)?,
            name: self.name,
            description: self.description,
            created_at: from_db(self.created_at),
        })
    }
}

impl ProjectRepo for DieselTx {
    fn insert_project(&mut self, p: &Project) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Project, p.id), Change::Created);
        diesel::insert_into(projects::table)
            .values(ProjectRow {
                id: p.id.to_string(),
                name: p.name.clone(),
                description: p.description.clone(),
                created_at: to_db(p.created_at),
            })
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn project_by_name(&mut self, name: &str) -> StoreResult<Option<Project>> {
        projects::table
            .filter(projects::name.eq(name))
            .first::<ProjectRow>(self.conn()?)
            .optional()
            .store()?
            .map(ProjectRow::into_domain)
            .transpose()
    }

    fn list_projects(&mut self, page: &PageRequest) -> StoreResult<Page<Project>> {
        let query = projects::table.into_boxed();
        let rows: Vec<ProjectRow> = newest_first!(query, page, projects::created_at, projects::id)
            .load(self.conn()?)
            .store()?;
        let items = rows
            .into_iter()
            .map(ProjectRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |p| {
            (p.created_at, p.id)
        }))
    }
}
