//! In-memory ledger and genealogy.

use roastery_domain::cupping::Cupping;
use roastery_domain::ledger::{Direction, Edge, EdgeKind, EntryKind, LedgerEntry, Reference};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::error::StoreError;
use crate::repo::*;

/// An edge of the genealogy with the key the database orders edges of one instant by: the
/// ledger entry's id, or the roast, blend or order and the source's or shipment's position.
struct KeyedEdge {
    edge: Edge,
    key: String,
}

impl MemTx {
    fn all_edges(&self) -> Vec<KeyedEdge> {
        let mut edges = Vec::new();
        for e in &self.data.ledger {
            if let (EntryKind::TransferOut, Some(to)) = (e.kind, e.reference) {
                edges.push(KeyedEdge {
                    edge: Edge {
                        from: e.lot,
                        to,
                        kind: EdgeKind::Transfer,
                        weight: roastery_domain::weight::Weight::from_micros(
                            -e.delta_micros,
                            e.unit(),
                        )
                        .unwrap_or(e.weight_after),
                        date: e.created_date,
                    },
                    key: e.id.to_string(),
                });
            }
        }
        for lot in &self.data.roast.lots {
            for (position, s) in lot.sources.iter().enumerate() {
                edges.push(KeyedEdge {
                    edge: Edge {
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
                    },
                    key: format!("{}/{position}", lot.id),
                });
            }
        }
        for lot in &self.data.blend.lots {
            for (position, s) in lot.sources.iter().enumerate() {
                edges.push(KeyedEdge {
                    edge: Edge {
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
                    },
                    key: format!("{}/{position}", lot.id),
                });
            }
        }
        for order in &self.data.order.orders {
            for (position, s) in order.shipments.iter().enumerate() {
                edges.push(KeyedEdge {
                    edge: Edge {
                        from: s.lot,
                        to: Reference::Order(order.id),
                        kind: EdgeKind::Shipment,
                        weight: s.weight,
                        date: order.shipped_date.unwrap_or(order.updated_at),
                    },
                    key: format!("{}/{position}", order.id),
                });
            }
        }
        edges
    }

