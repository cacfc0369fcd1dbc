//! The categories of broken rules the API distinguishes.
//!
//! Each domain error enum says precisely which rule was broken; [`BrokenRule::violation`] tells
//! which of these categories that rule belongs to. Transport adapters map categories to status
//! codes; they never inspect individual rules.

use crate::field::FieldPath;

/// What kind of rule a request broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Violation {
    /// A required field is absent.
    MissingParameter,
    /// A field has the wrong type, format or range.
    InvalidParameter,
    /// A weight unit other than `KG` or `LBS`.
    UnsupportedUnit,
    /// A currency that is not an ISO 4217 code.
    UnsupportedCurrency,
    /// A referenced record does not exist.
    NotFound,
    /// Any other business rule: the record's state forbids the change (a consumed lot, a closed
    /// cupping, an order no longer open) or the input breaks a rule of the business (percentages
    /// not summing to 100, a quantity of zero).
    BusinessRule,
    /// The input conflicts with itself or with stored records.
    Conflict,
    /// A weight is negative, zero where it must be positive, or more than is available.
    InvalidWeight,
    /// A price is negative.
    InvalidPrice,
}

/// A domain error: it says which rule was broken and in which category that rule falls.
pub trait BrokenRule: std::error::Error + Send + Sync + 'static {
    fn violation(&self) -> Violation;

    /// Puts every field path the error names under `base` ([`FieldPath::rebase`]): the domain
    /// names fields relative to what it judged, and whoever knows where that lies in the request
    /// says so once, before the message is written. An error naming no field keeps the default.
    fn rebase(&mut self, base: &FieldPath) {
        let _ = base;
    }
}
