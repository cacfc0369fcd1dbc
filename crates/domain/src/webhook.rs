//! Webhooks: where events are pushed, which addresses may receive them, and when a failed
//! delivery is tried again (api-decisions §13).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::event::EventType;
use crate::field::FieldPath;
use crate::violation::{BrokenRule, Violation};

/// Longest webhook URL accepted.
pub const MAX_URL_CHARS: usize = 2_000;
/// Longest description accepted.
pub const MAX_DESCRIPTION_CHARS: usize = 1_000;
/// Consecutive FAILED events after which a webhook is disabled.
pub const FAILURES_BEFORE_DISABLED: u32 = 5;

/// A webhook's broken rule. Field paths are relative to the webhook as given (`url`); a request
/// places them under its data, and a delivery's failure names the webhook's own `url`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("{field} must be an absolute https:// URL with a host: {problem}")]
    NotHttps { field: FieldPath, problem: String },
    #[error(
        "{field} is {length} characters long as stored (non-ASCII characters percent-encoded); at \
         most {MAX_URL_CHARS} are accepted"
    )]
    UrlTooLong { field: FieldPath, length: usize },
    #[error("{field} is longer than {MAX_DESCRIPTION_CHARS} characters")]
    DescriptionTooLong { field: FieldPath },
    #[error(
        "{field} host `{host}` is or resolves to a loopback, private, link-local or unspecified address"
    )]
    PrivateAddress { field: FieldPath, host: String },
    #[error("{field} host `{host}` does not resolve")]
    Unresolvable { field: FieldPath, host: String },
    #[error("webhook {0} does not exist")]
    NotFound(Uuid),
}

impl WebhookError {
    fn not_https(problem: impl Into<String>) -> Self {
        Self::NotHttps {
            field: "url".into(),
            problem: problem.into(),
        }
    }

    fn url_too_long(length: usize) -> Self {
        Self::UrlTooLong {
            field: "url".into(),
            length,
        }
    }

    /// `host`, the webhook URL's, is or resolves only to addresses no delivery may reach.
    pub fn private_address(host: impl Into<String>) -> Self {
        Self::PrivateAddress {
            field: "url".into(),
            host: host.into(),
        }
    }

    /// `host`, the webhook URL's, has no address.
    pub fn unresolvable(host: impl Into<String>) -> Self {
        Self::Unresolvable {
            field: "url".into(),
            host: host.into(),
        }
    }
}

impl BrokenRule for WebhookError {
    fn violation(&self) -> Violation {
        match self {
            WebhookError::NotFound(_) => Violation::NotFound,
            _ => Violation::InvalidParameter,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::NotHttps { field, .. }
            | Self::UrlTooLong { field, .. }
            | Self::DescriptionTooLong { field }
            | Self::PrivateAddress { field, .. }
            | Self::Unresolvable { field, .. } => field.rebase(base),
            Self::NotFound(_) => {}
        }
    }
}

/// An `https://` URL with a host, at most [`MAX_URL_CHARS`] long as stored: normalised, with
/// non-ASCII characters percent-encoded (one `é` is six characters, `%C3%A9`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    url: url::Url,
}

impl WebhookUrl {
    pub fn parse(text: &str) -> Result<Self, WebhookError> {
        let given = text.chars().count();
        if given > MAX_URL_CHARS {
            return Err(WebhookError::url_too_long(given));
        }
        let url = url::Url::parse(text).map_err(|e| WebhookError::not_https(e.to_string()))?;
        // Measured as stored and answered: normalisation may make the text several times longer.
        let stored = url.as_str().len();
        if stored > MAX_URL_CHARS {
            return Err(WebhookError::url_too_long(stored));
        }
        if url.scheme() != "https" || url.host().is_none() {
            return Err(WebhookError::not_https(format!("`{text}`")));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebhookError::not_https("credentials in the URL"));
        }
        Ok(Self { url })
    }

    /// A URL as stored: decoded by its syntax only, never judged by today's rules (a row
    /// written under other limits still lists, and is delivered to).
    pub fn from_stored(text: &str) -> Result<Self, url::ParseError> {
        url::Url::parse(text).map(|url| Self { url })
    }

    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The host as written (without brackets for IPv6 literals).
    pub fn host(&self) -> String {
        match self.url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(host) => host.to_string(),
            None => String::new(),
        }
    }

    /// The address the host names itself, when it is an IP literal.
    pub fn ip_literal(&self) -> Option<IpAddr> {
        match self.url.host()? {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(_) => None,
        }
    }

    pub fn port(&self) -> u16 {
        self.url.port_or_known_default().unwrap_or(443)
    }
}

