//! The inventory ledger: one entry per change of a lot's weight, never changed or deleted.
//!
//! Transitions of lots ([`crate::stock::Stock`]) stay what they are; a use case records each lot's
//! weight before and after as a [`Movement`], and [`entries`] turns the movements of one operation
//! into ledger entries. A movement that changes nothing yields no entry, and an entry's delta is
//! exactly the difference of the two weights in the lot's unit, so the entries of a lot always sum
//! to its weight (see the property test below).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::stock::LotKind;
use crate::stock::TypedLotRef;
use crate::violation::{BrokenRule, Violation};
use crate::weight::{Weight, WeightUnit};

/// What changed a lot's weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// The weight a lot held when the ledger began.
    Opening,
    Import,
    TransferOut,
    TransferIn,
    SetWeight,
    RoastInput,
    RoastOutput,
    BlendInput,
    BlendOutput,
    Shipment,
}

impl EntryKind {
    pub const ALL: [Self; 10] = [
        Self::Opening,
        Self::Import,
        Self::TransferOut,
        Self::TransferIn,
        Self::SetWeight,
        Self::RoastInput,
        Self::RoastOutput,
        Self::BlendInput,
        Self::BlendOutput,
        Self::Shipment,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opening => "OPENING",
            Self::Import => "IMPORT",
            Self::TransferOut => "TRANSFER_OUT",
            Self::TransferIn => "TRANSFER_IN",
            Self::SetWeight => "SET_WEIGHT",
            Self::RoastInput => "ROAST_INPUT",
            Self::RoastOutput => "ROAST_OUTPUT",
            Self::BlendInput => "BLEND_INPUT",
            Self::BlendOutput => "BLEND_OUTPUT",
            Self::Shipment => "SHIPMENT",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

/// The other side of a move: a lot, or the order a shipment went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reference {
    Lot(TypedLotRef),
    Order(Uuid),
}

impl Reference {
    pub const ORDER_TYPE: &'static str = "ORDER";

    pub fn id(self) -> Uuid {
        match self {
            Self::Lot(lot) => lot.id,
            Self::Order(id) => id,
        }
    }

    /// `INVENTORY_GREEN`, `INVENTORY_ROAST`, `INVENTORY_BLEND` or `ORDER`.
    pub fn type_name(self) -> &'static str {
        match self {
            Self::Lot(lot) => lot.kind.reference_type(),
            Self::Order(_) => Self::ORDER_TYPE,
        }
    }

    pub fn parse(id: Uuid, type_name: &str) -> Option<Self> {
        if type_name == Self::ORDER_TYPE {
            return Some(Self::Order(id));
        }
        LotKind::parse_reference_type(type_name).map(|kind| Self::Lot(TypedLotRef { id, kind }))
    }
}

/// One lot's weight before and after one step of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Movement {
    pub lot: TypedLotRef,
    pub kind: EntryKind,
    /// Zero for a lot the operation creates.
    pub before: Weight,
    pub after: Weight,
    pub reference: Option<Reference>,
}

impl Movement {
    /// A lot the operation creates with `weight`.
    pub fn created(lot: TypedLotRef, kind: EntryKind, weight: Weight) -> Self {
        Self {
            lot,
            kind,
            before: Weight::zero(weight.unit()),
            after: weight,
            reference: None,
        }
    }

    pub fn with_reference(self, reference: Reference) -> Self {
        Self {
            reference: Some(reference),
            ..self
        }
    }

    /// The signed change in micro-units of the lot's unit (the unit of `after`).
    pub fn delta_micros(&self) -> i64 {
        // Both are valid weights (0 ≤ micros < 2^63), so the difference always fits.
        self.after
            .micros()
            .saturating_sub(self.before.to_unit(self.after.unit()).micros())
    }
}

/// Who made the change and through which operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `namespace.operation`, e.g. `inventory.green.importGreenLot`.
    pub operation: String,
    pub client_id: String,
    pub created_date: DateTime<Utc>,
}

