//! Physical analyses (`QC-n`): the laboratory figures of a green, roasted or blended lot.
//!
//! Every measurement is optional, since a lab may record only some of them, but a given one must be
//! plausible: moisture and screen-size percentages within 0..=100, water activity within 0..=1,
//! density above zero (at most [`DENSITY_MAX`], whatever unit the roastery uses), defect counts not
//! negative. Ranges are checked on the values as given; accepted values are then rounded half-even
//! to six decimals, like weights, so that they are stored exactly as integer micro-units.
//!
//! Recording one takes the three steps of every write: [`NewPhysicalAnalysis::parse`] checks every
//! shape rule (400); the store-backed use case then checks the analysed lot exists
//! ([`PhysicalAnalysisError::LotNotFound`]); last, [`PhysicalAnalysisDraft::record`] applies the
//! one business rule, the screen sizes' sum.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::decimal;
use crate::field::FieldPath;
use crate::stock::{TypedLotRef, UnknownLotType};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Prefix of physical analysis numbers (`QC-3`).
pub const ANALYSIS_PREFIX: &str = "QC";
/// Highest density accepted: far above any coffee in g/L (about 600 to 800) or kg/m³.
pub const DENSITY_MAX: i64 = 10_000;
/// Most screen sizes one analysis may list.
pub const MAX_SCREEN_SIZES: usize = 50;
/// Most defect kinds one analysis may list.
pub const MAX_DEFECTS: usize = 100;
/// Longest screen size label (`18`, `17/18`, `PB`).
pub const SCREEN_SIZE_MAX: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhysicalAnalysisError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    UnknownLotType(#[from] UnknownLotType),
    #[error("{field} is required")]
    Missing { field: FieldPath },
    #[error("{field} must be {range}; {value} was given")]
    OutOfRange {
        field: FieldPath,
        range: &'static str,
        value: Decimal,
    },
    #[error("{field} must not be negative; {value} was given")]
    NegativeCount { field: FieldPath, value: i32 },
    #[error("{field} holds {count} entries; at most {max} are accepted")]
    TooMany {
        field: FieldPath,
        count: usize,
        max: usize,
    },
    #[error("{field} lists `{value}` more than once")]
    Duplicate { field: FieldPath, value: String },
    #[error("{field} percentages add up to {total}; they must not exceed 100")]
    ScreenSizesOver100 { field: FieldPath, total: Decimal },
    #[error("{0} does not exist")]
    LotNotFound(TypedLotRef),
}

impl BrokenRule for PhysicalAnalysisError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::UnknownLotType(e) => e.violation(),
            Self::Missing { .. } => Violation::MissingParameter,
            Self::OutOfRange { .. }
            | Self::NegativeCount { .. }
            | Self::TooMany { .. }
            | Self::Duplicate { .. } => Violation::InvalidParameter,
            // Each percentage is fine on its own; together they break a rule of the business.
            Self::ScreenSizesOver100 { .. } => Violation::BusinessRule,
            Self::LotNotFound(_) => Violation::NotFound,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::UnknownLotType(e) => e.rebase(base),
            Self::Missing { field }
            | Self::OutOfRange { field, .. }
            | Self::NegativeCount { field, .. }
            | Self::TooMany { field, .. }
            | Self::Duplicate { field, .. }
            | Self::ScreenSizesOver100 { field, .. } => field.rebase(base),
            Self::LotNotFound(_) => {}
        }
    }
}

/// Share of the beans retained by one screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenSize {
    /// The screen's label, as the lab names it (`18`, `17/18`, `PB`); numbers are given as text.
    pub size: String,
    pub percentage: Decimal,
}

/// How many defects of one kind were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defect {
    pub name: String,
    pub count: i32,
}

/// A screen size as a client gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewScreenSize {
    pub size: String,
    pub percentage: Option<Decimal>,
}

/// A defect as a client gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDefect {
    pub name: String,
    pub count: Option<i32>,
}

/// A physical analysis as a client records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPhysicalAnalysis {
    pub analysis_date: DateTime<Utc>,
    pub analysed_lot: TypedLotRef,
    /// Percent.
    pub moisture: Option<Decimal>,
    pub water_activity: Option<Decimal>,
    pub density: Option<Decimal>,
    pub screen_sizes: Vec<NewScreenSize>,
    pub defects: Vec<NewDefect>,
    pub note: Option<String>,
    /// The evaluator's name.
    pub evaluator: Option<String>,
}

