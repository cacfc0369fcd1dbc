//! Recording a roast: green lots go in, a roasted lot comes out.
//!
//! The used weight of every green lot is taken (all or nothing) and a new roasted lot is created
//! that weighs what came out of the roaster. Roasting only loses weight: more roasted weight than
//! green weight used is refused. The roast's details and curves are separate values
//! ([`crate::roast_details`], [`crate::roast_curve`]) that the caller stores beside the lot.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::lot_source::{self, SourceError, UsedSource};
use crate::project::ProjectRef;
use crate::roasted_lot::{RoastedLot, used_total};
use crate::stock::{LotKind, Stock};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::{RequestedWeight, Weight, WeightError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoastError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Weight(#[from] WeightError),
    /// An empty, oversized or repeating `greenLots` list; an unknown, consumed or short green lot.
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("location {0} does not exist")]
    LocationNotFound(Uuid),
    #[error("profile {0} does not exist")]
    ProfileNotFound(Uuid),
    #[error("roasted lot {0} does not exist")]
    NotFound(Uuid),
    #[error("the roasted weight must be above zero")]
    ZeroRoastedWeight,
    #[error(
        "the roasted weight {roasted} is more than the {used} of green coffee used; roasting only loses weight"
    )]
    RoastedAboveUsed { roasted: Weight, used: Weight },
}

impl BrokenRule for RoastError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::Weight(e) => e.violation(),
            Self::Source(e) => e.violation(),
            Self::LocationNotFound(_) | Self::ProfileNotFound(_) | Self::NotFound(_) => {
                Violation::NotFound
            }
            Self::ZeroRoastedWeight | Self::RoastedAboveUsed { .. } => Violation::InvalidWeight,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::Source(e) => e.rebase(base),
            _ => {}
        }
    }
}

/// The roast as the client describes it, with references already resolved by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRoast {
    pub name: String,
    pub location_id: Uuid,
    pub roasted_date: DateTime<Utc>,
    /// What came out of the roaster, judged after the sources; the roasted lot takes its unit.
    pub weight: RequestedWeight,
    pub profile_id: Option<Uuid>,
    pub projects: Vec<ProjectRef>,
    /// The roast log's `roastUUID` when the roast was imported from one.
    pub external_id: Option<String>,
}

