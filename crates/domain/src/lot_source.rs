//! Lots used up by an operation: the green lots of a roast, the roasted lots of a blend.
//!
//! Taking weight from several lots is all or nothing. Every source is checked on a copy of its
//! stock first, in the order of the contract's error precedence (a consumed lot before a weight
//! problem); only when all of them pass are the real stocks written. A failing operation therefore
//! leaves every source exactly as it was.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::stock::{LotKind, Stock, StockError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::{RequestedWeight, Weight};

/// Most source lots one roast or blend may use.
pub const MAX_SOURCES: usize = 100;

/// A lot used by a roast or blend and the weight taken from it, as the roasted or blended lot
/// keeps it (`LotSource` on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LotSource {
    pub lot_id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
    /// The weight taken, in the source lot's unit: exactly what the source lost.
    pub used_weight: Weight,
}

/// What identifies a source lot, copied into the [`LotSource`] kept by the new lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceInfo {
    pub lot_id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
}

/// A source lot the caller has loaded, its stock to take from, and the weight asked (in any unit;
/// it is converted into the lot's unit).
#[derive(Debug)]
pub struct UsedSource<'a> {
    pub lot: SourceInfo,
    pub stock: &'a mut Stock,
    /// Judged after the consumed sources, as a state rule ranks before a weight.
    pub used: RequestedWeight,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{field} must list at least one lot")]
    Empty { field: FieldPath },
    #[error("{field} lists {count} lots; at most {MAX_SOURCES} are accepted")]
    TooMany { field: FieldPath, count: usize },
    #[error("{field} lists lot {id} more than once; give each lot once with its whole used weight")]
    Duplicate { field: FieldPath, id: Uuid },
    #[error("{} {id} does not exist", noun(*kind))]
    NotFound { kind: LotKind, id: Uuid },
    #[error("{} {id}: {error}", noun(*kind))]
    Stock {
        kind: LotKind,
        id: Uuid,
        error: StockError,
    },
}

impl BrokenRule for SourceError {
    fn violation(&self) -> Violation {
        match self {
            Self::Empty { .. } | Self::TooMany { .. } | Self::Duplicate { .. } => {
                Violation::InvalidParameter
            }
            Self::NotFound { .. } => Violation::NotFound,
            Self::Stock { error, .. } => error.violation(),
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Empty { field } | Self::TooMany { field, .. } | Self::Duplicate { field, .. } => {
                field.rebase(base);
            }
            Self::NotFound { .. } | Self::Stock { .. } => {}
        }
    }
}

fn noun(kind: LotKind) -> &'static str {
    match kind {
        LotKind::Green => "green lot",
        LotKind::Roasted => "roasted lot",
        LotKind::Blended => "blended lot",
    }
}

/// The request field that lists sources of `kind`.
pub fn field(kind: LotKind) -> FieldPath {
    FieldPath::ROOT.key(match kind {
        LotKind::Green => "greenLots",
        LotKind::Roasted => "roastedLots",
        LotKind::Blended => "blendedLots",
    })
}

/// Checks the ids of a source list before anything is loaded: at least one, at most
/// [`MAX_SOURCES`], none twice. These are shape errors (400), so they come before any lookup.
pub fn check_source_ids(kind: LotKind, ids: &[Uuid]) -> Result<(), SourceError> {
    if ids.is_empty() {
        return Err(SourceError::Empty { field: field(kind) });
    }
    if ids.len() > MAX_SOURCES {
        return Err(SourceError::TooMany {
            field: field(kind),
            count: ids.len(),
        });
    }
    let mut seen = HashSet::with_capacity(ids.len());
    for id in ids {
        if !seen.insert(*id) {
            return Err(SourceError::Duplicate {
                field: field(kind),
                id: *id,
            });
        }
    }
    Ok(())
}

/// A transformation's takes ([`take_all`]) followed by `check` of what was taken (the output
/// weight a roast or blend can only judge against the used weights): the sources' stock changes
/// only when both succeed.
pub(crate) fn take_all_then<T, E: From<SourceError>>(
    kind: LotKind,
    sources: Vec<UsedSource<'_>>,
    now: DateTime<Utc>,
    check: impl FnOnce(&[LotSource]) -> Result<T, E>,
) -> Result<(Vec<LotSource>, T), E> {
    let mut copies: Vec<Stock> = sources.iter().map(|s| *s.stock).collect();
    let taken = take_all(
        kind,
        sources
            .iter()
            .zip(copies.iter_mut())
            .map(|(s, stock)| UsedSource {
                lot: s.lot.clone(),
                stock,
                used: s.used,
            })
            .collect(),
        now,
    )?;
    let checked = check(&taken)?;
    for (source, copy) in sources.into_iter().zip(copies) {
        *source.stock = copy;
    }
    Ok((taken, checked))
}