/// A recorded physical analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalAnalysis {
    pub id: Uuid,
    /// Sequence number of `QC-n`.
    pub number: i64,
    pub analysis_date: DateTime<Utc>,
    pub analysed_lot: TypedLotRef,
    pub moisture: Option<Decimal>,
    pub water_activity: Option<Decimal>,
    pub density: Option<Decimal>,
    pub screen_sizes: Vec<ScreenSize>,
    pub defects: Vec<Defect>,
    pub note: Option<String>,
    pub evaluator: Option<String>,
}

/// Bounds of a measurement.
struct Range {
    min: Decimal,
    min_inclusive: bool,
    max: Decimal,
    text: &'static str,
}

impl Range {
    fn percent() -> Self {
        Self {
            min: Decimal::ZERO,
            min_inclusive: true,
            max: Decimal::ONE_HUNDRED,
            text: "between 0 and 100",
        }
    }

    fn water_activity() -> Self {
        Self {
            min: Decimal::ZERO,
            min_inclusive: true,
            max: Decimal::ONE,
            text: "between 0 and 1",
        }
    }

    fn density() -> Self {
        Self {
            min: Decimal::ZERO,
            min_inclusive: false,
            max: Decimal::from(DENSITY_MAX),
            text: "above 0 and at most 10000",
        }
    }

    /// Checks `value` as given, then rounds it half-even to six decimals; an exclusive lower
    /// bound is checked again after rounding, so that `0.0000001` is not stored as a density of 0.
    fn check(&self, field: FieldPath, value: Decimal) -> Result<Decimal, PhysicalAnalysisError> {
        let above_min = |v: Decimal| {
            if self.min_inclusive {
                v >= self.min
            } else {
                v > self.min
            }
        };
        let out_of_range = |field| PhysicalAnalysisError::OutOfRange {
            field,
            range: self.text,
            value,
        };
        if !above_min(value) || value > self.max {
            return Err(out_of_range(field));
        }
        // Within the range, the value fits micro-units.
        let rounded = decimal::to_micros(value)
            .map(decimal::from_micros)
            .ok_or_else(|| out_of_range(field.clone()))?;
        if !above_min(rounded) {
            return Err(out_of_range(field));
        }
        Ok(rounded)
    }
}

/// A physical analysis parsed from the request ([`NewPhysicalAnalysis::parse`]): every figure
/// and text checked and rounded; its lot not yet looked up and no business rule applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalAnalysisDraft {
    analysis_date: DateTime<Utc>,
    analysed_lot: TypedLotRef,
    moisture: Option<Decimal>,
    water_activity: Option<Decimal>,
    density: Option<Decimal>,
    screen_sizes: Vec<ScreenSize>,
    defects: Vec<Defect>,
    note: Option<String>,
    evaluator: Option<String>,
}

impl NewPhysicalAnalysis {
    /// Step one of recording an analysis: every shape rule (400), in field order. Each given
    /// measurement is within its range and rounded, screen sizes and defects are bounded,
    /// distinct and complete, texts are bounded.
    pub fn parse(self) -> Result<PhysicalAnalysisDraft, PhysicalAnalysisError> {
        let measure = |field: &'static str, value: Option<Decimal>, range: Range| {
            value.map(|v| range.check(field.into(), v)).transpose()
        };
        Ok(PhysicalAnalysisDraft {
            analysis_date: self.analysis_date,
            analysed_lot: self.analysed_lot,
            moisture: measure("moisture", self.moisture, Range::percent())?,
            water_activity: measure(
                "waterActivity",
                self.water_activity,
                Range::water_activity(),
            )?,
            density: measure("density", self.density, Range::density())?,
            screen_sizes: screen_sizes(self.screen_sizes)?,
            defects: defects(self.defects)?,
            note: self
                .note
                .map(|n| text::bounded("note", &n, text::NOTE_MAX))
                .transpose()?,
            evaluator: text::optional("evaluator.name", self.evaluator.as_deref(), text::NAME_MAX)?,
        })
    }
}

impl PhysicalAnalysisDraft {
    /// The lot analysed; the caller reports it when it does not exist.
    pub fn analysed_lot(&self) -> TypedLotRef {
        self.analysed_lot
    }