/// Whether a receiver at this address is reachable only from inside the network (or the
/// machine): loopback, private, link-local, unspecified, and their IPv4-mapped or translated
/// IPv6 forms. Such receivers are refused unless private addresses are allowed.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return is_private_v4(v4);
            }
            let segments = v6.segments();
            let first = segments.first().copied().unwrap_or(0);
            // 64:ff9b:1::/48 is NAT64 for local use (RFC 8215): translated inside the network.
            if segments.get(..3) == Some(&[0x64, 0xff9b, 1]) {
                return true;
            }
            v6.is_loopback()
                || v6.is_unspecified()
                // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local (deprecated).
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || v6.is_multicast()
        }
    }
}

fn is_private_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        // 0.0.0.0/8 ("this network"), 100.64.0.0/10 (carrier-grade NAT).
        || a == 0
        || (a == 100 && (b & 0xc0) == 64)
        // 192.0.0.0/24 (protocol assignments), 198.18.0.0/15 (benchmarking), 240.0.0.0/4
        // (reserved, with the broadcast address).
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b & 0xfe) == 18)
        || a >= 240
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
/// NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`, RFC 3056) IPv6 address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let [.., a, b, c, d] = v6.octets();
    let tail = || Ipv4Addr::new(a, b, c, d);
    match s {
        [0, 0, 0, 0, 0, 0, hi, _] if hi != 0 => Some(tail()),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail()),
        [0x2002, hi, lo, ..] => {
            let [a, b] = hi.to_be_bytes();
            let [c, d] = lo.to_be_bytes();
            Some(Ipv4Addr::new(a, b, c, d))
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookStatus {
    Active,
    Disabled,
}

impl WebhookStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookStatus::Active => "ACTIVE",
            WebhookStatus::Disabled => "DISABLED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ACTIVE" => Some(WebhookStatus::Active),
            "DISABLED" => Some(WebhookStatus::Disabled),
            _ => None,
        }
    }
}

/// A receiver of events. `types` empty means every type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: Uuid,
    pub url: WebhookUrl,
    pub types: Vec<EventType>,
    pub description: Option<String>,
    pub status: WebhookStatus,
    pub created_date: DateTime<Utc>,
    /// `whsec_` + base64 of 32 random bytes; answered only when the webhook is created.
    pub secret: String,
    /// FAILED events since the last delivered one.
    pub consecutive_failures: u32,
}

impl Webhook {
    pub fn wants(&self, event_type: EventType) -> bool {
        self.status == WebhookStatus::Active
            && (self.types.is_empty() || self.types.contains(&event_type))
    }
}

/// What a new webhook is made of, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDraft {
    pub url: WebhookUrl,
    pub types: Vec<EventType>,
    pub description: Option<String>,
}

