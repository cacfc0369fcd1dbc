//! What was noted about one roast: who roasted on which machine, temperatures, colour values and
//! times. One entry per roasted lot; every field is optional.
//!
//! Units are closed lists (two temperature units, four time units, fourteen roast colour scales);
//! an unknown unit is an invalid parameter. Amounts are exact. Times are relative to the start of
//! the roast and never negative; temperatures may be.

use rust_decimal::Decimal;

use crate::field::FieldPath;
use crate::measure::{Measure, MeasureError, Unit};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TemperatureUnit {
    Celsius,
    Fahrenheit,
}

impl Unit for TemperatureUnit {
    const KIND: &'static str = "temperature";
    const SIGNED: bool = true;
    const ALL: &'static [Self] = &[Self::Celsius, Self::Fahrenheit];

    fn as_str(self) -> &'static str {
        match self {
            Self::Celsius => "CELSIUS",
            Self::Fahrenheit => "FAHRENHEIT",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    Millisecond,
    Second,
    Minute,
    Hour,
}

impl TimeUnit {
    /// Milliseconds in one of this unit.
    pub fn millis(self) -> i64 {
        match self {
            Self::Millisecond => 1,
            Self::Second => 1_000,
            Self::Minute => 60_000,
            Self::Hour => 3_600_000,
        }
    }
}

impl Unit for TimeUnit {
    const KIND: &'static str = "time";
    const SIGNED: bool = false;
    const ALL: &'static [Self] = &[Self::Millisecond, Self::Second, Self::Minute, Self::Hour];

    fn as_str(self) -> &'static str {
        match self {
            Self::Millisecond => "MILLISECOND",
            Self::Second => "SECOND",
            Self::Minute => "MINUTE",
            Self::Hour => "HOUR",
        }
    }
}

/// The colour scale (and instrument) a roast value was read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoastValueUnit {
    AgtronGourmet,
    AgtronCommercial,
    Colortrack,
    Dipper,
    EspressoVision,
    NeuhausNeotec,
    ProbatColorette,
    HunterL,
    Javalytics,
    KonicaMinolta,
    Tonino,
    Lighttells,
    Roami,
    Roastrite,
}

impl Unit for RoastValueUnit {
    const KIND: &'static str = "roast value";
    const SIGNED: bool = false;
    const ALL: &'static [Self] = &[
        Self::AgtronGourmet,
        Self::AgtronCommercial,
        Self::Colortrack,
        Self::Dipper,
        Self::EspressoVision,
        Self::NeuhausNeotec,
        Self::ProbatColorette,
        Self::HunterL,
        Self::Javalytics,
        Self::KonicaMinolta,
        Self::Tonino,
        Self::Lighttells,
        Self::Roami,
        Self::Roastrite,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Self::AgtronGourmet => "AGTRON_GOURMET",
            Self::AgtronCommercial => "AGTRON_COMMERCIAL",
            Self::Colortrack => "COLORTRACK",
            Self::Dipper => "DIPPER",
            Self::EspressoVision => "ESPRESSO_VISION",
            Self::NeuhausNeotec => "NEUHAUS_NEOTEC",
            Self::ProbatColorette => "PROBAT_COLORETTE",
            Self::HunterL => "HUNTER_L",
            Self::Javalytics => "JAVALYTICS",
            Self::KonicaMinolta => "KONICA_MINOLTA",
            Self::Tonino => "TONINO",
            Self::Lighttells => "LIGHTTELLS",
            Self::Roami => "ROAMI",
            Self::Roastrite => "ROASTRITE",
        }
    }
}

/// A temperature; may be below zero.
pub type Temperature = Measure<TemperatureUnit>;
/// A duration or an instant relative to the start of the roast; never negative.
pub type Time = Measure<TimeUnit>;
/// A roast colour reading; never negative.
pub type RoastValue = Measure<RoastValueUnit>;

