//! The change feed and webhooks, in memory. Writers take turns here, so events are numbered
//! as they are stored.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::event::{Change, Changes, Event, EventType, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::webhook::{DeliveryStatus, Webhook, WebhookStatus};
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use super::tables::StoredDelivery;
use crate::error::StoreError;
use crate::repo::*;

impl EventRepo for MemTx {
    fn record_change(&mut self, subject: Subject, change: Change) {
        self.changes.record(subject, change);
    }

    fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    fn insert_events(&mut self, events: &[Event]) -> StoreResult<()> {
        let feed = &mut self.data.events;
        for event in events {
            if feed.events.iter().any(|e| e.id == event.id) {
                return Err(StoreError::Duplicate(format!("event {}", event.id)));
            }
            feed.last_sequence += 1;
            feed.events.push(Event {
                sequence: Some(feed.last_sequence),
                ..event.clone()
            });
        }
        Ok(())
    }

    fn place_events(&mut self) -> StoreResult<()> {
        Ok(())
    }

    fn list_events(
        &mut self,
        types: &[EventType],
        after: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        Ok(self
            .data
            .events
            .events
            .iter()
            .filter(|e| e.sequence.is_some_and(|s| s > after))
            .filter(|e| types.is_empty() || types.contains(&e.event_type))
            .take(limit)
            .cloned()
            .collect())
    }

    fn last_sequence(&mut self) -> StoreResult<i64> {
        Ok(self.data.events.last_sequence)
    }

    fn delete_events_before(&mut self, before: DateTime<Utc>) -> StoreResult<usize> {
        let feed = &mut self.data.events;
        let pending: Vec<Uuid> = feed
            .deliveries
            .iter()
            .filter(|(d, ..)| d.status == DeliveryStatus::Pending)
            .map(|(d, ..)| d.event_id)
            .collect();
        let before_count = feed.events.len();
        feed.events
            .retain(|e| e.created_date >= before || pending.contains(&e.id));
        let deleted = before_count - feed.events.len();
        // Finished deliveries made before `before` go too.
        feed.deliveries
            .retain(|(d, ..)| d.created_date >= before || d.status == DeliveryStatus::Pending);
        Ok(deleted)
    }
}

impl WebhookRepo for MemTx {
    fn insert_webhook(&mut self, webhook: &Webhook) -> StoreResult<()> {
        if self
            .data
            .events
            .webhooks
            .iter()
            .any(|(w, _)| w.id == webhook.id)
        {
            return Err(StoreError::Duplicate(format!("webhook {}", webhook.id)));
        }
        let last = self.data.events.last_sequence;
        self.data.events.webhooks.push((webhook.clone(), last));
        Ok(())
    }

    fn webhook(&mut self, id: Uuid) -> StoreResult<Option<Webhook>> {
        Ok(self
            .data
            .events
            .webhooks
            .iter()
            .find(|(w, _)| w.id == id)
            .map(|(w, _)| w.clone()))
    }

    fn list_webhooks(&mut self, page: &PageRequest) -> StoreResult<Page<Webhook>> {
        page_newest_first(
            self.data.events.webhooks.iter().map(|(w, _)| w.clone()),
            |w| (w.created_date, w.id),
            page,
        )
    }

    fn delete_webhook(&mut self, id: Uuid) -> StoreResult<bool> {
        let feed = &mut self.data.events;
        let before = feed.webhooks.len();
        feed.webhooks.retain(|(w, _)| w.id != id);
        feed.deliveries.retain(|(d, ..)| d.webhook_id != id);
        Ok(feed.webhooks.len() < before)
    }

    fn list_deliveries(
        &mut self,
        webhook_id: Uuid,
        page: &PageRequest,
    ) -> StoreResult<Page<Delivery>> {
        page_newest_first(
            self.data
                .events
                .deliveries
                .iter()
                .filter(|(d, ..)| d.webhook_id == webhook_id)
                .map(|(d, ..)| d.clone()),
            |d| (d.created_date, d.id),
            page,
        )
    }

