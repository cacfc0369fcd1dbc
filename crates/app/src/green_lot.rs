//! inventory.green: importing green lots, moving and setting their weight, listing them and reading
//! their details.
//!
//! Every use case is one unit of work: the lots are loaded, changed by the domain and written back
//! inside one `store.write`, so concurrent transfers and weight changes never lose or create weight.
//!
//! Every write takes three steps: parse the request into domain inputs (400), load what it refers
//! to (422 `resource_not_found`), then let the domain decide. Amounts reach the domain unjudged
//! ([`RequestedWeight`], [`RequestedPrice`]) and each transition judges them after its state and
//! conflict rules, so errors rank as api-decisions §2 says without any use case holding one back.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::due_diligence::{self, DueDiligence};
use roastery_domain::green_lot::{
    Destination, GreenLot, GreenLotDraft, GreenLotError, ImportReferences, TransferredTo,
};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::ledger::{EntryKind, Movement, Reference};
use roastery_domain::location::LocationError;
use roastery_domain::operation::Operation;
use roastery_domain::page::{self, Page, PageRequest};
use roastery_domain::price::{Currency, RequestedPrice};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::text;
use roastery_domain::weight::{RequestedWeight, Weight, WeightUnit};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::project::resolve_projects;
use crate::{Repos, Roastery, Store};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;

pub use roastery_ports::view::GreenLotView;

/// A weight as the request gave it (the unit already known to be `KG` or `LBS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightInput {
    pub amount: Decimal,
    pub unit: WeightUnit,
}

impl WeightInput {
    pub fn weight(self) -> Result<Weight, AppError> {
        Ok(Weight::new(self.amount, self.unit)?)
    }
}

/// Handed to the domain unjudged: the transition ranks its own rules first.
impl From<WeightInput> for RequestedWeight {
    fn from(input: WeightInput) -> Self {
        Self {
            amount: input.amount,
            unit: input.unit,
        }
    }
}

