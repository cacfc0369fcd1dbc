//! Locations.

use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::{MemTx, page_newest_first};
use crate::repo::*;

impl LocationRepo for MemTx {
    fn insert_location(&mut self, location: &Location) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::Location, location.id),
            Change::Created,
        );
        self.data.locations.push(location.clone());
        Ok(())
    }

    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>> {
        Ok(self.data.locations.iter().find(|l| l.id == id).cloned())
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
