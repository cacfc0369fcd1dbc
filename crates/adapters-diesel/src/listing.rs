//! The listing read model (`roastery_ports::listing`): the stored item of each lot, its pages
//! read as one statement, SQLite pages read on a connection of the calling thread, and the
//! rendering of items that are missing or of another version when the store opens.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use roastery_domain::location::Location;
use roastery_domain::page::PageRequest;
use roastery_domain::profile::Profile;
use roastery_ports::listing::{self, ListingItem, ListingRepo};
use roastery_ports::repo::{BlendRepo, GreenLotRepo, RoastRepo, StoreResult, SystemRepo};
use roastery_ports::{AppError, Store, StoreError};
use uuid::Uuid;

use crate::connection::{AnyConnection, Manager};
use crate::error::OrStoreError;
use crate::row::uuid;
use crate::schema::{blended_lots, green_lots, roasted_lots};
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

/// The settings row naming the item version stored items were rendered with.
const VERSION_SETTING: &str = "listing_item_version";
/// Lots rendered per transaction when items are rendered at open.
const RENDER_BATCH: usize = 500;

/// One stored item with its sort key; `item` is NULL until rendered.
#[derive(Queryable)]
struct ItemRow {
    #[diesel(deserialize_as = StoredInstant)]
    at: NaiveDateTime,
    id: String,
    item: Option<String>,
}

/// Every row's item, or `None` when one is missing.
fn items(rows: Vec<ItemRow>) -> StoreResult<Option<Vec<ListingItem>>> {
    let mut items = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(json) = row.item else {
            return Ok(None);
        };
        items.push(ListingItem {
            id: uuid("listing item", &row.id)?,
            at: from_db(row.at),
            json,
        });
    }
    Ok(Some(items))
}

/// A newest-first page of `(sort instant, id, item)` rows of a lot table, filtered on
/// `$from_column >= from`.
macro_rules! item_page {
    ($tx:expr, $table:ident, $at:ident, $from_column:ident, $from:expr, $page:expr) => {{
        let mut query = $table::table
            .select(($table::$at, $table::id, $table::listing_item))
            .into_boxed();
        if let Some(from) = $from {
            query = query.filter($table::$from_column.ge(to_db(from)));
        }
        let rows: Vec<ItemRow> = newest_first!(query, $page, $table::$at, $table::id)
            .load($tx.conn())
            .store()?;
        items(rows)
    }};
}

impl ListingRepo for DieselTx {
    fn green_lot_items(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        item_page!(
            self,
            green_lots,
            registration_date,
            last_modified_date,
            modified_from,
            page
        )
    }

    fn roasted_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        item_page!(self, roasted_lots, roasted_date, roasted_date, from, page)
    }

    fn roasted_lot_items_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Option<Vec<ListingItem>>> {
        let keys: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let rows: Vec<ItemRow> = roasted_lots::table
            .select((
                roasted_lots::roasted_date,
                roasted_lots::id,
                roasted_lots::listing_item,
            ))
            .filter(roasted_lots::id.eq_any(keys))
            .load(self.conn())
            .store()?;
        items(rows)
    }

    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        item_page!(self, blended_lots, blended_date, blended_date, from, page)
    }
}

fn store_error(error: AppError) -> StoreError {
    match error {
        AppError::Store(e) => e,
        other => StoreError::Internal(format!("rendering a listing item: {other}")),
    }
}

/// The item a write stores with a lot: rendered when the store has a renderer, NULL (answered
/// from the domain) when it has none, so a write never leaves an item behind that is stale.
impl DieselTx {
    pub(crate) fn green_lot_item(
        &mut self,
        lot: &roastery_domain::green_lot::GreenLot,
    ) -> StoreResult<Option<String>> {
        let Some(render) = self.listing.clone() else {
            return Ok(None);
        };
        listing::green_lot_item(self, &*render, lot)
            .map(Some)
            .map_err(store_error)
    }

    pub(crate) fn roasted_lot_item(
        &mut self,
        lot: &roastery_domain::roasted_lot::RoastedLot,
    ) -> StoreResult<Option<String>> {
        let Some(render) = self.listing.clone() else {
            return Ok(None);
        };
        listing::roasted_lot_item(self, &*render, lot)
            .map(Some)
            .map_err(store_error)
    }