/// Records a roast: checks everything, then takes each used weight from its green lot (consuming
/// lots that reach zero) and returns the new roasted lot `PR-lot_number`.
///
/// Checks run in the contract's precedence: shape (name, `greenLots` empty, too long or repeating)
/// → a consumed green lot → weights (a used weight of zero or above what its lot holds, a zero
/// roasted weight, a roasted weight above the green weight used). Unknown ids are the caller's to
/// report before calling. On any error no stock is modified.
pub fn record_roast(
    roast: NewRoast,
    sources: Vec<UsedSource<'_>>,
    id: Uuid,
    lot_number: i64,
    now: DateTime<Utc>,
) -> Result<RoastedLot, RoastError> {
    let name = text::required("name", &roast.name, text::NAME_MAX)?;
    let (used_sources, weight) =
        lot_source::take_all_then(LotKind::Green, sources, now, |taken| {
            let weight = roast.weight.judge()?;
            if weight.is_zero() {
                return Err(RoastError::ZeroRoastedWeight);
            }
            let used = used_total(taken, weight.unit())?;
            if weight.micros() > used.micros() {
                return Err(RoastError::RoastedAboveUsed {
                    roasted: weight,
                    used,
                });
            }
            Ok(weight)
        })?;
    Ok(RoastedLot {
        id,
        lot_number,
        name,
        external_id: roast.external_id,
        stock: Stock::new(weight, now),
        roasted_weight: weight,
        sources: used_sources,
        profile_id: roast.profile_id,
        location_id: roast.location_id,
        roasted_date: roast.roasted_date,
        projects: roast.projects,
        created_at: now,
        last_modified_at: now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lot_source::SourceInfo;
    use crate::stock::{StockError, WeightChange};
    use crate::test_values::{kg, now, source, unit, w};
    use crate::weight::WeightUnit;
    use proptest::prelude::*;
    use rust_decimal::Decimal;

    fn info(n: u128) -> SourceInfo {
        SourceInfo {
            lot_id: Uuid::from_u128(n),
            name: format!("Green {n}"),
            external_id: Some(format!("ERP-{n}")),
        }
    }

    fn new_roast(weight: Weight) -> NewRoast {
        NewRoast {
            name: " Guji light ".into(),
            location_id: Uuid::from_u128(100),
            roasted_date: now(),
            weight: weight.into(),
            profile_id: None,
            projects: vec![],
            external_id: None,
        }
    }

    fn used<'a>(n: u128, stock: &'a mut Stock, amount: Weight) -> UsedSource<'a> {
        UsedSource {
            lot: info(n),
            stock,
            used: amount.into(),
        }
    }

    #[test]
    fn a_roast_takes_the_used_weights_and_creates_the_roasted_lot() {
        let mut a = Stock::new(kg("20"), now());
        let mut b = Stock::new(kg("5"), now());
        let lot = record_roast(
            new_roast(kg("12.5")),
            vec![used(1, &mut a, kg("10")), used(2, &mut b, kg("5"))],
            Uuid::from_u128(9),
            7,
            now(),
        )
        .unwrap();
        assert_eq!(lot.lot_number(), "PR-7");
        assert_eq!(lot.name, "Guji light");
        assert_eq!(lot.stock.weight(), kg("12.5"));
        assert!(!lot.stock.is_consumed());
        assert_eq!(lot.sources[0].used_weight, kg("10"));
        assert_eq!(lot.sources[1].external_id.as_deref(), Some("ERP-2"));
        assert_eq!(a.weight(), kg("10"));
        assert!(!a.is_consumed());
        assert!(b.is_consumed(), "taking all of a green lot consumes it");
    }

    #[test]
    fn weight_loss_is_used_green_minus_roasted_with_a_two_decimal_percentage() {
        let mut a = Stock::new(kg("30"), now());
        let mut lot = record_roast(
            new_roast(kg("25.4321")),
            vec![used(1, &mut a, kg("30"))],
            Uuid::from_u128(9),
            1,
            now(),
        )
        .unwrap();
        let loss = lot.weight_loss().unwrap();
        assert_eq!(loss.amount, kg("4.5679"));
        // 4.5679 / 30 = 15.226333…%
        assert_eq!(loss.percentage.to_string(), "15.23");
        // The current weight changes; the loss stays what roasting lost.
        assert_eq!(lot.set_weight(kg("3"), now()), Ok(WeightChange::Replaced));
        assert_eq!(lot.weight_loss().unwrap(), loss);
    }

    #[test]
    fn weight_loss_is_in_the_roasted_lots_unit_and_may_be_zero() {
        let mut a = Stock::new(kg("10"), now());
        let lot = record_roast(
            new_roast(w("10", WeightUnit::Lbs)),
            vec![used(1, &mut a, w("10", WeightUnit::Lbs))],
            Uuid::from_u128(9),
            1,
            now(),
        )
        .unwrap();
        assert_eq!(lot.sources[0].used_weight, kg("4.535924"));
        let loss = lot.weight_loss().unwrap();
        assert_eq!(loss.amount.unit(), WeightUnit::Lbs);
        assert!(
            loss.amount.micros() <= 1,
            "only conversion rounding is left"
        );
        assert_eq!(a.weight(), kg("5.464076"));
    }

    #[test]
    fn roasted_weight_above_the_used_green_weight_is_an_invalid_weight() {
        let mut a = Stock::new(kg("10"), now());
        let err = record_roast(
            new_roast(kg("10.000001")),
            vec![used(1, &mut a, kg("10"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert!(matches!(err, RoastError::RoastedAboveUsed { .. }));
        assert_eq!(err.violation(), Violation::InvalidWeight);
        assert_eq!(a.weight(), kg("10"), "a refused roast takes nothing");
        assert!(!a.is_consumed());
    }

    #[test]
    fn zero_roasted_weight_is_an_invalid_weight() {
        let mut a = Stock::new(kg("10"), now());
        let err = record_roast(
            new_roast(kg("0")),
            vec![used(1, &mut a, kg("1"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert_eq!(err, RoastError::ZeroRoastedWeight);
        assert_eq!(err.violation(), Violation::InvalidWeight);
    }

    #[test]
    fn zero_used_weight_and_more_than_the_lot_holds_are_invalid_weights() {
        let mut a = Stock::new(kg("10"), now());
        let err = record_roast(
            new_roast(kg("1")),
            vec![used(1, &mut a, kg("0"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidWeight);
        let mut b = Stock::new(kg("10"), now());
        let err = record_roast(
            new_roast(kg("1")),
            vec![used(1, &mut a, kg("2")), used(2, &mut b, kg("11"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidWeight);
        assert!(err.to_string().contains("holds 10 KG"), "{err}");
        assert_eq!((a.weight(), b.weight()), (kg("10"), kg("10")));
    }

    #[test]
    fn a_consumed_green_lot_is_a_business_rule_before_any_weight_problem() {
        let mut a = Stock::new(kg("0"), now());
        let mut b = Stock::new(kg("10"), now());
        let err = record_roast(
            new_roast(kg("50")),
            vec![used(1, &mut b, kg("5")), used(2, &mut a, kg("1"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            RoastError::Source(SourceError::Stock {
                kind: LotKind::Green,
                id: Uuid::from_u128(2),
                error: StockError::Consumed
            })
        );
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert_eq!(b.weight(), kg("10"));
    }

    #[test]
    fn empty_or_repeating_green_lots_are_invalid_parameters() {
        let err = record_roast(new_roast(kg("1")), vec![], Uuid::nil(), 1, now()).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut a = Stock::new(kg("10"), now());
        let mut a_again = a;
        let err = record_roast(
            new_roast(kg("1")),
            vec![used(1, &mut a, kg("1")), used(1, &mut a_again, kg("1"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            RoastError::Source(SourceError::Duplicate { ref field, .. })
                if *field == FieldPath::from("greenLots")
        ));
        assert_eq!(a.weight(), kg("10"));
    }

    #[test]
    fn a_blank_name_is_an_invalid_parameter() {
        let mut a = Stock::new(kg("10"), now());
        let mut roast = new_roast(kg("1"));
        roast.name = "  ".into();
        let err =
            record_roast(roast, vec![used(1, &mut a, kg("1"))], Uuid::nil(), 1, now()).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn a_roasted_lot_set_to_zero_is_consumed_and_final() {
        let mut a = Stock::new(kg("10"), now());
        let mut lot = record_roast(
            new_roast(kg("8")),
            vec![used(1, &mut a, kg("10"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap();
        let later = now() + chrono::Duration::hours(1);
        assert_eq!(lot.set_weight(kg("0"), later), Ok(WeightChange::Consumed));
        assert_eq!(lot.stock.consumed_at(), Some(later));
        assert_eq!(lot.last_modified_at, later);
        assert_eq!(lot.set_weight(kg("1"), later), Err(StockError::Consumed));
        assert_eq!(lot.set_weight(kg("0"), later), Ok(WeightChange::Unchanged));
    }

    proptest! {
        #[test]
        fn roasting_conserves_mass_or_changes_nothing(
            specs in proptest::collection::vec(source(), 1..5),
            roasted_share in 0i64..=110,
            roasted_unit in unit(),
        ) {
            let mut stocks: Vec<Stock> = specs
                .iter()
                .map(|(held, u, _, _)| Stock::new(Weight::from_micros(*held, *u).unwrap(), now()))
                .collect();
            let before = stocks.clone();
            // The roasted weight as a share of all the weight asked, so that most roasts pass.
            let asked: i64 = specs
                .iter()
                .map(|(_, _, used, u)| Weight::from_micros(*used, *u).unwrap().to_unit(roasted_unit).micros())
                .sum();
            let roasted = Weight::from_micros(asked * roasted_share / 100, roasted_unit).unwrap();
            let sources: Vec<UsedSource<'_>> = stocks
                .iter_mut()
                .zip(&specs)
                .enumerate()
                .map(|(i, (stock, (_, _, used, u)))| UsedSource {
                    lot: info(i as u128),
                    stock,
                    used: Weight::from_micros(*used, *u).unwrap().into(),
                })
                .collect();
            match record_roast(new_roast(roasted), sources, Uuid::nil(), 1, now()) {
                Ok(lot) => {
                    let loss = lot.weight_loss().unwrap();
                    let used = lot.used_green_weight().unwrap();
                    prop_assert_eq!(used.micros(), roasted.micros() + loss.amount.micros());
                    prop_assert!(loss.percentage >= Decimal::ZERO);
                    prop_assert!(loss.percentage <= Decimal::ONE_HUNDRED);
                    for ((b, a), src) in before.iter().zip(&stocks).zip(&lot.sources) {
                        prop_assert_eq!(src.used_weight.unit(), b.weight().unit());
                        prop_assert_eq!(
                            b.weight().micros() - src.used_weight.micros(),
                            a.weight().micros()
                        );
                        prop_assert!(a.weight().micros() >= 0);
                        prop_assert_eq!(a.is_consumed(), a.weight().is_zero());
                    }
                }
                Err(_) => prop_assert_eq!(&before, &stocks),
            }
        }
    }
}
