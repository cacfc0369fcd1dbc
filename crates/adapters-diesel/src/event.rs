//! The change feed's outbox, webhooks and their deliveries.
//!
//! **Numbering events so that a reader never skips one.** A reader pages with "sequence >
//! cursor", so a number may become visible only after every smaller number is visible.
//! - SQLite has one writer at a time: an event takes its number from the `event` counter as it
//!   is stored, and commits before the next writer starts.
//! - PostgreSQL writers run in parallel, and a number taken at insert could commit after a
//!   larger one a reader has already passed. So writers store events unnumbered, with their
//!   transaction id (`pg_current_xact_id()`, for a stable order among what one pass numbers). A
//!   placer ([`EventRepo::place_events`], run by `listEvents` and the delivery loops, one at a
//!   time under a transaction-scoped advisory lock) numbers the unnumbered events it can see,
//!   after the last number handed out. Under READ COMMITTED it sees exactly the events of
//!   committed writers (an aborted writer's rows never become visible); a writer still running
//!   is numbered by a later pass, above every number handed out by then. Placers commit before
//!   the next one takes the lock, so numbers become visible in increasing order and a reader's
//!   cursor never passes a number that is still to come. (Waiting for `pg_snapshot_xmin` to pass
//!   the writer is not needed for this, and would let any long transaction anywhere on the
//!   cluster hold the whole feed back.)
//!
//! Deliveries are claimed with `FOR UPDATE SKIP LOCKED` and a lease: one instance holds a
//! delivery while it sends it; when an instance dies, its lease expires and another sends the
//! event again (at least once).

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use roastery_domain::event::{Change, Changes, Event, EventType, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::webhook::{DeliveryStatus, Webhook, WebhookStatus, WebhookUrl};
use roastery_ports::StoreError;
use roastery_ports::repo::*;
use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::held_writes::{HeldWrite, NewEvent};
use crate::row::uuid;
use crate::schema::{deliveries, events, webhooks};
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

/// The advisory lock placers take (the bytes of "RoastEv1").
const PLACER_LOCK: i64 = 0x526f_6173_7445_7631;
/// Events numbered per statement when placing: a bound the planner can see.
const PLACE_BATCH: i64 = 100;
/// The events waiting to be numbered, in the order they are numbered (`{READY} … ORDER BY
/// writer_xid, id LIMIT n`).
const READY: &str = "SELECT id, writer_xid, row_number() OVER (ORDER BY writer_xid, id) AS n \
                     FROM events WHERE sequence IS NULL";
/// Numbers the events of `ready` after `$1`; answers the last one numbered (its number in the
/// batch and its key), or no row.
const NUMBER: &str = "placed AS (UPDATE events SET sequence = $1 + ready.n, writer_xid = NULL \
                      FROM ready WHERE events.id = ready.id \
                      RETURNING ready.n, ready.writer_xid, ready.id) \
                      SELECT n, writer_xid, id FROM placed ORDER BY n DESC LIMIT 1";

/// The last event a batch numbered.
#[derive(QueryableByName)]
struct Placed {
    /// How many the batch numbered (the last one's place in it).
    #[diesel(sql_type = BigInt)]
    n: i64,
    /// `None` only for events stored before writers recorded it (they are numbered last).
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    writer_xid: Option<i64>,
    #[diesel(sql_type = Text)]
    id: String,
}

/// The counter events are numbered from.
const EVENT_COUNTER: &str = "event";
/// Most events queued for one webhook per round.
const ENQUEUE_BATCH: i64 = 1_000;
/// Delivery rows per insert statement: 12 values each, well within SQLite's 32,766.
const INSERT_CHUNK: usize = 1_000;

#[derive(Queryable)]
struct EventRow {
    id: String,
    sequence: Option<i64>,
    event_type: String,
    subject_id: String,
    subject_type: String,
    operation: String,
    client_id: String,
    created_date: NaiveDateTime,
}

type EventColumns = (
    events::id,
    events::sequence,
    events::event_type,
    events::subject_id,
    events::subject_type,
    events::operation,
    events::client_id,
    events::created_date,
);

const EVENT_COLUMNS: EventColumns = (
    events::id,
    events::sequence,
    events::event_type,
    events::subject_id,
    events::subject_type,
    events::operation,
    events::client_id,
    events::created_date,
);

impl EventRow {
    fn into_domain(self) -> StoreResult<Event> {
        let event_type = EventType::parse(&self.event_type).map_err(|e| corrupt("event", e))?;
        let resource = Resource::parse(&self.subject_type)
            .ok_or_else(|| corrupt("event", &self.subject_type))?;
        Ok(Event {
            id: uuid("event", &self.id)?,
            sequence: self.sequence,
            event_type,
            subject: Subject::new(resource, uuid("event", &self.subject_id)?),
            operation: self.operation,
            client_id: self.client_id,
            created_date: from_db(self.created_date),
        })
    }
}

/// An event's row, unnumbered (PostgreSQL stores it so; SQLite adds its number).
fn new_event(event: &Event) -> NewEvent {
    NewEvent {
        id: event.id.to_string(),
        event_type: event.event_type.to_string(),
        subject_id: event.subject.id.to_string(),
        subject_type: event.subject.resource.as_str(),
        operation: event.operation.clone(),
        client_id: event.client_id.clone(),
        created_date: to_db(event.created_date),
    }
}

impl EventRepo for DieselTx {
    fn record_change(&mut self, subject: Subject, change: Change) {
        self.changes.record(subject, change);
    }

    fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    fn insert_events(&mut self, list: &[Event]) -> StoreResult<()> {
        if list.is_empty() {
            return Ok(());
        }
        // One statement for the whole batch on either database.
        if matches!(*self.conn, AnyConnection::Postgresql(_)) {
            // Stored unnumbered; `writer_xid` is the column's default, the inserting
            // transaction's id (migration 000014). Held with the unit of work's last writes
            // when few, else sent at once in the same form.
            let rows = HeldWrite::Events(list.iter().map(new_event).collect());
            if self.holds(list.len()) {
                return self.hold(rows);
            }
            let AnyConnection::Postgresql(c) = self.conn()? else {
                return Err(StoreError::Internal(
                    "the connection changed backend".into(),
                ));
            };
            return crate::held_writes::send(c, &[rows]);
        }
        // One writer at a time: the numbers are taken here, all in one step.
        let last = self.counter(EVENT_COUNTER)?;
        let count = i64::try_from(list.len())
            .map_err(|_| StoreError::Internal("too many events".into()))?;
        self.set_counter(EVENT_COUNTER, last + count)?;
        let rows: Vec<_> = list
            .iter()
            .zip(last + 1..)
            .map(|(event, sequence)| {
                let row = new_event(event);
                (
                    events::id.eq(row.id),
                    events::sequence.eq(Some(sequence)),
                    events::event_type.eq(row.event_type),
                    events::subject_id.eq(row.subject_id),
                    events::subject_type.eq(row.subject_type),
                    events::operation.eq(row.operation),
                    events::client_id.eq(row.client_id),
                    events::created_date.eq(row.created_date),
                )
            })
            .collect();
        let AnyConnection::Sqlite(c) = self.conn()? else {
            return Err(StoreError::Internal(
                "the connection changed backend".into(),
            ));
        };
        insert_rows!(c, events::table, rows.as_slice()).store()?;
        Ok(())
    }

    fn place_events(&mut self) -> StoreResult<()> {
        let AnyConnection::Postgresql(c) = self.conn()? else {
            return Ok(());
        };
        // Placers take turns (a short wait): one that skipped while another was placing could
        // answer a reader without the events that reader has just written.
        diesel::sql_query(format!("SELECT pg_advisory_xact_lock({PLACER_LOCK})"))
            .execute(c)
            .store()?;
        let first = self.last_sequence()?;
        let mut last = first;
        let AnyConnection::Postgresql(c) = self.conn()? else {
            return Ok(());
        };
        // In batches of a known size: numbering every waiting event in one statement let the
        // planner, whenever statistics said many events waited (as after a bulk load), hash the
        // whole events table on every write instead of probing its key for the few waiting.
        // Each batch starts after the last one's key: the index entries of events just numbered
        // stay in the index of waiting events until vacuum, and starting from its beginning made
        // every batch step over all of them (numbering 100,000 events took minutes of CPU).
        let mut after: Option<Placed> = None;
        loop {
            let batch = match after.as_ref().and_then(|a| Some((a.writer_xid?, &a.id))) {
                None => diesel::sql_query(format!(
                    "WITH ready AS ({READY} ORDER BY writer_xid, id LIMIT $2), {NUMBER}"
                ))
                .bind::<BigInt, _>(last)
                .bind::<BigInt, _>(PLACE_BATCH)
                .get_result::<Placed>(c),
                Some((writer_xid, id)) => diesel::sql_query(format!(
                    "WITH ready AS ({READY} AND (writer_xid, id) > ($3, $4) \
                     ORDER BY writer_xid, id LIMIT $2), {NUMBER}"
                ))
                .bind::<BigInt, _>(last)
                .bind::<BigInt, _>(PLACE_BATCH)
                .bind::<BigInt, _>(writer_xid)
                .bind::<Text, _>(id)
                .get_result::<Placed>(c),
            }
            .optional()
            .store()?;
            // No row: nothing waited.
            let Some(batch) = batch else { break };
            last += batch.n;
            if batch.n < PLACE_BATCH {
                break;
            }
            after = Some(batch);
        }
        if last > first {
            self.set_counter(EVENT_COUNTER, last)?;
        }
        Ok(())
    }

    fn list_events(
        &mut self,
        types: &[EventType],
        after: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        let mut query = events::table
            .select(EVENT_COLUMNS)
            .filter(events::sequence.gt(after))
            .order(events::sequence.asc())
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .into_boxed();
        if !types.is_empty() {
            let names: Vec<String> = types.iter().map(ToString::to_string).collect();
            query = query.filter(events::event_type.eq_any(names));
        }
        let rows: Vec<EventRow> = query.load(self.conn()?).store()?;
        rows.into_iter().map(EventRow::into_domain).collect()
    }

    fn last_sequence(&mut self) -> StoreResult<i64> {
        self.counter(EVENT_COUNTER)
    }

    fn delete_events_before(&mut self, before: DateTime<Utc>) -> StoreResult<usize> {
        let before = to_db(before);
        let pending = deliveries::table
            .select(deliveries::event_id)
            .filter(deliveries::status.eq(DeliveryStatus::Pending.as_str()));
        let deleted = diesel::delete(
            events::table
                .filter(events::created_date.lt(before))
                .filter(events::sequence.is_not_null())
                .filter(diesel::dsl::not(events::id.eq_any(pending))),
        )
        .execute(self.conn()?)
        .store()?;
        diesel::delete(
            deliveries::table
                .filter(deliveries::created_date.lt(before))
                .filter(deliveries::status.ne(DeliveryStatus::Pending.as_str())),
        )
        .execute(self.conn()?)
        .store()?;
        Ok(deleted)
    }
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = webhooks)]
struct WebhookRow {
    id: String,
    url: String,
    types: String,
    description: Option<String>,
    status: String,
    secret: String,
    consecutive_failures: i32,
    given_sequence: i64,
    created_date: NaiveDateTime,
}

