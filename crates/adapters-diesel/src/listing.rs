//! The listing read model (`roastery_ports::listing`): the stored item of each lot, its pages
//! read as one statement, SQLite pages read on a connection of the calling thread, PostgreSQL
//! pages read as digests and answered from the items this process keeps (`item_cache.rs`), and
//! the rendering of items that are missing or of another version when the store opens.

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::backend::Backend;
use diesel::connection::LoadConnection;
use diesel::deserialize::FromSql;
use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::row::{Field, Row};
use diesel::serialize::ToSql;
use diesel::sql_types::{Array, Nullable, Text, Timestamp};
use diesel::sqlite::Sqlite;
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::{JoinedPage, Limit, PageRequest};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use roastery_ports::error::StoreError;
use roastery_ports::listing::{ListingRepo, RenderedItem, WrittenLots};
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::id_set::AskedIds;
use crate::item_cache::{AskedPage, Digest, ItemCache, ItemKey, PageRead};
use crate::newest_first::{Form, Name, position, walk_after};
use crate::row::{LiteralLimit, StoredUuid, uuid};
use crate::schema::{blended_lots, green_lots, roasted_lots};
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

/// A newest-first page of `(sort instant, id, item)` rows of a lot table, filtered on
/// `from_column >= from`, one row more than the page holds. Its text is written directly rather
/// than built from Diesel's query builder, which formats every identifier again at each call
/// (the statement is kept per connection either way; a listing page is the hottest read).
#[derive(Clone)]
struct ItemPage {
    table: &'static str,
    at: Name,
    from_column: &'static str,
    from: Option<NaiveDateTime>,
    /// The keyset position the page starts after: rows below it in (at, id) order, a range
    /// the (at, id) index serves (written per backend, [`Form`]).
    after: Option<(NaiveDateTime, String)>,
    page_limit: Limit,
    limit: LiteralLimit,
    /// The columns read after each row's position: the item (SQLite), its digest or both
    /// (PostgreSQL).
    read: &'static str,
}

impl ItemPage {
    fn new(
        table: &'static str,
        at: &'static str,
        from_column: &'static str,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Self> {
        Ok(Self {
            table,
            at: Name(at),
            from_column,
            from: from.map(to_db),
            after: position(page)?,
            page_limit: page.limit,
            limit: LiteralLimit::overfetch(page),
            read: ITEM,
        })
    }

    /// The page's items, or `None` when one is missing. On PostgreSQL the items kept in `kept`
    /// are not read again.
    fn read(self, conn: &mut AnyConnection, kept: &ItemCache) -> StoreResult<Option<JoinedPage>> {
        match conn {
            AnyConnection::Postgresql(c) => {
                let asked = self.asked();
                match kept.how_to_read(&asked) {
                    PageRead::First => join_rows(c, self),
                    PageRead::Whole => join_whole(c, self, kept, asked),
                    PageRead::ByDigests => join_kept(c, self, kept, asked),
                }
            }
            AnyConnection::Sqlite(c) => join_rows(c, self),
        }
    }

    /// What tells this page from others: its table, filter, start and size.
    fn asked(&self) -> AskedPage {
        AskedPage {
            table: self.table,
            from: self.from,
            after: self.after.clone(),
            limit: self.page_limit.get(),
        }
    }
}

const ITEM: &str = "listing_item";
const DIGEST: &str = "listing_digest";
const DIGEST_AND_ITEM: &str = "listing_digest, listing_item";

/// A PostgreSQL page read whole, items and digests, in one statement: each item kept in `kept`
/// as it is copied into the page, and the page's keys noted.
fn join_whole(
    conn: &mut PgConnection,
    query: ItemPage,
    kept: &ItemCache,
    asked: AskedPage,
) -> StoreResult<Option<JoinedPage>> {
    let mut page = JoinedPage::new(query.page_limit);
    let mut keys = Vec::with_capacity(query.page_limit.as_usize());
    let whole = ItemPage {
        read: DIGEST_AND_ITEM,
        ..query
    };
    for row in <PgConnection as LoadConnection>::load(conn, whole).store()? {
        let row = row.store()?;
        if page.is_full() {
            page.more();
            break;
        }
        let kept_one = with_keyed_item(&row, 1, |key, item| {
            page.push(item, || row_position(&row))?;
            kept.keep(key, Arc::from(item));
            keys.push(key);
            Ok(())
        })?;
        if kept_one.is_none() {
            return Ok(None);
        }
    }
    kept.page_read(asked, &keys);
    Ok(Some(page))
}

/// A PostgreSQL page whose items are kept, by their digests ([`ItemCache`]): the page's
/// positions and digests in one statement (no item bytes), the items this process does not keep
/// (written since) read by id in a second one and kept. Should an item have been written again
/// between the two (its digest no longer the one read), the page is read whole, as one statement
/// ([`join_whole`]): a page is always one snapshot's. `None` when an item of the page is
/// missing. Which pages are read so: [`PageRead`].
fn join_kept(
    conn: &mut PgConnection,
    query: ItemPage,
    kept: &ItemCache,
    asked: AskedPage,
) -> StoreResult<Option<JoinedPage>> {
    match read_digests(conn, &query)? {
        Some(rows) => join_digests(conn, query, rows, kept, asked),
        None => Ok(None),
    }
}

/// A PostgreSQL page's rows as read by their digests.
struct DigestRows {
    /// The page's lots and their items' digests, in the page's order.
    keys: Vec<ItemKey>,
    /// The position of the row that fills the page.
    filled_at: Option<(DateTime<Utc>, Uuid)>,
    /// Whether a row follows the page.
    more: bool,
}

