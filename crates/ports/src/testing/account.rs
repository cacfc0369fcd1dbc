//! Service accounts and their access tokens.

use chrono::{DateTime, Utc};
use roastery_domain::account::{AccessGrant, Account};

use super::store::MemTx;
use crate::error::StoreError;
use crate::repo::*;

impl AccountRepo for MemTx {
    fn insert_account(&mut self, credentials: &Credentials) -> StoreResult<()> {
        let client_id = &credentials.account.client_id;
        if self.data.accounts.accounts.contains_key(client_id) {
            return Err(StoreError::Duplicate(format!("account {client_id}")));
        }
        self.data
            .accounts
            .accounts
            .insert(credentials.account.client_id.clone(), credentials.clone());
        Ok(())
    }

    fn account(&mut self, client_id: &str) -> StoreResult<Option<Credentials>> {
        Ok(self.data.accounts.accounts.get(client_id).cloned())
    }

    /// Oldest first, like the database's.
    fn accounts(&mut self) -> StoreResult<Vec<Account>> {
        let mut accounts: Vec<Account> = (self.data.accounts.accounts.values())
            .map(|c| c.account.clone())
            .collect();
        accounts.sort_by_key(|a| a.created_at);
        Ok(accounts)
    }

    fn set_account_revoked(&mut self, client_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
        if let Some(c) = self.data.accounts.accounts.get_mut(client_id) {
            c.account.revoked_at = Some(at);
        }
        Ok(())
    }

    fn insert_token(&mut self, token_hash: &str, grant: &AccessGrant) -> StoreResult<()> {
        self.data
            .accounts
            .tokens
            .insert(token_hash.to_owned(), grant.clone());
        Ok(())
    }

    fn grant_for_token(&mut self, token_hash: &str) -> StoreResult<Option<StoredGrant>> {
        let data = &self.data.accounts;
        Ok(data.tokens.get(token_hash).map(|grant| StoredGrant {
            grant: grant.clone(),
            account_active: data
                .accounts
                .get(&grant.client_id)
                .is_some_and(|c| c.account.is_active()),
        }))
    }

    fn delete_tokens_expired_before(&mut self, at: DateTime<Utc>) -> StoreResult<usize> {
        let before = self.data.accounts.tokens.len();
        self.data.accounts.tokens.retain(|_, g| g.expires_at > at);
        Ok(before - self.data.accounts.tokens.len())
    }
}
