//! Rate limits (GCRA, `governor`): one bucket per service account for operations and one per
//! client id for the token endpoint, both with the quota of the `rate_limit` setting
//! (`"5/s,burst=10"` or `"off"`).
//!
//! By default buckets live in this process: N server instances would admit up to N × the quota.
//! With a [`SharedRateLimit`] (PostgreSQL), every check goes to the buckets all instances share;
//! should that store fail, the check falls back to this process's buckets rather than failing
//! the request.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use roastery_ports::rate_limit::{GcraCheck, GcraQuota, SharedRateLimit};

/// How many checks pass between two sweeps of idle buckets.
const SWEEP_EVERY: u64 = 1024;

/// The parsed `rate_limit` setting: `None` means off.
pub fn parse_setting(text: &str) -> Result<Option<Quota>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let invalid = || format!("rate limit `{text}` is neither `off` nor of the form `N/s,burst=M`");
    let (rate, burst) = text.split_once(',').ok_or_else(invalid)?;
    let rate = rate.trim().strip_suffix("/s").ok_or_else(invalid)?;
    let burst = burst.trim().strip_prefix("burst=").ok_or_else(invalid)?;
    let number = |s: &str| {
        s.trim()
            .parse::<NonZeroU32>()
            .map_err(|_| format!("rate limit `{text}`: `{s}` is not a positive whole number"))
    };
    Ok(Some(
        Quota::per_second(number(rate)?).allow_burst(number(burst)?),
    ))
}

type Keyed<C> = RateLimiter<String, DefaultKeyedStateStore<String>, C, StateInformationMiddleware>;

/// A keyed limiter with a clock tests can drive.
pub struct Limiter<C: Clock = DefaultClock> {
    limiter: Keyed<C>,
    clock: C,
    checks: AtomicU64,
    sweep_every: u64,
}

/// What one check decided, with the values of the `RateLimit-*` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Requests allowed at once (the burst).
    pub limit: u32,
    /// Requests left right now.
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset: u64,
    /// Seconds until the next request is allowed (≥ 1); set when refused.
    pub retry_after: Option<u64>,
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl Limiter<DefaultClock> {
    pub fn new(quota: Quota) -> Self {
        Self::with_clock(quota, DefaultClock::default(), SWEEP_EVERY)
    }
}

impl<C: Clock + Clone> Limiter<C> {
    /// A limiter reading time from `clock` that forgets idle buckets every `sweep_every` checks.
    pub fn with_clock(quota: Quota, clock: C, sweep_every: u64) -> Self {
        Self {
            // The state-snapshot middleware reports the remaining burst of each check.
            limiter: Keyed::new(quota, DefaultKeyedStateStore::default(), clock.clone()),
            clock,
            checks: AtomicU64::new(0),
            sweep_every: sweep_every.max(1),
        }
    }

    /// Takes one request from `key`'s bucket, if it has one left.
    pub fn check(&self, key: &str) -> Decision {
        if self.checks.fetch_add(1, Ordering::Relaxed) % self.sweep_every == self.sweep_every - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        match self.limiter.check_key(&key.to_owned()) {
            Ok(snapshot) => {
                let quota = snapshot.quota();
                let limit = quota.burst_size().get();
                let remaining = snapshot.remaining_burst_capacity();
                Decision {
                    allowed: true,
                    limit,
                    remaining,
                    reset: ceil_secs(quota.replenish_interval() * (limit - remaining)),
                    retry_after: None,
                }
            }
            Err(not_until) => {
                let quota = not_until.quota();
                let limit = quota.burst_size().get();
                let wait = not_until.wait_time_from(self.clock.now());
                Decision {
                    allowed: false,
                    limit,
                    remaining: 0,
                    reset: ceil_secs(wait + quota.replenish_interval() * (limit - 1)).max(1),
                    retry_after: Some(ceil_secs(wait).max(1)),
                }
            }
        }
    }

    /// Buckets currently remembered.
    pub fn len(&self) -> usize {
        self.limiter.len()
    }

    pub fn is_empty(&self) -> bool {
        self.limiter.is_empty()
    }
}

/// The limiters of the service: operations per service account, token requests per client id.
pub struct RateLimits {
    pub operations: Limiter,
    pub tokens: Limiter,
    shared: Option<(Arc<dyn SharedRateLimit>, GcraQuota)>,
}