    pub(crate) fn blended_lot_item(
        &mut self,
        lot: &roastery_domain::blended_lot::BlendedLot,
    ) -> StoreResult<Option<String>> {
        let Some(render) = self.listing.clone() else {
            return Ok(None);
        };
        listing::blended_lot_item(self, &*render, lot)
            .map(Some)
            .map_err(store_error)
    }
}

/// Locations and profiles never change once stored and are never deleted, so the rendering of
/// items (and every read of one by id) may keep them. A record created by a unit of work that
/// may still roll back is not kept.
#[derive(Default)]
pub(crate) struct References {
    locations: Mutex<HashMap<Uuid, Location>>,
    profiles: Mutex<HashMap<Uuid, Profile>>,
}

/// More distinct records than this and the cache starts again empty.
const REFERENCES_KEPT: usize = 10_000;

fn keep<T: Clone>(map: &Mutex<HashMap<Uuid, T>>, id: Uuid, value: &T) {
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    if map.len() >= REFERENCES_KEPT {
        map.clear();
    }
    map.insert(id, value.clone());
}

impl References {
    pub(crate) fn location(&self, id: Uuid) -> Option<Location> {
        let map = self
            .locations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        map.get(&id).cloned()
    }

    pub(crate) fn keep_location(&self, location: &Location) {
        keep(&self.locations, location.id, location);
    }

    pub(crate) fn profile(&self, id: Uuid) -> Option<Profile> {
        let map = self.profiles.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(&id).cloned()
    }

    pub(crate) fn keep_profile(&self, profile: &Profile) {
        keep(&self.profiles, profile.id, profile);
    }
}

thread_local! {
    /// SQLite read connections of this thread, one per open store (its identity held weakly,
    /// so the connection of a store that is gone is closed at the next read).
    static SQLITE_READERS: RefCell<Vec<(Weak<()>, AnyConnection)>> = const { RefCell::new(Vec::new()) };
}

/// This thread's read connection to the store `identity` names: taken out while in use (a read
/// run inside another gets its own), given back by [`give_back_sqlite_reader`].
pub(crate) fn take_sqlite_reader(
    identity: &Arc<()>,
    manager: &Manager,
) -> Result<AnyConnection, StoreError> {
    let found = SQLITE_READERS.with(|readers| {
        let mut readers = readers.borrow_mut();
        readers.retain(|(store, _)| store.strong_count() > 0);
        readers
            .iter()
            .position(|(store, _)| std::ptr::eq(store.as_ptr(), Arc::as_ptr(identity)))
            .map(|at| readers.swap_remove(at).1)
    });
    if let Some(conn) = found {
        return Ok(conn);
    }
    use diesel::r2d2::ManageConnection;
    let mut conn = manager
        .connect()
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let AnyConnection::Sqlite(c) = &mut conn else {
        return Err(StoreError::Internal(
            "a SQLite reader asked of another database".into(),
        ));
    };
    // This connection only reads: a read that tried to write would be refused.
    for pragma in crate::connection::SQLITE_PRAGMAS
        .iter()
        .chain(&["PRAGMA query_only = ON;"])
    {
        diesel::connection::SimpleConnection::batch_execute(c, pragma).store()?;
    }
    Ok(conn)
}

pub(crate) fn give_back_sqlite_reader(identity: &Arc<()>, mut conn: AnyConnection) {
    use diesel::r2d2::R2D2Connection;
    if conn.is_broken() {
        return;
    }
    SQLITE_READERS.with(|readers| {
        readers.borrow_mut().push((Arc::downgrade(identity), conn));
    });
}

/// How many lots of each kind [`crate::DieselStore::render_listing_items`] rendered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rendered {
    pub green: usize,
    pub roasted: usize,
    pub blended: usize,
}

