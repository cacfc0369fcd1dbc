//! EUDR submissions (one row each, with their history, lots and statement as JSON, and a row
//! per lot for the `greenLotId` filter) and the claims of the instances polling the EU
//! information system and re-verifying statements.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use roastery_domain::dds::ActivityType;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::submission::{HistoryEntry, Submission, SubmissionStatus};
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::repo::{EventRepo, StoreResult, SubmissionFilter, SubmissionRepo};
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::row::uuid;
use crate::schema::{
    eudr_submission_lots, eudr_submissions, eudr_verification_claims, green_lot_due_diligence,
    ledger_entries,
};
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

#[derive(Queryable, Insertable, AsChangeset)]
#[diesel(table_name = eudr_submissions, treat_none_as_null = true)]
struct SubmissionRow {
    id: String,
    eu_uuid: Option<String>,
    status: String,
    internal_reference_number: String,
    activity_type: String,
    green_lot_ids: String,
    reference_number: Option<String>,
    verification_number: Option<String>,
    submitted_date: NaiveDateTime,
    updated_date: NaiveDateTime,
    history: String,
    statement: String,
    next_poll_at: Option<NaiveDateTime>,
    lease: Option<String>,
    lease_until: Option<NaiveDateTime>,
}

const WHAT: &str = "eudr submission";

impl SubmissionRow {
    fn new(s: &Submission) -> StoreResult<Self> {
        Ok(Self {
            id: s.id.to_string(),
            eu_uuid: s.eu_uuid.clone(),
            status: s.status.as_str().to_owned(),
            internal_reference_number: s.internal_reference_number.clone(),
            activity_type: s.activity_type.as_str().to_owned(),
            green_lot_ids: serde_json::to_string(&s.green_lot_ids).map_err(|e| corrupt(WHAT, e))?,
            reference_number: s.reference_number.clone(),
            verification_number: s.verification_number.clone(),
            submitted_date: to_db(s.submitted_date),
            updated_date: to_db(s.updated_date),
            history: serde_json::to_string(&s.history).map_err(|e| corrupt(WHAT, e))?,
            statement: s.statement.clone(),
            next_poll_at: s.next_poll_at.map(to_db),
            lease: None,
            lease_until: None,
        })
    }

    fn into_domain(self) -> StoreResult<Submission> {
        let history: Vec<HistoryEntry> =
            serde_json::from_str(&self.history).map_err(|e| corrupt(WHAT, e))?;
        let green_lot_ids: Vec<Uuid> =
            serde_json::from_str(&self.green_lot_ids).map_err(|e| corrupt(WHAT, e))?;
        Ok(Submission {
            id: uuid(WHAT, &self.id)?,
            eu_uuid: self.eu_uuid,
            status: SubmissionStatus::parse(&self.status),
            internal_reference_number: self.internal_reference_number,
            activity_type: ActivityType::parse(&self.activity_type)
                .ok_or_else(|| corrupt(WHAT, &self.activity_type))?,
            green_lot_ids,
            reference_number: self.reference_number,
            verification_number: self.verification_number,
            submitted_date: from_db(self.submitted_date),
            updated_date: from_db(self.updated_date),
            history,
            statement: self.statement,
            next_poll_at: self.next_poll_at.map(from_db),
        })
    }
}

fn rows_into_domain(rows: Vec<SubmissionRow>) -> StoreResult<Vec<Submission>> {
    rows.into_iter().map(SubmissionRow::into_domain).collect()
}

impl SubmissionRepo for DieselTx {
    fn insert_submission(&mut self, submission: &Submission) -> StoreResult<()> {
        let row = SubmissionRow::new(submission)?;
        diesel::insert_into(eudr_submissions::table)
            .values(&row)
            .execute(self.conn()?)
            .store()?;
        for lot in &submission.green_lot_ids {
            diesel::insert_into(eudr_submission_lots::table)
                .values((
                    eudr_submission_lots::submission_id.eq(&row.id),
                    eudr_submission_lots::green_lot_id.eq(lot.to_string()),
                ))
                .execute(self.conn()?)
                .store()?;
        }
        self.record_change(
            Subject::new(Resource::Submission, submission.id),
            Change::Created,
        );
        Ok(())
    }

    fn submission_for_update(&mut self, id: Uuid) -> StoreResult<Option<Submission>> {
        let key = id.to_string();
        let query = eudr_submissions::table.find(key);
        let lock = self.locking;
        let row: Option<SubmissionRow> = match self.conn()? {
            AnyConnection::Postgresql(c) if lock => {
                query.for_update().first(c).optional().store()?
            }
            conn => on_backend!(conn, |c| query.first(c).optional()).store()?,
        };
        row.map(SubmissionRow::into_domain).transpose()
    }

    fn update_submission(&mut self, submission: &Submission) -> StoreResult<()> {
        let row = SubmissionRow::new(submission)?;
        diesel::update(eudr_submissions::table.find(&row.id))
            .set(&row)
            .execute(self.conn()?)
            .store()?;
        self.record_change(
            Subject::new(Resource::Submission, submission.id),
            Change::Updated,
        );
        Ok(())
    }

    fn submissions_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Submission>> {
        let keys: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let rows: Vec<SubmissionRow> = eudr_submissions::table
            .filter(eudr_submissions::id.eq_any(&keys))
            .load(self.conn()?)
            .store()?;
        rows_into_domain(rows)
    }

