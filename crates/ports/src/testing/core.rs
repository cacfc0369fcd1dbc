use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project::Project;
use uuid::Uuid;

use super::{MemTx, page_newest_first};
use crate::repo::*;

#[derive(Debug, Clone, Default)]
pub struct CoreData {
    settings: BTreeMap<String, String>,
    sequences: BTreeMap<String, i64>,
    accounts: BTreeMap<String, Credentials>,
    tokens: BTreeMap<String, AccessGrant>,
    locations: Vec<Location>,
    projects: Vec<Project>,
}

impl SystemRepo for MemTx {
    fn ping(&mut self) -> StoreResult<()> {
        Ok(())
    }

    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String> {
        Ok(self
            .data
            .core
            .settings
            .entry(name.to_owned())
            .or_insert_with(|| value.to_owned())
            .clone())
    }

    fn next_number(&mut self, sequence: &str) -> StoreResult<i64> {
        let n = self
            .data
            .core
            .sequences
            .entry(sequence.to_owned())
            .or_insert(0);
        *n += 1;
        Ok(*n)
    }
}

impl AccountRepo for MemTx {
    fn insert_account(&mut self, credentials: &Credentials) -> StoreResult<()> {
        self.data
            .core
            .accounts
            .insert(credentials.account.client_id.clone(), credentials.clone());
        Ok(())
    }

    fn account(&mut self, client_id: &str) -> StoreResult<Option<Credentials>> {
        Ok(self.data.core.accounts.get(client_id).cloned())
    }

    fn accounts(&mut self) -> StoreResult<Vec<Account>> {
        Ok(self
            .data
            .core
            .accounts
            .values()
            .map(|c| c.account.clone())
            .collect())
    }

    fn set_account_revoked(&mut self, client_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
        if let Some(c) = self.data.core.accounts.get_mut(client_id) {
            c.account.revoked_at = Some(at);
        }
        Ok(())
    }

    fn insert_token(&mut self, token_hash: &str, grant: &AccessGrant) -> StoreResult<()> {
        self.data
            .core
            .tokens
            .insert(token_hash.to_owned(), grant.clone());
        Ok(())
    }

    fn grant_for_token(&mut self, token_hash: &str) -> StoreResult<Option<StoredGrant>> {
        let core = &self.data.core;
        Ok(core.tokens.get(token_hash).map(|grant| StoredGrant {
            grant: grant.clone(),
            account_active: core
                .accounts
                .get(&grant.client_id)
                .is_some_and(|c| c.account.is_active()),
        }))
    }

    fn delete_tokens_expired_before(&mut self, at: DateTime<Utc>) -> StoreResult<usize> {
        let before = self.data.core.tokens.len();
        self.data.core.tokens.retain(|_, g| g.expires_at > at);
        Ok(before - self.data.core.tokens.len())
    }
}

impl LocationRepo for MemTx {
    fn insert_location(&mut self, location: &Location) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Location, location.id),
            Change::Created,
        );
        self.data.core.locations.push(location.clone());
        Ok(())
    }

    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>> {
        Ok(self
            .data
            .core
            .locations
            .iter()
            .find(|l| l.id == id)
            .cloned())
    }

    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>> {
        Ok(self
            .data
            .core
            .locations
            .iter()
            .find(|l| l.external_id.as_deref() == Some(external_id))
            .cloned())
    }

    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>> {
        page_newest_first(
            self.data.core.locations.iter().cloned(),
            |l| (l.created_at, l.id),
            page,
        )
    }
}

impl ProjectRepo for MemTx {
    fn insert_project(&mut self, project: &Project) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Project, project.id), Change::Created);
        self.data.core.projects.push(project.clone());
        Ok(())
    }

    fn project_by_name(&mut self, name: &str) -> StoreResult<Option<Project>> {
        Ok(self
            .data
            .core
            .projects
            .iter()
            .find(|p| p.name == name)
            .cloned())
    }

    fn list_projects(&mut self, page: &PageRequest) -> StoreResult<Page<Project>> {
        page_newest_first(
            self.data.core.projects.iter().cloned(),
            |p| (p.created_at, p.id),
            page,
        )
    }
}
