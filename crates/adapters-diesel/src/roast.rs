//! Stored roasted lots, their sources, details and curves (profiles in `profile.rs`).
//!
//! A roasted lot is one row; its sources (the green lots it was roasted from) are rows of
//! `roast_sources` in the order they were given, so lineage can be walked by green lot id. Curves
//! are one row each with their data points as one JSON text of `[time_ms, value_micros]` pairs: a
//! curve of 100,000 points is one insert and one read.

use roastery_domain::event::{Change, Resource, Subject};
use roastery_ports::repo::EventRepo as _;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use roastery_domain::decimal::{from_micros, to_micros};
use roastery_domain::lot_source::LotSource;
use roastery_domain::measure::{Measure, Unit};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::ProjectRef;
use roastery_domain::roast_curve::{DataPoint, RoastCurve};
use roastery_domain::roast_details::RoastDetails;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use roastery_ports::StoreError;
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::{RoastRepo, StoreResult};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::lot_source::SourceTable;
use crate::row::{uuid, weight_from_db};
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

use crate::schema::*;

/// Projects of a lot or profile, kept as one JSON text of `{"id", "name"}`.
#[derive(Serialize, Deserialize)]
struct ProjectJson {
    id: Uuid,
    name: String,
}

pub(crate) fn projects_to_db(projects: &[ProjectRef]) -> StoreResult<String> {
    let rows: Vec<ProjectJson> = projects
        .iter()
        .map(|p| ProjectJson {
            id: p.id,
            name: p.name.clone(),
        })
        .collect();
    serde_json::to_string(&rows).map_err(|e| StoreError::Internal(e.to_string()))
}

pub(crate) fn projects_from_db(what: &str, text: &str) -> StoreResult<Vec<ProjectRef>> {
    let rows: Vec<ProjectJson> = serde_json::from_str(text).map_err(|e| corrupt(what, e))?;
    Ok(rows
        .into_iter()
        .map(|p| ProjectRef {
            id: p.id,
            name: p.name,
        })
        .collect())
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = roasted_lots)]
struct RoastedLotRow {
    id: String,
    lot_number: i64,
    name: String,
    weight_micros: i64,
    weight_unit: String,
    roasted_micros: i64,
    consumed_at: Option<NaiveDateTime>,
    profile_id: Option<String>,
    location_id: String,
    #[diesel(deserialize_as = StoredInstant)]
    roasted_date: NaiveDateTime,
    projects: String,
    #[diesel(deserialize_as = StoredInstant)]
    created_at: NaiveDateTime,
    #[diesel(deserialize_as = StoredInstant)]
    last_modified_at: NaiveDateTime,
    external_id: Option<String>,
}

impl RoastedLotRow {
    fn from_domain(l: &RoastedLot) -> StoreResult<Self> {
        Ok(Self {
            id: l.id.to_string(),
            lot_number: l.lot_number,
            name: l.name.clone(),
            weight_micros: l.stock.weight().micros(),
            weight_unit: l.stock.weight().unit().as_str().to_owned(),
            roasted_micros: l.roasted_weight.to_unit(l.stock.weight().unit()).micros(),
            consumed_at: l.stock.consumed_at().map(to_db),
            profile_id: l.profile_id.map(|id| id.to_string()),
            location_id: l.location_id.to_string(),
            roasted_date: to_db(l.roasted_date),
            projects: projects_to_db(&l.projects)?,
            created_at: to_db(l.created_at),
            last_modified_at: to_db(l.last_modified_at),
            external_id: l.external_id.clone(),
        })
    }

    fn into_domain(self, sources: Vec<LotSource>) -> StoreResult<RoastedLot> {
        const WHAT: &str = "roasted lot";
        let weight = weight_from_db(WHAT, self.weight_micros, &self.weight_unit)?;
        Ok(RoastedLot {
            id: uuid(WHAT, &self.id)?,
            lot_number: self.lot_number,
            name: self.name,
            external_id: self.external_id,
            stock: Stock::restore(weight, self.consumed_at.map(from_db)),
            roasted_weight: weight_from_db(WHAT, self.roasted_micros, &self.weight_unit)?,
            sources,
            profile_id: self
                .profile_id
                .as_deref()
                .map(|id| uuid(WHAT, id))
                .transpose()?,
            location_id: uuid(WHAT, &self.location_id)?,
            roasted_date: from_db(self.roasted_date),
            projects: projects_from_db(WHAT, &self.projects)?,
            created_at: from_db(self.created_at),
            last_modified_at: from_db(self.last_modified_at),
        })
    }
}

impl DieselTx {
    /// Turns lot rows into roasted lots, loading all their sources in one query.
    fn roasted_lots_with_sources(
        &mut self,
        rows: Vec<RoastedLotRow>,
    ) -> StoreResult<Vec<RoastedLot>> {
        self.lots_with_sources(
            SourceTable::Roast,
            rows,
            |r| r.id.as_str(),
            RoastedLotRow::into_domain,
        )
    }
}

