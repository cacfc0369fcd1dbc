//! `X-Request-Id`: the client's when it sent a valid one, else a new one; echoed on every response
//! and carried by the request's context ([`crate::request_context`]), so every log line of it
//! names it.

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id taken from a client.
pub const MAX_LEN: usize = 128;

/// A client's id is kept when it is 1 to 128 URL-safe characters (RFC 3986 unreserved:
/// letters, digits, `-`, `.`, `_`, `~`), so it is safe in logs, URLs and headers as it is.
pub fn is_valid(id: &[u8]) -> bool {
    !id.is_empty()
        && id.len() <= MAX_LEN
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The request's id: the client's when valid, else a new UUID (v7, so ids sort by time).
pub fn of(headers: &HeaderMap) -> HeaderValue {
    match headers.get(&HEADER) {
        Some(id) if is_valid(id.as_bytes()) => id.clone(),
        _ => {
            let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
            let text = new_id().hyphenated().encode_lower(&mut text);
            // A UUID's text is always a valid header value.
            HeaderValue::from_str(text).unwrap_or(HeaderValue::from_static("invalid-uuid"))
        }
    }
}

/// A UUID v7 whose random part comes from the thread's generator (seeded from the OS), not a
/// system call per request: an id needs to be unique, not secret.
fn new_id() -> uuid::Uuid {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let random: [u8; 10] = rand::random();
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_client_id_is_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(HEADER, HeaderValue::from_static("abc-123_X.y~z"));
        assert_eq!(of(&headers), "abc-123_X.y~z");
        let longest = "a".repeat(MAX_LEN);
        headers.insert(HEADER, HeaderValue::from_str(&longest).unwrap());
        assert_eq!(of(&headers), longest.as_str());
    }

    #[test]
    fn an_invalid_or_missing_id_is_replaced() {
        let mut headers = HeaderMap::new();
        let fresh = of(&headers);
        assert_eq!(fresh.len(), 36);
        assert!(is_valid(fresh.as_bytes()));
        for bad in [
            "a".repeat(MAX_LEN + 1),
            "has space".into(),
            "semi;colon".into(),
            "slash/x".into(),
            String::new(),
        ] {
            headers.insert(HEADER, HeaderValue::from_str(&bad).unwrap());
            let id = of(&headers);
            assert_ne!(id, bad.as_str());
            assert!(is_valid(id.as_bytes()), "{bad:?} gave {id:?}");
        }
        assert_ne!(of(&HeaderMap::new()), of(&HeaderMap::new()));
        let id = uuid::Uuid::parse_str(fresh.to_str().unwrap()).unwrap();
        assert_eq!(id.get_version_num(), 7);
    }
}
