//! Stored cuppings, cupped coffees and cupping results, and the lot existence check that
//! cuppings and physical analyses share.

use roastery_domain::event::{Change, Resource, Subject};
use roastery_ports::repo::EventRepo as _;
use std::collections::HashMap;

use diesel::prelude::*;
use roastery_domain::cupping::{CuppedCoffee, Cupping, CuppingState};
use roastery_domain::cupping_result::{CuppingResult, Score, ScoringState, SensorialAttribute};
use roastery_domain::decimal::{from_micros, to_micros};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_ports::StoreError;
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::*;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

use crate::schema::*;

const COFFEES_OF_CUPPINGS: &str = "SELECT id, cupping_id, position, coffee_number, lot_id, \
     lot_type FROM cupped_coffees WHERE cupping_id {ids} ORDER BY cupping_id, position";

const CUPPINGS_BY_IDS: &str = "SELECT id, cupping_number, start_date, state, cupping_sheet \
     FROM cuppings WHERE id {ids}";

const RESULTS_OF_COFFEES: &str = "SELECT id, cupped_coffee_id, final_score, scoring_state, \
     evaluator, note, sensorial_attributes, recorded_at FROM cupping_results \
     WHERE cupped_coffee_id {ids} ORDER BY recorded_at, id";

const SCORES_OF_COFFEES: &str = "SELECT cupped_coffee_id, final_score, scoring_state \
     FROM cupping_results WHERE cupped_coffee_id {ids}";

pub(crate) fn lot_type(kind: LotKind) -> &'static str {
    kind.reference_type()
}

pub(crate) fn lot_ref(id: &str, reference_type: &str) -> StoreResult<TypedLotRef> {
    TypedLotRef::parse(uuid("lot reference", id)?, reference_type)
        .map_err(|e| corrupt("lot reference", e))
}

pub(crate) fn micros(what: &str, value: rust_decimal::Decimal) -> StoreResult<i64> {
    to_micros(value).ok_or_else(|| corrupt(what, value))
}

#[derive(Queryable, QueryableByName, Insertable)]
#[diesel(table_name = cuppings)]
struct CuppingRow {
    id: String,
    cupping_number: i64,
    #[diesel(deserialize_as = StoredInstant)]
    start_date: chrono::NaiveDateTime,
    state: String,
    cupping_sheet: String,
}

#[derive(Queryable, QueryableByName, Insertable)]
#[diesel(table_name = cupped_coffees)]
struct CoffeeRow {
    id: String,
    cupping_id: String,
    position: i32,
    coffee_number: i64,
    lot_id: String,
    lot_type: String,
}

#[derive(Queryable, QueryableByName, Insertable)]
#[diesel(table_name = cupping_results)]
struct ResultRow {
    id: String,
    cupped_coffee_id: String,
    final_score: i64,
    scoring_state: String,
    evaluator: Option<String>,
    note: Option<String>,
    sensorial_attributes: String,
    #[diesel(deserialize_as = StoredInstant)]
    recorded_at: chrono::NaiveDateTime,
}

/// A result's score, as the cupping's summary reads it.
#[derive(QueryableByName)]
#[diesel(table_name = cupping_results)]
struct ScoreRow {
    cupped_coffee_id: String,
    final_score: i64,
    scoring_state: String,
}

/// A sensorial attribute in its JSON column; the score in micro-units keeps it exact.
#[derive(Serialize, Deserialize)]
struct AttributeJson {
    name: String,
    score: i64,
}

fn score(what: &'static str, micros: i64) -> StoreResult<Score> {
    Score::new(what, from_micros(micros)).map_err(|e| corrupt("cupping result", e))
}

fn scoring_state(text: &str) -> StoreResult<ScoringState> {
    ScoringState::parse(text).map_err(|e| corrupt("cupping result", e))
}

