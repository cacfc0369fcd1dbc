//! Answers carrying large stored JSON (a due diligence's plots) at about its size once.
//!
//! Such JSON is kept as [`SharedJson`]: text whose buffer the answer's body shares rather than
//! copies. A body is written by serde as any other, into a [`Body`] that keeps every write
//! lying within a shared buffer as a slice of it, and the rest in pieces of its own; it goes out
//! as a stream of pieces of at most [`PIECE`] bytes with its length known (`Content-Length`, as
//! ever), so the server never holds a second copy, neither whole nor in its write buffer. The
//! bytes are those serde writes into one buffer.

use std::convert::Infallible;
use std::fmt;
use std::io;
use std::ops::Range;

use actix_web::HttpResponse;
use actix_web::body::SizedStream;
use actix_web::http::header::ContentType;
use actix_web::web::Bytes;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::ApiError;

/// The most bytes of one piece of a body: actix's write buffer is 32 KiB.
pub const PIECE: usize = 32 * 1024;
/// Shorter writes are copied even from a shared buffer.
const SHARE_MIN: usize = 1024;

/// JSON text shared with the bodies that carry it. Always one valid JSON value.
#[derive(Clone)]
pub struct SharedJson(Bytes);

impl SharedJson {
    /// `json`, valid JSON text (checked when it is written).
    pub fn new(json: String) -> Self {
        Self(Bytes::from(json))
    }

    /// The text of `range`, one JSON value within this one, sharing its buffer.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        (range.start <= range.end && range.end <= self.0.len()).then(|| Self(self.0.slice(range)))
    }

    fn text(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.0)
    }
}

impl fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedJson({} bytes)", self.0.len())
    }
}

impl Serialize for SharedJson {
    /// As a [`RawValue`] borrowed from the shared buffer: written as it is, where [`Body`] finds
    /// it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let text = self.text().map_err(S::Error::custom)?;
        let raw: &RawValue = serde_json::from_str(text).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// The shared buffers of one answer, which its [`Body`] slices rather than copies.
#[derive(Default)]
pub struct Shared(Vec<Bytes>);

impl Shared {
    /// `json` (valid JSON text) as a value of the answer, shared with its body.
    pub fn json(&mut self, json: String) -> SharedJson {
        let shared = SharedJson::new(json);
        self.0.push(shared.0.clone());
        shared
    }
}

/// An answer's body as serde writes it: pieces of its own, and slices of shared buffers.
struct Body {
    shared: Vec<Bytes>,
    pieces: Vec<Bytes>,
    current: Vec<u8>,
    len: usize,
}

impl Body {
    fn new(shared: Shared) -> Self {
        Self {
            shared: shared.0,
            pieces: Vec::new(),
            current: Vec::new(),
            len: 0,
        }
    }

    fn end_piece(&mut self) {
        if !self.current.is_empty() {
            self.pieces
                .push(Bytes::from(std::mem::take(&mut self.current)));
        }
    }

    /// The shared buffer `buf` lies in, as a slice of it.
    fn shared_slice(&self, buf: &[u8]) -> Option<Bytes> {
        let at = buf.as_ptr().addr();
        self.shared.iter().find_map(|shared| {
            let start = at.checked_sub(shared.as_ptr().addr())?;
            let end = start.checked_add(buf.len())?;
            (end <= shared.len()).then(|| shared.slice(start..end))
        })
    }
}

impl io::Write for Body {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len = self.len.saturating_add(buf.len());
        if buf.len() >= SHARE_MIN
            && let Some(mut slice) = self.shared_slice(buf)
        {
            self.end_piece();
            while slice.len() > PIECE {
                let rest = slice.split_off(PIECE);
                self.pieces.push(slice);
                slice = rest;
            }
            self.pieces.push(slice);
            return Ok(buf.len());
        }
        if self.current.is_empty() {
            self.current.reserve(PIECE.max(buf.len()));
        }
        self.current.extend_from_slice(buf);
        if self.current.len() >= PIECE {
            self.end_piece();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A 200 answer of `value` as JSON, sharing the buffers of `shared` rather than copying them.
pub fn json_response<T: Serialize>(value: &T, shared: Shared) -> Result<HttpResponse, ApiError> {
    let (len, pieces) = pieces(value, shared)?;
    let len = u64::try_from(len).map_err(ApiError::internal)?;
    let stream = futures_util::stream::iter(pieces.into_iter().map(Ok::<Bytes, Infallible>));
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(SizedStream::new(len, stream)))
}

/// `value` as JSON in pieces, and their length.
fn pieces<T: Serialize>(value: &T, shared: Shared) -> Result<(usize, Vec<Bytes>), ApiError> {
    let mut body = Body::new(shared);
    serde_json::to_writer(&mut body, value).map_err(ApiError::internal)?;
    body.end_piece();
    Ok((body.len, body.pieces))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Answer {
        name: String,
        plots: SharedJson,
        again: Vec<SharedJson>,
        small: SharedJson,
    }

    #[test]
    fn a_body_is_what_serde_writes_sharing_the_large_values() {
        let big = format!(
            r#"{{"type":"FeatureCollection","features":[{}]}}"#,
            vec![r#"{"type":"Point","coordinates":[1.5,-2]}"#; 5_000].join(",")
        );
        let mut shared = Shared::default();
        let plots = shared.json(big.clone());
        let point = r#"{"type":"Point","coordinates":[1.5,-2]}"#;
        let start = big.find("[{").unwrap();
        let first = plots.slice(start + 1..start + 1 + point.len()).unwrap();
        let features = plots.slice(start..big.len() - 1).unwrap();
        let answer = Answer {
            name: "quoted \" ] } and long ".repeat(100),
            plots: plots.clone(),
            again: vec![first, features],
            small: shared.json("[1, 2]".to_owned()),
        };
        let (len, pieces) = pieces(&answer, shared).unwrap();
        let whole: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        assert_eq!(whole, serde_json::to_vec(&answer).unwrap());
        assert_eq!(len, whole.len());
        assert!(pieces.iter().all(|p| !p.is_empty() && p.len() <= PIECE));
        // The plots went out as slices of their own buffer, never copied.
        let within = |p: &Bytes| {
            let at = p.as_ptr().addr();
            at >= plots.0.as_ptr().addr() && at + p.len() <= plots.0.as_ptr().addr() + big.len()
        };
        let shared_bytes: usize = pieces.iter().filter(|p| within(p)).map(Bytes::len).sum();
        assert_eq!(shared_bytes, big.len() + (big.len() - 1 - start));
        let (start, end) = (10, 5);
        assert!(plots.slice(start..end).is_none());
        assert!(plots.slice(0..big.len() + 1).is_none());
    }

    #[test]
    fn invalid_shared_text_is_an_error_not_a_body() {
        let mut shared = Shared::default();
        let broken = shared.json("{\"a\":".to_owned());
        assert!(pieces(&broken, shared).is_err());
    }
}
