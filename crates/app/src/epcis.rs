//! EPCIS 2.0 export (api-decisions §16): the events of a lot's genealogy, or of what stands
//! behind an order's shipments, as an `EPCISDocument`.
//!
//! Everything is read in one read transaction, in a fixed number of queries whatever the size of
//! the genealogy: the asked lot or order, the genealogy's edges (the trace's recursive query),
//! the ledger entries touching its lots, those lots, and the source lots' due diligence. The
//! events are made in the domain ([`roastery_domain::epcis`]).

use std::collections::HashSet;

use roastery_domain::epcis::{self, EpcisBase, ExportLot, History};
use roastery_domain::ledger::{Direction, Reference};
use roastery_domain::order::OrderError;
use roastery_domain::stock::{LotKind, TypedLotRef};
use uuid::Uuid;

use crate::trace::LotNotFound;
use crate::{Repos, Roastery, Store};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::repo::*;

/// What an export is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpcisOf {
    /// A green, roasted or blended lot's genealogy in one direction.
    Lot(Uuid, Direction),
    /// What stands upstream of an order's shipments.
    Order(Uuid),
}

/// The setting holding the installation id.
const INSTALLATION_SETTING: &str = "installation_id";

impl<S: Store> Roastery<S> {
    /// Identifiers of exports start with `base` rather than `urn:roastery:{installationId}`.
    pub fn with_epcis_base(self, base: Option<EpcisBase>) -> Self {
        Self {
            epcis_base: base,
            ..self
        }
    }

    /// The installation's id, created on first use in its own short transaction. Instances
    /// starting together on a fresh database all read the one stored value.
    pub fn installation_id(&self) -> Result<Uuid, AppError> {
        let fresh = self.ids.new_id().to_string();
        let stored = self
            .store
            .write(|tx| Ok(tx.setting_or_insert(INSTALLATION_SETTING, &fresh)?))?;
        Uuid::parse_str(&stored).map_err(|e| {
            AppError::Store(StoreError::Internal(format!(
                "installation id `{stored}`: {e}"
            )))
        })
    }

    /// The base of the identifiers of exports: the configured one, else that of the
    /// installation id.
    pub fn epcis_base(&self) -> Result<EpcisBase, AppError> {
        match &self.epcis_base {
            Some(base) => Ok(base.clone()),
            None => Ok(EpcisBase::of_installation(self.installation_id()?)),
        }
    }

    /// The `EPCISDocument` (JSON text) of a lot's genealogy or of an order.
    pub fn export_epcis(&self, of: EpcisOf) -> Result<String, AppError> {
        let base = self.epcis_base()?;
        let history = self.store.read_report(|tx| history_of(tx, of))?;
        let events = epcis::events(&base, &history);
        Ok(epcis::document(&events, self.clock.now()))
    }
}

/// What an export shows, read in one transaction.
fn history_of(tx: &mut impl Repos, of: EpcisOf) -> Result<History, AppError> {
    let (start, edges) = match of {
        EpcisOf::Lot(id, direction) => {
            let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
                .map(|kind| TypedLotRef { id, kind });
            let start = tx
                .traced_lots(&candidates)?
                .into_iter()
                .next()
                .ok_or(LotNotFound(id))?
                .lot;
            (Some(start), tx.trace_edges(start, direction)?)
        }
        EpcisOf::Order(id) => {
            tx.order(id)?.ok_or(OrderError::NotFound(id))?;
            (None, tx.upstream_edges(&[Reference::Order(id)])?)
        }
    };
    let mut history = History {
        start,
        edges,
        ..History::default()
    };
    let reached = history.reached();
    let mut ids: Vec<Uuid> = reached.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    let entries = tx.ledger_entries_touching(&ids)?;
    let mut wanted: HashSet<TypedLotRef> = reached.clone();
    wanted.extend(entries.iter().map(|e| e.lot));
    let lots = tx.traced_lots(&wanted.into_iter().collect::<Vec<_>>())?;
    let mut green: Vec<Uuid> = (reached.iter())
        .filter(|l| l.kind == LotKind::Green)
        .map(|l| l.id)
        .collect();
    green.sort_unstable();
    let sources: Vec<Uuid> = tx.source_green_lots(&green)?.iter().map(|s| s.id).collect();
    history.due_diligence = if sources.is_empty() {
        Vec::new()
    } else {
        tx.due_diligence_of(&sources)?
    };
    history.entries = entries;
    history.lots = lots
        .into_iter()
        .map(|l| ExportLot {
            lot: l.lot,
            lot_number: l.lot_number,
            location_id: l.location_id,
        })
        .collect();
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use roastery_domain::Violation;

    #[test]
    fn the_installation_id_is_made_once_and_kept() {
        let (app, _) = memory_roastery();
        let first = app.installation_id().unwrap();
        let other = app.clone();
        assert_eq!(other.installation_id().unwrap(), first);
        assert_eq!(app.epcis_base().unwrap(), EpcisBase::of_installation(first));
        let configured = EpcisBase::parse("https://roastery.example/epcis").unwrap();
        let app = app.with_epcis_base(Some(configured.clone()));
        assert_eq!(app.epcis_base().unwrap(), configured);
    }

    #[test]
    fn unknown_lots_and_orders_are_not_found() {
        let (app, _) = memory_roastery();
        let id = Uuid::from_u128(7);
        let lot = app
            .export_epcis(EpcisOf::Lot(id, Direction::Upstream))
            .unwrap_err();
        assert!(lot.rule::<LotNotFound>().is_some());
        let order = app.export_epcis(EpcisOf::Order(id)).unwrap_err();
        assert_eq!(order.rule(), Some(&OrderError::NotFound(id)));
        assert_eq!(order.violation(), Some(Violation::NotFound));
    }
}
