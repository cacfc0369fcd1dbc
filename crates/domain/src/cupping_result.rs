//! Cupping results: one evaluator's score of one cupped coffee, and the summary of those scores.
//!
//! A score is a decimal from 0 to 100 inclusive. The range is checked on the value as given, so
//! `100.004` is refused; an accepted score is then rounded half-even to two decimals (`87.125`
//! keeps as `87.12`), the same rule as every other figure of the contract, so a client never has
//! to pre-round and storage holds whole hundredths.
//!
//! The summary of a cupped coffee counts `INCLUDED` results only and is a pure function of the
//! results, so it is recomputed rather than kept in step by hand. Recording results is a
//! transition of the cupping ([`crate::cupping::Cupping::record_results`]); this module only
//! checks one result on its own.

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use crate::decimal;
use crate::field::FieldPath;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Most sensorial attributes one result may carry.
pub const MAX_SENSORIAL_ATTRIBUTES: usize = 50;
/// Highest score, inclusive.
pub const SCORE_MAX: i64 = 100;
/// Decimal places a score keeps.
pub const SCORE_SCALE: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("{field} is required")]
    Missing { field: FieldPath },
    #[error("{field} must be between 0 and {SCORE_MAX}; {value} was given")]
    ScoreOutOfRange { field: FieldPath, value: Decimal },
    #[error("scoringState `{0}` is not known; use INCLUDED or EXCLUDED")]
    UnknownScoringState(String),
    #[error("{field} holds {count} attributes; at most {MAX_SENSORIAL_ATTRIBUTES} are accepted")]
    TooManyAttributes { field: FieldPath, count: usize },
    #[error("{field}: sensorial attribute `{name}` is given more than once")]
    DuplicateAttribute { field: FieldPath, name: String },
}

impl BrokenRule for ResultError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::Missing { .. } => Violation::MissingParameter,
            Self::ScoreOutOfRange { .. }
            | Self::UnknownScoringState(_)
            | Self::TooManyAttributes { .. }
            | Self::DuplicateAttribute { .. } => Violation::InvalidParameter,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::Missing { field }
            | Self::ScoreOutOfRange { field, .. }
            | Self::TooManyAttributes { field, .. }
            | Self::DuplicateAttribute { field, .. } => field.rebase(base),
            Self::UnknownScoringState(_) => {}
        }
    }
}

/// A score from 0 to 100 inclusive, kept to two decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Score(Decimal);

impl Score {
    /// Checks `value` is within 0..=100 and rounds it half-even to two decimals. `field` names the
    /// input in the error message.
    pub fn new(field: impl Into<FieldPath>, value: Decimal) -> Result<Self, ResultError> {
        if value < Decimal::ZERO || value > Decimal::from(SCORE_MAX) {
            return Err(ResultError::ScoreOutOfRange {
                field: field.into(),
                value,
            });
        }
        let rounded = value
            .round_dp_with_strategy(SCORE_SCALE, RoundingStrategy::MidpointNearestEven)
            .normalize();
        Ok(Self(rounded))
    }

    /// Rebuilds a stored score from whole hundredths (`8725` is `87.25`).
    pub fn from_hundredths(field: &'static str, hundredths: i64) -> Result<Self, ResultError> {
        Self::new(field, Decimal::new(hundredths, SCORE_SCALE))
    }

    /// The score in whole hundredths, for exact storage as an integer.
    pub fn hundredths(self) -> i64 {
        // A score is at most 100 with two decimals, so this always fits.
        self.0
            .checked_mul(Decimal::ONE_HUNDRED)
            .and_then(|scaled| i64::try_from(scaled.trunc()).ok())
            .unwrap_or(0)
    }

