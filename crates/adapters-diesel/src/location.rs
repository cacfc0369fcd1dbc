//! Locations.

use diesel::prelude::*;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::location::Location;
use roastery_domain::page::{Page, PageRequest};
use roastery_ports::repo::*;
use uuid::Uuid;

use crate::error::OrStoreError;
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

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

impl DieselTx {
    /// Keeps a location read for later reads, unless this unit of work created it (it may
    /// still roll back).
    fn keep_location(&self, location: &Location) {
        if !self
            .changes
            .contains(Subject::new(Resource::Location, location.id))
        {
            self.references.keep_location(location);
        }
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
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn location(&mut self, id: Uuid) -> StoreResult<Option<Location>> {
        if let Some(known) = self.references.location(id) {
            return Ok(Some(known));
        }
        let found = locations::table
            .find(id.to_string())
            .first::<LocationRow>(self.conn()?)
            .optional()
            .store()?
            .map(LocationRow::into_domain)
            .transpose()?;
        if let Some(location) = &found {
            self.keep_location(location);
        }
        Ok(found)
    }

    fn locations_by_ids(&mut self, ids: &[Uuid]) -> StoreResult<Vec<Location>> {
        let mut found = Vec::with_capacity(ids.len());
        let mut unknown = Vec::new();
        for id in ids {
            match self.references.location(*id) {
                Some(known) => found.push(known),
                None => unknown.push(id.to_string()),
            }
        }
        if unknown.is_empty() {
            return Ok(found);
        }
        let read = locations::table
            .filter(locations::id.eq_any(unknown))
            .load::<LocationRow>(self.conn()?)
            .store()?
            .into_iter()
            .map(LocationRow::into_domain)
            .collect::<StoreResult<Vec<_>>>()?;
        for location in read {
            self.keep_location(&location);
            found.push(location);
        }
        Ok(found)
    }

    fn location_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Location>> {
        locations::table
            .filter(locations::external_id.eq(external_id))
            .first::<LocationRow>(self.conn()?)
            .optional()
            .store()?
            .map(LocationRow::into_domain)
            .transpose()
    }

    fn list_locations(&mut self, page: &PageRequest) -> StoreResult<Page<Location>> {
        let query = locations::table.into_boxed();
        let rows: Vec<LocationRow> =
            newest_first!(query, page, locations::created_at, locations::id)
                .load(self.conn()?)
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
