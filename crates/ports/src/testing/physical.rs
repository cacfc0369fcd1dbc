//! In-memory physical analyses.

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::physical_analysis::PhysicalAnalysis;

use super::store::{MemTx, page_newest_first};
use crate::error::StoreError;
use crate::repo::*;

impl PhysicalRepo for MemTx {
    fn insert_physical_analysis(&mut self, analysis: &PhysicalAnalysis) -> StoreResult<()> {
        self.record_change(
            Subject::new(Resource::PhysicalAnalysis, analysis.id),
            Change::Created,
        );
        if (self.data.physical.analyses.iter())
            .any(|a| a.id == analysis.id || a.number == analysis.number)
        {
            return Err(StoreError::Duplicate(format!(
                "physical analysis {}",
                analysis.id
            )));
        }
        self.data.physical.analyses.push(analysis.clone());
        Ok(())
    }

    fn list_physical_analyses(
        &mut self,
        filter: &PhysicalFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<PhysicalAnalysis>> {
        page_newest_first(
            self.data
                .physical
                .analyses
                .iter()
                .filter(|a| filter.matches(a))
                .cloned(),
            |a| (a.analysis_date, a.id),
            page,
        )
    }
}
