//! Cuppings: tasting sessions in which lots are cupped and scored.
//!
//! A cupping is created `DRAFT` (or directly `OPEN`) with the coffees to cup, each a reference to
//! a green, roasted or blended lot. It moves only forward, `DRAFT` → `OPEN` → `CLOSED`; results are
//! recorded only while it is `OPEN`, and a `CLOSED` cupping is final.
//!
//! Each write comes in the three steps of every write, so errors rank as the contract says:
//! [`NewCupping::parse`] and [`ResultsDraft::parse`] check the shape (400) before anything is
//! looked up; the store-backed use case then loads what the request refers to and reports what is
//! missing with this module's errors ([`CuppingError::LotNotFound`], [`CuppingError::NotFound`]);
//! last, [`CuppingDraft::number`], [`Cupping::set_state`] and [`Cupping::record_results`] decide.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::cupping_result::{CuppingResult, NewCuppingResult, ResultError};
use crate::field::FieldPath;
use crate::stock::{TypedLotRef, UnknownLotType};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Prefix of cupping numbers (`CU-7`).
pub const CUPPING_PREFIX: &str = "CU";
/// Prefix of cupped coffee numbers (`CC-12`).
pub const CUPPED_COFFEE_PREFIX: &str = "CC";
/// Most coffees one cupping may hold.
pub const MAX_COFFEES: usize = 100;
/// Most results one call may record.
pub const MAX_RESULTS: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CuppingError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    UnknownLotType(#[from] UnknownLotType),
    #[error("cupping state `{0}` is not known; use DRAFT, OPEN or CLOSED")]
    UnknownState(String),
    #[error("a cupping is created DRAFT or OPEN, not CLOSED")]
    CreatedClosed,
    #[error("{field} must not be empty: a cupping cups at least one lot")]
    NoCoffees { field: FieldPath },
    #[error("{field} holds {count} coffees; at most {MAX_COFFEES} are accepted")]
    TooManyCoffees { field: FieldPath, count: usize },
    #[error("{0} does not exist")]
    LotNotFound(TypedLotRef),
    #[error("cupping {0} does not exist")]
    NotFound(Uuid),
    #[error("a cupping cannot go from {from} to {to}; it goes only DRAFT → OPEN → CLOSED")]
    IllegalTransition {
        from: CuppingState,
        to: CuppingState,
    },
    #[error("{field} must not be empty")]
    NoResults { field: FieldPath },
    #[error("{field} holds {count} results; at most {MAX_RESULTS} are accepted")]
    TooManyResults { field: FieldPath, count: usize },
    /// The result at `index` is malformed; its error names the field by its path.
    #[error("{source}")]
    Result { index: usize, source: ResultError },
    /// `at` is the result's path (`results[2]`).
    #[error("{at}: cupped coffee {cupped_coffee_id} is not part of this cupping")]
    CuppedCoffeeNotFound {
        at: FieldPath,
        cupped_coffee_id: Uuid,
    },
    #[error("{}", not_open_message(*.0))]
    NotOpen(CuppingState),
}

fn not_open_message(state: CuppingState) -> String {
    match state {
        CuppingState::Draft => {
            "results are recorded only while the cupping is OPEN; it is DRAFT: open it first".into()
        }
        _ => {
            format!("results are recorded only while the cupping is OPEN; it is {state} and final")
        }
    }
}

impl BrokenRule for CuppingError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::UnknownLotType(e) => e.violation(),
            Self::Result { source, .. } => source.violation(),
            Self::UnknownState(_)
            | Self::CreatedClosed
            | Self::NoCoffees { .. }
            | Self::TooManyCoffees { .. }
            | Self::NoResults { .. }
            | Self::TooManyResults { .. } => Violation::InvalidParameter,
            Self::LotNotFound(_) | Self::NotFound(_) | Self::CuppedCoffeeNotFound { .. } => {
                Violation::NotFound
            }
            Self::IllegalTransition { .. } | Self::NotOpen(_) => Violation::BusinessRule,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::UnknownLotType(e) => e.rebase(base),
            Self::Result { source, .. } => source.rebase(base),
            Self::NoCoffees { field }
            | Self::TooManyCoffees { field, .. }
            | Self::NoResults { field }
            | Self::TooManyResults { field, .. }
            | Self::CuppedCoffeeNotFound { at: field, .. } => field.rebase(base),
            Self::UnknownState(_)
            | Self::CreatedClosed
            | Self::LotNotFound(_)
            | Self::NotFound(_)
            | Self::IllegalTransition { .. }
            | Self::NotOpen(_) => {}
        }
    }
}

