//! What an importer tells about a green coffee beyond its weight: grade, crop year, processing,
//! countries of origin, varieties and certifications.
//!
//! Every text is trimmed and bounded and every list has a length bound, so no import can store
//! unbounded data. Countries are ISO 3166-1 alpha-3 codes (`ETH`, `COL`), checked against the
//! maintained `iso_country` table. Every broken rule here is a malformed field: `invalid_parameter`.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::field::FieldPath;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Most entries any list of the details may hold.
pub const LIST_MAX: usize = 50;

/// Every ISO 3166-1 alpha-3 code, built once from the crate's table.
static ALPHA3: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    iso_country::data::all()
        .into_iter()
        .map(|country| country.alpha3)
        .collect()
});

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreenLotDetailsError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("{field} holds {count} entries; at most {max} are accepted")]
    TooManyEntries {
        field: FieldPath,
        count: usize,
        max: usize,
    },
    #[error("{field}: `{code}` is not an ISO 3166-1 alpha-3 country code (e.g. ETH, COL)")]
    UnknownCountry { field: FieldPath, code: String },
}

impl BrokenRule for GreenLotDetailsError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::TooManyEntries { .. } | Self::UnknownCountry { .. } => {
                Violation::InvalidParameter
            }
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::TooManyEntries { field, .. } | Self::UnknownCountry { field, .. } => {
                field.rebase(base);
            }
        }
    }
}

/// The details of a green lot. Build it with the fields as given and call
/// [`GreenLotDetails::validate`]; [`crate::green_lot::GreenLot::import`] does so.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GreenLotDetails {
    pub note: Option<String>,
    pub grade: Option<String>,
    /// As the trade writes it: `2024` or `2023/24`.
    pub crop_year: Option<String>,
    pub processing_methods: Vec<String>,
    /// ISO 3166-1 alpha-3 codes, upper case.
    pub countries_of_origin: Vec<String>,
    pub varieties: Vec<String>,
    pub certifications: Vec<String>,
}

impl GreenLotDetails {
    /// Trims and bounds every text, bounds every list and checks the country codes. Errors name
    /// the field by its path in the import request (`details.varieties[2].name`).
    pub fn validate(self) -> Result<Self, GreenLotDetailsError> {
        Ok(Self {
            note: self
                .note
                .map(|n| text::bounded("details.note", &n, text::NOTE_MAX))
                .transpose()?,
            grade: text::optional("details.grade", self.grade.as_deref(), text::NAME_MAX)?,
            crop_year: text::optional(
                "details.cropYear",
                self.crop_year.as_deref(),
                text::NAME_MAX,
            )?,
            processing_methods: names(
                FieldPath::from("details.processingMethods"),
                |list, i| list.index(i),
                self.processing_methods,
            )?,
            countries_of_origin: countries(self.countries_of_origin)?,
            varieties: names(
                FieldPath::from("details.varieties"),
                |list, i| list.index(i).key("name"),
                self.varieties,
            )?,
            certifications: names(
                FieldPath::from("details.certifications"),
                |list, i| list.index(i).key("name"),
                self.certifications,
            )?,
        })
    }
}

fn bounded_list(field: &FieldPath, list: &[String]) -> Result<(), GreenLotDetailsError> {
    if list.len() > LIST_MAX {
        return Err(GreenLotDetailsError::TooManyEntries {
            field: field.clone(),
            count: list.len(),
            max: LIST_MAX,
        });
    }
    Ok(())
}

/// A bounded list of names in `field`; `entry` gives the path of the name at an index.
fn names(
    field: FieldPath,
    entry: impl Fn(FieldPath, usize) -> FieldPath,
    list: Vec<String>,
) -> Result<Vec<String>, GreenLotDetailsError> {
    bounded_list(&field, &list)?;
    list.iter()
        .enumerate()
        .map(|(i, name)| {
            text::required(entry(field.clone(), i), name, text::NAME_MAX).map_err(Into::into)
        })
        .collect()
}

fn countries(list: Vec<String>) -> Result<Vec<String>, GreenLotDetailsError> {
    let field = FieldPath::from("details.countriesOfOrigin");
    bounded_list(&field, &list)?;
    for code in &list {
        if !ALPHA3.contains(code.as_str()) {
            return Err(GreenLotDetailsError::UnknownCountry {
                field,
                code: code.clone(),
            });
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn details_are_trimmed_and_kept() {
        let details = GreenLotDetails {
            note: Some("washed, bright".into()),
            grade: Some(" G1 ".into()),
            crop_year: Some("2023/24".into()),
            processing_methods: strings(&[" Washed "]),
            countries_of_origin: strings(&["ETH", "COL"]),
            varieties: strings(&["Heirloom"]),
            certifications: strings(&["Organic"]),
        }
        .validate()
        .unwrap();
        assert_eq!(details.grade.as_deref(), Some("G1"));
        assert_eq!(details.processing_methods, strings(&["Washed"]));
        assert_eq!(details.countries_of_origin, strings(&["ETH", "COL"]));
    }

    #[test]
    fn countries_of_origin_must_be_iso_alpha_3_codes() {
        for bad in ["ET", "eth", "XYZ", " ETH", "Ethiopia"] {
            let err = GreenLotDetails {
                countries_of_origin: strings(&[bad]),
                ..Default::default()
            }
            .validate()
            .unwrap_err();
            assert_eq!(
                err,
                GreenLotDetailsError::UnknownCountry {
                    field: FieldPath::from("details.countriesOfOrigin"),
                    code: bad.into()
                }
            );
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn blank_list_entries_and_long_texts_are_invalid_parameters() {
        let blank = GreenLotDetails {
            varieties: strings(&["Heirloom", "  "]),
            ..Default::default()
        };
        let long = GreenLotDetails {
            grade: Some("x".repeat(text::NAME_MAX + 1)),
            ..Default::default()
        };
        let err = blank.validate().unwrap_err();
        assert_eq!(
            err,
            GreenLotDetailsError::Text(TextError::Empty {
                field: FieldPath::from("details.varieties[1].name")
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = long.validate().unwrap_err();
        assert_eq!(
            err,
            GreenLotDetailsError::Text(TextError::TooLong {
                field: FieldPath::from("details.grade"),
                max: text::NAME_MAX
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn lists_hold_at_most_fifty_entries() {
        let err = GreenLotDetails {
            certifications: vec!["Organic".into(); LIST_MAX + 1],
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(matches!(
            err,
            GreenLotDetailsError::TooManyEntries { ref field, .. }
                if *field == FieldPath::from("details.certifications")
        ));
    }
}
