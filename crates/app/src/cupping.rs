//! quality.cupping: creating cuppings, moving them DRAFT → OPEN → CLOSED, recording results
//! while open, and reading cuppings with the summary of their included results.
//!
//! Summaries are computed from the stored results whenever a cupping is read, so they can never
//! drift from the results they summarise.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::cupping::{
    CUPPED_COFFEE_PREFIX, CUPPING_PREFIX, CuppedCoffee, Cupping, CuppingError, CuppingState,
    NewCupping, ResultsDraft,
};
use roastery_domain::cupping_result::{
    CuppingResult, NewCuppingResult, NewSensorialAttribute, ResultSummary, Score, ScoringState,
};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::operation::Operation;
use roastery_domain::page::{self, Page, PageRequest};
use roastery_domain::stock::TypedLotRef;
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::{Repos, Roastery, Store};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateCupping {
    pub start_date: DateTime<Utc>,
    pub cupping_sheet: String,
    /// `DRAFT` when absent.
    pub state: Option<CuppingState>,
    /// The lots to cup, in the order given.
    pub coffees: Vec<TypedLotRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetCuppingState {
    pub cupping_id: Uuid,
    pub state: CuppingState,
}

/// One result as a client gives it; the use case gives it its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultInput {
    pub cupped_coffee_id: Uuid,
    pub final_score: Option<Decimal>,
    pub scoring_state: Option<ScoringState>,
    pub evaluator: Option<String>,
    pub note: Option<String>,
    pub sensorial_attributes: Vec<NewSensorialAttribute>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordCuppingResults {
    pub cupping_id: Uuid,
    pub results: Vec<ResultInput>,
}

/// A cupping with the summary of each cupped coffee's included results, in coffee order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuppingView {
    pub cupping: Cupping,
    pub summaries: Vec<ResultSummary>,
}

impl CuppingView {
    /// Each cupped coffee with its summary.
    pub fn coffees(&self) -> impl Iterator<Item = (&CuppedCoffee, &ResultSummary)> {
        self.cupping.coffees().iter().zip(&self.summaries)
    }
}

impl<S: Store> Roastery<S> {
    /// Creates a cupping in the three steps of every write: parse the request (400), load the
    /// lots it cups (422 `resource_not_found`), then number the cupping and its coffees.
    pub fn create_cupping(&self, cmd: CreateCupping) -> Result<CuppingView, AppError> {
        // 1. Parse: the state, the coffee list, the sheet's name.
        let draft = NewCupping {
            start_date: cmd.start_date,
            cupping_sheet: cmd.cupping_sheet,
            state: cmd.state,
            coffees: cmd.coffees,
        }
        .parse()?;
        let id = self.ids.new_id();
        let cupping = self.write(Operation::CreateCupping, |tx| {
            // 2. Load: every lot must exist.
            for lot in draft.lots() {
                if !tx.lot_exists(lot.kind, lot.id)? {
                    return Err(CuppingError::LotNotFound(*lot).into());
                }
            }
            // 3. Decide: no rule is left to break; the numbers are drawn in the transaction, so
            //    a failed call uses none.
            let number = tx.next_number(CUPPING_PREFIX)?;
            let cupping = draft.clone().number(id, number, |_| {
                Ok::<_, AppError>((self.ids.new_id(), tx.next_number(CUPPED_COFFEE_PREFIX)?))
            })?;
            tx.insert_cupping(&cupping)?;
            Ok(cupping)
        })?;
        let summaries = vec![ResultSummary::default(); cupping.coffees().len()];
        Ok(CuppingView { cupping, summaries })
    }

    /// Moves a cupping along `DRAFT` → `OPEN` → `CLOSED`: the state comes parsed; an unknown
    /// cupping is not found, an illegal move is refused by the domain.
    pub fn set_cupping_state(&self, cmd: SetCuppingState) -> Result<CuppingView, AppError> {
        self.write(Operation::SetCuppingState, |tx| {
            let mut cupping = tx
                .cupping_for_update(cmd.cupping_id)?
                .ok_or(CuppingError::NotFound(cmd.cupping_id))?;
            cupping.apply(|c| c.set_state(cmd.state))??;
            tx.update_cupping_state(&cupping)?;
            Ok(view(tx, cupping.into_inner())?)
        })
    }

