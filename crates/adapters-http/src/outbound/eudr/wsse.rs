//! The WS-Security header's values: timestamps, nonce and the UsernameToken password digest
//! (OASIS UsernameToken profile 1.0, as the IS's WS-Policy asks: `HashPassword`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use sha1::{Digest as _, Sha1};

/// How long a request's timestamp is valid. The EU's conformance test allows at most one
/// minute between Created and Expires.
pub const VALIDITY: chrono::Duration = chrono::Duration::minutes(1);

/// The values of one request's `wsse:Security` header.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// `wsu:Created` of both the Timestamp and the UsernameToken, exactly as sent.
    pub created: String,
    pub expires: String,
    /// `wsse:Nonce`, base64.
    pub nonce: String,
    /// `wsse:Password` of type PasswordDigest.
    pub digest: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("created", &self.created)
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// A token for a request sent at `now`, with a fresh random 16-byte nonce.
    pub fn new(now: DateTime<Utc>, key: &[u8]) -> Self {
        let nonce: [u8; 16] = rand::random();
        Self::with_nonce(now, &nonce, key)
    }

    /// A token with a given nonce (tests).
    pub fn with_nonce(now: DateTime<Utc>, nonce: &[u8], key: &[u8]) -> Self {
        let created = timestamp(now);
        let digest = password_digest(nonce, &created, key);
        Self {
            expires: timestamp(now + VALIDITY),
            created,
            nonce: STANDARD.encode(nonce),
            digest,
        }
    }
}

/// UTC with milliseconds, as the EU's samples write it: `2026-01-15T10:00:00.000Z`.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Base64( SHA-1( nonce ‖ created ‖ key ) ).
pub fn password_digest(nonce: &[u8], created: &str, key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(nonce);
    sha.update(created.as_bytes());
    sha.update(key);
    STANDARD.encode(sha.finalize())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    /// Computed apart from this code, with Python's standard library:
    /// `base64.b64encode(hashlib.sha1(bytes(range(16)) + b"2026-01-15T10:00:00.000Z" +
    /// b"Rq3+example/authKey==").digest())`.
    const EXPECTED_DIGEST: &str = "J154m334e7jvG/3SAHiN2q8jvuk=";

    #[test]
    fn the_digest_is_sha1_of_nonce_created_and_key_in_base64() {
        let nonce: Vec<u8> = (0u8..16).collect();
        assert_eq!(
            password_digest(&nonce, "2026-01-15T10:00:00.000Z", b"Rq3+example/authKey=="),
            EXPECTED_DIGEST
        );
    }

    #[test]
    fn a_token_carries_created_expires_one_minute_later_and_its_nonce() {
        let now = Utc.with_ymd_and_hms(2026, 1, 15, 10, 0, 0).unwrap();
        let nonce: Vec<u8> = (0u8..16).collect();
        let token = Token::with_nonce(now, &nonce, b"Rq3+example/authKey==");
        assert_eq!(token.created, "2026-01-15T10:00:00.000Z");
        assert_eq!(token.expires, "2026-01-15T10:01:00.000Z");
        assert_eq!(token.nonce, "AAECAwQFBgcICQoLDA0ODw==");
        assert_eq!(token.digest, EXPECTED_DIGEST);
    }

    #[test]
    fn every_token_has_a_fresh_sixteen_byte_nonce() {
        let now = Utc::now();
        let a = Token::new(now, b"k");
        let b = Token::new(now, b"k");
        assert_ne!(a.nonce, b.nonce);
        assert_ne!(a.digest, b.digest);
        assert_eq!(STANDARD.decode(&a.nonce).unwrap().len(), 16);
    }

    #[test]
    fn debug_output_leaves_out_the_digest_and_nonce() {
        let token = Token::new(Utc::now(), b"k");
        let shown = format!("{token:?}");
        assert!(!shown.contains(&token.digest) && !shown.contains(&token.nonce));
    }
}
