//! The SOAP 1.1 client of the EU's EUDR information system (IS), V3 services: implements
//! [`EudrSystem`] for the use cases.
//!
//! What it does on every call: waits for its turn (at most 5 calls per second per instance,
//! awaited, never refused), writes the envelope (WS-Security UsernameToken with a digest
//! password and a fresh nonce, timestamp valid one minute, `base:WebServiceClientId`, and on the
//! DDS service the operator's `body:BodyIdentity` when one is configured), posts it over HTTPS
//! (no proxy, no redirects, the configured timeout), and reads the answer or maps the fault
//! (see `answer.rs`). Facts: `shared/spec/eudr-information-system.md`.
//!
//! It must never log or show the authentication key: [`AuthKey`] has no `Display`, and its
//! `Debug` prints a placeholder; log lines carry the operation, status and time only.

mod answer;
mod envelope;
mod ns;
mod wsse;
mod xml;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use roastery_domain::dds::{DdsStatement, OperatorRole};
use roastery_ports::eudr::{DdsModification, DdsOverview, DeclarationCheck, EudrFault, EudrSystem};
use rust_decimal::Decimal;

use answer::Reply;
pub use answer::SCHEMA_VALIDATION;
use envelope::{Caller, Request};

/// How long a call may take by default (api-decisions §14).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Calls per second one instance makes at most (the IS allows 5 per IP).
pub const CALLS_PER_SECOND: usize = 5;

/// Time between the starts of two calls of one instance: 1/5 s.
pub const CALL_SPACING: Duration = Duration::from_millis(200);

/// How long a call keeps its place in the window after it ends.
const WINDOW: Duration = Duration::from_secs(1);

/// Where the IS is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EudrEndpoint {
    /// `https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt/` (training, no legal value).
    Acceptance,
    /// `https://eudr.webcloud.ec.europa.eu/tracesnt/`.
    Production,
    /// Another `https://` base URL (a test stub, a relay); always ends with `/`.
    Url(String),
}

impl EudrEndpoint {
    /// `acceptance`, `production` or an `https://` base URL.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        match text {
            "acceptance" => Ok(Self::Acceptance),
            "production" => Ok(Self::Production),
            _ => {
                let url = url_base(text)?;
                Ok(Self::Url(url))
            }
        }
    }

    /// The base URL the service paths are appended to (ends with `/`).
    pub fn base_url(&self) -> &str {
        match self {
            Self::Acceptance => "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt/",
            Self::Production => "https://eudr.webcloud.ec.europa.eu/tracesnt/",
            Self::Url(url) => url,
        }
    }

    /// The `WebServiceClientId` the EU documents for the environment: `eudr-test` on
    /// acceptance, `eudr-repository` on production; none for another URL (it must be set).
    pub fn default_client_id(&self) -> Option<&'static str> {
        match self {
            Self::Acceptance => Some("eudr-test"),
            Self::Production => Some("eudr-repository"),
            Self::Url(_) => None,
        }
    }
}

fn url_base(text: &str) -> Result<String, String> {
    let refuse = || {
        format!(
            "the EUDR endpoint must be `acceptance`, `production` or an https:// URL, not `{text}`"
        )
    };
    let rest = text.strip_prefix("https://").ok_or_else(refuse)?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty()
        || text.contains(char::is_whitespace)
        || text.contains(['?', '#'])
        || reqwest::Url::parse(text).is_err()
    {
        return Err(refuse());
    }
    Ok(if text.ends_with('/') {
        text.to_owned()
    } else {
        format!("{text}/")
    })
}

/// The EU Login "Authentication Key" of the web-service user. Never shown: `Debug` prints a
/// placeholder and there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthKey(String);

impl AuthKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl std::fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthKey(<redacted>)")
    }
}

