//! Roast logs as Artisan writes them, and what a roast log says about the roast (api-decisions §9).
//!
//! [`RoastLog`] holds the fields of a parsed log that matter (the transport adapter parses the
//! file; this module never sees its text). [`LoggedRoast::from_log`] maps them to what a recorded
//! roast needs: weights, date, events as details, and the bean and environment temperature curves.
//! Artisan's `computed` block is never used: it can disagree with the samples.

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::field::FieldPath;
use crate::measure::{MeasureError, Unit};
use crate::roast_curve::{DataPoint, RoastCurve, RoastCurveError, whole_millis};
use crate::roast_details::{
    RoastDetails, RoastDetailsDraft, RoastValue, RoastValueUnit, Temperature, TemperatureUnit,
    Time, TimeUnit,
};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::WeightUnit;

/// Name of the bean temperature curve (Artisan's `temp2`, BT).
pub const BEAN_TEMPERATURE: &str = "beanTemperature";
/// Name of the environment temperature curve (Artisan's `temp1`, ET).
pub const ENVIRONMENT_TEMPERATURE: &str = "environmentTemperature";

/// Positions of the events in `timeindex`.
const CHARGE: usize = 0;
const DRY_END: usize = 1;
const FIRST_CRACK: usize = 2;
const DROP: usize = 6;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoastLogError {
    #[error("`{field}` is required in an Artisan log")]
    Missing { field: &'static str },
    #[error("`{field}` {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
    #[error(
        "`timex` has {timex} samples but `{field}` has {other}; the lists must have the same length"
    )]
    LengthMismatch {
        field: &'static str,
        timex: usize,
        other: usize,
    },
    #[error("`timeindex` entry {event} ({name}) is {index}, outside `timex` (0..{len})")]
    IndexOutsideTimex {
        event: usize,
        name: &'static str,
        index: i64,
        len: usize,
    },
    #[error("DROP (sample {drop}) comes before CHARGE (sample {charge})")]
    DropBeforeCharge { charge: usize, drop: usize },
    #[error("{0}")]
    Curve(#[from] RoastCurveError),
    #[error("{0}")]
    Measure(#[from] MeasureError),
    #[error("{0}")]
    Text(#[from] TextError),
}

impl BrokenRule for RoastLogError {
    fn violation(&self) -> Violation {
        // Whatever is wrong with the content, the request's `content` field is what is invalid.
        Violation::InvalidParameter
    }
}

/// A log refused, named by the field of the request that carried it (`content`). The error's own
/// fields are keys of the log, not of the request: only `field` is a request path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {error}")]
pub struct ContentRefused {
    pub field: FieldPath,
    pub error: RoastLogError,
}

impl BrokenRule for ContentRefused {
    fn violation(&self) -> Violation {
        self.error.violation()
    }

    fn rebase(&mut self, base: &FieldPath) {
        self.field.rebase(base);
    }
}

/// The names of the events of `timeindex`, in order.
pub const EVENT_NAMES: [&str; 8] = [
    "CHARGE", "DRY END", "FCs", "FCe", "SCs", "SCe", "DROP", "COOL",
];

/// `weight` of a log: `[in, out, unit]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogWeight {
    pub green: Decimal,
    pub roasted: Decimal,
    /// `g`, `Kg`, `lb` or `oz`.
    pub unit: String,
}

/// The fields of an Artisan log that a roast is recorded from. A sample that is not a number
/// (`nan`) is `None`, like Artisan's `-1`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoastLog {
    pub title: Option<String>,
    pub roast_uuid: String,
    /// Seconds since the Unix epoch.
    pub roast_epoch: Decimal,
    /// Seconds since recording started, one per sample.
    pub timex: Vec<Decimal>,
    /// ET samples.
    pub temp1: Vec<Option<Decimal>>,
    /// BT samples.
    pub temp2: Vec<Option<Decimal>>,
    /// Indexes into `timex` of [CHARGE, DRY END, FCs, FCe, SCs, SCe, DROP, COOL]; empty when the
    /// log has none (every event unmarked).
    pub timeindex: Vec<i64>,
    pub weight: Option<LogWeight>,
    /// `C` or `F`; Celsius when absent.
    pub mode: Option<String>,
    pub operator: Option<String>,
    pub roaster_type: Option<String>,
    pub roasting_notes: Option<String>,
    pub whole_color: Option<Decimal>,
    pub ground_color: Option<Decimal>,
    pub color_system: Option<String>,
}

