//! The listing read model: every lot keeps the exact JSON of its item in the lot listings
//! (`listGreenLots`, `listRoastedLots`, `getRoastedLotsByIds`, `listBlendedLots`), written by the
//! store in the transaction of each write to the lot, so a page is read as stored bytes joined
//! into the answer: no row decoding into domain values, no serialising per row.
//!
//! The bytes come from a [`ListingRender`] the answering adapter provides (the same code that
//! answers the lot after a write), so a stored item is exactly what the domain path would answer.
//! A store that keeps no items (or has one not rendered yet) says so, and the use cases' domain
//! path answers instead.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::{self, Page, PageRequest};
use roastery_domain::roasted_lot::RoastedLot;
use uuid::Uuid;

use crate::blend::BlendedLotView;
use crate::error::{AppError, StoreError};
use crate::green_lot::GreenLotView;
use crate::reference::{found_in_asked_order, location_ref};
use crate::repo::*;
use crate::roast::RoastedLotView;
use crate::{Repos, Roastery, Store};

/// Renders a lot's listing item: the JSON its listings answer for it.
pub trait ListingRender: Send + Sync + 'static {
    /// Changes whenever an item's shape changes; items stored under another version are
    /// rendered again when the store opens.
    fn version(&self) -> u32;
    fn green_lot(&self, view: &GreenLotView) -> Result<String, StoreError>;
    fn roasted_lot(&self, view: &RoastedLotView) -> Result<String, StoreError>;
    fn blended_lot(&self, view: &BlendedLotView) -> Result<String, StoreError>;
}

/// A lot and the stored item of its listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingItem {
    pub id: Uuid,
    /// The lot's sort instant in its listing (registration, roast or blend date).
    pub at: DateTime<Utc>,
    /// The item's JSON, as stored.
    pub json: String,
}

/// The stored items. Each read is one statement, run by [`Store::read_statement`]. `None`
/// means "not kept here" (a store without the read model, or an item not rendered yet): the
/// caller then answers from the domain.
pub trait ListingRepo {
    /// Newest registration first, modified at or after `modified_from`; up to `limit + 1`.
    fn green_lot_items(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>>;
    /// Newest roast first, roasted at or after `from`; up to `limit + 1`.
    fn roasted_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>>;
    /// The stored lots among `ids`, in any order.
    fn roasted_lot_items_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Option<Vec<ListingItem>>>;
    /// Newest blend first, blended at or after `from`; up to `limit + 1`.
    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>>;
}

/// The item of a green lot as it is now, rendered from the domain.
pub fn green_lot_item(
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
pub fn roasted_lot_item(
    tx: &mut impl Repos,
    render: &dyn ListingRender,
    lot: &RoastedLot,
) -> Result<String, AppError> {
    let view = crate::roast::roasted_views(tx, vec![lot.clone()])?
        .pop()
        .ok_or_else(|| StoreError::Internal("a roasted lot without its view".into()))?;
    Ok(render.roasted_lot(&view)?)
}

/// The item of a blended lot as it is now, rendered from the domain.
pub fn blended_lot_item(
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

/// The items' JSON, the page's position kept.
fn json_page(page: Page<ListingItem>) -> Page<String> {
    Page {
        items: page.items.into_iter().map(|i| i.json).collect(),
        next: page.next,
    }
}

/// A keyset page of stored items from up to `limit + 1` rows.
fn keyset_page(rows: Vec<ListingItem>, page: &PageRequest) -> Page<String> {
    json_page(Page::from_overfetch(rows, page.limit, |i| (i.at, i.id)))
}

impl<S: Store> Roastery<S> {
    /// A keyset page of stored items read by `read`, or `None` when the store does not have
    /// them all.
    fn stored_keyset_page(
        &self,
        page: PageRequest,
        read: impl FnOnce(&mut S::Tx, &PageRequest) -> StoreResult<Option<Vec<ListingItem>>>,
    ) -> Result<Option<Page<String>>, AppError> {
        page.keyset()?;
        let rows = self.store.read_statement(|tx| Ok(read(tx, &page)?))?;
        Ok(rows.map(|rows| keyset_page(rows, &page)))
    }

    /// The stored items of [`Roastery::list_green_lots`]'s page, or `None` when the store does
    /// not have them all.
    pub fn green_lot_listing(
        &self,
        modified_from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<Page<String>>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.green_lot_items(modified_from, page))
    }

    /// The stored items of [`Roastery::list_roasted_lots`]'s page, or `None`.
    pub fn roasted_lot_listing(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<Page<String>>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.roasted_lot_items(from, page))
    }

    /// The stored items of [`Roastery::list_blended_lots`]'s page, or `None`.
    pub fn blended_lot_listing(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Option<Page<String>>, AppError> {
        self.stored_keyset_page(page, |tx, page| tx.blended_lot_items(from, page))
    }

    /// The stored items of [`Roastery::roasted_lots_by_ids`]'s page, or `None`.
    pub fn roasted_lot_listing_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Option<Page<String>>, AppError> {
        page::check_by_ids("params.filter.roastedLotIds", &ids, &page)?;
        let Some(found) = self
            .store
            .read_statement(|tx| Ok(tx.roasted_lot_items_by_ids(&ids)?))?
        else {
            return Ok(None);
        };
        let page = found_in_asked_order(&ids, found, |i| i.id, &page)?;
        Ok(Some(json_page(page)))
    }
}
