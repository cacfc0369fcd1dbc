//! The weight a lot holds and its active/consumed life, shared by green, roasted and blended lots.
//!
//! A lot is active while it holds weight. Setting its weight to zero, or taking all of it, consumes
//! it; a consumed lot is final: it holds zero, takes no weight in or out, and setting zero again is
//! accepted as a no-op. Weight moving in or out is converted into the lot's own unit.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::violation::{BrokenRule, Violation};
use crate::weight::{RequestedWeight, Weight, WeightError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StockError {
    #[error("the lot is consumed; its weight can no longer change")]
    Consumed,
    #[error("the lot holds {available}; {requested} was asked")]
    Insufficient {
        available: Weight,
        requested: Weight,
    },
    #[error("the weight to move must be above zero")]
    ZeroAmount,
    #[error(transparent)]
    Weight(#[from] WeightError),
}

impl BrokenRule for StockError {
    fn violation(&self) -> Violation {
        match self {
            Self::Consumed => Violation::BusinessRule,
            Self::Insufficient { .. } | Self::ZeroAmount => Violation::InvalidWeight,
            Self::Weight(e) => e.violation(),
        }
    }
}

/// What a lot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stock {
    weight: Weight,
    consumed_at: Option<DateTime<Utc>>,
}

/// What [`Stock::set_weight`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightChange {
    /// The weight was replaced; the lot stays active.
    Replaced,
    /// The weight went to zero; the lot is now consumed.
    Consumed,
    /// The lot was already consumed and zero was asked again: nothing changed.
    Unchanged,
}

impl Stock {
    /// An active stock of `weight`, or a consumed one when `weight` is zero.
    pub fn new(weight: Weight, now: DateTime<Utc>) -> Self {
        Self {
            weight,
            consumed_at: weight.is_zero().then_some(now),
        }
    }

    /// Rebuilds a stored stock.
    pub fn restore(weight: Weight, consumed_at: Option<DateTime<Utc>>) -> Self {
        Self {
            weight,
            consumed_at,
        }
    }

    pub fn weight(&self) -> Weight {
        self.weight
    }

    pub fn consumed_at(&self) -> Option<DateTime<Utc>> {
        self.consumed_at
    }

    pub fn is_consumed(&self) -> bool {
        self.consumed_at.is_some()
    }

    /// Replaces the weight. Zero consumes an active lot; a consumed lot accepts only zero.
    pub fn set_weight(
        &mut self,
        requested: impl Into<RequestedWeight>,
        now: DateTime<Utc>,
    ) -> Result<WeightChange, StockError> {
        // A consumed lot (a state rule) ranks before a weight that is no weight at all.
        let weight = match requested.into().judge() {
            Ok(weight) => weight,
            Err(_) if self.is_consumed() => return Err(StockError::Consumed),
            Err(e) => return Err(e.into()),
        };
        let asked = weight;
        let weight = weight.to_unit(self.weight.unit());
        if weight.is_zero() && !asked.is_zero() {
            // e.g. 0.000001 LBS on a KG lot: consuming the lot is not what was asked.
            return Err(StockError::ZeroAmount);
        }
        match (self.is_consumed(), weight.is_zero()) {
            (true, true) => Ok(WeightChange::Unchanged),
            (true, false) => Err(StockError::Consumed),
            (false, true) => {
                self.weight = weight;
                self.consumed_at = Some(now);
                Ok(WeightChange::Consumed)
            }
            (false, false) => {
                self.weight = weight;
                Ok(WeightChange::Replaced)
            }
        }
    }

    /// Takes `amount` out of the lot, consuming it when nothing is left. Returns the amount taken,
    /// in the lot's unit.
    pub fn take(&mut self, amount: Weight, now: DateTime<Utc>) -> Result<Weight, StockError> {
        if self.is_consumed() {
            return Err(StockError::Consumed);
        }
        let taken = amount.to_unit(self.weight.unit());
        if taken.is_zero() {
            return Err(StockError::ZeroAmount);
        }
        let left = self
            .weight
            .checked_sub(taken)
            .ok_or(StockError::Insufficient {
                available: self.weight,
                requested: amount,
            })?;
        self.weight = left;
        if left.is_zero() {
            self.consumed_at = Some(now);
        }
        Ok(taken)
    }

    /// Adds `amount` to an active lot. Returns the amount added, in the lot's unit.
    pub fn add(&mut self, amount: Weight) -> Result<Weight, StockError> {
        if self.is_consumed() {
            return Err(StockError::Consumed);
        }
        let added = amount.to_unit(self.weight.unit());
        self.weight = self.weight.checked_add(added)?;
        Ok(added)
    }
}

/// The kinds of lots, with their lot-number prefixes and reference type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LotKind {
    Green,
    Roasted,
    Blended,
}