/// A weight of the log in a unit the API knows, not yet judged (a negative or zero weight is the
/// recording's to refuse, with the status the contract gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedWeight {
    pub amount: Decimal,
    pub unit: WeightUnit,
}

/// What a roast log says about the roast, ready to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRoast {
    /// The log's `roastUUID`.
    pub external_id: String,
    /// The log's `title`, when not blank.
    pub title: Option<String>,
    pub roasted_date: DateTime<Utc>,
    /// Green coffee put in the roaster (`weight[0]`).
    pub green_weight: LoggedWeight,
    /// What came out (`weight[1]`).
    pub roasted_weight: LoggedWeight,
    pub details: RoastDetails,
    pub curves: Vec<RoastCurve>,
}

/// An event's sample index: `None` when unmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Events([Option<usize>; 8]);

impl Events {
    fn from_timeindex(timeindex: &[i64], samples: usize) -> Result<Self, RoastLogError> {
        if !timeindex.is_empty() && !(7..=8).contains(&timeindex.len()) {
            return Err(RoastLogError::Invalid {
                field: "timeindex",
                problem: format!(
                    "has {} entries; an Artisan log has 8 (7 in old files)",
                    timeindex.len()
                ),
            });
        }
        let mut events = [None; 8];
        for ((event, &index), slot) in timeindex.iter().enumerate().zip(events.iter_mut()) {
            let unmarked = if event == CHARGE {
                index == -1
            } else {
                index == 0
            };
            if unmarked {
                continue;
            }
            let at = usize::try_from(index).ok().filter(|i| *i < samples);
            *slot = Some(at.ok_or(RoastLogError::IndexOutsideTimex {
                event,
                name: event_name(event),
                index,
                len: samples,
            })?);
        }
        // An unmarked CHARGE is the first sample.
        Ok(Self(events))
    }

    /// CHARGE; an unmarked CHARGE is the first sample.
    fn charge(&self) -> usize {
        self.get(CHARGE).unwrap_or(0)
    }

    fn get(&self, event: usize) -> Option<usize> {
        self.0.get(event).copied().flatten()
    }
}

fn event_name(event: usize) -> &'static str {
    EVENT_NAMES.get(event).copied().unwrap_or("event")
}

/// Seconds from sample `from` to sample `to`; an error when the samples are beyond any clock.
fn elapsed(timex: &[Decimal], from: usize, to: usize) -> Result<Option<Decimal>, RoastLogError> {
    let (Some(to_time), Some(from_time)) = (timex.get(to), timex.get(from)) else {
        return Ok(None);
    };
    to_time
        .checked_sub(*from_time)
        .map(Some)
        .ok_or_else(|| sample_out_of_range(to))
}

fn sample_out_of_range(sample: usize) -> RoastLogError {
    RoastLogError::Invalid {
        field: "timex",
        problem: format!("sample {sample} is out of range"),
    }
}

/// A log weight in the API's units: `g`, `Kg` → KG; `lb`, `oz` → LBS (1 oz = 1/16 lb exactly).
fn logged_weight(amount: Decimal, unit: &str) -> Result<LoggedWeight, RoastLogError> {
    let (amount, unit) = match unit {
        "g" => (
            amount.checked_div(Decimal::ONE_THOUSAND).unwrap_or(amount),
            WeightUnit::Kg,
        ),
        "Kg" | "kg" => (amount, WeightUnit::Kg),
        "lb" => (amount, WeightUnit::Lbs),
        "oz" => (
            amount.checked_div(Decimal::from(16)).unwrap_or(amount),
            WeightUnit::Lbs,
        ),
        other => {
            return Err(RoastLogError::Invalid {
                field: "weight",
                problem: format!("has unit `{other}`; use one of g, Kg, lb, oz"),
            });
        }
    };
    Ok(LoggedWeight { amount, unit })
}