impl WebhookRow {
    fn into_domain(self) -> StoreResult<Webhook> {
        let types = self
            .types
            .split_whitespace()
            .map(EventType::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| corrupt("webhook", e))?;
        Ok(Webhook {
            id: uuid("webhook", &self.id)?,
            url: WebhookUrl::from_stored(&self.url).map_err(|e| corrupt("webhook", e))?,
            types,
            description: self.description,
            status: WebhookStatus::parse(&self.status)
                .ok_or_else(|| corrupt("webhook", &self.status))?,
            created_date: from_db(self.created_date),
            secret: self.secret,
            consecutive_failures: u32::try_from(self.consecutive_failures).unwrap_or(0),
        })
    }
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = deliveries)]
struct DeliveryRow {
    id: String,
    webhook_id: String,
    event_id: String,
    attempt: i32,
    status: String,
    http_status: Option<i32>,
    error: Option<String>,
    next_attempt_at: NaiveDateTime,
    lease: Option<String>,
    lease_until: Option<NaiveDateTime>,
    created_date: NaiveDateTime,
}

impl DeliveryRow {
    fn into_domain(self) -> StoreResult<Delivery> {
        Ok(Delivery {
            id: uuid("delivery", &self.id)?,
            webhook_id: uuid("delivery", &self.webhook_id)?,
            event_id: uuid("delivery", &self.event_id)?,
            attempt: u32::try_from(self.attempt).unwrap_or(0),
            status: DeliveryStatus::parse(&self.status)
                .ok_or_else(|| corrupt("delivery", &self.status))?,
            http_status: self.http_status.and_then(|s| u16::try_from(s).ok()),
            error: self.error,
            created_date: from_db(self.created_date),
        })
    }
}