    pub fn value(self) -> Decimal {
        self.0
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Whether a result counts in the cupped coffee's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScoringState {
    /// Counted; the state of a result recorded without one.
    #[default]
    Included,
    /// Kept for the record, left out of the summary (an outlier, a calibration cup).
    Excluded,
}

impl ScoringState {
    pub fn parse(value: &str) -> Result<Self, ResultError> {
        match value {
            "INCLUDED" => Ok(Self::Included),
            "EXCLUDED" => Ok(Self::Excluded),
            other => Err(ResultError::UnknownScoringState(other.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Included => "INCLUDED",
            Self::Excluded => "EXCLUDED",
        }
    }
}

impl fmt::Display for ScoringState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One scored attribute of a cup (acidity, body, aftertaste, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensorialAttribute {
    pub name: String,
    pub score: Score,
}

/// A sensorial attribute as a client gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSensorialAttribute {
    pub name: String,
    pub score: Option<Decimal>,
}

/// A result as a client gives it, with the id the caller chose for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCuppingResult {
    pub id: Uuid,
    pub cupped_coffee_id: Uuid,
    pub final_score: Option<Decimal>,
    /// `INCLUDED` when absent.
    pub scoring_state: Option<ScoringState>,
    pub evaluator: Option<String>,
    pub note: Option<String>,
    pub sensorial_attributes: Vec<NewSensorialAttribute>,
}

/// A recorded result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuppingResult {
    pub id: Uuid,
    pub cupped_coffee_id: Uuid,
    pub note: Option<String>,
    pub final_score: Score,
    pub scoring_state: ScoringState,
    /// The evaluator's name.
    pub evaluator: Option<String>,
    pub sensorial_attributes: Vec<SensorialAttribute>,
    /// When it was recorded: the order of result listings.
    pub recorded_at: DateTime<Utc>,
}

impl CuppingResult {
    /// Checks one result on its own: a final score in range, bounded texts, at most
    /// [`MAX_SENSORIAL_ATTRIBUTES`] attributes with distinct names (ignoring case) and scores in
    /// range. Whether its cupped coffee belongs to the cupping is the cupping's rule. Errors
    /// name the field by its path under `at`, the result's path in the request
    /// (`results[2]`).
    pub fn new(
        at: &FieldPath,
        input: NewCuppingResult,
        now: DateTime<Utc>,
    ) -> Result<Self, ResultError> {
        let final_score_field = at.clone().key("finalScore");
        let final_score = match input.final_score {
            Some(score) => Score::new(final_score_field, score)?,
            None => {
                return Err(ResultError::Missing {
                    field: final_score_field,
                });
            }
        };
        let count = input.sensorial_attributes.len();
        if count > MAX_SENSORIAL_ATTRIBUTES {
            return Err(ResultError::TooManyAttributes {
                field: at.clone().key("sensorialAttributes"),
                count,
            });
        }
        let mut seen = HashSet::with_capacity(count);
        let mut attributes = Vec::with_capacity(count);
        for (i, attribute) in input.sensorial_attributes.into_iter().enumerate() {
            let at = at.clone().key("sensorialAttributes").index(i);
            let name = text::required(at.clone().key("name"), &attribute.name, text::NAME_MAX)?;
            if !seen.insert(name.to_lowercase()) {
                return Err(ResultError::DuplicateAttribute {
                    field: at.key("name"),
                    name,
                });
            }
            let field = at.key("score");
            let score = match attribute.score {
                Some(score) => Score::new(field, score)?,
                None => return Err(ResultError::Missing { field }),
            };
            attributes.push(SensorialAttribute { name, score });
        }
        Ok(Self {
            id: input.id,
            cupped_coffee_id: input.cupped_coffee_id,
            note: input
                .note
                .map(|n| text::bounded(at.clone().key("note"), &n, text::NOTE_MAX))
                .transpose()?,
            final_score,
            scoring_state: input.scoring_state.unwrap_or_default(),
            evaluator: text::optional(
                at.clone().key("evaluator").key("name"),
                input.evaluator.as_deref(),
                text::NAME_MAX,
            )?,
            sensorial_attributes: attributes,
            recorded_at: now,
        })
    }
}

/// The scores of a cupped coffee's `INCLUDED` results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResultSummary {
    /// Mean final score, rounded half-even to two decimals; `None` without included results.
    pub average_score: Option<Decimal>,
    pub result_count: usize,
    pub min_score: Option<Decimal>,
    pub max_score: Option<Decimal>,
}

