//! Measures other than weights: an exact amount in micro-units of a unit chosen from a fixed list.
//!
//! Temperatures, times and roast colour values share this shape. Amounts are rounded half-even to
//! six decimals, like weights, so that every store keeps them exactly as `i64` micro-units. A unit
//! arrives as its wire name and must be one of its kind's list; anything else is an invalid
//! parameter, never silently mapped.

use std::fmt;

use rust_decimal::Decimal;

use crate::decimal::{from_micros, to_micros};
use crate::violation::{BrokenRule, Violation};

/// Largest magnitude accepted for a measure: far above any real reading, far below `i64`
/// micro-units.
pub const MAX_MEASURE: i64 = 1_000_000_000;

/// A closed list of units of one kind of measure.
pub trait Unit: Copy + Eq + fmt::Debug + 'static {
    /// What is measured, for messages: `temperature`, `time`, `roast value`.
    const KIND: &'static str;
    /// Whether amounts below zero are meaningful (a temperature) or not (a duration).
    const SIGNED: bool;
    /// Every unit, in the order the contract lists them.
    const ALL: &'static [Self];

    /// The wire name (`CELSIUS`, `MINUTE`, `AGTRON_GOURMET`).
    fn as_str(self) -> &'static str;

    /// The unit named `code`, exactly as the wire spells it.
    fn parse(code: &str) -> Result<Self, MeasureError> {
        Self::ALL
            .iter()
            .copied()
            .find(|u| u.as_str() == code)
            .ok_or_else(|| MeasureError::UnknownUnit {
                kind: Self::KIND,
                value: code.to_owned(),
                expected: Self::ALL
                    .iter()
                    .map(|u| u.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MeasureError {
    #[error("`{value}` is not a {kind} unit; use one of {expected}")]
    UnknownUnit {
        kind: &'static str,
        value: String,
        expected: String,
    },
    #[error("a {kind} must not be negative; {amount} was given")]
    Negative { kind: &'static str, amount: Decimal },
    #[error("a {kind} of {amount} is out of range; at most {MAX_MEASURE} in magnitude is accepted")]
    OutOfRange { kind: &'static str, amount: Decimal },
}

impl BrokenRule for MeasureError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

/// An exact amount of a unit `U`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Measure<U> {
    micros: i64,
    unit: U,
}

impl<U: Unit> Measure<U> {
    /// Builds a measure, rounding half-even to six decimals.
    pub fn new(amount: Decimal, unit: U) -> Result<Self, MeasureError> {
        if !U::SIGNED && amount.is_sign_negative() && !amount.is_zero() {
            return Err(MeasureError::Negative {
                kind: U::KIND,
                amount,
            });
        }
        let out_of_range = MeasureError::OutOfRange {
            kind: U::KIND,
            amount,
        };
        if amount.abs() > Decimal::from(MAX_MEASURE) {
            return Err(out_of_range);
        }
        let micros = to_micros(amount).ok_or(out_of_range)?;
        Ok(Self { micros, unit })
    }

    /// Builds a measure from its amount and the wire name of its unit.
    pub fn parse(amount: Decimal, unit: &str) -> Result<Self, MeasureError> {
        Self::new(amount, U::parse(unit)?)
    }

    /// Rebuilds a stored measure; it is checked like a new one.
    pub fn from_micros(micros: i64, unit: U) -> Result<Self, MeasureError> {
        Self::new(from_micros(micros), unit)
    }

    pub fn micros(self) -> i64 {
        self.micros
    }

    pub fn amount(self) -> Decimal {
        from_micros(self.micros)
    }

    pub fn unit(self) -> U {
        self.unit
    }
}

impl<U: Unit> fmt::Display for Measure<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount(), self.unit.as_str())
    }
}
