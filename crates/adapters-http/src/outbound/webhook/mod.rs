//! Sending events to webhooks, an outbound room of its own: the delivery loop each instance
//! runs ([`DeliveryLoop`]), the HTTPS client and the one rule for where it may connect
//! (`transport`), and Standard Webhooks signing and headers (`signing`).
//!
//! The loop claims due deliveries under a lease (`Roastery::claim_deliveries`), sends each
//! outside any transaction, and stores the outcome (`Roastery::finish_delivery`), so no row lock
//! is held across the network.

mod settings;
mod signing;
mod transport;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use roastery_app::Roastery;
use roastery_app::event::SendOutcome;
use roastery_ports::Store;
use roastery_ports::repo::ClaimedDelivery;
use tokio::sync::Notify;

use crate::metrics::Metrics;

pub use settings::WebhookSettings;
pub use signing::{event_body, headers, signature};
pub use transport::{HttpsTransport, ResolvingCheck, TransportError, WebhookTransport};

/// Most sends in flight per instance.
const IN_FLIGHT: usize = 64;
/// Most claims one webhook holds at a time (every instance counted): a receiver that never
/// answers ties up this many sends for the 10 s of their attempts, and nothing else.
const PER_WEBHOOK: usize = 4;
/// How often the loop looks for work when nothing woke it (events committed by other instances
/// and retries fall due meanwhile), and the least time between two rounds that found nothing.
const POLL: Duration = Duration::from_millis(500);
/// How often old events are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// One instance's delivery loop.
///
/// Up to [`IN_FLIGHT`] sends run at once; as soon as one finishes, the loop claims again, so a
/// slow receiver never holds back another's events (the claim gives each webhook at most
/// [`PER_WEBHOOK`] sends at a time).
pub struct DeliveryLoop<S: Store, T: WebhookTransport> {
    pub app: Roastery<S>,
    pub transport: Arc<T>,
    /// Notified when this instance committed events.
    pub wake: Arc<Notify>,
    pub settings: WebhookSettings,
    pub metrics: Option<Arc<Metrics>>,
}

impl<S: Store, T: WebhookTransport> DeliveryLoop<S, T> {
    /// Runs until `stop` is notified; deliveries in flight then finish (or their claims expire
    /// and another instance sends them again).
    pub async fn run(self, stop: Arc<Notify>) {
        let mut last_prune: Option<Instant> = None;
        let mut last_empty: Option<Instant> = None;
        let mut in_flight = FuturesUnordered::new();
        loop {
            if last_prune.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                last_prune = Some(Instant::now());
                let app = self.app.clone();
                let retention = self.settings.retention;
                match tokio::task::spawn_blocking(move || app.prune_events(retention)).await {
                    Ok(Ok(n)) if n > 0 => tracing::info!(pruned = n, "old events pruned"),
                    Ok(Err(e)) => tracing::warn!(error = %e, "pruning events failed"),
                    _ => {}
                }
            }
            let room = IN_FLIGHT.saturating_sub(in_flight.len());
            // After a round that found nothing due, a wake alone (this instance committed
            // events) does not start another before the poll interval: a busy writer with no
            // webhook to serve would otherwise cost a claim round per write. A delivery then
            // waits at most one interval.
            let due = last_empty.is_none_or(|at: Instant| at.elapsed() >= POLL);
            if room > 0 && due {
                let claimed = self.claim(room).await;
                last_empty = claimed.is_empty().then(Instant::now);
                for claimed in claimed {
                    in_flight.push(self.deliver(claimed));
                }
                self.observe_queue().await;
            }
            tokio::select! {
                () = stop.notified() => {
                    while in_flight.next().await.is_some() {}
                    return;
                }
                Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
                () = self.wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Claims up to `room` due deliveries.
    async fn claim(&self, room: usize) -> Vec<ClaimedDelivery> {
        let app = self.app.clone();
        match tokio::task::spawn_blocking(move || app.claim_deliveries(room, PER_WEBHOOK)).await {
            Ok(Ok(claimed)) => claimed,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "claiming webhook deliveries failed");
                Vec::new()
            }
            Err(_) => Vec::new(),
        }
    }

    async fn deliver(&self, claimed: ClaimedDelivery) {
        let body = event_body(&claimed.event);
        let id = claimed.event.id.to_string();
        // The clock port's time, as every instant the service records.
        let timestamp = self.app.now().timestamp();
        let outcome = match headers(&claimed.webhook.secret, &id, timestamp, &body) {
            Ok(headers) => {
                self.transport
                    .send(&claimed.webhook.url, headers, body)
                    .await
            }
            Err(e) => SendOutcome::Failed(e.to_string()),
        };
        let app = self.app.clone();
        let scale = self.settings.retry_scale_millis;
        let webhook_id = claimed.webhook.id;
        let attempt = claimed.delivery.attempt;
        let result = tokio::task::spawn_blocking(move || {
            app.finish_delivery(&claimed, &outcome, scale)
                .map(|s| (s, outcome))
        })
        .await;
        match result {
            Ok(Ok((Some(status), outcome))) => {
                if let Some(metrics) = &self.metrics {
                    metrics.record_delivery(status.as_str());
                }
                tracing::info!(
                    %webhook_id, event_id = %id, attempt, status = status.as_str(),
                    outcome = ?outcome, "webhook delivery attempt"
                );
            }
            Ok(Ok((None, _))) => {
                tracing::warn!(%webhook_id, event_id = %id, "delivery claim expired before its outcome was stored");
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "storing a delivery outcome failed"),
            Err(_) => {}
        }
    }

    async fn observe_queue(&self) {
        let Some(metrics) = self.metrics.clone() else {
            return;
        };
        let app = self.app.clone();
        if let Ok(Ok((count, age))) =
            tokio::task::spawn_blocking(move || app.delivery_queue()).await
        {
            metrics.record_delivery_queue(count, age);
        }
    }
}
