//! Stored physical analyses.

use diesel::prelude::*;
use roastery_domain::decimal::from_micros;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::physical_analysis::{Defect, PhysicalAnalysis, ScreenSize};
use roastery_ports::StoreError;
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::*;
use serde::{Deserialize, Serialize};

use crate::cupping::{lot_ref, lot_type, micros};
use crate::error::{OrStoreError, corrupt};
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

#[derive(Queryable, Insertable)]
#[diesel(table_name = physical_analyses)]
struct AnalysisRow {
    id: String,
    analysis_number: i64,
    analysis_date: chrono::NaiveDateTime,
    lot_id: String,
    lot_type: String,
    moisture: Option<i64>,
    water_activity: Option<i64>,
    density: Option<i64>,
    screen_sizes: String,
    defects: String,
    note: Option<String>,
    evaluator: Option<String>,
}

/// A screen size in its JSON column; the percentage in micro-units keeps it exact.
#[derive(Serialize, Deserialize)]
struct ScreenSizeJson {
    size: String,
    percentage: i64,
}

#[derive(Serialize, Deserialize)]
struct DefectJson {
    name: String,
    count: i32,
}

fn json<T: Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(e.to_string()))
}

impl AnalysisRow {
    fn from_domain(a: &PhysicalAnalysis) -> StoreResult<Self> {
        let measure =
            |what, v: Option<rust_decimal::Decimal>| v.map(|v| micros(what, v)).transpose();
        let sizes = a
            .screen_sizes
            .iter()
            .map(|s| {
                Ok(ScreenSizeJson {
                    size: s.size.clone(),
                    percentage: micros("screen size", s.percentage)?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let defects: Vec<DefectJson> = a
            .defects
            .iter()
            .map(|d| DefectJson {
                name: d.name.clone(),
                count: d.count,
            })
            .collect();
        Ok(Self {
            id: a.id.to_string(),
            analysis_number: a.number,
            analysis_date: to_db(a.analysis_date),
            lot_id: a.analysed_lot.id.to_string(),
            lot_type: lot_type(a.analysed_lot.kind).to_owned(),
            moisture: measure("moisture", a.moisture)?,
            water_activity: measure("water activity", a.water_activity)?,
            density: measure("density", a.density)?,
            screen_sizes: json(&sizes)?,
            defects: json(&defects)?,
            note: a.note.clone(),
            evaluator: a.evaluator.clone(),
        })
    }

    fn into_domain(self) -> StoreResult<PhysicalAnalysis> {
        let sizes: Vec<ScreenSizeJson> = serde_json::from_str(&self.screen_sizes)
            .map_err(|e| corrupt("physical analysis", e))?;
        let defects: Vec<DefectJson> =
            serde_json::from_str(&self.defects).map_err(|e| corrupt("physical analysis", e))?;
        Ok(PhysicalAnalysis {
            id: uuid("physical analysis", &self.id)?,
            number: self.analysis_number,
            analysis_date: from_db(self.analysis_date),
            analysed_lot: lot_ref(&self.lot_id, &self.lot_type)?,
            moisture: self.moisture.map(from_micros),
            water_activity: self.water_activity.map(from_micros),
            density: self.density.map(from_micros),
            screen_sizes: sizes
                .into_iter()
                .map(|s| ScreenSize {
                    size: s.size,
                    percentage: from_micros(s.percentage),
                })
                .collect(),
            defects: defects
                .into_iter()
                .map(|d| Defect {
                    name: d.name,
                    count: d.count,
                })
                .collect(),
            note: self.note,
            evaluator: self.evaluator,
        })
    }
}

impl PhysicalRepo for DieselTx {
    fn insert_physical_analysis(&mut self, analysis: &PhysicalAnalysis) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::PhysicalAnalysis, analysis.id),
            Change::Created,
        );
        diesel::insert_into(physical_analyses::table)
            .values(AnalysisRow::from_domain(analysis)?)
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn list_physical_analyses(
        &mut self,
        filter: &PhysicalFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<PhysicalAnalysis>> {
        let mut query = physical_analyses::table.into_boxed();
        if let Some(from) = filter.from {
            query = query.filter(physical_analyses::analysis_date.ge(to_db(from)));
        }
        if let Some(to) = filter.to {
            query = query.filter(physical_analyses::analysis_date.lt(to_db(to)));
        }
        if !filter.lot_ids.is_empty() {
            // At most 100 ids: the use case checks it.
            let ids: Vec<String> = filter.lot_ids.iter().map(ToString::to_string).collect();
            query = query.filter(physical_analyses::lot_id.eq_any(ids));
        }
        let rows: Vec<AnalysisRow> = newest_first!(
            query,
            page,
            physical_analyses::analysis_date,
            physical_analyses::id
        )
        .load(self.conn()?)
        .store()?;
        let items = rows
            .into_iter()
            .map(AnalysisRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |a| {
            (a.analysis_date, a.id)
        }))
    }
}
