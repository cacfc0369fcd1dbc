//! How the EUDR rules are applied here: what shipping requires and the connector's waits.
//! Plain settings the service is built with, apart from the use cases that read them.

use chrono::TimeDelta;

/// Whether `shipOrder` requires complete due diligence (`ROASTERY_EUDR_ENFORCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EudrEnforce {
    #[default]
    Off,
    Ship,
    /// As `Ship`, and every `UPSTREAM` statement of every source verified `EXISTING_USABLE`
    /// within `ROASTERY_EUDR_REVERIFY_DAYS`.
    ShipVerified,
}

impl EudrEnforce {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "ship" => Some(Self::Ship),
            "ship-verified" => Some(Self::ShipVerified),
            _ => None,
        }
    }
}

/// The waits of the EUDR connector (`ROASTERY_EUDR_POLL_SCALE`, `ROASTERY_EUDR_REVERIFY_DAYS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EudrTiming {
    /// Between polls of a submission (30 min × scale); the first poll comes this long after
    /// submission.
    pub poll_interval: TimeDelta,
    /// A statement checked longer ago than this is verified again; `None`: never.
    pub reverify_after: Option<TimeDelta>,
}

impl Default for EudrTiming {
    fn default() -> Self {
        Self::scaled(1000, 7)
    }
}

impl EudrTiming {
    /// 30 min × `scale_millis` / 1000 between polls; statements re-verified after
    /// `reverify_days` days (0: never).
    pub fn scaled(scale_millis: u64, reverify_days: u64) -> Self {
        let millis = i64::try_from(scale_millis.saturating_mul(1_800)).unwrap_or(i64::MAX);
        Self {
            poll_interval: TimeDelta::try_milliseconds(millis).unwrap_or(TimeDelta::MAX),
            reverify_after: (reverify_days > 0)
                .then(|| TimeDelta::try_days(i64::try_from(reverify_days).unwrap_or(i64::MAX)))
                .flatten(),
        }
    }

    /// A submission left `SENDING` is given up on this long after it was stored (an hour ×
    /// scale) when the IS does not know it.
    pub fn sending_given_up_after(&self) -> TimeDelta {
        self.poll_interval
            .checked_mul(2)
            .unwrap_or(self.poll_interval)
    }
}
