//! Stored green lots.
//!
//! Weights and prices are integer micro-units with their unit or currency code beside them;
//! projects and details are small JSON documents in text columns.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::PgConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamp};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::price::{Currency, Price};
use roastery_domain::project::ProjectRef;
use roastery_domain::stock::Stock;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::StoreError;
use roastery_ports::lock::{ForUpdate, Rows};
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::{GreenLotRepo, StoreResult};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

use crate::schema::green_lots;

/// The unique index that keeps one active lot per origin and location.
/// PostgreSQL names the index that refused a row; SQLite names its columns.
const ONE_ACTIVE_PER_LOCATION: [&str; 2] = [
    "green_lots_one_active_per_location",
    "green_lots.origin_id, green_lots.location_id",
];

#[derive(Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = green_lots)]
struct GreenLotRow {
    id: String,
    origin_id: String,
    lot_number: i64,
    name: String,
    ico_number: Option<String>,
    external_id: Option<String>,
    weight_micros: i64,
    weight_unit: String,
    consumed_at: Option<NaiveDateTime>,
    price_micros: Option<i64>,
    price_currency: Option<String>,
    location_id: Option<String>,
    projects: String,
    details: String,
    #[diesel(deserialize_as = StoredInstant)]
    registration_date: NaiveDateTime,
    #[diesel(deserialize_as = StoredInstant)]
    last_modified_date: NaiveDateTime,
}

/// Every lot of one origin, locked and read in one statement by a transfer's lock (`lock.rs`).
/// The transfer's loads of its source and of its merge target are answered from these rows:
/// two round trips fewer while the lots are locked. Under READ COMMITTED a locking read answers
/// each row's latest committed version, the one a read after the lock would see. A lot of the
/// origin created meanwhile at the destination is not among them; the transfer then creates
/// another, the one-active-lot index refuses it and the unit of work runs again
/// (`insert_green_lot`). Forgotten at the unit of work's first write of a green lot.
pub(crate) struct LockedOrigin {
    rows: Vec<GreenLotRow>,
}

impl LockedOrigin {
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    fn lot(&self, id: &str) -> Option<&GreenLotRow> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// The active lot of `origin_id` at `location_id`, or `None` when these are not that
    /// origin's lots.
    fn active_at(&self, origin_id: &str, location_id: &str) -> Option<Option<&GreenLotRow>> {
        self.rows.iter().any(|r| r.origin_id == origin_id).then(|| {
            self.rows
                .iter()
                .find(|r| r.location_id.as_deref() == Some(location_id) && r.consumed_at.is_none())
        })
    }
}

/// `SELECT <lot> FROM green_lots WHERE origin_id = ANY(<the origins of keys>) ORDER BY id FOR
/// UPDATE`: the lots are locked in primary-key order, as every lock statement locks.
pub(crate) fn lock_origin(c: &mut PgConnection, keys: &[String]) -> QueryResult<LockedOrigin> {
    let asked = diesel::alias!(green_lots as asked);
    green_lots::table
        .select(GreenLotRow::as_select())
        .filter(
            green_lots::origin_id.eq_any(
                asked
                    .select(asked.field(green_lots::origin_id))
                    .filter(asked.field(green_lots::id).eq_any(keys)),
            ),
        )
        .order(green_lots::id)
        .for_update()
        .load(c)
        .map(|rows| LockedOrigin { rows })
}

