//! The EUDR sequences that call the EU information system between units of work (store → IS →
//! store: no transaction is held across a call), and the background jobs every instance runs:
//! the poller (submissions waiting for the IS) and the re-verifier (upstream statements whose
//! check grew old).
//!
//! One instance at a time works on a submission or a lot: each claims it in the database under
//! a lease first, as the webhook delivery loop claims deliveries.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use roastery_app::Roastery;
use roastery_app::due_diligence::GreenLotWithDueDiligence;
use roastery_app::eudr_settings::EudrTiming;
use roastery_app::submission::{PollOutcome, ToVerify};
use roastery_domain::dds::OperatorRole;
use roastery_domain::submission::{Modification, StatementInput, Submission, SubmissionStatus};
use roastery_ports::eudr::{DeclarationCheck, EudrSystem};
use roastery_ports::{AppError, Store, StoreError};
use tokio::sync::Notify;
use uuid::Uuid;

use super::eudr::EudrSchedule;

/// The connector's timing from its schedule (`ROASTERY_EUDR_POLL_SCALE`,
/// `ROASTERY_EUDR_REVERIFY_DAYS`).
pub fn timing(schedule: &EudrSchedule) -> EudrTiming {
    let poll = schedule.scaled(Duration::from_secs(30 * 60));
    EudrTiming {
        poll_interval: TimeDelta::from_std(poll).unwrap_or(TimeDelta::minutes(30)),
        reverify_after: schedule
            .reverify_after()
            .and_then(|after| TimeDelta::from_std(after).ok()),
    }
}

/// Runs a unit of work off the async worker.
async fn blocking<S: Store, T: Send + 'static>(
    app: &Roastery<S>,
    work: impl FnOnce(&Roastery<S>) -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    let app = app.clone();
    tokio::task::spawn_blocking(move || work(&app))
        .await
        .map_err(|e| AppError::Store(StoreError::Internal(format!("a unit of work failed: {e}"))))?
}

/// `verifyStatements`: asks the IS about each statement of the lot that has a verification
/// number and records the answers it gave (those it gave before a fault too).
pub async fn verify_statements<S: Store, E: EudrSystem>(
    app: &Roastery<S>,
    eu: &E,
    lot_id: Uuid,
) -> Result<GreenLotWithDueDiligence, AppError> {
    let to = blocking(app, move |app| app.statements_to_verify(lot_id)).await?;
    let (checks, fault) = check_all(eu, &to).await;
    let lot = blocking(app, move |app| app.record_verifications(lot_id, &checks)).await?;
    match fault {
        Some(fault) => Err(AppError::Eudr(fault)),
        None => Ok(lot),
    }
}

async fn check_all<E: EudrSystem>(
    eu: &E,
    to: &ToVerify,
) -> (
    Vec<(String, DeclarationCheck)>,
    Option<roastery_ports::eudr::EudrFault>,
) {
    let mut checks = Vec::with_capacity(to.pairs.len());
    for (reference, verification) in &to.pairs {
        match eu.verify_declaration(reference, verification).await {
            Ok(check) => checks.push((reference.clone(), check)),
            Err(fault) => return (checks, Some(fault)),
        }
    }
    (checks, None)
}

/// `submitStatement`: stores the submission `SENDING`, sends it, records `SUBMITTED` with the
/// IS's uuid or `FAILED` with the IS's refusal (then answered as the error). Without an answer
/// (timeout, connection, 5xx) it stays `SENDING` for the poller to resolve.
pub async fn submit_statement<S: Store, E: EudrSystem>(
    app: &Roastery<S>,
    eu: &E,
    input: StatementInput,
    timing: EudrTiming,
) -> Result<Submission, AppError> {
    let begun = blocking(app, move |app| app.begin_submission(input, timing)).await?;
    let id = begun.submission.id;
    let answer = eu
        .submit_dds(OperatorRole::Operator, &begun.statement)
        .await;
    let answered = answer.clone();
    let submission = blocking(app, move |app| app.finish_submission(id, &answered, timing)).await?;
    match answer {
        Ok(_) => Ok(submission),
        Err(fault) => Err(AppError::Eudr(fault)),
    }
}

