//! The listing read model: every lot keeps the exact JSON of its item in the lot listings
//! (`listGreenLots`, `listRoastedLots`, `getRoastedLotsByIds`, `listBlendedLots`), so a page is
//! read as stored bytes joined into the answer: no row decoding into domain values, no
//! serialising per row.
//!
//! A store clears a lot's item whenever it writes the lot and remembers the lot
//! ([`ListingRepo::take_written_lots`]); the use cases' unit of work then renders the items of
//! those lots with a [`ListingRender`] (the same code that answers the lot after a write) and
//! stores them in the same transaction ([`ListingRepo::put_listing_items`]). A store never
//! renders anything itself. An item that is missing is answered from the domain instead.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::{JoinedPage, PageRequest};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use uuid::Uuid;

use crate::error::StoreError;
use crate::lock::ForUpdate;
use crate::repo::StoreResult;
use crate::view::{BlendedLotView, GreenLotView, RoastedLotView};

/// Renders a lot's listing item: the JSON its listings answer for it.
pub trait ListingRender: Send + Sync + 'static {
    /// Changes whenever an item's shape changes; items stored under another version are
    /// rendered again when the service starts.
    fn version(&self) -> u32;
    fn green_lot(&self, view: &GreenLotView) -> Result<String, StoreError>;
    fn roasted_lot(&self, view: &RoastedLotView) -> Result<String, StoreError>;
    fn blended_lot(&self, view: &BlendedLotView) -> Result<String, StoreError>;
}

/// The lots a unit of work wrote, each in the state it was last written in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenLots {
    pub green: Vec<GreenLot>,
    pub roasted: Vec<RoastedLot>,
    pub blended: Vec<BlendedLot>,
}

impl WrittenLots {
    pub fn is_empty(&self) -> bool {
        self.green.is_empty() && self.roasted.is_empty() && self.blended.is_empty()
    }

    /// Notes a written green lot, replacing an earlier state of the same lot.
    pub fn green(&mut self, lot: &GreenLot) {
        keep_latest(&mut self.green, lot, |l| l.id);
    }

    /// Forgets a written green lot: its item was stored with it.
    pub fn forget_green(&mut self, id: Uuid) {
        self.green.retain(|l| l.id != id);
    }

    pub fn roasted(&mut self, lot: &RoastedLot) {
        keep_latest(&mut self.roasted, lot, |l| l.id);
    }

    /// Forgets a written roasted lot: its item was stored with it.
    pub fn forget_roasted(&mut self, id: Uuid) {
        self.roasted.retain(|l| l.id != id);
    }

    pub fn blended(&mut self, lot: &BlendedLot) {
        keep_latest(&mut self.blended, lot, |l| l.id);
    }

    /// Forgets a written blended lot: its item was stored with it.
    pub fn forget_blended(&mut self, id: Uuid) {
        self.blended.retain(|l| l.id != id);
    }
}

fn keep_latest<T: Clone>(lots: &mut Vec<T>, lot: &T, id: impl Fn(&T) -> Uuid) {
    match lots.iter_mut().find(|l| id(l) == id(lot)) {
        Some(kept) => *kept = lot.clone(),
        None => lots.push(lot.clone()),
    }
}

/// The rendered item of one lot, to be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedItem {
    pub id: Uuid,
    pub json: String,
}

/// The stored items. Each page read is one statement, run by `Store::read_statement`. `None`
/// means "not all kept" (an item of the page not rendered yet): the caller then answers from
/// the domain. A keyset page is read as up to `limit + 1` rows joined into a [`JoinedPage`] as
/// they arrive, with no value per row kept.
pub trait ListingRepo {
    /// Newest registration first, modified at or after `modified_from`.
    fn green_lot_items(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>>;
    /// Newest roast first, roasted at or after `from`.
    fn roasted_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>>;
    /// The page `page` (a by-ids one) of the stored lots among `ids`, in the asked order, ids of
    /// no lot left out: [`JoinedPage::found`] filled as the rows are read.
    fn roasted_lot_items_by_ids(
        &mut self,
        ids: &[Uuid],
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>>;
    /// Newest blend first, blended at or after `from`.
    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>>;

    /// The lots written (and their items cleared) since the last call in this unit of work.
    fn take_written_lots(&mut self) -> WrittenLots;
    /// Writes a green lot as [`GreenLotRepo::update_green_lot`] does, with `json`, its item
    /// rendered from that state: one statement where the store can (a lot written with its item
    /// cleared and then its item is two row versions), and the lot is no longer among the
    /// written lots whose items are still to be stored.
    ///
    /// [`GreenLotRepo::update_green_lot`]: crate::repo::GreenLotRepo::update_green_lot
    fn update_green_lot_with_item(
        &mut self,
        lot: &ForUpdate<GreenLot>,
        json: &str,
    ) -> StoreResult<()>;
    /// Inserts a new green lot as [`GreenLotRepo::insert_green_lot`] does, with `json`, its item
    /// rendered from that state: one statement and one row version (a lot inserted with its item
    /// missing has it stored by an update, which leaves a dead row version behind on
    /// PostgreSQL), and the lot is not among the written lots whose items are still to be stored.
    ///
    /// [`GreenLotRepo::insert_green_lot`]: crate::repo::GreenLotRepo::insert_green_lot
    fn insert_green_lot_with_item(&mut self, lot: &GreenLot, json: &str) -> StoreResult<()>;
    /// Inserts a new roasted lot as [`RoastRepo::insert_roasted_lot`] does, with `json`, its
    /// item, as [`Self::insert_green_lot_with_item`] inserts a green lot.
    ///
    /// [`RoastRepo::insert_roasted_lot`]: crate::repo::RoastRepo::insert_roasted_lot
    fn insert_roasted_lot_with_item(&mut self, lot: &RoastedLot, json: &str) -> StoreResult<()>;
    /// Inserts a new blended lot as [`BlendRepo::insert_blended_lot`] does, with `json`, its
    /// item, as [`Self::insert_green_lot_with_item`] inserts a green lot.
    ///
    /// [`BlendRepo::insert_blended_lot`]: crate::repo::BlendRepo::insert_blended_lot
    fn insert_blended_lot_with_item(&mut self, lot: &BlendedLot, json: &str) -> StoreResult<()>;
    /// Stores the items of lots of `kind`, all in one statement where the database is a round
    /// trip away. An item of no stored lot is not kept; of two items of one lot, the last.
    fn put_listing_items(&mut self, kind: LotKind, items: &[RenderedItem]) -> StoreResult<()>;
    /// Up to `limit` ids of lots of `kind` after `after` in id order whose item is missing (or
    /// every lot, when `all`).
    fn lots_to_render(
        &mut self,
        kind: LotKind,
        all: bool,
        after: Option<Uuid>,
        limit: usize,
    ) -> StoreResult<Vec<Uuid>>;
    /// The stored item of each of these lots of `kind` (`None`: missing), in any order.
    fn stored_listing_items(
        &mut self,
        kind: LotKind,
        ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Option<String>)>>;
}
