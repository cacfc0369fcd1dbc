//! Weights: an exact amount in micro-units of `KG` or `LBS`.
//!
//! A weight can never be negative once built. A lot keeps the unit it was created with; amounts in
//! the other unit are converted (`1 LBS = 0.45359237 KG` exactly) and rounded half-even.

use std::fmt;

use rust_decimal::Decimal;

use crate::decimal::{from_micros, to_micros};
use crate::violation::{BrokenRule, Violation};

/// Largest amount accepted in either unit: far above any real lot, far below `i64` micro-units.
pub const MAX_AMOUNT: i64 = 1_000_000_000;

/// `1 LBS = 0.45359237 KG`, exactly.
/// Kilograms in one pound, exactly.
pub fn kg_per_lb() -> Decimal {
    Decimal::new(45_359_237, 8)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightUnit {
    Kg,
    Lbs,
}

impl WeightUnit {
    pub fn parse(code: &str) -> Result<Self, WeightError> {
        match code {
            "KG" => Ok(Self::Kg),
            "LBS" => Ok(Self::Lbs),
            other => Err(WeightError::UnsupportedUnit(other.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kg => "KG",
            Self::Lbs => "LBS",
        }
    }
}

impl fmt::Display for WeightUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightError {
    #[error("weight unit `{0}` is not supported; use KG or LBS")]
    UnsupportedUnit(String),
    #[error("weight must not be negative; {0} was given")]
    Negative(Decimal),
    #[error("weight {0} is too large; at most {MAX_AMOUNT} is accepted")]
    TooLarge(Decimal),
    #[error("weight must be above zero")]
    NotPositive,
    #[error("the weight arithmetic overflowed")]
    Overflow,
}

impl BrokenRule for WeightError {
    fn violation(&self) -> Violation {
        match self {
            Self::UnsupportedUnit(_) => Violation::UnsupportedUnit,
            Self::Negative(_) | Self::TooLarge(_) | Self::NotPositive | Self::Overflow => {
                Violation::InvalidWeight
            }
        }
    }
}

/// A weight as a request gave it, not judged yet: a transition judges it after its state and
/// conflict rules, so that `invalid_weight` ranks after them (api-decisions §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedWeight {
    pub amount: Decimal,
    pub unit: WeightUnit,
}

impl RequestedWeight {
    /// The weight, or why it is none: negative or too large.
    pub fn judge(self) -> Result<Weight, WeightError> {
        Weight::new(self.amount, self.unit)
    }
}

impl From<Weight> for RequestedWeight {
    fn from(weight: Weight) -> Self {
        Self {
            amount: weight.amount(),
            unit: weight.unit(),
        }
    }
}

/// A non-negative, exact weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Weight {
    micros: i64,
    unit: WeightUnit,
}

impl Weight {
    /// Builds a weight from a decimal amount, rounded half-even to six decimals.
    pub fn new(amount: Decimal, unit: WeightUnit) -> Result<Self, WeightError> {
        if amount.is_sign_negative() && !amount.is_zero() {
            return Err(WeightError::Negative(amount));
        }
        if amount > Decimal::from(MAX_AMOUNT) {
            return Err(WeightError::TooLarge(amount));
        }
        let micros = to_micros(amount).ok_or(WeightError::TooLarge(amount))?;
        Ok(Self { micros, unit })
    }

    /// Like [`Weight::new`], but zero is refused too.
    pub fn positive(amount: Decimal, unit: WeightUnit) -> Result<Self, WeightError> {
        let weight = Self::new(amount, unit)?;
        if weight.is_zero() {
            return Err(WeightError::NotPositive);
        }
        Ok(weight)
    }

    /// Rebuilds a stored weight; stored micro-units are trusted only if non-negative.
    pub fn from_micros(micros: i64, unit: WeightUnit) -> Result<Self, WeightError> {
        if micros < 0 {
            return Err(WeightError::Negative(from_micros(micros)));
        }
        Ok(Self { micros, unit })
    }

    pub fn zero(unit: WeightUnit) -> Self {
        Self { micros: 0, unit }
    }

    pub fn micros(self) -> i64 {
        self.micros
    }

    pub fn unit(self) -> WeightUnit {
        self.unit
    }

    pub fn amount(self) -> Decimal {
        from_micros(self.micros)
    }

    pub fn is_zero(self) -> bool {
        self.micros == 0
    }

    /// The same weight expressed in `unit`, rounded half-even to six decimals.
    /// This weight in kilograms, exact (no rounding to micro-units): planning and costs keep
    /// every digit until the answer. A stored weight is at most 9.2 × 10¹² in any unit, far
    /// within what a decimal holds.
    pub fn in_kg(self) -> Decimal {
        let amount = self.amount();
        match self.unit {
            WeightUnit::Kg => amount,
            WeightUnit::Lbs => amount.checked_mul(kg_per_lb()).unwrap_or(Decimal::MAX),
        }
    }

    pub fn to_unit(self, unit: WeightUnit) -> Self {
        let micros = match (self.unit, unit) {
            (a, b) if a == b => self.micros,
            (WeightUnit::Lbs, WeightUnit::Kg) => convert(self.micros, kg_per_lb(), true),
            _ => convert(self.micros, kg_per_lb(), false),
        };
        Self { micros, unit }
    }

    /// `self + other`, in `self`'s unit.
    pub fn checked_add(self, other: Weight) -> Result<Self, WeightError> {
        let other = other.to_unit(self.unit);
        let micros = self
            .micros
            .checked_add(other.micros)
            .ok_or(WeightError::Overflow)?;
        Ok(Self { micros, ..self })
    }

    /// `self - other` in `self`'s unit, or `None` when `other` is larger.
    pub fn checked_sub(self, other: Weight) -> Option<Self> {
        let other = other.to_unit(self.unit);
        let micros = self.micros.checked_sub(other.micros)?;
        (micros >= 0).then_some(Self { micros, ..self })
    }
}

fn convert(micros: i64, factor: Decimal, multiply: bool) -> i64 {
    let amount = Decimal::new(micros, crate::decimal::SCALE);
    let converted = if multiply {
        amount.checked_mul(factor)
    } else {
        amount.checked_div(factor)
    };
    // A converted weight is at most 2.3 times a valid one, so it always fits.
    converted.and_then(to_micros).unwrap_or(i64::MAX)
}

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount(), self.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;

    #[test]
    fn negative_weight_is_refused() {
        assert_eq!(
            Weight::new(d("-1"), WeightUnit::Kg),
            Err(WeightError::Negative(d("-1")))
        );
        assert_eq!(
            WeightError::Negative(d("-1")).violation(),
            Violation::InvalidWeight
        );
    }

    #[test]
    fn zero_is_a_weight_but_not_a_positive_one() {
        assert!(Weight::new(d("0"), WeightUnit::Kg).unwrap().is_zero());
        assert_eq!(
            Weight::positive(d("0.0000001"), WeightUnit::Kg),
            Err(WeightError::NotPositive)
        );
    }

    #[test]
    fn unknown_unit_is_unsupported() {
        let err = WeightUnit::parse("G").unwrap_err();
        assert_eq!(err.violation(), Violation::UnsupportedUnit);
        assert_eq!(WeightUnit::parse("LBS"), Ok(WeightUnit::Lbs));
    }

    #[test]
    fn one_pound_is_exactly_0_45359237_kg_rounded_to_six_decimals() {
        let lb = Weight::new(d("1"), WeightUnit::Lbs).unwrap();
        assert_eq!(lb.to_unit(WeightUnit::Kg).amount(), d("0.453592"));
        let hundred = Weight::new(d("100"), WeightUnit::Lbs).unwrap();
        assert_eq!(hundred.to_unit(WeightUnit::Kg).amount(), d("45.359237"));
        let kg = Weight::new(d("45.359237"), WeightUnit::Kg).unwrap();
        assert_eq!(kg.to_unit(WeightUnit::Lbs).amount(), d("100"));
    }

    #[test]
    fn arithmetic_converts_into_the_left_unit() {
        let kg = Weight::new(d("10"), WeightUnit::Kg).unwrap();
        let lb = Weight::new(d("10"), WeightUnit::Lbs).unwrap();
        assert_eq!(kg.checked_add(lb).unwrap().amount(), d("14.535924"));
        assert_eq!(kg.checked_sub(lb).unwrap().amount(), d("5.464076"));
        assert_eq!(lb.checked_sub(kg), None);
    }

    #[test]
    fn too_large_amounts_are_refused() {
        assert!(matches!(
            Weight::new(d("1000000001"), WeightUnit::Kg),
            Err(WeightError::TooLarge(_))
        ));
    }
}