/// A colour reading on a known scale: zero (Artisan's "not measured") and unknown scales are left
/// out. Scales compare case-insensitively with the wire names; Artisan's `Agtron` is the gourmet
/// scale.
fn roast_value(
    value: Option<Decimal>,
    system: Option<&str>,
) -> Result<Option<RoastValue>, RoastLogError> {
    let (Some(value), Some(system)) = (value, system) else {
        return Ok(None);
    };
    if value.is_zero() {
        return Ok(None);
    }
    let wire = system.trim().to_uppercase().replace([' ', '-'], "_");
    let unit = if wire == "AGTRON" {
        Some(RoastValueUnit::AgtronGourmet)
    } else {
        RoastValueUnit::ALL
            .iter()
            .copied()
            .find(|u| u.as_str() == wire)
    };
    match unit {
        Some(unit) => Ok(Some(RoastValue::new(value, unit)?)),
        None => Ok(None),
    }
}

fn seconds(amount: Decimal) -> Result<Time, RoastLogError> {
    Ok(Time::new(amount, TimeUnit::Second)?)
}

/// A curve of the samples from CHARGE to `last` inclusive, `-1` and missing samples left out.
fn curve(
    name: &str,
    unit: TemperatureUnit,
    timex: &[Decimal],
    samples: &[Option<Decimal>],
    charge: usize,
    last: usize,
) -> Result<RoastCurve, RoastLogError> {
    let start = timex.get(charge).copied().unwrap_or_default();
    // `last` is an index of `timex`, so `last + 1` is at most its length.
    let count = last.saturating_add(1).saturating_sub(charge);
    let mut points = Vec::with_capacity(count);
    let readings = timex.iter().zip(samples).enumerate();
    for (i, (time, sample)) in readings.skip(charge).take(count) {
        let Some(value) = sample.filter(|v| *v != Decimal::NEGATIVE_ONE) else {
            continue;
        };
        let time_ms = time
            .checked_sub(start)
            .and_then(|seconds| seconds.checked_mul(Decimal::ONE_THOUSAND))
            .and_then(whole_millis)
            .ok_or_else(|| sample_out_of_range(i))?;
        points.push(DataPoint { time_ms, value });
    }
    Ok(RoastCurve::new(name, unit.as_str(), points)?)
}

