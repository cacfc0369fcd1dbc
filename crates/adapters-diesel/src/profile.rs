//! Stored processing profiles: one row each, their components as JSON in their order.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use roastery_domain::decimal::{from_micros, to_micros};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::profile::{Component, GreenLotRef, Profile};
use roastery_ports::StoreError;
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::{ProfileRepo, StoreResult};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::roast::{id_texts, projects_from_db, projects_to_db};
use crate::row::uuid;
use crate::schema::profiles;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

/// A component as stored: percentage in micro-units and its green lots.
#[derive(Serialize, Deserialize)]
struct ComponentJson {
    percentage_micros: i64,
    green_lots: Vec<GreenLotJson>,
}

#[derive(Serialize, Deserialize)]
struct GreenLotJson {
    id: Uuid,
    name: String,
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = profiles)]
struct ProfileRow {
    id: String,
    name: String,
    external_id: Option<String>,
    profile_group: Option<String>,
    components: String,
    reference_roast_id: Option<String>,
    projects: String,
    created_at: NaiveDateTime,
}

impl ProfileRow {
    fn from_domain(p: &Profile) -> StoreResult<Self> {
        let components = p
            .components
            .iter()
            .map(|c| {
                Ok(ComponentJson {
                    percentage_micros: to_micros(c.percentage).ok_or_else(|| {
                        StoreError::Internal(format!("percentage {} too large", c.percentage))
                    })?,
                    green_lots: c
                        .green_lots
                        .iter()
                        .map(|l| GreenLotJson {
                            id: l.id,
                            name: l.name.clone(),
                        })
                        .collect(),
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Self {
            id: p.id.to_string(),
            name: p.name.clone(),
            external_id: p.external_id.clone(),
            profile_group: p.profile_group.clone(),
            components: serde_json::to_string(&components)
                .map_err(|e| StoreError::Internal(e.to_string()))?,
            reference_roast_id: p.reference_roast_id.map(|id| id.to_string()),
            projects: projects_to_db(&p.projects)?,
            created_at: to_db(p.created_at),
        })
    }

    fn into_domain(self) -> StoreResult<Profile> {
        const WHAT: &str = "profile";
        let components: Vec<ComponentJson> =
            serde_json::from_str(&self.components).map_err(|e| corrupt(WHAT, e))?;
        Ok(Profile {
            id: uuid(WHAT, &self.id)?,
            name: self.name,
            external_id: self.external_id,
            profile_group: self.profile_group,
            components: components
                .into_iter()
                .map(|c| Component {
                    percentage: from_micros(c.percentage_micros),
                    green_lots: c
                        .green_lots
                        .into_iter()
                        .map(|l| GreenLotRef {
                            id: l.id,
                            name: l.name,
                        })
                        .collect(),
                })
                .collect(),
            reference_roast_id: self
                .reference_roast_id
                .as_deref()
                .map(|id| uuid(WHAT, id))
                .transpose()?,
            projects: projects_from_db(WHAT, &self.projects)?,
            created_at: from_db(self.created_at),
        })
    }
}

impl ProfileRepo for DieselTx {
    fn insert_profile(&mut self, profile: &Profile) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Profile, profile.id), Change::Created);
        diesel::insert_into(profiles::table)
            .values(ProfileRow::from_domain(profile)?)
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn profile(&mut self, id: Uuid) -> StoreResult<Option<Profile>> {
        if let Some(known) = self.references.profile(id) {
            return Ok(Some(known));
        }
        let found = profiles::table
            .find(id.to_string())
            .first::<ProfileRow>(self.conn()?)
            .optional()
            .store()?
            .map(ProfileRow::into_domain)
            .transpose()?;
        // A profile never changes once stored; one this unit of work created may roll back.
        if let Some(profile) = &found
            && !self
                .changes
                .contains(Subject::new(Resource::Profile, profile.id))
        {
            self.references.keep_profile(profile);
        }
        Ok(found)
    }

    fn profile_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Profile>> {
        profiles::table
            .filter(profiles::external_id.eq(external_id))
            .first::<ProfileRow>(self.conn()?)
            .optional()
            .store()?
            .map(ProfileRow::into_domain)
            .transpose()
    }

    fn profiles_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Profile>> {
        profiles::table
            .filter(profiles::id.eq_any(id_texts(ids)))
            .load::<ProfileRow>(self.conn()?)
            .store()?
            .into_iter()
            .map(ProfileRow::into_domain)
            .collect()
    }
}
