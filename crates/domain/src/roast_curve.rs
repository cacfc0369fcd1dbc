//! Roast curves: series of readings (bean temperature, air pressure, …) over the time of a roast.
//!
//! A curve's unit is free text, since it depends on what the curve measures. Points keep the order
//! they were recorded in. Both the points of a curve and the curves of a roast are bounded, so no
//! request can store an unbounded series.

use rust_decimal::Decimal;

use crate::decimal::{from_micros, to_micros};
use crate::field::FieldPath;
use crate::measure::MAX_MEASURE;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Most data points in one curve.
pub const MAX_POINTS_PER_CURVE: usize = 100_000;
/// Most curves recorded for one roast.
pub const MAX_CURVES_PER_ROAST: usize = 50;
/// Longest curve unit (`CELSIUS`, `mbar`, `°F/min`).
pub const UNIT_MAX: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoastCurveError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("curve `{curve}` has {count} data points; at most {MAX_POINTS_PER_CURVE} are accepted")]
    TooManyPoints { curve: String, count: usize },
    #[error(
        "data point {index} of curve `{curve}` is at {time_ms} ms; times count from the roast start and must not be negative"
    )]
    NegativeTime {
        curve: String,
        index: usize,
        time_ms: i64,
    },
    #[error(
        "data point {index} of curve `{curve}` has value {value}; at most {MAX_MEASURE} in magnitude is accepted"
    )]
    ValueOutOfRange {
        curve: String,
        index: usize,
        value: Decimal,
    },
    #[error("{count} curves were given; at most {MAX_CURVES_PER_ROAST} are accepted per roast")]
    TooManyCurves { count: usize },
}

impl BrokenRule for RoastCurveError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

/// A time in milliseconds as a whole number, rounded half-even; `None` beyond `i64`.
pub fn whole_millis(time: Decimal) -> Option<i64> {
    use rust_decimal::prelude::ToPrimitive;
    time.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointNearestEven)
        .to_i64()
}

/// One reading: milliseconds since the roast started, and the value in the curve's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPoint {
    pub time_ms: i64,
    pub value: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastCurve {
    pub name: String,
    pub unit: String,
    pub data_points: Vec<DataPoint>,
}

impl RoastCurve {
    /// A curve the service builds itself (from a roast log, or read back): [`Self::parse`] with
    /// its texts named relative to the curve (`curve.name`).
    pub fn new(
        name: &str,
        unit: &str,
        data_points: Vec<DataPoint>,
    ) -> Result<Self, RoastCurveError> {
        Self::parse(&FieldPath::from("curve"), name, unit, data_points)
    }

    /// The curve a request gives at `at`, its path in the request (`curves[2]`): a name and
    /// a unit, at most [`MAX_POINTS_PER_CURVE`] points at non-negative times. Values are rounded
    /// half-even to six decimals, like every stored amount.
    pub fn parse(
        at: &FieldPath,
        name: &str,
        unit: &str,
        data_points: Vec<DataPoint>,
    ) -> Result<Self, RoastCurveError> {
        let name = text::required(at.clone().key("name"), name, text::NAME_MAX)?;
        let unit = text::required(at.clone().key("unit"), unit, UNIT_MAX)?;
        if data_points.len() > MAX_POINTS_PER_CURVE {
            return Err(RoastCurveError::TooManyPoints {
                curve: name,
                count: data_points.len(),
            });
        }
        let mut points = Vec::with_capacity(data_points.len());
        for (index, point) in data_points.into_iter().enumerate() {
            if point.time_ms < 0 {
                return Err(RoastCurveError::NegativeTime {
                    curve: name,
                    index,
                    time_ms: point.time_ms,
                });
            }
            let micros = to_micros(point.value).filter(|m| {
                m.unsigned_abs() <= MAX_MEASURE.unsigned_abs().saturating_mul(1_000_000)
            });
            let Some(micros) = micros else {
                return Err(RoastCurveError::ValueOutOfRange {
                    curve: name,
                    index,
                    value: point.value,
                });
            };
            points.push(DataPoint {
                time_ms: point.time_ms,
                value: from_micros(micros),
            });
        }
        Ok(Self {
            name,
            unit,
            data_points: points,
        })
    }
}

/// Checks the curves of one roast: at most [`MAX_CURVES_PER_ROAST`].
pub fn check_curves(curves: &[RoastCurve]) -> Result<(), RoastCurveError> {
    if curves.len() > MAX_CURVES_PER_ROAST {
        return Err(RoastCurveError::TooManyCurves {
            count: curves.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;

    #[test]
    fn fractional_milliseconds_round_half_even() {
        assert_eq!(whole_millis(Decimal::new(15005, 1)), Some(1500));
        assert_eq!(whole_millis(Decimal::new(15015, 1)), Some(1502));
        assert_eq!(whole_millis(Decimal::MAX), None);
    }

    fn point(time_ms: i64, value: &str) -> DataPoint {
        DataPoint {
            time_ms,
            value: d(value),
        }
    }

    #[test]
    fn a_curve_needs_a_name_and_a_unit() {
        let err =
            RoastCurve::parse(&FieldPath::from("curves[1]"), " ", "CELSIUS", vec![]).unwrap_err();
        assert_eq!(
            err,
            RoastCurveError::Text(TextError::Empty {
                field: FieldPath::from("curves[1].name")
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        assert_eq!(
            RoastCurve::parse(&FieldPath::from("curves[0]"), "BT", "", vec![]),
            Err(RoastCurveError::Text(TextError::Empty {
                field: FieldPath::from("curves[0].unit")
            }))
        );
        let curve = RoastCurve::new(" BT ", "CELSIUS", vec![point(0, "20.5")]).unwrap();
        assert_eq!(curve.name, "BT");
    }

    #[test]
    fn data_point_times_must_not_be_negative() {
        let err =
            RoastCurve::new("BT", "CELSIUS", vec![point(0, "1"), point(-1, "2")]).unwrap_err();
        assert!(matches!(
            err,
            RoastCurveError::NegativeTime {
                index: 1,
                time_ms: -1,
                ..
            }
        ));
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn data_point_values_are_exact_may_be_negative_and_are_bounded() {
        let curve =
            RoastCurve::new("RoR", "CELSIUS_PER_MINUTE", vec![point(5, "-3.1234565")]).unwrap();
        assert_eq!(curve.data_points[0].value, d("-3.123456"));
        assert!(matches!(
            RoastCurve::new("RoR", "X", vec![point(5, "1000000000.5")]),
            Err(RoastCurveError::ValueOutOfRange { .. })
        ));
    }

    #[test]
    fn points_per_curve_are_bounded() {
        let points = vec![point(1, "1"); MAX_POINTS_PER_CURVE + 1];
        assert!(matches!(
            RoastCurve::new("BT", "CELSIUS", points),
            Err(RoastCurveError::TooManyPoints { .. })
        ));
        let points = vec![point(1, "1"); MAX_POINTS_PER_CURVE];
        assert!(RoastCurve::new("BT", "CELSIUS", points).is_ok());
    }

    #[test]
    fn curves_per_roast_are_bounded() {
        let curve = RoastCurve::new("BT", "CELSIUS", vec![]).unwrap();
        assert!(check_curves(&vec![curve.clone(); MAX_CURVES_PER_ROAST]).is_ok());
        let err = check_curves(&vec![curve; MAX_CURVES_PER_ROAST + 1]).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }
}
