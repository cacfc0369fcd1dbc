//! Locations and profiles read so far: they never change once stored and are never deleted.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use roastery_domain::location::Location;
use roastery_domain::profile::Profile;
use uuid::Uuid;

/// Locations and profiles never change once stored and are never deleted, so the rendering of
/// items (and every read of one by id) may keep them. A record created by a unit of work that
/// may still roll back is not kept.
#[derive(Default)]
pub(crate) struct References {
    locations: Mutex<HashMap<Uuid, Location>>,
    profiles: Mutex<HashMap<Uuid, Profile>>,
}

/// More distinct records than this and the cache starts again empty.
const REFERENCES_KEPT: usize = 10_000;

fn keep<T: Clone>(map: &Mutex<HashMap<Uuid, T>>, id: Uuid, value: &T) {
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    if map.len() >= REFERENCES_KEPT {
        map.clear();
    }
    map.insert(id, value.clone());
}

impl References {
    pub(crate) fn location(&self, id: Uuid) -> Option<Location> {
        let map = self
            .locations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        map.get(&id).cloned()
    }

    pub(crate) fn keep_location(&self, location: &Location) {
        keep(&self.locations, location.id, location);
    }

    pub(crate) fn profile(&self, id: Uuid) -> Option<Profile> {
        let map = self.profiles.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(&id).cloned()
    }

    pub(crate) fn keep_profile(&self, profile: &Profile) {
        keep(&self.profiles, profile.id, profile);
    }
}