    /// Step three, once the lot is known to exist: the analysis `QC-number`, unless its screen
    /// sizes add up to more than 100 (each is fine on its own; together they break a rule of
    /// the business, 422).
    pub fn record(self, id: Uuid, number: i64) -> Result<PhysicalAnalysis, PhysicalAnalysisError> {
        let total: Decimal = self.screen_sizes.iter().map(|s| s.percentage).sum();
        if total > Decimal::ONE_HUNDRED {
            return Err(PhysicalAnalysisError::ScreenSizesOver100 {
                field: FieldPath::from("screenSizes"),
                total: total.normalize(),
            });
        }
        Ok(PhysicalAnalysis {
            id,
            number,
            analysis_date: self.analysis_date,
            analysed_lot: self.analysed_lot,
            moisture: self.moisture,
            water_activity: self.water_activity,
            density: self.density,
            screen_sizes: self.screen_sizes,
            defects: self.defects,
            note: self.note,
            evaluator: self.evaluator,
        })
    }
}

impl PhysicalAnalysis {
    /// `QC-n`.
    pub fn display_number(&self) -> String {
        crate::stock::number(ANALYSIS_PREFIX, self.number)
    }
}

fn screen_sizes(input: Vec<NewScreenSize>) -> Result<Vec<ScreenSize>, PhysicalAnalysisError> {
    if input.len() > MAX_SCREEN_SIZES {
        return Err(PhysicalAnalysisError::TooMany {
            field: FieldPath::from("screenSizes"),
            count: input.len(),
            max: MAX_SCREEN_SIZES,
        });
    }
    let mut seen = HashSet::with_capacity(input.len());
    let mut sizes = Vec::with_capacity(input.len());
    for (i, entry) in input.into_iter().enumerate() {
        let at = FieldPath::ROOT.key("screenSizes").index(i);
        let size_field = at.clone().key("size");
        let size = text::required(size_field.clone(), &entry.size, SCREEN_SIZE_MAX)?;
        if !seen.insert(size.to_lowercase()) {
            return Err(PhysicalAnalysisError::Duplicate {
                field: size_field,
                value: size,
            });
        }
        let field = at.key("percentage");
        let percentage = entry
            .percentage
            .ok_or_else(|| PhysicalAnalysisError::Missing {
                field: field.clone(),
            })?;
        let percentage = Range::percent().check(field, percentage)?;
        sizes.push(ScreenSize { size, percentage });
    }
    Ok(sizes)
}