impl DieselTx {
    fn webhooks_by_ids(&mut self, ids: &[String]) -> StoreResult<Vec<Webhook>> {
        let rows: Vec<WebhookRow> = webhooks::table
            .filter(webhooks::id.eq_any(ids))
            .load(self.conn()?)
            .store()?;
        rows.into_iter().map(WebhookRow::into_domain).collect()
    }

    fn events_by_ids(&mut self, ids: &[String]) -> StoreResult<Vec<Event>> {
        let rows: Vec<EventRow> = events::table
            .select(EVENT_COLUMNS)
            .filter(events::id.eq_any(ids))
            .load(self.conn()?)
            .store()?;
        rows.into_iter().map(EventRow::into_domain).collect()
    }
}

impl WebhookRepo for DieselTx {
    fn insert_webhook(&mut self, webhook: &Webhook) -> StoreResult<()> {
        // A webhook receives the events numbered after its creation. Numbering first means
        // events committed before it are numbered below its starting point.
        self.place_events()?;
        let given_sequence = self.last_sequence()?;
        let types: Vec<String> = webhook.types.iter().map(ToString::to_string).collect();
        diesel::insert_into(webhooks::table)
            .values(WebhookRow {
                id: webhook.id.to_string(),
                url: webhook.url.as_str().to_owned(),
                types: types.join(" "),
                description: webhook.description.clone(),
                status: webhook.status.as_str().to_owned(),
                secret: webhook.secret.clone(),
                consecutive_failures: i32::try_from(webhook.consecutive_failures)
                    .unwrap_or(i32::MAX),
                given_sequence,
                created_date: to_db(webhook.created_date),
            })
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn webhook(&mut self, id: Uuid) -> StoreResult<Option<Webhook>> {
        Ok(self.webhooks_by_ids(&[id.to_string()])?.into_iter().next())
    }

    fn list_webhooks(&mut self, page: &PageRequest) -> StoreResult<Page<Webhook>> {
        let query = webhooks::table.into_boxed();
        let rows: Vec<WebhookRow> =
            newest_first!(query, page, webhooks::created_date, webhooks::id)
                .load(self.conn()?)
                .store()?;
        let items = rows
            .into_iter()
            .map(WebhookRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |w| {
            (w.created_date, w.id)
        }))
    }