impl LotKind {
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Green => "PG",
            Self::Roasted => "PR",
            Self::Blended => "PB",
        }
    }

    /// The `type` of a reference to such a lot (`cuppedLot.type`, `analysedLot.type`).
    pub fn reference_type(self) -> &'static str {
        match self {
            Self::Green => "INVENTORY_GREEN",
            Self::Roasted => "INVENTORY_ROAST",
            Self::Blended => "INVENTORY_BLEND",
        }
    }

    pub fn parse_reference_type(value: &str) -> Option<Self> {
        [Self::Green, Self::Roasted, Self::Blended]
            .into_iter()
            .find(|k| k.reference_type() == value)
    }
}

/// A `type` that names no kind of lot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lot type `{0}` is not known; use INVENTORY_GREEN, INVENTORY_ROAST or INVENTORY_BLEND")]
pub struct UnknownLotType(pub String);

impl BrokenRule for UnknownLotType {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

/// A reference to a green, roasted or blended lot by id and kind (`cuppedLot`, `analysedLot`,
/// a shipment's lot, a ledger entry's lot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypedLotRef {
    pub id: Uuid,
    pub kind: LotKind,
}

impl TypedLotRef {
    /// A reference from its wire form: the lot id and its `type` (`INVENTORY_ROAST`, …).
    pub fn parse(id: Uuid, reference_type: &str) -> Result<Self, UnknownLotType> {
        LotKind::parse_reference_type(reference_type)
            .map(|kind| Self { id, kind })
            .ok_or_else(|| UnknownLotType(reference_type.to_owned()))
    }
}

impl fmt::Display for TypedLotRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} lot {}", self.kind.reference_type(), self.id)
    }
}

/// Human-readable numbers (`PG-1`, `CU-7`): a prefix and a sequence number that the store assigns
/// without gaps.
pub fn number(prefix: &str, n: i64) -> String {
    format!("{prefix}-{n}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::now;
    use crate::weight::WeightUnit;
    use rust_decimal::Decimal;

    fn kg(n: i64) -> Weight {
        Weight::new(Decimal::from(n), WeightUnit::Kg).unwrap()
    }

    fn lb(n: i64) -> Weight {
        Weight::new(Decimal::from(n), WeightUnit::Lbs).unwrap()
    }

    #[test]
    fn setting_zero_consumes_and_a_consumed_lot_is_final() {
        let mut stock = Stock::new(kg(10), now());
        assert_eq!(stock.set_weight(kg(0), now()), Ok(WeightChange::Consumed));
        assert!(stock.is_consumed());
        assert_eq!(stock.set_weight(kg(0), now()), Ok(WeightChange::Unchanged));
        assert_eq!(stock.set_weight(kg(1), now()), Err(StockError::Consumed));
        assert_eq!(stock.take(kg(1), now()), Err(StockError::Consumed));
        assert_eq!(stock.add(kg(1)), Err(StockError::Consumed));
    }

    #[test]
    fn set_weight_above_zero_replaces_in_the_lots_unit() {
        let mut stock = Stock::new(kg(10), now());
        assert_eq!(stock.set_weight(lb(100), now()), Ok(WeightChange::Replaced));
        assert_eq!(stock.weight().to_string(), "45.359237 KG");
    }

    #[test]
    fn a_positive_weight_that_rounds_to_zero_does_not_consume() {
        let mut stock = Stock::new(kg(10), now());
        let tiny = Weight::new(Decimal::new(1, 6), WeightUnit::Lbs).unwrap();
        assert_eq!(stock.set_weight(tiny, now()), Err(StockError::ZeroAmount));
        assert!(!stock.is_consumed());
    }

    #[test]
    fn taking_everything_consumes() {
        let mut stock = Stock::new(kg(10), now());
        assert_eq!(stock.take(kg(4), now()), Ok(kg(4)));
        assert!(!stock.is_consumed());
        stock.take(kg(6), now()).unwrap();
        assert!(stock.is_consumed());
        assert!(stock.weight().is_zero());
    }

    #[test]
    fn taking_more_than_held_or_nothing_is_an_invalid_weight() {
        let mut stock = Stock::new(kg(10), now());
        let err = stock.take(kg(11), now()).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidWeight);
        assert_eq!(stock.take(kg(0), now()), Err(StockError::ZeroAmount));
        assert_eq!(stock.weight(), kg(10));
    }

    #[test]
    fn lot_kinds_have_prefixes_and_reference_types() {
        assert_eq!(number(LotKind::Green.prefix(), 1), "PG-1");
        assert_eq!(LotKind::Roasted.reference_type(), "INVENTORY_ROAST");
        assert_eq!(
            LotKind::parse_reference_type("INVENTORY_BLEND"),
            Some(LotKind::Blended)
        );
        assert_eq!(LotKind::parse_reference_type("ROAST"), None);
    }
}
