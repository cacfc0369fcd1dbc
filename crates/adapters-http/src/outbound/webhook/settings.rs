//! How webhooks may be reached and how long their events are kept.

use std::time::Duration;

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