    fn delete_webhook(&mut self, id: Uuid) -> StoreResult<bool> {
        let key = id.to_string();
        diesel::delete(deliveries::table.filter(deliveries::webhook_id.eq(&key)))
            .execute(self.conn()?)
            .store()?;
        let deleted = diesel::delete(webhooks::table.find(&key))
            .execute(self.conn()?)
            .store()?;
        Ok(deleted > 0)
    }

    fn list_deliveries(
        &mut self,
        webhook_id: Uuid,
        page: &PageRequest,
    ) -> StoreResult<Page<Delivery>> {
        let query = deliveries::table
            .filter(deliveries::webhook_id.eq(webhook_id.to_string()))
            .into_boxed();
        let rows: Vec<DeliveryRow> =
            newest_first!(query, page, deliveries::created_date, deliveries::id)
                .load(self.conn()?)
                .store()?;
        let items = rows
            .into_iter()
            .map(DeliveryRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |d| {
            (d.created_date, d.id)
        }))
    }

    fn enqueue_deliveries(
        &mut self,
        now: DateTime<Utc>,
        new_id: &mut dyn FnMut() -> Uuid,
    ) -> StoreResult<usize> {
        let lock = self.locking;
        let active = webhooks::table
            .select((webhooks::id, webhooks::types, webhooks::given_sequence))
            .filter(webhooks::status.eq(WebhookStatus::Active.as_str()))
            .order(webhooks::id);
        // Each webhook is queued by one unit of work at a time; others skip it.
        let hooks: Vec<(String, String, i64)> = match self.conn()? {
            AnyConnection::Postgresql(c) if lock => {
                active.for_update().skip_locked().load(c).store()?
            }
            conn => on_backend!(conn, |c| active.load(c)).store()?,
        };
        let mut rows: Vec<DeliveryRow> = Vec::new();
        for (id, types, given) in hooks {
            let new: Vec<(String, String, Option<i64>)> = events::table
                .select((events::id, events::event_type, events::sequence))
                .filter(events::sequence.gt(given))
                .order(events::sequence.asc())
                .limit(ENQUEUE_BATCH)
                .load(self.conn()?)
                .store()?;
            let Some(last) = new.last().and_then(|(_, _, s)| *s) else {
                continue;
            };
            let wanted: Vec<&str> = types.split_whitespace().collect();
            rows.extend(
                new.iter()
                    .filter(|(_, t, _)| wanted.is_empty() || wanted.contains(&t.as_str()))
                    .map(|(event_id, _, _)| DeliveryRow {
                        id: new_id().to_string(),
                        webhook_id: id.clone(),
                        event_id: event_id.clone(),
                        attempt: 0,
                        status: DeliveryStatus::Pending.as_str().to_owned(),
                        http_status: None,
                        error: None,
                        next_attempt_at: to_db(now),
                        lease: None,
                        lease_until: None,
                        created_date: to_db(now),
                    }),
            );
            diesel::update(webhooks::table.find(&id))
                .set(webhooks::given_sequence.eq(last))
                .execute(self.conn()?)
                .store()?;
        }
        // Every delivery of the round in one statement (in chunks within SQLite's limit of
        // bound values per statement).
        for chunk in rows.chunks(INSERT_CHUNK) {
            on_backend!(self.conn()?, |c| insert_rows!(c, deliveries::table, chunk)).store()?;
        }
        Ok(rows.len())
    }

    fn claim_deliveries(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
        per_webhook: usize,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        if limit == 0 || per_webhook == 0 {
            return Ok(Vec::new());
        }
        let at = to_db(now);
        let lock = self.locking;
        let pending = DeliveryStatus::Pending.as_str();
        let active = webhooks::table
            .select(webhooks::id)
            .filter(webhooks::status.eq(WebhookStatus::Active.as_str()));
        // Claims held now (by any instance), per webhook.
        let held: Vec<(String, i64)> = deliveries::table
            .filter(deliveries::status.eq(pending))
            .filter(deliveries::lease_until.ge(at))
            .group_by(deliveries::webhook_id)
            .select((deliveries::webhook_id, diesel::dsl::count_star()))
            .load(self.conn()?)
            .store()?;
        // Webhooks with due, unclaimed deliveries, the longest waiting first.
        let waiting: Vec<(String, Option<NaiveDateTime>)> = deliveries::table
            .filter(deliveries::status.eq(pending))
            .filter(deliveries::next_attempt_at.le(at))
            .filter(
                deliveries::lease_until
                    .is_null()
                    .or(deliveries::lease_until.lt(at)),
            )
            .filter(deliveries::webhook_id.eq_any(active))
            .group_by(deliveries::webhook_id)
            .select((
                deliveries::webhook_id,
                diesel::dsl::min(deliveries::next_attempt_at),
            ))
            .load(self.conn()?)
            .store()?;
        let mut waiting = waiting;
        waiting.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        let mut ids: Vec<String> = Vec::new();
        for (webhook_id, _) in waiting {
            let busy = held
                .iter()
                .find(|(id, _)| *id == webhook_id)
                .and_then(|(_, n)| usize::try_from(*n).ok())
                .unwrap_or(0);
            let room = per_webhook
                .saturating_sub(busy)
                .min(limit.saturating_sub(ids.len()));
            if room == 0 {
                continue;
            }
            let due = deliveries::table
                .select(deliveries::id)
                .filter(deliveries::webhook_id.eq(&webhook_id))
                .filter(deliveries::status.eq(pending))
                .filter(deliveries::next_attempt_at.le(at))
                .filter(
                    deliveries::lease_until
                        .is_null()
                        .or(deliveries::lease_until.lt(at)),
                )
                .order((deliveries::next_attempt_at, deliveries::id))
                .limit(i64::try_from(room).unwrap_or(i64::MAX));
            // Deliveries another instance is claiming right now are skipped, never waited for.
            let found: Vec<String> = match self.conn()? {
                AnyConnection::Postgresql(c) if lock => {
                    due.for_update().skip_locked().load(c).store()?
                }
                conn => on_backend!(conn, |c| due.load(c)).store()?,
            };
            ids.extend(found);
            if ids.len() >= limit {
                break;
            }
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        diesel::update(deliveries::table.filter(deliveries::id.eq_any(&ids)))
            .set((
                deliveries::lease.eq(lease.to_string()),
                deliveries::lease_until.eq(to_db(lease_until)),
                deliveries::attempt.eq(deliveries::attempt + 1),
            ))
            .execute(self.conn()?)
            .store()?;
        let rows: Vec<DeliveryRow> = deliveries::table
            .filter(deliveries::id.eq_any(&ids))
            .order((deliveries::next_attempt_at, deliveries::id))
            .load(self.conn()?)
            .store()?;
        let hook_ids: Vec<String> = rows.iter().map(|r| r.webhook_id.clone()).collect();
        let event_ids: Vec<String> = rows.iter().map(|r| r.event_id.clone()).collect();
        let hooks = self.webhooks_by_ids(&hook_ids)?;
        let found = self.events_by_ids(&event_ids)?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let delivery = row.into_domain()?;
            let webhook = hooks.iter().find(|w| w.id == delivery.webhook_id);
            let event = found.iter().find(|e| e.id == delivery.event_id);
            if let (Some(webhook), Some(event)) = (webhook, event) {
                claimed.push(ClaimedDelivery {
                    delivery,
                    webhook: webhook.clone(),
                    event: event.clone(),
                    lease,
                });
            }
        }
        Ok(claimed)
    }

    fn record_attempt(&mut self, record: &AttemptRecord) -> StoreResult<Option<Webhook>> {
        let key = record.delivery_id.to_string();
        let held = deliveries::table
            .find(&key)
            .filter(deliveries::lease.eq(record.lease.to_string()));
        let http_status = record.http_status.map(i32::from);
        let updated = match record.next_attempt_at {
            Some(next) => diesel::update(held)
                .set((
                    deliveries::status.eq(record.status.as_str()),
                    deliveries::http_status.eq(http_status),
                    deliveries::error.eq(&record.error),
                    deliveries::next_attempt_at.eq(to_db(next)),
                    deliveries::lease.eq(None::<String>),
                    deliveries::lease_until.eq(None::<NaiveDateTime>),
                ))
                .execute(self.conn()?),
            None => diesel::update(held)
                .set((
                    deliveries::status.eq(record.status.as_str()),
                    deliveries::http_status.eq(http_status),
                    deliveries::error.eq(&record.error),
                    deliveries::lease.eq(None::<String>),
                    deliveries::lease_until.eq(None::<NaiveDateTime>),
                ))
                .execute(self.conn()?),
        }
        .store()?;
        if updated == 0 {
            return Ok(None);
        }
        let webhook_id: String = deliveries::table
            .find(&key)
            .select(deliveries::webhook_id)
            .first(self.conn()?)
            .store()?;
        let lock = self.locking;
        // The failure count is read, changed and written back: lock the webhook's row.
        let row: Option<WebhookRow> = match self.conn()? {
            AnyConnection::Postgresql(c) if lock => webhooks::table
                .find(&webhook_id)
                .for_update()
                .first(c)
                .optional(),
            conn => on_backend!(conn, |c| webhooks::table
                .find(&webhook_id)
                .first(c)
                .optional()),
        }
        .store()?;
        row.map(WebhookRow::into_domain).transpose()
    }

    fn update_webhook_health(
        &mut self,
        id: Uuid,
        consecutive_failures: u32,
        status: WebhookStatus,
    ) -> StoreResult<()> {
        diesel::update(webhooks::table.find(id.to_string()))
            .set((
                webhooks::consecutive_failures
                    .eq(i32::try_from(consecutive_failures).unwrap_or(i32::MAX)),
                webhooks::status.eq(status.as_str()),
            ))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn pending_deliveries(&mut self) -> StoreResult<(u64, Option<DateTime<Utc>>)> {
        let (count, oldest): (i64, Option<NaiveDateTime>) = deliveries::table
            .filter(deliveries::status.eq(DeliveryStatus::Pending.as_str()))
            .select((
                diesel::dsl::count_star(),
                diesel::dsl::min(deliveries::created_date),
            ))
            .first(self.conn()?)
            .store()?;
        Ok((u64::try_from(count).unwrap_or(0), oldest.map(from_db)))
    }
}