    fn list_submissions(
        &mut self,
        filter: &SubmissionFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Submission>> {
        let mut query = eudr_submissions::table.into_boxed();
        if let Some(status) = &filter.status {
            query = query.filter(eudr_submissions::status.eq(status.clone()));
        }
        if let Some(lot) = filter.green_lot_id {
            query = query.filter(
                eudr_submissions::id.eq_any(
                    eudr_submission_lots::table
                        .select(eudr_submission_lots::submission_id)
                        .filter(eudr_submission_lots::green_lot_id.eq(lot.to_string())),
                ),
            );
        }
        let rows: Vec<SubmissionRow> = newest_first!(
            query,
            page,
            eudr_submissions::submitted_date,
            eudr_submissions::id
        )
        .load(self.conn()?)
        .store()?;
        Ok(Page::from_overfetch(
            rows_into_domain(rows)?,
            page.limit,
            |s| (s.submitted_date, s.id),
        ))
    }

    fn claim_due_submissions(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
    ) -> StoreResult<Vec<Submission>> {
        let at = to_db(now);
        let lock = self.locking;
        let due = eudr_submissions::table
            .select(eudr_submissions::id)
            .filter(eudr_submissions::next_poll_at.le(at))
            .filter(
                eudr_submissions::lease_until
                    .is_null()
                    .or(eudr_submissions::lease_until.lt(at)),
            )
            .order((eudr_submissions::next_poll_at, eudr_submissions::id))
            .limit(i64::try_from(limit).unwrap_or(i64::MAX));
        // Rows another instance is claiming right now are skipped, never waited for.
        let ids: Vec<String> = match self.conn()? {
            AnyConnection::Postgresql(c) if lock => {
                due.for_update().skip_locked().load(c).store()?
            }
            conn => on_backend!(conn, |c| due.load(c)).store()?,
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        diesel::update(eudr_submissions::table.filter(eudr_submissions::id.eq_any(&ids)))
            .set((
                eudr_submissions::lease.eq(lease.to_string()),
                eudr_submissions::lease_until.eq(to_db(lease_until)),
            ))
            .execute(self.conn()?)
            .store()?;
        let rows: Vec<SubmissionRow> = eudr_submissions::table
            .filter(eudr_submissions::id.eq_any(&ids))
            .order((eudr_submissions::next_poll_at, eudr_submissions::id))
            .load(self.conn()?)
            .store()?;
        rows_into_domain(rows)
    }

    fn holds_submission(&mut self, id: Uuid, lease: Uuid) -> StoreResult<bool> {
        let found: i64 = eudr_submissions::table
            .filter(eudr_submissions::id.eq(id.to_string()))
            .filter(eudr_submissions::lease.eq(lease.to_string()))
            .count()
            .get_result(self.conn()?)
            .store()?;
        Ok(found > 0)
    }

    fn imported_weights(&mut self, lot_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>> {
        let keys: Vec<String> = lot_ids.iter().map(Uuid::to_string).collect();
        let rows: Vec<(String, i64, String)> = ledger_entries::table
            .select((
                ledger_entries::lot_id,
                ledger_entries::delta_micros,
                ledger_entries::unit,
            ))
            .filter(ledger_entries::lot_id.eq_any(&keys))
            .filter(ledger_entries::kind.eq_any(["IMPORT", "OPENING"]))
            .order((ledger_entries::created_date, ledger_entries::id))
            .load(self.conn()?)
            .store()?;
        let mut found: Vec<(Uuid, Weight)> = Vec::new();
        for (lot, micros, unit) in rows {
            let lot = uuid("ledger entry", &lot)?;
            if found.iter().any(|(id, _)| *id == lot) {
                continue;
            }
            let unit = WeightUnit::parse(&unit).map_err(|e| corrupt("ledger entry", e))?;
            let weight =
                Weight::from_micros(micros, unit).map_err(|e| corrupt("ledger entry", e))?;
            found.push((lot, weight));
        }
        Ok(found)
    }

    fn lots_with_statements(&mut self) -> StoreResult<Vec<Uuid>> {
        let ids: Vec<String> = green_lot_due_diligence::table
            .select(green_lot_due_diligence::green_lot_id)
            .filter(green_lot_due_diligence::statement_count.gt(0))
            .load(self.conn()?)
            .store()?;
        ids.iter().map(|id| uuid("due diligence", id)).collect()
    }

    fn claim_verification(
        &mut self,
        lot_id: Uuid,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
    ) -> StoreResult<bool> {
        let key = lot_id.to_string();
        let at = to_db(now);
        // Replaces an expired claim; an unexpired one (or one taken meanwhile) stays.
        diesel::delete(
            eudr_verification_claims::table
                .filter(eudr_verification_claims::green_lot_id.eq(&key))
                .filter(eudr_verification_claims::lease_until.lt(at)),
        )
        .execute(self.conn()?)
        .store()?;
        let values = (
            eudr_verification_claims::green_lot_id.eq(&key),
            eudr_verification_claims::lease.eq(lease.to_string()),
            eudr_verification_claims::lease_until.eq(to_db(lease_until)),
        );
        let inserted = on_backend!(self.conn()?, |c| diesel::insert_into(
            eudr_verification_claims::table
        )
        .values(values)
        .on_conflict_do_nothing()
        .execute(c))
        .store()?;
        Ok(inserted > 0)
    }
}
