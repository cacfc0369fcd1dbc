//! Bearer authentication and scope checks for operations.
//!
//! Verification answers (valid or refused) are cached for `AUTH_CACHE_TTL` under the token's
//! SHA-256, so a busy client costs no database round trip per call; expiry is still checked on
//! every call against the cached grant.

use actix_web::HttpRequest;
use actix_web::http::header;
use roastery_domain::account::AccessGrant;
use roastery_domain::scope::Scope;
use roastery_ports::Store;
use roastery_ports::secret::hash_token;

use crate::error::ApiError;
use crate::state::AppState;

/// The bearer token of a request, if it carries one.
pub fn bearer_token(req: &HttpRequest) -> Result<&str, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or_else(|| ApiError::unauthenticated("an Authorization: Bearer token is required"))?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::unauthenticated("the Authorization header is malformed"))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or_else(|| ApiError::unauthenticated("the Authorization header is malformed"))?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(ApiError::unauthenticated(
            "the Authorization header must be `Bearer <access token>`",
        ));
    }
    Ok(token)
}

/// Resolves the request's bearer token to its grant.
pub async fn authenticate<S: Store>(
    state: &AppState<S>,
    req: &HttpRequest,
) -> Result<AccessGrant, ApiError> {
    let token = bearer_token(req)?;
    let key = hash_token(token);
    let answer = match state.auth_cache.get(&key) {
        Some(answer) => answer,
        None => {
            let token = token.to_owned();
            let answer = state.run(move |app| app.authenticate(&token)).await?;
            state.auth_cache.insert(key, answer.clone());
            answer
        }
    };
    let grant = answer.map_err(|refusal| ApiError::unauthenticated(refusal.message()))?;
    if grant.is_expired_at(state.app.now()) {
        return Err(ApiError::unauthenticated("the access token has expired"));
    }
    Ok(grant)
}

/// Refuses a grant that lacks the operation's scope.
pub fn require_scope(grant: &AccessGrant, scope: Scope) -> Result<(), ApiError> {
    if grant.scopes.contains(scope) {
        Ok(())
    } else {
        Err(ApiError::forbidden(format!(
            "this token lacks the `{scope}` scope; request it when fetching the token"
        )))
    }
}