    /// Records results of an `OPEN` cupping in the three steps of every write: parse the
    /// results (400), load the cupping (422 `resource_not_found`), then let the cupping decide
    /// (a cupped coffee not its own, 422 `resource_not_found`; not `OPEN`, 422
    /// `invalid_request`).
    pub fn record_cupping_results(
        &self,
        cmd: RecordCuppingResults,
    ) -> Result<Vec<CuppingResult>, AppError> {
        let now = self.clock.now();
        // 1. Parse.
        let results = ResultsDraft::parse(
            cmd.results
                .into_iter()
                .map(|r| NewCuppingResult {
                    id: self.ids.new_id(),
                    cupped_coffee_id: r.cupped_coffee_id,
                    final_score: r.final_score,
                    scoring_state: r.scoring_state,
                    evaluator: r.evaluator,
                    note: r.note,
                    sensorial_attributes: r.sensorial_attributes,
                })
                .collect(),
            now,
        )?;
        self.write(Operation::RecordCuppingResults, |tx| {
            // 2. Load, locked: the cupping must not close before the results commit.
            let cupping = tx
                .cupping_for_update(cmd.cupping_id)?
                .ok_or(CuppingError::NotFound(cmd.cupping_id))?;
            // 3. Decide.
            let recorded = cupping.record_results(results.clone())?;
            tx.insert_cupping_results(&recorded)?;
            // Results are rows of their own; what changed for the feed is the cupping.
            tx.record_change(
                Subject::new(Resource::Cupping, cupping.id()),
                Change::Updated,
            );
            Ok(recorded)
        })
    }

    pub fn list_cuppings(
        &self,
        filter: CuppingFilter,
        page: PageRequest,
    ) -> Result<Page<CuppingView>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| {
            let found = tx.list_cuppings(&filter, &page)?;
            let next = found.next;
            Ok(Page {
                items: views(tx, found.items)?,
                next,
            })
        })
    }

    pub fn get_cuppings_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<CuppingView>, AppError> {
        page::check_by_ids("filter.cuppingIds", &ids, &page)?;
        self.store.read_replica(|tx| {
            let found = Page::from_found(tx.cuppings_by_ids(&ids)?, &page)?;
            let next = found.next;
            Ok(Page {
                items: views(tx, found.items)?,
                next,
            })
        })
    }

    pub fn list_cupping_results(
        &self,
        cupped_coffee_ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<CuppingResult>, AppError> {
        page::check_by_ids("filter.cuppedCoffeeIds", &cupped_coffee_ids, &page)?;
        self.store.read_replica(|tx| {
            let found = tx.cupping_results(&cupped_coffee_ids)?;
            Ok(Page::from_found(found, &page)?)
        })
    }
}

/// Attaches to one cupping the summaries of its cupped coffees.
fn view(tx: &mut impl Repos, cupping: Cupping) -> Result<CuppingView, StoreError> {
    let scores = scores_of(tx, std::slice::from_ref(&cupping))?;
    Ok(with_summaries(cupping, &scores))
}

/// Attaches to each cupping the summaries of its cupped coffees.
fn views(tx: &mut impl Repos, cuppings: Vec<Cupping>) -> Result<Vec<CuppingView>, StoreError> {
    let scores = scores_of(tx, &cuppings)?;
    Ok(cuppings
        .into_iter()
        .map(|cupping| with_summaries(cupping, &scores))
        .collect())
}

/// The final scores and scoring states of the results of every coffee of `cuppings`, by
/// cupped coffee id, read in one query.
fn scores_of(
    tx: &mut impl Repos,
    cuppings: &[Cupping],
) -> Result<HashMap<Uuid, Vec<(Score, ScoringState)>>, StoreError> {
    let coffee_ids: Vec<Uuid> = cuppings
        .iter()
        .flat_map(|c| c.coffees().iter().map(|cc| cc.id))
        .collect();
    let mut scores: HashMap<Uuid, Vec<_>> = HashMap::new();
    if !coffee_ids.is_empty() {
        for (coffee_id, score, state) in tx.result_scores(&coffee_ids)? {
            scores.entry(coffee_id).or_default().push((score, state));
        }
    }
    Ok(scores)
}

