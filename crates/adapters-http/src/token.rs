//! `POST /oauth2/token`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4).
//!
//! Credentials come in the form body or as HTTP Basic (each part percent-decoded after base64,
//! per RFC 6749 §2.3.1), never both. Errors use RFC 6749 §5.2 bodies so standard OAuth2 clients
//! understand them.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::percent_decode_str;
use roastery_app::account::TokenError;
use roastery_ports::Store;
use serde::Serialize;
use utoipa::ToSchema;

use crate::body::read_body;
use crate::state::AppState;

/// Longest `client_id` looked at (api-decisions §4): longer ones are refused before any lookup,
/// rate-limit bucket or cache key is made of them.
pub const MAX_CLIENT_ID: usize = 200;

/// Largest token request body: a client credentials form is a few hundred bytes, and this body
/// is read before the caller is known, so it is held far below the operations' 1 MiB.
pub const MAX_TOKEN_BODY: usize = 16 * 1024;

#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    /// Granted scopes joined by `%20`.
    pub scope: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthError {
    pub error: &'static str,
    pub error_description: String,
}

pub fn oauth_error(status: StatusCode, error: &'static str, description: &str) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    response.insert_header(CacheControl(vec![CacheDirective::NoStore]));
    if status == StatusCode::UNAUTHORIZED {
        response.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"roastery\""));
    }
    response.json(OAuthError {
        error,
        error_description: description.to_owned(),
    })
}

/// A refused token request, answered with [`oauth_error`].
struct Refusal {
    status: StatusCode,
    error: &'static str,
    description: String,
}

impl Refusal {
    fn response(&self) -> HttpResponse {
        oauth_error(self.status, self.error, &self.description)
    }
}

fn bad_request(description: &str) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        error: "invalid_request",
        description: description.to_owned(),
    }
}

fn invalid_client() -> Refusal {
    Refusal {
        status: StatusCode::UNAUTHORIZED,
        error: "invalid_client",
        description: "client authentication failed".to_owned(),
    }
}

/// `(client_id, client_secret)` from an `Authorization: Basic` header.
fn basic_credentials(req: &HttpRequest) -> Result<Option<(String, String)>, Refusal> {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| invalid_client())?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(invalid_client());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(invalid_client());
    }
    let decoded = STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|d| String::from_utf8(d).ok())
        .ok_or_else(invalid_client)?;
    let (id, secret) = decoded.split_once(':').ok_or_else(invalid_client)?;
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| invalid_client())
    };
    let (id, secret) = (decode(id)?, decode(secret)?);
    for (name, value) in [("client_id", &id), ("client_secret", &secret)] {
        refuse_controls(name, value)?;
    }
    Ok(Some((id, secret)))
}

/// The text rule of every request ([`crate::text`]), for token parameters: a malformed request.
fn refuse_controls(name: &str, value: &str) -> Result<(), Refusal> {
    match crate::text::refused_in(name).or_else(|| crate::text::refused_in(value)) {
        Some(c) => Err(bad_request(&format!(
            "parameter `{}` holds the control character {}",
            name.escape_default(),
            crate::text::describe(c)
        ))),
        None => Ok(()),
    }
}

