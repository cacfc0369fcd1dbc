//! References one record makes to another (a lot's location, a named lot) and the reads that
//! answer records by id in the asked order. Shared by roasts, profiles, blends and trace.

use std::collections::HashMap;

use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use crate::Repos;
use roastery_ports::error::AppError;

pub use roastery_ports::view::{LocationRef, NamedLotRef};

/// The records found for an asked id list, in the asked order, unknown ids left out, paged by
/// index.
pub(crate) fn found_in_asked_order<T>(
    ids: &[Uuid],
    found: Vec<T>,
    key: impl Fn(&T) -> Uuid,
    page: &PageRequest,
) -> Result<Page<T>, AppError> {
    let mut by_id: HashMap<Uuid, T> = found.into_iter().map(|t| (key(&t), t)).collect();
    let ordered: Vec<T> = ids.iter().filter_map(|id| by_id.remove(id)).collect();
    Ok(Page::from_found(ordered, page)?)
}

/// The location reference of a lot (a stored lot's location always exists; should it not, the
/// reference carries no external id rather than failing the read).
pub(crate) fn location_ref(tx: &mut impl Repos, id: Uuid) -> Result<LocationRef, AppError> {
    Ok(LocationRef {
        id,
        external_id: tx.location(id)?.and_then(|l| l.external_id),
    })
}

/// [`location_ref`] among locations read at once with `LocationRepo::locations_by_id`.
pub(crate) fn location_ref_in(locations: &HashMap<Uuid, Location>, id: Uuid) -> LocationRef {
    LocationRef {
        id,
        external_id: locations.get(&id).and_then(|l| l.external_id.clone()),
    }
}