/// Checks every source, then takes the used weights: a consumed source anywhere wins over a weight
/// problem anywhere; on any error no stock is touched. Sources that reach zero are consumed at
/// `now`. Returns what each source gave, in the sources' order.
pub(crate) fn take_all(
    kind: LotKind,
    sources: Vec<UsedSource<'_>>,
    now: DateTime<Utc>,
) -> Result<Vec<LotSource>, SourceError> {
    let ids: Vec<Uuid> = sources.iter().map(|s| s.lot.lot_id).collect();
    check_source_ids(kind, &ids)?;
    let stock_error = |id: Uuid, error: StockError| SourceError::Stock { kind, id, error };
    if let Some(consumed) = sources.iter().find(|s| s.stock.is_consumed()) {
        return Err(stock_error(consumed.lot.lot_id, StockError::Consumed));
    }
    let used = sources
        .iter()
        .map(|s| {
            s.used
                .judge()
                .map_err(|e| stock_error(s.lot.lot_id, StockError::Weight(e)))
        })
        .collect::<Result<Vec<Weight>, _>>()?;
    let mut after = Vec::with_capacity(sources.len());
    for (source, used) in sources.iter().zip(used) {
        let mut copy = *source.stock;
        let taken = copy
            .take(used, now)
            .map_err(|e| stock_error(source.lot.lot_id, e))?;
        after.push((copy, taken));
    }
    Ok(sources
        .into_iter()
        .zip(after)
        .map(|(source, (stock, taken))| {
            *source.stock = stock;
            LotSource {
                lot_id: source.lot.lot_id,
                name: source.lot.name,
                external_id: source.lot.external_id,
                used_weight: taken,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::now;
    use crate::weight::{WeightError, WeightUnit};
    use rust_decimal::Decimal;

    fn kg(n: i64) -> Weight {
        Weight::new(Decimal::from(n), WeightUnit::Kg).unwrap()
    }

    fn info(n: u128) -> SourceInfo {
        SourceInfo {
            lot_id: Uuid::from_u128(n),
            name: format!("lot {n}"),
            external_id: None,
        }
    }

    #[test]
    fn source_lists_are_non_empty_bounded_and_unique() {
        let a = Uuid::from_u128(1);
        assert_eq!(
            check_source_ids(LotKind::Green, &[]),
            Err(SourceError::Empty {
                field: FieldPath::from("greenLots")
            })
        );
        assert_eq!(
            check_source_ids(LotKind::Roasted, &[a, a]),
            Err(SourceError::Duplicate {
                field: FieldPath::from("roastedLots"),
                id: a
            })
        );
        let many: Vec<Uuid> = (0..=MAX_SOURCES as u128).map(Uuid::from_u128).collect();
        let err = check_source_ids(LotKind::Green, &many).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn a_negative_used_weight_is_judged_after_the_consumed_sources() {
        let negative = RequestedWeight {
            amount: Decimal::from(-2),
            unit: WeightUnit::Kg,
        };
        let mut full = Stock::new(kg(10), now());
        let mut consumed = Stock::new(kg(0), now());
        fn sources<'a>(
            full: &'a mut Stock,
            second: &'a mut Stock,
            negative: RequestedWeight,
        ) -> Vec<UsedSource<'a>> {
            vec![
                UsedSource {
                    lot: info(1),
                    stock: full,
                    used: negative,
                },
                UsedSource {
                    lot: info(2),
                    stock: second,
                    used: kg(1).into(),
                },
            ]
        }
        let err = take_all(
            LotKind::Roasted,
            sources(&mut full, &mut consumed, negative),
            now(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            SourceError::Stock {
                kind: LotKind::Roasted,
                id: Uuid::from_u128(2),
                error: StockError::Consumed
            }
        );
        let mut active = Stock::new(kg(5), now());
        let err = take_all(
            LotKind::Roasted,
            sources(&mut full, &mut active, negative),
            now(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            SourceError::Stock { id, error: StockError::Weight(WeightError::Negative(_)), .. } if id == Uuid::from_u128(1)
        ));
        assert_eq!((full.weight(), active.weight()), (kg(10), kg(5)));
    }

    #[test]
    fn a_consumed_source_wins_over_an_earlier_weight_problem_and_nothing_is_taken() {
        let mut short = Stock::new(kg(1), now());
        let mut full = Stock::new(kg(10), now());
        let mut consumed = Stock::new(kg(0), now());
        let err = take_all(
            LotKind::Green,
            vec![
                UsedSource {
                    lot: info(1),
                    stock: &mut full,
                    used: kg(3).into(),
                },
                UsedSource {
                    lot: info(2),
                    stock: &mut short,
                    used: kg(5).into(),
                },
                UsedSource {
                    lot: info(3),
                    stock: &mut consumed,
                    used: kg(1).into(),
                },
            ],
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert_eq!(
            err.to_string(),
            format!(
                "green lot {}: the lot is consumed; its weight can no longer change",
                Uuid::from_u128(3)
            )
        );
        assert_eq!(full.weight(), kg(10));
        assert_eq!(short.weight(), kg(1));
    }
}