/// `amendStatement`: checks the window and status, sends the new statement, records the IS's
/// answer. A fault records nothing.
pub async fn amend_statement<S: Store, E: EudrSystem>(
    app: &Roastery<S>,
    eu: &E,
    id: Uuid,
    input: StatementInput,
    timing: EudrTiming,
) -> Result<Submission, AppError> {
    let (submission, preview) = blocking(app, move |app| {
        app.begin_modification(id, Modification::Amend, Some(input))
    })
    .await?;
    let (Some(uuid), Some(preview)) = (submission.eu_uuid.clone(), preview) else {
        return Err(AppError::Store(StoreError::Internal(
            "an amendable submission has its uuid and statement".into(),
        )));
    };
    let answer = eu
        .amend_dds(&uuid, &preview.statement)
        .await
        .map_err(AppError::Eudr)?;
    blocking(app, move |app| {
        app.finish_amend(id, &answer, &preview, timing)
    })
    .await
}

/// `withdrawStatement`: checks the window and status, withdraws, records the IS's answer (the
/// lots' `OWN` statement of it no longer usable). A fault records nothing.
pub async fn withdraw_statement<S: Store, E: EudrSystem>(
    app: &Roastery<S>,
    eu: &E,
    id: Uuid,
) -> Result<Submission, AppError> {
    let (submission, _) = blocking(app, move |app| {
        app.begin_modification(id, Modification::Withdraw, None)
    })
    .await?;
    let Some(uuid) = submission.eu_uuid.clone() else {
        return Err(AppError::Store(StoreError::Internal(
            "a withdrawable submission has its uuid".into(),
        )));
    };
    let answer = eu.withdraw_dds(&uuid).await.map_err(AppError::Eudr)?;
    blocking(app, move |app| app.finish_withdraw(id, &answer)).await
}

/// Submissions claimed per round.
const CLAIM_BATCH: usize = 16;
/// How long a claim holds: longer than the IS's timeout.
const LEASE: TimeDelta = TimeDelta::minutes(2);

/// One instance's EUDR background jobs.
pub struct EudrJobs<S: Store, E: EudrSystem> {
    pub app: Roastery<S>,
    pub eu: Arc<E>,
    pub timing: EudrTiming,
}

impl<S: Store, E: EudrSystem> EudrJobs<S, E> {
    /// Runs until `stop` is notified.
    pub async fn run(self, stop: Arc<Notify>) {
        // Looks for due work at least twice per poll interval, between 100 ms and 30 s apart.
        let tick = self
            .timing
            .poll_interval
            .to_std()
            .unwrap_or(Duration::from_secs(60))
            .checked_div(2)
            .unwrap_or_default()
            .clamp(Duration::from_millis(100), Duration::from_secs(30));
        let lease = Uuid::new_v4();
        loop {
            self.poll_round(lease).await;
            self.reverify_round(lease).await;
            tokio::select! {
                () = stop.notified() => return,
                () = tokio::time::sleep(tick) => {}
            }
        }
    }