/// Where a cupping is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CuppingState {
    /// Being prepared; no results yet.
    #[default]
    Draft,
    /// In session: results are recorded.
    Open,
    /// Over; final.
    Closed,
}

impl CuppingState {
    pub fn parse(value: &str) -> Result<Self, CuppingError> {
        match value {
            "DRAFT" => Ok(Self::Draft),
            "OPEN" => Ok(Self::Open),
            "CLOSED" => Ok(Self::Closed),
            other => Err(CuppingError::UnknownState(other.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "DRAFT",
            Self::Open => "OPEN",
            Self::Closed => "CLOSED",
        }
    }

    /// The state after moving to `to`: only `DRAFT` → `OPEN` and `OPEN` → `CLOSED` are allowed.
    /// Staying in the same state is not a move and is refused too, so a client learns that its
    /// view of the cupping was stale.
    pub fn transition(self, to: CuppingState) -> Result<CuppingState, CuppingError> {
        match (self, to) {
            (Self::Draft, Self::Open) | (Self::Open, Self::Closed) => Ok(to),
            (from, to) => Err(CuppingError::IllegalTransition { from, to }),
        }
    }
}

impl fmt::Display for CuppingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lot cupped in a cupping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuppedCoffee {
    pub id: Uuid,
    /// Sequence number of `CC-n`.
    pub number: i64,
    pub lot: TypedLotRef,
}

impl CuppedCoffee {
    /// `CC-n`.
    pub fn display_number(&self) -> String {
        crate::stock::number(CUPPED_COFFEE_PREFIX, self.number)
    }
}

/// A cupping as a client asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCupping {
    pub start_date: DateTime<Utc>,
    /// Name of the cupping sheet used.
    pub cupping_sheet: String,
    /// `DRAFT` when absent.
    pub state: Option<CuppingState>,
    /// The lots to cup, in the order given.
    pub coffees: Vec<TypedLotRef>,
}

impl NewCupping {
    /// Step one of creating a cupping: every shape rule (400), nothing looked up. A cupping is
    /// created `DRAFT` unless asked `OPEN` (never `CLOSED`), with 1 to [`MAX_COFFEES`] coffees
    /// and a named sheet.
    pub fn parse(self) -> Result<CuppingDraft, CuppingError> {
        let state = self.state.unwrap_or_default();
        if state == CuppingState::Closed {
            return Err(CuppingError::CreatedClosed);
        }
        if self.coffees.is_empty() {
            return Err(CuppingError::NoCoffees {
                field: FieldPath::from("coffees"),
            });
        }
        if self.coffees.len() > MAX_COFFEES {
            return Err(CuppingError::TooManyCoffees {
                field: FieldPath::from("coffees"),
                count: self.coffees.len(),
            });
        }
        Ok(CuppingDraft {
            start_date: self.start_date,
            state,
            cupping_sheet: text::required(
                "cuppingSheet.name",
                &self.cupping_sheet,
                text::NAME_MAX,
            )?,
            lots: self.coffees,
        })
    }
}

/// A cupping parsed from the request ([`NewCupping::parse`]): well-formed, its lots not yet
/// looked up, nothing numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuppingDraft {
    start_date: DateTime<Utc>,
    state: CuppingState,
    cupping_sheet: String,
    lots: Vec<TypedLotRef>,
}

impl CuppingDraft {
    /// The lots to cup, in the order given; the caller reports the first that does not exist
    /// ([`CuppingError::LotNotFound`]).
    pub fn lots(&self) -> &[TypedLotRef] {
        &self.lots
    }

