//! What every request handler shares.

use std::time::Duration;

use actix_web::web;
use roastery_app::Roastery;
use roastery_app::account::BearerRefusal;
use roastery_domain::account::AccessGrant;
use roastery_ports::{AppError, Store, StoreError};

use crate::client_secret::SecretChecks;
use crate::cursor::CursorCodec;
use crate::error::ApiError;
use crate::rate_limit::RateLimits;
use crate::request_context;

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
    /// Use cases running at once, at most, and how long one waits for its turn; `None`:
    /// unbounded.
    database_turns: Option<(std::sync::Arc<tokio::sync::Semaphore>, Duration)>,
    /// How webhooks may be reached (checked when one is created).
    pub(crate) webhooks: crate::outbound::webhook::WebhookSettings,
    /// The EU information system's client; `None` unless an endpoint, a username and an
    /// authentication key are all configured (then `eudr.statement` operations answer 503
    /// `eudr_not_configured`).
    pub eudr: Option<std::sync::Arc<crate::outbound::eudr::EudrClient>>,
    /// When the EUDR background jobs act: poll scale and re-verification age.
    pub eudr_schedule: crate::outbound::eudr::EudrSchedule,
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
            database_turns: None,
            webhooks: crate::outbound::webhook::WebhookSettings::default(),
            eudr: None,
            eudr_schedule: crate::outbound::eudr::EudrSchedule::default(),
        }
    }

    /// Connects the EU information system (`client`; `None`: not configured) and sets when its
    /// background jobs act.
    pub fn with_eudr(
        mut self,
        client: Option<std::sync::Arc<crate::outbound::eudr::EudrClient>>,
        schedule: crate::outbound::eudr::EudrSchedule,
    ) -> Self {
        self.eudr = client;
        self.eudr_schedule = schedule;
        self
    }

    pub fn with_webhooks(mut self, settings: crate::outbound::webhook::WebhookSettings) -> Self {
        self.webhooks = settings;
        self
    }

    /// The `/metrics` registry, when on.
    pub fn metrics(&self) -> Option<std::sync::Arc<crate::metrics::Metrics>> {
        self.metrics.clone()
    }

    /// Runs at most `limit` use cases at once (the store's connection limit): the others wait
    /// on the runtime, not on blocking threads that would only wait for a connection. One that
    /// has waited `wait` (the pool's own timeout) answers 503, as a wait for a connection would.
    pub fn with_database_concurrency(mut self, limit: usize, wait: Duration) -> Self {
        let turns = std::sync::Arc::new(tokio::sync::Semaphore::new(limit.max(1)));
        self.database_turns = Some((turns, wait));
        self
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
        // The turn is owned by the blocking work, not by this future: a client that hangs up
        // drops the future, and the work it started must still hold its turn until it ends.
        let turn = match &self.database_turns {
            Some((turns, wait)) => {
                match tokio::time::timeout(*wait, turns.clone().acquire_owned()).await {
                    Ok(turn) => Some(turn.map_err(ApiError::internal)?),
                    Err(_) => {
                        return Err(ApiError::from(AppError::Store(StoreError::Unavailable(
                            "no database connection came free in time".into(),
                        ))));
                    }
                }
            }
            None => None,
        };
        let app = self.app.clone();
        // The request follows the work, so the store's log lines carry the request id.
        let request = request_context::current();
        web::block(move || {
            let _turn = turn;
            let _request = request_context::Entered::new(request);
            work(&app)
        })
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::from)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use roastery_app::testing::memory_roastery;

    use super::*;
    use crate::cursor::CursorCodec;

    /// Eight use cases asked for at once with room for two: never more than two run together,
    /// and every one runs.
    #[actix_web::test]
    async fn use_cases_beyond_the_limit_wait_their_turn() {
        let (app, _clock) = memory_roastery();
        let state = Arc::new(
            AppState::new(app, CursorCodec::new(vec![7; 32]))
                .with_database_concurrency(2, Duration::from_secs(5)),
        );
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let calls = (0..8).map(|_| {
            let (state, running, most) = (state.clone(), running.clone(), most.clone());
            async move {
                state
                    .run(move |_| {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(50));
                        running.fetch_sub(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .await
            }
        });
        let done = futures_util::future::join_all(calls).await;
        assert!(done.iter().all(Result::is_ok));
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    /// A client that hangs up while its use case runs does not give the turn back early: the
    /// next use case starts only after the abandoned one has ended.
    #[actix_web::test]
    async fn an_abandoned_use_case_keeps_its_turn_until_it_ends() {
        let (app, _clock) = memory_roastery();
        let state = Arc::new(
            AppState::new(app, CursorCodec::new(vec![7; 32]))
                .with_database_concurrency(1, Duration::from_secs(5)),
        );
        let running = Arc::new(AtomicUsize::new(0));
        let overlapped = Arc::new(AtomicUsize::new(0));
        let abandoned = {
            let running = running.clone();
            state.run(move |_| {
                running.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(300));
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
        };
        // The caller gives up 50 ms in, while the work is still running.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), abandoned).await;
        assert!(gave_up.is_err());
        let (running2, overlapped2) = (running.clone(), overlapped.clone());
        state
            .run(move |_| {
                if running2.load(Ordering::SeqCst) > 0 {
                    overlapped2.fetch_add(1, Ordering::SeqCst);
                }
                Ok(())
            })
            .await
            .unwrap();
        assert_eq!(overlapped.load(Ordering::SeqCst), 0);
    }

    /// A use case that cannot get a turn within the wait answers 503 and never runs.
    #[actix_web::test]
    async fn a_use_case_that_waits_too_long_is_told_to_retry() {
        let (app, _clock) = memory_roastery();
        let state = Arc::new(
            AppState::new(app, CursorCodec::new(vec![7; 32]))
                .with_database_concurrency(1, Duration::from_millis(100)),
        );
        let ran = Arc::new(AtomicUsize::new(0));
        let slow = {
            let state = state.clone();
            async move {
                state
                    .run(|_| {
                        std::thread::sleep(Duration::from_millis(400));
                        Ok(())
                    })
                    .await
            }
        };
        let late = {
            let (state, ran) = (state.clone(), ran.clone());
            async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                state
                    .run(move |_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .await
            }
        };
        let (slow, late) = futures_util::future::join(slow, late).await;
        assert!(slow.is_ok());
        let refused = late.unwrap_err();
        assert_eq!(
            (refused.status.as_u16(), refused.code),
            (503, "server_error")
        );
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }
}
