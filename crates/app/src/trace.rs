//! inventory.trace: the ledger of every weight change and the genealogy of lots.
//!
//! Entries are written by the use cases that change weights, in their own transactions; here they
//! are read. A trace asks the store once for everything it shows ([`TraceRepo::trace_parts`]: on
//! PostgreSQL one statement, its recursive query over the genealogy included) and puts it in
//! order here.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use roastery_domain::ledger::{self, Direction, Edge, LedgerEntry, Reference};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use crate::reference::LocationRef;
use crate::{Roastery, Store};
use roastery_ports::error::AppError;
pub use roastery_ports::repo::TracedCupping;
use roastery_ports::repo::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListLedgerEntries {
    pub lot_id: Option<Uuid>,
    pub created_from: Option<DateTime<Utc>>,
    pub created_to: Option<DateTime<Utc>>,
}

/// A lot of a trace and its smallest depth from the asked lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLotView {
    pub lot: TracedLot,
    pub location: Option<LocationRef>,
    pub depth: u32,
}

/// The genealogy of a lot in one direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The asked lot first (depth 0), then every other lot once, by depth.
    pub lots: Vec<TraceLotView>,
    /// Weights in the unit of the `from` lot.
    pub edges: Vec<Edge>,
    pub orders: Vec<Order>,
    pub cuppings: Vec<TracedCupping>,
}

/// What `roastery verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    pub lots_checked: usize,
    /// Lots whose ledger sum differs from their weight, or consumed lots that weigh something.
    pub disagreeing: Vec<LotAudit>,
}

#[derive(Debug, thiserror::Error)]
#[error("lot {0} does not exist (no green, roasted or blended lot has this id)")]
pub struct LotNotFound(pub Uuid);

impl roastery_domain::BrokenRule for LotNotFound {
    fn violation(&self) -> roastery_domain::Violation {
        roastery_domain::Violation::NotFound
    }
}

impl<S: Store> Roastery<S> {
    /// Ledger entries, newest first.
    pub fn list_ledger_entries(
        &self,
        cmd: ListLedgerEntries,
        page: PageRequest,
    ) -> Result<Page<LedgerEntry>, AppError> {
        page.keyset()?;
        let filter = LedgerFilter {
            lot_id: cmd.lot_id,
            from: cmd.created_from,
            to: cmd.created_to,
        };
        self.store
            .read(|tx| Ok(tx.list_ledger_entries(&filter, &page)?))
    }

    /// The whole genealogy of a green, roasted or blended lot in one direction, read at once:
    /// on PostgreSQL one statement.
    pub fn trace_lot(&self, lot_id: Uuid, direction: Direction) -> Result<Trace, AppError> {
        let parts = self
            .store
            .read_statement(|tx| Ok(tx.trace_parts(lot_id, direction)?))?
            .ok_or(LotNotFound(lot_id))?;
        Ok(trace_of(parts, direction))
    }

    /// Checks every lot: the sum of its ledger entries equals its weight; a consumed lot weighs
    /// zero.
    pub fn audit_ledger(&self) -> Result<Audit, AppError> {
        self.store.read(|tx| {
            let lots = tx.ledger_audit()?;
            let lots_checked = lots.len();
            let disagreeing = lots
                .into_iter()
                .filter(|l| {
                    l.ledger_micros != l.weight.micros() || (l.consumed && !l.weight.is_zero())
                })
                .collect();
            Ok(Audit {
                lots_checked,
                disagreeing,
            })
        })
    }
}