impl Time {
    /// The time in milliseconds, exactly.
    pub fn as_millis(self) -> Decimal {
        // A time is bounded like every measure, far below where this could overflow.
        self.amount()
            .saturating_mul(Decimal::from(self.unit().millis()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoastDetailsError {
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error(transparent)]
    Text(#[from] TextError),
}

impl BrokenRule for RoastDetailsError {
    fn violation(&self) -> Violation {
        match self {
            Self::Measure(e) => e.violation(),
            Self::Text(e) => e.violation(),
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

/// A `NameReference` (`roastTechnician`, `machine`, `profileGroup`): the wire accepts `"name"` or
/// `{"name": "name"}`; both arrive here as the name. The name is trimmed and bounded; a blank name
/// is the same as none, since clients send `""` for "not recorded".
pub fn name_reference(
    field: impl Into<FieldPath>,
    name: Option<&str>,
) -> Result<Option<String>, TextError> {
    match name.map(str::trim) {
        None | Some("") => Ok(None),
        Some(name) => text::required(field, name, text::NAME_MAX).map(Some),
    }
}

/// The details of one roast as a request or a log gives them: measures already parsed, free text
/// not yet checked. [`RoastDetails::new`] checks it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoastDetailsDraft {
    pub roast_technician: Option<String>,
    pub note: Option<String>,
    pub start_temperature: Option<Temperature>,
    pub end_temperature: Option<Temperature>,
    /// Colour before grinding.
    pub roast_value: Option<RoastValue>,
    /// Colour after grinding.
    pub roast_value2: Option<RoastValue>,
    pub roast_duration: Option<Time>,
    pub first_crack_time: Option<Time>,
    pub color_change_time: Option<Time>,
    pub machine: Option<String>,
}

/// The details of one roast, their text checked: build them with [`RoastDetails::new`] (stores
/// read back what was checked when written).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoastDetails {
    pub roast_technician: Option<String>,
    pub note: Option<String>,
    pub start_temperature: Option<Temperature>,
    pub end_temperature: Option<Temperature>,
    /// Colour before grinding.
    pub roast_value: Option<RoastValue>,
    /// Colour after grinding.
    pub roast_value2: Option<RoastValue>,
    pub roast_duration: Option<Time>,
    pub first_crack_time: Option<Time>,
    pub color_change_time: Option<Time>,
    pub machine: Option<String>,
}

impl RoastDetails {
    /// Checks the free text of `draft` (names through [`name_reference`], the note bounded); its
    /// measures are valid by construction. Errors name the fields by their path in a roast
    /// request (`data.details.machine`).
    pub fn new(draft: RoastDetailsDraft) -> Result<Self, RoastDetailsError> {
        Ok(Self {
            roast_technician: name_reference(
                "details.roastTechnician",
                draft.roast_technician.as_deref(),
            )?,
            note: draft
                .note
                .as_deref()
                .map(|n| text::bounded("details.note", n, text::NOTE_MAX))
                .transpose()?,
            machine: name_reference("details.machine", draft.machine.as_deref())?,
            start_temperature: draft.start_temperature,
            end_temperature: draft.end_temperature,
            roast_value: draft.roast_value,
            roast_value2: draft.roast_value2,
            roast_duration: draft.roast_duration,
            first_crack_time: draft.first_crack_time,
            color_change_time: draft.color_change_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;

    #[test]
    fn all_fourteen_roast_value_units_round_trip_by_their_wire_names() {
        assert_eq!(RoastValueUnit::ALL.len(), 14);
        for unit in RoastValueUnit::ALL {
            assert_eq!(RoastValueUnit::parse(unit.as_str()), Ok(*unit));
        }
        assert_eq!(
            RoastValue::parse(d("55.5"), "AGTRON_GOURMET")
                .unwrap()
                .to_string(),
            "55.5 AGTRON_GOURMET"
        );
    }

    #[test]
    fn unknown_units_are_invalid_parameters_naming_the_allowed_ones() {
        let err = Temperature::parse(d("200"), "KELVIN").unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
        assert_eq!(
            err.to_string(),
            "`KELVIN` is not a temperature unit; use one of CELSIUS, FAHRENHEIT"
        );
        assert!(Time::parse(d("1"), "minute").is_err());
        assert!(RoastValue::parse(d("1"), "AGTRON").is_err());
    }

    #[test]
    fn times_and_roast_values_are_never_negative_but_temperatures_may_be() {
        assert!(matches!(
            Time::parse(d("-1"), "SECOND"),
            Err(MeasureError::Negative { kind: "time", .. })
        ));
        assert!(RoastValue::parse(d("-0.5"), "TONINO").is_err());
        assert_eq!(
            Temperature::parse(d("-10.25"), "CELSIUS").unwrap().amount(),
            d("-10.25")
        );
        assert!(Time::parse(d("0"), "HOUR").is_ok());
    }

    #[test]
    fn amounts_are_exact_and_rounded_half_even_to_six_decimals() {
        let t = Temperature::parse(d("204.1234565"), "FAHRENHEIT").unwrap();
        assert_eq!(t.amount(), d("204.123456"));
        assert_eq!(t.micros(), 204_123_456);
        assert!(matches!(
            Temperature::parse(d("1000000001"), "CELSIUS"),
            Err(MeasureError::OutOfRange { .. })
        ));
    }

    #[test]
    fn times_convert_to_milliseconds_exactly() {
        assert_eq!(
            Time::parse(d("1.5"), "MINUTE").unwrap().as_millis(),
            d("90000")
        );
        assert_eq!(
            Time::parse(d("0.25"), "MILLISECOND").unwrap().as_millis(),
            d("0.25")
        );
    }

    #[test]
    fn name_references_are_trimmed_and_blank_means_none() {
        assert_eq!(
            name_reference("details.machine", Some("  Probat P12 ")),
            Ok(Some("Probat P12".into()))
        );
        assert_eq!(name_reference("details.machine", Some("   ")), Ok(None));
        assert_eq!(name_reference("details.machine", None), Ok(None));
        let long = "x".repeat(text::NAME_MAX + 1);
        assert_eq!(
            name_reference("details.machine", Some(&long)),
            Err(TextError::TooLong {
                field: FieldPath::from("details.machine"),
                max: text::NAME_MAX
            })
        );
    }

    #[test]
    fn details_bound_their_text_and_keep_their_measures() {
        let start = Temperature::parse(d("200"), "CELSIUS").unwrap();
        let details = RoastDetails::new(RoastDetailsDraft {
            roast_technician: Some(" Ana ".into()),
            note: Some("even development".into()),
            start_temperature: Some(start),
            ..RoastDetailsDraft::default()
        })
        .unwrap();
        assert_eq!(details.roast_technician.as_deref(), Some("Ana"));
        assert_eq!(details.start_temperature, Some(start));
        let err = RoastDetails::new(RoastDetailsDraft {
            note: Some("x".repeat(text::NOTE_MAX + 1)),
            ..RoastDetailsDraft::default()
        })
        .unwrap_err();
        assert_eq!(
            err,
            RoastDetailsError::Text(TextError::TooLong {
                field: FieldPath::from("details.note"),
                max: text::NOTE_MAX
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }
}