impl RateLimits {
    pub fn new(quota: Quota) -> Self {
        Self {
            operations: Limiter::new(quota),
            tokens: Limiter::new(quota),
            shared: None,
        }
    }

    /// Limits with buckets in `shared`, one per key for every instance that shares it.
    pub fn shared(quota: Quota, shared: Arc<dyn SharedRateLimit>) -> Self {
        let gcra = GcraQuota {
            emission_micros: i64::try_from(quota.replenish_interval().as_micros())
                .unwrap_or(i64::MAX),
            burst: quota.burst_size().get(),
        };
        Self {
            shared: Some((shared, gcra)),
            ..Self::new(quota)
        }
    }

    /// Takes one operation request from the service account's bucket.
    pub async fn check_operation(&self, client_id: &str) -> Decision {
        match self.check_shared(format!("op:{client_id}")).await {
            Some(decision) => decision,
            None => self.operations.check(client_id),
        }
    }

    /// Takes one token request from the client id's bucket.
    pub async fn check_token(&self, client_id: &str) -> Decision {
        match self.check_shared(format!("token:{client_id}")).await {
            Some(decision) => decision,
            None => self.tokens.check(client_id),
        }
    }

    async fn check_shared(&self, bucket: String) -> Option<Decision> {
        let (shared, quota) = self.shared.clone()?;
        match actix_web::web::block(move || shared.check(&bucket, quota)).await {
            Ok(Ok(check)) => Some(Decision::from_gcra(check, quota)),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "shared rate limit unavailable; limiting per instance");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "shared rate limit check failed; limiting per instance");
                None
            }
        }
    }
}

fn ceil_micros_to_secs(micros: i64) -> u64 {
    u64::try_from(micros.max(0))
        .unwrap_or(0)
        .div_ceil(1_000_000)
}

impl Decision {
    /// The decision and header values of a shared GCRA check.
    pub fn from_gcra(check: GcraCheck, quota: GcraQuota) -> Self {
        let ahead = check.tat_micros - check.now_micros;
        let emission = quota.emission_micros.max(1);
        let tolerance = quota.tolerance_micros();
        if check.allowed {
            let remaining =
                ((tolerance + emission - ahead) / emission).clamp(0, i64::from(quota.burst));
            Self {
                allowed: true,
                limit: quota.burst,
                remaining: u32::try_from(remaining).unwrap_or(0),
                reset: ceil_micros_to_secs(ahead),
                retry_after: None,
            }
        } else {
            Self {
                allowed: false,
                limit: quota.burst,
                remaining: 0,
                reset: ceil_micros_to_secs(ahead).max(1),
                retry_after: Some(ceil_micros_to_secs(ahead - tolerance).max(1)),
            }
        }
    }
}

