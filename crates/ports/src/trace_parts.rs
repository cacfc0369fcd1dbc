//! The parts of a trace read one query at a time, for stores that answer
//! [`TraceRepo::trace_parts`] that way (SQLite, the in-memory store): one snapshot only inside
//! the one transaction the caller provides.

use roastery_domain::ledger::{Direction, Reference};
use roastery_domain::stock::{LotKind, TypedLotRef};
use uuid::Uuid;

use crate::repo::{LocationRepo, StoreResult, TraceParts, TraceRepo, TracedCupping};
use crate::view::LocationRef;

/// [`TraceRepo::trace_parts`] read part by part (several queries): one snapshot only inside one
/// transaction, which the caller provides.
pub fn trace_parts_by_parts<T: TraceRepo + LocationRepo>(
    tx: &mut T,
    lot_id: Uuid,
    direction: Direction,
) -> StoreResult<Option<TraceParts>> {
    let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
        .map(|kind| TypedLotRef { id: lot_id, kind });
    let Some(start) = tx.traced_lots(&candidates)?.into_iter().next() else {
        return Ok(None);
    };
    let start = start.lot;
    let edges = tx.trace_edges(start, direction)?;
    let mut refs = std::collections::HashSet::from([start]);
    for e in &edges {
        refs.insert(e.from);
        if let Reference::Lot(to) = e.to {
            refs.insert(to);
        }
    }
    let lots = tx.traced_lots(&refs.into_iter().collect::<Vec<_>>())?;
    let locations = tx
        .locations_by_id(lots.iter().filter_map(|l| l.location_id))?
        .into_values()
        .map(|l| LocationRef {
            id: l.id,
            external_id: l.external_id,
        })
        .collect();
    let ids: Vec<Uuid> = lots.iter().map(|l| l.lot.id).collect();
    let orders = tx.orders_shipped_from(&ids)?;
    let traced: std::collections::HashSet<Uuid> = ids.iter().copied().collect();
    let mut cuppings = Vec::new();
    for cupping in tx.cuppings_of_lots(&ids)? {
        for coffee in cupping.coffees() {
            if traced.contains(&coffee.lot.id) {
                cuppings.push(TracedCupping {
                    id: cupping.id(),
                    number: cupping.number(),
                    state: cupping.state(),
                    cupped_lot: coffee.lot,
                });
            }
        }
    }
    Ok(Some(TraceParts {
        start,
        edges,
        lots,
        locations,
        orders,
        cuppings,
    }))
}