impl ResultSummary {
    /// Summarises `results`, counting only those `INCLUDED`. The caller passes the results of one
    /// cupped coffee.
    pub fn of<'a>(results: impl IntoIterator<Item = &'a CuppingResult>) -> Self {
        Self::from_scores(
            results
                .into_iter()
                .map(|r| (r.final_score, r.scoring_state)),
        )
    }

    /// Summarises final scores with their scoring states, counting only those `INCLUDED`: what a
    /// store can compute from stored scores without loading whole results.
    pub fn from_scores(scores: impl IntoIterator<Item = (Score, ScoringState)>) -> Self {
        let mut sum = Decimal::ZERO;
        let mut count = 0usize;
        let mut min: Option<Score> = None;
        let mut max: Option<Score> = None;
        for (score, _) in scores
            .into_iter()
            .filter(|(_, state)| *state == ScoringState::Included)
        {
            // At most 100 per score: a Decimal holds the sum of far more scores than exist.
            sum = sum.saturating_add(score.value());
            count = count.saturating_add(1);
            min = Some(min.map_or(score, |m| m.min(score)));
            max = Some(max.map_or(score, |m| m.max(score)));
        }
        // Sum and count are exact; the quotient is rounded half-even to two decimals.
        let average_score = sum.checked_div(Decimal::from(count)).map(decimal::round2);
        Self {
            average_score,
            result_count: count,
            min_score: min.map(Score::value),
            max_score: max.map(Score::value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::{d, now};
    use proptest::prelude::*;

    fn at() -> FieldPath {
        FieldPath::ROOT.key("results").index(0)
    }

    fn input(score: &str) -> NewCuppingResult {
        NewCuppingResult {
            id: Uuid::from_u128(1),
            cupped_coffee_id: Uuid::from_u128(2),
            final_score: Some(d(score)),
            scoring_state: None,
            evaluator: Some(" Ana ".into()),
            note: Some("stone fruit".into()),
            sensorial_attributes: vec![NewSensorialAttribute {
                name: "Acidity".into(),
                score: Some(d("8.25")),
            }],
        }
    }

    fn result(score: &str, state: ScoringState) -> CuppingResult {
        let mut new = input(score);
        new.scoring_state = Some(state);
        CuppingResult::new(&at(), new, now()).unwrap()
    }

    #[test]
    fn a_valid_result_is_trimmed_and_included_by_default() {
        let r = CuppingResult::new(&at(), input("86.5"), now()).unwrap();
        assert_eq!(r.final_score.value(), d("86.5"));
        assert_eq!(r.scoring_state, ScoringState::Included);
        assert_eq!(r.evaluator.as_deref(), Some("Ana"));
        assert_eq!(r.sensorial_attributes[0].score.value(), d("8.25"));
        assert_eq!(r.recorded_at, now());
    }

    #[test]
    fn scores_from_0_to_100_inclusive_are_accepted() {
        assert_eq!(Score::new("finalScore", d("0")).unwrap().value(), d("0"));
        assert_eq!(
            Score::new("finalScore", d("100")).unwrap().value(),
            d("100")
        );
        assert_eq!(Score::new("finalScore", d("-0")).unwrap().value(), d("0"));
    }

    #[test]
    fn scores_outside_0_to_100_are_invalid_parameters() {
        for bad in ["-0.01", "100.01", "100.004", "-1000"] {
            let err = CuppingResult::new(&at(), input(bad), now()).unwrap_err();
            assert_eq!(
                err,
                ResultError::ScoreOutOfRange {
                    field: FieldPath::from("results[0].finalScore"),
                    value: d(bad)
                }
            );
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn scores_keep_two_decimals_rounded_half_even() {
        assert_eq!(Score::new("s", d("87.125")).unwrap().value(), d("87.12"));
        assert_eq!(Score::new("s", d("87.135")).unwrap().value(), d("87.14"));
        assert_eq!(Score::new("s", d("99.999")).unwrap().value(), d("100"));
        assert_eq!(Score::new("s", d("87.50")).unwrap().to_string(), "87.5");
    }

    #[test]
    fn scores_round_trip_through_hundredths() {
        let s = Score::new("s", d("87.25")).unwrap();
        assert_eq!(s.hundredths(), 8725);
        assert_eq!(Score::from_hundredths("s", 8725), Ok(s));
        assert!(Score::from_hundredths("s", 10_001).is_err());
    }

    #[test]
    fn a_missing_final_score_is_a_missing_parameter() {
        let mut new = input("80");
        new.final_score = None;
        let err = CuppingResult::new(&at(), new, now()).unwrap_err();
        assert_eq!(
            err,
            ResultError::Missing {
                field: FieldPath::from("results[0].finalScore")
            }
        );
        assert_eq!(err.violation(), Violation::MissingParameter);
    }

    #[test]
    fn attribute_scores_are_required_and_within_range() {
        let mut new = input("80");
        new.sensorial_attributes[0].score = None;
        assert_eq!(
            CuppingResult::new(&at(), new, now()),
            Err(ResultError::Missing {
                field: FieldPath::from("results[0].sensorialAttributes[0].score")
            })
        );
        let mut new = input("80");
        new.sensorial_attributes[0].score = Some(d("101"));
        assert_eq!(
            CuppingResult::new(&at(), new, now()),
            Err(ResultError::ScoreOutOfRange {
                field: FieldPath::from("results[0].sensorialAttributes[0].score"),
                value: d("101")
            })
        );
    }

    #[test]
    fn attributes_are_bounded_named_and_distinct() {
        let attribute = |name: &str| NewSensorialAttribute {
            name: name.into(),
            score: Some(d("7")),
        };
        let mut new = input("80");
        new.sensorial_attributes = (0..=MAX_SENSORIAL_ATTRIBUTES)
            .map(|i| attribute(&format!("a{i}")))
            .collect();
        assert_eq!(
            CuppingResult::new(&at(), new, now()),
            Err(ResultError::TooManyAttributes {
                field: FieldPath::from("results[0].sensorialAttributes"),
                count: 51
            })
        );
        let mut new = input("80");
        new.sensorial_attributes = vec![attribute("Body"), attribute(" body ")];
        let err = CuppingResult::new(&at(), new, now()).unwrap_err();
        assert_eq!(
            err,
            ResultError::DuplicateAttribute {
                field: FieldPath::from("results[0].sensorialAttributes[1].name"),
                name: "body".into()
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let mut new = input("80");
        new.sensorial_attributes = vec![attribute("  ")];
        assert!(matches!(
            CuppingResult::new(&at(), new, now()),
            Err(ResultError::Text(TextError::Empty { .. }))
        ));
    }

    #[test]
    fn texts_are_bounded() {
        let mut new = input("80");
        new.evaluator = Some("x".repeat(text::NAME_MAX + 1));
        assert!(matches!(
            CuppingResult::new(&at(), new, now()),
            Err(ResultError::Text(TextError::TooLong { .. }))
        ));
        let mut new = input("80");
        new.note = Some("x".repeat(text::NOTE_MAX + 1));
        assert_eq!(
            CuppingResult::new(&at(), new, now())
                .unwrap_err()
                .violation(),
            Violation::InvalidParameter
        );
    }

    #[test]
    fn scoring_states_have_wire_names() {
        assert_eq!(ScoringState::parse("EXCLUDED"), Ok(ScoringState::Excluded));
        assert_eq!(ScoringState::Included.as_str(), "INCLUDED");
        let err = ScoringState::parse("included").unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn the_summary_counts_only_included_results() {
        let results = [
            result("80", ScoringState::Included),
            result("90", ScoringState::Included),
            result("10", ScoringState::Excluded),
            result("99", ScoringState::Excluded),
        ];
        assert_eq!(
            ResultSummary::of(&results),
            ResultSummary {
                average_score: Some(d("85")),
                result_count: 2,
                min_score: Some(d("80")),
                max_score: Some(d("90")),
            }
        );
    }

    #[test]
    fn the_average_is_rounded_half_even_to_two_decimals() {
        // 80.01 + 80.02 = 160.03; / 2 = 80.015 → 80.02 (even).
        let results = [
            result("80.01", ScoringState::Included),
            result("80.02", ScoringState::Included),
        ];
        assert_eq!(ResultSummary::of(&results).average_score, Some(d("80.02")));
        // 80.02 + 80.03 = 160.05; / 2 = 80.025 → 80.02 (even).
        let results = [
            result("80.02", ScoringState::Included),
            result("80.03", ScoringState::Included),
        ];
        assert_eq!(ResultSummary::of(&results).average_score, Some(d("80.02")));
        // 80 + 80 + 81 = 241; / 3 = 80.333… → 80.33.
        let results = [
            result("80", ScoringState::Included),
            result("80", ScoringState::Included),
            result("81", ScoringState::Included),
        ];
        assert_eq!(ResultSummary::of(&results).average_score, Some(d("80.33")));
    }

    #[test]
    fn without_included_results_the_summary_is_empty() {
        let empty = ResultSummary {
            average_score: None,
            result_count: 0,
            min_score: None,
            max_score: None,
        };
        assert_eq!(ResultSummary::of(&[]), empty);
        assert_eq!(
            ResultSummary::of(&[result("88", ScoringState::Excluded)]),
            empty
        );
    }

    fn arb_result() -> impl Strategy<Value = (i64, bool)> {
        (0i64..=10_000, any::<bool>())
    }

    /// Average in hundredths by integer arithmetic, rounded half-even: an oracle independent of
    /// decimal division.
    fn integer_average(hundredths: &[i64]) -> Option<Decimal> {
        if hundredths.is_empty() {
            return None;
        }
        let n = hundredths.len() as i64;
        let sum: i64 = hundredths.iter().sum();
        let (q, r) = (sum / n, sum % n);
        let q = match (2 * r).cmp(&n) {
            std::cmp::Ordering::Greater => q + 1,
            std::cmp::Ordering::Equal => q + (q & 1),
            std::cmp::Ordering::Less => q,
        };
        Some(Decimal::new(q, 2).normalize())
    }

    proptest! {
        #[test]
        fn the_summary_is_that_of_the_included_results_and_is_ordered(
            raw in prop::collection::vec(arb_result(), 0..40)
        ) {
            let results: Vec<CuppingResult> = raw
                .iter()
                .map(|(h, included)| {
                    let state = if *included { ScoringState::Included } else { ScoringState::Excluded };
                    result(&Decimal::new(*h, 2).to_string(), state)
                })
                .collect();
            let summary = ResultSummary::of(&results);
            let included: Vec<CuppingResult> = results
                .iter()
                .filter(|r| r.scoring_state == ScoringState::Included)
                .cloned()
                .collect();
            prop_assert_eq!(summary, ResultSummary::of(&included));
            prop_assert_eq!(summary.result_count, included.len());
            let hundredths: Vec<i64> = included.iter().map(|r| r.final_score.hundredths()).collect();
            prop_assert_eq!(summary.average_score, integer_average(&hundredths));
            match (summary.min_score, summary.average_score, summary.max_score) {
                (Some(min), Some(avg), Some(max)) => {
                    prop_assert!(min <= avg && avg <= max);
                    prop_assert!(summary.result_count > 0);
                }
                (None, None, None) => prop_assert_eq!(summary.result_count, 0),
                other => prop_assert!(false, "inconsistent summary {:?}", other),
            }
        }
    }
}
