//! Service accounts and access tokens: creating and revoking accounts (command line), issuing
//! tokens (client credentials grant) and resolving a bearer token to what it grants.

use chrono::{DateTime, Utc};
use roastery_domain::account::{AccessGrant, Account, AccountError};
use roastery_domain::scope::ScopeSet;

use crate::{Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;
use roastery_ports::repo::{Credentials, StoredGrant};
use roastery_ports::secret::{decoy_hash, hash_secret, hash_token, verify_secret};

/// A freshly created account with its secret, which is shown once and never stored.
#[derive(Debug, Clone)]
pub struct NewAccount {
    pub account: Account,
    pub client_secret: String,
}

/// An issued access token and what it grants.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    pub access_token: String,
    pub grant: AccessGrant,
}

/// A token request's client as stored, read before its secret is checked.
#[derive(Debug, Clone)]
pub struct TokenClient {
    credentials: Option<Credentials>,
}

impl TokenClient {
    /// The argon2 hash the request's secret must match: the account's, or for an unknown client
    /// a decoy, so that the answer takes as long as for a known one.
    pub fn secret_hash(&self) -> &str {
        match &self.credentials {
            Some(c) => &c.secret_hash,
            None => decoy_hash(),
        }
    }
}

/// Why a token request was refused (RFC 6749 §5.2 error codes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("client authentication failed")]
    InvalidClient,
    #[error("{0}")]
    InvalidScope(String),
    #[error(transparent)]
    Internal(#[from] AppError),
}

/// Why a bearer token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BearerRefusal {
    Unknown,
    Expired,
    Revoked,
}

impl BearerRefusal {
    pub fn message(self) -> &'static str {
        match self {
            Self::Unknown => "the access token is not valid",
            Self::Expired => "the access token has expired",
            Self::Revoked => "the service account of this token was revoked",
        }
    }
}

impl<S: Store> Roastery<S> {
    pub fn create_account(&self, name: &str, scopes: &str) -> Result<NewAccount, AppError> {
        let scopes = ScopeSet::parse(scopes).map_err(AccountError::from)?;
        let client_id = format!("rc-{}", self.ids.random_token(12));
        let account = Account::open(client_id, name, scopes, self.clock.now())?;
        let client_secret = self.ids.random_token(32);
        let credentials = Credentials {
            account: account.clone(),
            secret_hash: hash_secret(&client_secret)?,
        };
        self.store
            .write(|tx| Ok(tx.insert_account(&credentials)?))?;
        tracing::info!(client_id = %account.client_id, name = %account.name, "service account created");
        Ok(NewAccount {
            account,
            client_secret,
        })
    }

    pub fn list_accounts(&self) -> Result<Vec<Account>, AppError> {
        self.store.read(|tx| Ok(tx.accounts()?))
    }

    /// Revokes an account; its tokens stop working (within the verification cache's lifetime).
    pub fn revoke_account(&self, client_id: &str) -> Result<Account, AppError> {
        let now = self.clock.now();
        let account = self.store.write(|tx| {
            let mut account = tx
                .account(client_id)?
                .ok_or_else(|| AccountError::NotFound(client_id.to_owned()))?
                .account;
            account.revoke(now)?;
            tx.set_account_revoked(client_id, now)?;
            Ok(account)
        })?;
        tracing::info!(client_id, "service account revoked");
        Ok(account)
    }

    /// The client credentials grant: checks the secret, grants the requested scopes (all of the
    /// account's when none are named) and stores a new token's hash.
    pub fn issue_token(
        &self,
        client_id: &str,
        client_secret: &str,
        scope: Option<&str>,
    ) -> Result<IssuedToken, TokenError> {
        let client = self.token_client(client_id)?;
        let secret_matches = verify_secret(client_secret, client.secret_hash());
        self.issue_token_to(client, secret_matches, scope)
    }

    /// The first step of [`Roastery::issue_token`] for callers that check the secret themselves
    /// (to bound or skip the slow hash): the client's stored credentials, read in one transaction.
    pub fn token_client(&self, client_id: &str) -> Result<TokenClient, TokenError> {
        let credentials = self.store.read(|tx| Ok(tx.account(client_id)?))?;
        Ok(TokenClient { credentials })
    }

    /// The last step of [`Roastery::issue_token`]: refuses unless `secret_matches` (the outcome
    /// of checking the secret against [`TokenClient::secret_hash`]) and the account is active,
    /// then grants the scopes and stores the new token's hash.
    pub fn issue_token_to(
        &self,
        client: TokenClient,
        secret_matches: bool,
        scope: Option<&str>,
    ) -> Result<IssuedToken, TokenError> {
        let Some(credentials) = client.credentials else {
            return Err(TokenError::InvalidClient);
        };
        if !secret_matches || !credentials.account.is_active() {
            return Err(TokenError::InvalidClient);
        }
        let scopes = credentials
            .account
            .grant(scope)
            .map_err(|e| TokenError::InvalidScope(e.to_string()))?;
        let now = self.clock.now();
        let grant = AccessGrant::issue(&credentials.account, scopes, now);
        let access_token = self.ids.random_token(32);
        let token_hash = hash_token(&access_token);
        self.store.write(|tx| {
            tx.insert_token(&token_hash, &grant)?;
            // Keep the token table small: expired tokens can never be used again.
            tx.delete_tokens_expired_before(now)?;
            Ok(())
        })?;
        let client_id = &credentials.account.client_id;
        tracing::info!(client_id, scopes = %grant.scopes, "access token issued");
        Ok(IssuedToken {
            access_token,
            grant,
        })
    }