fn measure_to_db<U: Unit>(m: Option<Measure<U>>) -> (Option<i64>, Option<String>) {
    match m {
        None => (None, None),
        Some(m) => (Some(m.micros()), Some(m.unit().as_str().to_owned())),
    }
}

fn measure_from_db<U: Unit>(
    micros: Option<i64>,
    unit: Option<String>,
) -> StoreResult<Option<Measure<U>>> {
    const WHAT: &str = "roast details";
    match (micros, unit) {
        (Some(micros), Some(unit)) => {
            let unit = U::parse(&unit).map_err(|e| corrupt(WHAT, e))?;
            Measure::from_micros(micros, unit)
                .map(Some)
                .map_err(|e| corrupt(WHAT, e))
        }
        _ => Ok(None),
    }
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = roast_details)]
struct RoastDetailsRow {
    roasted_lot_id: String,
    roast_technician: Option<String>,
    note: Option<String>,
    start_temperature_micros: Option<i64>,
    start_temperature_unit: Option<String>,
    end_temperature_micros: Option<i64>,
    end_temperature_unit: Option<String>,
    roast_value_micros: Option<i64>,
    roast_value_unit: Option<String>,
    roast_value2_micros: Option<i64>,
    roast_value2_unit: Option<String>,
    roast_duration_micros: Option<i64>,
    roast_duration_unit: Option<String>,
    first_crack_time_micros: Option<i64>,
    first_crack_time_unit: Option<String>,
    color_change_time_micros: Option<i64>,
    color_change_time_unit: Option<String>,
    machine: Option<String>,
}

impl RoastDetailsRow {
    fn from_domain(lot_id: Uuid, d: &RoastDetails) -> Self {
        let (start_temperature_micros, start_temperature_unit) = measure_to_db(d.start_temperature);
        let (end_temperature_micros, end_temperature_unit) = measure_to_db(d.end_temperature);
        let (roast_value_micros, roast_value_unit) = measure_to_db(d.roast_value);
        let (roast_value2_micros, roast_value2_unit) = measure_to_db(d.roast_value2);
        let (roast_duration_micros, roast_duration_unit) = measure_to_db(d.roast_duration);
        let (first_crack_time_micros, first_crack_time_unit) = measure_to_db(d.first_crack_time);
        let (color_change_time_micros, color_change_time_unit) = measure_to_db(d.color_change_time);
        Self {
            roasted_lot_id: lot_id.to_string(),
            roast_technician: d.roast_technician.clone(),
            note: d.note.clone(),
            start_temperature_micros,
            start_temperature_unit,
            end_temperature_micros,
            end_temperature_unit,
            roast_value_micros,
            roast_value_unit,
            roast_value2_micros,
            roast_value2_unit,
            roast_duration_micros,
            roast_duration_unit,
            first_crack_time_micros,
            first_crack_time_unit,
            color_change_time_micros,
            color_change_time_unit,
            machine: d.machine.clone(),
        }
    }

    fn into_domain(self) -> StoreResult<(Uuid, RoastDetails)> {
        Ok((
            uuid("roast details", &self.roasted_lot_id)?,
            RoastDetails {
                roast_technician: self.roast_technician,
                note: self.note,
                start_temperature: measure_from_db(
                    self.start_temperature_micros,
                    self.start_temperature_unit,
                )?,
                end_temperature: measure_from_db(
                    self.end_temperature_micros,
                    self.end_temperature_unit,
                )?,
                roast_value: measure_from_db(self.roast_value_micros, self.roast_value_unit)?,
                roast_value2: measure_from_db(self.roast_value2_micros, self.roast_value2_unit)?,
                roast_duration: measure_from_db(
                    self.roast_duration_micros,
                    self.roast_duration_unit,
                )?,
                first_crack_time: measure_from_db(
                    self.first_crack_time_micros,
                    self.first_crack_time_unit,
                )?,
                color_change_time: measure_from_db(
                    self.color_change_time_micros,
                    self.color_change_time_unit,
                )?,
                machine: self.machine,
            },
        ))
    }
}

pub(crate) fn id_texts(ids: &[Uuid]) -> Vec<String> {
    ids.iter().map(Uuid::to_string).collect()
}

impl DieselTx {
    /// Inserts a roasted lot's row, with its listing item (`None`: missing), and its sources.
    pub(crate) fn insert_roasted_lot_row(
        &mut self,
        lot: &RoastedLot,
        item: Option<&str>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::RoastedLot, lot.id), Change::Created);
        diesel::insert_into(roasted_lots::table)
            .values((
                RoastedLotRow::from_domain(lot)?,
                roasted_lots::listing_item.eq(item),
            ))
            .execute(self.conn()?)
            .store()?;
        self.insert_sources(SourceTable::Roast, lot.id, &lot.sources)
    }
}

impl RoastRepo for DieselTx {
    fn roasted_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<RoastedLot>>> {
        roastery_ports::locked::roasted_lot_for_update(self, id)
    }

    fn roasted_lots_for_update(&mut self, ids: &[Uuid]) -> StoreResult<Vec<ForUpdate<RoastedLot>>> {
        roastery_ports::locked::roasted_lots_for_update(self, ids)
    }

