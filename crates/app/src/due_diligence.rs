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
use roastery_domain::operation::Operation;
use roastery_domain::order::OrderError;
use roastery_domain::stock::LotKind;
use std::collections::HashMap;

use roastery_domain::stock::TypedLotRef;
use uuid::Uuid;

use crate::green_lot::GreenLotView;
use crate::trace::LotNotFound;
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

use crate::eudr_settings::EudrEnforce;

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
/// source counts), read by [`DueDiligenceRepo::upstream_sources`] (on the Diesel store one
/// statement). With `bounded`, a report whose stored due diligence passes
/// [`due_diligence::ANSWER_DOCUMENT_MAX`] is refused before any of it is read.
pub(crate) fn report_of(
    tx: &mut impl Repos,
    starts: &[Reference],
    bounded: bool,
) -> Result<DueDiligenceReport, AppError> {
    let read_up_to = if bounded {
        due_diligence::ANSWER_DOCUMENT_MAX
    } else {
        u64::MAX
    };
    let read = tx.upstream_sources(starts, read_up_to)?;
    let sizes: Vec<(Uuid, u64)> = read
        .iter()
        .filter_map(|source| Some((source.lot.id, source.size?)))
        .collect();
    let mut found: HashMap<Uuid, DueDiligence> = HashMap::new();
    let mut unread = Vec::new();
    let mut sources = Vec::with_capacity(read.len());
    for source in read {
        match source.due_diligence {
            Some(d) => {
                found.insert(source.lot.id, d);
            }
            None if source.size.is_some() => unread.push(source.lot.id),
            None => {}
        }
        sources.push(source.lot);
    }
    if bounded {
        due_diligence::check_answer_size(&sources, &sizes)?;
    }
    // Those the store left unread (none when the sources fit one read's bound).
    if !unread.is_empty() {
        found.extend(tx.due_diligence_of(&unread)?);
    }
    let sources = sources
        .into_iter()
        .map(|lot| SourceDueDiligence {
            due_diligence: found.remove(&lot.id),
            lot,
        })
        .collect();
    Ok(due_diligence::report(sources))
}

