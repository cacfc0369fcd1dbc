//! inventory.blend: creating blends from roasted lots and listing blended lots.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::{self, BlendError, BlendedLot, NewBlend};
use roastery_domain::ledger::{EntryKind, Movement, Reference};
use roastery_domain::lot_source::{self, SourceInfo};
use roastery_domain::operation::Operation;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::project;
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::text;
use uuid::Uuid;

use crate::green_lot::WeightInput;
use crate::lot_sources;
use crate::project::resolve_projects;
use crate::reference::{location_ref, location_ref_in};
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

pub use roastery_ports::view::BlendedLotView;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateBlend {
    pub name: String,
    pub location_id: Uuid,
    pub blended_date: DateTime<Utc>,
    /// Each roasted lot used and the weight taken from it, in the client's order.
    pub roasted_lots: Vec<(Uuid, WeightInput)>,
    pub projects: Vec<String>,
}

fn blended_view(tx: &mut impl Repos, lot: BlendedLot) -> Result<BlendedLotView, AppError> {
    let location = location_ref(tx, lot.location_id)?;
    Ok(BlendedLotView { lot, location })
}

impl<S: Store> Roastery<S> {
    /// Takes each used weight from its roasted lot (consuming those that reach zero) and creates
    /// the blended lot, all in one transaction.
    pub fn create_blend(&self, cmd: CreateBlend) -> Result<BlendedLotView, AppError> {
        // Shape first (400): the name, the projects and the roasted lot list.
        text::required("name", &cmd.name, text::NAME_MAX).map_err(BlendError::from)?;
        project::check_references(&cmd.projects)?;
        let ids = lot_sources::ids(&cmd.roasted_lots);
        lot_source::check_source_ids(LotKind::Roasted, &ids).map_err(BlendError::from)?;
        let id = self.ids.new_id();
        let now = self.clock.now();
        self.write(Operation::CreateBlend, |tx| {
            if tx.location(cmd.location_id)?.is_none() {
                return Err(BlendError::LocationNotFound(cmd.location_id).into());
            }
            let projects = resolve_projects(tx, &cmd.projects)?;
            let found = tx.roasted_lots_for_update(&ids)?;
            let mut lots =
                lot_sources::all_in_asked_order(LotKind::Roasted, &ids, found, |l| l.id)?;
            let lot_number = tx.next_number(LotKind::Blended.prefix())?;
            let before: Vec<_> = lots.iter().map(|l| l.stock.weight()).collect();
            let sources = lot_sources::used(&mut lots, &cmd.roasted_lots, |lot| {
                let info = SourceInfo {
                    lot_id: lot.id,
                    name: lot.name.clone(),
                    external_id: None,
                };
                (info, lot.stock_mut())
            });
            let blend = blended_lot::create_blend(
                NewBlend {
                    name: cmd.name.clone(),
                    location_id: cmd.location_id,
                    blended_date: cmd.blended_date,
                    projects,
                },
                sources,
                id,
                lot_number,
                now,
            )?;
            for lot in &mut lots {
                lot.apply(|l| l.last_modified_at = now)?;
                tx.update_roasted_lot_stock(lot)?;
            }
            // The lot as answered, its listing item rendered from it and stored with it.
            let view = blended_view(tx, blend)?;
            self.insert_blended_lot_listed(tx, &view)?;
            let blend_ref = TypedLotRef {
                id: view.lot.id,
                kind: LotKind::Blended,
            };
            let mut movements: Vec<Movement> = lots
                .iter()
                .zip(before)
                .map(|(lot, before)| Movement {
                    lot: TypedLotRef {
                        id: lot.id,
                        kind: LotKind::Roasted,
                    },
                    kind: EntryKind::BlendInput,
                    before,
                    after: lot.stock.weight(),
                    reference: Some(Reference::Lot(blend_ref)),
                })
                .collect();
            movements.push(Movement::created(
                blend_ref,
                EntryKind::BlendOutput,
                view.lot.stock.weight(),
            ));
            tx.insert_ledger_entries(&self.ledger_entries(
                Operation::CreateBlend,
                now,
                &movements,
            ))?;
            Ok(view)
        })
    }