/// One entry of the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub id: Uuid,
    pub lot: TypedLotRef,
    pub kind: EntryKind,
    /// Signed, in micro-units of `weight_after`'s unit (the lot's unit).
    pub delta_micros: i64,
    pub weight_after: Weight,
    pub reference: Option<Reference>,
    pub operation: String,
    pub client_id: String,
    pub created_date: DateTime<Utc>,
}

impl LedgerEntry {
    pub fn unit(&self) -> WeightUnit {
        self.weight_after.unit()
    }
}

/// The entries the movements of one operation imply, in their order; movements that change no
/// weight yield none. `new_id` gives each entry its id.
pub fn entries(
    movements: &[Movement],
    origin: &Origin,
    mut new_id: impl FnMut() -> Uuid,
) -> Vec<LedgerEntry> {
    movements
        .iter()
        .filter(|m| m.delta_micros() != 0)
        .map(|m| LedgerEntry {
            id: new_id(),
            lot: m.lot,
            kind: m.kind,
            delta_micros: m.delta_micros(),
            weight_after: m.after,
            reference: m.reference,
            operation: origin.operation.clone(),
            client_id: origin.client_id.clone(),
            created_date: origin.created_date,
        })
        .collect()
}

/// Which way a trace walks: to the inputs of a lot, or to what was made of it and whom it reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Upstream,
    Downstream,
}

/// A `direction` that names no way to walk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not one of UPSTREAM, DOWNSTREAM")]
pub struct UnknownDirection(pub String);

impl BrokenRule for UnknownDirection {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

impl Direction {
    pub fn parse(value: &str) -> Result<Self, UnknownDirection> {
        match value {
            "UPSTREAM" => Ok(Self::Upstream),
            "DOWNSTREAM" => Ok(Self::Downstream),
            other => Err(UnknownDirection(other.to_owned())),
        }
    }
}

/// How weight flowed along an edge of the genealogy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    Transfer,
    Roast,
    Blend,
    Shipment,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transfer => "TRANSFER",
            Self::Roast => "ROAST",
            Self::Blend => "BLEND",
            Self::Shipment => "SHIPMENT",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        [Self::Transfer, Self::Roast, Self::Blend, Self::Shipment]
            .into_iter()
            .find(|k| k.as_str() == value)
    }
}

/// One flow of weight: from a lot (the input side) into a lot or an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: TypedLotRef,
    pub to: Reference,
    pub kind: EdgeKind,
    /// The weight that flowed, as recorded (converted into the `from` lot's unit for clients).
    pub weight: Weight,
    pub date: DateTime<Utc>,
}

