//! Opaque, signed pagination cursors.
//!
//! A cursor is the page's end [`Position`] plus an HMAC-SHA256 over it and the operation it came
//! from, keyed by the deployment's cursor key (kept in the database, so every instance accepts
//! the others' cursors). A forged, altered or foreign cursor is `invalid_parameter`.

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

#[derive(Clone)]
pub struct CursorCodec {
    key: Vec<u8>,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec")
    }
}

impl CursorCodec {
    pub fn new(key: Vec<u8>) -> Self {
        Self { key }
    }

    #[allow(
        clippy::expect_used,
        reason = "HMAC accepts keys of any length, so keying cannot fail"
    )]
    fn mac(&self, operation: &str, payload: &str) -> HmacSha256 {
        let mut mac =
            HmacSha256::new_from_slice(&self.key).expect("HMAC accepts keys of any length");
        mac.update(operation.as_bytes());
        mac.update(b"\n");
        mac.update(payload.as_bytes());
        mac
    }

    pub fn encode(&self, operation: &str, position: Position) -> String {
        let payload = match position {
            Position::Keyset { at, id } => format!("k.{}.{}", at.timestamp_micros(), id.simple()),
            Position::Index(i) => format!("i.{i}"),
            Position::Sequence(s) => format!("s.{s}"),
        };
        let tag = self.mac(operation, &payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
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
}
