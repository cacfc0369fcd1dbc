//! The listing read model's use cases: pages read as stored items, and the items themselves,
//! rendered by [`Roastery::write`] for every lot a unit of work wrote
//! (`roastery_ports::listing`), again when the item version changes, and compared with the
//! domain by `roastery verify`.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::operation::Task;
use roastery_domain::page::{self, JoinedPage, PageRequest};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use roastery_ports::listing::{ListingRender, ListingRepo, RenderedItem, WrittenLots};
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::*;
use roastery_ports::view::{BlendedLotView, GreenLotView, RoastedLotView};
use uuid::Uuid;

use crate::reference::location_ref;
use crate::{AppError, Repos, Roastery, Store};

/// The settings row naming the item version stored items were rendered with.
const VERSION_SETTING: &str = "listing_item_version";
/// Lots rendered per transaction when items are rendered again.
const RENDER_BATCH: usize = 500;

/// The item of a green lot as it is now, rendered from the domain.
fn green_lot_item(
    tx: &mut impl Repos,
    render: &dyn ListingRender,
    lot: &GreenLot,
) -> Result<String, AppError> {
    let location = match lot.location_id {
        Some(id) => tx.location(id)?,
        None => None,
    };
    Ok(render.green_lot(&GreenLotView {
        lot: lot.clone(),
        location,
    })?)
}

/// The item of a roasted lot as it is now, rendered from the domain.
fn roasted_lot_items(
    tx: &mut impl Repos,
    render: &dyn ListingRender,
    lots: Vec<RoastedLot>,
) -> Result<Vec<RenderedItem>, AppError> {
    let views = crate::roast::roasted_views(tx, lots)?;
    let mut items = Vec::with_capacity(views.len());
    for view in views {
        items.push(RenderedItem {
            id: view.lot.id,
            json: render.roasted_lot(&view)?,
        });
    }
    Ok(items)
}

/// The item of a blended lot as it is now, rendered from the domain.
fn blended_lot_item(
    tx: &mut impl Repos,
    render: &dyn ListingRender,
    lot: &BlendedLot,
) -> Result<String, AppError> {
    let location = location_ref(tx, lot.location_id)?;
    Ok(render.blended_lot(&BlendedLotView {
        lot: lot.clone(),
        location,
    })?)
}

/// The items of `written`, by kind.
fn render_items(
    tx: &mut impl Repos,
    render: &dyn ListingRender,
    written: WrittenLots,
) -> Result<[(LotKind, Vec<RenderedItem>); 3], AppError> {
    let mut green = Vec::with_capacity(written.green.len());
    for lot in &written.green {
        green.push(RenderedItem {
            id: lot.id,
            json: green_lot_item(tx, render, lot)?,
        });
    }
    let roasted = roasted_lot_items(tx, render, written.roasted)?;
    let mut blended = Vec::with_capacity(written.blended.len());
    for lot in &written.blended {
        blended.push(RenderedItem {
            id: lot.id,
            json: blended_lot_item(tx, render, lot)?,
        });
    }
    Ok([
        (LotKind::Green, green),
        (LotKind::Roasted, roasted),
        (LotKind::Blended, blended),
    ])
}

/// The current state of these lots of `kind`, as written lots.
fn load_lots(tx: &mut impl Repos, kind: LotKind, ids: &[Uuid]) -> Result<WrittenLots, AppError> {
    let mut lots = WrittenLots::default();
    match kind {
        LotKind::Green => lots.green = tx.green_lots_by_ids(ids)?,
        LotKind::Roasted => lots.roasted = tx.roasted_lots_by_ids(ids)?,
        LotKind::Blended => {
            for id in ids {
                if let Some(lot) = tx.blended_lot(*id)? {
                    lots.blended.push(lot);
                }
            }
        }
    }
    Ok(lots)
}

/// One lot whose stored item differs from the one rendered from the domain now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleItem {
    pub kind: LotKind,
    pub id: Uuid,
    pub stored: Option<String>,
    pub rendered: String,
}