    /// Every edge reachable from `starts`, each once, oldest first (key as tie-breaker), like
    /// the database's recursive query.
    fn reachable(&self, starts: &[Reference], direction: Direction) -> Vec<Edge> {
        let all = self.all_edges();
        let mut seen: Vec<Reference> = starts.to_vec();
        let mut reached: Vec<&KeyedEdge> = Vec::new();
        let mut i = 0;
        while let Some(&node) = seen.get(i) {
            for e in &all {
                let (near, far) = match direction {
                    Direction::Downstream => (Reference::Lot(e.edge.from), e.edge.to),
                    Direction::Upstream => (e.edge.to, Reference::Lot(e.edge.from)),
                };
                if near == node && !reached.iter().any(|r| r.key == e.key) {
                    reached.push(e);
                    if !seen.contains(&far) {
                        seen.push(far);
                    }
                }
            }
            i += 1;
        }
        reached.sort_by(|a, b| (a.edge.date, &a.key).cmp(&(b.edge.date, &b.key)));
        reached.into_iter().map(|e| e.edge.clone()).collect()
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
        for (i, e) in entries.iter().enumerate() {
            if (self.data.ledger.iter().chain(entries.iter().take(i))).any(|s| s.id == e.id) {
                return Err(StoreError::Duplicate(format!("ledger entry {}", e.id)));
            }
        }
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
        let mut lots = self.all_lots();
        // The database's order: by lot type name (blended, green, roasted), then number.
        lots.sort_by_key(|l| (l.lot.kind.reference_type(), l.lot_number));
        Ok(lots
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
                    .filter(|e| e.lot.id == l.lot.id)
                    .map(|e| e.delta_micros)
                    .sum(),
            })
            .collect())
    }

    fn trace_edges(&mut self, start: TypedLotRef, direction: Direction) -> StoreResult<Vec<Edge>> {
        Ok(self.reachable(&[Reference::Lot(start)], direction))
    }

    fn upstream_edges(&mut self, starts: &[Reference]) -> StoreResult<Vec<Edge>> {
        Ok(self.reachable(starts, Direction::Upstream))
    }

    fn ledger_entries_touching(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<LedgerEntry>> {
        Ok((self.data.ledger.iter())
            .filter(|e| {
                lot_ids.contains(&e.lot.id)
                    || e.reference.is_some_and(|r| lot_ids.contains(&r.id()))
            })
            .cloned()
            .collect())
    }

    fn traced_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<TracedLot>> {
        Ok(self
            .all_lots()
            .into_iter()
            .filter(|l| lots.contains(&l.lot))
            .collect())
    }

    fn orders_shipped_from(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Order>> {
        let mut orders: Vec<Order> = (self.data.order.orders.iter())
            .filter(|o| o.shipments.iter().any(|s| lot_ids.contains(&s.lot.id)))
            .cloned()
            .collect();
        orders.sort_by_key(|o| (o.order_date, o.id));
        Ok(orders)
    }

    fn cuppings_of_lots(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<Cupping>> {
        let mut cuppings: Vec<Cupping> = (self.data.cupping.cuppings.iter())
            .filter(|c| c.coffees().iter().any(|cc| lot_ids.contains(&cc.lot.id)))
            .cloned()
            .collect();
        cuppings.sort_by_key(Cupping::id);
        Ok(cuppings)
    }

    fn trace_parts(
        &mut self,
        lot_id: Uuid,
        direction: Direction,
    ) -> StoreResult<Option<TraceParts>> {
        // A unit of work of this store reads its own copy of the data: one snapshot.
        crate::trace_parts::trace_parts_by_parts(self, lot_id, direction)
    }
}

impl DueDiligenceRepo for MemTx {
    fn put_due_diligence(
        &mut self,
        lot_id: Uuid,
        due_diligence: &roastery_domain::due_diligence::DueDiligence,
    ) -> StoreResult<()> {
        // The databases refuse a due diligence of no stored green lot (a foreign key).
        if !self.data.green.lots.iter().any(|l| l.id == lot_id) {
            return Err(crate::error::StoreError::Internal(format!(
                "no green lot {lot_id} for this due diligence"
            )));
        }
        self.data.due_diligence.retain(|(id, _)| *id != lot_id);
        self.data
            .due_diligence
            .push((lot_id, due_diligence.clone()));
        Ok(())
    }

    fn due_diligence_sizes(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, u64)>> {
        Ok(self
            .data
            .due_diligence
            .iter()
            .filter(|(id, _)| lot_ids.contains(id))
            .map(|(id, d)| {
                let len = d.to_document().map_or(0, |doc| doc.len());
                (*id, u64::try_from(len).unwrap_or(u64::MAX))
            })
            .collect())
    }

    fn due_diligence_of(
        &mut self,
        lot_ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, roastery_domain::due_diligence::DueDiligence)>> {
        Ok(self
            .data
            .due_diligence
            .iter()
            .filter(|(id, _)| lot_ids.contains(id))
            .cloned()
            .collect())
    }

    fn source_green_lots(
        &mut self,
        lot_ids: &[Uuid],
    ) -> StoreResult<Vec<roastery_domain::due_diligence::SourceLot>> {
        let ledger = &self.data.ledger;
        Ok(self
            .data
            .green
            .lots
            .iter()
            .filter(|l| lot_ids.contains(&l.id))
            .filter(|l| {
                let opening = ledger
                    .iter()
                    .any(|e| e.lot.id == l.id && e.kind == EntryKind::Opening);
                roastery_domain::due_diligence::is_source(l.id, l.origin_id, opening)
            })
            .map(|l| roastery_domain::due_diligence::SourceLot {
                id: l.id,
                lot_number: l.number(),
                number: l.lot_number,
                name: l.name.clone(),
            })
            .collect())
    }
}
