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
use crate::time::{from_db, to_db};

use crate::schema::*;

/// Most values bound in one `IN (...)` list, well below the limits of both databases.
const IN_CHUNK: usize = 500;

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

#[derive(Queryable, Insertable)]
#[diesel(table_name = cuppings)]
struct CuppingRow {
    id: String,
    cupping_number: i64,
    start_date: chrono::NaiveDateTime,
    state: String,
    cupping_sheet: String,
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = cupped_coffees)]
struct CoffeeRow {
    id: String,
    cupping_id: String,
    position: i32,
    coffee_number: i64,
    lot_id: String,
    lot_type: String,
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = cupping_results)]
struct ResultRow {
    id: String,
    cupped_coffee_id: String,
    final_score: i64,
    scoring_state: String,
    evaluator: Option<String>,
    note: Option<String>,
    sensorial_attributes: String,
    recorded_at: chrono::NaiveDateTime,
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
    /// Rebuilds cuppings from their rows and the rows of their coffees, keeping the row order.
    fn restore_cuppings(&mut self, rows: Vec<CuppingRow>) -> StoreResult<Vec<Cupping>> {
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let mut coffees: HashMap<String, Vec<CuppedCoffee>> = HashMap::new();
        for chunk in ids.chunks(IN_CHUNK) {
            let coffee_rows: Vec<CoffeeRow> = cupped_coffees::table
                .filter(cupped_coffees::cupping_id.eq_any(chunk))
                .order((cupped_coffees::cupping_id, cupped_coffees::position))
                .load(self.conn()?)
                .store()?;
            for row in coffee_rows {
                let coffee = CuppedCoffee {
                    id: uuid("cupped coffee", &row.id)?,
                    number: row.coffee_number,
                    lot: lot_ref(&row.lot_id, &row.lot_type)?,
                };
                coffees.entry(row.cupping_id).or_default().push(coffee);
            }
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
        let texts: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let mut rows: Vec<CuppingRow> = Vec::with_capacity(ids.len());
        for chunk in texts.chunks(IN_CHUNK) {
            rows.extend(
                cuppings::table
                    .filter(cuppings::id.eq_any(chunk))
                    .load::<CuppingRow>(self.conn()?)
                    .store()?,
            );
        }
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
        let texts: Vec<String> = cupped_coffee_ids.iter().map(Uuid::to_string).collect();
        let mut by_coffee: HashMap<Uuid, Vec<CuppingResult>> = HashMap::new();
        for chunk in texts.chunks(IN_CHUNK) {
            let rows: Vec<ResultRow> = cupping_results::table
                .filter(cupping_results::cupped_coffee_id.eq_any(chunk))
                .order((cupping_results::recorded_at, cupping_results::id))
                .load(self.conn()?)
                .store()?;
            for row in rows {
                let r = row.into_domain()?;
                by_coffee.entry(r.cupped_coffee_id).or_default().push(r);
            }
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
        let texts: Vec<String> = cupped_coffee_ids.iter().map(Uuid::to_string).collect();
        let mut scores = Vec::new();
        for chunk in texts.chunks(IN_CHUNK) {
            let rows: Vec<(String, i64, String)> = cupping_results::table
                .filter(cupping_results::cupped_coffee_id.eq_any(chunk))
                .select((
                    cupping_results::cupped_coffee_id,
                    cupping_results::final_score,
                    cupping_results::scoring_state,
                ))
                .load(self.conn()?)
                .store()?;
            for (id, final_score, state) in rows {
                scores.push((
                    uuid("cupping result", &id)?,
                    score("finalScore", final_score)?,
                    scoring_state(&state)?,
                ));
            }
        }
        Ok(scores)
    }
}