/// How to reach and sign in to the IS (`ROASTERY_EUDR_*`, read by the server's configuration).
#[derive(Clone, PartialEq, Eq)]
pub struct EudrSettings {
    pub endpoint: EudrEndpoint,
    /// The EU Login username of the web-service user (`wsse:Username`).
    pub username: String,
    pub auth_key: AuthKey,
    /// `base:WebServiceClientId`.
    pub client_id: String,
    /// `body:BodyIdentity/OperatorAccessIdentifier` on DDS-service calls (≤ 16 characters).
    pub operator_id: Option<String>,
    /// PEM certificates trusted besides the built-in roots (`ROASTERY_EUDR_CA_FILE`).
    pub extra_roots_pem: Option<Vec<u8>>,
    /// How long one call may take (default [`DEFAULT_TIMEOUT`]); tests shorten it.
    pub timeout: Duration,
}

impl EudrSettings {
    /// Settings with no operator id, no extra roots and the default timeout.
    pub fn new(
        endpoint: EudrEndpoint,
        username: impl Into<String>,
        auth_key: AuthKey,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            endpoint,
            username: username.into(),
            auth_key,
            client_id: client_id.into(),
            operator_id: None,
            extra_roots_pem: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub fn with_operator_id(mut self, operator_id: Option<String>) -> Self {
        self.operator_id = operator_id;
        self
    }

    pub fn with_extra_roots_pem(mut self, pem: Option<Vec<u8>>) -> Self {
        self.extra_roots_pem = pem;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl std::fmt::Debug for EudrSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EudrSettings")
            .field("endpoint", &self.endpoint)
            .field("username", &self.username)
            .field("auth_key", &self.auth_key)
            .field("client_id", &self.client_id)
            .field("operator_id", &self.operator_id)
            .field(
                "extra_roots_pem",
                &self.extra_roots_pem.as_ref().map(|pem| pem.len()),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// When the EUDR background jobs act (`ROASTERY_EUDR_POLL_SCALE`, `ROASTERY_EUDR_REVERIFY_DAYS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EudrSchedule {
    /// Multiplies every wait of the poller (default 1; tests use 0.001). Always > 0.
    pub poll_scale: Decimal,
    /// Upstream statements are verified again once their check is this many days old; 0:
    /// never (default 7).
    pub reverify_days: u32,
}

impl Default for EudrSchedule {
    fn default() -> Self {
        Self {
            poll_scale: Decimal::ONE,
            reverify_days: 7,
        }
    }
}

impl EudrSchedule {
    /// `wait` × the poll scale, to the millisecond (exact decimal arithmetic).
    pub fn scaled(&self, wait: Duration) -> Duration {
        let millis = Decimal::from(wait.as_millis()) * self.poll_scale;
        Duration::from_millis(u64::try_from(millis.round()).unwrap_or(u64::MAX))
    }

    /// How old a check may get before it is made again; `None`: never again.
    pub fn reverify_after(&self) -> Option<Duration> {
        (self.reverify_days > 0)
            .then(|| Duration::from_secs(u64::from(self.reverify_days) * 86_400))
    }
}

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EudrClientError {
    #[error("ROASTERY_EUDR_CA_FILE holds no usable certificate: {0}")]
    Roots(String),
    #[error("the EUDR client could not be built: {0}")]
    Client(String),
}

/// The IS's SOAP client. Cheap to share (`Arc`); its rate limit is per client, so one instance
/// builds one client.
///
/// Rate: two limits, both awaited. The governor spaces call starts 1/5 s apart; but a call
/// reaches the IS some time after it starts (a new connection's TLS handshake, say), so
/// spacing alone could let a late call and five punctual ones land in one second. So each call
/// also holds one of 5 places from its start until one second after it ends (or is dropped):
/// every call the IS receives within any one second held a place at the end of that second,
/// hence at most 5 of them.
pub struct EudrClient {
    http: reqwest::Client,
    settings: EudrSettings,
    limiter: Arc<DefaultDirectRateLimiter>,
    places: Arc<tokio::sync::Semaphore>,
}

/// A call's place in the one-second window: given back one second after the call ends.
struct Place(Option<tokio::sync::OwnedSemaphorePermit>);

impl Drop for Place {
    fn drop(&mut self) {
        let Some(permit) = self.0.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(WINDOW).await;
                    drop(permit);
                });
            }
            // No runtime left to wait on (shutting down): the place goes with it.
            Err(_) => drop(permit),
        }
    }
}