impl<S: Store> Roastery<S> {
    /// Writes a green lot together with its listing item rendered now: one row version and one
    /// statement, where a lot written with its item cleared has its item stored by a second
    /// statement at the end of the unit of work. For the writes of the hot paths (a weight, a
    /// transfer), whose lot is not written again in the same unit of work; a later write of the
    /// same lot clears the item again and it is stored at the end as usual.
    pub(crate) fn update_green_lot_listed(
        &self,
        tx: &mut S::Tx,
        lot: &ForUpdate<GreenLot>,
    ) -> Result<(), AppError> {
        match &self.listing {
            Some(render) => {
                let json = green_lot_item(tx, &**render, lot)?;
                tx.update_green_lot_with_item(lot, &json)?;
            }
            None => tx.update_green_lot(lot)?,
        }
        Ok(())
    }

    /// Inserts a new green lot together with its listing item rendered now: one statement and
    /// one row version, where a lot inserted without its item has it stored by an update at the
    /// end of the unit of work. For lots not written again in the same unit of work (a later
    /// write clears the item, and it is stored at the end as usual).
    pub(crate) fn insert_green_lot_listed(
        &self,
        tx: &mut S::Tx,
        lot: &GreenLot,
    ) -> Result<(), AppError> {
        match &self.listing {
            Some(render) => {
                let json = green_lot_item(tx, &**render, lot)?;
                tx.insert_green_lot_with_item(lot, &json)?;
            }
            None => tx.insert_green_lot(lot)?,
        }
        Ok(())
    }

    /// Inserts a new roasted lot together with its listing item, rendered from `view` (the lot
    /// as the unit of work answers it), as [`Self::insert_green_lot_listed`] inserts a green lot.
    pub(crate) fn insert_roasted_lot_listed(
        &self,
        tx: &mut S::Tx,
        view: &RoastedLotView,
    ) -> Result<(), AppError> {
        match &self.listing {
            Some(render) => {
                let json = render.roasted_lot(view)?;
                tx.insert_roasted_lot_with_item(&view.lot, &json)?;
            }
            None => tx.insert_roasted_lot(&view.lot)?,
        }
        Ok(())
    }

    /// Inserts a new blended lot together with its listing item, rendered from `view`, as
    /// [`Self::insert_green_lot_listed`] inserts a green lot.
    pub(crate) fn insert_blended_lot_listed(
        &self,
        tx: &mut S::Tx,
        view: &BlendedLotView,
    ) -> Result<(), AppError> {
        match &self.listing {
            Some(render) => {
                let json = render.blended_lot(view)?;
                tx.insert_blended_lot_with_item(&view.lot, &json)?;
            }
            None => tx.insert_blended_lot(&view.lot)?,
        }
        Ok(())
    }

    /// Stores the items of the lots this unit of work wrote (their items were cleared when they
    /// were written), one statement per kind.
    pub(crate) fn store_listing_items(&self, tx: &mut S::Tx) -> Result<(), AppError> {
        let written = tx.take_written_lots();
        let Some(render) = &self.listing else {
            return Ok(());
        };
        if written.is_empty() {
            return Ok(());
        }
        for (kind, items) in render_items(tx, &**render, written)? {
            if !items.is_empty() {
                tx.put_listing_items(kind, &items)?;
            }
        }
        Ok(())
    }

    /// Renders the items that are missing, or every item when the stored items were rendered
    /// by another item version; returns how many lots were rendered. Run at start-up:
    /// instances starting at once each render, and the last write of an item wins, with the
    /// same bytes.
    pub fn render_listing_items(&self) -> Result<usize, AppError> {
        let Some(render) = self.listing.clone() else {
            return Ok(0);
        };
        let version = render.version().to_string();
        let stored = self
            .store
            .write(|tx| Ok(tx.setting_or_insert(VERSION_SETTING, &version)?))?;
        let all = stored != version;
        let mut count = 0usize;
        for kind in [LotKind::Green, LotKind::Roasted, LotKind::Blended] {
            let mut after = None;
            loop {
                let ids = self
                    .store
                    .read(|tx| Ok(tx.lots_to_render(kind, all, after, RENDER_BATCH)?))?;
                let Some(last) = ids.last() else { break };
                after = Some(*last);
                // Written through `write`: the lots are loaded for update, so a concurrent write
                // to one of them is not overwritten by an item of its older state.
                self.write_task(Task::RenderListing, |tx| {
                    let lots = lock_lots(tx, kind, &ids)?;
                    for (kind, items) in render_items(tx, &*render, lots)? {
                        if !items.is_empty() {
                            tx.put_listing_items(kind, &items)?;
                        }
                    }
                    Ok(())
                })?;
                count = count.saturating_add(ids.len());
            }
        }
        if all {
            self.store
                .write(|tx| Ok(tx.put_setting(VERSION_SETTING, &version)?))?;
        }
        if count > 0 {
            tracing::info!(lots = count, "listing items rendered");
        }
        Ok(count)
    }

