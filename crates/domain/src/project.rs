//! Projects: named groupings that lots belong to. Project names are unique.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("a project named `{0}` already exists")]
    DuplicateName(String),
    #[error("no project is named `{0}`")]
    NameNotFound(String),
    #[error("project {0} does not exist")]
    NotFound(Uuid),
    #[error("projects lists {0} names; at most {MAX_PROJECT_REFS} are accepted")]
    TooManyReferences(usize),
}

/// Most project references one record may carry.
pub const MAX_PROJECT_REFS: usize = 100;

/// Checks the shape of a list of project names a record refers to: at most
/// [`MAX_PROJECT_REFS`], each non-blank and bounded. Whether they exist is the store's to say.
pub fn check_references(names: &[String]) -> Result<(), ProjectError> {
    if names.len() > MAX_PROJECT_REFS {
        return Err(ProjectError::TooManyReferences(names.len()));
    }
    for (i, name) in names.iter().enumerate() {
        text::required(
            FieldPath::ROOT.key("projects").index(i).key("name"),
            name,
            text::NAME_MAX,
        )?;
    }
    Ok(())
}

impl BrokenRule for ProjectError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::DuplicateName(_) => Violation::Conflict,
            Self::NameNotFound(_) | Self::NotFound(_) => Violation::NotFound,
            Self::TooManyReferences(_) => Violation::InvalidParameter,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl Project {
    pub fn new(
        id: Uuid,
        name: &str,
        description: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Self, ProjectError> {
        Ok(Self {
            id,
            name: text::required("name", name, text::NAME_MAX)?,
            description: description
                .map(|d| text::bounded("description", d, text::NOTE_MAX))
                .transpose()?,
            created_at: now,
        })
    }

    /// Decides an import (step three): a name another project already has conflicts.
    pub fn decide_import(self, name_taken: bool) -> Result<Self, ProjectError> {
        if name_taken {
            return Err(ProjectError::DuplicateName(self.name));
        }
        Ok(self)
    }
}

/// A reference to a project by name, as lots carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRef {
    pub id: Uuid,
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_conflicts_on_a_taken_name() {
        let now = DateTime::from_timestamp(0, 0).unwrap();
        let project = Project::new(Uuid::nil(), "Gesha", None, now).unwrap();
        assert_eq!(
            project.clone().decide_import(true).unwrap_err(),
            ProjectError::DuplicateName("Gesha".into())
        );
        assert_eq!(project.clone().decide_import(false).unwrap(), project);
    }

    #[test]
    fn project_references_are_bounded_and_non_blank() {
        assert!(check_references(&["Espresso".into()]).is_ok());
        let blank = check_references(&["Espresso".into(), " ".into()]).unwrap_err();
        assert_eq!(
            blank,
            ProjectError::Text(TextError::Empty {
                field: FieldPath::from("projects[1].name")
            })
        );
        assert_eq!(blank.violation(), Violation::InvalidParameter);
        let many: Vec<String> = (0..=MAX_PROJECT_REFS).map(|i| format!("P{i}")).collect();
        assert_eq!(
            check_references(&many),
            Err(ProjectError::TooManyReferences(MAX_PROJECT_REFS + 1))
        );
    }

    #[test]
    fn project_names_are_required_and_unique() {
        let now = DateTime::from_timestamp(0, 0).unwrap();
        assert!(Project::new(Uuid::nil(), "Direct trade", None, now).is_ok());
        assert_eq!(
            Project::new(Uuid::nil(), "  ", None, now)
                .unwrap_err()
                .violation(),
            Violation::InvalidParameter
        );
        assert_eq!(
            ProjectError::DuplicateName("x".into()).violation(),
            Violation::Conflict
        );
        assert_eq!(
            ProjectError::NameNotFound("x".into()).violation(),
            Violation::NotFound
        );
    }
}