/// `ROASTERY_EUDR_ENFORCE=ship-verified`: every `UPSTREAM` statement of every source is
/// `EXISTING_USABLE`, checked at or after `since` (any time when re-verification is off).
pub(crate) fn check_verified(
    report: &roastery_domain::due_diligence::DueDiligenceReport,
    since: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(), AppError> {
    let mut unverified = Vec::new();
    for source in &report.sources {
        let Some(d) = &source.due_diligence else {
            continue;
        };
        for st in d
            .statements
            .iter()
            .filter(|st| st.role == roastery_domain::due_diligence::StatementRole::Upstream)
        {
            let ok = st.verification.as_ref().is_some_and(|v| {
                v.result == roastery_domain::dds::VerificationResult::ExistingUsable.as_str()
                    && since.is_none_or(|since| v.checked_date >= since)
            });
            if !ok {
                unverified.push(format!(
                    "{} ({}) statement {}",
                    source.lot.lot_number, source.lot.id, st.reference_number
                ));
            }
        }
    }
    if unverified.is_empty() {
        return Ok(());
    }
    Err(roastery_domain::submission::SubmissionError::NotAllowed(format!(
        "every upstream statement must be verified EXISTING_USABLE by the EU information system \
         before shipping (EUDR enforcement is ship-verified); not verified or checked too long \
         ago: {}; nothing was shipped",
        unverified.join(", ")
    ))
    .into())
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
        self.write(Operation::SetDueDiligence, |tx| {
            let now = self.clock.now();
            // Locked: the row is what changes (its last-modified date), and two replacements of
            // one lot's due diligence take turns.
            let mut lot = tx
                .green_lot_for_update(id)?
                .ok_or(GreenLotError::NotFound(id))?;
            if tx.source_green_lots(&[id])?.is_empty() {
                return Err(not_a_source(tx, &lot)?.into());
            }
            let due_diligence = draft.clone().decide(now);
            tx.put_due_diligence(id, &due_diligence)?;
            lot.apply(|l| l.last_modified_date = now)?;
            tx.update_green_lot(&lot)?;
            let location = match lot.location_id {
                Some(l) => tx.location(l)?,
                None => None,
            };
            let details = lot.details.clone();
            Ok(GreenLotWithDueDiligence {
                view: GreenLotView {
                    lot: lot.into_inner(),
                    location,
                },
                details,
                due_diligence: Some(due_diligence),
            })
        })
    }

    /// The source lots, statements and plots behind a lot (green, roasted or blended) or an
    /// order's shipments, as one answer carries them: refused when their stored due diligence
    /// passes [`due_diligence::ANSWER_DOCUMENT_MAX`].
    pub fn due_diligence_of(&self, of: DueDiligenceOf) -> Result<DueDiligenceReport, AppError> {
        self.due_diligence_report(of, true)
    }

    /// Like [`Self::due_diligence_of`], whatever its size (for the command line, which writes
    /// a file).
    pub fn due_diligence_of_all(&self, of: DueDiligenceOf) -> Result<DueDiligenceReport, AppError> {
        self.due_diligence_report(of, false)
    }

    fn due_diligence_report(
        &self,
        of: DueDiligenceOf,
        bounded: bool,
    ) -> Result<DueDiligenceReport, AppError> {
        if let DueDiligenceOf::Order(id) = of {
            // An order that shipped from a source lot exists (its shipments are its own rows):
            // its report is one statement. Only a report without sources asks, in a
            // transaction, whether the order does.
            let report = self
                .store
                .read_report_statement(|tx| report_of(tx, &[Reference::Order(id)], bounded))?;
            if !report.sources.is_empty() {
                return Ok(report);
            }
        }
        self.store.read_report(|tx| match of {
            DueDiligenceOf::Lot(id) => {
                let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
                    .map(|kind| TypedLotRef { id, kind });
                let start = tx
                    .traced_lots(&candidates)?
                    .into_iter()
                    .next()
                    .ok_or(LotNotFound(id))?;
                report_of(tx, &[Reference::Lot(start.lot)], bounded)
            }
            DueDiligenceOf::Order(id) => {
                let report = report_of(tx, &[Reference::Order(id)], bounded)?;
                if report.sources.is_empty() {
                    tx.order(id)?.ok_or(OrderError::NotFound(id))?;
                }
                Ok(report)
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
pub(crate) fn not_a_source(
    tx: &mut impl Repos,
    lot: &GreenLot,
) -> Result<DueDiligenceError, AppError> {
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
    verified_since: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(), AppError> {
    if enforce == EudrEnforce::Off {
        return Ok(());
    }
    let starts: Vec<Reference> = lots.iter().copied().map(Reference::Lot).collect();
    let report = report_of(tx, &starts, false)?;
    if !report.complete {
        return Err(DueDiligenceError::Incomplete(report.missing).into());
    }
    if enforce == EudrEnforce::ShipVerified {
        check_verified(&report, verified_since)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::green_lot::{ImportGreenLot, TransferGreenLot, WeightInput};
    use crate::location::ImportLocation;
    use crate::testing::memory_roastery;
    use roastery_domain::Violation;
    use roastery_domain::due_diligence::{MissingReason, StatementInput};
    use roastery_domain::weight::WeightUnit;
    use roastery_ports::testing::InMemoryStore;
    use rust_decimal::Decimal;

    const PLOTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":2}}]}"#;

    fn kg(n: i64) -> WeightInput {
        WeightInput {
            amount: Decimal::from(n),
            unit: WeightUnit::Kg,
        }
    }

    fn input(statements: &[&str], plots: &str) -> DueDiligenceInput {
        DueDiligenceInput {
            country_of_production: "CO".into(),
            production_from: "2025-10-01".into(),
            production_to: "2026-02-28".into(),
            plots: plots.into(),
            suppliers: Vec::new(),
            statements: statements
                .iter()
                .map(|r| StatementInput {
                    reference_number: (*r).into(),
                    verification_number: None,
                    kind: "DDS".into(),
                    role: "OWN".into(),
                })
                .collect(),
            hs_code: None,
        }
    }

    fn set(
        app: &Roastery<InMemoryStore>,
        lot: Uuid,
        statements: &[&str],
    ) -> Result<GreenLotWithDueDiligence, AppError> {
        app.set_due_diligence(SetDueDiligence {
            green_lot_id: lot,
            input: input(statements, PLOTS),
        })
    }

    /// An imported lot at A and the lot a transfer of part of it made at B.
    fn imported_and_moved(app: &Roastery<InMemoryStore>) -> (Uuid, Uuid) {
        let [a, b] = ["A", "B"].map(|name| {
            app.import_location(ImportLocation {
                name: name.into(),
                external_id: Some(name.into()),
            })
            .unwrap()
            .id
        });
        let lot = app
            .import_green_lot(ImportGreenLot {
                name: Some("Huila".into()),
                external_id: Some("G-1".into()),
                weight: kg(10),
                ico_number: None,
                price: None,
                location_id: Some(a),
                location_external_id: None,
                projects: Vec::new(),
                details: Default::default(),
            })
            .unwrap()
            .lot
            .id;
        let moved = app
            .transfer_green_lot(TransferGreenLot {
                green_lot_id: lot,
                weight: kg(4),
                destination_location_id: b,
            })
            .unwrap()
            .destination
            .lot
            .id;
        (lot, moved)
    }

    #[test]
    fn a_transferred_lot_answers_with_its_source_and_cannot_carry_its_own() {
        let (app, _) = memory_roastery();
        let (lot, moved) = imported_and_moved(&app);
        let before = app.due_diligence_of(DueDiligenceOf::Lot(moved)).unwrap();
        assert_eq!(before.sources.len(), 1);
        assert_eq!(
            before.missing.first().map(|m| (m.id, m.reason)),
            Some((lot, MissingReason::NoDueDiligence))
        );
        let refused = set(&app, moved, &["A1"]).unwrap_err();
        assert_eq!(refused.violation(), Some(Violation::BusinessRule));
        assert!(refused.to_string().contains(&lot.to_string()), "{refused}");

        set(&app, lot, &["A1"]).unwrap();
        let after = app.due_diligence_of(DueDiligenceOf::Lot(moved)).unwrap();
        assert!(after.complete);
        assert_eq!(after.statements.len(), 1);
        assert_eq!(after.plots().unwrap().len(), 1);
    }

    #[test]
    fn a_refused_due_diligence_leaves_the_stored_one() {
        let (app, _) = memory_roastery();
        let (lot, _) = imported_and_moved(&app);
        set(&app, lot, &["KEEP"]).unwrap();
        let bow_tie = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]},"properties":{}}]}"#;
        let refused = app.set_due_diligence(SetDueDiligence {
            green_lot_id: lot,
            input: input(&["NEW"], bow_tie),
        });
        assert_eq!(
            refused.unwrap_err().violation(),
            Some(Violation::InvalidParameter)
        );
        let report = app.due_diligence_of(DueDiligenceOf::Lot(lot)).unwrap();
        let kept: Vec<&str> = report
            .statements
            .iter()
            .map(|s| s.reference_number.as_str())
            .collect();
        assert_eq!(kept, ["KEEP"]);
    }

    #[test]
    fn unknown_lots_and_orders_are_not_found() {
        let (app, _) = memory_roastery();
        for of in [
            DueDiligenceOf::Lot(Uuid::from_u128(7)),
            DueDiligenceOf::Order(Uuid::from_u128(7)),
        ] {
            let e = app.due_diligence_of(of).unwrap_err();
            assert_eq!(e.violation(), Some(Violation::NotFound));
        }
    }
}
