//! Reading request bodies: bounded in size and time, and always read to the end, so that an error
//! answer does not force the client to reconnect (actix closes a connection whose body was left
//! unread).

use std::time::Duration;

use actix_web::web::{self, Bytes, BytesMut};
use futures_util::StreamExt;

use crate::error::ApiError;

/// Largest request body accepted.
pub const MAX_BODY: usize = 1024 * 1024;
/// How long a client may take to send its body, unless configured otherwise.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Reads the whole body, up to `limit` bytes. A larger body is drained (up to a bound) and refused.
pub async fn read_body(
    mut payload: web::Payload,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, ApiError> {
    let read = async {
        let mut body = BytesMut::new();
        let mut too_large = false;
        let mut seen = 0usize;
        while let Some(chunk) = payload.next().await {
            let chunk = chunk
                .map_err(|e| ApiError::invalid_request(format!("reading the body failed: {e}")))?;
            seen += chunk.len();
            if seen > limit {
                too_large = true;
                // Stop draining a body far beyond the limit: the connection will be closed.
                if seen > limit * 4 {
                    break;
                }
                continue;
            }
            body.extend_from_slice(&chunk);
        }
        if too_large {
            return Err(ApiError::invalid_request(format!(
                "the request body is larger than {limit} bytes"
            )));
        }
        Ok(body.freeze())
    };
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| ApiError::invalid_request("the request body was not received in time"))?
}