/// The page's rows, their items' digests in place of the items; `None` when an item is missing.
fn read_digests(conn: &mut PgConnection, query: &ItemPage) -> StoreResult<Option<DigestRows>> {
    let limit = query.page_limit.as_usize();
    let mut rows = DigestRows {
        keys: Vec::with_capacity(limit),
        filled_at: None,
        more: false,
    };
    let digests = ItemPage {
        read: DIGEST,
        ..query.clone()
    };
    for row in <PgConnection as LoadConnection>::load(conn, digests).store()? {
        let row = row.store()?;
        if rows.keys.len() >= limit {
            rows.more = true;
            break;
        }
        let digest = row.get(2);
        let Some(digest) = digest.as_ref().and_then(|f| f.value()) else {
            return Ok(None);
        };
        let digest = digest_of(digest.as_bytes())?;
        let id = if rows.keys.len().saturating_add(1) == limit {
            let (at, id) = row_position(&row)?;
            rows.filled_at = Some((at, id));
            id
        } else {
            let id = row.get(1);
            pg_uuid(id.as_ref().and_then(|f| f.value()))?
        };
        rows.keys.push((id, digest));
    }
    Ok(Some(rows))
}

/// The page of `rows`: each item taken from `kept`, the others read by id (and kept), or the
/// page read whole when one of them has another digest by now.
fn join_digests(
    conn: &mut PgConnection,
    query: ItemPage,
    rows: DigestRows,
    kept: &ItemCache,
    asked: AskedPage,
) -> StoreResult<Option<JoinedPage>> {
    let mut items: Vec<Option<Arc<[u8]>>> = rows.keys.iter().map(|key| kept.get(key)).collect();
    let missing: Vec<Uuid> = (rows.keys.iter().zip(&items))
        .filter(|(_, item)| item.is_none())
        .map(|((id, _), _)| *id)
        .collect();
    if !missing.is_empty() {
        let read = ItemsOf {
            table: query.table,
            ids: AskedIds::new(&missing),
        };
        for row in <PgConnection as LoadConnection>::load(conn, read).store()? {
            let row = row.store()?;
            // A lot whose item is missing by now stays unfound: the page is read whole.
            with_keyed_item(&row, 0, |key, item| {
                let item: Arc<[u8]> = Arc::from(item);
                if let Some(place) = rows.keys.iter().position(|row| *row == key)
                    && let Some(slot) = items.get_mut(place)
                {
                    *slot = Some(item.clone());
                }
                kept.keep(key, item);
                Ok(())
            })?;
        }
    }
    let Some(items) = items.into_iter().collect::<Option<Vec<_>>>() else {
        return join_whole(conn, query, kept, asked);
    };
    let mut page = JoinedPage::new(query.page_limit);
    for item in &items {
        page.push(item, || {
            rows.filled_at
                .ok_or_else(|| StoreError::Internal("a full page without its last row".into()))
        })?;
    }
    if rows.more {
        page.more();
    }
    kept.page_read(asked, &rows.keys);
    Ok(Some(page))
}

/// `with` the key and item of a PostgreSQL row whose columns from `id` on are a lot's id, its
/// item's digest and the item; `None` when the item is missing.
fn with_keyed_item<'a, R: Row<'a, Pg>, T>(
    row: &R,
    id: usize,
    with: impl FnOnce(ItemKey, &[u8]) -> StoreResult<T>,
) -> StoreResult<Option<T>> {
    let (lot, digest, item) = (
        row.get(id),
        row.get(id.saturating_add(1)),
        row.get(id.saturating_add(2)),
    );
    let (Some(digest), Some(item)) = (
        digest.as_ref().and_then(|f| f.value()),
        item.as_ref().and_then(|f| f.value()),
    ) else {
        return Ok(None);
    };
    let lot = pg_uuid(lot.as_ref().and_then(|f| f.value()))?;
    let key = (lot, digest_of(digest.as_bytes())?);
    with(key, item.as_bytes()).map(Some)
}

/// A lot's id as PostgreSQL sends it.
fn pg_uuid(value: Option<<Pg as Backend>::RawValue<'_>>) -> StoreResult<Uuid> {
    <StoredUuid as FromSql<Text, Pg>>::from_nullable_sql(value)
        .map(Uuid::from)
        .map_err(|e| corrupt("listing page", e))
}

/// A stored digest (a `uuid`, sent as its 16 bytes).
fn digest_of(bytes: &[u8]) -> StoreResult<Digest> {
    bytes
        .try_into()
        .map_err(|_| corrupt("listing digest", format!("{} bytes", bytes.len())))
}

/// The ids, digests and items of lots of one table among `ids`, one kept statement whatever
/// their number, with one generic plan (the ids joined as rows, [`AskedIds`]; PostgreSQL).
struct ItemsOf {
    table: &'static str,
    ids: AskedIds,
}

impl QueryId for ItemsOf {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for ItemsOf {
    type SqlType = diesel::sql_types::Untyped;
}

impl QueryFragment<Pg> for ItemsOf {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("SELECT r.id, r.listing_digest, r.listing_item FROM ");
        self.ids.walk_ast(out.reborrow())?;
        out.push_sql(" JOIN ");
        out.push_sql(self.table);
        out.push_sql(" AS r ON r.id = a.value");
        Ok(())
    }
}