fn with_summaries(
    cupping: Cupping,
    scores: &HashMap<Uuid, Vec<(Score, ScoringState)>>,
) -> CuppingView {
    let summaries = cupping
        .coffees()
        .iter()
        .map(|cc| ResultSummary::from_scores(scores.get(&cc.id).into_iter().flatten().copied()))
        .collect();
    CuppingView { cupping, summaries }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use roastery_domain::FieldPath;
    use roastery_domain::Violation;
    use roastery_domain::page::Limit;
    use roastery_domain::stock::LotKind;
    use roastery_ports::testing::{InMemoryStore, register_lot};
    use std::str::FromStr;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn lot(store: &InMemoryStore, n: u128, kind: LotKind) -> TypedLotRef {
        let id = Uuid::from_u128(0xAB00 + n);
        register_lot(store, kind, id);
        TypedLotRef { id, kind }
    }

    fn create(start: i64, state: Option<CuppingState>, coffees: Vec<TypedLotRef>) -> CreateCupping {
        CreateCupping {
            start_date: at(start),
            cupping_sheet: "SCA".into(),
            state,
            coffees,
        }
    }

    fn result(cc: Uuid, score: &str, state: ScoringState) -> ResultInput {
        ResultInput {
            cupped_coffee_id: cc,
            final_score: Some(d(score)),
            scoring_state: Some(state),
            evaluator: Some("Ana".into()),
            note: None,
            sensorial_attributes: vec![NewSensorialAttribute {
                name: "Acidity".into(),
                score: Some(d("8.5")),
            }],
        }
    }

    fn record(cupping_id: Uuid, results: Vec<ResultInput>) -> RecordCuppingResults {
        RecordCuppingResults {
            cupping_id,
            results,
        }
    }

    #[test]
    fn a_cupping_numbers_itself_and_its_coffees() {
        let (app, _) = memory_roastery();
        let lots = vec![
            lot(app.store(), 1, LotKind::Green),
            lot(app.store(), 2, LotKind::Roasted),
            lot(app.store(), 3, LotKind::Blended),
        ];
        let view = app.create_cupping(create(0, None, lots.clone())).unwrap();
        assert_eq!(view.cupping.display_number(), "CU-1");
        assert_eq!(view.cupping.state(), CuppingState::Draft);
        let numbers: Vec<String> = view
            .cupping
            .coffees()
            .iter()
            .map(|c| c.display_number())
            .collect();
        assert_eq!(numbers, ["CC-1", "CC-2", "CC-3"]);
        let refs: Vec<TypedLotRef> = view.cupping.coffees().iter().map(|c| c.lot).collect();
        assert_eq!(refs, lots);
        assert!(view.summaries.iter().all(|s| s.average_score.is_none()));
        let second = app.create_cupping(create(1, None, vec![lots[0]])).unwrap();
        assert_eq!(second.cupping.display_number(), "CU-2");
        assert_eq!(second.cupping.coffees()[0].display_number(), "CC-4");
    }

    #[test]
    fn unknown_lots_are_not_found_and_nothing_is_stored() {
        let (app, _) = memory_roastery();
        let known = lot(app.store(), 1, LotKind::Green);
        // The same id under another kind is another lot.
        let wrong_kind = TypedLotRef {
            id: known.id,
            kind: LotKind::Roasted,
        };
        let err = app
            .create_cupping(create(0, None, vec![known, wrong_kind]))
            .unwrap_err();
        assert_eq!(err.rule(), Some(&CuppingError::LotNotFound(wrong_kind)));
        let all = app
            .list_cuppings(CuppingFilter::default(), PageRequest::default())
            .unwrap();
        assert!(all.items.is_empty());
        // The failed call used no number.
        let view = app.create_cupping(create(0, None, vec![known])).unwrap();
        assert_eq!(view.cupping.display_number(), "CU-1");
    }

    #[test]
    fn shape_errors_win_over_unknown_lots() {
        let (app, _) = memory_roastery();
        let unknown = TypedLotRef {
            id: Uuid::from_u128(7),
            kind: LotKind::Green,
        };
        let err = app
            .create_cupping(create(0, Some(CuppingState::Closed), vec![unknown]))
            .unwrap_err();
        assert_eq!(err.rule(), Some(&CuppingError::CreatedClosed));
        let err = app.create_cupping(create(0, None, vec![])).unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::NoCoffees {
                field: FieldPath::from("coffees")
            })
        );
    }

    #[test]
    fn the_state_moves_forward_only() {
        let (app, _) = memory_roastery();
        let l = lot(app.store(), 1, LotKind::Roasted);
        let id = app
            .create_cupping(create(0, None, vec![l]))
            .unwrap()
            .cupping
            .id();
        let set = |state| {
            app.set_cupping_state(SetCuppingState {
                cupping_id: id,
                state,
            })
        };
        let err = set(CuppingState::Closed).unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::IllegalTransition {
                from: CuppingState::Draft,
                to: CuppingState::Closed,
            })
        );
        assert_eq!(
            set(CuppingState::Open).unwrap().cupping.state(),
            CuppingState::Open
        );
        assert_eq!(
            set(CuppingState::Closed).unwrap().cupping.state(),
            CuppingState::Closed
        );
        for state in [
            CuppingState::Draft,
            CuppingState::Open,
            CuppingState::Closed,
        ] {
            let err = set(state).unwrap_err();
            assert!(
                matches!(
                    err.rule(),
                    Some(CuppingError::IllegalTransition { from: CuppingState::Closed, to })
                        if *to == state
                ),
                "{err:?}"
            );
        }
        let stored = app
            .get_cuppings_by_ids(vec![id], PageRequest::default())
            .unwrap();
        assert_eq!(stored.items[0].cupping.state(), CuppingState::Closed);
        let err = app
            .set_cupping_state(SetCuppingState {
                cupping_id: Uuid::from_u128(404),
                state: CuppingState::Open,
            })
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::NotFound(Uuid::from_u128(404)))
        );
    }

    #[test]
    fn results_are_recorded_only_while_open() {
        let (app, _) = memory_roastery();
        let l = lot(app.store(), 1, LotKind::Green);
        let view = app.create_cupping(create(0, None, vec![l])).unwrap();
        let id = view.cupping.id();
        let cc = view.cupping.coffees()[0].id;
        let err = app
            .record_cupping_results(record(id, vec![result(cc, "85", ScoringState::Included)]))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::NotOpen(CuppingState::Draft))
        );
        app.set_cupping_state(SetCuppingState {
            cupping_id: id,
            state: CuppingState::Open,
        })
        .unwrap();
        let recorded = app
            .record_cupping_results(record(id, vec![result(cc, "85", ScoringState::Included)]))
            .unwrap();
        assert_eq!(recorded.len(), 1);
        let closed = app
            .set_cupping_state(SetCuppingState {
                cupping_id: id,
                state: CuppingState::Closed,
            })
            .unwrap();
        // The answer summarises the results recorded so far.
        assert_eq!(closed.summaries.len(), 1);
        assert_eq!(closed.summaries[0].result_count, 1);
        assert_eq!(closed.summaries[0].average_score, Some(d("85")));
        let err = app
            .record_cupping_results(record(id, vec![result(cc, "90", ScoringState::Included)]))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::NotOpen(CuppingState::Closed))
        );
        let results = app
            .list_cupping_results(vec![cc], PageRequest::default())
            .unwrap();
        assert_eq!(results.items, recorded, "refused results are not stored");
    }

    #[test]
    fn summaries_count_included_results_only() {
        let (app, clock) = memory_roastery();
        let a = lot(app.store(), 1, LotKind::Green);
        let b = lot(app.store(), 2, LotKind::Blended);
        let view = app
            .create_cupping(create(0, Some(CuppingState::Open), vec![a, b]))
            .unwrap();
        let id = view.cupping.id();
        let (cc1, cc2) = (view.cupping.coffees()[0].id, view.cupping.coffees()[1].id);
        app.record_cupping_results(record(
            id,
            vec![
                result(cc1, "85.25", ScoringState::Included),
                result(cc1, "86", ScoringState::Included),
                result(cc1, "40", ScoringState::Excluded),
            ],
        ))
        .unwrap();
        clock.advance(chrono::TimeDelta::seconds(1));
        app.record_cupping_results(record(
            id,
            vec![result(cc1, "86.5", ScoringState::Included)],
        ))
        .unwrap();
        let found = app
            .get_cuppings_by_ids(vec![id], PageRequest::default())
            .unwrap();
        let [view] = found.items.as_slice() else {
            panic!("one cupping asked for, {} found", found.items.len());
        };
        let s = view.summaries[0];
        assert_eq!(s.result_count, 3);
        // (85.25 + 86 + 86.5) / 3 = 85.9166… → 85.92
        assert_eq!(s.average_score, Some(d("85.92")));
        assert_eq!(s.min_score, Some(d("85.25")));
        assert_eq!(s.max_score, Some(d("86.5")));
        assert_eq!(view.summaries[1], ResultSummary::default());
        let results = app
            .list_cupping_results(vec![cc2, cc1], PageRequest::default())
            .unwrap();
        assert_eq!(results.items.len(), 4);
        assert_eq!(results.items[3].final_score.value(), d("86.5"));
    }

    #[test]
    fn results_for_unknown_cuppings_or_coffees_are_not_found() {
        let (app, _) = memory_roastery();
        let l = lot(app.store(), 1, LotKind::Green);
        let view = app
            .create_cupping(create(0, Some(CuppingState::Open), vec![l]))
            .unwrap();
        let cc = view.cupping.coffees()[0].id;
        let err = app
            .record_cupping_results(record(
                Uuid::from_u128(404),
                vec![result(cc, "85", ScoringState::Included)],
            ))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::NotFound(Uuid::from_u128(404)))
        );
        let err = app
            .record_cupping_results(record(
                view.cupping.id(),
                vec![result(Uuid::from_u128(404), "85", ScoringState::Included)],
            ))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&CuppingError::CuppedCoffeeNotFound {
                at: FieldPath::from("results[0]"),
                cupped_coffee_id: Uuid::from_u128(404),
            })
        );
        // A score out of range is a 400 even for an unknown cupping.
        let err = app
            .record_cupping_results(record(
                Uuid::from_u128(404),
                vec![result(cc, "100.5", ScoringState::Included)],
            ))
            .unwrap_err();
        assert!(
            matches!(err.rule(), Some(CuppingError::Result { index: 0, .. })),
            "{err:?}"
        );
    }

    #[test]
    fn listings_filter_by_start_date_and_state_newest_first() {
        let (app, _) = memory_roastery();
        let l = lot(app.store(), 1, LotKind::Green);
        let mut ids = Vec::new();
        for i in 0..5 {
            let state = (i % 2 == 1).then_some(CuppingState::Open);
            ids.push(
                app.create_cupping(create(i * 10, state, vec![l]))
                    .unwrap()
                    .cupping
                    .id(),
            );
        }
        let list = |filter| {
            let mut found = Vec::new();
            let mut page = PageRequest {
                limit: Limit::parse(Some(2)).unwrap(),
                after: None,
            };
            loop {
                let p = app.list_cuppings(filter, page).unwrap();
                found.extend(p.items.into_iter().map(|v| v.cupping.id()));
                match p.next {
                    Some(next) => page.after = Some(next),
                    None => return found,
                }
            }
        };
        assert_eq!(
            list(CuppingFilter::default()),
            [ids[4], ids[3], ids[2], ids[1], ids[0]]
        );
        let window = CuppingFilter {
            start_from: Some(at(10)),
            start_to: Some(at(30)),
            state: None,
        };
        assert_eq!(
            list(window),
            [ids[2], ids[1]],
            "from inclusive, to exclusive"
        );
        let open = CuppingFilter {
            state: Some(CuppingState::Open),
            ..CuppingFilter::default()
        };
        assert_eq!(list(open), [ids[3], ids[1]]);
    }

    #[test]
    fn by_ids_reads_keep_the_asked_order_and_skip_unknown_ids() {
        let (app, _) = memory_roastery();
        let l = lot(app.store(), 1, LotKind::Green);
        let a = app.create_cupping(create(0, None, vec![l])).unwrap();
        let b = app.create_cupping(create(1, None, vec![l])).unwrap();
        let found = app
            .get_cuppings_by_ids(
                vec![b.cupping.id(), Uuid::from_u128(404), a.cupping.id()],
                PageRequest::default(),
            )
            .unwrap();
        let ids: Vec<Uuid> = found.items.iter().map(|v| v.cupping.id()).collect();
        assert_eq!(ids, [b.cupping.id(), a.cupping.id()]);
    }

    #[test]
    fn id_filters_take_one_to_a_hundred_unique_ids() {
        let (app, _) = memory_roastery();
        let many: Vec<Uuid> = (0..101).map(Uuid::from_u128).collect();
        for err in [
            app.get_cuppings_by_ids(many.clone(), PageRequest::default())
                .unwrap_err(),
            app.list_cupping_results(many, PageRequest::default())
                .unwrap_err(),
            app.get_cuppings_by_ids(vec![], PageRequest::default())
                .unwrap_err(),
            app.list_cupping_results(vec![Uuid::nil(), Uuid::nil()], PageRequest::default())
                .unwrap_err(),
        ] {
            assert_eq!(err.violation(), Some(Violation::InvalidParameter));
        }
        let hundred: Vec<Uuid> = (0..100).map(Uuid::from_u128).collect();
        assert!(
            app.get_cuppings_by_ids(hundred, PageRequest::default())
                .unwrap()
                .items
                .is_empty()
        );
    }
}