    /// What a bearer token grants at `now`, or why it is refused.
    pub fn authenticate(
        &self,
        access_token: &str,
    ) -> Result<Result<AccessGrant, BearerRefusal>, AppError> {
        let token_hash = hash_token(access_token);
        let stored = self.store.read(|tx| Ok(tx.grant_for_token(&token_hash)?))?;
        Ok(judge(stored, self.clock.now()))
    }
}

fn judge(stored: Option<StoredGrant>, now: DateTime<Utc>) -> Result<AccessGrant, BearerRefusal> {
    let stored = stored.ok_or(BearerRefusal::Unknown)?;
    if !stored.account_active {
        return Err(BearerRefusal::Revoked);
    }
    if stored.grant.is_expired_at(now) {
        return Err(BearerRefusal::Expired);
    }
    Ok(stored.grant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use chrono::TimeDelta;
    use roastery_domain::scope::Scope;
    use roastery_ports::testing::ManualClock;

    #[test]
    fn a_token_is_issued_for_the_right_secret_with_all_granted_scopes() {
        let (app, _) = memory_roastery();
        let acc = app
            .create_account("ERP", "inventory.green core.location")
            .unwrap();
        let token = app
            .issue_token(&acc.account.client_id, &acc.client_secret, None)
            .unwrap();
        assert_eq!(token.grant.scopes, acc.account.scopes);
        let grant = app.authenticate(&token.access_token).unwrap().unwrap();
        assert_eq!(grant.client_id, acc.account.client_id);
    }

    #[test]
    fn wrong_secret_or_unknown_client_is_invalid_client() {
        let (app, _) = memory_roastery();
        let acc = app.create_account("ERP", "mrp.order").unwrap();
        assert_eq!(
            app.issue_token(&acc.account.client_id, "wrong", None)
                .unwrap_err(),
            TokenError::InvalidClient
        );
        assert_eq!(
            app.issue_token("rc-nobody", &acc.client_secret, None)
                .unwrap_err(),
            TokenError::InvalidClient
        );
    }

    #[test]
    fn ungranted_scopes_are_refused_and_granted_ones_narrow_the_token() {
        let (app, _) = memory_roastery();
        let acc = app.create_account("ERP", "mrp.order core.project").unwrap();
        let id = &acc.account.client_id;
        assert!(matches!(
            app.issue_token(id, &acc.client_secret, Some("mrp.order inventory.green")),
            Err(TokenError::InvalidScope(_))
        ));
        let token = app
            .issue_token(id, &acc.client_secret, Some("core.project"))
            .unwrap();
        assert!(token.grant.scopes.contains(Scope::CoreProject));
        assert!(!token.grant.scopes.contains(Scope::MrpOrder));
    }

    #[test]
    fn tokens_expire_after_eight_hours() {
        let (app, clock) = memory_roastery();
        let acc = app.create_account("ERP", "mrp.order").unwrap();
        let token = app
            .issue_token(&acc.account.client_id, &acc.client_secret, None)
            .unwrap();
        clock.advance(TimeDelta::hours(8));
        assert_eq!(
            app.authenticate(&token.access_token).unwrap(),
            Err(BearerRefusal::Expired)
        );
    }

    #[test]
    fn revoking_an_account_refuses_its_tokens_and_new_ones() {
        let (app, _) = memory_roastery();
        let acc = app.create_account("ERP", "mrp.order").unwrap();
        let id = acc.account.client_id.clone();
        let token = app.issue_token(&id, &acc.client_secret, None).unwrap();
        app.revoke_account(&id).unwrap();
        assert_eq!(
            app.authenticate(&token.access_token).unwrap(),
            Err(BearerRefusal::Revoked)
        );
        assert_eq!(
            app.issue_token(&id, &acc.client_secret, None).unwrap_err(),
            TokenError::InvalidClient
        );
        assert!(app.revoke_account("rc-unknown").is_err());
    }

    #[test]
    fn unknown_tokens_are_refused() {
        let (app, _) = memory_roastery();
        assert_eq!(
            app.authenticate("garbage").unwrap(),
            Err(BearerRefusal::Unknown)
        );
    }

    #[test]
    fn manual_clock_starts_at_a_fixed_instant() {
        let clock = ManualClock::default();
        assert_eq!(clock.now_value().timestamp(), 1_800_000_000);
    }
}