    fn insert_roasted_lot(&mut self, lot: &RoastedLot) -> StoreResult<()> {
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.roasted(lot);
        self.insert_roasted_lot_row(lot, None)
    }

    fn update_roasted_lot_stock(&mut self, lot: &ForUpdate<RoastedLot>) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::RoastedLot, lot.id), Change::Updated);
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.roasted(lot);
        diesel::update(roasted_lots::table.find(lot.id.to_string()))
            .set((
                roasted_lots::listing_item.eq(None::<String>),
                roasted_lots::weight_micros.eq(lot.stock.weight().micros()),
                roasted_lots::consumed_at.eq(lot.stock.consumed_at().map(to_db)),
                roasted_lots::last_modified_at.eq(to_db(lot.last_modified_at)),
            ))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn roasted_lot(&mut self, id: Uuid) -> StoreResult<Option<RoastedLot>> {
        let rows: Vec<RoastedLotRow> = roasted_lots::table
            .select(RoastedLotRow::as_select())
            .filter(roasted_lots::id.eq(id.to_string()))
            .load(self.conn()?)
            .store()?;
        Ok(self.roasted_lots_with_sources(rows)?.pop())
    }

    fn roasted_lot_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<RoastedLot>> {
        let rows: Vec<RoastedLotRow> = roasted_lots::table
            .select(RoastedLotRow::as_select())
            .filter(roasted_lots::external_id.eq(external_id))
            .load(self.conn()?)
            .store()?;
        Ok(self.roasted_lots_with_sources(rows)?.pop())
    }

    fn roasted_lots_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<RoastedLot>> {
        let rows: Vec<RoastedLotRow> = roasted_lots::table
            .select(RoastedLotRow::as_select())
            .filter(roasted_lots::id.eq_any(id_texts(ids)))
            .load(self.conn()?)
            .store()?;
        self.roasted_lots_with_sources(rows)
    }

    fn list_roasted_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<RoastedLot>> {
        let mut query = roasted_lots::table
            .select(RoastedLotRow::as_select())
            .into_boxed();
        if let Some(from) = from {
            query = query.filter(roasted_lots::roasted_date.ge(to_db(from)));
        }
        let rows: Vec<RoastedLotRow> =
            newest_first!(query, page, roasted_lots::roasted_date, roasted_lots::id)
                .load(self.conn()?)
                .store()?;
        let items = self.roasted_lots_with_sources(rows)?;
        Ok(Page::from_overfetch(items, page.limit, |l| {
            (l.roasted_date, l.id)
        }))
    }

    fn insert_roast_details(&mut self, lot_id: Uuid, details: &RoastDetails) -> StoreResult<()> {
        diesel::insert_into(roast_details::table)
            .values(RoastDetailsRow::from_domain(lot_id, details))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn roast_details_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, RoastDetails)>> {
        roast_details::table
            .filter(roast_details::roasted_lot_id.eq_any(id_texts(ids)))
            .load::<RoastDetailsRow>(self.conn()?)
            .store()?
            .into_iter()
            .map(RoastDetailsRow::into_domain)
            .collect()
    }

    fn insert_roast_curves(&mut self, lot_id: Uuid, curves: &[RoastCurve]) -> StoreResult<()> {
        let id = lot_id.to_string();
        for (position, curve) in curves.iter().enumerate() {
            let points: Vec<(i64, i64)> = curve
                .data_points
                .iter()
                .map(|p| (p.time_ms, to_micros(p.value).unwrap_or_default()))
                .collect();
            let points =
                serde_json::to_string(&points).map_err(|e| StoreError::Internal(e.to_string()))?;
            diesel::insert_into(roast_curves::table)
                .values((
                    roast_curves::roasted_lot_id.eq(&id),
                    roast_curves::position.eq(i32::try_from(position).unwrap_or(i32::MAX)),
                    roast_curves::name.eq(&curve.name),
                    roast_curves::unit.eq(&curve.unit),
                    roast_curves::data_points.eq(points),
                ))
                .execute(self.conn()?)
                .store()?;
        }
        Ok(())
    }

    fn roast_curves(&mut self, lot_id: Uuid) -> StoreResult<Vec<RoastCurve>> {
        let rows: Vec<(String, String, String)> = roast_curves::table
            .filter(roast_curves::roasted_lot_id.eq(lot_id.to_string()))
            .order(roast_curves::position)
            .select((
                roast_curves::name,
                roast_curves::unit,
                roast_curves::data_points,
            ))
            .load(self.conn()?)
            .store()?;
        rows.into_iter()
            .map(|(name, unit, points)| {
                let points: Vec<(i64, i64)> =
                    serde_json::from_str(&points).map_err(|e| corrupt("roast curve", e))?;
                Ok(RoastCurve {
                    name,
                    unit,
                    data_points: points
                        .into_iter()
                        .map(|(time_ms, micros)| DataPoint {
                            time_ms,
                            value: from_micros(micros),
                        })
                        .collect(),
                })
            })
            .collect()
    }
}
