//! Service accounts and their access tokens.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::scope::ScopeSet;
use roastery_ports::repo::*;

use crate::error::{OrStoreError, corrupt};
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

#[derive(Queryable, Insertable)]
#[diesel(table_name = accounts)]
struct AccountRow {
    client_id: String,
    name: String,
    scopes: String,
    secret_hash: String,
    created_at: chrono::NaiveDateTime,
    revoked_at: Option<chrono::NaiveDateTime>,
}

impl AccountRow {
    fn from_domain(c: &Credentials) -> Self {
        Self {
            client_id: c.account.client_id.clone(),
            name: c.account.name.clone(),
            scopes: c.account.scopes.to_string(),
            secret_hash: c.secret_hash.clone(),
            created_at: to_db(c.account.created_at),
            revoked_at: c.account.revoked_at.map(to_db),
        }
    }

    fn into_domain(self) -> StoreResult<Credentials> {
        Ok(Credentials {
            account: Account {
                scopes: ScopeSet::parse(&self.scopes).map_err(|e| corrupt("account", e))?,
                client_id: self.client_id,
                name: self.name,
                created_at: from_db(self.created_at),
                revoked_at: self.revoked_at.map(from_db),
            },
            secret_hash: self.secret_hash,
        })
    }
}

impl AccountRepo for DieselTx {
    fn insert_account(&mut self, credentials: &Credentials) -> StoreResult<()> {
        diesel::insert_into(accounts::table)
            .values(AccountRow::from_domain(credentials))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn account(&mut self, client_id: &str) -> StoreResult<Option<Credentials>> {
        accounts::table
            .find(client_id)
            .first::<AccountRow>(self.conn()?)
            .optional()
            .store()?
            .map(AccountRow::into_domain)
            .transpose()
    }

    fn accounts(&mut self) -> StoreResult<Vec<Account>> {
        accounts::table
            .order(accounts::created_at)
            .load::<AccountRow>(self.conn()?)
            .store()?
            .into_iter()
            .map(|row| row.into_domain().map(|c| c.account))
            .collect()
    }

    fn set_account_revoked(&mut self, client_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
        diesel::update(accounts::table.find(client_id))
            .set(accounts::revoked_at.eq(Some(to_db(at))))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn insert_token(&mut self, token_hash: &str, grant: &AccessGrant) -> StoreResult<()> {
        diesel::insert_into(access_tokens::table)
            .values((
                access_tokens::token_hash.eq(token_hash),
                access_tokens::client_id.eq(&grant.client_id),
                access_tokens::scopes.eq(grant.scopes.to_string()),
                access_tokens::expires_at.eq(to_db(grant.expires_at)),
            ))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn grant_for_token(&mut self, token_hash: &str) -> StoreResult<Option<StoredGrant>> {
        let row: Option<(
            String,
            String,
            chrono::NaiveDateTime,
            Option<chrono::NaiveDateTime>,
        )> = access_tokens::table
            .inner_join(accounts::table)
            .filter(access_tokens::token_hash.eq(token_hash))
            .select((
                access_tokens::client_id,
                access_tokens::scopes,
                access_tokens::expires_at,
                accounts::revoked_at,
            ))
            .first(self.conn()?)
            .optional()
            .store()?;
        row.map(|(client_id, scopes, expires_at, revoked_at)| {
            Ok(StoredGrant {
                grant: AccessGrant {
                    client_id,
                    scopes: ScopeSet::parse(&scopes).map_err(|e| corrupt("token", e))?,
                    expires_at: from_db(expires_at),
                },
                account_active: revoked_at.is_none(),
            })
        })
        .transpose()
    }

    fn delete_tokens_expired_before(&mut self, at: DateTime<Utc>) -> StoreResult<usize> {
        diesel::delete(access_tokens::table.filter(access_tokens::expires_at.le(to_db(at))))
            .execute(self.conn()?)
            .store()
    }
}
