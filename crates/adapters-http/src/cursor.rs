//! Opaque, signed pagination cursors.
//!
//! A cursor is the page's end [`Position`] plus an HMAC-SHA256 over it and the operation it came
//! from, keyed by the deployment's cursor key (kept in the database, so every instance accepts
//! the others' cursors). A forged, altered or foreign cursor is `invalid_parameter`.

use std::fmt::Write as _;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::DateTime;
use hmac::{Hmac, Mac};
use roastery_domain::page::{Limit, PageRequest, Position};
use sha2::Sha256;
use uuid::Uuid;

use crate::error::ApiError;
use crate::wire::PaginationDto;

type HmacSha256 = Hmac<Sha256>;

/// Keyed once: an HMAC keyed with the deployment's key is copied per cursor, so signing or
/// checking one hashes the cursor, not the key again.
#[derive(Clone)]
pub struct CursorCodec {
    keyed: HmacSha256,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec")
    }
}

impl CursorCodec {
    #[allow(
        clippy::expect_used,
        reason = "HMAC accepts keys of any length, so keying cannot fail"
    )]
    pub fn new(key: Vec<u8>) -> Self {
        let keyed = HmacSha256::new_from_slice(&key).expect("HMAC accepts keys of any length");
        Self { keyed }
    }

    fn mac(&self, operation: &str, payload: &str) -> HmacSha256 {
        let mut mac = self.keyed.clone();
        mac.update(operation.as_bytes());
        mac.update(b"\n");
        mac.update(payload.as_bytes());
        mac
    }

    /// Written into buffers sized up front: every page of a listing ends with a cursor.
    pub fn encode(&self, operation: &str, position: Position) -> String {
        // The longest payload: "k.", an i64, ".", 32 hex digits.
        let mut payload = String::with_capacity(56);
        // Writing into a String cannot fail.
        let _ = match position {
            Position::Keyset { at, id } => {
                let written = write!(payload, "k.{}.", at.timestamp_micros());
                payload.push_str(id.simple().encode_lower(&mut Uuid::encode_buffer()));
                written
            }
            Position::Index(i) => write!(payload, "i.{i}"),
            Position::Sequence(s) => write!(payload, "s.{s}"),
        };
        let tag = self.mac(operation, &payload).finalize().into_bytes();
        let mut cursor = String::with_capacity(
            base64::encoded_len(payload.len(), false).unwrap_or(0)
                + 1
                + base64::encoded_len(tag.len(), false).unwrap_or(0),
        );
        URL_SAFE_NO_PAD.encode_string(&payload, &mut cursor);
        cursor.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut cursor);
        cursor
    }

    pub fn decode(&self, operation: &str, cursor: &str) -> Result<Position, ApiError> {
        let invalid = || {
            ApiError::invalid_parameter("pagination.after is not a cursor this operation returned")
        };
        let (payload, tag) = cursor.split_once('.').ok_or_else(invalid)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .ok()
            .and_then(|p| String::from_utf8(p).ok())
            .ok_or_else(invalid)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        self.mac(operation, &payload)
            .verify_slice(&tag)
            .map_err(|_| invalid())?;
        let parts: Vec<&str> = payload.split('.').collect();
        match parts.as_slice() {
            ["k", micros, id] => {
                let at = micros
                    .parse::<i64>()
                    .ok()
                    .and_then(DateTime::from_timestamp_micros)
                    .ok_or_else(invalid)?;
                let id = Uuid::parse_str(id).map_err(|_| invalid())?;
                Ok(Position::Keyset { at, id })
            }
            ["i", index] => index.parse().map(Position::Index).map_err(|_| invalid()),
            ["s", sequence] => match sequence.parse() {
                Ok(s) if s >= 0 => Ok(Position::Sequence(s)),
                _ => Err(invalid()),
            },
            _ => Err(invalid()),
        }
    }

    /// The page request of a read: limit checked, cursor verified.
    pub fn page_request(
        &self,
        operation: &str,
        pagination: &PaginationDto,
    ) -> Result<PageRequest, ApiError> {
        let limit = Limit::parse(pagination.limit)
            .map_err(|e| ApiError::invalid_parameter(e.to_string()))?;
        let after = pagination
            .after
            .as_deref()
            .map(|c| self.decode(operation, c))
            .transpose()?;
        Ok(PageRequest { limit, after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> CursorCodec {
        CursorCodec::new(b"test key".to_vec())
    }

    #[test]
    fn cursors_round_trip() {
        let pos = Position::Keyset {
            at: DateTime::from_timestamp_micros(1_800_000_000_123_456).unwrap(),
            id: Uuid::now_v7(),
        };
        let cursor = codec().encode("core.location.listLocations", pos);
        assert_eq!(
            codec()
                .decode("core.location.listLocations", &cursor)
                .unwrap(),
            pos
        );
        let idx = codec().encode("op", Position::Index(7));
        assert_eq!(codec().decode("op", &idx).unwrap(), Position::Index(7));
    }

    #[test]
    fn altered_foreign_or_forged_cursors_are_refused() {
        let cursor = codec().encode("a.b.c", Position::Index(3));
        assert!(codec().decode("a.b.d", &cursor).is_err());
        assert!(
            CursorCodec::new(b"other".to_vec())
                .decode("a.b.c", &cursor)
                .is_err()
        );
        let forged = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode("i.99"),
            cursor.split_once('.').unwrap().1
        );
        assert!(codec().decode("a.b.c", &forged).is_err());
        assert_eq!(
            codec().decode("a.b.c", "garbage").unwrap_err().code,
            "invalid_parameter"
        );
    }

    /// The codec signs as a freshly keyed HMAC over the operation and the payload, however often
    /// it is used: cursors of instances running an earlier version still verify, and theirs here.
    #[test]
    fn a_signature_is_the_keyed_hmac_of_operation_and_payload_every_time() {
        let codec = codec();
        for i in 0..3 {
            let cursor = codec.encode("a.b.c", Position::Index(i));
            let (payload, tag) = cursor.split_once('.').unwrap();
            let mut fresh = HmacSha256::new_from_slice(b"test key").unwrap();
            fresh.update(b"a.b.c\n");
            fresh.update(&URL_SAFE_NO_PAD.decode(payload).unwrap());
            let expected = fresh.finalize().into_bytes();
            assert_eq!(URL_SAFE_NO_PAD.decode(tag).unwrap(), expected.as_slice());
            assert_eq!(codec.decode("a.b.c", &cursor).unwrap(), Position::Index(i));
        }
    }

    /// The payload is the text every version wrote and reads: `k.{micros}.{simple id}`,
    /// `i.{index}`, `s.{sequence}`.
    #[test]
    fn a_payload_is_written_as_every_version_reads_it() {
        let id = Uuid::now_v7();
        for (position, text) in [
            (
                Position::Keyset {
                    at: DateTime::from_timestamp_micros(1_800_000_000_123_456).unwrap(),
                    id,
                },
                format!("k.1800000000123456.{}", id.simple()),
            ),
            (
                Position::Keyset {
                    at: DateTime::from_timestamp_micros(-62_000_000_000_000_001).unwrap(),
                    id,
                },
                format!("k.-62000000000000001.{}", id.simple()),
            ),
            (Position::Index(4_294_967_295), "i.4294967295".into()),
            (Position::Sequence(i64::MAX), format!("s.{}", i64::MAX)),
        ] {
            let cursor = codec().encode("op", position);
            let payload = URL_SAFE_NO_PAD
                .decode(cursor.split_once('.').unwrap().0)
                .unwrap();
            assert_eq!(String::from_utf8(payload).unwrap(), text);
            assert_eq!(codec().decode("op", &cursor).unwrap(), position);
        }
    }
}
