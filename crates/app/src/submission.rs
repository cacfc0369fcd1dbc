//! Filing and verifying EUDR statements with the EU information system (api-decisions §14).
//!
//! Every call of the IS can take up to its client's timeout, so no transaction is held across
//! one: each use case here is one unit of work, and the sequences (store → IS → store) that
//! string them together live with the callers (the HTTP adapter's operations and background
//! jobs). Nothing is recorded as done that the IS did not confirm.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, TimeDelta, Utc};
use roastery_domain::dds::{DdsStatement, EudrStatus, VerificationResult};
use roastery_domain::due_diligence::{
    DueDiligence, Statement, StatementKind, StatementRole, Verification,
};
use roastery_domain::green_lot::GreenLotError;
use roastery_domain::operation::{Operation, Task};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::submission::{
    DdsLot, Modification, Observed, Preview, StatementInput, StatementRequest, Submission,
    SubmissionError, SubmissionStatus, assemble, default_internal_reference,
};
use roastery_domain::weight::WeightUnit;
use uuid::Uuid;

use crate::due_diligence::GreenLotWithDueDiligence;
use crate::green_lot::GreenLotView;
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::eudr::{DdsModification, DdsOverview, DeclarationCheck, EudrFault};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

use crate::eudr_settings::EudrTiming;

fn later(now: DateTime<Utc>, by: TimeDelta) -> DateTime<Utc> {
    now.checked_add_signed(by).unwrap_or(now)
}

/// A submission about to be sent, with the statement to send.
#[derive(Debug, Clone)]
pub struct Begun {
    pub submission: Submission,
    pub statement: DdsStatement,
}

/// What a poll of a claimed submission found.
#[derive(Debug, Clone)]
pub enum PollOutcome {
    /// `getDds` / `getDdsByInternalReference` listed it.
    Found(DdsOverview),
    /// The IS does not know it (yet).
    NotFound,
    /// The IS could not be asked; polled again later.
    Fault(EudrFault),
}

/// The statements of a lot to verify: reference and verification numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToVerify {
    pub lot_id: Uuid,
    pub pairs: Vec<(String, String)>,
}

fn kg(weight: roastery_domain::weight::Weight) -> rust_decimal::Decimal {
    weight.to_unit(WeightUnit::Kg).amount()
}

/// What the assembly needs of each requested lot, in the request's order.
fn dds_lots(tx: &mut impl Repos, ids: &[Uuid]) -> Result<Vec<DdsLot>, AppError> {
    let lots: HashMap<Uuid, _> = tx
        .green_lots_by_ids(ids)?
        .into_iter()
        .map(|l| (l.id, l))
        .collect();
    let sources: HashSet<Uuid> = tx
        .source_green_lots(ids)?
        .into_iter()
        .map(|s| s.id)
        .collect();
    let mut due: HashMap<Uuid, DueDiligence> = tx.due_diligence_of(ids)?.into_iter().collect();
    let weights: HashMap<Uuid, _> = tx.imported_weights(ids)?.into_iter().collect();
    ids.iter()
        .map(|id| {
            let lot = lots.get(id).ok_or(GreenLotError::NotFound(*id))?;
            Ok(DdsLot {
                id: *id,
                lot_number: lot.number(),
                name: lot.name.clone(),
                is_source: sources.contains(id),
                due_diligence: due.remove(id),
                net_weight_kg: weights.get(id).copied().map(kg),
            })
        })
        .collect()
}

fn preview_in(
    tx: &mut impl Repos,
    request: &StatementRequest,
    submission_id: Uuid,
) -> Result<Preview, AppError> {
    let lots = dds_lots(tx, &request.green_lot_ids)?;
    let reference = request
        .internal_reference_number
        .clone()
        .unwrap_or_else(|| default_internal_reference(submission_id));
    Ok(assemble(request, &lots, &reference))
}

fn not_found(id: Uuid) -> AppError {
    SubmissionError::NotFound(id).into()
}