impl ResultRow {
    fn from_domain(r: &CuppingResult) -> StoreResult<Self> {
        let attributes = r
            .sensorial_attributes
            .iter()
            .map(|a| {
                Ok(AttributeJson {
                    name: a.name.clone(),
                    score: micros("sensorial attribute", a.score.value())?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Self {
            id: r.id.to_string(),
            cupped_coffee_id: r.cupped_coffee_id.to_string(),
            final_score: micros("final score", r.final_score.value())?,
            scoring_state: r.scoring_state.as_str().to_owned(),
            evaluator: r.evaluator.clone(),
            note: r.note.clone(),
            sensorial_attributes: serde_json::to_string(&attributes)
                .map_err(|e| StoreError::Internal(e.to_string()))?,
            recorded_at: to_db(r.recorded_at),
        })
    }

    fn into_domain(self) -> StoreResult<CuppingResult> {
        let attributes: Vec<AttributeJson> = serde_json::from_str(&self.sensorial_attributes)
            .map_err(|e| corrupt("cupping result", e))?;
        Ok(CuppingResult {
            id: uuid("cupping result", &self.id)?,
            cupped_coffee_id: uuid("cupping result", &self.cupped_coffee_id)?,
            note: self.note,
            final_score: score("finalScore", self.final_score)?,
            scoring_state: scoring_state(&self.scoring_state)?,
            evaluator: self.evaluator,
            sensorial_attributes: attributes
                .into_iter()
                .map(|a| {
                    Ok(SensorialAttribute {
                        name: a.name,
                        score: score("sensorialAttributes.score", a.score)?,
                    })
                })
                .collect::<StoreResult<Vec<_>>>()?,
            recorded_at: from_db(self.recorded_at),
        })
    }
}

impl DieselTx {
    /// Rebuilds cuppings from their rows and the rows of their coffees (one kept statement,
    /// whatever the number of cuppings), keeping the row order.
    fn restore_cuppings(&mut self, rows: Vec<CuppingRow>) -> StoreResult<Vec<Cupping>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let ids = rows
            .iter()
            .map(|r| uuid("cupping", &r.id))
            .collect::<StoreResult<Vec<Uuid>>>()?;
        let mut coffees: HashMap<String, Vec<CuppedCoffee>> = HashMap::new();
        let coffee_rows: Vec<CoffeeRow> = self.load_for_ids(COFFEES_OF_CUPPINGS, &ids)?;
        for row in coffee_rows {
            let coffee = CuppedCoffee {
                id: uuid("cupped coffee", &row.id)?,
                number: row.coffee_number,
                lot: lot_ref(&row.lot_id, &row.lot_type)?,
            };
            coffees.entry(row.cupping_id).or_default().push(coffee);
        }
        rows.into_iter()
            .map(|row| {
                Ok(Cupping::restore(
                    uuid("cupping", &row.id)?,
                    row.cupping_number,
                    from_db(row.start_date),
                    CuppingState::parse(&row.state).map_err(|e| corrupt("cupping", e))?,
                    row.cupping_sheet,
                    coffees.remove(&row.id).unwrap_or_default(),
                ))
            })
            .collect()
    }
}

impl CuppingRepo for DieselTx {
    fn cupping_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Cupping>>> {
        roastery_ports::locked::cupping_for_update(self, id)
    }

    fn lot_exists(&mut self, kind: LotKind, id: Uuid) -> StoreResult<bool> {
        let id = id.to_string();
        let count: i64 = match kind {
            LotKind::Green => green_lots::table
                .filter(green_lots::id.eq(id))
                .count()
                .get_result(self.conn()?),
            LotKind::Roasted => roasted_lots::table
                .filter(roasted_lots::id.eq(id))
                .count()
                .get_result(self.conn()?),
            LotKind::Blended => blended_lots::table
                .filter(blended_lots::id.eq(id))
                .count()
                .get_result(self.conn()?),
        }
        .store()?;
        Ok(count > 0)
    }

    fn insert_cupping(&mut self, c: &Cupping) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Cupping, c.id()), Change::Created);
        diesel::insert_into(cuppings::table)
            .values(CuppingRow {
                id: c.id().to_string(),
                cupping_number: c.number(),
                start_date: to_db(c.start_date()),
                state: c.state().as_str().to_owned(),
                cupping_sheet: c.cupping_sheet().to_owned(),
            })
            .execute(self.conn()?)
            .store()?;
        let rows = c
            .coffees()
            .iter()
            .enumerate()
            .map(|(position, cc)| CoffeeRow {
                id: cc.id.to_string(),
                cupping_id: c.id().to_string(),
                position: i32::try_from(position).unwrap_or(i32::MAX),
                coffee_number: cc.number,
                lot_id: cc.lot.id.to_string(),
                lot_type: lot_type(cc.lot.kind).to_owned(),
            })
            .collect::<Vec<_>>();
        // One statement per row: batch inserts are not portable through the multi-backend
        // connection. A cupping holds at most 100 coffees.
        for row in rows {
            diesel::insert_into(cupped_coffees::table)
                .values(row)
                .execute(self.conn()?)
                .store()?;
        }
        Ok(())
    }

    fn cupping(&mut self, id: Uuid) -> StoreResult<Option<Cupping>> {
        let row: Option<CuppingRow> = cuppings::table
            .find(id.to_string())
            .first(self.conn()?)
            .optional()
            .store()?;
        Ok(self.restore_cuppings(row.into_iter().collect())?.pop())
    }

    fn update_cupping_state(&mut self, cupping: &ForUpdate<Cupping>) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Cupping, cupping.id()),
            Change::Updated,
        );
        diesel::update(cuppings::table.find(cupping.id().to_string()))
            .set(cuppings::state.eq(cupping.state().as_str()))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn list_cuppings(
        &mut self,
        filter: &CuppingFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Cupping>> {
        let mut query = cuppings::table.into_boxed();
        if let Some(from) = filter.start_from {
            query = query.filter(cuppings::start_date.ge(to_db(from)));
        }
        if let Some(to) = filter.start_to {
            query = query.filter(cuppings::start_date.lt(to_db(to)));
        }
        if let Some(state) = filter.state {
            query = query.filter(cuppings::state.eq(state.as_str()));
        }
        let rows: Vec<CuppingRow> = newest_first!(query, page, cuppings::start_date, cuppings::id)
            .load(self.conn()?)
            .store()?;
        let items = self.restore_cuppings(rows)?;
        Ok(Page::from_overfetch(items, page.limit, |c| {
            (c.start_date(), c.id())
        }))
    }

    fn cuppings_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Cupping>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<CuppingRow> = self.load_for_ids(CUPPINGS_BY_IDS, ids)?;
        let mut by_id: HashMap<Uuid, Cupping> = self
            .restore_cuppings(rows)?
            .into_iter()
            .map(|c| (c.id(), c))
            .collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    fn insert_cupping_results(&mut self, results: &[CuppingResult]) -> StoreResult<()> {
        let rows = results
            .iter()
            .map(ResultRow::from_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        for row in rows {
            diesel::insert_into(cupping_results::table)
                .values(row)
                .execute(self.conn()?)
                .store()?;
        }
        Ok(())
    }

    fn cupping_results(&mut self, cupped_coffee_ids: &[Uuid]) -> StoreResult<Vec<CuppingResult>> {
        if cupped_coffee_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut by_coffee: HashMap<Uuid, Vec<CuppingResult>> = HashMap::new();
        let rows: Vec<ResultRow> = self.load_for_ids(RESULTS_OF_COFFEES, cupped_coffee_ids)?;
        for row in rows {
            let r = row.into_domain()?;
            by_coffee.entry(r.cupped_coffee_id).or_default().push(r);
        }
        Ok(cupped_coffee_ids
            .iter()
            .flat_map(|id| by_coffee.remove(id).unwrap_or_default())
            .collect())
    }

    fn result_scores(
        &mut self,
        cupped_coffee_ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Score, ScoringState)>> {
        if cupped_coffee_ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<ScoreRow> = self.load_for_ids(SCORES_OF_COFFEES, cupped_coffee_ids)?;
        let mut scores = Vec::with_capacity(rows.len());
        for row in rows {
            scores.push((
                uuid("cupping result", &row.cupped_coffee_id)?,
                score("finalScore", row.final_score)?,
                scoring_state(&row.scoring_state)?,
            ));
        }
        Ok(scores)
    }
}
