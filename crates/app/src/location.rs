//! core.location: importing and listing locations.

use roastery_domain::location::Location;
use roastery_domain::operation::Operation;
use roastery_domain::page::{Page, PageRequest};

use crate::{Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLocation {
    pub name: String,
    pub external_id: Option<String>,
}

impl<S: Store> Roastery<S> {
    pub fn import_location(&self, cmd: ImportLocation) -> Result<Location, AppError> {
        let location = Location::new(
            self.ids.new_id(),
            &cmd.name,
            cmd.external_id.as_deref(),
            self.clock.now(),
        )?;
        self.write(Operation::ImportLocation, |tx| {
            let external_id_taken = match &location.external_id {
                Some(external_id) => tx.location_by_external_id(external_id)?.is_some(),
                None => false,
            };
            let location = location.clone().decide_import(external_id_taken)?;
            tx.insert_location(&location)?;
            Ok(location)
        })
    }

    pub fn list_locations(&self, page: PageRequest) -> Result<Page<Location>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| Ok(tx.list_locations(&page)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use roastery_domain::location::LocationError;
    use roastery_domain::page::Limit;

    fn cmd(name: &str, external_id: Option<&str>) -> ImportLocation {
        ImportLocation {
            name: name.into(),
            external_id: external_id.map(Into::into),
        }
    }

    #[test]
    fn duplicate_external_ids_conflict() {
        let (app, _) = memory_roastery();
        app.import_location(cmd("Hamburg", Some("wh-1"))).unwrap();
        let err = app
            .import_location(cmd("Bremen", Some("wh-1")))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&LocationError::DuplicateExternalId("wh-1".into()))
        );
        app.import_location(cmd("No id", None)).unwrap();
        app.import_location(cmd("No id either", None)).unwrap();
    }

    #[test]
    fn locations_list_newest_first_across_pages() {
        let (app, clock) = memory_roastery();
        for i in 0..5 {
            app.import_location(cmd(&format!("L{i}"), None)).unwrap();
            clock.advance(chrono::TimeDelta::seconds(1));
        }
        let mut names = Vec::new();
        let mut page = PageRequest {
            limit: Limit::parse(Some(2)).unwrap(),
            after: None,
        };
        loop {
            let result = app.list_locations(page).unwrap();
            names.extend(result.items.into_iter().map(|l| l.name));
            match result.next {
                Some(next) => page.after = Some(next),
                None => break,
            }
        }
        assert_eq!(names, ["L4", "L3", "L2", "L1", "L0"]);
    }
}