    /// The cupping `CU-number`, once every lot is known to exist: no rule is left to break.
    /// `identify` gives each lot's cupped coffee its id and `CC-` number, in the order of the
    /// lots; its error (a store failure drawing a number) is passed on.
    pub fn number<E>(
        self,
        id: Uuid,
        number: i64,
        mut identify: impl FnMut(TypedLotRef) -> Result<(Uuid, i64), E>,
    ) -> Result<Cupping, E> {
        let coffees = self
            .lots
            .into_iter()
            .map(|lot| {
                let (id, number) = identify(lot)?;
                Ok(CuppedCoffee { id, number, lot })
            })
            .collect::<Result<Vec<_>, E>>()?;
        Ok(Cupping {
            id,
            number,
            start_date: self.start_date,
            state: self.state,
            cupping_sheet: self.cupping_sheet,
            coffees,
        })
    }
}

/// Results parsed from the request ([`ResultsDraft::parse`]): a non-empty, bounded list of
/// well-formed results; whether the cupping takes them is [`Cupping::record_results`]' to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultsDraft(Vec<CuppingResult>);

impl ResultsDraft {
    /// Step one of recording results: the shape of the list and of each result (400), each
    /// result keeping the id its input carries and recorded at `now`.
    pub fn parse(results: Vec<NewCuppingResult>, now: DateTime<Utc>) -> Result<Self, CuppingError> {
        if results.is_empty() {
            return Err(CuppingError::NoResults {
                field: FieldPath::from("results"),
            });
        }
        if results.len() > MAX_RESULTS {
            return Err(CuppingError::TooManyResults {
                field: FieldPath::from("results"),
                count: results.len(),
            });
        }
        results
            .into_iter()
            .enumerate()
            .map(|(index, input)| {
                CuppingResult::new(&FieldPath::ROOT.key("results").index(index), input, now)
                    .map_err(|source| CuppingError::Result { index, source })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }
}

/// A cupping session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cupping {
    id: Uuid,
    number: i64,
    start_date: DateTime<Utc>,
    state: CuppingState,
    cupping_sheet: String,
    coffees: Vec<CuppedCoffee>,
}

impl Cupping {
    /// Rebuilds a stored cupping.
    pub fn restore(
        id: Uuid,
        number: i64,
        start_date: DateTime<Utc>,
        state: CuppingState,
        cupping_sheet: String,
        coffees: Vec<CuppedCoffee>,
    ) -> Self {
        Self {
            id,
            number,
            start_date,
            state,
            cupping_sheet,
            coffees,
        }
    }

    pub fn id(&self) -> Uuid {
        self.id
    }

    pub fn number(&self) -> i64 {
        self.number
    }

    /// `CU-n`.
    pub fn display_number(&self) -> String {
        crate::stock::number(CUPPING_PREFIX, self.number)
    }

    pub fn start_date(&self) -> DateTime<Utc> {
        self.start_date
    }

    pub fn state(&self) -> CuppingState {
        self.state
    }

    pub fn cupping_sheet(&self) -> &str {
        &self.cupping_sheet
    }

    pub fn coffees(&self) -> &[CuppedCoffee] {
        &self.coffees
    }

    pub fn coffee(&self, cupped_coffee_id: Uuid) -> Option<&CuppedCoffee> {
        self.coffees.iter().find(|c| c.id == cupped_coffee_id)
    }

    /// Moves the cupping to `to` along `DRAFT` → `OPEN` → `CLOSED`.
    pub fn set_state(&mut self, to: CuppingState) -> Result<(), CuppingError> {
        self.state = self.state.transition(to)?;
        Ok(())
    }