/// The columns an update writes: everything but the id, origin, number and registration date.
#[derive(AsChangeset)]
#[diesel(table_name = green_lots, treat_none_as_null = true)]
struct GreenLotChange {
    name: String,
    ico_number: Option<String>,
    external_id: Option<String>,
    weight_micros: i64,
    weight_unit: String,
    consumed_at: Option<NaiveDateTime>,
    price_micros: Option<i64>,
    price_currency: Option<String>,
    location_id: Option<String>,
    projects: String,
    details: String,
    last_modified_date: NaiveDateTime,
}

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
        } = self.change;
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
        out.push_bind_param::<Nullable<Text>, _>(&self.item)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, _>(&self.id)?;
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct ProjectJson {
    id: Uuid,
    name: String,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct DetailsJson {
    note: Option<String>,
    grade: Option<String>,
    crop_year: Option<String>,
    processing_methods: Vec<String>,
    countries_of_origin: Vec<String>,
    varieties: Vec<String>,
    certifications: Vec<String>,
}

fn projects_json(projects: &[ProjectRef]) -> StoreResult<String> {
    let rows: Vec<ProjectJson> = projects
        .iter()
        .map(|p| ProjectJson {
            id: p.id,
            name: p.name.clone(),
        })
        .collect();
    serde_json::to_string(&rows).map_err(|e| StoreError::Internal(e.to_string()))
}

fn details_json(d: &GreenLotDetails) -> StoreResult<String> {
    serde_json::to_string(&DetailsJson {
        note: d.note.clone(),
        grade: d.grade.clone(),
        crop_year: d.crop_year.clone(),
        processing_methods: d.processing_methods.clone(),
        countries_of_origin: d.countries_of_origin.clone(),
        varieties: d.varieties.clone(),
        certifications: d.certifications.clone(),
    })
    .map_err(|e| StoreError::Internal(e.to_string()))
}

impl GreenLotRow {
    fn from_domain(l: &GreenLot) -> StoreResult<Self> {
        let weight = l.weight();
        Ok(Self {
            id: l.id.to_string(),
            origin_id: l.origin_id.to_string(),
            lot_number: l.lot_number,
            name: l.name.clone(),
            ico_number: l.ico_number.clone(),
            external_id: l.external_id.clone(),
            weight_micros: weight.micros(),
            weight_unit: weight.unit().as_str().to_owned(),
            consumed_at: l.consumed_date().map(to_db),
            price_micros: l.price.map(Price::micros),
            price_currency: l.price.map(|p| p.currency().code().to_owned()),
            location_id: l.location_id.map(|id| id.to_string()),
            projects: projects_json(&l.projects)?,
            details: details_json(&l.details)?,
            registration_date: to_db(l.registration_date),
            last_modified_date: to_db(l.last_modified_date),
        })
    }

    fn change(self) -> GreenLotChange {
        GreenLotChange {
            name: self.name,
            ico_number: self.ico_number,
            external_id: self.external_id,
            weight_micros: self.weight_micros,
            weight_unit: self.weight_unit,
            consumed_at: self.consumed_at,
            price_micros: self.price_micros,
            price_currency: self.price_currency,
            location_id: self.location_id,
            projects: self.projects,
            details: self.details,
            last_modified_date: self.last_modified_date,
        }
    }

    fn into_domain(self) -> StoreResult<GreenLot> {
        let bad = |e: &dyn std::fmt::Display| corrupt("green lot", e);
        let unit = WeightUnit::parse(&self.weight_unit).map_err(|e| bad(&e))?;
        let weight = Weight::from_micros(self.weight_micros, unit).map_err(|e| bad(&e))?;
        let price = match (self.price_micros, self.price_currency) {
            (Some(micros), Some(code)) => {
                let currency = Currency::parse(&code).map_err(|e| bad(&e))?;
                Some(Price::from_micros(micros, currency).map_err(|e| bad(&e))?)
            }
            _ => None,
        };
        let projects: Vec<ProjectJson> =
            serde_json::from_str(&self.projects).map_err(|e| bad(&e))?;
        let d: DetailsJson = serde_json::from_str(&self.details).map_err(|e| bad(&e))?;
        Ok(GreenLot {
            id: uuid("green lot", &self.id)?,
            origin_id: uuid("green lot", &self.origin_id)?,
            lot_number: self.lot_number,
            name: self.name,
            ico_number: self.ico_number,
            external_id: self.external_id,
            stock: Stock::restore(weight, self.consumed_at.map(from_db)),
            price,
            location_id: self
                .location_id
                .map(|id| uuid("green lot", &id))
                .transpose()?,
            projects: projects
                .into_iter()
                .map(|p| ProjectRef {
                    id: p.id,
                    name: p.name,
                })
                .collect(),
            details: GreenLotDetails {
                note: d.note,
                grade: d.grade,
                crop_year: d.crop_year,
                processing_methods: d.processing_methods,
                countries_of_origin: d.countries_of_origin,
                varieties: d.varieties,
                certifications: d.certifications,
            },
            registration_date: from_db(self.registration_date),
            last_modified_date: from_db(self.last_modified_date),
        })
    }
}

fn into_lots(rows: Vec<GreenLotRow>) -> StoreResult<Vec<GreenLot>> {
    rows.into_iter().map(GreenLotRow::into_domain).collect()
}

impl DieselTx {
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
        let updated = match self.conn() {
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
        self.locked_origin = None;
        self.record_change(Subject::new(Resource::GreenLot, lot.id), Change::Created);
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.green(lot);
        match diesel::insert_into(green_lots::table)
            .values((
                GreenLotRow::from_domain(lot)?,
                green_lots::listing_item.eq(None::<String>),
            ))
            .execute(self.conn())
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
        let row = match self.conn() {
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
                .load(self.conn())
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
            .first::<GreenLotRow>(self.conn())
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
            .first::<GreenLotRow>(self.conn())
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
                .load(self.conn())
                .store()?;
        Ok(Page::from_overfetch(into_lots(rows)?, page.limit, |l| {
            (l.registration_date, l.id)
        }))
    }
}
