//! In-memory roasted lots, their details and curves (profiles in `profile.rs`).

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};

use chrono::{DateTime, Utc};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::roast_curve::RoastCurve;
use roastery_domain::roast_details::RoastDetails;
use roastery_domain::roasted_lot::RoastedLot;
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::lock::ForUpdate;
use crate::repo::{RoastRepo, StoreResult};

impl RoastRepo for MemTx {
    fn roasted_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<RoastedLot>>> {
        crate::locked::roasted_lot_for_update(self, id)
    }

    fn roasted_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<RoastedLot>>> {
        crate::locked::roasted_lots_for_update(self, ids)
    }

    fn insert_roasted_lot(&mut self, lot: &RoastedLot) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Roasted, lot.id);
        self.written.roasted(lot);
        self.record_change(Subject::new(Resource::RoastedLot, lot.id), Change::Created);
        if let Some(external_id) = &lot.external_id
            && self
                .data
                .roast
                .lots
                .iter()
                .any(|l| l.external_id.as_ref() == Some(external_id))
        {
            return Err(crate::StoreError::Duplicate(format!(
                "roasted lot external id {external_id}"
            )));
        }
        if (self.data.roast.lots.iter()).any(|l| l.id == lot.id || l.lot_number == lot.lot_number) {
            return Err(crate::StoreError::Duplicate(format!(
                "roasted lot {}",
                lot.id
            )));
        }
        self.data.roast.lots.push(lot.clone());
        Ok(())
    }

    fn update_roasted_lot_stock(&mut self, lot: &ForUpdate<RoastedLot>) -> StoreResult<()> {
        self.clear_item(roastery_domain::stock::LotKind::Roasted, lot.id);
        self.written.roasted(lot);
        self.record_change(Subject::new(Resource::RoastedLot, lot.id), Change::Updated);
        if let Some(stored) = self.data.roast.lots.iter_mut().find(|l| l.id == lot.id) {
            stored.stock = lot.stock;
            stored.last_modified_at = lot.last_modified_at;
        }
        Ok(())
    }

    fn roasted_lot(&mut self, id: Uuid) -> StoreResult<Option<RoastedLot>> {
        Ok(self.data.roast.lots.iter().find(|l| l.id == id).cloned())
    }

    fn roasted_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<RoastedLot>> {
        Ok(self
            .data
            .roast
            .lots
            .iter()
            .find(|l| l.external_id.as_deref() == Some(external_id))
            .cloned())
    }

    fn roasted_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<RoastedLot>> {
        Ok(self
            .data
            .roast
            .lots
            .iter()
            .filter(|l| ids.contains(&l.id))
            .cloned()
            .collect())
    }

    fn list_roasted_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<RoastedLot>> {
        page_newest_first(
            self.data
                .roast
                .lots
                .iter()
                .filter(|l| from.is_none_or(|from| l.roasted_date >= from))
                .cloned(),
            |l| (l.roasted_date, l.id),
            page,
        )
    }

    fn insert_roast_details(&mut self, lot_id: Uuid, details: &RoastDetails) -> StoreResult<()> {
        self.data.roast.details.insert(lot_id, details.clone());
        Ok(())
    }

    fn roast_details_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, RoastDetails)>> {
        // Each stored lot once, however often it is asked for, as a database's `IN` answers.
        Ok(self
            .data
            .roast
            .details
            .iter()
            .filter(|(id, _)| ids.contains(id))
            .map(|(id, d)| (*id, d.clone()))
            .collect())
    }

    fn insert_roast_curves(&mut self, lot_id: Uuid, curves: &[RoastCurve]) -> StoreResult<()> {
        self.data.roast.curves.insert(lot_id, curves.to_vec());
        Ok(())
    }

    fn roast_curves(&mut self, lot_id: Uuid) -> StoreResult<Vec<RoastCurve>> {
        Ok(self
            .data
            .roast
            .curves
            .get(&lot_id)
            .cloned()
            .unwrap_or_default())
    }
}