    /// Polls every due submission this instance could claim.
    pub async fn poll_round(&self, lease: Uuid) -> usize {
        let claimed = match blocking(&self.app, move |app| {
            app.claim_due_submissions(lease, LEASE, CLAIM_BATCH)
        })
        .await
        {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "claiming EUDR submissions to poll failed");
                return 0;
            }
        };
        let count = claimed.len();
        for submission in claimed {
            let outcome = self.ask(&submission).await;
            let id = submission.id;
            let timing = self.timing;
            match blocking(&self.app, move |app| {
                app.record_poll(id, lease, &outcome, timing)
            })
            .await
            {
                Ok(Some(s)) if s.status != submission.status => tracing::info!(
                    submission = %id, from = submission.status.as_str(), to = s.status.as_str(),
                    "EUDR submission status changed"
                ),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(submission = %id, error = %e, "recording an EUDR poll failed")
                }
            }
        }
        count
    }

    /// What the IS says of a submission: by its uuid, or (left `SENDING`) by its internal
    /// reference number.
    async fn ask(&self, s: &Submission) -> PollOutcome {
        let found = match (&s.eu_uuid, &s.status) {
            (Some(uuid), _) => self
                .eu
                .get_dds(std::slice::from_ref(uuid))
                .await
                .map(|list| list.into_iter().find(|o| &o.uuid == uuid)),
            (None, SubmissionStatus::Sending) => self
                .eu
                .get_dds_by_internal_reference(&s.internal_reference_number)
                .await
                .map(|list| {
                    list.into_iter()
                        .find(|o| o.internal_reference_number == s.internal_reference_number)
                }),
            (None, _) => Ok(None),
        };
        match found {
            Ok(Some(overview)) => PollOutcome::Found(overview),
            Ok(None) => PollOutcome::NotFound,
            Err(fault) => {
                tracing::warn!(submission = %s.id, error = %fault, "polling the EU information system failed");
                PollOutcome::Fault(fault)
            }
        }
    }

    /// Verifies again the statements of lots whose check grew old, one lot per claim.
    pub async fn reverify_round(&self, lease: Uuid) -> usize {
        let Some(after) = self.timing.reverify_after else {
            return 0;
        };
        let claimed = match blocking(&self.app, move |app| {
            app.claim_reverification(after, lease, LEASE, 4)
        })
        .await
        {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "claiming EUDR statements to verify failed");
                return 0;
            }
        };
        let count = claimed.len();
        for to in claimed {
            let (checks, fault) = check_all(self.eu.as_ref(), &to).await;
            if let Some(fault) = fault {
                tracing::warn!(lot = %to.lot_id, error = %fault, "re-verifying EUDR statements failed");
            }
            let lot_id = to.lot_id;
            if let Err(e) = blocking(&self.app, move |app| {
                app.record_verifications(lot_id, &checks)
            })
            .await
            {
                tracing::warn!(lot = %lot_id, error = %e, "recording EUDR verifications failed");
            }
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use roastery_app::due_diligence::SetDueDiligence;
    use roastery_app::testing::memory_roastery;
    use roastery_domain::dds::{DdsStatement, EudrStatus, VerificationResult};
    use roastery_domain::due_diligence::{DueDiligenceInput, StatementInput as SIn};
    use roastery_ports::eudr::{DdsModification, DdsOverview, EudrFault};
    use roastery_ports::testing::{InMemoryStore, ManualClock};
    use roastery_test_support::imports::green_import;

    use super::*;

    /// An IS that files every statement and answers what it was told to.
    #[derive(Default)]
    struct FakeIs {
        /// Statements filed: uuid, internal reference, status.
        filed: Mutex<Vec<(String, String, EudrStatus)>>,
        /// The next submit fails with this.
        fault: Mutex<Option<EudrFault>>,
        /// Submits are filed but answered with this (a timeout after the IS stored it).
        lose_answers: Mutex<bool>,
    }

    impl FakeIs {
        fn set_status(&self, status: EudrStatus) {
            for f in self.filed.lock().unwrap().iter_mut() {
                f.2 = status.clone();
            }
        }

        fn overview(&self, f: &(String, String, EudrStatus)) -> DdsOverview {
            let available = f.2 == EudrStatus::Available;
            DdsOverview {
                uuid: f.0.clone(),
                internal_reference_number: f.1.clone(),
                reference_number: available.then(|| "26DE7XTVCZAQ2S".into()),
                verification_number: available.then(|| "SFFCB4Y3".into()),
                status: f.2.clone(),
                rejection_reason: None,
                date: None,
            }
        }
    }

    impl EudrSystem for FakeIs {
        async fn verify_declaration(
            &self,
            reference_number: &str,
            _: &str,
        ) -> Result<DeclarationCheck, EudrFault> {
            Ok(DeclarationCheck {
                result: if reference_number.starts_with("25") {
                    VerificationResult::ExistingUsable
                } else {
                    VerificationResult::NonExistent
                },
                status: Some(EudrStatus::Available),
                checked: chrono::Utc::now(),
            })
        }

        async fn submit_dds(
            &self,
            _: OperatorRole,
            statement: &DdsStatement,
        ) -> Result<String, EudrFault> {
            if let Some(fault) = self.fault.lock().unwrap().take() {
                return Err(fault);
            }
            let mut filed = self.filed.lock().unwrap();
            let uuid = format!("00000000-0000-4000-8000-{:012}", filed.len() + 1);
            filed.push((
                uuid.clone(),
                statement
                    .internal_reference_number
                    .clone()
                    .unwrap_or_default(),
                EudrStatus::Submitted,
            ));
            if *self.lose_answers.lock().unwrap() {
                return Err(EudrFault::Unavailable("no answer within 30 s".into()));
            }
            Ok(uuid)
        }

        async fn amend_dds(
            &self,
            uuid: &str,
            _: &DdsStatement,
        ) -> Result<DdsModification, EudrFault> {
            Ok(DdsModification {
                uuid: uuid.into(),
                status: EudrStatus::Available,
            })
        }

        async fn withdraw_dds(&self, uuid: &str) -> Result<DdsModification, EudrFault> {
            self.set_status(EudrStatus::Withdrawn);
            Ok(DdsModification {
                uuid: uuid.into(),
                status: EudrStatus::Withdrawn,
            })
        }

        async fn get_dds(&self, uuids: &[String]) -> Result<Vec<DdsOverview>, EudrFault> {
            let filed = self.filed.lock().unwrap();
            Ok(filed
                .iter()
                .filter(|f| uuids.contains(&f.0))
                .map(|f| self.overview(f))
                .collect())
        }

        async fn get_dds_by_internal_reference(
            &self,
            internal_reference: &str,
        ) -> Result<Vec<DdsOverview>, EudrFault> {
            let filed = self.filed.lock().unwrap();
            Ok(filed
                .iter()
                .filter(|f| f.1 == internal_reference)
                .map(|f| self.overview(f))
                .collect())
        }
    }

    const PLOTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":2}}]}"#;

    fn world() -> (Roastery<InMemoryStore>, ManualClock, Uuid, EudrTiming) {
        let (app, clock) = memory_roastery();
        let lot = app
            .import_green_lot(green_import("Huila", "G-1", 69))
            .unwrap()
            .lot
            .id;
        app.set_due_diligence(SetDueDiligence {
            green_lot_id: lot,
            input: DueDiligenceInput {
                country_of_production: "CO".into(),
                production_from: "2025-10-01".into(),
                production_to: "2026-02-28".into(),
                plots: PLOTS.into(),
                statements: vec![
                    SIn {
                        reference_number: "25NLSN6LX69730".into(),
                        verification_number: Some("K7R8LA90".into()),
                        kind: "DDS".into(),
                        role: "UPSTREAM".into(),
                    },
                    SIn {
                        reference_number: "24XX0000000000".into(),
                        verification_number: Some("ABCDE".into()),
                        kind: "DDS".into(),
                        role: "UPSTREAM".into(),
                    },
                ],
                ..DueDiligenceInput::default()
            },
        })
        .unwrap();
        let timing = EudrTiming {
            poll_interval: TimeDelta::minutes(30),
            reverify_after: Some(TimeDelta::days(7)),
        };
        (app, clock, lot, timing)
    }

    fn input(lot: Uuid) -> StatementInput {
        StatementInput {
            green_lot_ids: vec![lot],
            activity_type: "IMPORT".into(),
            country_of_activity: Some("DE".into()),
            ..StatementInput::default()
        }
    }

    #[actix_web::test]
    async fn verification_records_each_outcome() {
        let (app, _, lot, _) = world();
        let eu = FakeIs::default();
        let got = verify_statements(&app, &eu, lot).await.unwrap();
        let results: Vec<String> = got
            .due_diligence
            .unwrap()
            .statements
            .iter()
            .map(|s| s.verification.clone().unwrap().result)
            .collect();
        assert_eq!(results, ["EXISTING_USABLE", "NON_EXISTENT"]);
    }

    #[actix_web::test]
    async fn submitted_polled_to_available_and_withdrawn() {
        let (app, clock, lot, timing) = world();
        let eu = Arc::new(FakeIs::default());
        let s = submit_statement(&app, eu.as_ref(), input(lot), timing)
            .await
            .unwrap();
        assert_eq!(s.status.as_str(), "SUBMITTED");
        let jobs = EudrJobs {
            app: app.clone(),
            eu: eu.clone(),
            timing,
        };
        let lease = Uuid::from_u128(1);
        assert_eq!(jobs.poll_round(lease).await, 0, "not before 30 minutes");
        clock.advance(TimeDelta::minutes(30));
        assert_eq!(jobs.poll_round(lease).await, 1);
        eu.set_status(EudrStatus::Available);
        clock.advance(TimeDelta::minutes(30));
        assert_eq!(jobs.poll_round(lease).await, 1);
        let s = app.submissions_by_ids(vec![s.id]).unwrap().remove(0);
        assert_eq!(s.status.as_str(), "AVAILABLE");
        assert_eq!(s.reference_number.as_deref(), Some("26DE7XTVCZAQ2S"));
        let withdrawn = withdraw_statement(&app, eu.as_ref(), s.id).await.unwrap();
        assert_eq!(withdrawn.status.as_str(), "WITHDRAWN");
    }

    #[actix_web::test]
    async fn a_fault_is_answered_and_leaves_the_submission_failed() {
        let (app, _, lot, timing) = world();
        let eu = FakeIs::default();
        *eu.fault.lock().unwrap() = Some(EudrFault::AuthFailed("refused".into()));
        let err = submit_statement(&app, &eu, input(lot), timing)
            .await
            .unwrap_err();
        assert!(matches!(err, AppError::Eudr(EudrFault::AuthFailed(_))));
        let page = app
            .list_submissions(Default::default(), Default::default())
            .unwrap();
        assert_eq!(page.items[0].status, SubmissionStatus::Failed);
    }

    #[actix_web::test]
    async fn a_submission_whose_answer_was_lost_is_found_by_its_internal_reference() {
        let (app, clock, lot, timing) = world();
        let eu = Arc::new(FakeIs::default());
        *eu.lose_answers.lock().unwrap() = true;
        // The answer was lost: answered as the fault, but the IS has it.
        let err = submit_statement(&app, eu.as_ref(), input(lot), timing).await;
        assert!(err.is_err());
        let id = app
            .list_submissions(Default::default(), Default::default())
            .unwrap()
            .items[0]
            .id;
        assert_eq!(
            app.submissions_by_ids(vec![id]).unwrap()[0].status,
            SubmissionStatus::Sending,
            "left for the poller to resolve"
        );
        let jobs = EudrJobs {
            app: app.clone(),
            eu: eu.clone(),
            timing,
        };
        clock.advance(TimeDelta::minutes(30));
        assert_eq!(jobs.poll_round(Uuid::from_u128(2)).await, 1);
        let s = app.submissions_by_ids(vec![id]).unwrap().remove(0);
        assert_eq!(s.status.as_str(), "SUBMITTED");
        assert!(s.eu_uuid.is_some());
    }
}