/// The smallest depth of every node reached from `start` along `edges` in `direction` (`start`
/// at 0), breadth first, in the order first reached. Cycles (weight moved back and forth between
/// two lots) end where a node was seen before.
pub fn depths(start: Reference, edges: &[Edge], direction: Direction) -> Vec<(Reference, u32)> {
    use std::collections::{HashMap, HashSet, VecDeque};
    let mut next: HashMap<Reference, Vec<Reference>> = HashMap::new();
    for e in edges {
        let (a, b) = match direction {
            Direction::Downstream => (Reference::Lot(e.from), e.to),
            Direction::Upstream => (e.to, Reference::Lot(e.from)),
        };
        next.entry(a).or_default().push(b);
    }
    let mut seen = HashSet::from([start]);
    let mut out = vec![(start, 0)];
    let mut queue = VecDeque::from([(start, 0u32)]);
    while let Some((node, depth)) = queue.pop_front() {
        for n in next.get(&node).into_iter().flatten() {
            if seen.insert(*n) {
                let depth = depth.saturating_add(1);
                out.push((*n, depth));
                queue.push_back((*n, depth));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stock::Stock;
    use crate::test_values::now;
    use proptest::prelude::*;

    fn origin() -> Origin {
        Origin {
            operation: "inventory.green.transferGreenLotToLocation".into(),
            client_id: "client".into(),
            created_date: now(),
        }
    }

    fn lot(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind: LotKind::Green,
        }
    }

    fn weight(micros: i64, unit: WeightUnit) -> Weight {
        Weight::from_micros(micros, unit).unwrap()
    }

    #[test]
    fn a_movement_that_changes_nothing_writes_no_entry() {
        let w = weight(5_000_000, WeightUnit::Kg);
        let moves = [Movement {
            lot: lot(1),
            kind: EntryKind::SetWeight,
            before: w,
            after: w,
            reference: None,
        }];
        assert!(entries(&moves, &origin(), Uuid::nil).is_empty());
    }

    #[test]
    fn the_delta_is_signed_and_in_the_lots_unit() {
        let moves = [
            Movement {
                lot: lot(1),
                kind: EntryKind::TransferOut,
                before: weight(10_000_000, WeightUnit::Kg),
                after: weight(6_000_000, WeightUnit::Kg),
                reference: Some(Reference::Lot(lot(2))),
            },
            Movement::created(
                lot(2),
                EntryKind::TransferIn,
                weight(4_000_000, WeightUnit::Kg),
            )
            .with_reference(Reference::Lot(lot(1))),
        ];
        let entries = entries(&moves, &origin(), Uuid::nil);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].delta_micros, -4_000_000);
        assert_eq!(entries[0].reference, Some(Reference::Lot(lot(2))));
        assert_eq!(entries[1].delta_micros, 4_000_000);
        assert_eq!(entries[1].weight_after.micros(), 4_000_000);
    }

    #[test]
    fn kinds_and_references_round_trip() {
        for kind in EntryKind::ALL {
            assert_eq!(EntryKind::parse(kind.as_str()), Some(kind));
        }
        let order = Reference::Order(Uuid::from_u128(9));
        assert_eq!(Reference::parse(order.id(), order.type_name()), Some(order));
        let roast = Reference::Lot(TypedLotRef {
            id: Uuid::from_u128(3),
            kind: LotKind::Roasted,
        });
        assert_eq!(roast.type_name(), "INVENTORY_ROAST");
        assert_eq!(Reference::parse(roast.id(), "INVENTORY_ROAST"), Some(roast));
        assert_eq!(Reference::parse(roast.id(), "LOT"), None);
    }

    #[test]
    fn depths_are_the_smallest_and_cycles_end() {
        let l = |n| Reference::Lot(lot(n));
        let edge = |from: u128, to: Reference| Edge {
            from: lot(from),
            to,
            kind: EdgeKind::Transfer,
            weight: weight(1, WeightUnit::Kg),
            date: now(),
        };
        // 1 → 2 → 3, 1 → 3, 3 → 1 (moved back), 3 → order.
        let order = Reference::Order(Uuid::from_u128(99));
        let edges = [
            edge(1, l(2)),
            edge(2, l(3)),
            edge(1, l(3)),
            edge(3, l(1)),
            edge(3, order),
        ];
        let down = depths(l(1), &edges, Direction::Downstream);
        assert_eq!(down, vec![(l(1), 0), (l(2), 1), (l(3), 1), (order, 2)]);
        let up = depths(l(3), &edges, Direction::Upstream);
        assert_eq!(up, vec![(l(3), 0), (l(2), 1), (l(1), 1)]);
        assert_eq!(Direction::parse("UPSTREAM"), Ok(Direction::Upstream));
        assert_eq!(Direction::parse("UP"), Err(UnknownDirection("UP".into())));
        assert_eq!(EdgeKind::parse("BLEND"), Some(EdgeKind::Blend));
    }

    /// One step of a random history over a few lots.
    #[derive(Debug, Clone)]
    enum Step {
        Take {
            lot: usize,
            micros: i64,
        },
        Add {
            lot: usize,
            micros: i64,
            unit: WeightUnit,
        },
        Set {
            lot: usize,
            micros: i64,
            unit: WeightUnit,
        },
        Move {
            from: usize,
            to: usize,
            micros: i64,
        },
    }

    fn unit() -> impl Strategy<Value = WeightUnit> {
        prop_oneof![Just(WeightUnit::Kg), Just(WeightUnit::Lbs)]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..4usize, 0..20_000_000i64).prop_map(|(lot, micros)| Step::Take { lot, micros }),
            (0..4usize, 0..20_000_000i64, unit()).prop_map(|(lot, micros, unit)| Step::Add {
                lot,
                micros,
                unit
            }),
            (0..4usize, 0..20_000_000i64, unit()).prop_map(|(lot, micros, unit)| Step::Set {
                lot,
                micros,
                unit
            }),
            (0..4usize, 0..4usize, 0..20_000_000i64).prop_map(|(from, to, micros)| Step::Move {
                from,
                to,
                micros
            }),
        ]
    }

    proptest! {
        /// Whatever happens to a set of lots, through the stock transitions that lots use, the
        /// entries of each lot sum to its weight; refused steps write nothing.
        #[test]
        fn entries_always_sum_to_the_weight(
            units in proptest::collection::vec(unit(), 4),
            opening in proptest::collection::vec(0..50_000_000i64, 4),
            steps in proptest::collection::vec(step(), 0..60),
        ) {
            let mut stocks: Vec<Stock> = units
                .iter()
                .zip(&opening)
                .map(|(u, m)| Stock::new(weight(*m, *u), now()))
                .collect();
            let mut ledger: Vec<LedgerEntry> = Vec::new();
            for (i, s) in stocks.iter().enumerate() {
                let m = Movement::created(lot(i as u128), EntryKind::Opening, s.weight());
                ledger.extend(entries(&[m], &origin(), Uuid::nil));
            }
            for step in steps {
                let before = stocks.clone();
                let mut moves = Vec::new();
                let applied = match step {
                    Step::Take { lot: l, micros } => {
                        let w = weight(micros, stocks[l].weight().unit());
                        stocks[l].take(w, now()).map(|_| {
                            moves.push((l, EntryKind::RoastInput));
                        }).is_ok()
                    }
                    Step::Add { lot: l, micros, unit } => {
                        stocks[l].add(weight(micros, unit)).map(|_| {
                            moves.push((l, EntryKind::TransferIn));
                        }).is_ok()
                    }
                    Step::Set { lot: l, micros, unit } => {
                        stocks[l].set_weight(weight(micros, unit), now()).map(|_| {
                            moves.push((l, EntryKind::SetWeight));
                        }).is_ok()
                    }
                    Step::Move { from, to, micros } => {
                        if from == to {
                            false
                        } else {
                            let w = weight(micros, stocks[from].weight().unit());
                            match stocks[from].take(w, now()) {
                                Ok(taken) => match stocks[to].add(taken) {
                                    Ok(_) => {
                                        moves.push((from, EntryKind::TransferOut));
                                        moves.push((to, EntryKind::TransferIn));
                                        true
                                    }
                                    Err(_) => false,
                                },
                                Err(_) => false,
                            }
                        }
                    }
                };
                if !applied {
                    // A refused step is rolled back with its transaction.
                    stocks = before;
                    continue;
                }
                let movements: Vec<Movement> = moves
                    .into_iter()
                    .map(|(l, kind)| Movement {
                        lot: lot(l as u128),
                        kind,
                        before: before[l].weight(),
                        after: stocks[l].weight(),
                        reference: None,
                    })
                    .collect();
                ledger.extend(entries(&movements, &origin(), Uuid::nil));
            }
            for (i, s) in stocks.iter().enumerate() {
                let sum: i64 = ledger
                    .iter()
                    .filter(|e| e.lot == lot(i as u128))
                    .map(|e| e.delta_micros)
                    .sum();
                prop_assert_eq!(sum, s.weight().micros());
                prop_assert!(ledger.iter().all(|e| e.delta_micros != 0));
                prop_assert!(ledger.iter().all(|e| e.weight_after.unit() == units[
                    e.lot.id.as_u128() as usize]));
            }
        }
    }
}
