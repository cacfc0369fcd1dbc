//! What every request handler shares.

use std::time::Duration;

use actix_web::web;
use roastery_domain::account::AccessGrant;
use roastery_ports::account::BearerRefusal;
use roastery_ports::{AppError, Roastery, Store};

use crate::client_secret::SecretChecks;
use crate::cursor::CursorCodec;
use crate::error::ApiError;
use crate::rate_limit::RateLimits;

/// How long a bearer token's verification is reused. Revocation takes effect within this time
/// (the contract allows 60 s).
pub const AUTH_CACHE_TTL: Duration = Duration::from_secs(30);

pub struct AppState<S: Store> {
    pub app: Roastery<S>,
    pub cursors: CursorCodec,
    pub(crate) auth_cache: moka::sync::Cache<String, Result<AccessGrant, BearerRefusal>>,
    /// Client secret checks at the token endpoint: bounded, and remembered as long as tokens are.
    pub(crate) secret_checks: SecretChecks,
    /// `None` when rate limiting is off.
    pub(crate) rate_limits: Option<RateLimits>,
    /// How long a client may take to send a request body.
    pub(crate) body_timeout: std::time::Duration,
    /// `None` when `/metrics` is off.
    pub(crate) metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

impl<S: Store> AppState<S> {
    pub fn new(app: Roastery<S>, cursors: CursorCodec) -> Self {
        Self {
            app,
            cursors,
            auth_cache: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(AUTH_CACHE_TTL)
                .build(),
            secret_checks: SecretChecks::new(AUTH_CACHE_TTL),
            rate_limits: None,
            body_timeout: crate::body::BODY_TIMEOUT,
            metrics: Some(Default::default()),
        }
    }

    /// Serves `GET /metrics` and counts requests when `on` (the default).
    pub fn with_metrics(mut self, on: bool) -> Self {
        self.metrics = on.then(Default::default);
        self
    }

    /// Reuses a token's verification for `ttl` (default [`AUTH_CACHE_TTL`]); a revocation takes
    /// effect within that time. A client secret's successful check is remembered as long.
    pub fn with_auth_cache_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.auth_cache = moka::sync::Cache::builder()
            .max_capacity(100_000)
            .time_to_live(ttl)
            .build();
        self.secret_checks = SecretChecks::new(ttl);
        self
    }

    /// Gives clients `timeout` to send a request body; slower ones get 400 `invalid_request`.
    pub fn with_body_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Limits operations per service account and token requests per client id with `quota`
    /// (`None`: no limit). See [`crate::parse_rate_limit`].
    pub fn with_rate_limit(mut self, quota: Option<governor::Quota>) -> Self {
        self.rate_limits = quota.map(RateLimits::new);
        self
    }

    /// Like [`AppState::with_rate_limit`], with buckets that every instance sharing `shared`
    /// shares: one quota per key across all of them.
    pub fn with_shared_rate_limit(
        mut self,
        quota: Option<governor::Quota>,
        shared: std::sync::Arc<dyn roastery_ports::rate_limit::SharedRateLimit>,
    ) -> Self {
        self.rate_limits = quota.map(|q| RateLimits::shared(q, shared));
        self
    }

    /// Runs one use case on the blocking pool (Diesel is synchronous), so actix workers never
    /// wait on the database.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Roastery<S>) -> Result<T, AppError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let app = self.app.clone();
        // The request's span follows the work, so the store's log lines carry the request id.
        let span = tracing::Span::current();
        web::block(move || span.in_scope(|| work(&app)))
            .await
            .map_err(ApiError::internal)?
            .map_err(ApiError::from)
    }
}
