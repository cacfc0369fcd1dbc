//! Exact decimal amounts stored as integer micro-units (amount × 10^6).
//!
//! Weights and prices travel as decimals and are kept as `i64` micro-units, so that storage, sums
//! and comparisons are exact on every database. Rounding is half-even, as the contract fixes.

use rust_decimal::{Decimal, RoundingStrategy};

/// Decimal places kept for weights and prices.
pub const SCALE: u32 = 6;
const MICROS_PER_UNIT: i64 = 1_000_000;

/// Rounds `amount` half-even to six decimals and returns it in micro-units, or `None` when it
/// does not fit in an `i64`.
pub fn to_micros(amount: Decimal) -> Option<i64> {
    let rounded = amount.round_dp_with_strategy(SCALE, RoundingStrategy::MidpointNearestEven);
    let micros = rounded.checked_mul(Decimal::from(MICROS_PER_UNIT))?;
    i64::try_from(micros.trunc()).ok()
}

/// The decimal value of `micros` micro-units, without trailing zeros.
pub fn from_micros(micros: i64) -> Decimal {
    Decimal::new(micros, SCALE).normalize()
}

/// Rounds half-even to two decimals (percentages, scores).
pub fn round2(value: Decimal) -> Decimal {
    value
        .round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;

    #[test]
    fn six_decimals_round_half_even() {
        assert_eq!(to_micros(d("1.0000005")), Some(1_000_000));
        assert_eq!(to_micros(d("1.0000015")), Some(1_000_002));
        assert_eq!(to_micros(d("60.5")), Some(60_500_000));
        assert_eq!(to_micros(d("-0.25")), Some(-250_000));
    }

    #[test]
    fn amounts_beyond_i64_micros_do_not_fit() {
        assert_eq!(to_micros(d("10000000000000")), None);
        assert!(to_micros(d("9000000000000")).is_some());
    }

    #[test]
    fn micros_render_without_trailing_zeros() {
        assert_eq!(from_micros(60_500_000).to_string(), "60.5");
        assert_eq!(from_micros(0).to_string(), "0");
        assert_eq!(from_micros(1).to_string(), "0.000001");
    }

    #[test]
    fn two_decimal_rounding_is_half_even() {
        assert_eq!(round2(d("12.345")).to_string(), "12.34");
        assert_eq!(round2(d("12.355")).to_string(), "12.36");
    }
}
