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
    crate::request_context::record_client(&grant.client_id);
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use actix_web::test::TestRequest;
    use roastery_app::testing::memory_roastery;

    use super::*;
    use crate::cursor::CursorCodec;

    #[actix_web::test]
    async fn a_cached_answer_stands_until_it_expires_then_revocation_holds() {
        let (app, _clock) = memory_roastery();
        let account = app.create_account("ERP", "core.location").unwrap();
        let token = app
            .issue_token(&account.account.client_id, &account.client_secret, None)
            .unwrap()
            .access_token;
        let state = AppState::new(app.clone(), CursorCodec::new(vec![7; 32]))
            .with_auth_cache_ttl(Duration::from_millis(200));
        let req = TestRequest::default()
            .insert_header(("Authorization", format!("Bearer {token}")))
            .to_http_request();
        assert!(authenticate(&state, &req).await.is_ok());
        app.revoke_account(&account.account.client_id).unwrap();
        // Still accepted: the answer came from the cache, not from the store.
        assert!(authenticate(&state, &req).await.is_ok());
        tokio::time::sleep(Duration::from_millis(400)).await;
        let refused = authenticate(&state, &req).await.unwrap_err();
        assert_eq!(refused.code, "invalid_authentication");
    }

    #[test]
    fn only_bearer_tokens_are_read() {
        let basic = TestRequest::default()
            .insert_header(("Authorization", "Basic abc"))
            .to_http_request();
        assert!(bearer_token(&basic).is_err());
        let bearer = TestRequest::default()
            .insert_header(("Authorization", "bearer  tok "))
            .to_http_request();
        assert_eq!(bearer_token(&bearer).unwrap(), "tok");
    }
}