    fn enqueue_deliveries(
        &mut self,
        now: DateTime<Utc>,
        new_id: &mut dyn FnMut() -> Uuid,
    ) -> StoreResult<usize> {
        let feed = &mut self.data.events;
        let mut added = 0;
        // Webhook by webhook in id order, as the databases do.
        let mut webhooks: Vec<&mut (Webhook, i64)> = feed.webhooks.iter_mut().collect();
        webhooks.sort_by_key(|(w, _)| w.id);
        for (webhook, given) in webhooks {
            if webhook.status != WebhookStatus::Active {
                continue;
            }
            for event in feed.events.iter().filter(|e| e.sequence > Some(*given)) {
                if webhook.wants(event.event_type) {
                    let delivery = Delivery {
                        id: new_id(),
                        webhook_id: webhook.id,
                        event_id: event.id,
                        attempt: 0,
                        status: DeliveryStatus::Pending,
                        http_status: None,
                        error: None,
                        created_date: now,
                    };
                    feed.deliveries.push((delivery, None, now));
                    added += 1;
                }
            }
            *given = feed.last_sequence;
        }
        Ok(added)
    }

    fn claim_deliveries(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
        limit: usize,
        per_webhook: usize,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let feed = &mut self.data.events;
        // Claims held now, per webhook; a claim holds until its end, inclusive.
        let mut held: HashMap<Uuid, usize> = HashMap::new();
        for (delivery, claim, _) in &feed.deliveries {
            if delivery.status == DeliveryStatus::Pending
                && claim.is_some_and(|(_, until)| until >= now)
            {
                *held.entry(delivery.webhook_id).or_default() += 1;
            }
        }
        let mut claimed = Vec::new();
        // Due first, then by id.
        let mut due_first: Vec<&mut StoredDelivery> = feed.deliveries.iter_mut().collect();
        due_first.sort_by_key(|(d, _, due)| (*due, d.id));
        for (delivery, claim, due) in due_first {
            if claimed.len() >= limit
                || delivery.status != DeliveryStatus::Pending
                || *due > now
                || claim.is_some_and(|(_, until)| until >= now)
            {
                continue;
            }
            let Some((webhook, _)) = feed
                .webhooks
                .iter()
                .find(|(w, _)| w.id == delivery.webhook_id && w.status == WebhookStatus::Active)
            else {
                continue;
            };
            let holding = held.entry(webhook.id).or_default();
            if *holding >= per_webhook {
                continue;
            }
            let Some(event) = feed.events.iter().find(|e| e.id == delivery.event_id) else {
                continue;
            };
            *holding += 1;
            delivery.attempt += 1;
            *claim = Some((lease, lease_until));
            claimed.push(ClaimedDelivery {
                delivery: delivery.clone(),
                webhook: webhook.clone(),
                event: event.clone(),
                lease,
            });
        }
        Ok(claimed)
    }

    fn record_attempt(&mut self, record: &AttemptRecord) -> StoreResult<Option<Webhook>> {
        let feed = &mut self.data.events;
        let Some((delivery, claim, due)) = feed.deliveries.iter_mut().find(|(d, c, _)| {
            d.id == record.delivery_id && c.is_some_and(|(lease, _)| lease == record.lease)
        }) else {
            return Ok(None);
        };
        delivery.status = record.status;
        delivery.http_status = record.http_status;
        delivery.error = record.error.clone();
        *claim = None;
        if let Some(next) = record.next_attempt_at {
            *due = next;
        }
        let webhook_id = delivery.webhook_id;
        Ok(feed
            .webhooks
            .iter()
            .find(|(w, _)| w.id == webhook_id)
            .map(|(w, _)| w.clone()))
    }

    fn update_webhook_health(
        &mut self,
        id: Uuid,
        consecutive_failures: u32,
        status: WebhookStatus,
    ) -> StoreResult<()> {
        if let Some((w, _)) = self
            .data
            .events
            .webhooks
            .iter_mut()
            .find(|(w, _)| w.id == id)
        {
            w.consecutive_failures = consecutive_failures;
            w.status = status;
        }
        Ok(())
    }

    fn pending_deliveries(&mut self) -> StoreResult<(u64, Option<DateTime<Utc>>)> {
        let pending = self
            .data
            .events
            .deliveries
            .iter()
            .filter(|(d, ..)| d.status == DeliveryStatus::Pending);
        let count = u64::try_from(pending.clone().count()).unwrap_or(u64::MAX);
        Ok((count, pending.map(|(d, ..)| d.created_date).min()))
    }
}
