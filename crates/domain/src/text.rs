//! Bounded, trimmed text: names, external ids and notes.
//!
//! Every free-text field has a length bound so that no request can store unbounded strings.
//! `field` is the field's path relative to what is being parsed (`name`, `[2].externalId`).

use crate::field::FieldPath;
use crate::violation::{BrokenRule, Violation};

/// Longest name (lots, locations, projects, products, sheets, people).
pub const NAME_MAX: usize = 200;
/// Longest identifier of an external system.
pub const EXTERNAL_ID_MAX: usize = 100;
/// Longest note or description.
pub const NOTE_MAX: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("{field} must not be empty")]
    Empty { field: FieldPath },
    #[error("{field} is longer than {max} characters")]
    TooLong { field: FieldPath, max: usize },
}

impl BrokenRule for TextError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Empty { field } | Self::TooLong { field, .. } => field.rebase(base),
        }
    }
}

/// Trims `value` and checks it is non-empty and at most `max` characters long.
pub fn required(field: impl Into<FieldPath>, value: &str, max: usize) -> Result<String, TextError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(TextError::Empty {
            field: field.into(),
        });
    }
    bounded(field, trimmed, max)
}

/// Checks `value` is at most `max` characters long; empty is allowed.
pub fn bounded(field: impl Into<FieldPath>, value: &str, max: usize) -> Result<String, TextError> {
    if value.chars().count() > max {
        return Err(TextError::TooLong {
            field: field.into(),
            max,
        });
    }
    Ok(value.to_owned())
}

/// Like [`required`] for an optional field: absent stays absent.
pub fn optional(
    field: impl Into<FieldPath>,
    value: Option<&str>,
    max: usize,
) -> Result<Option<String>, TextError> {
    value.map(|v| required(field, v, max)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_must_not_be_blank() {
        assert_eq!(required("name", "  Guji ", NAME_MAX).unwrap(), "Guji");
        assert_eq!(
            required("name", "   ", NAME_MAX),
            Err(TextError::Empty {
                field: FieldPath::from("name")
            })
        );
    }

    #[test]
    fn long_text_is_refused() {
        let long = "x".repeat(NAME_MAX + 1);
        assert!(matches!(
            required("name", &long, NAME_MAX),
            Err(TextError::TooLong { .. })
        ));
        assert_eq!(optional("note", None, NOTE_MAX), Ok(None));
    }
}
