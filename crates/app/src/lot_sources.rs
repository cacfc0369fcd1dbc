//! The source lots of a roast (green lots) or a blend (roasted lots): loaded in the order the
//! request lists them and handed to the domain with the weights asked, unjudged. Both use cases
//! share this; the domain's `lot_source` decides what may be taken.

use std::collections::HashMap;

use roastery_domain::lot_source::{SourceError, SourceInfo, UsedSource};
use roastery_domain::stock::{LotKind, Stock};
use roastery_domain::weight::RequestedWeight;
use uuid::Uuid;

use crate::green_lot::WeightInput;

/// The lots `found` for `ids`, in the order of `ids`; the first id not found is
/// `resource_not_found`.
pub(crate) fn all_in_asked_order<L>(
    kind: LotKind,
    ids: &[Uuid],
    found: Vec<L>,
    id_of: impl Fn(&L) -> Uuid,
) -> Result<Vec<L>, SourceError> {
    let mut by_id: HashMap<Uuid, L> = found.into_iter().map(|l| (id_of(&l), l)).collect();
    ids.iter()
        .map(|id| {
            by_id
                .remove(id)
                .ok_or(SourceError::NotFound { kind, id: *id })
        })
        .collect()
}

/// Each loaded lot with the weight asked of it (`asked` lists them in the same order).
pub(crate) fn used<'a, L: 'a>(
    lots: impl IntoIterator<Item = &'a mut L>,
    asked: &[(Uuid, WeightInput)],
    parts: impl Fn(&'a mut L) -> (SourceInfo, &'a mut Stock),
) -> Vec<UsedSource<'a>> {
    lots.into_iter()
        .zip(asked)
        .map(|(lot, (_, weight))| {
            let (lot, stock) = parts(lot);
            UsedSource {
                lot,
                stock,
                used: RequestedWeight::from(*weight),
            }
        })
        .collect()
}

/// The ids a source list asks for, in its order.
pub(crate) fn ids(asked: &[(Uuid, WeightInput)]) -> Vec<Uuid> {
    asked.iter().map(|(id, _)| *id).collect()
}
