//! Bulk writes judged as a whole: `mrp.product.syncProducts` and `mrp.order.setOrders`.
//!
//! A bulk call is all or nothing, and a client fixing a rejected batch wants every failing item at
//! once, not one per round trip. So a use case works in this order:
//!
//! 1. [`parse_batch`]: an empty batch or one of more than [`MAX_ITEMS`] items is refused whole
//!    (400); then each item is parsed into its domain input, and a shape error anywhere refuses
//!    the whole request (400), as the contract says. [`ItemFailure`] names the item in that
//!    message.
//! 2. The store pre-fetches what the batch refers to (existing records, SKUs) in one go.
//! 3. The domain plans the batch ([`crate::product::plan_products`], [`crate::order::plan_orders`])
//!    with those lookups and no I/O: either every item passes and each comes back as a
//!    [`Planned`] record, or every failing item comes back with its own error (422
//!    `bulk_operation_failed`, one detail per item) and nothing is written.
//!
//! This module never decides what an individual rule is; it only collects the verdicts.

use std::collections::HashMap;

use crate::field::FieldPath;
use crate::violation::{BrokenRule, Violation};

/// Most items one bulk call accepts.
pub const MAX_ITEMS: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BulkError {
    #[error("{field} must not be empty")]
    Empty { field: FieldPath },
    #[error("{field} holds {count} items; at most {max} are accepted per request")]
    TooMany {
        field: FieldPath,
        count: usize,
        max: usize,
    },
}

impl BrokenRule for BulkError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Empty { field } | Self::TooMany { field, .. } => field.rebase(base),
        }
    }
}

/// Checks a bulk call carries between one and [`MAX_ITEMS`] items.
pub fn check_size(field: &FieldPath, count: usize) -> Result<(), BulkError> {
    match count {
        0 => Err(BulkError::Empty {
            field: field.clone(),
        }),
        n if n > MAX_ITEMS => Err(BulkError::TooMany {
            field: field.clone(),
            count: n,
            max: MAX_ITEMS,
        }),
        _ => Ok(()),
    }
}

/// Why one item of a bulk call was refused: its position in the batch, its path (`[2]`), its
/// external id and the rule it broke. The error names fields by their path relative to the
/// batch, as `at` does (`[2].orderItems[0].sku`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at} (externalId `{external_id}`): {error}")]
pub struct ItemFailure<E> {
    pub index: usize,
    pub at: FieldPath,
    pub external_id: String,
    pub error: E,
}

impl<E: BrokenRule> BrokenRule for ItemFailure<E> {
    fn violation(&self) -> Violation {
        self.error.violation()
    }

    fn rebase(&mut self, base: &FieldPath) {
        self.at.rebase(base);
        self.error.rebase(base);
    }
}

/// Why a whole bulk request was refused before anything was looked up (400): its size, or the
/// first item that is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchShapeError<E: BrokenRule> {
    #[error(transparent)]
    Size(#[from] BulkError),
    #[error(transparent)]
    Item(ItemFailure<E>),
}

impl<E: BrokenRule> BrokenRule for BatchShapeError<E> {
    fn violation(&self) -> Violation {
        match self {
            Self::Size(e) => e.violation(),
            Self::Item(e) => e.violation(),
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Size(e) => e.rebase(base),
            Self::Item(e) => e.rebase(base),
        }
    }
}

/// Step one of a bulk call in `field`: its size ([`check_size`]), then each item parsed in order,
/// given its path (`field[2]`) to name its fields by; the first malformed item refuses the whole
/// request, named by its index and external id.
pub fn parse_batch<I, T, E: BrokenRule>(
    field: &FieldPath,
    items: &[I],
    external_id: impl Fn(&I) -> &str,
    mut parse: impl FnMut(&FieldPath, &I) -> Result<T, E>,
) -> Result<Vec<T>, BatchShapeError<E>> {
    check_size(field, items.len())?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let at = field.clone().index(index);
            parse(&at, item).map_err(|error| {
                BatchShapeError::Item(ItemFailure {
                    index,
                    at,
                    external_id: external_id(item).to_owned(),
                    error,
                })
            })
        })
        .collect()
}

/// What writing a planned record will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The record is new.
    Created,
    /// The stored record changed.
    Updated,
    /// The input matched the stored record; the store may skip the write.
    Unchanged,
}

impl Change {
    pub fn needs_write(self) -> bool {
        !matches!(self, Self::Unchanged)
    }
}

/// A record as it will be once the batch is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned<T> {
    pub record: T,
    pub change: Change,
}

/// Runs `check` on every item and returns either every result, when all pass, or every failure,
/// each at its index in a batch at the root (`[2]`).
pub fn judge<I, T, E>(
    items: &[I],
    external_id: impl Fn(&I) -> &str,
    mut check: impl FnMut(usize, &I) -> Result<T, E>,
) -> Result<Vec<T>, Vec<ItemFailure<E>>> {
    let mut passed = Vec::with_capacity(items.len());
    let mut failures = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match check(index, item) {
            Ok(result) => passed.push(result),
            Err(error) => failures.push(ItemFailure {
                index,
                at: FieldPath::ROOT.index(index),
                external_id: external_id(item).to_owned(),
                error,
            }),
        }
    }
    if failures.is_empty() {
        Ok(passed)
    } else {
        Err(failures)
    }
}

