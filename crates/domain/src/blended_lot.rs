//! Blended lots: roasted coffees mixed after roasting, and creating them.
//!
//! Creating a blend takes the used weight of every roasted lot (all or nothing, consuming those
//! that reach zero); nothing is lost, so the blend weighs exactly the sum of what was taken. That
//! sum is kept in the unit of the first used weight as the client gave it: a blend has no unit of
//! its own to inherit, and the first line of the request is the one the client chose to lead with.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::lot_source::{self, LotSource, SourceError, UsedSource};
use crate::project::ProjectRef;
use crate::roasted_lot::used_total;
use crate::stock::{self, LotKind, Stock};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::WeightError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlendError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Weight(#[from] WeightError),
    /// An empty, oversized or repeating `roastedLots` list; an unknown, consumed or short roasted
    /// lot.
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("location {0} does not exist")]
    LocationNotFound(Uuid),
    #[error("blended lot {0} does not exist")]
    NotFound(Uuid),
    #[error("the used weights are too small to make a blend in {0}; give at least 0.000001 {0}")]
    ZeroBlendWeight(crate::weight::WeightUnit),
}

impl BrokenRule for BlendError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::Weight(e) => e.violation(),
            Self::Source(e) => e.violation(),
            Self::LocationNotFound(_) | Self::NotFound(_) => Violation::NotFound,
            Self::ZeroBlendWeight(_) => Violation::InvalidWeight,
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlendedLot {
    pub id: Uuid,
    /// Sequence number of `PB-n`; see [`BlendedLot::lot_number`].
    pub lot_number: i64,
    pub name: String,
    pub stock: Stock,
    /// The roasted lots used and the weight each gave.
    pub sources: Vec<LotSource>,
    pub location_id: Uuid,
    pub blended_date: DateTime<Utc>,
    pub projects: Vec<ProjectRef>,
    pub created_at: DateTime<Utc>,
    pub last_modified_at: DateTime<Utc>,
}

impl BlendedLot {
    /// The human-readable lot number, `PB-n`.
    pub fn lot_number(&self) -> String {
        stock::number(LotKind::Blended.prefix(), self.lot_number)
    }
}

/// The blend as the client describes it, with references already resolved by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlend {
    pub name: String,
    pub location_id: Uuid,
    pub blended_date: DateTime<Utc>,
    pub projects: Vec<ProjectRef>,
}