/// A price as the request gave it (the currency already known to be ISO 4217).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriceInput {
    pub amount: Decimal,
    pub currency: Currency,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportGreenLot {
    pub name: Option<String>,
    pub external_id: Option<String>,
    pub weight: WeightInput,
    pub ico_number: Option<String>,
    pub price: Option<PriceInput>,
    pub location_id: Option<Uuid>,
    /// `location.externalId`.
    pub location_external_id: Option<String>,
    /// Names of existing projects.
    pub projects: Vec<String>,
    pub details: GreenLotDetails,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferGreenLot {
    pub green_lot_id: Uuid,
    pub weight: WeightInput,
    pub destination_location_id: Uuid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetGreenLotWeight {
    pub green_lot_id: Uuid,
    pub weight: WeightInput,
}

/// What a transfer left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotTransfer {
    pub source: GreenLotView,
    pub destination: GreenLotView,
}

impl<S: Store> Roastery<S> {
    /// Imports a green lot in the three steps of every write: parse the request (400), load
    /// what it refers to (422 `resource_not_found`), decide in the domain (the other 422s in
    /// their order).
    pub fn import_green_lot(&self, cmd: ImportGreenLot) -> Result<GreenLotView, AppError> {
        // 1. Parse: missing, blank or too long texts, malformed details, project names, the
        //    location's external id, a price beyond any real one.
        let draft = GreenLotDraft::parse(
            cmd.name.as_deref(),
            cmd.external_id.as_deref(),
            cmd.ico_number.as_deref(),
            cmd.details.clone(),
        )?;
        roastery_domain::project::check_references(&cmd.projects)?;
        let location_external_id = cmd
            .location_external_id
            .as_deref()
            .map(|e| text::required("location.externalId", e, text::EXTERNAL_ID_MAX))
            .transpose()
            .map_err(GreenLotError::from)?;
        if let Some(price) = &cmd.price {
            roastery_domain::price::check_bound(price.amount)?;
        }
        let weight = RequestedWeight::from(cmd.weight);
        let price = cmd.price.map(|p| RequestedPrice {
            amount: p.amount,
            currency: p.currency,
        });
        let external_id = draft.external_id.clone();
        let id = self.ids.new_id();
        let now = self.clock.now();
        let result = self.write(Operation::ImportGreenLot, |tx| {
            // 2. Load: each form of the location is looked up, so not-found ranks before the
            //    conflict of giving both.
            let by_id = cmd
                .location_id
                .map(|location_id| {
                    tx.location(location_id)?
                        .ok_or_else(|| AppError::from(LocationError::NotFound(location_id)))
                })
                .transpose()?;
            let by_external_id = location_external_id
                .as_ref()
                .map(|external| {
                    tx.location_by_external_id(external)?.ok_or_else(|| {
                        AppError::from(LocationError::ExternalIdNotFound(external.clone()))
                    })
                })
                .transpose()?;
            let references = ImportReferences {
                location_given_twice: by_id.is_some() && by_external_id.is_some(),
                location_id: by_id.as_ref().or(by_external_id.as_ref()).map(|l| l.id),
                projects: resolve_projects(tx, &cmd.projects)?,
                external_id_taken: tx.green_lot_by_external_id(&external_id)?.is_some(),
            };
            let location = by_id.or(by_external_id);
            // 3. Decide.
            let lot = GreenLot::decide_import(
                draft.clone(),
                references,
                weight,
                price,
                (id, tx.next_number("PG")?),
                now,
            )?;
            self.insert_green_lot_listed(tx, &lot)?;
            let movement = Movement::created(green_ref(lot.id), EntryKind::Import, lot.weight());
            tx.insert_ledger_entries(&self.ledger_entries(
                Operation::ImportGreenLot,
                now,
                &[movement],
            ))?;
            Ok(GreenLotView { lot, location })
        });
        match result {
            // A unique key refused the write after the checks above passed. It is the client's
            // duplicate only if a concurrent import of the same external id won the race; any
            // other key stays the store's conflict.
            Err(AppError::Store(StoreError::Duplicate(cause))) => {
                let taken = self
                    .store
                    .read(|tx| Ok(tx.green_lot_by_external_id(&external_id)?.is_some()))?;
                Err(if taken {
                    GreenLotError::DuplicateExternalId(external_id).into()
                } else {
                    AppError::Store(StoreError::Duplicate(cause))
                })
            }
            other => other,
        }
    }

    pub fn transfer_green_lot(&self, cmd: TransferGreenLot) -> Result<GreenLotTransfer, AppError> {
        let _turn = self.lot_turns.take(cmd.green_lot_id)?;
        self.write(Operation::TransferGreenLotToLocation, |tx| {
            let now = self.clock.now();
            let (mut source, mut target) = tx
                .green_lot_to_transfer(cmd.green_lot_id, cmd.destination_location_id)?
                .ok_or(GreenLotError::NotFound(cmd.green_lot_id))?;
            let destination = tx
                .location(cmd.destination_location_id)?
                .ok_or(LocationError::NotFound(cmd.destination_location_id))?;
            // Judged by the domain after its state and conflict rules.
            let weight = RequestedWeight::from(cmd.weight);
            let source_before = source.weight();
            let target_before = target.as_ref().map(|t| t.weight());
            let transfer = match target.as_mut().filter(|t| t.id != source.id) {
                Some(target) => source.apply(|s| {
                    target.apply(|t| s.transfer(weight, Destination::Merge(t), now))
                })???,
                None => {
                    // Drawn before the domain may refuse the transfer: the rollback returns it.
                    let lot_number = tx.next_number("PG")?;
                    let new = Destination::New {
                        location_id: destination.id,
                        id: self.ids.new_id(),
                        lot_number,
                    };
                    source.apply(|s| s.transfer(weight, new, now))??
                }
            };
            let destination_lot = match transfer.destination {
                TransferredTo::Created(lot) => {
                    self.update_green_lot_listed(tx, &source)?;
                    self.insert_green_lot_listed(tx, &lot)?;
                    *lot
                }
                TransferredTo::Merged(_) => {
                    let target = target.ok_or_else(|| {
                        StoreError::Internal("merged into a lot that was not loaded".into())
                    })?;
                    // Rows are written in id order, so that two opposite transfers between the
                    // same lots do not wait on each other's locks.
                    let (first, second) = if source.id < target.id {
                        (&source, &target)
                    } else {
                        (&target, &source)
                    };
                    self.update_green_lot_listed(tx, first)?;
                    self.update_green_lot_listed(tx, second)?;
                    target.into_inner()
                }
            };
            let destination_before = match target_before {
                Some(w) if destination_lot.id != source.id => w,
                _ => Weight::zero(destination_lot.weight().unit()),
            };
            let movements = [
                Movement {
                    lot: green_ref(source.id),
                    kind: EntryKind::TransferOut,
                    before: source_before,
                    after: source.weight(),
                    reference: Some(Reference::Lot(green_ref(destination_lot.id))),
                },
                Movement {
                    lot: green_ref(destination_lot.id),
                    kind: EntryKind::TransferIn,
                    before: destination_before,
                    after: destination_lot.weight(),
                    reference: Some(Reference::Lot(green_ref(source.id))),
                },
            ];
            tx.insert_ledger_entries(&self.ledger_entries(
                Operation::TransferGreenLotToLocation,
                now,
                &movements,
            ))?;
            let source_location = match source.location_id {
                Some(id) => tx.location(id)?,
                None => None,
            };
            Ok(GreenLotTransfer {
                source: GreenLotView {
                    lot: source.into_inner(),
                    location: source_location,
                },
                destination: GreenLotView {
                    lot: destination_lot,
                    location: Some(destination),
                },
            })
        })
    }

    pub fn set_green_lot_weight(&self, cmd: SetGreenLotWeight) -> Result<GreenLotView, AppError> {
        let _turn = self.lot_turns.take(cmd.green_lot_id)?;
        self.write(Operation::SetGreenLotWeight, |tx| {
            let now = self.clock.now();
            let mut lot = tx
                .green_lot_for_update(cmd.green_lot_id)?
                .ok_or(GreenLotError::NotFound(cmd.green_lot_id))?;
            let before = lot.weight();
            let change = lot.apply(|l| l.set_weight(RequestedWeight::from(cmd.weight), now))??;
            // Zero again on a consumed lot changes nothing: no write, no event.
            if change != roastery_domain::stock::WeightChange::Unchanged {
                self.update_green_lot_listed(tx, &lot)?;
            }
            let movement = Movement {
                lot: green_ref(lot.id),
                kind: EntryKind::SetWeight,
                before,
                after: lot.weight(),
                reference: None,
            };
            tx.insert_ledger_entries(&self.ledger_entries(
                Operation::SetGreenLotWeight,
                now,
                &[movement],
            ))?;
            let location = match lot.location_id {
                Some(id) => tx.location(id)?,
                None => None,
            };
            Ok(GreenLotView {
                lot: lot.into_inner(),
                location,
            })
        })
    }

    /// Lots modified at or after `modified_from`, newest registration first.
    pub fn list_green_lots(
        &self,
        modified_from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<GreenLotView>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| {
            let lots = tx.list_green_lots(modified_from, &page)?;
            with_locations(tx, lots)
        })
    }

    /// The details of the lots asked for, in the asked order; unknown ids are left out.
    pub fn green_lot_details_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<(Uuid, GreenLotDetails, Option<DueDiligence>)>, AppError> {
        let start = page::check_by_ids("filter.greenLotIds", &ids, &page)?;
        self.store.read_replica(|tx| {
            let lots = tx.green_lots_by_ids(&ids)?;
            let found: Vec<(Uuid, GreenLotDetails)> =
                lots.into_iter().map(|l| (l.id, l.details)).collect();
            // Page first; then read the due diligence of the page's lots only, and end the page
            // early where it would pass the bound of one answer (its cursor goes on from there).
            let mut found = Page::from_found(found, &page)?;
            let page_ids: Vec<Uuid> = found.items.iter().map(|(id, _)| *id).collect();
            let sizes: HashMap<Uuid, u64> =
                tx.due_diligence_sizes(&page_ids)?.into_iter().collect();
            let kept = due_diligence::page_length(
                page_ids
                    .iter()
                    .map(|id| sizes.get(id).copied().unwrap_or(0)),
                page_ids.len(),
            );
            if kept < found.items.len() {
                found.items.truncate(kept);
                let end = start.saturating_add(kept);
                found.next = Some(page::Position::Index(
                    u32::try_from(end).unwrap_or(u32::MAX),
                ));
            }
            let kept_ids = page_ids.get(..kept).unwrap_or(&[]);
            let mut due_diligence: HashMap<Uuid, DueDiligence> =
                tx.due_diligence_of(kept_ids)?.into_iter().collect();
            Ok(found.map(|(id, details)| {
                let d = due_diligence.remove(&id);
                (id, details, d)
            }))
        })
    }
}

