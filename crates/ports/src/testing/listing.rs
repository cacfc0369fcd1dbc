//! The in-memory store keeps listing items as the databases do: cleared when a lot is written,
//! stored by the unit of work that wrote it, answered as stored.

use chrono::{DateTime, Utc};
use roastery_domain::page::{JoinedPage, PageRequest};
use roastery_domain::stock::LotKind;
use uuid::Uuid;

use super::store::MemTx;
use crate::error::StoreError;
use crate::listing::{ListingRepo, RenderedItem, WrittenLots};
use crate::lock::ForUpdate;
use crate::repo::{BlendRepo, GreenLotRepo, RoastRepo, StoreResult};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::roasted_lot::RoastedLot;

impl MemTx {
    /// Clears the item of a lot being written and remembers the lot.
    pub(super) fn clear_item(&mut self, kind: LotKind, id: Uuid) {
        self.data.listing.items.remove(&(kind, id));
    }

    /// The page of stored items of `rows` (sort key, id), newest first after the page's
    /// keyset, joined as a database store joins them; `None` when one of them has no item.
    fn item_page(
        &self,
        kind: LotKind,
        rows: Vec<(DateTime<Utc>, Uuid)>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let after = page
            .keyset()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let mut rows: Vec<_> = rows
            .into_iter()
            .filter(|k| after.is_none_or(|a| *k < a))
            .collect();
        rows.sort_by_key(|k| std::cmp::Reverse(*k));
        let mut joined = JoinedPage::new(page.limit);
        for (at, id) in rows {
            if joined.is_full() {
                joined.more();
                break;
            }
            let Some(json) = self.data.listing.items.get(&(kind, id)) else {
                return Ok(None);
            };
            joined.push(json.as_bytes(), || Ok::<_, StoreError>((at, id)))?;
        }
        Ok(Some(joined))
    }

    fn lot_ids(&self, kind: LotKind) -> Vec<Uuid> {
        match kind {
            LotKind::Green => self.data.green.lots.iter().map(|l| l.id).collect(),
            LotKind::Roasted => self.data.roast.lots.iter().map(|l| l.id).collect(),
            LotKind::Blended => self.data.blend.lots.iter().map(|l| l.id).collect(),
        }
    }
}

impl ListingRepo for MemTx {
    fn green_lot_items(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let rows = (self.data.green.lots.iter())
            .filter(|l| modified_from.is_none_or(|from| l.last_modified_date >= from))
            .map(|l| (l.registration_date, l.id))
            .collect();
        self.item_page(LotKind::Green, rows, page)
    }

    fn roasted_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let rows = (self.data.roast.lots.iter())
            .filter(|l| from.is_none_or(|from| l.roasted_date >= from))
            .map(|l| (l.roasted_date, l.id))
            .collect();
        self.item_page(LotKind::Roasted, rows, page)
    }

    fn roasted_lot_items_by_ids(
        &mut self,
        ids: &[Uuid],
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let mut joined =
            JoinedPage::found(page).map_err(|e| StoreError::Internal(e.to_string()))?;
        let lots = &self.data.roast.lots;
        for id in ids.iter().filter(|id| lots.iter().any(|l| l.id == **id)) {
            if joined.is_full() {
                joined.more();
                break;
            }
            if joined.skip_found() {
                continue;
            }
            let Some(json) = self.data.listing.items.get(&(LotKind::Roasted, *id)) else {
                return Ok(None);
            };
            joined.push_found(json.as_bytes());
        }
        Ok(Some(joined))
    }

    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let rows = (self.data.blend.lots.iter())
            .filter(|l| from.is_none_or(|from| l.blended_date >= from))
            .map(|l| (l.blended_date, l.id))
            .collect();
        self.item_page(LotKind::Blended, rows, page)
    }

    fn take_written_lots(&mut self) -> WrittenLots {
        std::mem::take(&mut self.written)
    }

    fn update_green_lot_with_item(
        &mut self,
        lot: &ForUpdate<GreenLot>,
        json: &str,
    ) -> StoreResult<()> {
        self.update_green_lot(lot)?;
        self.written.forget_green(lot.id);
        (self.data.listing.items).insert((LotKind::Green, lot.id), json.to_owned());
        Ok(())
    }

    fn insert_green_lot_with_item(&mut self, lot: &GreenLot, json: &str) -> StoreResult<()> {
        self.insert_green_lot(lot)?;
        self.written.forget_green(lot.id);
        (self.data.listing.items).insert((LotKind::Green, lot.id), json.to_owned());
        Ok(())
    }

    fn insert_roasted_lot_with_item(&mut self, lot: &RoastedLot, json: &str) -> StoreResult<()> {
        self.insert_roasted_lot(lot)?;
        self.written.forget_roasted(lot.id);
        (self.data.listing.items).insert((LotKind::Roasted, lot.id), json.to_owned());
        Ok(())
    }

    fn insert_blended_lot_with_item(&mut self, lot: &BlendedLot, json: &str) -> StoreResult<()> {
        self.insert_blended_lot(lot)?;
        self.written.forget_blended(lot.id);
        (self.data.listing.items).insert((LotKind::Blended, lot.id), json.to_owned());
        Ok(())
    }

    fn put_listing_items(&mut self, kind: LotKind, items: &[RenderedItem]) -> StoreResult<()> {
        let known = self.lot_ids(kind);
        for item in items {
            if known.contains(&item.id) {
                (self.data.listing.items).insert((kind, item.id), item.json.clone());
            }
        }
        Ok(())
    }

    fn lots_to_render(
        &mut self,
        kind: LotKind,
        all: bool,
        after: Option<Uuid>,
        limit: usize,
    ) -> StoreResult<Vec<Uuid>> {
        let mut ids: Vec<Uuid> = (self.lot_ids(kind).into_iter())
            .filter(|id| after.is_none_or(|a| *id > a))
            .filter(|id| all || !self.data.listing.items.contains_key(&(kind, *id)))
            .collect();
        ids.sort_unstable();
        ids.truncate(limit);
        Ok(ids)
    }

    fn stored_listing_items(
        &mut self,
        kind: LotKind,
        ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Option<String>)>> {
        Ok((self.lot_ids(kind).into_iter())
            .filter(|id| ids.contains(id))
            .map(|id| (id, self.data.listing.items.get(&(kind, id)).cloned()))
            .collect())
    }
}