/// Creates a blend: takes each used weight from its roasted lot and returns the new blended lot
/// `PB-lot_number`, weighing their exact sum in the unit of the first used weight.
///
/// Checks run in the contract's precedence: shape (name, `roastedLots` empty, too long or
/// repeating) → a consumed roasted lot → weights. Unknown ids are the caller's to report before
/// calling. On any error no stock is modified.
pub fn create_blend(
    blend: NewBlend,
    sources: Vec<UsedSource<'_>>,
    id: Uuid,
    lot_number: i64,
    now: DateTime<Utc>,
) -> Result<BlendedLot, BlendError> {
    let name = text::required("name", &blend.name, text::NAME_MAX)?;
    let unit = sources.first().map(|s| s.used.unit);
    let (used_sources, weight) =
        lot_source::take_all_then(LotKind::Roasted, sources, now, |taken| {
            let Some(unit) = unit else {
                // take_all refuses an empty list; this keeps the function total.
                return Err(SourceError::Empty {
                    field: lot_source::field(LotKind::Roasted),
                }
                .into());
            };
            let weight = used_total(taken, unit)?;
            if weight.is_zero() {
                return Err(BlendError::ZeroBlendWeight(unit));
            }
            Ok(weight)
        })?;
    Ok(BlendedLot {
        id,
        lot_number,
        name,
        stock: Stock::new(weight, now),
        sources: used_sources,
        location_id: blend.location_id,
        blended_date: blend.blended_date,
        projects: blend.projects,
        created_at: now,
        last_modified_at: now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lot_source::SourceInfo;
    use crate::stock::StockError;
    use crate::test_values::{kg, now, source, w};
    use crate::weight::{Weight, WeightUnit};
    use proptest::prelude::*;

    fn info(n: u128) -> SourceInfo {
        SourceInfo {
            lot_id: Uuid::from_u128(n),
            name: format!("Roast {n}"),
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

    fn new_blend() -> NewBlend {
        NewBlend {
            name: "House espresso".into(),
            location_id: Uuid::from_u128(50),
            blended_date: now(),
            projects: vec![],
        }
    }

    #[test]
    fn a_blend_weighs_the_sum_of_the_used_roasted_weights() {
        let mut a = Stock::new(kg("6"), now());
        let mut b = Stock::new(kg("10"), now());
        let lot = create_blend(
            new_blend(),
            vec![used(1, &mut a, kg("6")), used(2, &mut b, kg("2.5"))],
            Uuid::from_u128(8),
            3,
            now(),
        )
        .unwrap();
        assert_eq!(lot.lot_number(), "PB-3");
        assert_eq!(lot.stock.weight(), kg("8.5"));
        assert!(a.is_consumed(), "using all of a roasted lot consumes it");
        assert_eq!(b.weight(), kg("7.5"));
        assert_eq!(lot.sources[1].used_weight, kg("2.5"));
    }

    #[test]
    fn a_blend_takes_the_unit_of_the_first_used_weight() {
        let mut a = Stock::new(kg("10"), now());
        let mut b = Stock::new(w("10", WeightUnit::Lbs), now());
        let lot = create_blend(
            new_blend(),
            vec![
                used(1, &mut a, w("2", WeightUnit::Lbs)),
                used(2, &mut b, w("3", WeightUnit::Lbs)),
            ],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap();
        assert_eq!(lot.stock.weight().unit(), WeightUnit::Lbs);
        assert_eq!(lot.sources[0].used_weight, kg("0.907185"));
        // The KG lot gave 0.907185 KG, which is 2.000001 LBS: the blend weighs what was taken.
        assert_eq!(lot.stock.weight(), w("5.000001", WeightUnit::Lbs));
    }

    #[test]
    fn empty_roasted_lots_is_an_invalid_parameter() {
        let err = create_blend(new_blend(), vec![], Uuid::nil(), 1, now()).unwrap_err();
        assert_eq!(
            err,
            BlendError::Source(SourceError::Empty {
                field: FieldPath::from("roastedLots")
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn a_consumed_roasted_lot_refuses_the_blend_and_nothing_is_taken() {
        let mut a = Stock::new(kg("10"), now());
        let mut consumed = Stock::new(kg("0"), now());
        let err = create_blend(
            new_blend(),
            vec![used(1, &mut a, kg("1")), used(2, &mut consumed, kg("1"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert_eq!(a.weight(), kg("10"));
    }

    #[test]
    fn using_more_than_a_roasted_lot_holds_is_an_invalid_weight() {
        let mut a = Stock::new(kg("10"), now());
        let mut b = Stock::new(kg("1"), now());
        let err = create_blend(
            new_blend(),
            vec![used(1, &mut a, kg("1")), used(2, &mut b, kg("1.5"))],
            Uuid::nil(),
            1,
            now(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            BlendError::Source(SourceError::Stock {
                error: StockError::Insufficient { .. },
                ..
            })
        ));
        assert_eq!(err.violation(), Violation::InvalidWeight);
        assert_eq!((a.weight(), b.weight()), (kg("10"), kg("1")));
    }

    #[test]
    fn a_blend_of_zero_weight_would_be_an_invalid_weight() {
        // Unreachable through conversions (each positive take is at least one micro-unit in
        // either unit), kept so the blend can never be created consumed.
        assert_eq!(
            BlendError::ZeroBlendWeight(WeightUnit::Kg).violation(),
            Violation::InvalidWeight
        );
    }

    proptest! {
        #[test]
        fn blending_conserves_mass_or_changes_nothing(
            specs in proptest::collection::vec(source(), 0..5),
        ) {
            let mut stocks: Vec<Stock> = specs
                .iter()
                .map(|(held, u, _, _)| Stock::new(Weight::from_micros(*held, *u).unwrap(), now()))
                .collect();
            let before = stocks.clone();
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
            match create_blend(new_blend(), sources, Uuid::nil(), 1, now()) {
                Ok(lot) => {
                    let unit = specs[0].3;
                    let sum = lot
                        .sources
                        .iter()
                        .map(|s| s.used_weight.to_unit(unit).micros())
                        .sum::<i64>();
                    prop_assert_eq!(lot.stock.weight().unit(), unit);
                    prop_assert_eq!(lot.stock.weight().micros(), sum);
                    for ((b, a), src) in before.iter().zip(&stocks).zip(&lot.sources) {
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
