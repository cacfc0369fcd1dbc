//! A rate-limit state shared by every server instance (GCRA, one bucket per key).
//!
//! In-process limiters admit N × the quota on N instances; a store that all instances share
//! keeps one theoretical arrival time (TAT) per bucket instead, on one clock (the store's).

use crate::error::StoreError;

/// A GCRA quota: one request per `emission_micros`, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraQuota {
    pub emission_micros: i64,
    pub burst: u32,
}

impl GcraQuota {
    /// How far ahead of now the TAT may be for a request to pass: (burst − 1) emissions.
    pub fn tolerance_micros(&self) -> i64 {
        self.emission_micros * i64::from(self.burst.saturating_sub(1))
    }
}

/// What one check decided, in microseconds on the store's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraCheck {
    pub allowed: bool,
    /// The bucket's theoretical arrival time after this check.
    pub tat_micros: i64,
    /// The store's clock at the check.
    pub now_micros: i64,
}

/// Takes one request from a bucket in one atomic step.
pub trait SharedRateLimit: Send + Sync + 'static {
    fn check(&self, bucket: &str, quota: GcraQuota) -> Result<GcraCheck, StoreError>;
}