impl<S: Store> Roastery<S> {
    /// The waits of the EUDR connector.
    pub fn with_eudr_timing(self, timing: EudrTiming) -> Self {
        Self {
            eudr_timing: timing,
            ..self
        }
    }

    pub fn eudr_timing(&self) -> EudrTiming {
        self.eudr_timing
    }

    /// The statement Roastery would send for these lots, and every EU rule it would break.
    pub fn preview_statement(&self, input: StatementInput) -> Result<Preview, AppError> {
        let request = StatementRequest::parse(input)?;
        let id = self.ids.new_id();
        self.store.read(|tx| preview_in(tx, &request, id))
    }

    /// Stores a `SENDING` submission of a statement without problems (else nothing is stored
    /// and the problems are the error), to be sent next.
    pub fn begin_submission(
        &self,
        input: StatementInput,
        timing: EudrTiming,
    ) -> Result<Begun, AppError> {
        let request = StatementRequest::parse(input)?;
        let id = self.ids.new_id();
        self.write(Operation::SubmitStatement, |tx| {
            let preview = preview_in(tx, &request, id)?;
            if !preview.ready() {
                return Err(SubmissionError::Problems(preview.problems).into());
            }
            let now = self.clock.now();
            let submission = Submission::sending(
                id,
                &preview,
                &request,
                now,
                later(now, timing.poll_interval),
            );
            tx.insert_submission(&submission)?;
            Ok(Begun {
                submission,
                statement: preview.statement,
            })
        })
    }

    /// Records what `submitDds` answered: `SUBMITTED` with the IS's uuid, or `FAILED` with
    /// the IS's refusal; without an answer it stays `SENDING` (the poller resolves it).
    pub fn finish_submission(
        &self,
        id: Uuid,
        answer: &Result<String, EudrFault>,
        timing: EudrTiming,
    ) -> Result<Submission, AppError> {
        self.write(Operation::SubmitStatement, |tx| {
            let mut s = tx.submission_for_update(id)?.ok_or_else(|| not_found(id))?;
            let now = self.clock.now();
            match answer {
                Ok(uuid) if s.eu_uuid.is_none() => {
                    s.submitted(uuid.clone(), now, later(now, timing.poll_interval));
                }
                Ok(_) => return Ok(s),
                // No answer: the IS may have it; the poller asks by internal reference.
                Err(fault @ EudrFault::Unavailable(_)) if s.status == SubmissionStatus::Sending => {
                    s.unanswered(fault.to_string(), now);
                }
                Err(fault) if s.status == SubmissionStatus::Sending => {
                    s.failed(fault.to_string(), now);
                }
                Err(_) => return Ok(s),
            }
            tx.update_submission(&s)?;
            Ok(s)
        })
    }

    /// The submission to amend or withdraw, checked against the IS's window and statuses, and
    /// for an amendment the new statement (with the submission's activity type and internal
    /// reference unless another is given).
    pub fn begin_modification(
        &self,
        id: Uuid,
        what: Modification,
        input: Option<StatementInput>,
    ) -> Result<(Submission, Option<Preview>), AppError> {
        self.store.read(|tx| {
            let s = tx
                .submissions_by_ids(&[id])?
                .into_iter()
                .next()
                .ok_or_else(|| not_found(id))?;
            s.check_modifiable(what, self.clock.now())?;
            let Some(mut input) = input else {
                return Ok((s, None));
            };
            input.activity_type = s.activity_type.as_str().to_owned();
            if input.internal_reference_number.is_none() {
                input.internal_reference_number = Some(s.internal_reference_number.clone());
            }
            let request = StatementRequest::parse(input)?;
            let preview = preview_in(tx, &request, id)?;
            if !preview.ready() {
                return Err(SubmissionError::Problems(preview.problems).into());
            }
            Ok((s, Some(preview)))
        })
    }

