//! OAuth scopes. The scope an operation needs is its namespace (`inventory.green`, ...).

use std::fmt;

use crate::violation::{BrokenRule, Violation};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    InventoryGreen,
    InventoryRoast,
    InventoryBlend,
    InventoryTrace,
    QualityCupping,
    QualityPhysical,
    MrpProduct,
    MrpOrder,
    MrpPlan,
    CoreLocation,
    CoreProject,
    CoreEvent,
    EudrStatement,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error("`{0}` is not a scope of this service")]
    Unknown(String),
}

impl BrokenRule for ScopeError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

impl Scope {
    pub const ALL: [Scope; 13] = [
        Scope::InventoryGreen,
        Scope::InventoryRoast,
        Scope::InventoryBlend,
        Scope::InventoryTrace,
        Scope::QualityCupping,
        Scope::QualityPhysical,
        Scope::MrpProduct,
        Scope::MrpOrder,
        Scope::MrpPlan,
        Scope::CoreLocation,
        Scope::CoreProject,
        Scope::CoreEvent,
        Scope::EudrStatement,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::InventoryGreen => "inventory.green",
            Scope::InventoryRoast => "inventory.roast",
            Scope::InventoryBlend => "inventory.blend",
            Scope::InventoryTrace => "inventory.trace",
            Scope::QualityCupping => "quality.cupping",
            Scope::QualityPhysical => "quality.physical",
            Scope::MrpProduct => "mrp.product",
            Scope::MrpOrder => "mrp.order",
            Scope::MrpPlan => "mrp.plan",
            Scope::CoreLocation => "core.location",
            Scope::CoreProject => "core.project",
            Scope::CoreEvent => "core.event",
            Scope::EudrStatement => "eudr.statement",
        }
    }

    pub fn parse(name: &str) -> Result<Self, ScopeError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| ScopeError::Unknown(name.to_owned()))
    }

    /// The scope that guards an operation: its namespace, the path without the operation name.
    pub fn of_operation(operation: &str) -> Option<Self> {
        let (namespace, name) = operation.rsplit_once('.')?;
        if name.is_empty() {
            return None;
        }
        Self::parse(namespace).ok()
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScopeSet(u16);

impl ScopeSet {
    pub fn empty() -> Self {
        Self(0)
    }

    /// Parses scopes separated by white space; duplicates collapse.
    pub fn parse(list: &str) -> Result<Self, ScopeError> {
        list.split_whitespace()
            .map(Scope::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(|scopes| scopes.into_iter().collect())
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn is_subset_of(self, other: ScopeSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Scope names joined by `separator`, in a fixed order.
    pub fn join(self, separator: &str) -> String {
        self.iter()
            .map(Scope::as_str)
            .collect::<Vec<_>>()
            .join(separator)
    }
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        Self(iter.into_iter().fold(0, |bits, s| bits | s.bit()))
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_of_an_operation_is_its_namespace() {
        assert_eq!(
            Scope::of_operation("inventory.green.importGreenLot"),
            Some(Scope::InventoryGreen)
        );
        assert_eq!(
            Scope::of_operation("mrp.order.setOrders"),
            Some(Scope::MrpOrder)
        );
        assert_eq!(Scope::of_operation("inventory.coffee.list"), None);
        assert_eq!(Scope::of_operation("inventory.green."), None);
        assert_eq!(Scope::of_operation("nothing"), None);
    }

    #[test]
    fn scope_lists_parse_split_on_white_space() {
        let set = ScopeSet::parse("core.location  inventory.green core.location").unwrap();
        assert_eq!(set.join(" "), "inventory.green core.location");
        assert!(ScopeSet::parse("inventory.green bogus").is_err());
        assert!(ScopeSet::parse("").unwrap().is_empty());
    }

    #[test]
    fn subsets() {
        let all: ScopeSet = Scope::ALL.into_iter().collect();
        let one: ScopeSet = [Scope::MrpOrder].into_iter().collect();
        assert!(one.is_subset_of(all));
        assert!(!all.is_subset_of(one));
        assert!(ScopeSet::empty().is_subset_of(one));
    }
}