impl WebhookDraft {
    pub fn parse(
        url: &str,
        types: Vec<EventType>,
        description: Option<String>,
    ) -> Result<Self, WebhookError> {
        let url = WebhookUrl::parse(url)?;
        if description
            .as_ref()
            .is_some_and(|d| d.chars().count() > MAX_DESCRIPTION_CHARS)
        {
            return Err(WebhookError::DescriptionTooLong {
                field: "description".into(),
            });
        }
        let mut unique = Vec::with_capacity(types.len());
        for t in types {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        Ok(Self {
            url,
            types: unique,
            description,
        })
    }

    pub fn create(self, id: Uuid, secret: String, now: DateTime<Utc>) -> Webhook {
        Webhook {
            id,
            url: self.url,
            types: self.types,
            description: self.description,
            status: WebhookStatus::Active,
            created_date: now,
            secret,
            consecutive_failures: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "PENDING",
            DeliveryStatus::Delivered => "DELIVERED",
            DeliveryStatus::Failed => "FAILED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "PENDING" => Some(DeliveryStatus::Pending),
            "DELIVERED" => Some(DeliveryStatus::Delivered),
            "FAILED" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }
}

/// The waits after each failed attempt; after the last, the delivery has FAILED.
pub const RETRY_WAITS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// How long to wait before trying again after failed attempt number `attempt` (1 = the
/// first), with the waits multiplied by `scale_millis / 1000`; `None` when the delivery has
/// used all its attempts and FAILED.
pub fn retry_after(attempt: u32, scale_millis: u64) -> Option<Duration> {
    let index = usize::try_from(attempt.checked_sub(1)?).ok()?;
    let wait = RETRY_WAITS.get(index)?;
    let millis = u64::try_from(wait.as_millis())
        .unwrap_or(u64::MAX)
        .saturating_mul(scale_millis)
        / 1000;
    Some(Duration::from_millis(millis))
}

/// What a webhook becomes after one of its events FAILED: disabled at the fifth in a row.
pub fn after_failure(consecutive_failures: u32) -> (u32, WebhookStatus) {
    let failures = consecutive_failures.saturating_add(1);
    let status = if failures >= FAILURES_BEFORE_DISABLED {
        WebhookStatus::Disabled
    } else {
        WebhookStatus::Active
    };
    (failures, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_urls_with_a_host_are_webhooks() {
        assert!(WebhookUrl::parse("https://erp.example.com/hooks?x=1").is_ok());
        for bad in [
            "http://erp.example.com/",
            "ftp://erp.example.com/",
            "https://",
            "erp.example.com",
            "https://user:pw@erp.example.com/",
        ] {
            assert!(
                matches!(WebhookUrl::parse(bad), Err(WebhookError::NotHttps { .. })),
                "{bad}"
            );
        }
        let long = format!("https://e.com/{}", "a".repeat(MAX_URL_CHARS));
        assert_eq!(
            WebhookUrl::parse(&long),
            Err(WebhookError::url_too_long(MAX_URL_CHARS + 14))
        );
    }

    #[test]
    fn a_url_is_measured_as_stored() {
        // 426 characters as given, 2,423 once percent-encoded.
        let given = format!("https://e.com/{}", "é".repeat(403));
        assert!(given.chars().count() < MAX_URL_CHARS);
        assert!(matches!(
            WebhookUrl::parse(&given),
            Err(WebhookError::UrlTooLong { length, .. }) if length > MAX_URL_CHARS
        ));
        let fits = format!("https://e.com/{}", "é".repeat(300));
        assert!(WebhookUrl::parse(&fits).unwrap().as_str().len() <= MAX_URL_CHARS);
    }

    #[test]
    fn a_stored_url_is_read_back_whatever_today_s_limits() {
        let stored = format!("https://e.com/{}", "%C3%A9".repeat(403));
        let url = WebhookUrl::from_stored(&stored).unwrap();
        assert_eq!(url.as_str(), stored);
        assert!(WebhookUrl::from_stored("not a url").is_err());
    }

    #[test]
    fn loopback_private_link_local_and_unspecified_addresses_are_private() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "198.18.0.1",
            "198.19.255.254",
            "192.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:101::",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(is_private(ip), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "2606:2800:220:1::1",
            "::ffff:93.184.216.34",
            "198.20.0.1",
            "198.17.255.255",
            "192.0.1.1",
            "2002:5db8:d822::1",
            "64:ff9b::5db8:d822",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(!is_private(ip), "{ip}");
        }
    }

    #[test]
    fn retries_follow_the_schedule_scaled() {
        assert_eq!(retry_after(1, 1000), Some(Duration::from_secs(5)));
        assert_eq!(retry_after(2, 1000), Some(Duration::from_secs(300)));
        assert_eq!(retry_after(7, 1000), Some(Duration::from_secs(36_000)));
        assert_eq!(retry_after(8, 1000), None);
        assert_eq!(retry_after(0, 1000), None);
        assert_eq!(retry_after(1, 10), Some(Duration::from_millis(50)));
    }

    #[test]
    fn the_fifth_failed_event_in_a_row_disables_the_webhook() {
        assert_eq!(after_failure(0), (1, WebhookStatus::Active));
        assert_eq!(after_failure(3), (4, WebhookStatus::Active));
        assert_eq!(after_failure(4), (5, WebhookStatus::Disabled));
    }
}