impl std::fmt::Debug for EudrClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EudrClient")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl EudrClient {
    /// A client for `settings`: HTTPS only (built-in roots plus the extra ones), no proxy, no
    /// redirects, `settings.timeout` per call.
    pub fn new(settings: EudrSettings) -> Result<Self, EudrClientError> {
        let mut builder = reqwest::Client::builder()
            .https_only(true)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .user_agent(concat!("roastery/", env!("CARGO_PKG_VERSION")));
        if let Some(pem) = &settings.extra_roots_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| EudrClientError::Roots(e.to_string()))?;
            if roots.is_empty() {
                return Err(EudrClientError::Roots("no certificate found".into()));
            }
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let http = builder
            .build()
            .map_err(|e| EudrClientError::Client(e.to_string()))?;
        let quota = Quota::with_period(CALL_SPACING)
            .ok_or_else(|| EudrClientError::Client("no call spacing".into()))?
            .allow_burst(NonZeroU32::MIN);
        Ok(Self {
            http,
            settings,
            limiter: Arc::new(RateLimiter::direct(quota)),
            places: Arc::new(tokio::sync::Semaphore::new(CALLS_PER_SECOND)),
        })
    }

    pub fn settings(&self) -> &EudrSettings {
        &self.settings
    }

    /// One call: wait for the turn, sign, post, read.
    async fn call(&self, request: Request<'_>) -> Result<Reply, EudrFault> {
        let permit = self
            .places
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| EudrFault::Unavailable("the EUDR client is shutting down".into()))?;
        let _place = Place(Some(permit));
        self.limiter.until_ready().await;
        let operation = request.operation();
        let service = request.service();
        let token = wsse::Token::new(Utc::now(), self.settings.auth_key.as_bytes());
        let caller = Caller {
            username: &self.settings.username,
            client_id: &self.settings.client_id,
            operator_id: self.settings.operator_id.as_deref(),
        };
        let body = envelope::envelope(&request, &caller, &token).map_err(|e| {
            EudrFault::Unavailable(format!("the request could not be written: {e}"))
        })?;
        let url = format!("{}{}", self.settings.endpoint.base_url(), service.path());
        let started = Instant::now();
        let outcome = self.post(&url, &request.soap_action(), body).await;
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(Reply::Payload(_)) => {
                tracing::debug!(operation, elapsed_ms, "EUDR information system answered");
            }
            Ok(Reply::NotFound(_)) => {
                tracing::debug!(operation, elapsed_ms, "EUDR information system: not found");
            }
            Err(fault) => {
                tracing::warn!(operation, elapsed_ms, %fault, "EUDR information system call failed");
            }
        }
        outcome
    }

    async fn post(&self, url: &str, action: &str, body: Vec<u8>) -> Result<Reply, EudrFault> {
        let response = self
            .http
            .post(url)
            .header("content-type", "text/xml; charset=utf-8")
            .header("soapaction", format!("\"{action}\""))
            .body(body)
            .send()
            .await
            .map_err(|e| self.transport_fault(&e))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| self.transport_fault(&e))?;
        answer::read(status, &text)
    }

    fn transport_fault(&self, err: &reqwest::Error) -> EudrFault {
        if err.is_timeout() {
            return EudrFault::Unavailable(format!(
                "no answer within {} s",
                self.settings.timeout.as_secs_f64()
            ));
        }
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        EudrFault::Unavailable(text)
    }
}

