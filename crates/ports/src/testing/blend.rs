//! In-memory blended lots.

use crate::repo::EventRepo as _;
use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::lock::ForUpdate;
use crate::repo::{BlendRepo, StoreResult};

impl BlendRepo for MemTx {
    fn blended_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<BlendedLot>>> {
        crate::locked::blended_lot_for_update(self, id)
    }

    fn insert_blended_lot(&mut self, lot: &BlendedLot) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Blended, lot.id);
        self.written.blended(lot);
        self.record_change(Subject::new(Resource::BlendedLot, lot.id), Change::Created);
        self.data.blend.lots.push(lot.clone());
        Ok(())
    }

    fn blended_lot(&mut self, id: Uuid) -> StoreResult<Option<BlendedLot>> {
        Ok(self.data.blend.lots.iter().find(|l| l.id == id).cloned())
    }

    fn update_blended_lot_stock(&mut self, lot: &ForUpdate<BlendedLot>) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Blended, lot.id);
        self.written.blended(lot);
        self.record_change(Subject::new(Resource::BlendedLot, lot.id), Change::Updated);
        if let Some(stored) = self.data.blend.lots.iter_mut().find(|l| l.id == lot.id) {
            stored.stock = lot.stock;
            stored.last_modified_at = lot.last_modified_at;
        }
        Ok(())
    }

    fn list_blended_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<BlendedLot>> {
        page_newest_first(
            self.data
                .blend
                .lots
                .iter()
                .filter(|l| from.is_none_or(|from| l.blended_date >= from))
                .cloned(),
            |l| (l.blended_date, l.id),
            page,
        )
    }
}
