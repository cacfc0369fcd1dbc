//! In-memory processing profiles (kept with the roast data they belong to).

use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::profile::Profile;
use uuid::Uuid;

use super::store::MemTx;
use crate::repo::{EventRepo as _, ProfileRepo, StoreResult};

impl ProfileRepo for MemTx {
    fn insert_profile(&mut self, profile: &Profile) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Profile, profile.id), Change::Created);
        if self.data.roast.profiles.iter().any(|p| {
            p.id == profile.id
                || (profile.external_id.is_some() && p.external_id == profile.external_id)
        }) {
            return Err(crate::StoreError::Duplicate(format!(
                "profile {}",
                profile.id
            )));
        }
        self.data.roast.profiles.push(profile.clone());
        Ok(())
    }

    fn profile(&mut self, id: Uuid) -> StoreResult<Option<Profile>> {
        Ok(self
            .data
            .roast
            .profiles
            .iter()
            .find(|p| p.id == id)
            .cloned())
    }

    fn profile_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Profile>> {
        Ok(self
            .data
            .roast
            .profiles
            .iter()
            .find(|p| p.external_id.as_deref() == Some(external_id))
            .cloned())
    }

    fn profiles_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Profile>> {
        Ok(self
            .data
            .roast
            .profiles
            .iter()
            .filter(|p| ids.contains(&p.id))
            .cloned()
            .collect())
    }
}
