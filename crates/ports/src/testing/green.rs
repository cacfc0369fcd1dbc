//! In-memory green lots.

use crate::repo::EventRepo as _;
use chrono::{DateTime, Utc};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::error::StoreError;
use crate::lock::{ForUpdate, Rows};
use crate::repo::{GreenLotRepo, StoreResult};

impl GreenLotRepo for MemTx {
    fn green_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<GreenLot>>> {
        crate::locked::green_lot_for_update(self, id)
    }

    fn green_lot_to_transfer(
        &mut self,
        id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<(ForUpdate<GreenLot>, Option<ForUpdate<GreenLot>>)>> {
        crate::locked::green_lot_to_transfer(self, id, location_id)
    }

    fn insert_green_lot(&mut self, lot: &GreenLot) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Green, lot.id);
        self.written.green(lot);
        self.record_change(Subject::new(Resource::GreenLot, lot.id), Change::Created);
        let lots = &self.data.green.lots;
        if lots.iter().any(|l| {
            l.id == lot.id
                || l.lot_number == lot.lot_number
                || (lot.external_id.is_some() && l.external_id == lot.external_id)
        }) {
            return Err(StoreError::Duplicate(format!("green lot {}", lot.id)));
        }
        // The database's unique index on the active lot of an origin at a location refuses a
        // second one; a concurrent unit of work created it, so this one runs again and merges.
        if let Some(location_id) = lot.location_id
            && !lot.stock.is_consumed()
            && lots
                .iter()
                .any(|l| l.is_merge_target_for(lot.origin_id, location_id))
        {
            return Err(StoreError::Contention);
        }
        self.data.green.lots.push(lot.clone());
        Ok(())
    }

    fn update_green_lot(&mut self, lot: &ForUpdate<GreenLot>) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Green, lot.id);
        self.written.green(lot);
        self.record_change(Subject::new(Resource::GreenLot, lot.id), Change::Updated);
        let stored = self
            .data
            .green
            .lots
            .iter_mut()
            .find(|l| l.id == lot.id)
            .ok_or_else(|| StoreError::Internal(format!("green lot {} is not stored", lot.id)))?;
        *stored = GreenLot {
            id: stored.id,
            origin_id: stored.origin_id,
            lot_number: stored.lot_number,
            registration_date: stored.registration_date,
            ..GreenLot::clone(lot)
        };
        Ok(())
    }

    fn green_lot(&mut self, id: Uuid) -> StoreResult<Option<GreenLot>> {
        Ok(self.data.green.lots.iter().find(|l| l.id == id).cloned())
    }

    fn green_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<GreenLot>>> {
        ForUpdate::load(self, Rows::GreenLots(ids), |tx| tx.green_lots_by_ids(ids))
            .map(ForUpdate::into_each)
    }

    fn green_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<GreenLot>> {
        Ok(ids
            .iter()
            .filter_map(|id| self.data.green.lots.iter().find(|l| l.id == *id).cloned())
            .collect())
    }

    fn green_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<GreenLot>> {
        Ok(self
            .data
            .green
            .lots
            .iter()
            .find(|l| l.external_id.as_deref() == Some(external_id))
            .cloned())
    }

    fn active_green_lot_at(
        &mut self,
        origin_id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<GreenLot>> {
        Ok(self
            .data
            .green
            .lots
            .iter()
            .find(|l| l.is_merge_target_for(origin_id, location_id))
            .cloned())
    }

    fn list_green_lots(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<GreenLot>> {
        page_newest_first(
            self.data
                .green
                .lots
                .iter()
                .filter(|l| modified_from.is_none_or(|from| l.last_modified_date >= from))
                .cloned(),
            |l| (l.registration_date, l.id),
            page,
        )
    }
}
