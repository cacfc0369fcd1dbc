//! Locations: warehouses and roasting sites where lots are kept.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocationError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("location {0} does not exist")]
    NotFound(Uuid),
    #[error("no location has external id `{0}`")]
    ExternalIdNotFound(String),
    #[error("a location with external id `{0}` already exists")]
    DuplicateExternalId(String),
}

impl BrokenRule for LocationError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::NotFound(_) | Self::ExternalIdNotFound(_) => Violation::NotFound,
            Self::DuplicateExternalId(_) => Violation::Conflict,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl Location {
    /// A new location from the request (step one: only 400s). Its import is decided by
    /// [`Location::decide_import`] once the store has said whether the external id is taken.
    pub fn new(
        id: Uuid,
        name: &str,
        external_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Self, LocationError> {
        Ok(Self {
            id,
            name: text::required("name", name, text::NAME_MAX)?,
            external_id: text::optional("externalId", external_id, text::EXTERNAL_ID_MAX)?,
            created_at: now,
        })
    }

    /// Decides an import (step three): an external id another location already has conflicts.
    pub fn decide_import(self, external_id_taken: bool) -> Result<Self, LocationError> {
        match self.external_id {
            Some(external_id) if external_id_taken => {
                Err(LocationError::DuplicateExternalId(external_id))
            }
            _ => Ok(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_conflicts_only_on_a_taken_external_id() {
        let now = DateTime::from_timestamp(0, 0).unwrap();
        let loc = Location::new(Uuid::nil(), "Hamburg", Some("wh-1"), now).unwrap();
        assert_eq!(
            loc.clone().decide_import(true).unwrap_err(),
            LocationError::DuplicateExternalId("wh-1".into())
        );
        assert_eq!(loc.clone().decide_import(false).unwrap(), loc);
        let no_id = Location::new(Uuid::nil(), "Bremen", None, now).unwrap();
        assert_eq!(no_id.clone().decide_import(true).unwrap(), no_id);
    }

    #[test]
    fn a_location_needs_a_name_and_may_have_an_external_id() {
        let now = DateTime::from_timestamp(0, 0).unwrap();
        let loc = Location::new(Uuid::nil(), " Hamburg ", Some("wh-1"), now).unwrap();
        assert_eq!(
            (loc.name.as_str(), loc.external_id.as_deref()),
            ("Hamburg", Some("wh-1"))
        );
        let err = Location::new(Uuid::nil(), "", None, now).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = Location::new(Uuid::nil(), "x", Some(" "), now).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn duplicate_external_ids_are_conflicts() {
        assert_eq!(
            LocationError::DuplicateExternalId("wh-1".into()).violation(),
            Violation::Conflict
        );
    }
}
