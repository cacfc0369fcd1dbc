//! The listing read model (`roastery_ports::listing`): the stored item of each lot, its pages
//! read as one statement, SQLite pages read on a connection of the calling thread, and the
//! rendering of items that are missing or of another version when the store opens.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::Text;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::PageRequest;
use roastery_domain::stock::LotKind;
use roastery_ports::listing::{ListingItem, ListingRepo, RenderedItem, WrittenLots};
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::id_set::in_ids;
use crate::row::uuid;
use crate::schema::{blended_lots, green_lots, roasted_lots};
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

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
        if let Some((at, id)) = $crate::row::keyset($page)? {
            let at = to_db(at);
            query = query.filter(
                $table::$at
                    .le(at)
                    .and($table::$at.lt(at).or($table::id.lt(id.to_string()))),
            );
        }
        let query = query.order(($table::$at.desc(), $table::id.desc()));
        let rows: Vec<ItemRow> = $crate::row::LiteralLimit::of(query, $page)
            .load($tx.conn()?)
            .store()?;
        items(rows)
    }};
}

/// The table of a kind of lot.
fn table_of(kind: LotKind) -> &'static str {
    match kind {
        LotKind::Green => "green_lots",
        LotKind::Roasted => "roasted_lots",
        LotKind::Blended => "blended_lots",
    }
}

/// A lot's listing item stored, as a statement each PostgreSQL connection prepares once and keeps
/// (Diesel's builder never keeps an `UPDATE`; this one follows every write of a lot).
struct KeptItemUpdate<'a> {
    table: &'static str,
    id: &'a str,
    json: &'a str,
}

kept_statement!(KeptItemUpdate);

impl QueryFragment<Pg> for KeptItemUpdate<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        out.push_sql(self.table);
        out.push_sql(" SET listing_item = ");
        out.push_bind_param::<Text, _>(&self.json)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, _>(&self.id)?;
        Ok(())
    }
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
        let query = roasted_lots::table.select((
            roasted_lots::roasted_date,
            roasted_lots::id,
            roasted_lots::listing_item,
        ));
        // A semi-join, not `= ANY($1)`: see `in_ids` (PostgreSQL keeps this statement's generic
        // plan, in which `= ANY` searches the array linearly for every row read; SQLite keeps the
        // statement, which with the ids written out it parsed at every call).
        let query = query.filter(in_ids(roasted_lots::id, ids));
        let rows: Vec<ItemRow> = on_backend!(self.conn()?, |c| query.load(c)).store()?;
        items(rows)
    }

    fn blended_lot_items(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        item_page!(self, blended_lots, blended_date, blended_date, from, page)
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

    fn put_listing_items(&mut self, kind: LotKind, items: &[RenderedItem]) -> StoreResult<()> {
        for item in items {
            let id = item.id.to_string();
            match self.conn()? {
                AnyConnection::Postgresql(c) => KeptItemUpdate {
                    table: table_of(kind),
                    id: &id,
                    json: &item.json,
                }
                .execute(c),
                conn => {
                    let json = Some(item.json.as_str());
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
                }
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
mod tests {
    use diesel::sql_types::BigInt;
    use roastery_domain::page::Limit;
    use roastery_ports::Store;
    use roastery_ports::repo::GreenLotRepo;
    use roastery_test_support::contract::green_lot::{green_lot, locations};
    use roastery_test_support::database;

    use super::*;
    use crate::DieselStore;

    #[derive(QueryableByName, Debug, PartialEq, Eq)]
    struct Plans {
        #[diesel(sql_type = BigInt)]
        generic_plans: i64,
        #[diesel(sql_type = BigInt)]
        custom_plans: i64,
    }

    /// The first page of a listing on PostgreSQL is one kept statement whose generic plan is
    /// kept too: after PostgreSQL's five trial custom plans, none is made again.
    #[test]
    fn a_first_page_on_postgresql_keeps_its_generic_plan() {
        let Some(db) = database::postgres("listing_plan") else {
            return;
        };
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        let [here, _] = locations(&store);
        store
            .write(|tx| {
                for n in 1..=40 {
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
        let page = PageRequest {
            limit: Limit::parse(Some(10)).unwrap(),
            after: None,
        };
        for _ in 0..20 {
            let items = store
                .read_statement(|tx| Ok(tx.green_lot_items(None, &page)?))
                .unwrap()
                .expect("kept");
            assert_eq!(items.len(), 11);
        }
        let plans: Vec<Plans> = store
            .read_statement(|tx| {
                Ok(diesel::sql_query(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements \
                     WHERE statement LIKE '%listing_item%' AND statement LIKE '%LIMIT 11'",
                )
                .load(tx.conn()?)
                .store()?)
            })
            .unwrap();
        assert_eq!(plans.len(), 1, "one kept statement: {plans:?}");
        assert!(plans[0].custom_plans <= 5, "{plans:?}");
        assert!(plans[0].generic_plans >= 15, "{plans:?}");
    }
}