/// A get operation's `NotFoundException` is an empty list; any other operation's is a refusal.
fn payload(reply: Reply) -> Result<xml::Element, EudrFault> {
    match reply {
        Reply::Payload(payload) => Ok(payload),
        Reply::NotFound(errors) => Err(EudrFault::Rejected(errors)),
    }
}

impl EudrSystem for EudrClient {
    async fn verify_declaration(
        &self,
        reference_number: &str,
        verification_number: &str,
    ) -> Result<DeclarationCheck, EudrFault> {
        let reply = self
            .call(Request::VerifyDeclaration {
                reference_number,
                verification_number,
            })
            .await?;
        answer::declaration_check(&payload(reply)?)
    }

    async fn submit_dds(
        &self,
        role: OperatorRole,
        statement: &DdsStatement,
    ) -> Result<String, EudrFault> {
        let reply = self.call(Request::SubmitDds { role, statement }).await?;
        answer::submitted_uuid(&payload(reply)?)
    }

    async fn amend_dds(
        &self,
        uuid: &str,
        statement: &DdsStatement,
    ) -> Result<DdsModification, EudrFault> {
        let reply = self.call(Request::AmendDds { uuid, statement }).await?;
        answer::modification(&payload(reply)?, "AmendDdsResponse")
    }

    async fn withdraw_dds(&self, uuid: &str) -> Result<DdsModification, EudrFault> {
        let reply = self.call(Request::WithdrawDds { uuid }).await?;
        answer::modification(&payload(reply)?, "WithdrawDdsResponse")
    }

    async fn get_dds(&self, uuids: &[String]) -> Result<Vec<DdsOverview>, EudrFault> {
        match self.call(Request::GetDds { uuids }).await? {
            Reply::Payload(payload) => answer::overviews(&payload, "GetDdsResponse"),
            Reply::NotFound(_) => Ok(Vec::new()),
        }
    }

    async fn get_dds_by_internal_reference(
        &self,
        internal_reference: &str,
    ) -> Result<Vec<DdsOverview>, EudrFault> {
        match self
            .call(Request::GetDdsByInternalReference { internal_reference })
            .await?
        {
            Reply::Payload(payload) => {
                answer::overviews(&payload, "GetDdsByInternalReferenceResponse")
            }
            Reply::NotFound(_) => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_named_or_https_urls() {
        assert_eq!(
            EudrEndpoint::parse("acceptance").unwrap().base_url(),
            "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt/"
        );
        assert_eq!(
            EudrEndpoint::parse("production")
                .unwrap()
                .default_client_id(),
            Some("eudr-repository")
        );
        assert_eq!(
            EudrEndpoint::parse("https://127.0.0.1:4443/tracesnt").unwrap(),
            EudrEndpoint::Url("https://127.0.0.1:4443/tracesnt/".into())
        );
        for bad in [
            "http://example.org/",
            "https://",
            "staging",
            "https://a b/",
            "",
        ] {
            assert!(EudrEndpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let settings = EudrSettings::new(
            EudrEndpoint::Acceptance,
            "user",
            AuthKey::new("s3cr3t-key-value"),
            "eudr-test",
        );
        let client = EudrClient::new(settings.clone()).unwrap();
        for shown in [format!("{settings:?}"), format!("{client:?}")] {
            assert!(!shown.contains("s3cr3t"), "{shown}");
            assert!(shown.contains("redacted"), "{shown}");
        }
    }

    #[test]
    fn the_schedule_scales_waits_exactly() {
        let schedule = EudrSchedule {
            poll_scale: Decimal::new(1, 3),
            reverify_days: 0,
        };
        assert_eq!(
            schedule.scaled(Duration::from_secs(1800)),
            Duration::from_millis(1800)
        );
        assert_eq!(schedule.reverify_after(), None);
        let default = EudrSchedule::default();
        assert_eq!(
            default.scaled(Duration::from_secs(1800)),
            Duration::from_secs(1800)
        );
        assert_eq!(
            default.reverify_after(),
            Some(Duration::from_secs(7 * 86_400))
        );
    }
}