impl crate::DieselStore {
    /// Renders every item that is missing, or every item when the stored ones were rendered by
    /// another version of the renderer. Each batch locks its lots, so a concurrent write to one
    /// of them (another instance starting or serving) waits or is waited for, and the item kept
    /// is the one of the lot's last state. Several instances starting at once may all render;
    /// each item they write is right.
    pub fn render_listing_items(&self) -> Result<Rendered, AppError> {
        let Some(render) = self.listing.clone() else {
            return Ok(Rendered::default());
        };
        let version = render.version().to_string();
        let stored = self.read(|tx| {
            Ok(crate::schema::settings::table
                .find(VERSION_SETTING)
                .select(crate::schema::settings::value)
                .first::<String>(tx.conn())
                .optional()
                .store()?)
        })?;
        let all = stored.as_deref() != Some(version.as_str());
        let rendered = Rendered {
            green: self.render_kind(Kind::Green, all)?,
            roasted: self.render_kind(Kind::Roasted, all)?,
            blended: self.render_kind(Kind::Blended, all)?,
        };
        if all {
            self.write(|tx| {
                use crate::schema::settings;
                tx.setting_or_insert(VERSION_SETTING, &version)?;
                diesel::update(settings::table.find(VERSION_SETTING))
                    .set(settings::value.eq(&version))
                    .execute(tx.conn())
                    .store()?;
                Ok(())
            })?;
        }
        if rendered != Rendered::default() {
            tracing::info!(
                green = rendered.green,
                roasted = rendered.roasted,
                blended = rendered.blended,
                "listing items rendered"
            );
        }
        Ok(rendered)
    }

