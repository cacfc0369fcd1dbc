//! Values the unit tests of every domain module build from.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::weight::{Weight, WeightUnit};

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
