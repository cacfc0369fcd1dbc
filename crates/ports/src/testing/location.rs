//! Locations.

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::error::StoreError;
use crate::repo::*;

impl LocationRepo for MemTx {
    fn insert_location(&mut self, location: &Location) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Location, location.id),
            Change::Created,
        );
        if self.data.locations.iter().any(|l| {
            l.id == location.id
                || (location.external_id.is_some() && l.external_id == location.external_id)
        }) {
            return Err(StoreError::Duplicate(format!("location {}", location.id)));
        }
        self.data.locations.push(location.clone());
        Ok(())
    }

    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>> {
        Ok(self.data.locations.iter().find(|l| l.id == id).cloned())
    }

    fn locations_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Location>> {
        Ok((self.data.locations.iter())
            .filter(|l| ids.contains(&l.id))
            .cloned()
            .collect())
    }

    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>> {
        Ok(self
            .data
            .locations
            .iter()
            .find(|l| l.external_id.as_deref() == Some(external_id))
            .cloned())
    }

    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>> {
        page_newest_first(
            self.data.locations.iter().cloned(),
            |l| (l.created_at, l.id),
            page,
        )
    }
}
