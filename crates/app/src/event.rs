//! core.event: the change feed, webhooks and the delivery of events to them.
//!
//! Events are written by [`Roastery::write`](crate::Roastery) in the transaction of the change
//! they report. Delivery runs outside requests: an outbound adapter's loop claims due deliveries
//! ([`Roastery::claim_deliveries`]), signs and sends them, and stores each outcome
//! ([`Roastery::finish_delivery`]).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::{DateTime, TimeDelta, Utc};
use roastery_domain::event::{Event, EventType};
use roastery_domain::page::{Page, PageRequest, Position};
use roastery_domain::webhook::{
    self, DeliveryStatus, Webhook, WebhookDraft, WebhookError, WebhookUrl,
};
use uuid::Uuid;

use crate::{Roastery, Store};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::repo::*;

/// How long a claimed delivery is held: well beyond the 10 s an attempt may take, so no other
/// instance sends it meanwhile; a crashed instance's claims expire and are sent again.
pub const LEASE: Duration = Duration::from_secs(60);
/// How long an attempt may take.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// One page of the feed and the cursor to continue from (also when the page is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub events: Vec<Event>,
    pub end: Position,
}

/// What `createWebhook` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateWebhook {
    pub url: String,
    pub types: Vec<String>,
    pub description: Option<String>,
}

/// Where a webhook URL's host leads: an adapter resolves it (blocking) and says whether every
/// address is one receivers may have.
pub trait ReceiverCheck {
    fn check(&self, url: &WebhookUrl) -> Result<(), WebhookError>;
}

/// What sending one event to one receiver came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// The receiver answered with this status.
    Answered(u16),
    /// No answer: refused address, connection or TLS failure, timeout.
    Failed(String),
    /// The receiver's address is not allowed (private); never retried.
    Refused(String),
}

/// What an attempt's outcome does to its delivery (and, when it failed for good, to its webhook).
pub fn judge_attempt(
    attempt: u32,
    outcome: &SendOutcome,
    now: DateTime<Utc>,
    retry_scale_millis: u64,
) -> (
    DeliveryStatus,
    Option<u16>,
    Option<String>,
    Option<DateTime<Utc>>,
) {
    let (http_status, error, retriable) = match outcome {
        SendOutcome::Answered(code) if (200..300).contains(code) => {
            return (DeliveryStatus::Delivered, Some(*code), None, None);
        }
        SendOutcome::Answered(code) => (
            Some(*code),
            Some(format!("the receiver answered {code}")),
            true,
        ),
        SendOutcome::Failed(why) => (None, Some(why.clone()), true),
        SendOutcome::Refused(why) => (None, Some(why.clone()), false),
    };
    let wait = retriable
        .then(|| webhook::retry_after(attempt, retry_scale_millis))
        .flatten();
    match wait {
        Some(wait) => {
            let wait = TimeDelta::from_std(wait).unwrap_or(TimeDelta::MAX);
            let next = now.checked_add_signed(wait).unwrap_or(now);
            (DeliveryStatus::Pending, http_status, error, Some(next))
        }
        None => (DeliveryStatus::Failed, http_status, error, None),
    }
}

impl<S: Store> Roastery<S> {
    /// Events after the page's position, oldest first. Committed events are numbered first,
    /// so an event whose transaction committed late still comes after the cursor handed out.
    pub fn list_events(&self, types: &[String], page: PageRequest) -> Result<EventPage, AppError> {
        let mut types = types
            .iter()
            .map(|t| EventType::parse(t))
            .collect::<Result<Vec<_>, _>>()?;
        // At most one of each type reaches the query, however long the list (its SQL
        // parameters stay few whatever a client sends).
        types.sort_unstable();
        types.dedup();
        let after = page.sequence()?;
        let events = self.store.write(|tx| {
            tx.place_events()?;
            Ok(tx.list_events(&types, after, page.limit.as_usize())?)
        })?;
        let end = events.last().and_then(|e| e.sequence).unwrap_or(after);
        Ok(EventPage {
            events,
            end: Position::Sequence(end),
        })
    }

    /// A new webhook and its secret (the only time the secret is answered).
    pub fn create_webhook(
        &self,
        cmd: CreateWebhook,
        receivers: &dyn ReceiverCheck,
    ) -> Result<Webhook, AppError> {
        let types = cmd
            .types
            .iter()
            .map(|t| EventType::parse(t))
            .collect::<Result<Vec<_>, _>>()?;
        let draft = WebhookDraft::parse(&cmd.url, types, cmd.description)?;
        receivers.check(&draft.url)?;
        let key = URL_SAFE_NO_PAD
            .decode(self.ids.random_token(32))
            .map_err(|_| StoreError::Internal("random token is not base64".into()))?;
        let secret = format!("whsec_{}", STANDARD.encode(key));
        let webhook = draft.create(self.ids.new_id(), secret, self.clock.now());
        self.store.write(|tx| {
            tx.insert_webhook(&webhook)?;
            Ok(())
        })?;
        Ok(webhook)
    }

