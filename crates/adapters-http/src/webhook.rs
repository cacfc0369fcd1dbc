//! Sending events to webhooks: the HTTPS client, the address checks that keep it off the
//! internal network, and the delivery loop each instance runs.
//!
//! Safety (api-decisions §13): only `https://`; no redirects; a receiver whose host is or
//! resolves to a loopback, private, link-local or unspecified address is refused at creation
//! and at delivery, unless private addresses are allowed. At delivery the client resolves the
//! host through [`PublicResolver`], which hands the connection only addresses it has checked,
//! so a name that resolved to a public address when it was checked cannot be re-pointed at an
//! internal one for the connection (DNS rebinding).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use roastery_app::Roastery;
use roastery_app::event::{
    ATTEMPT_TIMEOUT, ReceiverCheck, SendOutcome, WebhookTransport, signature,
};
use roastery_domain::webhook::{WebhookError, WebhookUrl, is_private};
use roastery_ports::Store;
use roastery_ports::repo::ClaimedDelivery;
use tokio::sync::Notify;

use crate::metrics::Metrics;

/// How webhooks may be reached.
#[derive(Debug, Clone, Default)]
pub struct WebhookSettings {
    /// `ROASTERY_WEBHOOK_ALLOW_PRIVATE=on`: receivers on internal addresses are allowed.
    pub allow_private: bool,
    /// `ROASTERY_WEBHOOK_CA_FILE`: PEM certificates trusted besides the built-in roots.
    pub extra_roots_pem: Option<Vec<u8>>,
    /// `ROASTERY_WEBHOOK_RETRY_SCALE` × 1000.
    pub retry_scale_millis: u64,
    /// `ROASTERY_EVENT_RETENTION_DAYS`.
    pub retention: Duration,
}

/// Checks a new webhook's host with the system resolver (blocking: it runs with the use case).
#[derive(Debug, Clone, Copy)]
pub struct ResolvingCheck {
    pub allow_private: bool,
}

impl ReceiverCheck for ResolvingCheck {
    fn check(&self, url: &WebhookUrl) -> Result<(), WebhookError> {
        if self.allow_private {
            return Ok(());
        }
        let host = url.host();
        let addresses: Vec<IpAddr> = match url.ip_literal() {
            Some(ip) => vec![ip],
            None => (host.as_str(), url.port())
                .to_socket_addrs()
                .map_err(|_| WebhookError::Unresolvable(host.clone()))?
                .map(|a| a.ip())
                .collect(),
        };
        if addresses.is_empty() {
            return Err(WebhookError::Unresolvable(host));
        }
        if addresses.into_iter().any(is_private) {
            return Err(WebhookError::PrivateAddress(host));
        }
        Ok(())
    }
}

/// Resolves hosts for the client, keeping only public addresses (all when private ones are
/// allowed).
#[derive(Debug, Clone, Copy)]
struct PublicResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let allowed: Vec<SocketAddr> = found
                .filter(|a| allow_private || !is_private(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "{host} resolves to no address a webhook may be sent to (loopback, private, link-local or unspecified addresses are refused)"
                )
                .into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// The reqwest client webhooks are sent with.
#[derive(Debug, Clone)]
pub struct HttpsTransport {
    client: reqwest::Client,
    allow_private: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("ROASTERY_WEBHOOK_CA_FILE holds no usable certificate: {0}")]
    Roots(String),
    #[error("the webhook client could not be built: {0}")]
    Client(String),
}

impl HttpsTransport {
    pub fn new(settings: &WebhookSettings) -> Result<Self, TransportError> {
        let mut builder = reqwest::Client::builder()
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            // HTTPS_PROXY and friends are not honoured: the address connected to must be the
            // receiver's own, the one the resolver checked.
            .no_proxy()
            .timeout(ATTEMPT_TIMEOUT)
            .connect_timeout(ATTEMPT_TIMEOUT)
            .user_agent(concat!("roastery-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(PublicResolver {
                allow_private: settings.allow_private,
            }));
        if let Some(pem) = &settings.extra_roots_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| TransportError::Roots(e.to_string()))?;
            if roots.is_empty() {
                return Err(TransportError::Roots("no certificate found".into()));
            }
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let client = builder
            .build()
            .map_err(|e| TransportError::Client(e.to_string()))?;
        Ok(Self {
            client,
            allow_private: settings.allow_private,
        })
    }
}

/// The whole chain of an error, for the delivery's `error`.
fn describe(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl WebhookTransport for HttpsTransport {
    async fn send(
        &self,
        url: &WebhookUrl,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    ) -> SendOutcome {
        if !self.allow_private {
            // IP literals are not resolved, so the resolver never sees them.
            let refused = match url.ip_literal() {
                Some(ip) => is_private(ip),
                None => match tokio::net::lookup_host((url.host().as_str(), url.port())).await {
                    Ok(found) => found.into_iter().all(|a| is_private(a.ip())),
                    Err(e) => return SendOutcome::Failed(format!("{}: {e}", url.host())),
                },
            };
            if refused {
                return SendOutcome::Refused(WebhookError::PrivateAddress(url.host()).to_string());
            }
        }
        let mut request = self
            .client
            .post(url.as_str())
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        match request.body(body).send().await {
            Ok(response) => SendOutcome::Answered(response.status().as_u16()),
            Err(e) if e.is_timeout() => {
                SendOutcome::Failed(format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()))
            }
            Err(e) => SendOutcome::Failed(describe(&e)),
        }
    }
}

/// The body of a delivery: the event as `listEvents` answers it.
pub fn event_body(event: &roastery_domain::event::Event) -> Vec<u8> {
    serde_json::to_vec(&crate::ops::EventDto::from(event.clone())).unwrap_or_default()
}

/// Most sends in flight per instance.
const IN_FLIGHT: usize = 64;
/// Most claims one webhook holds at a time (every instance counted): a receiver that never
/// answers ties up this many sends for the 10 s of their attempts, and nothing else.
const PER_WEBHOOK: usize = 4;
/// How often the loop looks for work when nothing woke it: events committed by other
/// instances and retries fall due meanwhile.
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
            if room > 0 {
                for claimed in self.claim(room).await {
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
        let timestamp = chrono::Utc::now().timestamp();
        let outcome = match signature(&claimed.webhook.secret, &id, timestamp, &body) {
            Ok(sig) => {
                let headers = vec![
                    ("webhook-id", id.clone()),
                    ("webhook-timestamp", timestamp.to_string()),
                    ("webhook-signature", sig),
                ];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_hosts_are_refused_unless_allowed() {
        let strict = ResolvingCheck {
            allow_private: false,
        };
        for url in [
            "https://127.0.0.1/",
            "https://[::1]:8443/x",
            "https://10.0.0.7/",
            "https://169.254.169.254/latest",
            "https://[::ffff:192.168.0.1]/",
            "https://localhost/",
        ] {
            let url = WebhookUrl::parse(url).unwrap();
            assert!(strict.check(&url).is_err(), "{url:?}");
        }
        let open = ResolvingCheck {
            allow_private: true,
        };
        assert!(
            open.check(&WebhookUrl::parse("https://127.0.0.1/").unwrap())
                .is_ok()
        );
    }
}
