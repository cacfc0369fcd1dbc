//! core.project: importing and listing projects, and resolving project names that lots refer to.

use roastery_domain::operation::Operation;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::{Project, ProjectError, ProjectRef};

use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportProject {
    pub name: String,
    pub description: Option<String>,
}

impl<S: Store> Roastery<S> {
    pub fn import_project(&self, cmd: ImportProject) -> Result<Project, AppError> {
        let project = Project::new(
            self.ids.new_id(),
            &cmd.name,
            cmd.description.as_deref(),
            self.clock.now(),
        )?;
        self.write(Operation::ImportProject, |tx| {
            let name_taken = tx.project_by_name(&project.name)?.is_some();
            let project = project.clone().decide_import(name_taken)?;
            tx.insert_project(&project)?;
            Ok(project)
        })
    }

    pub fn list_projects(&self, page: PageRequest) -> Result<Page<Project>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| Ok(tx.list_projects(&page)?))
    }
}

/// Resolves project names to references; a name no project has is `resource_not_found`.
/// Repeated names collapse into one reference.
pub fn resolve_projects(
    tx: &mut impl Repos,
    names: &[String],
) -> Result<Vec<ProjectRef>, AppError> {
    let mut refs: Vec<ProjectRef> = Vec::with_capacity(names.len());
    for name in names {
        let name = name.trim();
        if refs.iter().any(|r| r.name == name) {
            continue;
        }
        let project = tx
            .project_by_name(name)?
            .ok_or_else(|| ProjectError::NameNotFound(name.to_owned()))?;
        refs.push(ProjectRef {
            id: project.id,
            name: project.name,
        });
    }
    Ok(refs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;

    fn cmd(name: &str) -> ImportProject {
        ImportProject {
            name: name.into(),
            description: Some("Direct trade partners".into()),
        }
    }

    #[test]
    fn project_names_are_unique() {
        let (app, _) = memory_roastery();
        app.import_project(cmd("Kenya 2026")).unwrap();
        let err = app.import_project(cmd(" Kenya 2026 ")).unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&ProjectError::DuplicateName("Kenya 2026".into()))
        );
    }

    #[test]
    fn unknown_project_names_are_not_found() {
        let (app, _) = memory_roastery();
        app.import_project(cmd("Kenya 2026")).unwrap();
        let found = app
            .store()
            .read(|tx| resolve_projects(tx, &["Kenya 2026".into(), "Kenya 2026".into()]))
            .unwrap();
        assert_eq!(found.len(), 1);
        let err = app
            .store()
            .read(|tx| resolve_projects(tx, &["Nope".into()]))
            .unwrap_err();
        assert_eq!(err.rule(), Some(&ProjectError::NameNotFound("Nope".into())));
    }
}
