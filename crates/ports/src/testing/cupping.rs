//! In-memory cuppings.
//!
//! [`CuppingRepo::lot_exists`] finds the green, roasted and blended lots of the in-memory store;
//! use-case tests that need a lot but not its story may also register a bare lot id with
//! [`register_lot`].

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};

use roastery_domain::cupping::{CuppedCoffee, Cupping};
use roastery_domain::cupping_result::{CuppingResult, Score, ScoringState};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::LotKind;
use uuid::Uuid;

use super::store::{InMemoryStore, MemTx, page_newest_first};
use crate::Store;
use crate::error::StoreError;
use crate::lock::ForUpdate;
use crate::repo::*;

/// `ids` in their order, each at its first place only (what a database lookup answers).
fn each_once(ids: &[Uuid]) -> impl Iterator<Item = &Uuid> {
    (ids.iter().enumerate())
        .filter(|(i, id)| !ids.iter().take(*i).any(|seen| seen == *id))
        .map(|(_, id)| id)
}

/// Makes a lot of `kind` with this id exist for [`CuppingRepo::lot_exists`].
pub fn register_lot(store: &InMemoryStore, kind: LotKind, id: Uuid) {
    store
        .write(|tx| {
            tx.data.cupping.lots.insert((kind, id));
            Ok(())
        })
        .unwrap_or_default();
}

impl CuppingRepo for MemTx {
    fn cupping_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Cupping>>> {
        crate::locked::cupping_for_update(self, id)
    }

    fn lot_exists(&mut self, kind: LotKind, id: Uuid) -> StoreResult<bool> {
        let stored = match kind {
            LotKind::Green => self.green_lot(id)?.is_some(),
            LotKind::Roasted => self.roasted_lot(id)?.is_some(),
            LotKind::Blended => self.blended_lot(id)?.is_some(),
        };
        Ok(stored || self.data.cupping.lots.contains(&(kind, id)))
    }

    fn insert_cupping(&mut self, cupping: &Cupping) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Cupping, cupping.id()),
            Change::Created,
        );
        // The database's unique keys: cupping id and number, cupped coffee id and number.
        let stored = &self.data.cupping.cuppings;
        let coffees: Vec<&CuppedCoffee> = (stored.iter())
            .flat_map(|c| c.coffees())
            .chain(cupping.coffees())
            .collect();
        let twice = |same: &dyn Fn(&CuppedCoffee, &CuppedCoffee) -> bool| {
            (coffees.iter().enumerate())
                .any(|(i, a)| coffees.iter().skip(i + 1).any(|b| same(a, b)))
        };
        if stored
            .iter()
            .any(|c| c.id() == cupping.id() || c.number() == cupping.number())
            || twice(&|a, b| a.id == b.id)
            || twice(&|a, b| a.number == b.number)
        {
            return Err(StoreError::Duplicate(format!("cupping {}", cupping.id())));
        }
        self.data.cupping.cuppings.push(cupping.clone());
        Ok(())
    }

    fn cupping(&mut self, id: Uuid) -> StoreResult<Option<Cupping>> {
        Ok(self
            .data
            .cupping
            .cuppings
            .iter()
            .find(|c| c.id() == id)
            .cloned())
    }

    fn update_cupping_state(&mut self, cupping: &ForUpdate<Cupping>) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Cupping, cupping.id()),
            Change::Updated,
        );
        let (id, state) = (cupping.id(), cupping.state());
        if let Some(c) = self.data.cupping.cuppings.iter_mut().find(|c| c.id() == id) {
            *c = Cupping::restore(
                c.id(),
                c.number(),
                c.start_date(),
                state,
                c.cupping_sheet().to_owned(),
                c.coffees().to_vec(),
            );
        }
        Ok(())
    }

    fn list_cuppings(
        &mut self,
        filter: &CuppingFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Cupping>> {
        page_newest_first(
            self.data
                .cupping
                .cuppings
                .iter()
                .filter(|c| filter.matches(c))
                .cloned(),
            |c| (c.start_date(), c.id()),
            page,
        )
    }

    fn cuppings_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Cupping>> {
        Ok(each_once(ids)
            .filter_map(|id| {
                self.data
                    .cupping
                    .cuppings
                    .iter()
                    .find(|c| c.id() == *id)
                    .cloned()
            })
            .collect())
    }

    fn insert_cupping_results(&mut self, results: &[CuppingResult]) -> StoreResult<()> {
        for (i, r) in results.iter().enumerate() {
            // The database's keys: a unique id, and a cupped coffee that is stored.
            let stored = &self.data.cupping.results;
            if (stored.iter().chain(results.iter().take(i))).any(|s| s.id == r.id) {
                return Err(StoreError::Duplicate(format!("cupping result {}", r.id)));
            }
            if !(self.data.cupping.cuppings.iter()).any(|c| c.coffee(r.cupped_coffee_id).is_some())
            {
                return Err(StoreError::Internal(format!(
                    "cupped coffee {} is not stored",
                    r.cupped_coffee_id
                )));
            }
        }
        self.data.cupping.results.extend_from_slice(results);
        Ok(())
    }

    fn cupping_results(&mut self, cupped_coffee_ids: &[Uuid]) -> StoreResult<Vec<CuppingResult>> {
        let mut found = Vec::new();
        for id in each_once(cupped_coffee_ids) {
            let mut of_coffee: Vec<CuppingResult> = self
                .data
                .cupping
                .results
                .iter()
                .filter(|r| r.cupped_coffee_id == *id)
                .cloned()
                .collect();
            of_coffee.sort_by_key(|r| (r.recorded_at, r.id));
            found.extend(of_coffee);
        }
        Ok(found)
    }

    fn result_scores(
        &mut self,
        cupped_coffee_ids: &[Uuid],
    ) -> StoreResult<Vec<(Uuid, Score, ScoringState)>> {
        Ok(self
            .data
            .cupping
            .results
            .iter()
            .filter(|r| cupped_coffee_ids.contains(&r.cupped_coffee_id))
            .map(|r| (r.cupped_coffee_id, r.final_score, r.scoring_state))
            .collect())
    }
}
