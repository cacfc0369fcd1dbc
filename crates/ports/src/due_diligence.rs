//! EUDR due diligence (api-decisions §12): set on source green lots, answered for any lot or
//! order from the source lots upstream of it.
//!
//! The sources of a lot or order are found with one recursive query over the genealogy
//! ([`TraceRepo::upstream_edges`]), then the source lots and their due diligence are loaded in
//! one query each, whatever the depth or breadth of the genealogy.

use roastery_domain::due_diligence::{
    self, DueDiligence, DueDiligenceDraft, DueDiligenceError, DueDiligenceInput,
    DueDiligenceReport, SourceDueDiligence,
};
use roastery_domain::green_lot::{GreenLot, GreenLotError};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::ledger::Reference;
use roastery_domain::order::OrderError;
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use crate::error::AppError;
use crate::green_lot::GreenLotView;
use crate::repo::*;
use crate::trace::LotNotFound;
use crate::{Repos, Roastery, Store};

/// Whether `shipOrder` requires complete due diligence (`ROASTERY_EUDR_ENFORCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EudrEnforce {
    #[default]
    Off,
    Ship,
}

impl EudrEnforce {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "ship" => Some(Self::Ship),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SetDueDiligence {
    pub green_lot_id: Uuid,
    pub input: DueDiligenceInput,
}

/// A green lot with its details and due diligence, as `setDueDiligence` answers it.
#[derive(Debug, Clone)]
pub struct GreenLotWithDueDiligence {
    pub view: GreenLotView,
    pub details: GreenLotDetails,
    pub due_diligence: Option<DueDiligence>,
}

/// What a due diligence report is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueDiligenceOf {
    Lot(Uuid),
    Order(Uuid),
}

/// The report over every source green lot upstream of `starts` (a green lot that is itself a
/// source counts). Three queries: the edges, the source lots, their due diligence.
pub(crate) fn report_of(
    tx: &mut impl Repos,
    starts: &[Reference],
    start_green: &[Uuid],
) -> Result<DueDiligenceReport, AppError> {
    let edges = tx.upstream_edges(starts)?;
    let mut green: Vec<Uuid> = edges
        .iter()
        .filter(|e| e.from.kind == LotKind::Green)
        .map(|e| e.from.id)
        .chain(start_green.iter().copied())
        .collect();
    green.sort_unstable();
    green.dedup();
    let sources = tx.source_green_lots(&green)?;
    let ids: Vec<Uuid> = sources.iter().map(|s| s.id).collect();
    let mut found = tx.due_diligence_of(&ids)?;
    let sources = sources
        .into_iter()
        .map(|lot| {
            let due_diligence = found
                .iter()
                .position(|(id, _)| *id == lot.id)
                .map(|at| found.swap_remove(at).1);
            SourceDueDiligence { lot, due_diligence }
        })
        .collect();
    Ok(due_diligence::report(sources))
}

impl<S: Store> Roastery<S> {
    /// Replaces the due diligence of a source green lot; consumed lots are allowed (paperwork
    /// arrives late). Writes no ledger entry.
    pub fn set_due_diligence(
        &self,
        cmd: SetDueDiligence,
    ) -> Result<GreenLotWithDueDiligence, AppError> {
        let draft = DueDiligenceDraft::parse(cmd.input)?;
        let id = cmd.green_lot_id;
        self.store.write(|tx| {
            let now = self.clock.now();
            let mut lot = tx.green_lot(id)?.ok_or(GreenLotError::NotFound(id))?;
            if tx.source_green_lots(&[id])?.is_empty() {
                return Err(not_a_source(tx, &lot)?.into());
            }
            let due_diligence = draft.clone().decide(now);
            tx.put_due_diligence(id, &due_diligence)?;
            lot.last_modified_date = now;
            tx.update_green_lot(&lot)?;
            let location = match lot.location_id {
                Some(l) => tx.location(l)?,
                None => None,
            };
            let details = lot.details.clone();
            Ok(GreenLotWithDueDiligence {
                view: GreenLotView { lot, location },
                details,
                due_diligence: Some(due_diligence),
            })
        })
    }

    /// The source lots, statements and plots behind a lot (green, roasted or blended) or an
    /// order's shipments.
    pub fn due_diligence_of(&self, of: DueDiligenceOf) -> Result<DueDiligenceReport, AppError> {
        self.store.read(|tx| match of {
            DueDiligenceOf::Lot(id) => {
                let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
                    .map(|kind| TypedLotRef { id, kind });
                let start = tx
                    .traced_lots(&candidates)?
                    .into_iter()
                    .next()
                    .ok_or(LotNotFound(id))?;
                let green: &[Uuid] = if start.lot.kind == LotKind::Green {
                    &[id]
                } else {
                    &[]
                };
                report_of(tx, &[Reference::Lot(start.lot)], green)
            }
            DueDiligenceOf::Order(id) => {
                tx.order(id)?.ok_or(OrderError::NotFound(id))?;
                report_of(tx, &[Reference::Order(id)], &[])
            }
        })
    }

    /// With `eudr_enforce = ship`, `shipOrder` needs complete due diligence behind every
    /// allocated lot.
    pub fn with_eudr_enforce(self, enforce: EudrEnforce) -> Self {
        Self {
            eudr_enforce: enforce,
            ..self
        }
    }

    pub fn eudr_enforce(&self) -> EudrEnforce {
        self.eudr_enforce
    }
}

/// Why `lot` may not carry due diligence: it was made by a transfer; its source is its origin.
fn not_a_source(tx: &mut impl Repos, lot: &GreenLot) -> Result<DueDiligenceError, AppError> {
    let origin = tx.green_lots_by_ids(&[lot.origin_id])?.into_iter().next();
    Ok(DueDiligenceError::NotASource {
        lot: lot.number(),
        source_lot: origin.map_or_else(|| "(not found)".to_owned(), |o| o.number()),
        source_id: lot.origin_id,
    })
}

/// With enforcement on, refuses a shipment of `lots` whose sources' due diligence is incomplete.
pub(crate) fn check_shippable(
    tx: &mut impl Repos,
    enforce: EudrEnforce,
    lots: &[TypedLotRef],
) -> Result<(), AppError> {
    if enforce == EudrEnforce::Off {
        return Ok(());
    }
    let starts: Vec<Reference> = lots.iter().copied().map(Reference::Lot).collect();
    let green: Vec<Uuid> = lots
        .iter()
        .filter(|l| l.kind == LotKind::Green)
        .map(|l| l.id)
        .collect();
    let report = report_of(tx, &starts, &green)?;
    if report.complete {
        Ok(())
    } else {
        Err(DueDiligenceError::Incomplete(report.missing).into())
    }
}