/// The trace `parts` make: every lot once at its smallest depth (the asked lot first), edge
/// weights in the unit of their `from` lot, and the orders and cupped coffees of those lots.
fn trace_of(parts: TraceParts, direction: Direction) -> Trace {
    let TraceParts {
        start,
        edges,
        lots: stored,
        locations,
        orders,
        cuppings,
    } = parts;
    let reached = ledger::depths(Reference::Lot(start), &edges, direction);
    let mut found: HashMap<TypedLotRef, TracedLot> =
        stored.into_iter().map(|l| (l.lot, l)).collect();
    let external_ids: HashMap<Uuid, Option<String>> = locations
        .into_iter()
        .map(|l| (l.id, l.external_id))
        .collect();
    let mut lots = Vec::with_capacity(found.len());
    for (r, depth) in &reached {
        let Reference::Lot(l) = r else { continue };
        let Some(lot) = found.remove(l) else { continue };
        // A stored lot's location always exists; should it not, the reference carries no
        // external id rather than failing the read.
        let location = lot.location_id.map(|id| LocationRef {
            id,
            external_id: external_ids.get(&id).cloned().flatten(),
        });
        lots.push(TraceLotView {
            lot,
            location,
            depth: *depth,
        });
    }
    let units: HashMap<TypedLotRef, _> = lots
        .iter()
        .map(|l| (l.lot.lot, l.lot.weight.unit()))
        .collect();
    let edges = edges
        .into_iter()
        .map(|e| Edge {
            weight: units
                .get(&e.from)
                .map_or(e.weight, |unit| e.weight.to_unit(*unit)),
            ..e
        })
        .collect();
    let ids: HashSet<Uuid> = lots.iter().map(|l| l.lot.lot.id).collect();
    let orders = orders
        .into_iter()
        .filter(|o| o.shipments.iter().any(|s| ids.contains(&s.lot.id)))
        .collect();
    let cuppings = cuppings
        .into_iter()
        .filter(|c| ids.contains(&c.cupped_lot.id))
        .collect();
    Trace {
        lots,
        edges,
        orders,
        cuppings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roastery_domain::cupping::CuppingState;
    use roastery_domain::ledger::EdgeKind;
    use roastery_domain::order::{OrderStatus, Shipment};
    use roastery_domain::product::Sku;
    use roastery_domain::stock::LotKind;
    use roastery_domain::weight::{Weight, WeightUnit};

    fn lot(n: u128, kind: LotKind) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind,
        }
    }

    fn one(unit: WeightUnit) -> Weight {
        Weight::from_micros(1_000_000, unit).unwrap()
    }

    fn stored(lot: TypedLotRef, unit: WeightUnit, location_id: Option<Uuid>) -> TracedLot {
        TracedLot {
            lot,
            lot_number: 1,
            name: "Lot".into(),
            weight: one(unit),
            location_id,
            consumed_at: None,
        }
    }

    fn shipped_from(n: u128, lot: TypedLotRef) -> Order {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        Order {
            id: Uuid::from_u128(n),
            external_id: format!("ORD-{n}"),
            order_date: now,
            customer: None,
            customer_type: None,
            status: OrderStatus::Completed,
            items: vec![],
            created_at: now,
            updated_at: now,
            shipped_date: Some(now),
            shipments: vec![Shipment {
                sku: Sku::parse("ESP-250").unwrap(),
                lot,
                lot_number: 1,
                quantity: 1,
                weight: one(WeightUnit::Kg),
            }],
        }
    }

    fn cupped(lot: TypedLotRef) -> TracedCupping {
        TracedCupping {
            id: Uuid::from_u128(40),
            number: 40,
            state: CuppingState::Open,
            cupped_lot: lot,
        }
    }

    /// A store may answer more than a trace shows (lots it did not reach, their orders and
    /// cuppings): the trace keeps the reached lots and what belongs to them.
    #[test]
    fn a_trace_shows_the_reached_lots_and_what_belongs_to_them() {
        let (green, roasted, elsewhere) = (
            lot(1, LotKind::Green),
            lot(2, LotKind::Roasted),
            lot(3, LotKind::Roasted),
        );
        let warehouse = LocationRef {
            id: Uuid::from_u128(1000),
            external_id: Some("WH-1".into()),
        };
        let roast = Edge {
            from: green,
            to: Reference::Lot(roasted),
            kind: EdgeKind::Roast,
            weight: one(WeightUnit::Kg),
            date: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        };
        let parts = TraceParts {
            start: green,
            edges: vec![roast.clone()],
            lots: vec![
                stored(elsewhere, WeightUnit::Kg, Some(warehouse.id)),
                stored(roasted, WeightUnit::Kg, Some(warehouse.id)),
                stored(green, WeightUnit::Lbs, None),
            ],
            locations: vec![warehouse.clone()],
            orders: vec![shipped_from(30, roasted), shipped_from(31, elsewhere)],
            cuppings: vec![cupped(elsewhere), cupped(roasted), cupped(green)],
        };
        let trace = trace_of(parts, Direction::Downstream);
        let shown: Vec<_> = (trace.lots.iter())
            .map(|l| (l.lot.lot, l.location.clone(), l.depth))
            .collect();
        assert_eq!(shown, vec![(green, None, 0), (roasted, Some(warehouse), 1)]);
        // In the unit of the lot the weight left.
        assert_eq!(
            trace.edges,
            vec![Edge {
                weight: one(WeightUnit::Kg).to_unit(WeightUnit::Lbs),
                ..roast
            }]
        );
        assert_eq!(trace.orders, vec![shipped_from(30, roasted)]);
        assert_eq!(trace.cuppings, vec![cupped(roasted), cupped(green)]);
    }
}
