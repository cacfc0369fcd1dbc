//! In-memory ledger and genealogy.

use roastery_domain::cupping::Cupping;
use roastery_domain::ledger::{Direction, Edge, EdgeKind, EntryKind, LedgerEntry, Reference};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use super::{MemTx, page_newest_first};
use crate::repo::*;

impl MemTx {
    fn all_edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        for e in &self.data.ledger {
            if let (EntryKind::TransferOut, Some(to)) = (e.kind, e.reference) {
                edges.push(Edge {
                    from: e.lot,
                    to,
                    kind: EdgeKind::Transfer,
                    weight: roastery_domain::weight::Weight::from_micros(-e.delta_micros, e.unit())
                        .unwrap_or(e.weight_after),
                    date: e.created_date,
                });
            }
        }
        for lot in &self.data.roast.lots {
            for s in &lot.sources {
                edges.push(Edge {
                    from: TypedLotRef {
                        id: s.lot_id,
                        kind: LotKind::Green,
                    },
                    to: Reference::Lot(TypedLotRef {
                        id: lot.id,
                        kind: LotKind::Roasted,
                    }),
                    kind: EdgeKind::Roast,
                    weight: s.used_weight,
                    date: lot.roasted_date,
                });
            }
        }
        for lot in &self.data.blend.lots {
            for s in &lot.sources {
                edges.push(Edge {
                    from: TypedLotRef {
                        id: s.lot_id,
                        kind: LotKind::Roasted,
                    },
                    to: Reference::Lot(TypedLotRef {
                        id: lot.id,
                        kind: LotKind::Blended,
                    }),
                    kind: EdgeKind::Blend,
                    weight: s.used_weight,
                    date: lot.blended_date,
                });
            }
        }
        for order in &self.data.order.orders {
            for s in &order.shipments {
                edges.push(Edge {
                    from: s.lot,
                    to: Reference::Order(order.id),
                    kind: EdgeKind::Shipment,
                    weight: s.weight,
                    date: order.shipped_date.unwrap_or(order.updated_at),
                });
            }
        }
        edges
    }

    fn all_lots(&self) -> Vec<TracedLot> {
        let green = self.data.green.lots.iter().map(|l| TracedLot {
            lot: TypedLotRef {
                id: l.id,
                kind: LotKind::Green,
            },
            lot_number: l.lot_number,
            name: l.name.clone(),
            weight: l.stock.weight(),
            location_id: l.location_id,
            consumed_at: l.stock.consumed_at(),
        });
        let roasted = self.data.roast.lots.iter().map(|l| TracedLot {
            lot: TypedLotRef {
                id: l.id,
                kind: LotKind::Roasted,
            },
            lot_number: l.lot_number,
            name: l.name.clone(),
            weight: l.stock.weight(),
            location_id: Some(l.location_id),
            consumed_at: l.stock.consumed_at(),
        });
        let blended = self.data.blend.lots.iter().map(|l| TracedLot {
            lot: TypedLotRef {
                id: l.id,
                kind: LotKind::Blended,
            },
            lot_number: l.lot_number,
            name: l.name.clone(),
            weight: l.stock.weight(),
            location_id: Some(l.location_id),
            consumed_at: l.stock.consumed_at(),
        });
        green.chain(roasted).chain(blended).collect()
    }
}

impl TraceRepo for MemTx {
    fn insert_ledger_entries(&mut self, entries: &[LedgerEntry]) -> StoreResult<()> {
        self.data.ledger.extend_from_slice(entries);
        Ok(())
    }

    fn list_ledger_entries(
        &mut self,
        filter: &LedgerFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<LedgerEntry>> {
        page_newest_first(
            self.data
                .ledger
                .iter()
                .filter(|e| filter.matches(e))
                .cloned(),
            |e| (e.created_date, e.id),
            page,
        )
    }

    fn ledger_audit(&mut self) -> StoreResult<Vec<LotAudit>> {
        Ok(self
            .all_lots()
            .into_iter()
            .map(|l| LotAudit {
                lot: l.lot,
                lot_number: l.lot_number,
                weight: l.weight,
                consumed: l.consumed_at.is_some(),
                ledger_micros: self
                    .data
                    .ledger
                    .iter()
                    .filter(|e| e.lot == l.lot)
                    .map(|e| e.delta_micros)
                    .sum(),
            })
            .collect())
    }

    fn trace_edges(&mut self, start: TypedLotRef, direction: Direction) -> StoreResult<Vec<Edge>> {
        let all = self.all_edges();
        let mut seen = vec![Reference::Lot(start)];
        let mut out: Vec<Edge> = Vec::new();
        let mut i = 0;
        while let Some(&node) = seen.get(i) {
            for e in &all {
                let (near, far) = match direction {
                    Direction::Downstream => (Reference::Lot(e.from), e.to),
                    Direction::Upstream => (e.to, Reference::Lot(e.from)),
                };
                if near == node && !out.contains(e) {
                    out.push(e.clone());
                    if !seen.contains(&far) {
                        seen.push(far);
                    }
                }
            }
            i += 1;
        }
        Ok(out)
    }

    fn traced_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<TracedLot>> {
        Ok(self
            .all_lots()
            .into_iter()
            .filter(|l| lots.contains(&l.lot))
            .collect())
    }

    fn orders_shipped_from(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Order>> {
        Ok(self
            .data
            .order
            .orders
            .iter()
            .filter(|o| o.shipments.iter().any(|s| lot_ids.contains(&s.lot.id)))
            .cloned()
            .collect())
    }

    fn cuppings_of_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Cupping>> {
        Ok(self
            .data
            .cupping
            .cuppings
            .iter()
            .filter(|c| c.coffees().iter().any(|cc| lot_ids.contains(&cc.lot.id)))
            .cloned()
            .collect())
    }
}
