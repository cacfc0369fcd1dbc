//! inventory.roast: roasted lots, their details and curves, and the writes that create them
//! (recording a roast, setting a roasted lot's weight). Profiles (`profile.rs`) and roast log
//! import (`roast_log.rs`, recording through this module's path) have their own modules.
//!
//! Reads answer views: a stored record plus the few names and external ids of what it refers to
//! (its profile, its location), looked up in the same transaction.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::FieldPath;
use roastery_domain::ledger::{EntryKind, Movement, Reference};
use roastery_domain::lot_source::{self, SourceInfo};
use roastery_domain::operation::Operation;
use roastery_domain::page::{self, Page, PageRequest};
use roastery_domain::roast::{self, NewRoast, RoastError};
use roastery_domain::roast_curve::{self, DataPoint, RoastCurve};
use roastery_domain::roast_details::{RoastDetails, RoastDetailsDraft};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::text;
use uuid::Uuid;

use crate::green_lot::{GreenLotView, WeightInput};
use crate::lot_sources;
use crate::project::resolve_projects;
use crate::reference::{NamedLotRef, found_in_asked_order, location_ref, location_ref_in};
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

pub use roastery_ports::view::{ProfileRef, RoastedLotView};

/// The details of one roast and the lot they belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastDetailsView {
    pub roasted_lot: NamedLotRef,
    pub details: RoastDetails,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetRoastedLotWeight {
    pub roasted_lot_id: Uuid,
    pub weight: WeightInput,
}

/// A curve as the request gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurveDraft {
    pub name: String,
    pub unit: String,
    pub data_points: Vec<DataPoint>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRoast {
    pub name: String,
    pub location_id: Uuid,
    pub roasted_date: DateTime<Utc>,
    /// What came out of the roaster.
    pub weight: WeightInput,
    /// Each green lot used and the weight taken from it, in the client's order.
    pub green_lots: Vec<(Uuid, WeightInput)>,
    pub profile_id: Option<Uuid>,
    pub details: Option<RoastDetailsDraft>,
    pub curves: Vec<CurveDraft>,
    pub projects: Vec<String>,
}

/// A roast whose details and curves are checked, as both recording paths hand it over: a request
/// checks its drafts, a roast log arrives checked by its mapping.
pub(crate) struct CheckedRoast {
    pub(crate) name: String,
    pub(crate) location_id: Uuid,
    pub(crate) roasted_date: DateTime<Utc>,
    pub(crate) weight: WeightInput,
    pub(crate) green_lots: Vec<(Uuid, WeightInput)>,
    pub(crate) profile_id: Option<Uuid>,
    pub(crate) details: Option<RoastDetails>,
    pub(crate) curves: Vec<RoastCurve>,
    pub(crate) projects: Vec<String>,
    /// The roast log's `roastUUID` when imported.
    pub(crate) external_id: Option<String>,
}

/// What a roast left behind: the new roasted lot and its green lots after the roast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRoast {
    pub roasted_lot: RoastedLotView,
    pub green_lots: Vec<GreenLotView>,
}

/// Checks a roast's shape that needs no store (400): the name, the project references and the
/// green lot list; answers the green lots' ids.
pub(crate) fn check_request(
    name: &str,
    projects: &[String],
    green_lots: &[(Uuid, WeightInput)],
) -> Result<Vec<Uuid>, AppError> {
    text::required("name", name, text::NAME_MAX).map_err(RoastError::from)?;
    roastery_domain::project::check_references(projects)?;
    let ids = lot_sources::ids(green_lots);
    lot_source::check_source_ids(LotKind::Green, &ids).map_err(RoastError::from)?;
    Ok(ids)
}

pub(crate) fn roasted_view(
    tx: &mut impl Repos,
    lot: RoastedLot,
) -> Result<RoastedLotView, AppError> {
    let profile = match lot.profile_id {
        None => None,
        Some(id) => tx.profile(id)?.map(|p| ProfileRef {
            id: p.id,
            name: p.name,
            external_id: p.external_id,
        }),
    };
    let location = location_ref(tx, lot.location_id)?;
    Ok(RoastedLotView {
        lot,
        profile,
        location,
    })
}