    /// Renders the items of one kind of lot, a batch per transaction, walking ids in order.
    fn render_kind(&self, kind: Kind, all: bool) -> Result<usize, AppError> {
        let mut after = String::new();
        let mut count = 0usize;
        loop {
            let ids = self.read(|tx| Ok(kind.ids_to_render(tx, all, &after)?))?;
            let Some(last) = ids.last() else {
                return Ok(count);
            };
            after = last.to_string();
            self.write(|tx| {
                // Stored items are written by these renders, not by a change of the lots:
                // nothing is noted, so no event is emitted.
                kind.render(tx, &ids)?;
                Ok(())
            })?;
            count = count.saturating_add(ids.len());
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Green,
    Roasted,
    Blended,
}

impl Kind {
    /// The next batch of ids after `after` whose item is missing (or any, when `all`).
    fn ids_to_render(self, tx: &mut DieselTx, all: bool, after: &str) -> StoreResult<Vec<Uuid>> {
        let limit = i64::try_from(RENDER_BATCH).unwrap_or(i64::MAX);
        let keys: Vec<String> = match self {
            Kind::Green => {
                let mut q = green_lots::table
                    .select(green_lots::id)
                    .filter(green_lots::id.gt(after))
                    .into_boxed();
                if !all {
                    q = q.filter(green_lots::listing_item.is_null());
                }
                q.order(green_lots::id)
                    .limit(limit)
                    .load(tx.conn())
                    .store()?
            }
            Kind::Roasted => {
                let mut q = roasted_lots::table
                    .select(roasted_lots::id)
                    .filter(roasted_lots::id.gt(after))
                    .into_boxed();
                if !all {
                    q = q.filter(roasted_lots::listing_item.is_null());
                }
                q.order(roasted_lots::id)
                    .limit(limit)
                    .load(tx.conn())
                    .store()?
            }
            Kind::Blended => {
                let mut q = blended_lots::table
                    .select(blended_lots::id)
                    .filter(blended_lots::id.gt(after))
                    .into_boxed();
                if !all {
                    q = q.filter(blended_lots::listing_item.is_null());
                }
                q.order(blended_lots::id)
                    .limit(limit)
                    .load(tx.conn())
                    .store()?
            }
        };
        keys.iter().map(|k| uuid("lot", k)).collect()
    }

    /// Locks these lots, renders their items from their current state and stores them.
    fn render(self, tx: &mut DieselTx, ids: &[Uuid]) -> StoreResult<()> {
        match self {
            Kind::Green => {
                for lot in tx.green_lots_for_update(ids)? {
                    let item = tx.green_lot_item(&lot)?;
                    diesel::update(green_lots::table.find(lot.id.to_string()))
                        .set(green_lots::listing_item.eq(item))
                        .execute(tx.conn())
                        .store()?;
                }
            }
            Kind::Roasted => {
                for lot in tx.roasted_lots_for_update(ids)? {
                    let item = tx.roasted_lot_item(&lot)?;
                    diesel::update(roasted_lots::table.find(lot.id.to_string()))
                        .set(roasted_lots::listing_item.eq(item))
                        .execute(tx.conn())
                        .store()?;
                }
            }
            Kind::Blended => {
                for id in ids {
                    let Some(lot) = tx.blended_lot_for_update(*id)? else {
                        continue;
                    };
                    let item = tx.blended_lot_item(&lot)?;
                    diesel::update(blended_lots::table.find(lot.id.to_string()))
                        .set(blended_lots::listing_item.eq(item))
                        .execute(tx.conn())
                        .store()?;
                }
            }
        }
        Ok(())
    }
}

/// One lot whose stored item differs from the one rendered from the domain now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleItem {
    pub kind: &'static str,
    pub id: Uuid,
    pub stored: Option<String>,
    pub rendered: String,
}

impl crate::DieselStore {
    /// Compares every stored item with one rendered from the domain now (`roastery verify`);
    /// returns how many lots were checked and those that differ. Without a renderer nothing is
    /// checked.
    pub fn check_listing_items(&self) -> Result<(usize, Vec<StaleItem>), AppError> {
        let Some(_) = self.listing.clone() else {
            return Ok((0, Vec::new()));
        };
        let mut checked = 0usize;
        let mut stale = Vec::new();
        for kind in [Kind::Green, Kind::Roasted, Kind::Blended] {
            let mut after = String::new();
            loop {
                let ids = self.read(|tx| Ok(kind.ids_to_render(tx, true, &after)?))?;
                let Some(last) = ids.last() else {
                    break;
                };
                after = last.to_string();
                checked = checked.saturating_add(ids.len());
                self.read(|tx| {
                    stale.extend(kind.compare(tx, &ids)?);
                    Ok(())
                })?;
            }
        }
        Ok((checked, stale))
    }
}

impl Kind {
    fn compare(self, tx: &mut DieselTx, ids: &[Uuid]) -> StoreResult<Vec<StaleItem>> {
        let keys: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let mut stale = Vec::new();
        let (name, stored, rendered): (&'static str, Vec<(String, Option<String>)>, Vec<_>) =
            match self {
                Kind::Green => {
                    let stored = green_lots::table
                        .select((green_lots::id, green_lots::listing_item))
                        .filter(green_lots::id.eq_any(&keys))
                        .load(tx.conn())
                        .store()?;
                    let mut rendered = Vec::new();
                    for lot in tx.green_lots_by_ids(ids)? {
                        rendered.push((lot.id, tx.green_lot_item(&lot)?));
                    }
                    ("green lot", stored, rendered)
                }
                Kind::Roasted => {
                    let stored = roasted_lots::table
                        .select((roasted_lots::id, roasted_lots::listing_item))
                        .filter(roasted_lots::id.eq_any(&keys))
                        .load(tx.conn())
                        .store()?;
                    let mut rendered = Vec::new();
                    for lot in tx.roasted_lots_by_ids(ids)? {
                        rendered.push((lot.id, tx.roasted_lot_item(&lot)?));
                    }
                    ("roasted lot", stored, rendered)
                }
                Kind::Blended => {
                    let stored = blended_lots::table
                        .select((blended_lots::id, blended_lots::listing_item))
                        .filter(blended_lots::id.eq_any(&keys))
                        .load(tx.conn())
                        .store()?;
                    let mut rendered = Vec::new();
                    for id in ids {
                        if let Some(lot) = tx.blended_lot(*id)? {
                            rendered.push((lot.id, tx.blended_lot_item(&lot)?));
                        }
                    }
                    ("blended lot", stored, rendered)
                }
            };
        let stored: HashMap<String, Option<String>> = stored.into_iter().collect();
        for (id, item) in rendered {
            let Some(item) = item else { continue };
            let kept = stored.get(&id.to_string()).cloned().flatten();
            if kept.as_deref() != Some(item.as_str()) {
                stale.push(StaleItem {
                    kind: name,
                    id,
                    stored: kept,
                    rendered: item,
                });
            }
        }
        Ok(stale)
    }
}
