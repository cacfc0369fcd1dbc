//! inventory.blend: creating blends from roasted lots and listing blended lots.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::{self, BlendError, BlendedLot, NewBlend};
use roastery_domain::lot_source::{self, SourceError, SourceInfo, UsedSource};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::weight::Weight;
use uuid::Uuid;

use crate::error::AppError;
use crate::project::resolve_projects;
use crate::repo::*;
use crate::roast::{LocationRef, location_ref};
use crate::{Repos, Roastery, Store};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateBlend {
    pub name: String,
    pub location_id: Uuid,
    pub blended_date: DateTime<Utc>,
    /// Each roasted lot used and the weight taken from it, in the client's order.
    pub roasted_lots: Vec<(Uuid, Weight)>,
    pub projects: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlendedLotView {
    pub lot: BlendedLot,
    pub location: LocationRef,
}

fn blended_view(tx: &mut impl Repos, lot: BlendedLot) -> Result<BlendedLotView, AppError> {
    let location = location_ref(tx, lot.location_id)?;
    Ok(BlendedLotView { lot, location })
}

impl<S: Store> Roastery<S> {
    /// Takes each used weight from its roasted lot (consuming those that reach zero) and creates
    /// the blended lot, all in one transaction.
    pub fn create_blend(&self, cmd: CreateBlend) -> Result<BlendedLotView, AppError> {
        let ids: Vec<Uuid> = cmd.roasted_lots.iter().map(|(id, _)| *id).collect();
        lot_source::check_source_ids(LotKind::Roasted, &ids).map_err(BlendError::from)?;
        let id = self.ids.new_id();
        let now = self.clock.now();
        self.store.write(|tx| {
            if tx.location(cmd.location_id)?.is_none() {
                return Err(BlendError::LocationNotFound(cmd.location_id).into());
            }
            let projects = resolve_projects(tx, &cmd.projects)?;
            let mut lots = Vec::with_capacity(cmd.roasted_lots.len());
            for (lot_id, _) in &cmd.roasted_lots {
                let lot = tx.roasted_lot(*lot_id)?.ok_or(SourceError::NotFound {
                    kind: LotKind::Roasted,
                    id: *lot_id,
                })?;
                lots.push(lot);
            }
            let lot_number = tx.next_number(LotKind::Blended.prefix())?;
            let sources = lots
                .iter_mut()
                .zip(&cmd.roasted_lots)
                .map(|(lot, (_, used))| UsedSource {
                    lot: SourceInfo {
                        lot_id: lot.id,
                        name: lot.name.clone(),
                        external_id: None,
                    },
                    stock: &mut lot.stock,
                    used: *used,
                })
                .collect();
            let blend = blended_lot::create_blend(
                NewBlend {
                    name: cmd.name.clone(),
                    location_id: cmd.location_id,
                    blended_date: cmd.blended_date,
                    projects,
                },
                sources,
                id,
                lot_number,
                now,
            )?;
            for lot in &mut lots {
                lot.last_modified_at = now;
                tx.update_roasted_lot_stock(lot)?;
            }
            tx.insert_blended_lot(&blend)?;
            blended_view(tx, blend)
        })
    }

    pub fn list_blended_lots(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<BlendedLotView>, AppError> {
        page.keyset()?;
        self.store.read(|tx| {
            let lots = tx.list_blended_lots(from, &page)?;
            let next = lots.next;
            let items = lots
                .items
                .into_iter()
                .map(|lot| blended_view(tx, lot))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Page { items, next })
        })
    }
}