/// [`roasted_view`] for a page of lots: the page's locations are read in one query and each
/// profile it names once, not once per lot (lots of one roastery share a few of each).
pub(crate) fn roasted_views(
    tx: &mut impl Repos,
    lots: Vec<RoastedLot>,
) -> Result<Vec<RoastedLotView>, AppError> {
    let mut profiles: HashMap<Uuid, Option<ProfileRef>> = HashMap::new();
    let locations = tx.locations_by_id(lots.iter().map(|l| l.location_id))?;
    let mut views = Vec::with_capacity(lots.len());
    for lot in lots {
        let profile = match lot.profile_id {
            None => None,
            Some(id) => match profiles.get(&id) {
                Some(known) => known.clone(),
                None => {
                    let found = tx.profile(id)?.map(|p| ProfileRef {
                        id: p.id,
                        name: p.name,
                        external_id: p.external_id,
                    });
                    profiles.insert(id, found.clone());
                    found
                }
            },
        };
        let location = location_ref_in(&locations, lot.location_id);
        views.push(RoastedLotView {
            lot,
            profile,
            location,
        });
    }
    Ok(views)
}

/// The roast made from the roast log with this `roastUUID`, with its green lots as they are now.
pub(crate) fn imported_roast(
    tx: &mut impl Repos,
    external_id: &str,
) -> Result<Option<RecordedRoast>, AppError> {
    let Some(lot) = tx.roasted_lot_by_external_id(external_id)? else {
        return Ok(None);
    };
    let ids: Vec<Uuid> = lot.sources.iter().map(|s| s.lot_id).collect();
    let mut found = tx.green_lots_by_ids(&ids)?;
    found.sort_by_key(|l| ids.iter().position(|id| *id == l.id));
    let green_lots = crate::green_lot::with_locations_of(tx, found)?;
    Ok(Some(RecordedRoast {
        roasted_lot: roasted_view(tx, lot)?,
        green_lots,
    }))
}