fn defects(input: Vec<NewDefect>) -> Result<Vec<Defect>, PhysicalAnalysisError> {
    if input.len() > MAX_DEFECTS {
        return Err(PhysicalAnalysisError::TooMany {
            field: FieldPath::from("defects"),
            count: input.len(),
            max: MAX_DEFECTS,
        });
    }
    let mut seen = HashSet::with_capacity(input.len());
    let mut defects = Vec::with_capacity(input.len());
    for (i, entry) in input.into_iter().enumerate() {
        let at = FieldPath::ROOT.key("defects").index(i);
        let name_field = at.clone().key("name");
        let name = text::required(name_field.clone(), &entry.name, text::NAME_MAX)?;
        if !seen.insert(name.to_lowercase()) {
            return Err(PhysicalAnalysisError::Duplicate {
                field: name_field,
                value: name,
            });
        }
        let field = at.key("count");
        let count = match entry.count {
            None => return Err(PhysicalAnalysisError::Missing { field }),
            Some(c) if c < 0 => {
                return Err(PhysicalAnalysisError::NegativeCount { field, value: c });
            }
            Some(c) => c,
        };
        defects.push(Defect { name, count });
    }
    Ok(defects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stock::LotKind;
    use crate::test_values::d;

    fn lot() -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(5),
            kind: LotKind::Green,
        }
    }

    fn new() -> NewPhysicalAnalysis {
        NewPhysicalAnalysis {
            analysis_date: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            analysed_lot: lot(),
            moisture: Some(d("10.5")),
            water_activity: Some(d("0.55")),
            density: Some(d("710.25")),
            screen_sizes: vec![
                NewScreenSize {
                    size: "18".into(),
                    percentage: Some(d("60")),
                },
                NewScreenSize {
                    size: "17".into(),
                    percentage: Some(d("40")),
                },
            ],
            defects: vec![NewDefect {
                name: "Quakers".into(),
                count: Some(3),
            }],
            note: Some("clean".into()),
            evaluator: Some(" Ana ".into()),
        }
    }

    /// Parses and records `new` as `QC-3`, as the use case does once the lot is found.
    fn record(new: NewPhysicalAnalysis) -> Result<PhysicalAnalysis, PhysicalAnalysisError> {
        new.parse()?.record(Uuid::from_u128(1), 3)
    }

    fn out_of_range(field: &'static str, value: &str) -> PhysicalAnalysisError {
        let range = match field {
            "waterActivity" => "between 0 and 1",
            "density" => "above 0 and at most 10000",
            _ => "between 0 and 100",
        };
        PhysicalAnalysisError::OutOfRange {
            field: field.into(),
            range,
            value: d(value),
        }
    }

    #[test]
    fn a_plausible_analysis_is_recorded() {
        let a = record(new()).unwrap();
        assert_eq!(a.display_number(), "QC-3");
        assert_eq!(a.moisture, Some(d("10.5")));
        assert_eq!(a.water_activity, Some(d("0.55")));
        assert_eq!(a.density, Some(d("710.25")));
        assert_eq!(a.screen_sizes.len(), 2);
        assert_eq!(a.defects[0].count, 3);
        assert_eq!(a.evaluator.as_deref(), Some("Ana"));
        assert_eq!(a.analysed_lot, lot());
    }

    #[test]
    fn every_measurement_is_optional() {
        let a = record(NewPhysicalAnalysis {
            moisture: None,
            water_activity: None,
            density: None,
            screen_sizes: vec![],
            defects: vec![],
            note: None,
            evaluator: None,
            ..new()
        })
        .unwrap();
        assert_eq!((a.moisture, a.density), (None, None));
    }

    #[test]
    fn range_bounds_are_inclusive_except_density_zero() {
        let a = record(NewPhysicalAnalysis {
            moisture: Some(d("100")),
            water_activity: Some(d("1")),
            density: Some(d("10000")),
            ..new()
        })
        .unwrap();
        assert_eq!(a.moisture, Some(d("100")));
        let a = record(NewPhysicalAnalysis {
            moisture: Some(d("0")),
            water_activity: Some(d("0")),
            density: Some(d("0.000001")),
            ..new()
        })
        .unwrap();
        assert_eq!(a.density, Some(d("0.000001")));
    }

    #[test]
    fn moisture_outside_0_to_100_is_invalid() {
        for bad in ["-0.1", "100.0001"] {
            let err = record(NewPhysicalAnalysis {
                moisture: Some(d(bad)),
                ..new()
            })
            .unwrap_err();
            assert_eq!(err, out_of_range("moisture", bad));
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn water_activity_outside_0_to_1_is_invalid() {
        for bad in ["-0.01", "1.01"] {
            let err = record(NewPhysicalAnalysis {
                water_activity: Some(d(bad)),
                ..new()
            })
            .unwrap_err();
            assert_eq!(err, out_of_range("waterActivity", bad));
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn density_must_be_above_zero_and_bounded() {
        for bad in ["0", "-1", "0.0000001", "10000.5"] {
            let err = record(NewPhysicalAnalysis {
                density: Some(d(bad)),
                ..new()
            })
            .unwrap_err();
            assert_eq!(err, out_of_range("density", bad));
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn measurements_keep_six_decimals_rounded_half_even() {
        let a = record(NewPhysicalAnalysis {
            moisture: Some(d("10.0000005")),
            water_activity: Some(d("0.5000015")),
            ..new()
        })
        .unwrap();
        assert_eq!(a.moisture, Some(d("10")));
        assert_eq!(a.water_activity, Some(d("0.500002")));
    }

    #[test]
    fn screen_size_percentages_are_within_0_to_100_and_required() {
        let mut n = new();
        n.screen_sizes[1].percentage = Some(d("-5"));
        let err = record(n).unwrap_err();
        assert_eq!(err, out_of_range("screenSizes[1].percentage", "-5"));
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut n = new();
        n.screen_sizes[0].percentage = None;
        let err = record(n).unwrap_err();
        assert_eq!(
            err,
            PhysicalAnalysisError::Missing {
                field: FieldPath::from("screenSizes[0].percentage")
            }
        );
        assert_eq!(err.violation(), Violation::MissingParameter);
    }

    #[test]
    fn screen_size_percentages_add_up_to_at_most_100() {
        let mut n = new();
        n.screen_sizes[1].percentage = Some(d("40.01"));
        // Each percentage is well-formed: parsing accepts them, recording refuses their sum.
        let draft = n.parse().unwrap();
        assert_eq!(draft.analysed_lot(), lot());
        let err = draft.record(Uuid::from_u128(1), 3).unwrap_err();
        assert_eq!(
            err,
            PhysicalAnalysisError::ScreenSizesOver100 {
                field: FieldPath::from("screenSizes"),
                total: d("100.01")
            }
        );
        assert_eq!(err.violation(), Violation::BusinessRule);
    }

    #[test]
    fn shape_errors_rank_before_the_screen_size_sum() {
        let mut n = new();
        for entry in &mut n.screen_sizes {
            entry.percentage = Some(d("90"));
        }
        n.defects.push(NewDefect {
            name: "Broken".into(),
            count: Some(-1),
        });
        let err = n.parse().unwrap_err();
        assert_eq!(
            err,
            PhysicalAnalysisError::NegativeCount {
                field: FieldPath::from("defects[1].count"),
                value: -1
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn screen_sizes_are_named_distinct_and_bounded() {
        let mut n = new();
        n.screen_sizes[1].size = " 18 ".into();
        n.screen_sizes[1].percentage = Some(d("1"));
        let err = record(n).unwrap_err();
        assert!(matches!(err, PhysicalAnalysisError::Duplicate { .. }));
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut n = new();
        n.screen_sizes[0].size = "".into();
        assert!(matches!(
            record(n),
            Err(PhysicalAnalysisError::Text(TextError::Empty { .. }))
        ));
        let mut n = new();
        n.screen_sizes = (0..=MAX_SCREEN_SIZES)
            .map(|i| NewScreenSize {
                size: i.to_string(),
                percentage: Some(d("0")),
            })
            .collect();
        assert!(matches!(
            record(n),
            Err(PhysicalAnalysisError::TooMany { count: 51, .. })
        ));
    }

    #[test]
    fn defect_counts_are_required_and_not_negative() {
        let mut n = new();
        n.defects[0].count = Some(-1);
        let err = record(n).unwrap_err();
        assert_eq!(
            err,
            PhysicalAnalysisError::NegativeCount {
                field: FieldPath::from("defects[0].count"),
                value: -1
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut n = new();
        n.defects[0].count = Some(0);
        assert_eq!(record(n).unwrap().defects[0].count, 0);
        let mut n = new();
        n.defects[0].count = None;
        assert_eq!(
            record(n).unwrap_err().violation(),
            Violation::MissingParameter
        );
    }

    #[test]
    fn defects_are_named_distinct_and_bounded() {
        let mut n = new();
        n.defects.push(NewDefect {
            name: "quakers".into(),
            count: Some(1),
        });
        assert_eq!(
            record(n),
            Err(PhysicalAnalysisError::Duplicate {
                field: FieldPath::from("defects[1].name"),
                value: "quakers".into()
            })
        );
        let mut n = new();
        n.defects = (0..=MAX_DEFECTS)
            .map(|i| NewDefect {
                name: format!("d{i}"),
                count: Some(1),
            })
            .collect();
        assert!(matches!(
            record(n),
            Err(PhysicalAnalysisError::TooMany { count: 101, .. })
        ));
    }

    #[test]
    fn texts_are_bounded() {
        let mut n = new();
        n.evaluator = Some("x".repeat(text::NAME_MAX + 1));
        assert_eq!(
            record(n).unwrap_err().violation(),
            Violation::InvalidParameter
        );
        let mut n = new();
        n.note = Some("x".repeat(text::NOTE_MAX + 1));
        assert!(matches!(
            record(n),
            Err(PhysicalAnalysisError::Text(TextError::TooLong { .. }))
        ));
    }

    #[test]
    fn unknown_lots_and_lot_types_have_their_categories() {
        let err: PhysicalAnalysisError = TypedLotRef::parse(lot().id, "INVENTORY_X")
            .unwrap_err()
            .into();
        assert_eq!(err.violation(), Violation::InvalidParameter);
        assert_eq!(
            PhysicalAnalysisError::LotNotFound(lot()).violation(),
            Violation::NotFound
        );
    }
}
