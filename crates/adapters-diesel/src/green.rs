//! Stored green lots.
//!
//! Weights and prices are integer micro-units with their unit or currency code beside them;
//! projects and details are small JSON documents in text columns.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamp};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::page::{Page, PageRequest};
use roastery_ports::StoreError;
use roastery_ports::lock::{ForUpdate, Rows};
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::{GreenLotRepo, StoreResult};
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::OrStoreError;
use crate::green_row::{GreenLotChange, GreenLotRow, into_lots};
use crate::held_writes::HeldWrite;
use crate::store::DieselTx;
use crate::time::to_db;

use crate::schema::green_lots;

/// The unique index that keeps one active lot per origin and location.
/// PostgreSQL names the index that refused a row; SQLite names its columns.
const ONE_ACTIVE_PER_LOCATION: [&str; 2] = [
    "green_lots_one_active_per_location",
    "green_lots.origin_id, green_lots.location_id",
];

/// [`GreenLotChange`] written to the lot `id`, its listing item cleared (the unit of work stores
/// the new one), as a statement each PostgreSQL connection prepares once and keeps: Diesel's
/// builder never keeps an `UPDATE`, and this one runs at every weight change and transfer.
struct KeptGreenLotUpdate<'a> {
    change: &'a GreenLotChange,
    /// The lot's listing item, or `None` (cleared: stored later in the unit of work).
    item: Option<&'a str>,
    id: &'a str,
}

kept_statement!(KeptGreenLotUpdate);

impl QueryFragment<Pg> for KeptGreenLotUpdate<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        push_green_lot_update(&mut out, self.change, &self.item, self.id)
    }
}

/// `UPDATE green_lots SET …` of `change` and `item` to the lot `id` (no `RETURNING`).
pub(crate) fn push_green_lot_update<'b, I>(
    out: &mut AstPass<'_, 'b, Pg>,
    change: &'b GreenLotChange,
    item: &'b I,
    id: &'b str,
) -> QueryResult<()>
where
    I: diesel::serialize::ToSql<Nullable<Text>, Pg>,
{
    // Every field named, none left to `..`: a column added to the change and not written
    // here is a compile error, so this statement and SQLite's derived one stay the same.
    let GreenLotChange {
        name,
        ico_number,
        external_id,
        weight_micros,
        weight_unit,
        consumed_at,
        price_micros,
        price_currency,
        location_id,
        projects,
        details,
        last_modified_date,
    } = change;
    out.push_sql("UPDATE green_lots SET name = ");
    out.push_bind_param::<Text, _>(name)?;
    out.push_sql(", ico_number = ");
    out.push_bind_param::<Nullable<Text>, _>(ico_number)?;
    out.push_sql(", external_id = ");
    out.push_bind_param::<Nullable<Text>, _>(external_id)?;
    out.push_sql(", weight_micros = ");
    out.push_bind_param::<BigInt, _>(weight_micros)?;
    out.push_sql(", weight_unit = ");
    out.push_bind_param::<Text, _>(weight_unit)?;
    out.push_sql(", consumed_at = ");
    out.push_bind_param::<Nullable<Timestamp>, _>(consumed_at)?;
    out.push_sql(", price_micros = ");
    out.push_bind_param::<Nullable<BigInt>, _>(price_micros)?;
    out.push_sql(", price_currency = ");
    out.push_bind_param::<Nullable<Text>, _>(price_currency)?;
    out.push_sql(", location_id = ");
    out.push_bind_param::<Nullable<Text>, _>(location_id)?;
    out.push_sql(", projects = ");
    out.push_bind_param::<Text, _>(projects)?;
    out.push_sql(", details = ");
    out.push_bind_param::<Text, _>(details)?;
    out.push_sql(", last_modified_date = ");
    out.push_bind_param::<Timestamp, _>(last_modified_date)?;
    out.push_sql(", listing_item = ");
    out.push_bind_param::<Nullable<Text>, _>(item)?;
    out.push_sql(" WHERE id = ");
    out.push_bind_param::<Text, _>(id)?;
    Ok(())
}

impl DieselTx {
    /// Inserts a new green lot's row with its listing item (`None`: missing).
    pub(crate) fn insert_green_lot_row(
        &mut self,
        lot: &GreenLot,
        item: Option<&str>,
    ) -> StoreResult<()> {
        self.locked_origin = None;
        self.record_change(Subject::new(Resource::GreenLot, lot.id), Change::Created);
        match diesel::insert_into(green_lots::table)
            .values((
                GreenLotRow::from_domain(lot)?,
                green_lots::listing_item.eq(item),
            ))
            .execute(self.conn()?)
            .store()
        {
            // A concurrent transaction created the active lot of this origin at this location
            // after this one looked for it: run the unit of work again, it will merge.
            Err(StoreError::Duplicate(message))
                if ONE_ACTIVE_PER_LOCATION.iter().any(|m| message.contains(m)) =>
            {
                Err(StoreError::Contention)
            }
            other => other.map(drop),
        }
    }

