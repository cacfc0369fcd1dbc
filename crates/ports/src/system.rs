//! The system clock and random ids, for production wiring.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use rand::RngCore;
use uuid::Uuid;

use crate::{Clock, IdGen};

/// The wall clock, truncated to microseconds (what both databases store).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        now.duration_trunc(TimeDelta::microseconds(1))
            .unwrap_or(now)
    }
}

/// UUID v7 ids and tokens from the operating system's random source.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdGen for RandomIds {
    fn new_id(&self) -> Uuid {
        Uuid::now_v7()
    }

    fn random_token(&self, bytes: usize) -> String {
        let mut buf = vec![0u8; bytes];
        rand::rngs::OsRng.fill_bytes(&mut buf);
        URL_SAFE_NO_PAD.encode(buf)
    }
}