/// The page's rows joined as the database hands them over: each item copied from the row
/// straight into the page's buffer (no value per row, no row kept), and only the row that fills
/// the page read for its position. `None` when an item of the page is missing.
///
/// Rows are walked with `LoadConnection::load`, which Diesel keeps behind its
/// `i-implement-a-third-party-backend-and-opt-into-breaking-changes` feature: its loading API
/// builds an owned value per row (a `String` per item, its position parsed): with it a SQLite page
/// cost 14–16% more of the server's CPU. The statement is the one `RunQueryDsl::load` would run,
/// kept per connection in the same cache.
fn join_rows<C>(conn: &mut C, query: ItemPage) -> StoreResult<Option<JoinedPage>>
where
    C: LoadConnection,
    C::Backend: ItemText + diesel::expression::QueryMetadata<<ItemPage as Query>::SqlType>,
    ItemPage: QueryFragment<C::Backend>,
    StoredInstant: FromSql<Timestamp, C::Backend>,
    StoredUuid: FromSql<Text, C::Backend>,
{
    let mut page = JoinedPage::new(query.page_limit);
    for row in conn.load(query).store()? {
        let row = row.store()?;
        if page.is_full() {
            page.more();
            break;
        }
        let item = row.get(2);
        let Some(value) = item.as_ref().and_then(|f| f.value()) else {
            return Ok(None);
        };
        C::Backend::item_text(value, |json| page.push(json, || row_position(&row)))?;
    }
    Ok(Some(page))
}

/// The sort instant and id of a page's row.
fn row_position<'a, DB, R>(row: &R) -> StoreResult<(DateTime<Utc>, Uuid)>
where
    DB: Backend,
    R: Row<'a, DB>,
    StoredInstant: FromSql<Timestamp, DB>,
    StoredUuid: FromSql<Text, DB>,
{
    let at = row.get(0);
    let at = StoredInstant::from_nullable_sql(at.as_ref().and_then(|f| f.value()))
        .map_err(|e| corrupt("listing page", e))?;
    let id = row.get(1);
    let id = StoredUuid::from_nullable_sql(id.as_ref().and_then(|f| f.value()))
        .map_err(|e| corrupt("listing page", e))?;
    Ok((from_db(at.into()), id.into()))
}

/// A stored item's text as the backend hands it over, borrowed from its row.
trait ItemText: Backend {
    fn item_text<R>(value: Self::RawValue<'_>, read: impl FnOnce(&[u8]) -> R) -> R;
}

impl ItemText for Sqlite {
    fn item_text<R>(mut value: Self::RawValue<'_>, read: impl FnOnce(&[u8]) -> R) -> R {
        read(value.read_text().as_bytes())
    }
}

impl ItemText for Pg {
    /// Items are written as UTF-8 JSON and PostgreSQL checks `text` against its encoding when
    /// storing it: no second check.
    fn item_text<R>(value: Self::RawValue<'_>, read: impl FnOnce(&[u8]) -> R) -> R {
        read(value.as_bytes())
    }
}

/// The stored items of the roasted lots among asked ids, in the asked order: the ids' rows
/// joined to the lots by id (an id of no lot has no row), sorted by the ids' places.
struct FoundItems {
    ids: AskedIds,
    page: PageRequest,
}

impl FoundItems {
    /// The page's items, or `None` when one is missing.
    fn read(self, conn: &mut AnyConnection) -> StoreResult<Option<JoinedPage>> {
        on_backend!(conn, |c| join_found(c, self))
    }
}

/// [`join_rows`] for [`FoundItems`]: the rows before the page's start passed over unread, each
/// item of the page copied into its buffer, in the asked order as the rows come.
fn join_found<C>(conn: &mut C, query: FoundItems) -> StoreResult<Option<JoinedPage>>
where
    C: LoadConnection,
    C::Backend: ItemText + diesel::expression::QueryMetadata<<FoundItems as Query>::SqlType>,
    FoundItems: QueryFragment<C::Backend>,
{
    // The use case checked the cursor's kind before reading.
    let mut page =
        JoinedPage::found(&query.page).map_err(|e| StoreError::Internal(e.to_string()))?;
    for row in conn.load(query).store()? {
        let row = row.store()?;
        if page.is_full() {
            page.more();
            break;
        }
        if page.skip_found() {
            continue;
        }
        let item = row.get(0);
        let Some(value) = item.as_ref().and_then(|f| f.value()) else {
            return Ok(None);
        };
        C::Backend::item_text(value, |json| page.push_found(json));
    }
    Ok(Some(page))
}

impl QueryId for FoundItems {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for FoundItems {
    type SqlType = Nullable<Text>;
}

impl<DB: Backend> QueryFragment<DB> for FoundItems
where
    AskedIds: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT r.listing_item FROM ");
        self.ids.walk_ast(out.reborrow())?;
        out.push_sql(" JOIN roasted_lots AS r ON r.id = a.value ORDER BY a.key");
        Ok(())
    }
}

impl QueryId for ItemPage {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for ItemPage {
    type SqlType = (Timestamp, Text, Nullable<Text>);
}

impl<C> RunQueryDsl<C> for ItemPage {}

impl ItemPage {
    fn walk<'b, DB: Backend>(&'b self, mut out: AstPass<'_, 'b, DB>, form: Form) -> QueryResult<()>
    where
        NaiveDateTime: ToSql<Timestamp, DB>,
        String: ToSql<Text, DB>,
    {
        static ID: Name = Name("id");
        out.push_sql("SELECT ");
        out.push_sql(self.at.0);
        out.push_sql(", id, ");
        out.push_sql(self.read);
        out.push_sql(" FROM ");
        out.push_sql(self.table);
        let mut and = " WHERE ";
        if let Some(from) = &self.from {
            out.push_sql(and);
            out.push_sql(self.from_column);
            out.push_sql(" >= ");
            out.push_bind_param::<Timestamp, _>(from)?;
            and = " AND ";
        }
        if let Some(after) = &self.after {
            out.push_sql(and);
            walk_after(out.reborrow(), form, &self.at, &ID, after)?;
        }
        out.push_sql(" ORDER BY ");
        out.push_sql(self.at.0);
        out.push_sql(" DESC, id DESC");
        self.limit.walk_ast(out)
    }
}