pub(crate) fn green_ref(id: Uuid) -> TypedLotRef {
    TypedLotRef {
        id,
        kind: LotKind::Green,
    }
}

/// Attaches each lot's location, reading the locations in one query.
pub(crate) fn with_locations_of(
    tx: &mut impl Repos,
    lots: Vec<GreenLot>,
) -> Result<Vec<GreenLotView>, AppError> {
    let locations = tx.locations_by_id(lots.iter().filter_map(|l| l.location_id))?;
    Ok(lots
        .into_iter()
        .map(|lot| GreenLotView {
            location: lot.location_id.and_then(|id| locations.get(&id).cloned()),
            lot,
        })
        .collect())
}

/// Attaches each lot's location, reading the locations in one query.
fn with_locations(
    tx: &mut impl Repos,
    lots: Page<GreenLot>,
) -> Result<Page<GreenLotView>, AppError> {
    let next = lots.next;
    Ok(Page {
        items: with_locations_of(tx, lots.items)?,
        next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::ImportLocation;
    use crate::project::ImportProject;
    use crate::testing::memory_roastery;
    use chrono::TimeDelta;
    use roastery_domain::FieldPath;
    use roastery_domain::Violation;
    use roastery_domain::green_lot_details::GreenLotDetailsError;
    use roastery_domain::location::Location;
    use roastery_domain::location::LocationError;
    use roastery_domain::page::{Limit, Position};
    use roastery_domain::price::PriceError;
    use roastery_domain::project::ProjectError;
    use roastery_domain::stock::StockError;
    use roastery_domain::text::TextError;
    use roastery_domain::weight::WeightError;
    use roastery_ports::testing::{InMemoryStore, ManualClock};
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn kg(s: &str) -> WeightInput {
        WeightInput {
            amount: dec(s),
            unit: WeightUnit::Kg,
        }
    }

    fn lbs(s: &str) -> WeightInput {
        WeightInput {
            amount: dec(s),
            unit: WeightUnit::Lbs,
        }
    }

    fn import(external_id: &str, weight: WeightInput) -> ImportGreenLot {
        ImportGreenLot {
            name: Some("Guji Natural".into()),
            external_id: Some(external_id.into()),
            weight,
            ico_number: Some("010-0001-0042".into()),
            price: Some(PriceInput {
                amount: dec("5.2"),
                currency: Currency::parse("EUR").unwrap(),
            }),
            location_id: None,
            location_external_id: None,
            projects: Vec::new(),
            details: GreenLotDetails {
                grade: Some("G1".into()),
                countries_of_origin: vec!["ETH".into()],
                ..Default::default()
            },
        }
    }

    fn location(app: &Roastery<InMemoryStore>, name: &str, external_id: &str) -> Location {
        app.import_location(ImportLocation {
            name: name.into(),
            external_id: Some(external_id.into()),
        })
        .unwrap()
    }

    fn violation(result: Result<impl std::fmt::Debug, AppError>) -> Violation {
        result.unwrap_err().violation().expect("a rejected request")
    }

    /// Whether an error is the exact domain error expected: tables of cases whose errors have
    /// different types hold one of these each.
    type Rule = Box<dyn Fn(&AppError) -> bool>;

    fn rule<E: roastery_domain::BrokenRule + PartialEq>(expected: E) -> Rule {
        Box::new(move |err| err.rule::<E>() == Some(&expected))
    }

    fn weight(amount: &str) -> Weight {
        Weight::new(dec(amount), WeightUnit::Kg).unwrap()
    }

    fn all_lots(app: &Roastery<InMemoryStore>) -> Vec<GreenLot> {
        app.store()
            .read(|tx| Ok(tx.list_green_lots(None, &PageRequest::default())?))
            .unwrap()
            .items
    }

    struct Setup {
        app: Roastery<InMemoryStore>,
        clock: ManualClock,
        hamburg: Location,
        berlin: Location,
    }

    fn setup() -> Setup {
        let (app, clock) = memory_roastery();
        let hamburg = location(&app, "Hamburg", "wh-hh");
        let berlin = location(&app, "Berlin", "wh-b");
        Setup {
            app,
            clock,
            hamburg,
            berlin,
        }
    }

    #[test]
    fn a_locked_lot_is_never_replaced_by_another_lot_and_nothing_is_written() {
        use roastery_ports::lock::LockedRow;
        let Setup { app, hamburg, .. } = setup();
        let mut lots = Vec::new();
        for external_id in ["LOCK-A", "LOCK-B"] {
            let mut cmd = import(external_id, kg("10"));
            cmd.location_id = Some(hamburg.id);
            lots.push(app.import_green_lot(cmd).unwrap().lot);
        }
        let (a, b) = (lots[0].clone(), lots[1].clone());
        let result: Result<(), AppError> = app.store().write(|tx| {
            let mut lot = tx.green_lot_for_update(a.id)?.expect("stored");
            lot.put(b.clone())?;
            tx.update_green_lot(&lot)?;
            Ok(())
        });
        let Err(AppError::Store(StoreError::Internal(message))) = result else {
            panic!("{result:?}");
        };
        assert!(message.contains("is locked"), "{message}");
        let stored = app.store().read(|tx| Ok(tx.green_lot(a.id)?)).unwrap();
        assert_eq!(stored, Some(a));
    }

    #[test]
    fn imports_are_numbered_without_gaps_and_resolve_location_and_projects() {
        let s = setup();
        s.app
            .import_project(ImportProject {
                name: "Direct trade".into(),
                description: None,
            })
            .unwrap();
        let failed = s.app.import_green_lot(import("erp-0", kg("-1")));
        assert_eq!(violation(failed), Violation::InvalidWeight);
        let first = s
            .app
            .import_green_lot(ImportGreenLot {
                location_external_id: Some("wh-hh".into()),
                projects: vec!["Direct trade".into()],
                ..import("erp-1", kg("60.1234565"))
            })
            .unwrap();
        assert_eq!(first.lot.number(), "PG-1");
        assert_eq!(first.lot.weight().amount(), dec("60.123456"));
        assert_eq!(first.location.as_ref().map(|l| l.id), Some(s.hamburg.id));
        assert_eq!(first.lot.projects[0].name, "Direct trade");
        let second = s
            .app
            .import_green_lot(ImportGreenLot {
                location_id: Some(s.berlin.id),
                ..import("erp-2", lbs("10"))
            })
            .unwrap();
        assert_eq!(second.lot.number(), "PG-2");
        assert_eq!(second.lot.location_id, Some(s.berlin.id));
    }

    /// Ids that start over when told to, so the next import reuses a stored lot's id.
    #[derive(Default)]
    struct RewindableIds(std::sync::atomic::AtomicU64);

    impl RewindableIds {
        fn rewind(&self) {
            self.0.store(0, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl roastery_ports::IdGen for RewindableIds {
        fn new_id(&self) -> Uuid {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0000 | u128::from(n))
        }

        fn random_token(&self, bytes: usize) -> String {
            "t".repeat(bytes)
        }
    }

    /// A unique key other than the external id refusing the import is the store's conflict, not
    /// the client's duplicate external id, and nothing is written.
    #[test]
    fn only_a_taken_external_id_is_reported_as_one() {
        let ids = std::sync::Arc::new(RewindableIds::default());
        let app = Roastery::new(
            InMemoryStore::default(),
            std::sync::Arc::new(ManualClock::default()),
            ids.clone(),
        );
        app.import_green_lot(import("erp-1", kg("1"))).unwrap();
        ids.rewind();
        let err = app.import_green_lot(import("erp-2", kg("1"))).unwrap_err();
        assert!(
            matches!(err, AppError::Store(StoreError::Duplicate(_))),
            "{err:?}"
        );
        assert_eq!(err.rule::<GreenLotError>(), None);
        assert_eq!(all_lots(&app).len(), 1);
    }

    #[test]
    fn bad_imports_get_their_code_and_store_nothing() {
        let s = setup();
        s.app.import_green_lot(import("erp-1", kg("1"))).unwrap();
        let unknown = Uuid::from_u128(0xdead);
        let cases: [(_, Rule); 12] = [
            (
                import("erp-1", kg("1")),
                rule(GreenLotError::DuplicateExternalId("erp-1".into())),
            ),
            (
                import("erp-2", kg("0")),
                rule(GreenLotError::ZeroImportWeight(weight("0"))),
            ),
            (
                import("erp-2", kg("-0.5")),
                rule(GreenLotError::Weight(WeightError::Negative(dec("-0.5")))),
            ),
            (
                ImportGreenLot {
                    price: Some(PriceInput {
                        amount: dec("-1"),
                        currency: Currency::parse("EUR").unwrap(),
                    }),
                    ..import("erp-2", kg("1"))
                },
                rule(GreenLotError::Price(PriceError::Negative(dec("-1")))),
            ),
            (
                ImportGreenLot {
                    name: Some("  ".into()),
                    ..import("erp-1", kg("-1"))
                },
                rule(GreenLotError::Text(TextError::Empty {
                    field: FieldPath::from("name"),
                })),
            ),
            (
                ImportGreenLot {
                    name: None,
                    ..import("erp-2", kg("1"))
                },
                rule(GreenLotError::Missing {
                    field: FieldPath::from("name"),
                }),
            ),
            (
                ImportGreenLot {
                    location_id: Some(unknown),
                    ..import("erp-2", kg("1"))
                },
                rule(LocationError::NotFound(unknown)),
            ),
            (
                ImportGreenLot {
                    location_external_id: Some("nowhere".into()),
                    ..import("erp-2", kg("1"))
                },
                rule(LocationError::ExternalIdNotFound("nowhere".into())),
            ),
            (
                ImportGreenLot {
                    location_id: Some(s.hamburg.id),
                    location_external_id: Some("wh-b".into()),
                    ..import("erp-2", kg("1"))
                },
                rule(GreenLotError::LocationGivenTwice),
            ),
            (
                ImportGreenLot {
                    location_id: Some(unknown),
                    location_external_id: Some("wh-b".into()),
                    ..import("erp-1", kg("-1"))
                },
                rule(LocationError::NotFound(unknown)),
            ),
            (
                ImportGreenLot {
                    projects: vec!["No such project".into()],
                    ..import("erp-2", kg("1"))
                },
                rule(ProjectError::NameNotFound("No such project".into())),
            ),
            (
                ImportGreenLot {
                    details: GreenLotDetails {
                        countries_of_origin: vec!["ET".into()],
                        ..Default::default()
                    },
                    ..import("erp-2", kg("1"))
                },
                rule(GreenLotError::Details(
                    GreenLotDetailsError::UnknownCountry {
                        field: FieldPath::from("details.countriesOfOrigin"),
                        code: "ET".into(),
                    },
                )),
            ),
        ];
        for (cmd, expected) in cases {
            let debug = format!("{cmd:?}");
            let err = s.app.import_green_lot(cmd).unwrap_err();
            assert!(expected(&err), "{debug}: {err:?}");
        }
        assert_eq!(all_lots(&s.app).len(), 1);
        let next = s.app.import_green_lot(import("erp-2", kg("1"))).unwrap();
        assert_eq!(next.lot.number(), "PG-2");
    }

    #[test]
    fn transfers_create_then_merge_and_moving_everything_consumes_the_source() {
        let s = setup();
        let imported = s
            .app
            .import_green_lot(ImportGreenLot {
                location_id: Some(s.hamburg.id),
                ..import("erp-1", kg("60"))
            })
            .unwrap()
            .lot;
        s.clock.advance(TimeDelta::seconds(10));
        let moved = s
            .app
            .transfer_green_lot(TransferGreenLot {
                green_lot_id: imported.id,
                weight: kg("20.5"),
                destination_location_id: s.berlin.id,
            })
            .unwrap();
        assert_eq!(moved.source.lot.weight().amount(), dec("39.5"));
        assert_eq!(moved.source.lot.last_modified_date, s.clock.now_value());
        assert_eq!(moved.destination.lot.number(), "PG-2");
        assert_eq!(moved.destination.lot.weight().amount(), dec("20.5"));
        assert_eq!(moved.destination.lot.origin_id, imported.id);
        assert_eq!(moved.destination.location.as_ref(), Some(&s.berlin));
        assert_eq!(moved.destination.lot.external_id, None);

        // Moving it back merges into the imported lot; all of it consumes the Berlin lot.
        let back = s
            .app
            .transfer_green_lot(TransferGreenLot {
                green_lot_id: moved.destination.lot.id,
                weight: kg("20.5"),
                destination_location_id: s.hamburg.id,
            })
            .unwrap();
        assert_eq!(back.destination.lot.id, imported.id);
        assert_eq!(back.destination.lot.weight().amount(), dec("60"));
        assert!(back.source.lot.is_consumed());
        assert_eq!(back.source.lot.weight().amount(), dec("0"));

        // A consumed lot is never merged into: a new lot is created beside it.
        let again = s
            .app
            .transfer_green_lot(TransferGreenLot {
                green_lot_id: imported.id,
                weight: lbs("22.046226"),
                destination_location_id: s.berlin.id,
            })
            .unwrap();
        assert_eq!(again.destination.lot.number(), "PG-3");
        assert_eq!(again.destination.lot.weight().unit(), WeightUnit::Kg);
        assert_eq!(again.destination.lot.weight().amount(), dec("10"));
        assert_eq!(all_lots(&s.app).len(), 3);
    }

    #[test]
    fn bad_transfers_get_their_code_and_change_nothing() {
        let s = setup();
        let lot = s
            .app
            .import_green_lot(ImportGreenLot {
                location_id: Some(s.hamburg.id),
                ..import("erp-1", kg("10"))
            })
            .unwrap()
            .lot;
        let empty = s
            .app
            .import_green_lot(ImportGreenLot {
                location_id: Some(s.hamburg.id),
                ..import("erp-2", kg("1"))
            })
            .unwrap()
            .lot;
        s.app
            .set_green_lot_weight(SetGreenLotWeight {
                green_lot_id: empty.id,
                weight: kg("0"),
            })
            .unwrap();
        let before = all_lots(&s.app);
        let t = |id: Uuid, weight: WeightInput, to: Uuid| TransferGreenLot {
            green_lot_id: id,
            weight,
            destination_location_id: to,
        };
        let unknown = Uuid::from_u128(0xdead);
        let same_location = GreenLotError::SameLocation {
            id: lot.id,
            location_id: s.hamburg.id,
        };
        let cases: [(_, Rule); 9] = [
            (
                t(unknown, kg("1"), s.berlin.id),
                rule(GreenLotError::NotFound(unknown)),
            ),
            (
                t(lot.id, kg("1"), unknown),
                rule(LocationError::NotFound(unknown)),
            ),
            (
                t(empty.id, kg("1"), s.berlin.id),
                rule(GreenLotError::Consumed(empty.id)),
            ),
            (
                t(empty.id, kg("-1"), s.hamburg.id),
                rule(GreenLotError::Consumed(empty.id)),
            ),
            (
                t(lot.id, kg("1"), s.hamburg.id),
                rule(same_location.clone()),
            ),
            (
                t(lot.id, kg("-1"), s.hamburg.id),
                rule(same_location.clone()),
            ),
            (
                t(lot.id, kg("-1"), s.berlin.id),
                rule(GreenLotError::Weight(WeightError::Negative(dec("-1")))),
            ),
            (
                t(lot.id, kg("0"), s.berlin.id),
                rule(GreenLotError::ZeroTransfer(lot.id)),
            ),
            (
                t(lot.id, kg("10.000001"), s.berlin.id),
                rule(GreenLotError::Insufficient {
                    id: lot.id,
                    available: weight("10"),
                    requested: weight("10.000001"),
                }),
            ),
        ];
        for (cmd, expected) in cases {
            let debug = format!("{cmd:?}");
            let err = s.app.transfer_green_lot(cmd).unwrap_err();
            assert!(expected(&err), "{debug}: {err:?}");
        }
        assert_eq!(all_lots(&s.app), before);
    }

    #[test]
    fn set_weight_replaces_consumes_and_a_consumed_lot_is_final() {
        let s = setup();
        let lot = s
            .app
            .import_green_lot(import("erp-1", kg("10")))
            .unwrap()
            .lot;
        let set = |weight| {
            s.app.set_green_lot_weight(SetGreenLotWeight {
                green_lot_id: lot.id,
                weight,
            })
        };
        let negative = GreenLotError::Stock(StockError::Weight(WeightError::Negative(dec("-1"))));
        assert_eq!(set(kg("-1")).unwrap_err().rule(), Some(&negative));
        s.clock.advance(TimeDelta::seconds(5));
        let replaced = set(lbs("10")).unwrap().lot;
        assert_eq!(replaced.weight().amount(), dec("4.535924"));
        assert_eq!(replaced.last_modified_date, s.clock.now_value());
        s.clock.advance(TimeDelta::seconds(5));
        let consumed = set(kg("0")).unwrap().lot;
        assert_eq!(consumed.consumed_date(), Some(s.clock.now_value()));
        s.clock.advance(TimeDelta::seconds(5));
        let unchanged = set(kg("0")).unwrap().lot;
        assert_eq!(unchanged, consumed);
        // Consumed is final, and that state rule outranks the negative weight.
        let consumed = GreenLotError::Consumed(lot.id);
        assert_eq!(set(kg("1")).unwrap_err().rule(), Some(&consumed));
        assert_eq!(set(kg("-1")).unwrap_err().rule(), Some(&consumed));
        let unknown = s.app.set_green_lot_weight(SetGreenLotWeight {
            green_lot_id: Uuid::from_u128(0xdead),
            weight: kg("1"),
        });
        assert_eq!(
            unknown.unwrap_err().rule(),
            Some(&GreenLotError::NotFound(Uuid::from_u128(0xdead)))
        );
    }

    #[test]
    fn listing_filters_on_last_modified_and_pages_newest_registration_first() {
        let s = setup();
        let mut ids = Vec::new();
        for i in 0..7 {
            let lot = s
                .app
                .import_green_lot(import(&format!("erp-{i}"), kg("1")))
                .unwrap()
                .lot;
            ids.push(lot.id);
            s.clock.advance(TimeDelta::seconds(1));
        }
        let cutoff = s.clock.now_value();
        // Touching the oldest lot brings it into the filtered list, at its registration place.
        s.app
            .set_green_lot_weight(SetGreenLotWeight {
                green_lot_id: ids[0],
                weight: kg("2"),
            })
            .unwrap();
        let mut page = PageRequest {
            limit: Limit::parse(Some(3)).unwrap(),
            after: None,
        };
        let mut seen = Vec::new();
        loop {
            let result = s.app.list_green_lots(None, page).unwrap();
            seen.extend(result.items.iter().map(|v| v.lot.id));
            match result.next {
                Some(next) => page.after = Some(next),
                None => break,
            }
        }
        let newest_first: Vec<Uuid> = ids.iter().rev().copied().collect();
        assert_eq!(seen, newest_first);
        let modified = s
            .app
            .list_green_lots(Some(cutoff), PageRequest::default())
            .unwrap();
        assert_eq!(
            modified.items.iter().map(|v| v.lot.id).collect::<Vec<_>>(),
            [ids[0]]
        );
        let foreign = PageRequest {
            after: Some(Position::Index(1)),
            ..PageRequest::default()
        };
        assert_eq!(
            violation(s.app.list_green_lots(None, foreign)),
            Violation::InvalidParameter
        );
    }

    #[test]
    fn details_are_read_in_the_asked_order_skipping_unknown_ids() {
        let s = setup();
        let a = s.app.import_green_lot(import("a", kg("1"))).unwrap().lot;
        let b = s.app.import_green_lot(import("b", kg("1"))).unwrap().lot;
        let unknown = Uuid::from_u128(0xdead);
        let page = s
            .app
            .green_lot_details_by_ids(vec![b.id, unknown, a.id], PageRequest::default())
            .unwrap();
        assert_eq!(
            page.items,
            vec![
                (b.id, b.details.clone(), None),
                (a.id, a.details.clone(), None)
            ]
        );
        assert_eq!(page.items[0].1.countries_of_origin, ["ETH"]);
        let bad = [vec![], vec![a.id, a.id], vec![unknown; 101]];
        for ids in bad {
            let result = s.app.green_lot_details_by_ids(ids, PageRequest::default());
            assert_eq!(violation(result), Violation::InvalidParameter);
        }
    }

    #[test]
    fn concurrent_transfers_conserve_the_imported_weight() {
        let s = setup();
        let lot = s
            .app
            .import_green_lot(ImportGreenLot {
                location_id: Some(s.hamburg.id),
                ..import("erp-1", kg("100"))
            })
            .unwrap()
            .lot;
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let app = s.app.clone();
                let (from, to) = if i % 2 == 0 {
                    (s.hamburg.id, s.berlin.id)
                } else {
                    (s.berlin.id, s.hamburg.id)
                };
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let source = app
                            .store()
                            .read(|tx| Ok(tx.active_green_lot_at(lot.id, from)?))
                            .unwrap();
                        if let Some(source) = source {
                            let _ = app.transfer_green_lot(TransferGreenLot {
                                green_lot_id: source.id,
                                weight: kg("0.333333"),
                                destination_location_id: to,
                            });
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let total: Decimal = all_lots(&s.app)
            .iter()
            .filter(|l| l.origin_id == lot.id)
            .map(|l| l.weight().amount())
            .sum();
        assert_eq!(total, dec("100"));
    }
}