    /// Step three of recording results, once the cupping is loaded: a result for a cupped coffee
    /// that is not part of this cupping (422 `resource_not_found`), then the state rule: only an
    /// `OPEN` cupping takes results (422 `invalid_request`).
    pub fn record_results(
        &self,
        results: ResultsDraft,
    ) -> Result<Vec<CuppingResult>, CuppingError> {
        let ResultsDraft(recorded) = results;
        if let Some((index, r)) = recorded
            .iter()
            .enumerate()
            .find(|(_, r)| self.coffee(r.cupped_coffee_id).is_none())
        {
            return Err(CuppingError::CuppedCoffeeNotFound {
                at: FieldPath::ROOT.key("results").index(index),
                cupped_coffee_id: r.cupped_coffee_id,
            });
        }
        if self.state != CuppingState::Open {
            return Err(CuppingError::NotOpen(self.state));
        }
        Ok(recorded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cupping_result::ScoringState;
    use crate::stock::LotKind;
    use crate::test_values::now;
    use rust_decimal::Decimal;

    const ALL: [CuppingState; 3] = [
        CuppingState::Draft,
        CuppingState::Open,
        CuppingState::Closed,
    ];

    fn lot(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(200 + n),
            kind: LotKind::Roasted,
        }
    }

    /// The cupped coffee of `lot(n)`: id `100 + n`, number `n`.
    fn coffee(n: u128) -> CuppedCoffee {
        CuppedCoffee {
            id: Uuid::from_u128(100 + n),
            number: n as i64,
            lot: lot(n),
        }
    }

    fn new_cupping(state: Option<CuppingState>) -> NewCupping {
        NewCupping {
            start_date: now(),
            cupping_sheet: " SCA 2024 ".into(),
            state,
            coffees: vec![lot(1), lot(2)],
        }
    }

    /// Numbers a draft `CU-7`, each coffee as [`coffee`] does.
    fn numbered(draft: CuppingDraft) -> Cupping {
        draft
            .number(Uuid::from_u128(1), 7, |l| {
                let n = l.id.as_u128() - 200;
                Ok::<_, std::convert::Infallible>((Uuid::from_u128(100 + n), n as i64))
            })
            .unwrap()
    }

    fn create(new: NewCupping) -> Result<Cupping, CuppingError> {
        new.parse().map(numbered)
    }

    fn cupping(state: CuppingState) -> Cupping {
        let mut c = create(new_cupping(None)).unwrap();
        for step in [CuppingState::Open, CuppingState::Closed] {
            if c.state() != state {
                c.set_state(step).unwrap();
            }
        }
        assert_eq!(c.state(), state);
        c
    }

    fn result(id: u128, cupped_coffee_id: Uuid, score: i64) -> NewCuppingResult {
        NewCuppingResult {
            id: Uuid::from_u128(id),
            cupped_coffee_id,
            final_score: Some(Decimal::from(score)),
            scoring_state: Some(ScoringState::Included),
            evaluator: Some("Ana".into()),
            note: None,
            sensorial_attributes: vec![],
        }
    }

    #[test]
    fn a_cupping_is_created_draft_by_default() {
        let draft = new_cupping(None).parse().unwrap();
        assert_eq!(draft.lots(), [lot(1), lot(2)]);
        let c = numbered(draft);
        assert_eq!(c.state(), CuppingState::Draft);
        assert_eq!(c.display_number(), "CU-7");
        assert_eq!(c.cupping_sheet(), "SCA 2024");
        assert_eq!(c.coffees(), [coffee(1), coffee(2)]);
        assert_eq!(c.coffees()[0].display_number(), "CC-1");
        assert_eq!(c.start_date(), now());
    }

    #[test]
    fn numbering_gives_each_lot_its_coffee_in_order_and_passes_on_a_failure() {
        let draft = new_cupping(None).parse().unwrap();
        let mut asked = Vec::new();
        let c = draft
            .clone()
            .number(Uuid::from_u128(1), 3, |l| {
                asked.push(l);
                Ok::<_, ()>((
                    Uuid::from_u128(asked.len() as u128),
                    10 + asked.len() as i64,
                ))
            })
            .unwrap();
        assert_eq!(asked, [lot(1), lot(2)]);
        let numbers: Vec<String> = c.coffees().iter().map(|cc| cc.display_number()).collect();
        assert_eq!(numbers, ["CC-11", "CC-12"]);
        assert_eq!(c.coffees()[1].lot, lot(2));
        let failed = draft.number(Uuid::from_u128(1), 3, |_| Err("no number"));
        assert_eq!(failed, Err("no number"));
    }

    #[test]
    fn a_cupping_may_be_created_open() {
        let c = create(new_cupping(Some(CuppingState::Open)));
        assert_eq!(c.unwrap().state(), CuppingState::Open);
    }

    #[test]
    fn a_cupping_cannot_be_created_closed() {
        let err = new_cupping(Some(CuppingState::Closed)).parse().unwrap_err();
        assert_eq!(err, CuppingError::CreatedClosed);
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn a_cupping_needs_one_to_a_hundred_coffees() {
        let mut new = new_cupping(None);
        new.coffees.clear();
        let err = new.parse().unwrap_err();
        assert_eq!(
            err,
            CuppingError::NoCoffees {
                field: FieldPath::from("coffees")
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut new = new_cupping(None);
        new.coffees = (0..=MAX_COFFEES as u128).map(lot).collect();
        assert_eq!(
            new.parse(),
            Err(CuppingError::TooManyCoffees {
                field: FieldPath::from("coffees"),
                count: 101
            })
        );
        let mut new = new_cupping(None);
        new.coffees = (0..MAX_COFFEES as u128).map(lot).collect();
        assert_eq!(new.parse().unwrap().lots().len(), MAX_COFFEES);
    }

    #[test]
    fn a_cupping_needs_a_named_sheet() {
        let mut new = new_cupping(None);
        new.cupping_sheet = "  ".into();
        let err = new.parse().unwrap_err();
        assert!(matches!(err, CuppingError::Text(TextError::Empty { .. })));
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn draft_opens_and_open_closes() {
        assert_eq!(
            CuppingState::Draft.transition(CuppingState::Open),
            Ok(CuppingState::Open)
        );
        assert_eq!(
            CuppingState::Open.transition(CuppingState::Closed),
            Ok(CuppingState::Closed)
        );
        let mut c = cupping(CuppingState::Draft);
        c.set_state(CuppingState::Open).unwrap();
        c.set_state(CuppingState::Closed).unwrap();
        assert_eq!(c.state(), CuppingState::Closed);
    }

    #[test]
    fn every_other_move_is_an_illegal_transition() {
        let legal = [
            (CuppingState::Draft, CuppingState::Open),
            (CuppingState::Open, CuppingState::Closed),
        ];
        for from in ALL {
            for to in ALL {
                if legal.contains(&(from, to)) {
                    continue;
                }
                let err = from.transition(to).unwrap_err();
                assert_eq!(err, CuppingError::IllegalTransition { from, to });
                assert_eq!(err.violation(), Violation::BusinessRule);
                let mut c = cupping(from);
                assert_eq!(c.set_state(to), Err(err));
                assert_eq!(c.state(), from, "a refused move changes nothing");
            }
        }
    }

    #[test]
    fn a_closed_cupping_is_final() {
        let mut c = cupping(CuppingState::Closed);
        for to in ALL {
            assert!(c.set_state(to).is_err());
        }
    }

    #[test]
    fn states_have_wire_names() {
        for s in ALL {
            assert_eq!(CuppingState::parse(s.as_str()), Ok(s));
        }
        let err = CuppingState::parse("open").unwrap_err();
        assert_eq!(err, CuppingError::UnknownState("open".into()));
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn lot_references_parse_their_type() {
        let id = Uuid::from_u128(9);
        assert_eq!(
            TypedLotRef::parse(id, "INVENTORY_GREEN"),
            Ok(TypedLotRef {
                id,
                kind: LotKind::Green
            })
        );
        let err: CuppingError = TypedLotRef::parse(id, "GREEN").unwrap_err().into();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn missing_records_are_not_found() {
        let lot = coffee(1).lot;
        assert_eq!(
            CuppingError::LotNotFound(lot).violation(),
            Violation::NotFound
        );
        assert_eq!(
            CuppingError::LotNotFound(lot).to_string(),
            format!("INVENTORY_ROAST lot {} does not exist", lot.id)
        );
        assert_eq!(
            CuppingError::NotFound(Uuid::nil()).violation(),
            Violation::NotFound
        );
    }

    fn parsed(inputs: Vec<NewCuppingResult>) -> ResultsDraft {
        ResultsDraft::parse(inputs, now()).unwrap()
    }

    #[test]
    fn an_open_cupping_records_results() {
        let c = cupping(CuppingState::Open);
        let recorded = c
            .record_results(parsed(vec![
                result(1, coffee(1).id, 85),
                result(2, coffee(2).id, 88),
            ]))
            .unwrap();
        assert_eq!(recorded.len(), 2);
        assert_eq!(recorded[1].id, Uuid::from_u128(2));
        assert_eq!(recorded[1].cupped_coffee_id, coffee(2).id);
        assert_eq!(recorded[0].recorded_at, now());
    }

    #[test]
    fn a_draft_cupping_records_no_results() {
        let err = cupping(CuppingState::Draft)
            .record_results(parsed(vec![result(1, coffee(1).id, 85)]))
            .unwrap_err();
        assert_eq!(err, CuppingError::NotOpen(CuppingState::Draft));
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert!(err.to_string().contains("open it first"));
    }

    #[test]
    fn a_closed_cupping_records_no_results() {
        let err = cupping(CuppingState::Closed)
            .record_results(parsed(vec![result(1, coffee(1).id, 85)]))
            .unwrap_err();
        assert_eq!(err, CuppingError::NotOpen(CuppingState::Closed));
        assert_eq!(err.violation(), Violation::BusinessRule);
    }

    #[test]
    fn results_for_a_coffee_of_another_cupping_are_not_found() {
        let stranger = Uuid::from_u128(999);
        let err = cupping(CuppingState::Open)
            .record_results(parsed(vec![
                result(1, coffee(1).id, 85),
                result(2, stranger, 85),
            ]))
            .unwrap_err();
        assert_eq!(
            err,
            CuppingError::CuppedCoffeeNotFound {
                at: FieldPath::from("results[1]"),
                cupped_coffee_id: stranger
            }
        );
        assert_eq!(err.violation(), Violation::NotFound);
    }

    #[test]
    fn not_found_wins_over_the_state_rule() {
        let stranger = Uuid::from_u128(999);
        let err = cupping(CuppingState::Closed)
            .record_results(parsed(vec![result(1, stranger, 85)]))
            .unwrap_err();
        assert_eq!(
            err,
            CuppingError::CuppedCoffeeNotFound {
                at: FieldPath::from("results[0]"),
                cupped_coffee_id: stranger
            }
        );
    }

    #[test]
    fn parsing_results_checks_each_one_and_names_the_first_malformed() {
        // The first result names no coffee of any cupping; parsing does not look.
        let err = ResultsDraft::parse(
            vec![
                result(1, Uuid::from_u128(999), 85),
                result(2, coffee(1).id, 101),
            ],
            now(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            CuppingError::Result {
                index: 1,
                source: crate::cupping_result::ResultError::ScoreOutOfRange { .. }
            }
        ));
        assert_eq!(err.violation(), Violation::InvalidParameter);
        assert!(err.to_string().starts_with("results[1].finalScore must be"));
    }

    #[test]
    fn the_results_list_is_non_empty_and_bounded() {
        let err = ResultsDraft::parse(vec![], now()).unwrap_err();
        assert_eq!(
            err,
            CuppingError::NoResults {
                field: FieldPath::from("results")
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let many = (0..=MAX_RESULTS as u128)
            .map(|i| result(i, coffee(1).id, 80))
            .collect();
        assert_eq!(
            ResultsDraft::parse(many, now()),
            Err(CuppingError::TooManyResults {
                field: FieldPath::from("results"),
                count: 501
            })
        );
        let most: Vec<_> = (0..MAX_RESULTS as u128)
            .map(|i| result(i, coffee(1).id, 80))
            .collect();
        let recorded = cupping(CuppingState::Open)
            .record_results(parsed(most))
            .unwrap();
        assert_eq!(recorded.len(), MAX_RESULTS);
    }

    #[test]
    fn a_missing_final_score_keeps_its_category() {
        let mut r = result(1, coffee(1).id, 85);
        r.final_score = None;
        let err = ResultsDraft::parse(vec![r], now()).unwrap_err();
        assert!(matches!(
            err,
            CuppingError::Result {
                index: 0,
                source: crate::cupping_result::ResultError::Missing { ref field }
            } if *field == FieldPath::from("results[0].finalScore")
        ));
        assert_eq!(err.violation(), Violation::MissingParameter);
    }
}