impl QueryFragment<Pg> for ItemPage {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.walk(out, Form::HiddenRow)
    }
}

impl QueryFragment<Sqlite> for ItemPage {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        self.walk(out, Form::Range)
    }
}

/// The table of a kind of lot.
fn table_of(kind: LotKind) -> &'static str {
    match kind {
        LotKind::Green => "green_lots",
        LotKind::Roasted => "roasted_lots",
        LotKind::Blended => "blended_lots",
    }
}

/// The listing items of lots of one table stored, as one statement whatever their number: the
/// ids and items bound as two text arrays and joined to the lots by id. Its text depends only on
/// the table, so each PostgreSQL connection prepares it once and keeps it (Diesel's builder never
/// keeps an `UPDATE`). The ids are distinct: PostgreSQL leaves which of two rows joined to one
/// lot is written unspecified.
struct KeptItemUpdates<'a> {
    table: &'static str,
    ids: Vec<String>,
    items: Vec<&'a str>,
}

kept_statement!(KeptItemUpdates);

impl QueryFragment<Pg> for KeptItemUpdates<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        out.push_sql(self.table);
        out.push_sql(" AS t SET listing_item = v.item FROM unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.ids)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.items)?;
        out.push_sql(") AS v(id, item) WHERE t.id = v.id");
        Ok(())
    }
}

/// `items` with only the last of each lot's items: what storing them one after another leaves.
fn last_of_each_lot(items: &[RenderedItem]) -> Vec<&RenderedItem> {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    let mut last: Vec<&RenderedItem> = items.iter().rev().filter(|i| seen.insert(i.id)).collect();
    last.reverse();
    last
}

impl ListingRepo for DieselTx {
    fn green_lot_items(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let kept = self.items.clone();
        ItemPage::new(
            "green_lots",
            "registration_date",
            "last_modified_date",
            modified_from,
            page,
        )?
        .read(self.conn()?, &kept)
    }