impl<S: Store> Roastery<S> {
    pub fn list_roasted_lots(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<RoastedLotView>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| {
            let lots = tx.list_roasted_lots(from, &page)?;
            let next = lots.next;
            let items = roasted_views(tx, lots.items)?;
            Ok(Page { items, next })
        })
    }

    pub fn roasted_lots_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<RoastedLotView>, AppError> {
        const FIELD: &str = "filter.roastedLotIds";
        page::check_by_ids(FIELD, &ids, &page)?;
        self.store.read_replica(|tx| {
            let found = tx.roasted_lots_by_ids(&ids)?;
            let page = found_in_asked_order(&ids, found, |l| l.id, &page)?;
            let next = page.next;
            let items = roasted_views(tx, page.items)?;
            Ok(Page { items, next })
        })
    }

    /// One entry per roasted lot found; a lot whose roast had no details recorded answers with
    /// every field empty.
    pub fn roast_details_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<RoastDetailsView>, AppError> {
        const FIELD: &str = "filter.roastedLotIds";
        page::check_by_ids(FIELD, &ids, &page)?;
        self.store.read_replica(|tx| {
            let lots = tx.roasted_lots_by_ids(&ids)?;
            let mut details: HashMap<Uuid, RoastDetails> =
                tx.roast_details_by_ids(&ids)?.into_iter().collect();
            let found = lots
                .into_iter()
                .map(|l| RoastDetailsView {
                    details: details.remove(&l.id).unwrap_or_default(),
                    roasted_lot: NamedLotRef {
                        id: l.id,
                        name: l.name,
                    },
                })
                .collect();
            found_in_asked_order(&ids, found, |d| d.roasted_lot.id, &page)
        })
    }

    /// The curves of one roast, in the order they were recorded; an unknown lot is not found.
    pub fn roast_curves(&self, roasted_lot_id: Uuid) -> Result<Vec<RoastCurve>, AppError> {
        self.store.read_replica(|tx| {
            if tx.roasted_lot(roasted_lot_id)?.is_none() {
                return Err(RoastError::NotFound(roasted_lot_id).into());
            }
            Ok(tx.roast_curves(roasted_lot_id)?)
        })
    }

    /// Like `setGreenLotWeight`: zero consumes; a consumed lot is final.
    pub fn set_roasted_lot_weight(
        &self,
        cmd: SetRoastedLotWeight,
    ) -> Result<RoastedLotView, AppError> {
        let _turn = self.lot_turns.take(cmd.roasted_lot_id)?;
        let now = self.clock.now();
        self.write(Operation::SetRoastedLotWeight, |tx| {
            let mut lot = tx
                .roasted_lot_for_update(cmd.roasted_lot_id)?
                .ok_or(RoastError::NotFound(cmd.roasted_lot_id))?;
            let before = lot.stock.weight();
            let weight = roastery_domain::weight::RequestedWeight::from(cmd.weight);
            let change = lot.apply(|l| l.set_weight(weight, now))??;
            // Zero again on a consumed lot changes nothing: no write, no event.
            if change != roastery_domain::stock::WeightChange::Unchanged {
                tx.update_roasted_lot_stock(&lot)?;
            }
            let movement = Movement {
                lot: TypedLotRef {
                    id: lot.id,
                    kind: LotKind::Roasted,
                },
                kind: EntryKind::SetWeight,
                before,
                after: lot.stock.weight(),
                reference: None,
            };
            tx.insert_ledger_entries(&self.ledger_entries(
                Operation::SetRoastedLotWeight,
                now,
                &[movement],
            ))?;
            roasted_view(tx, lot.into_inner())
        })
    }

    /// Records a roast: takes each used weight from its green lot (consuming lots that reach
    /// zero), creates the roasted lot with its details and curves, all in one transaction.
    pub fn record_roast(&self, cmd: RecordRoast) -> Result<RecordedRoast, AppError> {
        let ids = check_request(&cmd.name, &cmd.projects, &cmd.green_lots)?;
        let details = cmd.details.map(RoastDetails::new).transpose()?;
        let curves = cmd
            .curves
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                RoastCurve::parse(
                    &FieldPath::ROOT.key("curves").index(i),
                    &c.name,
                    &c.unit,
                    c.data_points,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        roast_curve::check_curves(&curves)?;
        self.record_checked_roast(
            CheckedRoast {
                name: cmd.name,
                location_id: cmd.location_id,
                roasted_date: cmd.roasted_date,
                weight: cmd.weight,
                green_lots: cmd.green_lots,
                profile_id: cmd.profile_id,
                details,
                curves,
                projects: cmd.projects,
                external_id: None,
            },
            &ids,
        )
    }

    /// Records a checked roast; a roast log recorded already (its `external_id`) is answered as
    /// it is. `ids` are the green lots' ids, checked.
    pub(crate) fn record_checked_roast(
        &self,
        cmd: CheckedRoast,
        ids: &[Uuid],
    ) -> Result<RecordedRoast, AppError> {
        let CheckedRoast {
            details,
            curves,
            external_id,
            ..
        } = &cmd;
        let id = self.ids.new_id();
        let now = self.clock.now();
        self.write(Operation::RecordRoast, |tx| {
            if let Some(external_id) = external_id
                && let Some(imported) = imported_roast(tx, external_id)?
            {
                return Ok(imported);
            }
            if tx.location(cmd.location_id)?.is_none() {
                return Err(RoastError::LocationNotFound(cmd.location_id).into());
            }
            if let Some(profile_id) = cmd.profile_id
                && tx.profile(profile_id)?.is_none()
            {
                return Err(RoastError::ProfileNotFound(profile_id).into());
            }
            let projects = resolve_projects(tx, &cmd.projects)?;
            let found = tx.green_lots_for_update(ids)?;
            // Again now that the green lots are locked: a concurrent import of the same log
            // that held them has committed, and what it made is the answer (not "consumed").
            if let Some(external_id) = external_id
                && let Some(imported) = imported_roast(tx, external_id)?
            {
                return Ok(imported);
            }
            let mut lots = lot_sources::all_in_asked_order(LotKind::Green, ids, found, |l| l.id)
                .map_err(RoastError::from)?;
            let lot_number = tx.next_number(LotKind::Roasted.prefix())?;
            let before: Vec<_> = lots.iter().map(|l| l.weight()).collect();
            let sources = lot_sources::used(&mut lots, &cmd.green_lots, |lot| {
                let info = SourceInfo {
                    lot_id: lot.id,
                    name: lot.name.clone(),
                    external_id: lot.external_id.clone(),
                };
                (info, lot.stock_mut())
            });
            // The domain decides: consumed sources, then the used and roasted weights.
            let roasted = roast::record_roast(
                NewRoast {
                    name: cmd.name.clone(),
                    location_id: cmd.location_id,
                    roasted_date: cmd.roasted_date,
                    weight: roastery_domain::weight::RequestedWeight::from(cmd.weight),
                    profile_id: cmd.profile_id,
                    projects,
                    external_id: external_id.clone(),
                },
                sources,
                id,
                lot_number,
                now,
            )?;
            let roasted_ref = TypedLotRef {
                id: roasted.id,
                kind: LotKind::Roasted,
            };
            let mut movements: Vec<Movement> = lots
                .iter()
                .zip(before)
                .map(|(lot, before)| Movement {
                    lot: crate::green_lot::green_ref(lot.id),
                    kind: EntryKind::RoastInput,
                    before,
                    after: lot.weight(),
                    reference: Some(Reference::Lot(roasted_ref)),
                })
                .collect();
            movements.push(Movement::created(
                roasted_ref,
                EntryKind::RoastOutput,
                roasted.stock.weight(),
            ));
            let entries = self.ledger_entries(Operation::RecordRoast, now, &movements);
            let mut written = Vec::with_capacity(lots.len());
            for mut lot in lots {
                lot.apply(|l| l.last_modified_date = now)?;
                tx.update_green_lot(&lot)?;
                written.push(lot.into_inner());
            }
            let green_lots = crate::green_lot::with_locations_of(tx, written)?;
            // The lot as answered, its listing item rendered from it and stored with it.
            let roasted_lot = roasted_view(tx, roasted)?;
            self.insert_roasted_lot_listed(tx, &roasted_lot)?;
            tx.insert_ledger_entries(&entries)?;
            if let Some(details) = details {
                tx.insert_roast_details(roasted_lot.lot.id, details)?;
            }
            if !curves.is_empty() {
                tx.insert_roast_curves(roasted_lot.lot.id, curves)?;
            }
            Ok(RecordedRoast {
                roasted_lot,
                green_lots,
            })
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::green_lot::ImportGreenLot;
    use crate::location::ImportLocation;
    use crate::testing::memory_roastery;
    use roastery_domain::Violation;
    use roastery_domain::green_lot_details::GreenLotDetails;
    use roastery_domain::lot_source::SourceError;
    use roastery_domain::page::{Limit, PageError};
    use roastery_domain::project::ProjectError;
    use roastery_domain::roast_details::{Temperature, Time};
    use roastery_domain::stock::StockError;
    use roastery_domain::weight::WeightError;
    use roastery_domain::weight::WeightUnit;
    use roastery_ports::testing::{InMemoryStore, ManualClock};
    use rust_decimal::Decimal;
    use std::str::FromStr;

    pub(crate) fn kg(s: &str) -> WeightInput {
        WeightInput {
            amount: Decimal::from_str(s).unwrap(),
            unit: WeightUnit::Kg,
        }
    }

    pub(crate) struct Setup {
        pub app: Roastery<InMemoryStore>,
        pub clock: ManualClock,
        pub location: Uuid,
        pub green: Vec<Uuid>,
    }

    /// A location and two green lots of 60 KG and 10 KG.
    pub(crate) fn setup() -> Setup {
        let (app, clock) = memory_roastery();
        let location = app
            .import_location(ImportLocation {
                name: "Roastery floor".into(),
                external_id: Some("RST-01".into()),
            })
            .unwrap()
            .id;
        let green = [("Guji", "ERP-1", "60"), ("Huila", "ERP-2", "10")]
            .into_iter()
            .map(|(name, ext, weight)| {
                app.import_green_lot(ImportGreenLot {
                    name: Some(name.into()),
                    external_id: Some(ext.into()),
                    weight: kg(weight),
                    ico_number: None,
                    price: None,
                    location_id: Some(location),
                    location_external_id: None,
                    projects: vec![],
                    details: GreenLotDetails::default(),
                })
                .unwrap()
                .lot
                .id
            })
            .collect();
        Setup {
            app,
            clock,
            location,
            green,
        }
    }

    pub(crate) fn roast(
        s: &Setup,
        name: &str,
        weight: &str,
        used: &[(usize, &str)],
    ) -> RecordRoast {
        RecordRoast {
            name: name.into(),
            location_id: s.location,
            roasted_date: s.clock.now_value(),
            weight: kg(weight),
            green_lots: used.iter().map(|(i, w)| (s.green[*i], kg(w))).collect(),
            profile_id: None,
            details: None,
            curves: vec![],
            projects: vec![],
        }
    }

    fn green_weight(s: &Setup, i: usize) -> roastery_domain::weight::Weight {
        s.app
            .store()
            .read(|tx| Ok(tx.green_lot(s.green[i])?.unwrap().stock.weight()))
            .unwrap()
    }

    pub(crate) fn violation(err: AppError) -> Violation {
        err.violation()
            .unwrap_or_else(|| panic!("not a rejection: {err}"))
    }

    #[test]
    fn a_roast_takes_green_weight_and_derives_the_weight_loss() {
        let s = setup();
        let done = s
            .app
            .record_roast(roast(&s, "Guji light", "55", &[(0, "50"), (1, "10")]))
            .unwrap();
        let lot = &done.roasted_lot.lot;
        assert_eq!(lot.lot_number(), "PR-1");
        assert_eq!(lot.stock.weight(), kg("55").weight().unwrap());
        let loss = lot.weight_loss().unwrap();
        assert_eq!(loss.amount, kg("5").weight().unwrap());
        assert_eq!(loss.percentage.to_string(), "8.33");
        assert_eq!(lot.sources[0].external_id.as_deref(), Some("ERP-1"));
        assert_eq!(
            done.roasted_lot.location.external_id.as_deref(),
            Some("RST-01")
        );
        assert_eq!(done.green_lots.len(), 2);
        assert_eq!(
            done.green_lots[0].lot.stock.weight(),
            kg("10").weight().unwrap()
        );
        assert!(done.green_lots[1].lot.is_consumed(), "all of it was used");
        assert_eq!(green_weight(&s, 0), kg("10").weight().unwrap());
    }

    #[test]
    fn a_failing_roast_changes_nothing_and_uses_no_lot_number() {
        let s = setup();
        let err = s
            .app
            .record_roast(roast(&s, "Too heavy", "61", &[(0, "50"), (1, "10")]))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&RoastError::RoastedAboveUsed {
                roasted: kg("61").weight().unwrap(),
                used: kg("60").weight().unwrap()
            })
        );
        let err = s
            .app
            .record_roast(roast(&s, "Short", "1", &[(0, "50"), (1, "11")]))
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&RoastError::Source(SourceError::Stock {
                kind: LotKind::Green,
                id: s.green[1],
                error: StockError::Insufficient {
                    available: kg("10").weight().unwrap(),
                    requested: kg("11").weight().unwrap()
                }
            }))
        );
        assert_eq!(green_weight(&s, 0), kg("60").weight().unwrap());
        assert_eq!(green_weight(&s, 1), kg("10").weight().unwrap());
        let page = s
            .app
            .list_roasted_lots(None, PageRequest::default())
            .unwrap();
        assert!(page.items.is_empty());
        let done = s
            .app
            .record_roast(roast(&s, "Ok", "9", &[(1, "10")]))
            .unwrap();
        assert_eq!(done.roasted_lot.lot.lot_number(), "PR-1");
    }

    #[test]
    fn roast_errors_rank_not_found_then_state_then_weight() {
        let s = setup();
        s.app
            .record_roast(roast(&s, "All Huila", "8", &[(1, "10")]))
            .unwrap();
        // Unknown green lot beats a negative weight.
        let mut cmd = roast(&s, "x", "-1", &[(0, "-1")]);
        cmd.green_lots.push((Uuid::from_u128(42), kg("1")));
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::Source(SourceError::NotFound {
                kind: LotKind::Green,
                id: Uuid::from_u128(42)
            }))
        );
        // A consumed green lot beats a negative used weight.
        let cmd = roast(&s, "x", "1", &[(0, "-1"), (1, "1")]);
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::Source(SourceError::Stock {
                kind: LotKind::Green,
                id: s.green[1],
                error: StockError::Consumed
            }))
        );
        // Unknown location, profile and project names are not found.
        let mut cmd = roast(&s, "x", "1", &[(0, "1")]);
        cmd.location_id = Uuid::from_u128(43);
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::LocationNotFound(Uuid::from_u128(43)))
        );
        let mut cmd = roast(&s, "x", "1", &[(0, "1")]);
        cmd.profile_id = Some(Uuid::from_u128(44));
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::ProfileNotFound(Uuid::from_u128(44)))
        );
        let mut cmd = roast(&s, "x", "1", &[(0, "1")]);
        cmd.projects = vec!["Nope".into()];
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&ProjectError::NameNotFound("Nope".into()))
        );
        // Shape errors come before any lookup.
        let mut cmd = roast(&s, "x", "1", &[]);
        cmd.location_id = Uuid::from_u128(43);
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::Source(SourceError::Empty {
                field: FieldPath::from("greenLots")
            }))
        );
        let cmd = roast(&s, "x", "1", &[(0, "1"), (0, "1")]);
        assert_eq!(
            s.app.record_roast(cmd).unwrap_err().rule(),
            Some(&RoastError::Source(SourceError::Duplicate {
                field: FieldPath::from("greenLots"),
                id: s.green[0]
            }))
        );
        assert_eq!(green_weight(&s, 0), kg("60").weight().unwrap());
    }

    #[test]
    fn details_and_curves_are_kept_with_the_roast() {
        let s = setup();
        let mut cmd = roast(&s, "Guji", "50", &[(0, "60")]);
        cmd.details = Some(RoastDetailsDraft {
            roast_technician: Some(" Ana ".into()),
            start_temperature: Some(Temperature::parse(Decimal::from(200), "CELSIUS").unwrap()),
            first_crack_time: Some(Time::parse(Decimal::from(8), "MINUTE").unwrap()),
            machine: Some("Probat".into()),
            ..RoastDetailsDraft::default()
        });
        cmd.curves = vec![CurveDraft {
            name: "BT".into(),
            unit: "CELSIUS".into(),
            data_points: (0..10_000)
                .map(|i| DataPoint {
                    time_ms: i * 100,
                    value: Decimal::new(1000 + i, 1),
                })
                .collect(),
        }];
        let a = s.app.record_roast(cmd).unwrap().roasted_lot.lot;
        let b = s
            .app
            .record_roast(roast(&s, "Huila", "9", &[(1, "10")]))
            .unwrap()
            .roasted_lot
            .lot;
        let details = s
            .app
            .roast_details_by_ids(vec![b.id, Uuid::from_u128(9), a.id], PageRequest::default())
            .unwrap();
        let ids: Vec<Uuid> = details.items.iter().map(|d| d.roasted_lot.id).collect();
        assert_eq!(ids, [b.id, a.id]);
        assert_eq!(details.items[0].details, RoastDetails::default());
        assert_eq!(
            details.items[1].details.roast_technician.as_deref(),
            Some("Ana")
        );
        assert_eq!(details.items[1].roasted_lot.name, "Guji");
        let curves = s.app.roast_curves(a.id).unwrap();
        assert_eq!(curves[0].data_points.len(), 10_000);
        assert_eq!(curves[0].data_points[9_999].value, Decimal::new(10999, 1));
        assert!(s.app.roast_curves(b.id).unwrap().is_empty());
        let err = s.app.roast_curves(Uuid::from_u128(9)).unwrap_err();
        assert_eq!(err.rule(), Some(&RoastError::NotFound(Uuid::from_u128(9))));
    }

    #[test]
    fn by_ids_reads_answer_in_the_asked_order_and_page_by_index() {
        let s = setup();
        let lots: Vec<Uuid> = (0..3)
            .map(|i| {
                s.app
                    .record_roast(roast(&s, &format!("R{i}"), "1", &[(0, "2")]))
                    .unwrap()
                    .roasted_lot
                    .lot
                    .id
            })
            .collect();
        let asked = vec![lots[2], Uuid::from_u128(1), lots[0], lots[1]];
        let first = PageRequest {
            limit: Limit::parse(Some(2)).unwrap(),
            after: None,
        };
        let page = s.app.roasted_lots_by_ids(asked.clone(), first).unwrap();
        let names: Vec<_> = page.items.iter().map(|v| v.lot.name.clone()).collect();
        assert_eq!(names, ["R2", "R0"]);
        let page = s
            .app
            .roasted_lots_by_ids(
                asked,
                PageRequest {
                    after: page.next,
                    ..first
                },
            )
            .unwrap();
        assert_eq!(page.items[0].lot.name, "R1");
        assert_eq!(page.next, None);
        let err = s
            .app
            .roasted_lots_by_ids(vec![lots[0], lots[0]], first)
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&PageError::DuplicateId {
                field: FieldPath::from("filter.roastedLotIds"),
                id: lots[0]
            })
        );
        let err = s.app.roasted_lots_by_ids(vec![], first).unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&PageError::NoIds {
                field: FieldPath::from("filter.roastedLotIds")
            })
        );
    }

    #[test]
    fn roasted_lots_list_newest_roast_first_from_a_date() {
        let s = setup();
        let base = s.clock.now_value();
        for (i, hours) in [(0, 5), (1, 1), (2, 3)] {
            let mut cmd = roast(&s, &format!("R{i}"), "1", &[(0, "1")]);
            cmd.roasted_date = base + chrono::TimeDelta::hours(hours);
            s.app.record_roast(cmd).unwrap();
        }
        let all = s
            .app
            .list_roasted_lots(None, PageRequest::default())
            .unwrap();
        let names: Vec<_> = all.items.iter().map(|v| v.lot.name.clone()).collect();
        assert_eq!(names, ["R0", "R2", "R1"]);
        let from = s
            .app
            .list_roasted_lots(
                Some(base + chrono::TimeDelta::hours(3)),
                PageRequest::default(),
            )
            .unwrap();
        let names: Vec<_> = from.items.iter().map(|v| v.lot.name.clone()).collect();
        assert_eq!(names, ["R0", "R2"]);
    }

    #[test]
    fn setting_a_roasted_lot_weight_follows_the_green_lot_rules() {
        let s = setup();
        let id = s
            .app
            .record_roast(roast(&s, "R", "50", &[(0, "60")]))
            .unwrap()
            .roasted_lot
            .lot
            .id;
        let set = |w: &str| {
            s.app.set_roasted_lot_weight(SetRoastedLotWeight {
                roasted_lot_id: id,
                weight: kg(w),
            })
        };
        assert_eq!(
            set("-1").unwrap_err().rule(),
            Some(&StockError::Weight(WeightError::Negative(
                Decimal::NEGATIVE_ONE
            )))
        );
        let lot = set("20").unwrap().lot;
        assert_eq!(lot.stock.weight(), kg("20").weight().unwrap());
        assert_eq!(
            lot.weight_loss().unwrap().amount,
            kg("10").weight().unwrap()
        );
        assert!(set("0").unwrap().lot.stock.is_consumed());
        assert!(set("0").is_ok(), "zero again changes nothing");
        // A consumed lot is final, before its new weight is judged.
        assert_eq!(set("1").unwrap_err().rule(), Some(&StockError::Consumed));
        assert_eq!(set("-1").unwrap_err().rule(), Some(&StockError::Consumed));
        let err = s
            .app
            .set_roasted_lot_weight(SetRoastedLotWeight {
                roasted_lot_id: Uuid::from_u128(5),
                weight: kg("-1"),
            })
            .unwrap_err();
        assert_eq!(err.rule(), Some(&RoastError::NotFound(Uuid::from_u128(5))));
    }
}
