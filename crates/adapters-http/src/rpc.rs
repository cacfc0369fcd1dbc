//! `POST /rpc/v1/{operation}`: the checks every operation shares, in the contract's order of
//! precedence (405 → 401 → 403 → 429 → 400 → 422), then the operation itself.

use actix_web::http::{ConnectionType, Method, header};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use roastery_ports::Store;

use crate::auth::{authenticate, require_scope};
use crate::body::{MAX_BODY, read_body};
use crate::call::Ctx;
use crate::error::ApiError;
use crate::ops::{Entry, Operation};
use crate::state::AppState;

/// Where operations live; the path's rest after it and a slash names the operation.
pub const PREFIX: &str = "/rpc/v1";

pub async fn rpc<S: Store>(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    // The scope matched `/rpc/v1` itself too, which names no operation at all.
    let Some(operation) = req.match_info().unprocessed().strip_prefix('/') else {
        return not_found(req, payload).await;
    };
    let found = if req.method() == Method::POST {
        Operation::find(operation).ok_or_else(|| {
            ApiError::method_not_allowed(format!("`{operation}` is not an operation of this API"))
        })
    } else {
        Err(ApiError::method_not_allowed(
            "operations are called with POST",
        ))
    };
    let grant = match authenticate(&state, &req).await {
        Ok(grant) => grant,
        // A stranger's body is never read (api-decisions §4): the answer closes the connection,
        // so nothing it sends is buffered or waited for.
        Err(refused) => return Ok(closing(found.err().unwrap_or(refused))),
    };
    // Known caller: read the body before judging, so an error answer keeps the connection.
    let body = read_body(payload, MAX_BODY, state.body_timeout).await;
    let operation = found?;
    require_scope(&grant, operation.scope())?;
    let decision = match state.rate_limits.as_ref() {
        Some(limits) => Some(limits.check_operation(&grant.client_id).await),
        None => None,
    };
    let outcome = match decision {
        Some(d) if !d.allowed => Err(ApiError::too_many_requests(d.retry_after.unwrap_or(1))),
        _ => match require_json(&req).and(body) {
            Ok(body) => {
                let ctx = Ctx {
                    state: state.into_inner(),
                    operation,
                    shape: operation.shape(),
                    client_id: std::sync::Arc::from(grant.client_id.as_str()),
                };
                operation.handle(ctx, &body).await
            }
            Err(err) => Err(err),
        },
    };
    let Some(decision) = decision else {
        return outcome;
    };
    // Past the limiter, every answer carries its headers, errors included.
    let mut response = outcome.unwrap_or_else(|err| err.error_response());
    decision.apply(response.headers_mut());
    Ok(response)
}

/// `err` as an answer that closes its connection, the request's body left unread.
fn closing(err: ApiError) -> HttpResponse {
    let mut response = err.error_response();
    response
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    response
}

/// `Content-Type: application/json`, optionally with parameters such as `charset`.
fn require_json(req: &HttpRequest) -> Result<(), ApiError> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::invalid_request(
            "Content-Type must be application/json",
        ))
    }
}

/// Any path that names no route: 404, the request body drained first.
pub(crate) async fn not_found(
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    // Drained only so the connection stays usable; a short wait is enough.
    let _ = read_body(payload, MAX_BODY, std::time::Duration::from_secs(5)).await;
    Err(ApiError::not_found_path(req.path()))
}