    fn roasted_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let kept = self.items.clone();
        ItemPage::new("roasted_lots", "roasted_date", "roasted_date", from, page)?
            .read(self.conn()?, &kept)
    }

    fn roasted_lot_items_by_ids(
        &mut self,
        ids: &[Uuid],
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        FoundItems {
            ids: AskedIds::new(ids),
            page: *page,
        }
        .read(self.conn()?)
    }

    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<JoinedPage>> {
        let kept = self.items.clone();
        ItemPage::new("blended_lots", "blended_date", "blended_date", from, page)?
            .read(self.conn()?, &kept)
    }

    fn take_written_lots(&mut self) -> WrittenLots {
        std::mem::take(&mut self.written)
    }

    fn update_green_lot_with_item(
        &mut self,
        lot: &ForUpdate<GreenLot>,
        json: &str,
    ) -> StoreResult<()> {
        self.written.forget_green(lot.id);
        self.write_green_lot(lot, Some(json))
    }

    fn insert_green_lot_with_item(&mut self, lot: &GreenLot, json: &str) -> StoreResult<()> {
        self.written.forget_green(lot.id);
        self.insert_green_lot_row(lot, Some(json))
    }

    fn insert_roasted_lot_with_item(&mut self, lot: &RoastedLot, json: &str) -> StoreResult<()> {
        self.written.forget_roasted(lot.id);
        self.insert_roasted_lot_row(lot, Some(json))
    }

    fn insert_blended_lot_with_item(&mut self, lot: &BlendedLot, json: &str) -> StoreResult<()> {
        self.written.forget_blended(lot.id);
        self.insert_blended_lot_row(lot, Some(json))
    }

    fn put_listing_items(&mut self, kind: LotKind, items: &[RenderedItem]) -> StoreResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        if let AnyConnection::Postgresql(c) = self.conn()? {
            // One round trip for the unit of work's items of this kind.
            let items = last_of_each_lot(items);
            return KeptItemUpdates {
                table: table_of(kind),
                ids: items.iter().map(|i| i.id.to_string()).collect(),
                items: items.iter().map(|i| i.json.as_str()).collect(),
            }
            .execute(c)
            .map(drop)
            .store();
        }
        // SQLite runs in the process: a statement per item costs no round trip.
        for item in items {
            let id = item.id.to_string();
            let json = Some(item.json.as_str());
            let conn = self.conn()?;
            match kind {
                LotKind::Green => diesel::update(green_lots::table.find(id))
                    .set(green_lots::listing_item.eq(json))
                    .execute(conn),
                LotKind::Roasted => diesel::update(roasted_lots::table.find(id))
                    .set(roasted_lots::listing_item.eq(json))
                    .execute(conn),
                LotKind::Blended => diesel::update(blended_lots::table.find(id))
                    .set(blended_lots::listing_item.eq(json))
                    .execute(conn),
            }
            .store()?;
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
        let after = after.map(|a| a.to_string()).unwrap_or_default();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        macro_rules! ids {
            ($table:ident) => {{
                let mut q = $table::table
                    .select($table::id)
                    .filter($table::id.gt(&after))
                    .into_boxed();
                if !all {
                    q = q.filter($table::listing_item.is_null());
                }
                q.order($table::id)
                    .limit(limit)
                    .load::<String>(self.conn()?)
            }};
        }
        let keys = match kind {
            LotKind::Green => ids!(green_lots),
            LotKind::Roasted => ids!(roasted_lots),
            LotKind::Blended => ids!(blended_lots),
        }
        .store()?;
        keys.iter().map(|k| uuid("lot", k)).collect()
    }

    fn stored_listing_items(
        &mut self,
        kind: LotKind,
        ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Option<String>)>> {
        let keys: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        macro_rules! stored {
            ($table:ident) => {
                $table::table
                    .select(($table::id, $table::listing_item))
                    .filter($table::id.eq_any(&keys))
                    .load::<(String, Option<String>)>(self.conn()?)
            };
        }
        let rows = match kind {
            LotKind::Green => stored!(green_lots),
            LotKind::Roasted => stored!(roasted_lots),
            LotKind::Blended => stored!(blended_lots),
        }
        .store()?;
        rows.into_iter()
            .map(|(id, item)| Ok((uuid("lot", &id)?, item)))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use diesel::sql_types::BigInt;
    use roastery_domain::page::{Limit, Position};
    use roastery_ports::Store;
    use roastery_ports::repo::GreenLotRepo;
    use roastery_test_support::contract::green_lot::{green_lot, locations};
    use roastery_test_support::database;

    use super::*;
    use crate::DieselStore;
    use crate::connection::PoolOptions;

    #[derive(QueryableByName, Debug, PartialEq, Eq)]
    pub(crate) struct Plans {
        #[diesel(sql_type = BigInt)]
        pub(crate) generic_plans: i64,
        #[diesel(sql_type = BigInt)]
        pub(crate) custom_plans: i64,
    }

    /// A PostgreSQL store holding `count` green lots with listing items and the table's
    /// statistics, on one connection.
    pub(crate) fn listed_lots(
        name: &str,
        count: u128,
    ) -> Option<(database::TestDatabase, DieselStore)> {
        let db = database::postgres(name)?;
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        let [here, _] = locations(&store);
        store
            .write(|tx| {
                for n in 1..=count {
                    tx.insert_green_lot(&green_lot(n, i64::try_from(n).unwrap(), &here))?;
                }
                drop(roastery_ports::repo::EventRepo::take_changes(tx));
                let written = tx.take_written_lots();
                let items: Vec<_> = (written.green.iter())
                    .map(|l| RenderedItem {
                        id: l.id,
                        json: format!("{}", l.lot_number),
                    })
                    .collect();
                Ok(tx.put_listing_items(LotKind::Green, &items)?)
            })
            .unwrap();
        store
            .read_statement(|tx| {
                Ok(diesel::sql_query("ANALYZE green_lots")
                    .execute(tx.conn()?)
                    .store()?)
            })
            .unwrap();
        Some((db, store))
    }

    /// How often PostgreSQL planned the kept statements of `store`'s connection whose text
    /// contains every part of `parts` (and none of those written `!part`).
    pub(crate) fn plans(store: &DieselStore, parts: &[&str]) -> Vec<Plans> {
        let filter: String = parts
            .iter()
            .map(|part| match part.strip_prefix('!') {
                Some(absent) => format!(" AND strpos(statement, '{absent}') = 0"),
                None => format!(" AND strpos(statement, '{part}') > 0"),
            })
            .collect();
        store
            .read_statement(|tx| {
                Ok(diesel::sql_query(format!(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements \
                     WHERE statement NOT LIKE '%pg_prepared_statements%'{filter}"
                ))
                .load(tx.conn()?)
                .store()?)
            })
            .unwrap()
    }

    #[test]
    fn of_two_items_of_one_lot_the_last_is_stored() {
        let item = |id: u128, json: &str| RenderedItem {
            id: Uuid::from_u128(id),
            json: json.into(),
        };
        let items = [item(1, "a0"), item(2, "b"), item(1, "a1"), item(3, "c")];
        let kept: Vec<&str> = last_of_each_lot(&items)
            .iter()
            .map(|i| i.json.as_str())
            .collect();
        assert_eq!(kept, ["b", "a1", "c"]);
    }

    /// Of two items of one lot sent in one call, PostgreSQL stores the last, whichever way it
    /// joins the items to the lots: a hash join applies the last row of a lot it meets, a nested
    /// loop over the items the first, so the store sends each lot's last item alone. Run with the
    /// nested loop forced, the plan of a large table.
    #[test]
    fn of_two_items_of_one_lot_postgresql_stores_the_last_in_a_nested_loop() {
        let Some((_db, store)) = listed_lots("listing_item_twice", 3) else {
            return;
        };
        let ids = store
            .read(|tx| Ok(tx.lots_to_render(LotKind::Green, true, None, 10)?))
            .unwrap();
        let (a, b) = (ids[0], ids[1]);
        store
            .write(|tx| {
                diesel::sql_query("SET LOCAL enable_hashjoin = off")
                    .execute(tx.conn()?)
                    .store()?;
                diesel::sql_query("SET LOCAL enable_mergejoin = off")
                    .execute(tx.conn()?)
                    .store()?;
                let item = |id, json: &str| RenderedItem {
                    id,
                    json: json.into(),
                };
                Ok(tx.put_listing_items(
                    LotKind::Green,
                    &[item(a, "a0"), item(b, "b0"), item(a, "a1"), item(b, "b1")],
                )?)
            })
            .unwrap();
        let mut stored = store
            .read(|tx| Ok(tx.stored_listing_items(LotKind::Green, &[a, b])?))
            .unwrap();
        stored.sort();
        let mut expected = vec![(a, Some("a1".to_owned())), (b, Some("b1".to_owned()))];
        expected.sort();
        assert_eq!(stored, expected);
    }

    /// How often `store`'s connection ran the statement that reads the items of a page it does
    /// not keep.
    fn item_reads(store: &DieselStore) -> i64 {
        plans(store, &["r.listing_item", "ORDINALITY"])
            .iter()
            .map(|p| p.generic_plans + p.custom_plans)
            .sum()
    }

    fn first_page(store: &DieselStore, limit: i64) -> String {
        let page = first_of(limit);
        let items = store
            .read_statement(|tx| Ok(tx.green_lot_items(None, &page)?))
            .unwrap()
            .expect("rendered");
        String::from_utf8(items.items().to_vec()).unwrap()
    }

    /// The first page of `limit` lots, newest first.
    pub(crate) fn first_of(limit: i64) -> PageRequest {
        PageRequest {
            limit: Limit::parse(Some(limit)).unwrap(),
            after: None,
        }
    }

    /// The items of [`listed_lots`] numbered `lots` (each item its lot's number), newest first,
    /// as a page joins them.
    fn newest(lots: std::ops::RangeInclusive<u32>) -> String {
        let items: Vec<String> = lots.rev().map(|n| n.to_string()).collect();
        items.join(",")
    }

    /// Stores "twenty-five" (a JSON string) as the item of lot 25 of [`listed_lots`].
    fn rename_lot_25(store: &DieselStore) {
        store
            .write(|tx| {
                let item = RenderedItem {
                    id: Uuid::from_u128(25),
                    json: "\"twenty-five\"".into(),
                };
                Ok(tx.put_listing_items(LotKind::Green, &[item])?)
            })
            .unwrap();
    }

    /// How often `store`'s connection read a page by its digests alone.
    fn digest_reads(store: &DieselStore) -> i64 {
        plans(store, &["listing_digest FROM", "LIMIT"])
            .iter()
            .map(|p| p.generic_plans + p.custom_plans)
            .sum()
    }

    /// A PostgreSQL page is answered from the items its store keeps: read whole the first time,
    /// then by its digests alone; an item another store (another instance) writes is read again,
    /// and the page shows it.
    #[test]
    fn pages_on_postgresql_read_only_items_not_kept_and_see_every_write() {
        let Some((db, store)) = listed_lots("listing_kept", 30) else {
            return;
        };
        let expected = newest(21..=30);
        assert_eq!(first_page(&store, 10), expected);
        assert_eq!(
            (digest_reads(&store), item_reads(&store)),
            (0, 0),
            "read whole"
        );
        for _ in 0..5 {
            assert_eq!(first_page(&store, 10), expected);
        }
        assert_eq!(
            digest_reads(&store),
            4,
            "read whole and kept the second time"
        );
        assert_eq!(item_reads(&store), 0);

        let other = DieselStore::open(&db.url, Some(1)).unwrap();
        rename_lot_25(&other);
        let changed = expected.replace("25", "\"twenty-five\"");
        assert_eq!(first_page(&store, 10), changed);
        assert_eq!(item_reads(&store), 1, "the written item read again");
        assert_eq!(first_page(&store, 10), changed);
        assert_eq!(item_reads(&store), 1);
        assert_eq!(first_page(&other, 10), changed);
    }

    /// A page most of whose items the store could not keep (more lots read than it keeps) is
    /// read whole again, never by its digests and then its items.
    #[test]
    fn a_page_whose_items_are_not_kept_is_read_whole() {
        let Some((db, _store)) = listed_lots("listing_small_cache", 30) else {
            return;
        };
        // Room for about four of the ten items (each weighed with its entry's bytes).
        let options = PoolOptions {
            max_size: Some(1),
            listing_cache_bytes: 300,
            ..PoolOptions::default()
        };
        let store = DieselStore::open_with(&db.url, &options).unwrap();
        let expected = newest(21..=30);
        for _ in 0..4 {
            assert_eq!(first_page(&store, 10), expected);
        }
        assert_eq!((digest_reads(&store), item_reads(&store)), (0, 0));
        let whole = plans(&store, &["listing_digest, listing_item", "LIMIT 11"]);
        assert_eq!(whole.len(), 1, "{whole:?}");
        assert_eq!(whole[0].generic_plans + whole[0].custom_plans, 3);
    }

    /// Pages asked for the first time, as by a client walking every page, are each read as one
    /// statement: never by their digests first and then their items.
    #[test]
    fn pages_walked_on_postgresql_are_each_one_statement() {
        let Some((_db, store)) = listed_lots("listing_walk", 300) else {
            return;
        };
        let mut page = first_of(50);
        let mut pages = 0;
        loop {
            let items = store
                .read_statement(|tx| Ok(tx.green_lot_items(None, &page)?))
                .unwrap()
                .expect("rendered");
            pages += 1;
            match items.next() {
                Some(next) => page.after = Some(next),
                None => break,
            }
        }
        assert_eq!(pages, 6);
        assert_eq!((digest_reads(&store), item_reads(&store)), (0, 0));
    }

    /// An item written again between a page's digests and the reading of its items: the page is
    /// read whole, and shows the item written.
    #[test]
    fn a_page_whose_item_changed_after_its_digests_is_read_whole() {
        let Some((db, store)) = listed_lots("listing_kept_changed", 30) else {
            return;
        };
        let page = first_of(10);
        let query = |page: &PageRequest| {
            ItemPage::new(
                "green_lots",
                "registration_date",
                "last_modified_date",
                None,
                page,
            )
            .unwrap()
        };
        let kept = ItemCache::new(1024 * 1024);
        let other = DieselStore::open(&db.url, Some(1)).unwrap();
        let joined = store
            .read_statement(|tx| {
                let AnyConnection::Postgresql(c) = tx.conn()? else {
                    unreachable!("a PostgreSQL store")
                };
                let rows = read_digests(c, &query(&page))?.expect("rendered");
                rename_lot_25(&other);
                Ok(join_digests(
                    c,
                    query(&page),
                    rows,
                    &kept,
                    query(&page).asked(),
                )?)
            })
            .unwrap()
            .expect("rendered");
        assert_eq!(
            std::str::from_utf8(joined.items()).unwrap(),
            newest(21..=30).replace("25", "\"twenty-five\"")
        );
        let whole = plans(&store, &["listing_item", "LIMIT 11"]);
        assert_eq!(whole.len(), 1, "read whole once: {whole:?}");
        assert_eq!(whole[0].generic_plans + whole[0].custom_plans, 1);
    }

    /// Pages read while another store writes their items again and again are each one
    /// snapshot's: every item is one the writer stored for the lot at that place, and the pages
    /// never go back to an older item of a lot.
    #[test]
    fn pages_on_postgresql_read_during_writes_hold_the_items_stored() {
        let Some((db, store)) = listed_lots("listing_kept_writes", 30) else {
            return;
        };
        let writer = DieselStore::open(&db.url, Some(1)).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut round = 0u32;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    round += 1;
                    writer
                        .write(|tx| {
                            let items: Vec<_> = (21..=30u128)
                                .filter(|n| (n + u128::from(round)) % 3 != 0)
                                .map(|n| RenderedItem {
                                    id: Uuid::from_u128(n),
                                    json: format!("{n}.{round}"),
                                })
                                .collect();
                            Ok(tx.put_listing_items(LotKind::Green, &items)?)
                        })
                        .unwrap();
                }
            });
            let mut newest = [0u32; 10];
            for _ in 0..300 {
                let page = first_page(&store, 10);
                let items: Vec<&str> = page.split(',').collect();
                assert_eq!(items.len(), 10, "{page}");
                for (place, item) in items.iter().enumerate() {
                    let lot = 30 - place;
                    let (number, round) = item.split_once('.').unwrap_or((item, "0"));
                    assert_eq!(number, lot.to_string(), "{page}");
                    let round: u32 = round.parse().unwrap();
                    assert!(
                        round >= newest[place],
                        "{page} after round {}",
                        newest[place]
                    );
                    newest[place] = round;
                }
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }

    /// The first page of a listing on PostgreSQL is one kept statement whose generic plan is
    /// kept too: after PostgreSQL's five trial custom plans, none is made again.
    #[test]
    fn a_first_page_on_postgresql_keeps_its_generic_plan() {
        let Some((_db, store)) = listed_lots("listing_plan", 40) else {
            return;
        };
        let page = first_of(10);
        for _ in 0..20 {
            let items = store
                .read_statement(|tx| Ok(tx.green_lot_items(None, &page)?))
                .unwrap()
                .expect("kept");
            assert_eq!(items.len(), 10);
            assert!(items.next().is_some(), "another page follows");
        }
        // Read with its items twice, by its digests after.
        let plans = plans(&store, &["listing_digest FROM", "LIMIT 11"]);
        assert_eq!(plans.len(), 1, "one kept statement: {plans:?}");
        assert!(plans[0].custom_plans <= 5, "{plans:?}");
        assert!(plans[0].generic_plans >= 13, "{plans:?}");
    }

    /// A page read by its digests is answered from the index that orders it, which includes the
    /// digest (migration 000016): on a vacuumed table PostgreSQL visits no heap page. The
    /// statement is the store's own, explained as it was kept on its one connection (a small
    /// table is otherwise read whole and sorted: no sequential scan on that connection).
    #[test]
    fn digest_pages_on_postgresql_are_read_from_the_index_alone() {
        #[derive(QueryableByName)]
        struct Kept {
            #[diesel(sql_type = Text)]
            name: String,
        }
        #[derive(QueryableByName)]
        struct PlanLine {
            #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
            line: String,
        }
        let Some((_db, store)) = listed_lots("listing_index_only", 200) else {
            return;
        };
        store
            .read_statement(|tx| {
                diesel::sql_query("VACUUM (ANALYZE) green_lots")
                    .execute(tx.conn()?)
                    .store()?;
                Ok(diesel::sql_query("SET enable_seqscan = off")
                    .execute(tx.conn()?)
                    .store()?)
            })
            .unwrap();
        let expected = newest(191..=200);
        for _ in 0..3 {
            assert_eq!(first_page(&store, 10), expected);
        }
        assert_eq!(digest_reads(&store), 1, "the third page by its digests");
        let plan = store
            .read_statement(|tx| {
                let kept: Kept = diesel::sql_query(
                    "SELECT name FROM pg_prepared_statements \
                     WHERE strpos(statement, 'listing_digest FROM') > 0 \
                     AND strpos(statement, 'LIMIT 11') > 0",
                )
                .get_result(tx.conn()?)
                .store()?;
                let lines: Vec<PlanLine> = diesel::sql_query(format!(
                    "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE {}",
                    kept.name
                ))
                .load(tx.conn()?)
                .store()?;
                Ok(lines.into_iter().map(|l| l.line).collect::<Vec<_>>())
            })
            .unwrap()
            .join("\n");
        assert!(
            plan.contains("Index Only Scan Backward using green_lots_newest"),
            "{plan}"
        );
        assert!(plan.contains("Heap Fetches: 0"), "{plan}");
    }

    /// Every lot table's page index carries the digest, so pages of roasted and blended lots
    /// read by their digests are answered from it too.
    #[test]
    fn every_lot_page_index_on_postgresql_includes_the_digest() {
        #[derive(QueryableByName)]
        struct Definition {
            #[diesel(sql_type = Text)]
            indexname: String,
            #[diesel(sql_type = Text)]
            indexdef: String,
        }
        let Some((_db, store)) = listed_lots("listing_index_digest", 1) else {
            return;
        };
        let definitions: Vec<Definition> = store
            .read_statement(|tx| {
                Ok(diesel::sql_query(
                    "SELECT indexname::text, indexdef FROM pg_indexes \
                     WHERE indexname LIKE '%lots_newest' ORDER BY indexname",
                )
                .load(tx.conn()?)
                .store()?)
            })
            .unwrap();
        let names: Vec<&str> = definitions.iter().map(|d| d.indexname.as_str()).collect();
        assert_eq!(
            names,
            [
                "blended_lots_newest",
                "green_lots_newest",
                "roasted_lots_newest"
            ]
        );
        for definition in &definitions {
            assert!(
                definition.indexdef.ends_with("INCLUDE (listing_digest)"),
                "{}",
                definition.indexdef
            );
        }
    }

    /// Pages after a cursor are one kept statement too, and PostgreSQL keeps its generic plan
    /// whatever the cursor: with the cursor's values visible to its planner, pages of 50 of a
    /// table of 1,000 lots with statistics were planned anew for every page (a custom plan
    /// looks cheaper there). A first page and the twelve after it, each after another position,
    /// make no custom plan beyond PostgreSQL's five trials, and meet 650 lots, newest first,
    /// each once.
    #[test]
    fn pages_after_a_cursor_on_postgresql_keep_one_generic_plan() {
        let Some((_db, store)) = listed_lots("listing_cursor_plan", 1000) else {
            return;
        };
        let mut page = first_of(50);
        let mut seen: Vec<u32> = Vec::new();
        for _ in 0..13 {
            let items = store
                .read_statement(|tx| Ok(tx.green_lot_items(None, &page)?))
                .unwrap()
                .expect("kept");
            assert_eq!(items.len(), 50);
            // Each lot's item is its lot number, its id the same number.
            let numbers = std::str::from_utf8(items.items()).unwrap().split(',');
            seen.extend(numbers.map(|n| n.parse::<u32>().unwrap()));
            let last = Uuid::from_u128(u128::from(*seen.last().unwrap()));
            let last = store.read(|tx| Ok(tx.green_lot(last)?)).unwrap().unwrap();
            assert_eq!(
                items.next(),
                Some(Position::Keyset {
                    at: last.registration_date,
                    id: last.id,
                })
            );
            page.after = items.next();
        }
        assert_eq!(seen.len(), 650);
        assert!(
            seen.windows(2).all(|pair| pair[0] > pair[1]),
            "newest first, each once: {seen:?}"
        );
        let plans = plans(&store, &["listing_item", "LIMIT 51", "WHERE"]);
        assert_eq!(plans.len(), 1, "one kept statement: {plans:?}");
        assert!(plans[0].custom_plans <= 5, "{plans:?}");
        assert!(plans[0].generic_plans >= 7, "{plans:?}");
    }

    /// Roasted lots asked by id are read by one kept statement whose generic plan PostgreSQL
    /// keeps, whatever the ids and their order, and come in the asked order.
    #[test]
    fn lots_by_ids_on_postgresql_keep_one_generic_plan_in_the_asked_order() {
        use roastery_test_support::contract::roast::roasted;
        let Some(db) = database::postgres("listing_by_ids_plan") else {
            return;
        };
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        let [here, _] = locations(&store);
        let at = |n: i64| DateTime::from_timestamp(1_800_000_000 + n, 0).unwrap();
        let lots: Vec<Uuid> = (1..=30)
            .map(|n| roasted(&store, n, here.id, at(i64::try_from(n).unwrap()), None).id)
            .collect();
        store
            .write(|tx| {
                let items: Vec<_> = (lots.iter().enumerate())
                    .map(|(n, id)| RenderedItem {
                        id: *id,
                        json: n.to_string(),
                    })
                    .collect();
                Ok(tx.put_listing_items(LotKind::Roasted, &items)?)
            })
            .unwrap();
        for round in 0..20usize {
            // Every round asks for other lots in another order, with an unknown id among them.
            let mut asked: Vec<Uuid> = (0..10).map(|i| lots[(round * 7 + i * 3) % 30]).collect();
            asked.dedup();
            asked.insert(round % 5, Uuid::from_u128(7));
            let page = store
                .read_statement(|tx| {
                    Ok(tx.roasted_lot_items_by_ids(&asked, &PageRequest::default())?)
                })
                .unwrap()
                .expect("kept");
            let expected: Vec<String> = (asked.iter())
                .filter_map(|id| lots.iter().position(|l| l == id))
                .map(|n| n.to_string())
                .collect();
            assert_eq!(
                std::str::from_utf8(page.items()).unwrap(),
                expected.join(",")
            );
        }
        let plans = plans(&store, &["listing_item", "ORDINALITY"]);
        assert_eq!(plans.len(), 1, "one kept statement: {plans:?}");
        assert!(plans[0].custom_plans <= 5, "{plans:?}");
        assert!(plans[0].generic_plans >= 15, "{plans:?}");
    }
}