/// For each key, the index of an earlier item with the same key, if any: the first occurrence is
/// `None`, every repeat points at it.
pub fn earlier_occurrences<'k>(keys: impl IntoIterator<Item = &'k str>) -> Vec<Option<usize>> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    keys.into_iter()
        .enumerate()
        .map(|(index, key)| match first.get(key) {
            Some(&earlier) => Some(earlier),
            None => {
                first.insert(key, index);
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_one_to_fifty_items() {
        assert_eq!(
            check_size(&FieldPath::ROOT, 0),
            Err(BulkError::Empty {
                field: FieldPath::ROOT
            })
        );
        assert!(check_size(&FieldPath::ROOT, 1).is_ok());
        assert!(check_size(&FieldPath::ROOT, 50).is_ok());
        let err = check_size(&FieldPath::ROOT, 51).unwrap_err();
        assert_eq!(
            err,
            BulkError::TooMany {
                field: FieldPath::ROOT,
                count: 51,
                max: 50
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    /// A rule broken by an odd length, for the parsing tests: it names the item by its path.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("{0} has an odd length")]
    struct OddLength(FieldPath);

    impl BrokenRule for OddLength {
        fn violation(&self) -> Violation {
            Violation::MissingParameter
        }

        fn rebase(&mut self, base: &FieldPath) {
            self.0.rebase(base);
        }
    }

    fn even(at: &FieldPath, s: &&str) -> Result<usize, OddLength> {
        match s.len() % 2 {
            0 => Ok(s.len()),
            _ => Err(OddLength(at.clone())),
        }
    }

    #[test]
    fn parsing_a_batch_checks_its_size_then_stops_at_the_first_malformed_item() {
        assert_eq!(
            parse_batch(&FieldPath::ROOT, &["ab", "cdef"], |s| s, even),
            Ok(vec![2, 4])
        );
        let none: [&str; 0] = [];
        assert_eq!(
            parse_batch(&FieldPath::ROOT, &none, |s| s, even),
            Err(BatchShapeError::Size(BulkError::Empty {
                field: FieldPath::ROOT
            }))
        );
        let many = ["x"; MAX_ITEMS + 1];
        let err = parse_batch(&FieldPath::ROOT, &many, |s| s, even).unwrap_err();
        assert!(matches!(
            err,
            BatchShapeError::Size(BulkError::TooMany { count: 51, .. })
        ));
        let mut err = parse_batch(&FieldPath::ROOT, &["ab", "c", "d"], |s| s, even).unwrap_err();
        assert_eq!(
            err,
            BatchShapeError::Item(ItemFailure {
                index: 1,
                at: FieldPath::from("[1]"),
                external_id: "c".into(),
                error: OddLength(FieldPath::from("[1]"))
            })
        );
        assert_eq!(err.violation(), Violation::MissingParameter);
        assert_eq!(
            err.to_string(),
            "[1] (externalId `c`): [1] has an odd length"
        );
        // Where the batch lies in the request is said once, for the item and its error.
        err.rebase(&FieldPath::from("body"));
        assert_eq!(
            err.to_string(),
            "body[1] (externalId `c`): body[1] has an odd length"
        );
    }

    #[test]
    fn judging_returns_every_failure_with_index_and_external_id() {
        let items = ["a", "b", "c", "d"];
        let verdict = judge(
            &items,
            |s| s,
            |i, s| if i % 2 == 1 { Err(i) } else { Ok(s.len()) },
        );
        let failures = verdict.unwrap_err();
        assert_eq!(
            failures,
            vec![
                ItemFailure {
                    index: 1,
                    at: FieldPath::from("[1]"),
                    external_id: "b".into(),
                    error: 1
                },
                ItemFailure {
                    index: 3,
                    at: FieldPath::from("[3]"),
                    external_id: "d".into(),
                    error: 3
                },
            ]
        );
    }

    #[test]
    fn judging_a_clean_batch_returns_every_result_in_order() {
        let verdict: Result<_, Vec<ItemFailure<()>>> =
            judge(&["x", "yy"], |s| s, |_, s| Ok(s.len()));
        assert_eq!(verdict, Ok(vec![1, 2]));
    }

    #[test]
    fn repeats_point_at_the_first_occurrence() {
        assert_eq!(
            earlier_occurrences(["a", "b", "a", "c", "a", "b"]),
            vec![None, None, Some(0), None, Some(0), Some(1)]
        );
    }

    #[test]
    fn only_created_and_updated_records_need_a_write() {
        assert!(Change::Created.needs_write());
        assert!(Change::Updated.needs_write());
        assert!(!Change::Unchanged.needs_write());
    }
}