    pub fn list_webhooks(&self, page: PageRequest) -> Result<Page<Webhook>, AppError> {
        page.keyset()?;
        self.store.read(|tx| Ok(tx.list_webhooks(&page)?))
    }

    pub fn delete_webhook(&self, id: Uuid) -> Result<(), AppError> {
        self.store.write(|tx| {
            if tx.delete_webhook(id)? {
                Ok(())
            } else {
                Err(WebhookError::NotFound(id).into())
            }
        })
    }

    pub fn list_deliveries(
        &self,
        webhook_id: Uuid,
        page: PageRequest,
    ) -> Result<Page<Delivery>, AppError> {
        page.keyset()?;
        self.store.read(|tx| {
            if tx.webhook(webhook_id)?.is_none() {
                return Err(WebhookError::NotFound(webhook_id).into());
            }
            Ok(tx.list_deliveries(webhook_id, &page)?)
        })
    }

    /// Numbers committed events, queues them for the webhooks that want them and claims up to
    /// `limit` due deliveries for [`LEASE`], at most `per_webhook` held per webhook at a time.
    pub fn claim_deliveries(
        &self,
        limit: usize,
        per_webhook: usize,
    ) -> Result<Vec<ClaimedDelivery>, AppError> {
        self.store.write(|tx| {
            tx.place_events()?;
            tx.enqueue_deliveries(self.clock.now(), &mut || self.ids.new_id())?;
            Ok(())
        })?;
        let lease = self.ids.new_id();
        self.store.write(|tx| {
            let now = self.clock.now();
            let until = now + TimeDelta::from_std(LEASE).unwrap_or(TimeDelta::MAX);
            Ok(tx.claim_deliveries(now, until, lease, limit, per_webhook)?)
        })
    }

    /// Stores what an attempt came to; after a delivery FAILED for good, counts the failure
    /// on its webhook (disabling it at the fifth in a row). Returns the delivery's new status,
    /// or `None` when the claim had expired and another attempt owns the delivery.
    pub fn finish_delivery(
        &self,
        claimed: &ClaimedDelivery,
        outcome: &SendOutcome,
        retry_scale_millis: u64,
    ) -> Result<Option<DeliveryStatus>, AppError> {
        let attempt = claimed.delivery.attempt;
        self.store.write(|tx| {
            let now = self.clock.now();
            let (status, http_status, error, next_attempt_at) =
                judge_attempt(attempt, outcome, now, retry_scale_millis);
            let record = AttemptRecord {
                delivery_id: claimed.delivery.id,
                lease: claimed.lease,
                status,
                http_status,
                error,
                next_attempt_at,
                at: now,
            };
            let Some(hook) = tx.record_attempt(&record)? else {
                return Ok(None);
            };
            match status {
                DeliveryStatus::Delivered if hook.consecutive_failures > 0 => {
                    tx.update_webhook_health(hook.id, 0, hook.status)?;
                }
                DeliveryStatus::Failed => {
                    let (failures, health) = webhook::after_failure(hook.consecutive_failures);
                    tx.update_webhook_health(hook.id, failures, health)?;
                }
                _ => {}
            }
            Ok(Some(status))
        })
    }

    /// Deletes events older than `retention` that no delivery still needs.
    pub fn prune_events(&self, retention: Duration) -> Result<usize, AppError> {
        self.store.write(|tx| {
            // A retention reaching before the calendar's start keeps every event (never a panic).
            let before = TimeDelta::from_std(retention)
                .ok()
                .and_then(|keep| self.clock.now().checked_sub_signed(keep))
                .unwrap_or(DateTime::<Utc>::MIN_UTC);
            Ok(tx.delete_events_before(before)?)
        })
    }

    /// Pending deliveries: how many, and how long the oldest has waited.
    pub fn delivery_queue(&self) -> Result<(u64, Duration), AppError> {
        let (count, oldest) = self.store.read(|tx| Ok(tx.pending_deliveries()?))?;
        let age = oldest
            .and_then(|at| (self.clock.now() - at).to_std().ok())
            .unwrap_or_default();
        Ok((count, age))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_retried_on_the_schedule_then_failed() {
        let now = DateTime::UNIX_EPOCH;
        let (status, code, _, next) = judge_attempt(1, &SendOutcome::Answered(500), now, 1000);
        assert_eq!((status, code), (DeliveryStatus::Pending, Some(500)));
        assert_eq!(next, Some(now + TimeDelta::seconds(5)));
        let (status, ..) = judge_attempt(7, &SendOutcome::Failed("timeout".into()), now, 1000);
        assert_eq!(status, DeliveryStatus::Pending);
        let (status, _, _, next) = judge_attempt(8, &SendOutcome::Answered(503), now, 1000);
        assert_eq!((status, next), (DeliveryStatus::Failed, None));
        let (status, ..) = judge_attempt(1, &SendOutcome::Refused("private".into()), now, 1000);
        assert_eq!(status, DeliveryStatus::Failed);
        let (status, code, error, _) = judge_attempt(3, &SendOutcome::Answered(204), now, 1000);
        assert_eq!(
            (status, code, error),
            (DeliveryStatus::Delivered, Some(204), None)
        );
    }
}
