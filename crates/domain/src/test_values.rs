//! Values the unit tests of every domain module build from.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use rust_decimal::Decimal;

use crate::weight::{Weight, WeightUnit};

/// The instant `s` seconds after the Unix epoch.
pub fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap()
}

/// The instant tests take as now.
pub fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap()
}

pub fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

pub fn w(amount: &str, unit: WeightUnit) -> Weight {
    Weight::new(d(amount), unit).unwrap()
}

pub fn kg(amount: &str) -> Weight {
    w(amount, WeightUnit::Kg)
}

pub fn unit() -> impl Strategy<Value = WeightUnit> {
    prop_oneof![Just(WeightUnit::Kg), Just(WeightUnit::Lbs)]
}

/// A source lot's stock (held micro-units, zero meaning consumed, and unit) and the weight used of
/// it as a share in percent (above 100 asks more than the lot holds), in any unit.
pub fn source() -> impl Strategy<Value = (i64, WeightUnit, i64, WeightUnit)> {
    (
        prop_oneof![1 => Just(0i64), 9 => 1i64..50_000_000],
        unit(),
        0i64..=105,
        unit(),
    )
        .prop_map(|(held, held_unit, share, used_unit)| {
            let used = Weight::from_micros(held * share / 100, held_unit)
                .unwrap()
                .to_unit(used_unit);
            (held, held_unit, used.micros(), used_unit)
        })
}
