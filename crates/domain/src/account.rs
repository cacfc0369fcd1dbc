//! Service accounts and the access they grant.
//!
//! A service account holds a client id, a name, the scopes it was granted and, once revoked, the
//! time of revocation. Access tokens live eight hours and carry the scopes asked for at issue,
//! which must all have been granted to the account.

use chrono::{DateTime, TimeDelta, Utc};

use crate::scope::{ScopeError, ScopeSet};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Lifetime of an access token.
pub const TOKEN_LIFETIME: TimeDelta = TimeDelta::hours(8);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error(transparent)]
    Name(#[from] TextError),
    #[error(transparent)]
    Scope(#[from] ScopeError),
    #[error("an account needs at least one scope")]
    NoScopes,
    #[error("scope `{0}` was not granted to this client")]
    NotGranted(String),
    #[error("no account has client id `{0}`")]
    NotFound(String),
    #[error("account `{0}` is already revoked")]
    AlreadyRevoked(String),
}

impl BrokenRule for AccountError {
    fn violation(&self) -> Violation {
        match self {
            Self::Name(e) => e.violation(),
            Self::Scope(e) => e.violation(),
            Self::NoScopes | Self::NotGranted(_) => Violation::InvalidParameter,
            Self::NotFound(_) => Violation::NotFound,
            Self::AlreadyRevoked(_) => Violation::BusinessRule,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub client_id: String,
    pub name: String,
    pub scopes: ScopeSet,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl Account {
    /// A new, active account. `client_id` is made by the caller from a random source.
    pub fn open(
        client_id: String,
        name: &str,
        scopes: ScopeSet,
        now: DateTime<Utc>,
    ) -> Result<Self, AccountError> {
        let name = text::required("name", name, text::NAME_MAX)?;
        if scopes.is_empty() {
            return Err(AccountError::NoScopes);
        }
        Ok(Self {
            client_id,
            name,
            scopes,
            created_at: now,
            revoked_at: None,
        })
    }

    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }

    pub fn revoke(&mut self, now: DateTime<Utc>) -> Result<(), AccountError> {
        if self.revoked_at.is_some() {
            return Err(AccountError::AlreadyRevoked(self.client_id.clone()));
        }
        self.revoked_at = Some(now);
        Ok(())
    }

    /// The scopes a token asked for with `requested` gets: all granted ones when the request
    /// names none, else exactly those named, each of which must have been granted.
    pub fn grant(&self, requested: Option<&str>) -> Result<ScopeSet, AccountError> {
        let requested = match requested.map(str::trim) {
            None | Some("") => return Ok(self.scopes),
            Some(list) => list,
        };
        for name in requested.split_whitespace() {
            let scope = crate::scope::Scope::parse(name)
                .map_err(|_| AccountError::NotGranted(name.to_owned()))?;
            if !self.scopes.contains(scope) {
                return Err(AccountError::NotGranted(name.to_owned()));
            }
        }
        Ok(ScopeSet::parse(requested)?)
    }
}

/// What a valid access token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessGrant {
    pub client_id: String,
    pub scopes: ScopeSet,
    pub expires_at: DateTime<Utc>,
}

impl AccessGrant {
    pub fn issue(account: &Account, scopes: ScopeSet, now: DateTime<Utc>) -> Self {
        Self {
            client_id: account.client_id.clone(),
            scopes,
            // Only at the end of time could this overflow; such a grant simply never expires.
            expires_at: now
                .checked_add_signed(TOKEN_LIFETIME)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        }
    }

    pub fn is_expired_at(&self, now: DateTime<Utc>) -> bool {
        now >= self.expires_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;
    use crate::test_values::now;

    fn account(scopes: &str) -> Account {
        Account::open("c1".into(), "ERP", ScopeSet::parse(scopes).unwrap(), now()).unwrap()
    }

    #[test]
    fn absent_scope_grants_every_scope_of_the_account() {
        let acc = account("inventory.green core.location");
        assert_eq!(acc.grant(None).unwrap(), acc.scopes);
        assert_eq!(acc.grant(Some(" ")).unwrap(), acc.scopes);
    }

    #[test]
    fn requested_scopes_must_all_be_granted() {
        let acc = account("inventory.green core.location");
        let one = acc.grant(Some("core.location")).unwrap();
        assert!(one.contains(Scope::CoreLocation) && !one.contains(Scope::InventoryGreen));
        assert_eq!(
            acc.grant(Some("core.location mrp.order")),
            Err(AccountError::NotGranted("mrp.order".into()))
        );
        assert_eq!(
            acc.grant(Some("bogus")),
            Err(AccountError::NotGranted("bogus".into()))
        );
    }

    #[test]
    fn tokens_live_eight_hours() {
        let acc = account("mrp.order");
        let grant = AccessGrant::issue(&acc, acc.scopes, now());
        assert!(!grant.is_expired_at(now() + TimeDelta::hours(8) - TimeDelta::seconds(1)));
        assert!(grant.is_expired_at(now() + TimeDelta::hours(8)));
    }

    #[test]
    fn accounts_need_a_name_and_a_scope() {
        assert!(
            Account::open(
                "c".into(),
                " ",
                ScopeSet::parse("mrp.order").unwrap(),
                now()
            )
            .is_err()
        );
        assert_eq!(
            Account::open("c".into(), "x", ScopeSet::empty(), now()),
            Err(AccountError::NoScopes)
        );
    }

    #[test]
    fn revocation_is_final() {
        let mut acc = account("mrp.order");
        acc.revoke(now()).unwrap();
        assert!(!acc.is_active());
        assert!(matches!(
            acc.revoke(now()),
            Err(AccountError::AlreadyRevoked(_))
        ));
    }
}