    /// Writes a green lot's row with its listing item (`None`: cleared).
    pub(crate) fn write_green_lot(
        &mut self,
        lot: &ForUpdate<GreenLot>,
        item: Option<&str>,
    ) -> StoreResult<()> {
        self.locked_origin = None;
        self.record_change(Subject::new(Resource::GreenLot, lot.id), Change::Updated);
        let change = GreenLotRow::from_domain(lot)?.change();
        let id = lot.id.to_string();
        if self.held.is_some() {
            return self.hold(HeldWrite::GreenLot {
                change: Box::new(change),
                item: item.map(str::to_owned),
                id,
            });
        }
        let updated = match self.conn()? {
            AnyConnection::Postgresql(c) => KeptGreenLotUpdate {
                change: &change,
                item,
                id: &id,
            }
            .execute(c),
            conn => diesel::update(green_lots::table.find(&id))
                .set((change, green_lots::listing_item.eq(item)))
                .execute(conn),
        }
        .store()?;
        if updated == 0 {
            return Err(StoreError::Internal(format!(
                "green lot {} is not stored",
                lot.id
            )));
        }
        Ok(())
    }
}

impl GreenLotRepo for DieselTx {
    fn green_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<GreenLot>>> {
        roastery_ports::locked::green_lot_for_update(self, id)
    }

    fn green_lot_to_transfer(
        &mut self,
        id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<(ForUpdate<GreenLot>, Option<ForUpdate<GreenLot>>)>> {
        roastery_ports::locked::green_lot_to_transfer(self, id, location_id)
    }

    fn insert_green_lot(&mut self, lot: &GreenLot) -> StoreResult<()> {
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.green(lot);
        self.insert_green_lot_row(lot, None)
    }

    fn update_green_lot(&mut self, lot: &ForUpdate<GreenLot>) -> StoreResult<()> {
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.green(lot);
        self.write_green_lot(lot, None)
    }

    fn green_lot(&mut self, id: Uuid) -> StoreResult<Option<GreenLot>> {
        let key = id.to_string();
        let locked = self.locks_green_lot_on_load(&key);
        if !locked && let Some(row) = self.locked_origin.as_ref().and_then(|o| o.lot(&key)) {
            return row.clone().into_domain().map(Some);
        }
        let query = green_lots::table.find(key);
        let row = match self.conn()? {
            AnyConnection::Postgresql(c) if locked => query
                .select(GreenLotRow::as_select())
                .for_update()
                .first::<GreenLotRow>(c)
                .optional(),
            conn => query
                .select(GreenLotRow::as_select())
                .first::<GreenLotRow>(conn)
                .optional(),
        };
        row.store()?.map(GreenLotRow::into_domain).transpose()
    }

    fn green_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<GreenLot>>> {
        ForUpdate::load(self, Rows::GreenLots(ids), |tx| match ids {
            // One lot: loaded by the loader that takes its lock (`lock.rs`).
            [id] => Ok(tx.green_lot(*id)?.into_iter().collect()),
            _ => tx.green_lots_by_ids(ids),
        })
        .map(ForUpdate::into_each)
    }

    fn green_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<GreenLot>> {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let keys: Vec<String> = chunk.iter().map(Uuid::to_string).collect();
            let rows: Vec<GreenLotRow> = green_lots::table
                .select(GreenLotRow::as_select())
                .filter(green_lots::id.eq_any(keys))
                .load(self.conn()?)
                .store()?;
            found.extend(into_lots(rows)?);
        }
        Ok(ids
            .iter()
            .filter_map(|id| found.iter().find(|l| l.id == *id).cloned())
            .collect())
    }

    fn green_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<GreenLot>> {
        green_lots::table
            .filter(green_lots::external_id.eq(external_id))
            .select(GreenLotRow::as_select())
            .first::<GreenLotRow>(self.conn()?)
            .optional()
            .store()?
            .map(GreenLotRow::into_domain)
            .transpose()
    }

    fn active_green_lot_at(
        &mut self,
        origin_id: Uuid,
        location_id: Uuid,
    ) -> StoreResult<Option<GreenLot>> {
        let (origin_id, location_id) = (origin_id.to_string(), location_id.to_string());
        if let Some(known) =
            (self.locked_origin.as_ref()).and_then(|o| o.active_at(&origin_id, &location_id))
        {
            return known.cloned().map(GreenLotRow::into_domain).transpose();
        }
        green_lots::table
            .filter(green_lots::origin_id.eq(origin_id))
            .filter(green_lots::location_id.eq(location_id))
            .filter(green_lots::consumed_at.is_null())
            .select(GreenLotRow::as_select())
            .first::<GreenLotRow>(self.conn()?)
            .optional()
            .store()?
            .map(GreenLotRow::into_domain)
            .transpose()
    }

    fn list_green_lots(
        &mut self,
        modified_from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<GreenLot>> {
        let mut query = green_lots::table
            .select(GreenLotRow::as_select())
            .into_boxed();
        if let Some(from) = modified_from {
            query = query.filter(green_lots::last_modified_date.ge(to_db(from)));
        }
        let rows: Vec<GreenLotRow> =
            newest_first!(query, page, green_lots::registration_date, green_lots::id)
                .load(self.conn()?)
                .store()?;
        Ok(Page::from_overfetch(into_lots(rows)?, page.limit, |l| {
            (l.registration_date, l.id)
        }))
    }
}
