//! Settings, sequences, service accounts, tokens, locations and projects.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::Project;
use roastery_domain::scope::ScopeSet;
use roastery_ports::StoreError;
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::*;
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

/// Parses a stored uuid.
pub(crate) fn uuid(what: &str, text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|e| corrupt(what, e))
}

impl SystemRepo for DieselTx {
    fn ping(&mut self) -> StoreResult<()> {
        diesel::sql_query("SELECT 1")
            .execute(self.conn())
            .store()
            .map(drop)
    }

    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String> {
        let existing: Option<String> = settings::table
            .find(name)
            .select(settings::value)
            .first(self.conn())
            .optional()
            .store()?;
        if let Some(existing) = existing {
            return Ok(existing);
        }
        diesel::insert_into(settings::table)
            .values((settings::name.eq(name), settings::value.eq(value)))
            .execute(self.conn())
            .store()?;
        Ok(value.to_owned())
    }

    fn next_number(&mut self, sequence: &str) -> StoreResult<i64> {
        // One statement takes the next number and reads it back (and locks the counter's row
        // on PostgreSQL until the transaction ends, which keeps the numbers gapless).
        let next: Option<i64> = on_backend!(self.conn(), |c| diesel::update(
            sequences::table.find(sequence)
        )
        .set(sequences::last_value.eq(sequences::last_value + 1))
        .returning(sequences::last_value)
        .get_result(c)
        .optional())
        .store()?;
        if let Some(next) = next {
            return Ok(next);
        }
        diesel::insert_into(sequences::table)
            .values((sequences::name.eq(sequence), sequences::last_value.eq(1)))
            .execute(self.conn())
            .store()
            .map_err(crate::error::concurrent_insert)?;
        Ok(1)
    }
}

impl DieselTx {
    /// The last value of counter `name` (0 before its first use).
    pub(crate) fn counter(&mut self, name: &str) -> StoreResult<i64> {
        Ok(sequences::table
            .find(name)
            .select(sequences::last_value)
            .first(self.conn())
            .optional()
            .store()?
            .unwrap_or(0))
    }

    /// Sets counter `name` to `value`, creating it when needed.
    pub(crate) fn set_counter(&mut self, name: &str, value: i64) -> StoreResult<()> {
        let updated = diesel::update(sequences::table.find(name))
            .set(sequences::last_value.eq(value))
            .execute(self.conn())
            .store()?;
        if updated == 0 {
            diesel::insert_into(sequences::table)
                .values((sequences::name.eq(name), sequences::last_value.eq(value)))
                .execute(self.conn())
                .store()?;
        }
        Ok(())
    }
}

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
            .execute(self.conn())
            .store()
            .map(drop)
    }

    fn account(&mut self, client_id: &str) -> StoreResult<Option<Credentials>> {
        accounts::table
            .find(client_id)
            .first::<AccountRow>(self.conn())
            .optional()
            .store()?
            .map(AccountRow::into_domain)
            .transpose()
    }

    fn accounts(&mut self) -> StoreResult<Vec<Account>> {
        accounts::table
            .order(accounts::created_at)
            .load::<AccountRow>(self.conn())
            .store()?
            .into_iter()
            .map(|row| row.into_domain().map(|c| c.account))
            .collect()
    }

    fn set_account_revoked(&mut self, client_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
        diesel::update(accounts::table.find(client_id))
            .set(accounts::revoked_at.eq(Some(to_db(at))))
            .execute(self.conn())
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
            .execute(self.conn())
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
            .first(self.conn())
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
            .execute(self.conn())
            .store()
    }
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = locations)]
struct LocationRow {
    id: String,
    name: String,
    external_id: Option<String>,
    created_at: chrono::NaiveDateTime,
}

impl LocationRow {
    fn into_domain(self) -> StoreResult<Location> {
        Ok(Location {
            id: uuid("location", &self.id)?,
            name: self.name,
            external_id: self.external_id,
            created_at: from_db(self.created_at),
        })
    }
}

impl LocationRepo for DieselTx {
    fn insert_location(&mut self, l: &Location) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Location, l.id), Change::Created);
        diesel::insert_into(locations::table)
            .values(LocationRow {
                id: l.id.to_string(),
                name: l.name.clone(),
                external_id: l.external_id.clone(),
                created_at: to_db(l.created_at),
            })
            .execute(self.conn())
            .store()
            .map(drop)
    }

    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>> {
        locations::table
            .find(id.to_string())
            .first::<LocationRow>(self.conn())
            .optional()
            .store()?
            .map(LocationRow::into_domain)
            .transpose()
    }

    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>> {
        locations::table
            .filter(locations::external_id.eq(external_id))
            .first::<LocationRow>(self.conn())
            .optional()
            .store()?
            .map(LocationRow::into_domain)
            .transpose()
    }

    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>> {
        let query = locations::table.into_boxed();
        let rows: Vec<LocationRow> =
            newest_first!(query, page, locations::created_at, locations::id)
                .load(self.conn())
                .store()?;
        let items = rows
            .into_iter()
            .map(LocationRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |l| {
            (l.created_at, l.id)
        }))
    }
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = projects)]
struct ProjectRow {
    id: String,
    name: String,
    description: Option<String>,
    created_at: chrono::NaiveDateTime,
}

impl ProjectRow {
    fn into_domain(self) -> StoreResult<Project> {
        Ok(Project {
            id: uuid("project", &self.id)?,
            name: self.name,
            description: self.description,
            created_at: from_db(self.created_at),
        })
    }
}

impl ProjectRepo for DieselTx {
    fn insert_project(&mut self, p: &Project) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Project, p.id), Change::Created);
        diesel::insert_into(projects::table)
            .values(ProjectRow {
                id: p.id.to_string(),
                name: p.name.clone(),
                description: p.description.clone(),
                created_at: to_db(p.created_at),
            })
            .execute(self.conn())
            .store()
            .map(drop)
    }

    fn project_by_name(&mut self, name: &str) -> StoreResult<Option<Project>> {
        projects::table
            .filter(projects::name.eq(name))
            .first::<ProjectRow>(self.conn())
            .optional()
            .store()?
            .map(ProjectRow::into_domain)
            .transpose()
    }

    fn list_projects(&mut self, page: &PageRequest) -> StoreResult<Page<Project>> {
        let query = projects::table.into_boxed();
        let rows: Vec<ProjectRow> = newest_first!(query, page, projects::created_at, projects::id)
            .load(self.conn())
            .store()?;
        let items = rows
            .into_iter()
            .map(ProjectRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Page::from_overfetch(items, page.limit, |p| {
            (p.created_at, p.id)
        }))
    }
}

/// The keyset a listing page starts after. Use cases check the cursor kind before calling.
pub(crate) fn keyset(page: &PageRequest) -> StoreResult<Option<(DateTime<Utc>, Uuid)>> {
    page.keyset()
        .map_err(|e| StoreError::Internal(e.to_string()))
}

/// One row more than the page holds: it only tells whether another page exists.
pub(crate) fn overfetch(page: &PageRequest) -> i64 {
    i64::from(page.limit.get()) + 1
}
