//! In-memory EUDR submissions and their claims.

use chrono::{DateTime, Utc};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::ledger::EntryKind;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::submission::Submission;
use roastery_domain::weight::Weight;
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use super::tables::Claim;
use crate::error::StoreError;
use crate::repo::{EventRepo, StoreResult, SubmissionFilter, SubmissionRepo};

impl SubmissionRepo for MemTx {
    fn insert_submission(&mut self, submission: &Submission) -> StoreResult<()> {
        if self
            .data
            .submissions
            .rows
            .iter()
            .any(|(s, _)| s.id == submission.id)
        {
            return Err(StoreError::Duplicate(format!(
                "submission {}",
                submission.id
            )));
        }
        self.data.submissions.rows.push((submission.clone(), None));
        self.record_change(
            Subject::new(Resource::Submission, submission.id),
            Change::Created,
        );
        Ok(())
    }

    fn submission_for_update(&mut self, id: Uuid) -> StoreResult<Option<Submission>> {
        Ok(self
            .data
            .submissions
            .rows
            .iter()
            .find(|(s, _)| s.id == id)
            .map(|(s, _)| s.clone()))
    }

    fn update_submission(&mut self, submission: &Submission) -> StoreResult<()> {
        let row = self
            .data
            .submissions
            .rows
            .iter_mut()
            .find(|(s, _)| s.id == submission.id)
            .ok_or_else(|| StoreError::Internal(format!("no submission {}", submission.id)))?;
        *row = (submission.clone(), None);
        self.record_change(
            Subject::new(Resource::Submission, submission.id),
            Change::Updated,
        );
        Ok(())
    }

    fn submissions_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Submission>> {
        Ok(self
            .data
            .submissions
            .rows
            .iter()
            .filter(|(s, _)| ids.contains(&s.id))
            .map(|(s, _)| s.clone())
            .collect())
    }

    fn list_submissions(
        &mut self,
        filter: &SubmissionFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Submission>> {
        let rows = self.data.submissions.rows.iter().filter_map(|(s, _)| {
            let status = filter
                .status
                .as_deref()
                .is_none_or(|st| s.status.as_str() == st);
            let lot = filter
                .green_lot_id
                .is_none_or(|l| s.green_lot_ids.contains(&l));
            (status && lot).then(|| s.clone())
        });
        page_newest_first(rows, |s| (s.submitted_date, s.id), page)
    }

    fn claim_due_submissions(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
    ) -> StoreResult<Vec<Submission>> {
        let mut due: Vec<&mut (Submission, Claim)> = self
            .data
            .submissions
            .rows
            .iter_mut()
            .filter(|(s, claim)| {
                s.next_poll_at.is_some_and(|at| at <= now)
                    && claim.is_none_or(|(_, until)| until < now)
            })
            .collect();
        due.sort_by_key(|(s, _)| (s.next_poll_at, s.id));
        Ok(due
            .into_iter()
            .take(limit)
            .map(|(s, claim)| {
                *claim = Some((lease, lease_until));
                s.clone()
            })
            .collect())
    }

    fn holds_submission(&mut self, id: Uuid, lease: Uuid) -> StoreResult<bool> {
        Ok(self
            .data
            .submissions
            .rows
            .iter()
            .any(|(s, claim)| s.id == id && claim.is_some_and(|(l, _)| l == lease)))
    }

    fn imported_weights(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>> {
        let mut found = Vec::new();
        for e in &self.data.ledger {
            if lot_ids.contains(&e.lot.id)
                && matches!(e.kind, EntryKind::Import | EntryKind::Opening)
                && !found.iter().any(|(id, _)| *id == e.lot.id)
            {
                let weight = Weight::from_micros(e.delta_micros, e.unit())
                    .map_err(|err| StoreError::Internal(err.to_string()))?;
                found.push((e.lot.id, weight));
            }
        }
        Ok(found)
    }

    fn lots_with_statements(&mut self) -> StoreResult<Vec<Uuid>> {
        Ok(self
            .data
            .due_diligence
            .iter()
            .filter(|(_, d)| !d.statements.is_empty())
            .map(|(id, _)| *id)
            .collect())
    }

    fn claim_verification(
        &mut self,
        lot_id: Uuid,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
    ) -> StoreResult<bool> {
        let claims = &mut self.data.submissions.verification_claims;
        if claims
            .iter()
            .any(|(lot, _, until)| *lot == lot_id && *until >= now)
        {
            return Ok(false);
        }
        claims.retain(|(lot, _, _)| *lot != lot_id);
        claims.push((lot_id, lease, lease_until));
        Ok(true)
    }
}