    /// Records what `amendDds` answered (only an answer: a fault records nothing).
    pub fn finish_amend(
        &self,
        id: Uuid,
        answer: &DdsModification,
        preview: &Preview,
        timing: EudrTiming,
    ) -> Result<Submission, AppError> {
        self.write(Operation::AmendStatement, |tx| {
            let mut s = tx.submission_for_update(id)?.ok_or_else(|| not_found(id))?;
            let now = self.clock.now();
            s.amended(
                answer.status.clone(),
                preview.statement_json().to_string(),
                now,
                later(now, timing.poll_interval),
            );
            tx.update_submission(&s)?;
            Ok(s)
        })
    }

    /// Records what `withdrawDds` answered: the lots' `OWN` statement of it becomes
    /// `EXISTING_NON_USABLE`, `WITHDRAWN`.
    pub fn finish_withdraw(
        &self,
        id: Uuid,
        answer: &DdsModification,
    ) -> Result<Submission, AppError> {
        self.write(Operation::WithdrawStatement, |tx| {
            let mut s = tx.submission_for_update(id)?.ok_or_else(|| not_found(id))?;
            let now = self.clock.now();
            s.withdrawn(answer.status.clone(), now);
            tx.update_submission(&s)?;
            if let Some(reference) = s.reference_number.clone() {
                let verification = Verification {
                    result: VerificationResult::ExistingNonUsable.as_str().to_owned(),
                    status: Some(answer.status.as_str().to_owned()),
                    checked_date: now,
                };
                for lot in &s.green_lot_ids {
                    change_statements(tx, *lot, now, |statements| {
                        let mut changed = false;
                        for st in statements.iter_mut().filter(|st| {
                            st.role == StatementRole::Own && st.reference_number == reference
                        }) {
                            st.verification = Some(verification.clone());
                            changed = true;
                        }
                        changed
                    })?;
                }
            }
            Ok(s)
        })
    }

    pub fn list_submissions(
        &self,
        filter: SubmissionFilter,
        page: PageRequest,
    ) -> Result<Page<Submission>, AppError> {
        self.store
            .read_replica(|tx| Ok(tx.list_submissions(&filter, &page)?))
    }

