//! inventory.trace: the ledger of every weight change and the genealogy of lots.
//!
//! Entries are written by the use cases that change weights, in their own transactions; here they
//! are read. A trace asks the store once for every edge reachable from a lot (one recursive
//! query), then loads the lots, orders and cuppings it reached in one query each.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::cupping::CuppingState;
use roastery_domain::ledger::{self, Direction, Edge, LedgerEntry, Reference};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use crate::error::AppError;
use crate::repo::*;
use crate::roast::LocationRef;
use crate::{Roastery, Store};

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

/// A cupping of a traced lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedCupping {
    pub id: Uuid,
    pub number: i64,
    pub state: CuppingState,
    pub cupped_lot: TypedLotRef,
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

    /// The whole genealogy of a green, roasted or blended lot in one direction.
    pub fn trace_lot(&self, lot_id: Uuid, direction: Direction) -> Result<Trace, AppError> {
        self.store.read(|tx| {
            let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
                .map(|kind| TypedLotRef { id: lot_id, kind });
            let start = tx
                .traced_lots(&candidates)?
                .into_iter()
                .next()
                .ok_or(LotNotFound(lot_id))?;
            let edges = tx.trace_edges(start.lot, direction)?;
            let reached = ledger::depths(Reference::Lot(start.lot), &edges, direction);
            let lot_refs: Vec<TypedLotRef> = reached
                .iter()
                .filter_map(|(r, _)| match r {
                    Reference::Lot(l) => Some(*l),
                    Reference::Order(_) => None,
                })
                .collect();
            let mut found: HashMap<TypedLotRef, TracedLot> = tx
                .traced_lots(&lot_refs)?
                .into_iter()
                .map(|l| (l.lot, l))
                .collect();
            let locations = crate::green_lot::locations_by_id(
                tx,
                found.values().filter_map(|l| l.location_id),
            )?;
            let mut lots = Vec::with_capacity(found.len());
            for (r, depth) in &reached {
                let Reference::Lot(l) = r else { continue };
                let Some(lot) = found.remove(l) else { continue };
                // A stored lot's location always exists; should it not, the reference carries no
                // external id rather than failing the read.
                let location = lot.location_id.map(|id| LocationRef {
                    id,
                    external_id: locations.get(&id).and_then(|l| l.external_id.clone()),
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
            let ids: Vec<Uuid> = lots.iter().map(|l| l.lot.lot.id).collect();
            let orders = tx.orders_shipped_from(&ids)?;
            let mut cuppings = Vec::new();
            for cupping in tx.cuppings_of_lots(&ids)? {
                for coffee in cupping.coffees() {
                    if ids.contains(&coffee.lot.id) {
                        cuppings.push(TracedCupping {
                            id: cupping.id(),
                            number: cupping.number(),
                            state: cupping.state(),
                            cupped_lot: coffee.lot,
                        });
                    }
                }
            }
            Ok(Trace {
                lots,
                edges,
                orders,
                cuppings,
            })
        })
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