pub async fn token<S: Store>(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState<S>>,
) -> HttpResponse {
    let body = read_body(payload, MAX_TOKEN_BODY, state.body_timeout).await;
    if req.method() != actix_web::http::Method::POST {
        return oauth_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request",
            "the token endpoint accepts POST only",
        );
    }
    let form_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
        .unwrap_or(false);
    if !form_type {
        return bad_request("Content-Type must be application/x-www-form-urlencoded").response();
    }
    let Ok(body) = body else {
        return bad_request(&format!(
            "the request body is larger than {MAX_TOKEN_BODY} bytes"
        ))
        .response();
    };
    let Ok(form) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body) else {
        return bad_request("the body is not a valid form").response();
    };
    let field = |name: &str| -> Result<Option<String>, Refusal> {
        let mut values = form
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone());
        let first = values.next();
        if values.next().is_some() {
            return Err(bad_request(&format!("parameter `{name}` is repeated")));
        }
        Ok(first)
    };
    let outcome = (|| {
        for (name, value) in &form {
            refuse_controls(name, value)?;
        }
        match field("grant_type")?.as_deref() {
            Some("client_credentials") => {}
            Some(other) => {
                return Err(Refusal {
                    status: StatusCode::BAD_REQUEST,
                    error: "unsupported_grant_type",
                    description: format!(
                        "grant type `{other}` is not supported; use client_credentials"
                    ),
                });
            }
            None => return Err(bad_request("grant_type is required")),
        }
        let in_body = match (field("client_id")?, field("client_secret")?) {
            (Some(id), Some(secret)) => Some((id, secret)),
            (None, None) => None,
            _ => return Err(bad_request("client_id and client_secret go together")),
        };
        let credentials = match (basic_credentials(&req)?, in_body) {
            (Some(_), Some(_)) => {
                return Err(bad_request(
                    "send client credentials either in the body or as HTTP Basic, not both",
                ));
            }
            (Some(c), None) | (None, Some(c)) => c,
            (None, None) => return Err(invalid_client()),
        };
        if credentials.0.chars().count() > MAX_CLIENT_ID {
            return Err(bad_request(&format!(
                "client_id is longer than {MAX_CLIENT_ID} characters"
            )));
        }
        Ok((credentials, field("scope")?))
    })();
    let ((client_id, client_secret), scope) = match outcome {
        Ok(parts) => parts,
        Err(refusal) => return refusal.response(),
    };
    let decision = match state.rate_limits.as_ref() {
        Some(limits) => Some(limits.check_token(&client_id).await),
        None => None,
    };
    let mut response = match decision {
        Some(d) if !d.allowed => oauth_error(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            "rate limit exceeded; retry after the time in the Retry-After header",
        ),
        _ => issue(&state, client_id, client_secret, scope).await,
    };
    if let Some(decision) = decision {
        decision.apply(response.headers_mut());
    }
    response
}

async fn issue<S: Store>(
    state: &AppState<S>,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
) -> HttpResponse {
    let issued = async {
        let app = state.app.clone();
        let id = client_id.clone();
        let client = match web::block(move || app.token_client(&id)).await {
            Ok(Ok(client)) => client,
            Ok(Err(err)) => return Ok(Err(err)),
            Err(err) => return Err(crate::error::ApiError::internal(err)),
        };
        // The slow hash runs outside any transaction, bounded and remembered (see client_secret).
        let matches = state
            .secret_checks
            .matches(&client_id, &client_secret, client.secret_hash())
            .await?;
        let app = state.app.clone();
        web::block(move || app.issue_token_to(client, matches, scope.as_deref()))
            .await
            .map_err(crate::error::ApiError::internal)
    }
    .await;
    match issued {
        Ok(Ok(issued)) => {
            crate::request_context::record_client(&issued.grant.client_id);
            let expires_in = roastery_domain::account::TOKEN_LIFETIME.num_seconds();
            HttpResponse::Ok()
                .insert_header(CacheControl(vec![CacheDirective::NoStore]))
                .insert_header((header::PRAGMA, "no-cache"))
                .json(TokenResponse {
                    access_token: issued.access_token,
                    token_type: "Bearer",
                    expires_in,
                    scope: issued.grant.scopes.join("%20"),
                })
        }
        Ok(Err(TokenError::InvalidClient)) => invalid_client().response(),
        Ok(Err(TokenError::InvalidScope(message))) => {
            oauth_error(StatusCode::BAD_REQUEST, "invalid_scope", &message)
        }
        Ok(Err(TokenError::Internal(err))) => server_error(&crate::error::ApiError::from(err)),
        Err(err) => server_error(&err),
    }
}

/// A failure of the service itself, with its `Retry-After` when it is a passing one (503).
fn server_error(err: &crate::error::ApiError) -> HttpResponse {
    let mut response = oauth_error(err.status, "server_error", &err.message);
    if let Some(seconds) = err.retry_after
        && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
