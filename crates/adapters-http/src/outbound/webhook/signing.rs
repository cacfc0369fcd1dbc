//! Standard Webhooks: the body of a delivery, its signature and its headers, together.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use roastery_domain::event::Event;
use roastery_ports::StoreError;
use sha2::Sha256;

use crate::wire::EventDto;

/// The body of a delivery: the event as `listEvents` answers it.
pub fn event_body(event: &Event) -> Vec<u8> {
    serde_json::to_vec(&EventDto::from(event.clone())).unwrap_or_default()
}

/// The Standard Webhooks signature header value: `v1,` and the base64 HMAC-SHA256 of
/// `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`.
pub fn signature(
    secret: &str,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, StoreError> {
    let key = secret
        .strip_prefix("whsec_")
        .and_then(|k| STANDARD.decode(k).ok())
        .ok_or_else(|| StoreError::Internal("a stored webhook secret is malformed".into()))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key)
        .map_err(|_| StoreError::Internal("HMAC refused the key".into()))?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The headers of one attempt: `webhook-id`, `webhook-timestamp` (seconds since the epoch) and
/// `webhook-signature`.
pub fn headers(
    secret: &str,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<Vec<(&'static str, String)>, StoreError> {
    Ok(vec![
        ("webhook-id", id.to_owned()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signature(secret, id, timestamp, body)?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification.
        let sig = signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn the_headers_carry_the_id_the_time_and_the_signature_of_the_body() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let sent = headers(secret, "msg_1", 1_614_265_330, b"{}").unwrap();
        assert_eq!(sent[0], ("webhook-id", "msg_1".to_owned()));
        assert_eq!(sent[1], ("webhook-timestamp", "1614265330".to_owned()));
        assert_eq!(
            sent[2],
            (
                "webhook-signature",
                signature(secret, "msg_1", 1_614_265_330, b"{}").unwrap()
            )
        );
        assert!(headers(secret.trim_start_matches("whsec_"), "msg_1", 0, b"{}").is_err());
    }
}