    pub fn list_blended_lots(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<BlendedLotView>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| {
            let lots = tx.list_blended_lots(from, &page)?;
            // The page's locations in one query, not one per lot.
            let locations = tx.locations_by_id(lots.items.iter().map(|l| l.location_id))?;
            let next = lots.next;
            let items = lots
                .items
                .into_iter()
                .map(|lot| BlendedLotView {
                    location: location_ref_in(&locations, lot.location_id),
                    lot,
                })
                .collect();
            Ok(Page { items, next })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roast::SetRoastedLotWeight;
    use crate::roast::tests::{Setup, kg, roast, setup};
    use roastery_domain::lot_source::SourceError;
    use roastery_domain::stock::StockError;

    fn two_roasts(s: &Setup) -> (Uuid, Uuid) {
        let a = s
            .app
            .record_roast(roast(s, "A", "50", &[(0, "60")]))
            .unwrap();
        let b = s
            .app
            .record_roast(roast(s, "B", "8", &[(1, "10")]))
            .unwrap();
        (a.roasted_lot.lot.id, b.roasted_lot.lot.id)
    }

    fn blend(s: &Setup, used: Vec<(Uuid, WeightInput)>) -> CreateBlend {
        CreateBlend {
            name: "House blend".into(),
            location_id: s.location,
            blended_date: s.clock.now_value(),
            roasted_lots: used,
            projects: vec![],
        }
    }

    fn roasted_weight(s: &Setup, id: Uuid) -> roastery_domain::weight::Weight {
        s.app
            .store()
            .read(|tx| Ok(tx.roasted_lot(id)?.unwrap().stock.weight()))
            .unwrap()
    }

    #[test]
    fn a_blend_weighs_the_sum_of_its_parts_and_keeps_its_lineage() {
        let s = setup();
        let (a, b) = two_roasts(&s);
        let view = s
            .app
            .create_blend(blend(&s, vec![(a, kg("20")), (b, kg("8"))]))
            .unwrap();
        assert_eq!(view.lot.lot_number(), "PB-1");
        assert_eq!(view.lot.stock.weight(), kg("28").weight().unwrap());
        assert_eq!(view.lot.sources[0].lot_id, a);
        assert_eq!(view.lot.sources[1].name, "B");
        assert_eq!(roasted_weight(&s, a), kg("30").weight().unwrap());
        let b_lot = s
            .app
            .store()
            .read(|tx| Ok(tx.roasted_lot(b)?.unwrap()))
            .unwrap();
        assert!(b_lot.stock.is_consumed());
        // Lineage walks back to the green lots.
        assert_eq!(b_lot.sources[0].lot_id, s.green[1]);
        let listed = s
            .app
            .list_blended_lots(None, PageRequest::default())
            .unwrap();
        assert_eq!(listed.items, vec![view]);
    }

    #[test]
    fn a_failing_blend_changes_nothing() {
        let s = setup();
        let (a, b) = two_roasts(&s);
        let err = s
            .app
            .create_blend(blend(&s, vec![(a, kg("20")), (b, kg("9"))]))
            .unwrap_err();
        let short = |e: &BlendError| {
            matches!(e, BlendError::Source(SourceError::Stock {
                id,
                error: StockError::Insufficient { .. },
                ..
            }) if *id == b)
        };
        assert!(err.rule().is_some_and(short), "{err:?}");
        assert_eq!(roasted_weight(&s, a), kg("50").weight().unwrap());
        // Unknown lots beat negative weights; consumed lots beat negative weights.
        let err = s
            .app
            .create_blend(blend(
                &s,
                vec![(a, kg("-1")), (Uuid::from_u128(3), kg("1"))],
            ))
            .unwrap_err();
        // Loading reports the first id it cannot find, before the domain judges any weight.
        assert_eq!(
            err.rule(),
            Some(&SourceError::NotFound {
                kind: LotKind::Roasted,
                id: Uuid::from_u128(3),
            })
        );
        s.app
            .set_roasted_lot_weight(SetRoastedLotWeight {
                roasted_lot_id: b,
                weight: kg("0"),
            })
            .unwrap();
        let err = s
            .app
            .create_blend(blend(&s, vec![(a, kg("-1")), (b, kg("1"))]))
            .unwrap_err();
        let consumed = |e: &BlendError| {
            matches!(e, BlendError::Source(SourceError::Stock {
                id,
                error: StockError::Consumed,
                ..
            }) if *id == b)
        };
        assert!(err.rule().is_some_and(consumed), "{err:?}");
        let err = s.app.create_blend(blend(&s, vec![])).unwrap_err();
        assert!(
            matches!(
                err.rule(),
                Some(BlendError::Source(SourceError::Empty { .. }))
            ),
            "{err:?}"
        );
        let mut bad = blend(&s, vec![(a, kg("1"))]);
        bad.location_id = Uuid::from_u128(4);
        assert_eq!(
            s.app.create_blend(bad).unwrap_err().rule(),
            Some(&BlendError::LocationNotFound(Uuid::from_u128(4)))
        );
        assert!(
            s.app
                .list_blended_lots(None, PageRequest::default())
                .unwrap()
                .items
                .is_empty()
        );
        let ok = s.app.create_blend(blend(&s, vec![(a, kg("1"))])).unwrap();
        assert_eq!(ok.lot.lot_number(), "PB-1");
    }

    #[test]
    fn blended_lots_list_newest_first_from_a_date() {
        let s = setup();
        let (a, _) = two_roasts(&s);
        let base = s.clock.now_value();
        for (name, hours) in [("B0", 2), ("B1", 4), ("B2", 1)] {
            let mut cmd = blend(&s, vec![(a, kg("1"))]);
            cmd.name = name.into();
            cmd.blended_date = base + chrono::TimeDelta::hours(hours);
            s.app.create_blend(cmd).unwrap();
        }
        let page = s
            .app
            .list_blended_lots(
                Some(base + chrono::TimeDelta::hours(2)),
                PageRequest::default(),
            )
            .unwrap();
        let names: Vec<_> = page.items.iter().map(|v| v.lot.name.clone()).collect();
        assert_eq!(names, ["B1", "B0"]);
    }
}