    /// The stored submissions among `ids`, in the order asked.
    pub fn submissions_by_ids(&self, ids: Vec<Uuid>) -> Result<Vec<Submission>, AppError> {
        roastery_domain::page::unique_ids("filter.submissionIds", &ids, 100)?;
        let found = self
            .store
            .read_replica(|tx| Ok(tx.submissions_by_ids(&ids)?))?;
        let mut by_id: HashMap<Uuid, Submission> = found.into_iter().map(|s| (s.id, s)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    /// The statements of a source lot that have a verification number, to verify.
    pub fn statements_to_verify(&self, lot_id: Uuid) -> Result<ToVerify, AppError> {
        self.store.read(|tx| {
            let lot = tx
                .green_lot(lot_id)?
                .ok_or(GreenLotError::NotFound(lot_id))?;
            if tx.source_green_lots(&[lot_id])?.is_empty() {
                return Err(crate::due_diligence::not_a_source(tx, &lot)?.into());
            }
            let statements = tx
                .due_diligence_of(&[lot_id])?
                .into_iter()
                .next()
                .map(|(_, d)| d.statements)
                .unwrap_or_default();
            Ok(ToVerify {
                lot_id,
                pairs: statements
                    .into_iter()
                    .filter_map(|s| Some((s.reference_number, s.verification_number?)))
                    .collect(),
            })
        })
    }

    /// Records what `verifyDeclaration` answered for some statements of a lot (by reference
    /// number); `greenLot.updated` when an outcome changed. Answers the lot with its details.
    pub fn record_verifications(
        &self,
        lot_id: Uuid,
        checks: &[(String, DeclarationCheck)],
    ) -> Result<GreenLotWithDueDiligence, AppError> {
        self.write(Operation::VerifyStatements, |tx| {
            let now = self.clock.now();
            change_statements(tx, lot_id, now, |statements| {
                let mut changed = false;
                for (reference, check) in checks {
                    for st in statements
                        .iter_mut()
                        .filter(|s| &s.reference_number == reference)
                    {
                        let verification = Verification {
                            result: check.result.as_str().to_owned(),
                            status: check.status.as_ref().map(|s| s.as_str().to_owned()),
                            checked_date: check.checked,
                        };
                        let same_outcome = st.verification.as_ref().is_some_and(|v| {
                            v.result == verification.result && v.status == verification.status
                        });
                        changed |= !same_outcome;
                        st.verification = Some(verification);
                    }
                }
                changed
            })?;
            lot_with_due_diligence(tx, lot_id)
        })
    }

    /// Claims submissions due for polling, until `lease_for` from now.
    pub fn claim_due_submissions(
        &self,
        lease: Uuid,
        lease_for: TimeDelta,
        limit: usize,
    ) -> Result<Vec<Submission>, AppError> {
        self.write_task(Task::EudrPoll, |tx| {
            let now = self.clock.now();
            Ok(tx.claim_due_submissions(now, later(now, lease_for), lease, limit)?)
        })
    }

    /// Records what a poll of a claimed submission found, if `lease` still holds it: every
    /// status change in its history; at `AVAILABLE`, its `OWN` statement on each of its lots.
    /// Returns the submission when the outcome was stored.
    pub fn record_poll(
        &self,
        id: Uuid,
        lease: Uuid,
        outcome: &PollOutcome,
        timing: EudrTiming,
    ) -> Result<Option<Submission>, AppError> {
        self.write_task(Task::EudrPoll, |tx| {
            if !tx.holds_submission(id, lease)? {
                return Ok(None);
            }
            let Some(mut s) = tx.submission_for_update(id)? else {
                return Ok(None);
            };
            let now = self.clock.now();
            let next = later(now, timing.poll_interval);
            match outcome {
                PollOutcome::Found(o) => {
                    s.observe(
                        Observed {
                            eu_uuid: o.uuid.clone(),
                            status: o.status.clone(),
                            reference_number: o.reference_number.clone(),
                            verification_number: o.verification_number.clone(),
                            rejection_reason: o.rejection_reason.clone(),
                        },
                        now,
                        next,
                    );
                }
                PollOutcome::NotFound
                    if s.status == SubmissionStatus::Sending
                        && now >= later(s.submitted_date, timing.sending_given_up_after()) =>
                {
                    s.not_found_in_the_is(now);
                }
                PollOutcome::NotFound | PollOutcome::Fault(_) => s.next_poll_at = Some(next),
            }
            tx.update_submission(&s)?;
            if s.status == SubmissionStatus::Eu(EudrStatus::Available) {
                record_own_statement(tx, &s, now)?;
            }
            Ok(Some(s))
        })
    }

    /// Lots whose statements are due for re-verification (checked longer ago than
    /// `reverify_after`, or never), each claimed for this instance until `lease_for` from now.
    pub fn claim_reverification(
        &self,
        reverify_after: TimeDelta,
        lease: Uuid,
        lease_for: TimeDelta,
        limit: usize,
    ) -> Result<Vec<ToVerify>, AppError> {
        self.write_task(Task::EudrReverify, |tx| {
            let now = self.clock.now();
            let stale = now.checked_sub_signed(reverify_after).unwrap_or(now);
            let lots = tx.lots_with_statements()?;
            let mut claimed = Vec::new();
            for (lot_id, d) in tx.due_diligence_of(&lots)? {
                if claimed.len() >= limit {
                    break;
                }
                let pairs: Vec<(String, String)> = d
                    .statements
                    .into_iter()
                    .filter(|s| {
                        s.verification
                            .as_ref()
                            .is_none_or(|v| v.checked_date < stale)
                    })
                    .filter_map(|s| Some((s.reference_number, s.verification_number?)))
                    .collect();
                if pairs.is_empty() {
                    continue;
                }
                if tx.claim_verification(lot_id, now, later(now, lease_for), lease)? {
                    claimed.push(ToVerify { lot_id, pairs });
                }
            }
            Ok(claimed)
        })
    }
}

/// Changes the statements of a lot's due diligence with `change`; stores them whatever it
/// did (verification dates), and notes the lot updated when it says something changed.
fn change_statements(
    tx: &mut impl Repos,
    lot_id: Uuid,
    now: DateTime<Utc>,
    change: impl FnOnce(&mut Vec<Statement>) -> bool,
) -> Result<(), AppError> {
    let mut lot = tx
        .green_lot_for_update(lot_id)?
        .ok_or(GreenLotError::NotFound(lot_id))?;
    let Some((_, mut d)) = tx.due_diligence_of(&[lot_id])?.into_iter().next() else {
        return Ok(());
    };
    let changed = change(&mut d.statements);
    if changed {
        d.updated_date = now;
    }
    tx.put_due_diligence(lot_id, &d)?;
    if changed {
        lot.apply(|l| l.last_modified_date = now)?;
        tx.update_green_lot(&lot)?;
    }
    Ok(())
}

/// At `AVAILABLE`: the submission's `OWN` statement on each of its lots, replacing an earlier
/// one of the same submission (same reference number).
fn record_own_statement(
    tx: &mut impl Repos,
    s: &Submission,
    now: DateTime<Utc>,
) -> Result<(), AppError> {
    let Some(reference) = s.reference_number.clone() else {
        return Ok(());
    };
    let statement = Statement {
        reference_number: reference.clone(),
        verification_number: s.verification_number.clone(),
        kind: StatementKind::Dds,
        role: StatementRole::Own,
        verification: Some(Verification {
            result: VerificationResult::ExistingUsable.as_str().to_owned(),
            status: Some(EudrStatus::Available.as_str().to_owned()),
            checked_date: now,
        }),
    };
    for lot in &s.green_lot_ids {
        change_statements(tx, *lot, now, |statements| {
            let unchanged = statements.iter().any(|st| {
                st.reference_number == reference
                    && st.role == StatementRole::Own
                    && st.verification_number == statement.verification_number
                    && st
                        .verification
                        .as_ref()
                        .is_some_and(|v| v.result == VerificationResult::ExistingUsable.as_str())
            });
            if unchanged {
                return false;
            }
            statements.retain(|st| st.reference_number != reference);
            statements.push(statement.clone());
            true
        })?;
    }
    Ok(())
}

fn lot_with_due_diligence(
    tx: &mut impl Repos,
    lot_id: Uuid,
) -> Result<GreenLotWithDueDiligence, AppError> {
    let lot = tx
        .green_lot(lot_id)?
        .ok_or(GreenLotError::NotFound(lot_id))?;
    let location = match lot.location_id {
        Some(l) => tx.location(l)?,
        None => None,
    };
    let due_diligence = tx
        .due_diligence_of(&[lot_id])?
        .into_iter()
        .next()
        .map(|(_, d)| d);
    let details = lot.details.clone();
    Ok(GreenLotWithDueDiligence {
        view: GreenLotView { lot, location },
        details,
        due_diligence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::due_diligence::SetDueDiligence;
    use crate::green_lot::{ImportGreenLot, WeightInput};
    use crate::testing::memory_roastery;
    use roastery_domain::Violation;
    use roastery_domain::due_diligence::{DueDiligenceInput, StatementInput as SIn};
    use roastery_ports::testing::{InMemoryStore, ManualClock};
    use rust_decimal::Decimal;

    const PLOTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":2,"ProducerName":"Finca"}}]}"#;

    fn timing() -> EudrTiming {
        EudrTiming {
            poll_interval: TimeDelta::minutes(30),
            reverify_after: Some(TimeDelta::days(7)),
        }
    }

    fn source_lot(app: &Roastery<InMemoryStore>, name: &str, upstream: &[(&str, &str)]) -> Uuid {
        let id = app
            .import_green_lot(ImportGreenLot {
                name: Some(name.into()),
                external_id: Some(name.into()),
                weight: WeightInput {
                    amount: Decimal::from(60),
                    unit: WeightUnit::Kg,
                },
                ico_number: None,
                price: None,
                location_id: None,
                location_external_id: None,
                projects: Vec::new(),
                details: Default::default(),
            })
            .unwrap()
            .lot
            .id;
        app.set_due_diligence(SetDueDiligence {
            green_lot_id: id,
            input: DueDiligenceInput {
                country_of_production: "CO".into(),
                production_from: "2025-10-01".into(),
                production_to: "2026-02-28".into(),
                plots: PLOTS.into(),
                suppliers: Vec::new(),
                statements: upstream
                    .iter()
                    .map(|(r, v)| SIn {
                        reference_number: (*r).into(),
                        verification_number: Some((*v).into()),
                        kind: "DDS".into(),
                        role: "UPSTREAM".into(),
                    })
                    .collect(),
                hs_code: None,
            },
        })
        .unwrap();
        id
    }

    fn request(ids: Vec<Uuid>) -> StatementInput {
        StatementInput {
            green_lot_ids: ids,
            activity_type: "IMPORT".into(),
            country_of_activity: Some("DE".into()),
            ..StatementInput::default()
        }
    }

    fn setup() -> (Roastery<InMemoryStore>, ManualClock, Uuid) {
        let (app, clock) = memory_roastery();
        let lot = source_lot(&app, "Huila", &[("25NLSN6LX69730", "K7R8LA90")]);
        (app, clock, lot)
    }

    fn events(app: &Roastery<InMemoryStore>, kind: &str) -> usize {
        app.store
            .read(|tx| {
                Ok(tx
                    .list_events(&[], 0, 1000)?
                    .into_iter()
                    .filter(|e| e.event_type.to_string() == kind)
                    .count())
            })
            .unwrap()
    }

    #[test]
    fn a_preview_declares_each_lot_with_its_imported_weight() {
        let (app, _, lot) = setup();
        let preview = app.preview_statement(request(vec![lot])).unwrap();
        assert!(preview.ready(), "{:?}", preview.problems);
        assert_eq!(preview.commodity_lots, vec![lot]);
        assert_eq!(
            preview.statement.commodities[0].net_weight_kg,
            Decimal::from(60)
        );
        let unknown = app
            .preview_statement(request(vec![Uuid::from_u128(77)]))
            .unwrap_err();
        assert_eq!(unknown.violation(), Some(Violation::NotFound));
    }

    #[test]
    fn a_statement_with_problems_is_refused_and_nothing_is_stored() {
        let (app, _, lot) = setup();
        let mut req = request(vec![lot]);
        req.country_of_activity = None;
        let err = app.begin_submission(req, timing()).unwrap_err();
        assert!(matches!(
            err.rule::<SubmissionError>(),
            Some(SubmissionError::Problems(p)) if p[0].rule == "COUNTRY_OF_ACTIVITY"
        ));
        let page = app
            .list_submissions(SubmissionFilter::default(), PageRequest::default())
            .unwrap();
        assert!(page.items.is_empty());
    }

    #[test]
    fn submitted_then_polled_to_available_records_the_own_statement_on_every_lot() {
        let (app, clock, lot) = setup();
        let other = source_lot(&app, "Caldas", &[]);
        let begun = app
            .begin_submission(request(vec![lot, other]), timing())
            .unwrap();
        assert_eq!(begun.submission.status, SubmissionStatus::Sending);
        assert_eq!(events(&app, "submission.created"), 1);
        let id = begun.submission.id;
        let s = app
            .finish_submission(id, &Ok("eu-uuid-1".into()), timing())
            .unwrap();
        assert_eq!(s.status.as_str(), "SUBMITTED");
        // Not polled before 30 minutes.
        let lease = Uuid::from_u128(500);
        assert!(
            app.claim_due_submissions(lease, TimeDelta::minutes(1), 10)
                .unwrap()
                .is_empty()
        );
        clock.advance(TimeDelta::minutes(30));
        let claimed = app
            .claim_due_submissions(lease, TimeDelta::minutes(1), 10)
            .unwrap();
        assert_eq!(claimed.len(), 1);
        // A second instance finds nothing to claim meanwhile.
        assert!(
            app.claim_due_submissions(Uuid::from_u128(501), TimeDelta::minutes(1), 10)
                .unwrap()
                .is_empty()
        );
        let overview = DdsOverview {
            uuid: "eu-uuid-1".into(),
            internal_reference_number: s.internal_reference_number.clone(),
            reference_number: Some("26DE7XTVCZAQ2S".into()),
            verification_number: Some("SFFCB4Y3".into()),
            status: EudrStatus::Available,
            rejection_reason: None,
            date: None,
        };
        // Another lease records nothing.
        assert!(
            app.record_poll(
                id,
                Uuid::from_u128(501),
                &PollOutcome::Found(overview.clone()),
                timing()
            )
            .unwrap()
            .is_none()
        );
        let s = app
            .record_poll(id, lease, &PollOutcome::Found(overview), timing())
            .unwrap()
            .unwrap();
        assert_eq!(s.status.as_str(), "AVAILABLE");
        assert_eq!(s.next_poll_at, None);
        for l in [lot, other] {
            let d = app.store.read(|tx| Ok(tx.due_diligence_of(&[l])?)).unwrap();
            let own: Vec<&Statement> = d[0]
                .1
                .statements
                .iter()
                .filter(|s| s.role == StatementRole::Own)
                .collect();
            assert_eq!(own.len(), 1);
            assert_eq!(own[0].reference_number, "26DE7XTVCZAQ2S");
            assert_eq!(
                own[0].verification.as_ref().unwrap().result,
                "EXISTING_USABLE"
            );
        }
        // Withdrawn: the OWN statement is no longer usable.
        let (s, _) = app
            .begin_modification(id, Modification::Withdraw, None)
            .unwrap();
        let s = app
            .finish_withdraw(
                s.id,
                &DdsModification {
                    uuid: "eu-uuid-1".into(),
                    status: EudrStatus::Withdrawn,
                },
            )
            .unwrap();
        assert_eq!(s.status.as_str(), "WITHDRAWN");
        let d = app
            .store
            .read(|tx| Ok(tx.due_diligence_of(&[lot])?))
            .unwrap();
        let own = d[0]
            .1
            .statements
            .iter()
            .find(|s| s.role == StatementRole::Own)
            .unwrap();
        let v = own.verification.as_ref().unwrap();
        assert_eq!(
            (v.result.as_str(), v.status.as_deref()),
            ("EXISTING_NON_USABLE", Some("WITHDRAWN"))
        );
        let history: Vec<&str> = s.history.iter().map(|h| h.status.as_str()).collect();
        assert_eq!(history, ["SENDING", "SUBMITTED", "AVAILABLE", "WITHDRAWN"]);
    }

    #[test]
    fn a_fault_leaves_the_submission_failed_with_the_fault() {
        let (app, _, lot) = setup();
        let begun = app.begin_submission(request(vec![lot]), timing()).unwrap();
        let s = app
            .finish_submission(
                begun.submission.id,
                &Err(EudrFault::Rejected(vec![roastery_ports::eudr::EuError {
                    code: "EUDR_COMMODITIES_HS_CODE_INVALID".into(),
                    field: None,
                    message: "bad".into(),
                }])),
                timing(),
            )
            .unwrap();
        assert_eq!(s.status, SubmissionStatus::Failed);
        assert!(
            s.history[1]
                .message
                .as_deref()
                .unwrap()
                .contains("EUDR_COMMODITIES_HS_CODE_INVALID")
        );
        // Without an answer it stays SENDING, the fault in its history.
        let begun = app.begin_submission(request(vec![lot]), timing()).unwrap();
        let s = app
            .finish_submission(
                begun.submission.id,
                &Err(EudrFault::Unavailable("timeout".into())),
                timing(),
            )
            .unwrap();
        assert_eq!(s.status, SubmissionStatus::Sending);
        assert!(s.history[1].message.as_deref().unwrap().contains("timeout"));
        assert!(
            app.begin_modification(s.id, Modification::Withdraw, None)
                .is_err()
        );
    }

    #[test]
    fn a_submission_left_sending_fails_an_hour_later_when_the_is_does_not_know_it() {
        let (app, clock, lot) = setup();
        let begun = app.begin_submission(request(vec![lot]), timing()).unwrap();
        let id = begun.submission.id;
        let lease = Uuid::from_u128(600);
        clock.advance(TimeDelta::minutes(30));
        let claimed = app
            .claim_due_submissions(lease, TimeDelta::minutes(1), 10)
            .unwrap();
        assert_eq!(claimed[0].id, id);
        let s = app
            .record_poll(id, lease, &PollOutcome::NotFound, timing())
            .unwrap()
            .unwrap();
        assert_eq!(s.status, SubmissionStatus::Sending);
        clock.advance(TimeDelta::minutes(30));
        app.claim_due_submissions(lease, TimeDelta::minutes(1), 10)
            .unwrap();
        let s = app
            .record_poll(id, lease, &PollOutcome::NotFound, timing())
            .unwrap()
            .unwrap();
        assert_eq!(s.status, SubmissionStatus::Failed);
    }

    #[test]
    fn verification_outcomes_are_recorded_and_an_unchanged_outcome_emits_nothing() {
        let (app, clock, lot) = setup();
        let to = app.statements_to_verify(lot).unwrap();
        assert_eq!(
            to.pairs,
            vec![("25NLSN6LX69730".to_owned(), "K7R8LA90".to_owned())]
        );
        let check = DeclarationCheck {
            result: VerificationResult::ExistingUsable,
            status: Some(EudrStatus::Available),
            checked: clock.now_value(),
        };
        let before = events(&app, "greenLot.updated");
        let got = app
            .record_verifications(lot, &[("25NLSN6LX69730".into(), check.clone())])
            .unwrap();
        let v = got.due_diligence.unwrap().statements[0]
            .verification
            .clone()
            .unwrap();
        assert_eq!(v.result, "EXISTING_USABLE");
        assert_eq!(events(&app, "greenLot.updated"), before + 1);
        app.record_verifications(lot, &[("25NLSN6LX69730".into(), check)])
            .unwrap();
        assert_eq!(events(&app, "greenLot.updated"), before + 1);
        // Due again after 7 days, claimed by one instance at a time.
        let lease = Uuid::from_u128(700);
        assert!(
            app.claim_reverification(TimeDelta::days(7), lease, TimeDelta::minutes(1), 10)
                .unwrap()
                .is_empty()
        );
        clock.advance(TimeDelta::days(8));
        let due = app
            .claim_reverification(TimeDelta::days(7), lease, TimeDelta::minutes(1), 10)
            .unwrap();
        assert_eq!(due.len(), 1);
        assert!(
            app.claim_reverification(
                TimeDelta::days(7),
                Uuid::from_u128(701),
                TimeDelta::minutes(1),
                10
            )
            .unwrap()
            .is_empty()
        );
    }

    #[test]
    fn ship_verified_needs_every_upstream_statement_usable_and_recent() {
        let (app, clock, lot) = setup();
        let app = app.with_eudr_timing(timing());
        let report = app
            .due_diligence_of(crate::due_diligence::DueDiligenceOf::Lot(lot))
            .unwrap();
        let since = clock.now_value() - TimeDelta::days(7);
        assert!(crate::due_diligence::check_verified(&report, Some(since)).is_err());
        app.record_verifications(
            lot,
            &[(
                "25NLSN6LX69730".into(),
                DeclarationCheck {
                    result: VerificationResult::ExistingUsable,
                    status: Some(EudrStatus::Available),
                    checked: clock.now_value(),
                },
            )],
        )
        .unwrap();
        let report = app
            .due_diligence_of(crate::due_diligence::DueDiligenceOf::Lot(lot))
            .unwrap();
        assert!(crate::due_diligence::check_verified(&report, Some(since)).is_ok());
        let later_since = clock.now_value() + TimeDelta::days(1);
        assert!(crate::due_diligence::check_verified(&report, Some(later_since)).is_err());
    }
}