impl Decision {
    /// Adds the `RateLimit-*` headers (and `Retry-After` when refused).
    pub fn apply(&self, headers: &mut HeaderMap) {
        let mut set = |name: &'static str, value: u64| {
            headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
        };
        set("ratelimit-limit", u64::from(self.limit));
        set("ratelimit-remaining", u64::from(self.remaining));
        set("ratelimit-reset", self.reset);
        if let Some(seconds) = self.retry_after {
            set("retry-after", seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    fn limiter(setting: &str) -> (Limiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let quota = parse_setting(setting).unwrap().unwrap();
        (Limiter::with_clock(quota, clock.clone(), 1_000_000), clock)
    }

    #[test]
    fn a_burst_of_ten_passes_and_the_eleventh_is_refused() {
        let (limiter, _) = limiter("5/s,burst=10");
        for i in 0..10 {
            let d = limiter.check("a");
            assert!(d.allowed, "request {i}");
            assert_eq!(d.limit, 10);
            assert_eq!(d.remaining, 9 - i);
        }
        let refused = limiter.check("a");
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0);
        assert_eq!(refused.retry_after, Some(1));
        assert!(refused.reset >= 2, "{refused:?}");
    }

    #[test]
    fn the_bucket_refills_at_five_per_second() {
        let (limiter, clock) = limiter("5/s,burst=10");
        for _ in 0..10 {
            assert!(limiter.check("a").allowed);
        }
        assert!(!limiter.check("a").allowed);
        clock.advance(Duration::from_millis(200));
        assert!(limiter.check("a").allowed);
        assert!(!limiter.check("a").allowed);
        clock.advance(Duration::from_secs(1));
        for _ in 0..5 {
            assert!(limiter.check("a").allowed);
        }
        assert!(!limiter.check("a").allowed);
        clock.advance(Duration::from_secs(2));
        assert_eq!(limiter.check("a").remaining, 9);
    }

    #[test]
    fn keys_do_not_share_buckets() {
        let (limiter, _) = limiter("5/s,burst=10");
        for _ in 0..10 {
            assert!(limiter.check("a").allowed);
        }
        assert!(!limiter.check("a").allowed);
        let other = limiter.check("b");
        assert!(other.allowed);
        assert_eq!(other.remaining, 9);
    }

    #[test]
    fn idle_buckets_are_forgotten() {
        let clock = FakeRelativeClock::default();
        let quota = parse_setting("5/s,burst=10").unwrap().unwrap();
        let limiter = Limiter::with_clock(quota, clock.clone(), 4);
        for key in ["a", "b", "c"] {
            limiter.check(key);
        }
        assert_eq!(limiter.len(), 3);
        clock.advance(Duration::from_secs(5));
        limiter.check("d"); // the fourth check sweeps
        assert_eq!(limiter.len(), 1);
    }

    #[test]
    fn headers_carry_the_decision() {
        let (limiter, _) = limiter("1/s,burst=1");
        let mut headers = HeaderMap::new();
        limiter.check("a").apply(&mut headers);
        assert_eq!(headers.get("ratelimit-limit").unwrap(), "1");
        assert_eq!(headers.get("ratelimit-remaining").unwrap(), "0");
        assert_eq!(headers.get("ratelimit-reset").unwrap(), "1");
        assert!(headers.get("retry-after").is_none());
        let mut headers = HeaderMap::new();
        limiter.check("a").apply(&mut headers);
        assert_eq!(headers.get("retry-after").unwrap(), "1");
    }

    #[test]
    fn the_setting_is_parsed() {
        assert_eq!(parse_setting("off"), Ok(None));
        assert_eq!(parse_setting(" OFF "), Ok(None));
        let quota = parse_setting("5/s,burst=10").unwrap().unwrap();
        assert_eq!(quota.burst_size().get(), 10);
        assert_eq!(quota.replenish_interval(), Duration::from_millis(200));
        assert!(parse_setting("5/s, burst=10").unwrap().is_some());
        for bad in [
            "",
            "5",
            "5/s",
            "0/s,burst=10",
            "5/s,burst=0",
            "5/m,burst=10",
            "x/s,burst=1",
            "5/s,burst=-1",
            "5/s,bursts=10",
            "on",
        ] {
            assert!(parse_setting(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn shared_checks_give_the_same_headers_as_local_ones() {
        let quota = GcraQuota {
            emission_micros: 200_000,
            burst: 10,
        };
        // A fresh bucket: the first request passes, 9 left, full again in 0.2 s.
        let first = Decision::from_gcra(
            GcraCheck {
                allowed: true,
                tat_micros: 1_200_000,
                now_micros: 1_000_000,
            },
            quota,
        );
        assert_eq!((first.allowed, first.limit, first.remaining), (true, 10, 9));
        assert_eq!((first.reset, first.retry_after), (1, None));
        // The tenth at once: none left, full again in 2 s.
        let tenth = Decision::from_gcra(
            GcraCheck {
                allowed: true,
                tat_micros: 3_000_000,
                now_micros: 1_000_000,
            },
            quota,
        );
        assert_eq!((tenth.remaining, tenth.reset), (0, 2));
        // The eleventh is refused: the next one passes in 0.2 s, so Retry-After is 1.
        let eleventh = Decision::from_gcra(
            GcraCheck {
                allowed: false,
                tat_micros: 3_000_000,
                now_micros: 1_000_000,
            },
            quota,
        );
        assert_eq!((eleventh.allowed, eleventh.remaining), (false, 0));
        assert_eq!((eleventh.retry_after, eleventh.reset), (Some(1), 2));
    }
}