    /// Compares every stored item with one rendered from the domain now (`roastery verify`);
    /// returns how many lots were checked and those that differ. Without a renderer nothing is
    /// checked.
    pub fn check_listing_items(&self) -> Result<(usize, Vec<StaleItem>), AppError> {
        let Some(render) = self.listing.clone() else {
            return Ok((0, Vec::new()));
        };
        let mut checked = 0usize;
        let mut stale = Vec::new();
        for kind in [LotKind::Green, LotKind::Roasted, LotKind::Blended] {
            let mut after = None;
            loop {
                let ids = self
                    .store
                    .read(|tx| Ok(tx.lots_to_render(kind, true, after, RENDER_BATCH)?))?;
                let Some(last) = ids.last() else { break };
                after = Some(*last);
                checked = checked.saturating_add(ids.len());
                self.store.read(|tx| {
                    let stored: std::collections::HashMap<Uuid, Option<String>> =
                        tx.stored_listing_items(kind, &ids)?.into_iter().collect();
                    let lots = load_lots(tx, kind, &ids)?;
                    for (kind, items) in render_items(tx, &*render, lots)? {
                        for item in items {
                            let kept = stored.get(&item.id).cloned().flatten();
                            if kept.as_deref() != Some(item.json.as_str()) {
                                stale.push(StaleItem {
                                    kind,
                                    id: item.id,
                                    stored: kept,
                                    rendered: item.json,
                                });
                            }
                        }
                    }
                    Ok(())
                })?;
            }
        }
        Ok((checked, stale))
    }
}

/// These lots of `kind`, loaded for update.
fn lock_lots(tx: &mut impl Repos, kind: LotKind, ids: &[Uuid]) -> Result<WrittenLots, AppError> {
    let mut lots = WrittenLots::default();
    match kind {
        LotKind::Green => {
            lots.green = (tx.green_lots_for_update(ids)?.into_iter())
                .map(ForUpdate::into_inner)
                .collect()
        }
        LotKind::Roasted => {
            lots.roasted = (tx.roasted_lots_for_update(ids)?.into_iter())
                .map(ForUpdate::into_inner)
                .collect()
        }
        LotKind::Blended => {
            for id in ids {
                if let Some(lot) = tx.blended_lot_for_update(*id)? {
                    lots.blended.push(lot.into_inner());
                }
            }
        }
    }
    Ok(lots)
}

/// The items' JSON, the page's position kept.
impl<S: Store> Roastery<S> {
    /// A keyset page of stored items read by `read`, or `None` when the store does not have
    /// them all.
    fn stored_keyset_page(
        &self,
        page: PageRequest,
        read: impl FnOnce(&mut S::Tx, &PageRequest) -> StoreResult<Option<JoinedPage>>,
    ) -> Result<Option<JoinedPage>, AppError> {
        page.keyset()?;
        self.store.read_statement(|tx| Ok(read(tx, &page)?))
    }

    /// The stored items of [`Roastery::list_green_lots`]'s page, or `None` when the store does
    /// not have them all.
    pub fn green_lot_listing(
        &self,
        modified_from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<JoinedPage>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.green_lot_items(modified_from, page))
    }

    /// The stored items of [`Roastery::list_roasted_lots`]'s page, or `None`.
    pub fn roasted_lot_listing(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<JoinedPage>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.roasted_lot_items(from, page))
    }

    /// The stored items of [`Roastery::list_blended_lots`]'s page, or `None`.
    pub fn blended_lot_listing(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<JoinedPage>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.blended_lot_items(from, page))
    }

    /// The stored items of [`Roastery::roasted_lots_by_ids`]'s page, or `None`.
    pub fn roasted_lot_listing_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Option<JoinedPage>, AppError> {
        page::check_by_ids("filter.roastedLotIds", &ids, &page)?;
        self.store
            .read_statement(|tx| Ok(tx.roasted_lot_items_by_ids(&ids, &page)?))
    }
}
