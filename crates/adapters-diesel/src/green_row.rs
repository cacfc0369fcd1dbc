//! A green lot as stored: its row, the columns an update writes, and the lots of an origin a
//! transfer's lock reads.

use chrono::NaiveDateTime;
use diesel::PgConnection;
use diesel::prelude::*;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::price::{Currency, Price};
use roastery_domain::stock::Stock;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::StoreError;
use roastery_ports::repo::StoreResult;
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::roast::{projects_from_db, projects_to_db};
use crate::row::uuid;
use crate::schema::green_lots;
use crate::time::{StoredInstant, from_db, to_db};

#[derive(Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = green_lots)]
pub(crate) struct GreenLotRow {
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

    pub(crate) fn lot(&self, id: &str) -> Option<&GreenLotRow> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// The active lot of `origin_id` at `location_id`, or `None` when these are not that
    /// origin's lots.
    pub(crate) fn active_at(
        &self,
        origin_id: &str,
        location_id: &str,
    ) -> Option<Option<&GreenLotRow>> {
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
    let rows = match keys {
        // A transfer's lock: the origin as a scalar subquery, which PostgreSQL plans once and
        // keeps (its generic plan is the custom one). The semi-join of several keys below is
        // planned again at every call; for a hot lot's transfers that planning (the search of
        // join orders, reading the statistics) was about a third of PostgreSQL's time.
        [key] => green_lots::table
            .select(GreenLotRow::as_select())
            .filter(
                green_lots::origin_id.nullable().eq(asked
                    .select(asked.field(green_lots::origin_id))
                    .filter(asked.field(green_lots::id).eq(key))
                    .single_value()),
            )
            .order(green_lots::id)
            .for_update()
            .load(c)?,
        keys => green_lots::table
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
            .load(c)?,
    };
    Ok(LockedOrigin { rows })
}

/// The columns an update writes: everything but the id, origin, number and registration date.
#[derive(AsChangeset)]
#[diesel(table_name = green_lots, treat_none_as_null = true)]
pub(crate) struct GreenLotChange {
    pub(crate) name: String,
    pub(crate) ico_number: Option<String>,
    pub(crate) external_id: Option<String>,
    pub(crate) weight_micros: i64,
    pub(crate) weight_unit: String,
    pub(crate) consumed_at: Option<NaiveDateTime>,
    pub(crate) price_micros: Option<i64>,
    pub(crate) price_currency: Option<String>,
    pub(crate) location_id: Option<String>,
    pub(crate) projects: String,
    pub(crate) details: String,
    pub(crate) last_modified_date: NaiveDateTime,
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
    pub(crate) fn from_domain(l: &GreenLot) -> StoreResult<Self> {
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
            projects: projects_to_db(&l.projects)?,
            details: details_json(&l.details)?,
            registration_date: to_db(l.registration_date),
            last_modified_date: to_db(l.last_modified_date),
        })
    }

    pub(crate) fn change(self) -> GreenLotChange {
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

    pub(crate) fn into_domain(self) -> StoreResult<GreenLot> {
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
            projects: projects_from_db("green lot", &self.projects)?,
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

pub(crate) fn into_lots(rows: Vec<GreenLotRow>) -> StoreResult<Vec<GreenLot>> {
    rows.into_iter().map(GreenLotRow::into_domain).collect()
}