fn blank_to_none(text: &Option<String>) -> Option<String> {
    text.as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// A text of the log (`field` is its key), blank as none, at most `max` characters.
fn log_text(
    field: &'static str,
    text: &Option<String>,
    max: usize,
) -> Result<Option<String>, RoastLogError> {
    match blank_to_none(text) {
        Some(t) if t.chars().count() > max => Err(RoastLogError::Invalid {
            field,
            problem: format!("is longer than {max} characters"),
        }),
        text => Ok(text),
    }
}

impl LoggedRoast {
    /// Maps a log to a roast (api-decisions §9). Refuses logs that are not well-formed: a required
    /// field missing, lists of different lengths, an index outside `timex`, DROP before CHARGE.
    pub fn from_log(log: &RoastLog) -> Result<Self, RoastLogError> {
        let external_id = text::required("roastUUID", &log.roast_uuid, text::EXTERNAL_ID_MAX)?;
        let roasted_date = epoch(log.roast_epoch)?;
        let weight = log
            .weight
            .as_ref()
            .ok_or(RoastLogError::Missing { field: "weight" })?;
        let green_weight = logged_weight(weight.green, &weight.unit)?;
        let roasted_weight = logged_weight(weight.roasted, &weight.unit)?;
        let samples = log.timex.len();
        for (field, len) in [("temp1", log.temp1.len()), ("temp2", log.temp2.len())] {
            if len != samples {
                return Err(RoastLogError::LengthMismatch {
                    field,
                    timex: samples,
                    other: len,
                });
            }
        }
        if samples == 0 {
            return Err(RoastLogError::Invalid {
                field: "timex",
                problem: "has no samples".into(),
            });
        }
        let unit = match log.mode.as_deref().map(str::trim) {
            None | Some("C") => TemperatureUnit::Celsius,
            Some("F") => TemperatureUnit::Fahrenheit,
            Some(other) => {
                return Err(RoastLogError::Invalid {
                    field: "mode",
                    problem: format!("is `{other}`; use C or F"),
                });
            }
        };
        let events = Events::from_timeindex(&log.timeindex, samples)?;
        let charge = events.charge();
        let drop = events.get(DROP);
        if let Some(drop) = drop
            && drop < charge
        {
            return Err(RoastLogError::DropBeforeCharge { charge, drop });
        }
        let last = drop.unwrap_or(samples.saturating_sub(1));
        let since_charge = |event: usize| -> Result<Option<Time>, RoastLogError> {
            match events.get(event) {
                Some(at) if event != CHARGE && at >= charge => {
                    elapsed(&log.timex, charge, at)?.map(seconds).transpose()
                }
                Some(at) if event != CHARGE => Err(RoastLogError::Invalid {
                    field: "timeindex",
                    problem: format!(
                        "puts {} (sample {at}) before CHARGE (sample {charge})",
                        event_name(event)
                    ),
                }),
                _ => Ok(None),
            }
        };
        let temperature = |at: Option<usize>| -> Result<Option<Temperature>, RoastLogError> {
            match at.and_then(|i| log.temp2.get(i).copied().flatten()) {
                Some(bt) if bt != Decimal::NEGATIVE_ONE => Ok(Some(Temperature::new(bt, unit)?)),
                _ => Ok(None),
            }
        };
        // The log's own texts are named by their keys in the log, not by the fields of a roast
        // request that the details' own checks name.
        let roast_technician = log_text("operator", &log.operator, text::NAME_MAX)?;
        let note = log_text("roastingnotes", &log.roasting_notes, text::NOTE_MAX)?;
        let machine = log_text("roastertype", &log.roaster_type, text::NAME_MAX)?;
        let details = RoastDetails::new(RoastDetailsDraft {
            roast_technician,
            note,
            start_temperature: temperature(Some(charge))?,
            end_temperature: temperature(drop)?,
            roast_value: roast_value(log.whole_color, log.color_system.as_deref())?,
            roast_value2: roast_value(log.ground_color, log.color_system.as_deref())?,
            roast_duration: since_charge(DROP)?,
            first_crack_time: since_charge(FIRST_CRACK)?,
            color_change_time: since_charge(DRY_END)?,
            machine,
        })
        .map_err(|e| RoastLogError::Invalid {
            field: "details",
            problem: e.to_string(),
        })?;
        let curves = vec![
            curve(BEAN_TEMPERATURE, unit, &log.timex, &log.temp2, charge, last)?,
            curve(
                ENVIRONMENT_TEMPERATURE,
                unit,
                &log.timex,
                &log.temp1,
                charge,
                last,
            )?,
        ];
        Ok(Self {
            external_id,
            title: blank_to_none(&log.title),
            roasted_date,
            green_weight,
            roasted_weight,
            details,
            curves,
        })
    }
}

/// `roastepoch` as an instant, rounded half-even to the second.
fn epoch(seconds: Decimal) -> Result<DateTime<Utc>, RoastLogError> {
    use rust_decimal::prelude::ToPrimitive;
    seconds
        .round_dp_with_strategy(0, RoundingStrategy::MidpointNearestEven)
        .to_i64()
        .and_then(|s| DateTime::from_timestamp(s, 0))
        .ok_or(RoastLogError::Invalid {
            field: "roastepoch",
            problem: format!("{seconds} is not a date"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;
    use proptest::prelude::*;

    fn temps(values: &[&str]) -> Vec<Option<Decimal>> {
        values.iter().map(|v| Some(d(v))).collect()
    }

    /// Ten samples two seconds apart: CHARGE at 1, DRY END 3, FCs 6, DROP 8.
    fn log() -> RoastLog {
        RoastLog {
            title: Some(" Kenya AA ".into()),
            roast_uuid: "7c2f0e64a1b84d0fa3e1c0b5d2e4f6a8".into(),
            roast_epoch: d("1763900000"),
            timex: (0..10).map(|i| Decimal::from(i * 2)).collect(),
            temp1: temps(&[
                "230", "228.5", "220", "215", "212", "210", "208", "206", "205", "204",
            ]),
            temp2: temps(&[
                "25", "200.5", "150", "160", "170", "180", "190", "200", "210.25", "150",
            ]),
            timeindex: vec![1, 3, 6, 0, 0, 0, 8, 0],
            weight: Some(LogWeight {
                green: d("1000"),
                roasted: d("852.5"),
                unit: "g".into(),
            }),
            mode: Some("C".into()),
            operator: Some("Ana".into()),
            roaster_type: Some("Giesen W6A".into()),
            roasting_notes: Some("sweet".into()),
            whole_color: Some(d("65")),
            ground_color: Some(d("72.5")),
            color_system: Some("Agtron".into()),
        }
    }

    fn times(curve: &RoastCurve) -> Vec<i64> {
        curve.data_points.iter().map(|p| p.time_ms).collect()
    }

    #[test]
    fn a_log_maps_to_weights_date_details_and_curves_from_charge_to_drop() {
        let roast = LoggedRoast::from_log(&log()).unwrap();
        assert_eq!(roast.external_id, "7c2f0e64a1b84d0fa3e1c0b5d2e4f6a8");
        assert_eq!(roast.title.as_deref(), Some("Kenya AA"));
        assert_eq!(roast.roasted_date.to_rfc3339(), "2025-11-23T12:13:20+00:00");
        assert_eq!(
            roast.green_weight,
            LoggedWeight {
                amount: d("1"),
                unit: WeightUnit::Kg
            }
        );
        assert_eq!(roast.roasted_weight.amount, d("0.8525"));
        let details = &roast.details;
        assert_eq!(
            details.start_temperature.unwrap().to_string(),
            "200.5 CELSIUS"
        );
        assert_eq!(
            details.end_temperature.unwrap().to_string(),
            "210.25 CELSIUS"
        );
        assert_eq!(details.roast_duration.unwrap().to_string(), "14 SECOND");
        assert_eq!(details.first_crack_time.unwrap().to_string(), "10 SECOND");
        assert_eq!(details.color_change_time.unwrap().to_string(), "4 SECOND");
        assert_eq!(details.roast_technician.as_deref(), Some("Ana"));
        assert_eq!(details.machine.as_deref(), Some("Giesen W6A"));
        assert_eq!(details.note.as_deref(), Some("sweet"));
        assert_eq!(
            details.roast_value.unwrap().to_string(),
            "65 AGTRON_GOURMET"
        );
        assert_eq!(
            details.roast_value2.unwrap().to_string(),
            "72.5 AGTRON_GOURMET"
        );
        let [bt, et] = &roast.curves[..] else {
            panic!("two curves")
        };
        assert_eq!(
            (bt.name.as_str(), bt.unit.as_str()),
            (BEAN_TEMPERATURE, "CELSIUS")
        );
        assert_eq!(et.name, ENVIRONMENT_TEMPERATURE);
        assert_eq!(
            times(bt),
            vec![0, 2000, 4000, 6000, 8000, 10_000, 12_000, 14_000]
        );
        assert_eq!(bt.data_points[0].value, d("200.5"));
        assert_eq!(bt.data_points[7].value, d("210.25"));
        assert_eq!(et.data_points[0].value, d("228.5"));
    }

    #[test]
    fn unmarked_events_are_null_and_an_unmarked_charge_is_the_first_sample() {
        let mut l = log();
        l.timeindex = vec![-1, 0, 0, 0, 0, 0, 0, 0];
        let roast = LoggedRoast::from_log(&l).unwrap();
        assert_eq!(roast.details.start_temperature.unwrap().amount(), d("25"));
        assert_eq!(roast.details.end_temperature, None);
        assert_eq!(roast.details.roast_duration, None);
        assert_eq!(roast.details.first_crack_time, None);
        assert_eq!(roast.details.color_change_time, None);
        // Without DROP the curves run to the last sample.
        assert_eq!(roast.curves[0].data_points.len(), 10);
        assert_eq!(roast.curves[0].data_points[9].time_ms, 18_000);
        // No timeindex at all: the same.
        l.timeindex = vec![];
        assert_eq!(LoggedRoast::from_log(&l).unwrap(), roast);
    }

    #[test]
    fn old_logs_have_seven_events() {
        let mut l = log();
        l.timeindex = vec![1, 3, 6, 0, 0, 0, 8];
        let roast = LoggedRoast::from_log(&l).unwrap();
        assert_eq!(
            roast.details.roast_duration.unwrap().to_string(),
            "14 SECOND"
        );
        l.timeindex = vec![1, 3, 6];
        assert!(matches!(
            LoggedRoast::from_log(&l),
            Err(RoastLogError::Invalid {
                field: "timeindex",
                ..
            })
        ));
    }

    #[test]
    fn fahrenheit_logs_keep_fahrenheit() {
        let mut l = log();
        l.mode = Some("F".into());
        let roast = LoggedRoast::from_log(&l).unwrap();
        assert_eq!(roast.curves[0].unit, "FAHRENHEIT");
        assert_eq!(
            roast.details.start_temperature.unwrap().to_string(),
            "200.5 FAHRENHEIT"
        );
        l.mode = Some("K".into());
        assert_eq!(
            LoggedRoast::from_log(&l).unwrap_err().to_string(),
            "`mode` is `K`; use C or F"
        );
    }

    #[test]
    fn pounds_and_ounces_are_exact_pounds_and_grams_exact_kilograms() {
        let mut l = log();
        let mut weigh = |green: &str, roasted: &str, unit: &str| {
            l.weight = Some(LogWeight {
                green: d(green),
                roasted: d(roasted),
                unit: unit.into(),
            });
            let r = LoggedRoast::from_log(&l).unwrap();
            (r.green_weight, r.roasted_weight)
        };
        let lbs = |a: &str| LoggedWeight {
            amount: d(a),
            unit: WeightUnit::Lbs,
        };
        assert_eq!(weigh("22", "18.7", "lb"), (lbs("22"), lbs("18.7")));
        // 1 oz = 1/16 lb: 100 oz = 6.25 lb, 85.1 oz = 5.31875 lb.
        assert_eq!(weigh("100", "85.1", "oz"), (lbs("6.25"), lbs("5.31875")));
        let (g, r) = weigh("15", "12.75", "Kg");
        assert_eq!(
            (g.amount, r.amount, r.unit),
            (d("15"), d("12.75"), WeightUnit::Kg)
        );
        assert_eq!(weigh("0.5", "0.4", "g").1.amount, d("0.0004"));
        l.weight = Some(LogWeight {
            green: d("1"),
            roasted: d("1"),
            unit: "stone".into(),
        });
        assert!(
            LoggedRoast::from_log(&l)
                .unwrap_err()
                .to_string()
                .contains("g, Kg, lb, oz")
        );
    }

    #[test]
    fn missing_samples_are_left_out_and_times_round_half_even() {
        let mut l = log();
        l.timeindex = vec![0, 0, 0, 0, 0, 0, 0, 0];
        l.timex = [
            "0", "0.0005", "0.0015", "0.0025", "1.2344", "1.2346", "2", "3", "4", "5",
        ]
        .map(d)
        .to_vec();
        l.temp2[2] = Some(Decimal::NEGATIVE_ONE);
        l.temp2[3] = None;
        l.temp1[0] = Some(Decimal::NEGATIVE_ONE);
        let roast = LoggedRoast::from_log(&l).unwrap();
        // 0.5 ms → 0, 2.5 ms → 2 (half-even); samples 2 and 3 missing from BT.
        assert_eq!(times(&roast.curves[0])[..4], [0, 0, 1234, 1235]);
        assert_eq!(roast.curves[0].data_points.len(), 8);
        assert_eq!(times(&roast.curves[1])[..3], [0, 2, 2]);
        assert_eq!(roast.curves[1].data_points.len(), 9);
        assert_eq!(roast.details.start_temperature.unwrap().amount(), d("25"));
    }

    #[test]
    fn a_twenty_minute_log_at_one_sample_a_second_maps_whole() {
        let mut l = log();
        let n = 1200;
        l.timex = (0..n).map(Decimal::from).collect();
        l.temp1 = (0..n).map(|i| Some(Decimal::from(200 + i % 50))).collect();
        l.temp2 = (0..n).map(|i| Some(Decimal::new(1000 + i, 1))).collect();
        l.timeindex = vec![30, 300, 600, 660, 0, 0, 1100, 1190];
        let roast = LoggedRoast::from_log(&l).unwrap();
        assert_eq!(roast.curves[0].data_points.len(), 1071);
        assert_eq!(
            roast.curves[0].data_points.last().unwrap().time_ms,
            1_070_000
        );
        assert_eq!(
            roast.details.roast_duration.unwrap().to_string(),
            "1070 SECOND"
        );
    }

    #[test]
    fn colours_need_a_known_scale_and_a_non_zero_value() {
        let mut l = log();
        l.color_system = Some("tonino".into());
        l.ground_color = Some(Decimal::ZERO);
        let roast = LoggedRoast::from_log(&l).unwrap();
        assert_eq!(roast.details.roast_value.unwrap().to_string(), "65 TONINO");
        assert_eq!(roast.details.roast_value2, None, "zero means not measured");
        for unknown in ["ColorTest", "", "Agtron Commercial Plus"] {
            l.color_system = Some(unknown.into());
            let roast = LoggedRoast::from_log(&l).unwrap();
            assert_eq!(roast.details.roast_value, None, "{unknown}");
        }
        l.color_system = Some("Hunter L".into());
        assert_eq!(
            LoggedRoast::from_log(&l)
                .unwrap()
                .details
                .roast_value
                .unwrap()
                .unit(),
            RoastValueUnit::HunterL
        );
    }

    #[test]
    fn malformed_logs_are_invalid_parameters_saying_what_is_wrong() {
        let check = |change: &dyn Fn(&mut RoastLog), expected: &str| {
            let mut l = log();
            change(&mut l);
            let err = LoggedRoast::from_log(&l).unwrap_err();
            assert_eq!(err.violation(), Violation::InvalidParameter);
            assert!(err.to_string().contains(expected), "{err}");
        };
        check(&|l| l.temp1.truncate(9), "`temp1` has 9");
        check(&|l| l.temp2.push(None), "`temp2` has 11");
        check(
            &|l| l.timeindex[2] = 10,
            "entry 2 (FCs) is 10, outside `timex` (0..10)",
        );
        check(&|l| l.timeindex[0] = -2, "entry 0 (CHARGE) is -2");
        check(&|l| l.timeindex[6] = -1, "entry 6 (DROP) is -1");
        check(
            &|l| l.timeindex = vec![5, 0, 0, 0, 0, 0, 2, 0],
            "DROP (sample 2) comes before CHARGE (sample 5)",
        );
        check(
            &|l| l.timeindex = vec![3, 2, 0, 0, 0, 0, 8, 0],
            "puts DRY END (sample 2) before CHARGE (sample 3)",
        );
        check(&|l| l.weight = None, "`weight` is required");
        check(&|l| l.roast_uuid = " ".into(), "roastUUID");
        check(
            &|l| {
                l.timex.clear();
                l.temp1.clear();
                l.temp2.clear();
            },
            "`timex` has no samples",
        );
        check(
            &|l| l.roast_epoch = d("100000000000000000000"),
            "`roastepoch`",
        );
        check(&|l| l.timex[5] = d("-10"), "must not be negative");
    }

    #[test]
    fn times_beyond_any_clock_are_invalid_not_a_panic() {
        // 1e27 seconds after a negative start overflows a Decimal when turned into milliseconds.
        for timex in [
            vec![d("0"), d("1e27")],
            vec![d("-7e28"), d("7e28")],
            vec![Decimal::MIN, Decimal::MAX],
        ] {
            let mut l = log();
            l.temp1 = temps(&["200", "210"]);
            l.temp2 = temps(&["200", "210"]);
            l.timeindex = vec![0, 0, 0, 0, 0, 0, 1, 0];
            l.timex = timex.clone();
            let refused = LoggedRoast::from_log(&l).unwrap_err();
            assert!(
                matches!(
                    refused,
                    RoastLogError::Invalid { field: "timex", .. } | RoastLogError::Measure(_)
                ),
                "{timex:?}: {refused:?}"
            );
            assert_eq!(refused.violation(), Violation::InvalidParameter);
        }
    }

    /// Any decimal a parser could produce, the extremes and their neighbours most of all.
    fn any_decimal() -> impl Strategy<Value = Decimal> {
        prop_oneof![
            Just(Decimal::MAX),
            Just(Decimal::MIN),
            Just(Decimal::ZERO),
            Just(Decimal::NEGATIVE_ONE),
            any::<i64>().prop_map(Decimal::from),
            (any::<i64>(), 0u32..=28).prop_map(|(n, scale)| Decimal::new(n, scale)),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                any::<bool>(),
                0u32..=28
            )
                .prop_map(|(lo, mid, hi, neg, scale)| Decimal::from_parts(lo, mid, hi, neg, scale)),
        ]
    }

    fn any_log() -> impl Strategy<Value = RoastLog> {
        let samples = || proptest::collection::vec(proptest::option::of(any_decimal()), 0..6);
        let texts = proptest::option::of("[ -~\\u{80}-\\u{10ffff}]{0,12}");
        (
            (
                any_decimal(),
                proptest::collection::vec(any_decimal(), 0..6),
                samples(),
                samples(),
                proptest::collection::vec(any::<i64>().prop_map(|i| i % 8), 0..10),
            ),
            (
                any_decimal(),
                any_decimal(),
                prop_oneof![Just("g"), Just("Kg"), Just("lb"), Just("oz"), Just("t")],
                proptest::option::of(prop_oneof![Just("C"), Just("F"), Just("K")]),
                proptest::option::of(any_decimal()),
                proptest::option::of(any_decimal()),
                texts.clone(),
                texts,
            ),
        )
            .prop_map(
                |(
                    (epoch, timex, temp1, temp2, timeindex),
                    (green, roasted, unit, mode, whole, ground, title, notes),
                )| RoastLog {
                    title,
                    roast_uuid: "7c2f0e64a1b84d0fa3e1c0b5d2e4f6a8".into(),
                    roast_epoch: epoch,
                    timex,
                    temp1,
                    temp2,
                    timeindex,
                    weight: Some(LogWeight {
                        green,
                        roasted,
                        unit: unit.into(),
                    }),
                    mode: mode.map(Into::into),
                    operator: None,
                    roaster_type: None,
                    roasting_notes: notes,
                    whole_color: whole,
                    ground_color: ground,
                    color_system: Some("Agtron".into()),
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn any_log_maps_or_is_refused_as_invalid_content(l in any_log()) {
            if let Err(refused) = LoggedRoast::from_log(&l) {
                prop_assert_eq!(refused.violation(), Violation::InvalidParameter);
            }
        }

        #[test]
        fn logs_with_equal_lists_of_any_numbers_never_panic(
            timex in proptest::collection::vec(any_decimal(), 1..6),
            bt in any_decimal(),
            charge in 0i64..6,
            drop in 0i64..6,
        ) {
            let n = timex.len();
            let mut l = log();
            l.timex = timex;
            l.temp1 = vec![Some(bt); n];
            l.temp2 = vec![Some(bt); n];
            l.timeindex = vec![charge, 1, 1, 0, 0, 0, drop, 0];
            if let Err(refused) = LoggedRoast::from_log(&l) {
                prop_assert_eq!(refused.violation(), Violation::InvalidParameter);
            }
        }
    }
}
