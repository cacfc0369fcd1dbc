//! Green lots: unroasted coffee as it was imported, and the lots that transfers split off from it.
//!
//! A lot is imported from an external system with a positive weight; it becomes the *origin* of
//! every lot that transfers later split off from it, and they all share its `origin_id`. At most one
//! *active* lot of an origin is kept per location, so moving weight to a location that already holds
//! one merges into it; a consumed lot is never merged into, a new lot is created beside it. Every
//! lot of an origin keeps the origin's unit, so transfers within an origin move weight exactly.
//!
//! Transitions take what they need (the time, new ids, new lot numbers) as arguments; looking
//! records up (the lot, the location, a merge target, a duplicate external id) is the caller's job,
//! which reports [`GreenLotError::NotFound`] and [`GreenLotError::DuplicateExternalId`] itself.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::green_lot_details::{GreenLotDetails, GreenLotDetailsError};
use crate::price::{Price, PriceError, RequestedPrice};
use crate::project::ProjectRef;
use crate::stock::{self, LotKind, Stock, StockError, WeightChange};
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::{RequestedWeight, Weight, WeightError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreenLotError {
    #[error("{field} is required")]
    Missing { field: FieldPath },
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Details(#[from] GreenLotDetailsError),
    #[error(transparent)]
    Weight(#[from] WeightError),
    #[error(transparent)]
    Price(#[from] PriceError),
    #[error(transparent)]
    Stock(#[from] StockError),
    #[error("green lot {0} does not exist")]
    NotFound(Uuid),
    #[error("a green lot with external id `{0}` was already imported")]
    DuplicateExternalId(String),
    #[error("give either locationId or location, not both")]
    LocationGivenTwice,
    #[error("a green lot is imported with a weight above zero; {0} was given")]
    ZeroImportWeight(Weight),
    #[error("green lot {0} is consumed; its weight can no longer change")]
    Consumed(Uuid),
    #[error("green lot {id} is already at location {location_id}; choose another destination")]
    SameLocation { id: Uuid, location_id: Uuid },
    #[error("the weight to transfer from green lot {0} must be above zero")]
    ZeroTransfer(Uuid),
    #[error("green lot {id} holds {available}; {requested} were asked")]
    Insufficient {
        id: Uuid,
        available: Weight,
        requested: Weight,
    },
    #[error(
        "green lot {target} cannot receive weight of origin {origin_id} at location {location_id}: \
         only the active lot of that origin at that location can"
    )]
    NotAMergeTarget {
        target: Uuid,
        origin_id: Uuid,
        location_id: Uuid,
    },
}

impl BrokenRule for GreenLotError {
    fn violation(&self) -> Violation {
        match self {
            Self::Missing { .. } => Violation::MissingParameter,
            Self::Text(e) => e.violation(),
            Self::Details(e) => e.violation(),
            Self::Weight(e) => e.violation(),
            Self::Price(e) => e.violation(),
            Self::Stock(e) => e.violation(),
            Self::NotFound(_) => Violation::NotFound,
            Self::Consumed(_) => Violation::BusinessRule,
            Self::DuplicateExternalId(_)
            | Self::LocationGivenTwice
            | Self::SameLocation { .. }
            | Self::NotAMergeTarget { .. } => Violation::Conflict,
            Self::ZeroImportWeight(_) | Self::ZeroTransfer(_) | Self::Insufficient { .. } => {
                Violation::InvalidWeight
            }
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Missing { field } => field.rebase(base),
            Self::Text(e) => e.rebase(base),
            Self::Details(e) => e.rebase(base),
            _ => {}
        }
    }
}

/// An import parsed from the request (step one of every write): every shape rule (400) is
/// checked; nothing is looked up yet and no weight or price is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotDraft {
    pub name: String,
    pub external_id: String,
    pub ico_number: Option<String>,
    pub details: GreenLotDetails,
}

impl GreenLotDraft {
    /// Missing, blank or too long texts and malformed details.
    pub fn parse(
        name: Option<&str>,
        external_id: Option<&str>,
        ico_number: Option<&str>,
        details: GreenLotDetails,
    ) -> Result<Self, GreenLotError> {
        let name = name.ok_or_else(|| GreenLotError::Missing {
            field: FieldPath::from("name"),
        })?;
        let external_id = external_id.ok_or_else(|| GreenLotError::Missing {
            field: FieldPath::from("externalId"),
        })?;
        Ok(Self {
            name: text::required("name", name, text::NAME_MAX)?,
            external_id: text::required("externalId", external_id, text::EXTERNAL_ID_MAX)?,
            ico_number: text::optional("icoNumber", ico_number, text::NAME_MAX)?,
            details: details.validate()?,
        })
    }
}

/// What an import refers to, as the store found it (step two): every reference exists, since
/// a missing one is reported while loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReferences {
    /// The location, found by `locationId` or by `location.externalId`.
    pub location_id: Option<Uuid>,
    /// Both forms were given (each naming an existing location).
    pub location_given_twice: bool,
    pub projects: Vec<ProjectRef>,
    /// A lot with the draft's external id exists already.
    pub external_id_taken: bool,
}

/// An import as the request gave it, already decoded into domain values. `name` and
/// `external_id` are `None` when the request left them out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotImport {
    pub name: Option<String>,
    pub external_id: Option<String>,
    pub weight: Weight,
    pub ico_number: Option<String>,
    pub price: Option<Price>,
    /// The resolved location, if any.
    pub location_id: Option<Uuid>,
    /// Existing projects, resolved by name.
    pub projects: Vec<ProjectRef>,
    pub details: GreenLotDetails,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLot {
    pub id: Uuid,
    /// The id of the imported lot this one descends from (its own id for an imported lot).
    pub origin_id: Uuid,
    /// Sequence number, rendered `PG-n` by [`GreenLot::number`].
    pub lot_number: i64,
    pub name: String,
    pub ico_number: Option<String>,
    /// Only imported lots have one; lots made by a transfer have none.
    pub external_id: Option<String>,
    pub stock: Stock,
    pub price: Option<Price>,
    pub location_id: Option<Uuid>,
    pub projects: Vec<ProjectRef>,
    pub details: GreenLotDetails,
    pub registration_date: DateTime<Utc>,
    pub last_modified_date: DateTime<Utc>,
}

/// Where a transfer puts the weight.
#[derive(Debug)]
pub enum Destination<'a> {
    /// The active lot of the source's origin at the destination location: it receives the weight.
    Merge(&'a mut GreenLot),
    /// The destination holds no active lot of the source's origin: a lot is created there with
    /// this id and lot number.
    New {
        location_id: Uuid,
        id: Uuid,
        lot_number: i64,
    },
}

/// What a transfer did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The weight taken from the source, in the source's unit.
    pub taken: Weight,
    /// The weight the destination received, in the destination's unit.
    pub received: Weight,
    /// Whether the source gave all it held and is now consumed.
    pub source_consumed: bool,
    pub destination: TransferredTo,
}

/// Whether the store inserts the destination lot or updates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransferredTo {
    /// A new lot, to insert.
    Created(Box<GreenLot>),
    /// The lot given as [`Destination::Merge`], already updated in place; its id.
    Merged(Uuid),
}

impl GreenLot {
    /// Imports a lot: it is its own origin. Shape rules (missing, blank or too long fields,
    /// malformed details) are checked before the weight, as `400` ranks before `422`.
    pub fn import(
        input: GreenLotImport,
        id: Uuid,
        lot_number: i64,
        now: DateTime<Utc>,
    ) -> Result<Self, GreenLotError> {
        let draft = GreenLotDraft::parse(
            input.name.as_deref(),
            input.external_id.as_deref(),
            input.ico_number.as_deref(),
            input.details,
        )?;
        if input.weight.is_zero() {
            return Err(GreenLotError::ZeroImportWeight(input.weight));
        }
        let references = ImportReferences {
            location_id: input.location_id,
            location_given_twice: false,
            projects: input.projects,
            external_id_taken: false,
        };
        Ok(Self::new_origin(
            draft,
            references,
            input.weight,
            input.price,
            (id, lot_number),
            now,
        ))
    }

    /// Decides an import (step three) from its draft and what it refers to: conflicts first
    /// (both location forms, a taken external id), then the weight (negative, too large, zero),
    /// then the price. The lot is its own origin; `identity` is its id and lot number.
    pub fn decide_import(
        draft: GreenLotDraft,
        references: ImportReferences,
        weight: RequestedWeight,
        price: Option<RequestedPrice>,
        identity: (Uuid, i64),
        now: DateTime<Utc>,
    ) -> Result<Self, GreenLotError> {
        if references.location_given_twice {
            return Err(GreenLotError::LocationGivenTwice);
        }
        if references.external_id_taken {
            return Err(GreenLotError::DuplicateExternalId(draft.external_id));
        }
        let weight = weight.judge()?;
        if weight.is_zero() {
            return Err(GreenLotError::ZeroImportWeight(weight));
        }
        let price = price.map(RequestedPrice::judge).transpose()?;
        Ok(Self::new_origin(
            draft, references, weight, price, identity, now,
        ))
    }

    fn new_origin(
        draft: GreenLotDraft,
        references: ImportReferences,
        weight: Weight,
        price: Option<Price>,
        (id, lot_number): (Uuid, i64),
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            origin_id: id,
            lot_number,
            name: draft.name,
            ico_number: draft.ico_number,
            external_id: Some(draft.external_id),
            stock: Stock::new(weight, now),
            price,
            location_id: references.location_id,
            projects: references.projects,
            details: draft.details,
            registration_date: now,
            last_modified_date: now,
        }
    }

    /// The lot number as clients see it: `PG-7`.
    pub fn number(&self) -> String {
        stock::number(LotKind::Green.prefix(), self.lot_number)
    }

    pub fn weight(&self) -> Weight {
        self.stock.weight()
    }

    pub fn is_consumed(&self) -> bool {
        self.stock.is_consumed()
    }

    pub fn consumed_date(&self) -> Option<DateTime<Utc>> {
        self.stock.consumed_at()
    }

    /// Whether a transfer of `origin_id` weight to `location_id` merges into this lot: it must be
    /// an active lot of that origin at that location.
    pub fn is_merge_target_for(&self, origin_id: Uuid, location_id: Uuid) -> bool {
        self.origin_id == origin_id
            && self.location_id == Some(location_id)
            && !self.stock.is_consumed()
    }

    /// Replaces the weight (converted into the lot's unit). Zero consumes the lot; a consumed lot
    /// is final, and setting zero again succeeds as [`WeightChange::Unchanged`].
    pub fn set_weight(
        &mut self,
        weight: impl Into<RequestedWeight>,
        now: DateTime<Utc>,
    ) -> Result<WeightChange, GreenLotError> {
        let change = self
            .stock
            .set_weight(weight, now)
            .map_err(|e| self.stock_error(e))?;
        if change != WeightChange::Unchanged {
            self.last_modified_date = now;
        }
        Ok(change)
    }

    /// Moves `weight` (converted into this lot's unit) to another location.
    ///
    /// Rules in the order api-decisions §2 ranks them: a consumed source is refused
    /// (`invalid_request`); the lot's own location is refused (`resource_conflict`); then a weight
    /// that is zero in this lot's unit, or more than it holds, is refused (`invalid_weight`). On
    /// error nothing changes. Taking all the weight consumes the source. A merge target receives
    /// the weight converted into its unit; a new lot copies the source's unit, name, icoNumber,
    /// price, projects, details and origin, with no external id.
    pub fn transfer(
        &mut self,
        weight: impl Into<RequestedWeight>,
        destination: Destination<'_>,
        now: DateTime<Utc>,
    ) -> Result<Transfer, GreenLotError> {
        if self.is_consumed() {
            return Err(GreenLotError::Consumed(self.id));
        }
        let location_id = match &destination {
            Destination::Merge(target) => target.location_id,
            Destination::New { location_id, .. } => Some(*location_id),
        };
        if let Some(location_id) = location_id.filter(|l| Some(*l) == self.location_id) {
            return Err(GreenLotError::SameLocation {
                id: self.id,
                location_id,
            });
        }
        if let Destination::Merge(target) = &destination {
            let location_id = target.location_id.unwrap_or_default();
            if target.id == self.id || !target.is_merge_target_for(self.origin_id, location_id) {
                return Err(GreenLotError::NotAMergeTarget {
                    target: target.id,
                    origin_id: self.origin_id,
                    location_id,
                });
            }
        }

        let weight = weight.into().judge()?;
        // Work on copies so that an error leaves both lots as they were.
        let mut source_stock = self.stock;
        let taken = source_stock
            .take(weight, now)
            .map_err(|e| self.stock_error(e))?;
        let (received, to) = match destination {
            Destination::Merge(target) => {
                let mut target_stock = target.stock;
                let received = target_stock.add(taken).map_err(|e| target.stock_error(e))?;
                target.stock = target_stock;
                target.last_modified_date = now;
                (received, TransferredTo::Merged(target.id))
            }
            Destination::New {
                location_id,
                id,
                lot_number,
            } => {
                let lot = GreenLot {
                    id,
                    origin_id: self.origin_id,
                    lot_number,
                    name: self.name.clone(),
                    ico_number: self.ico_number.clone(),
                    external_id: None,
                    stock: Stock::new(taken, now),
                    price: self.price,
                    location_id: Some(location_id),
                    projects: self.projects.clone(),
                    details: self.details.clone(),
                    registration_date: now,
                    last_modified_date: now,
                };
                (taken, TransferredTo::Created(Box::new(lot)))
            }
        };
        self.stock = source_stock;
        self.last_modified_date = now;
        Ok(Transfer {
            taken,
            received,
            source_consumed: self.is_consumed(),
            destination: to,
        })
    }

    /// Names this lot in the stock errors that clients see.
    fn stock_error(&self, error: StockError) -> GreenLotError {
        match error {
            StockError::Consumed => GreenLotError::Consumed(self.id),
            StockError::ZeroAmount => GreenLotError::ZeroTransfer(self.id),
            StockError::Insufficient {
                available,
                requested,
            } => GreenLotError::Insufficient {
                id: self.id,
                available,
                requested,
            },
            other => GreenLotError::Stock(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::price::Currency;
    use crate::test_values::{kg, w};
    use crate::weight::WeightUnit;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn lbs(amount: &str) -> Weight {
        w(amount, WeightUnit::Lbs)
    }

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    const HAMBURG: Uuid = Uuid::from_u128(0xA);
    const BERLIN: Uuid = Uuid::from_u128(0xB);

    fn input(weight: Weight) -> GreenLotImport {
        GreenLotImport {
            name: Some(" Guji Natural ".into()),
            external_id: Some("erp-42".into()),
            weight,
            ico_number: Some("010-0001-0042".into()),
            price: Some(Price::new(Decimal::new(52, 1), Currency::parse("EUR").unwrap()).unwrap()),
            location_id: Some(HAMBURG),
            projects: vec![ProjectRef {
                id: id(0x77),
                name: "Direct trade".into(),
            }],
            details: GreenLotDetails {
                grade: Some("G1".into()),
                countries_of_origin: vec!["ETH".into()],
                ..Default::default()
            },
        }
    }

    fn lot(weight: Weight) -> GreenLot {
        GreenLot::import(input(weight), id(1), 1, at(0)).unwrap()
    }

    fn new_at(location_id: Uuid) -> Destination<'static> {
        Destination::New {
            location_id,
            id: id(2),
            lot_number: 2,
        }
    }

    fn created(transfer: Transfer) -> GreenLot {
        match transfer.destination {
            TransferredTo::Created(lot) => *lot,
            TransferredTo::Merged(id) => panic!("merged into {id}"),
        }
    }

    #[test]
    fn an_imported_lot_is_its_own_origin_and_is_numbered_pg_n() {
        let lot = GreenLot::import(input(kg("60")), id(1), 7, at(0)).unwrap();
        assert_eq!(lot.origin_id, lot.id);
        assert_eq!(lot.number(), "PG-7");
        assert_eq!(lot.name, "Guji Natural");
        assert_eq!(lot.external_id.as_deref(), Some("erp-42"));
        assert_eq!(lot.weight(), kg("60"));
        assert!(!lot.is_consumed());
        assert_eq!(lot.consumed_date(), None);
        assert_eq!(
            (lot.registration_date, lot.last_modified_date),
            (at(0), at(0))
        );
    }

    #[test]
    fn import_without_name_or_external_id_is_a_missing_parameter() {
        let no_name = GreenLotImport {
            name: None,
            ..input(kg("1"))
        };
        let no_external_id = GreenLotImport {
            external_id: None,
            ..input(kg("1"))
        };
        for (import, field) in [(no_name, "name"), (no_external_id, "externalId")] {
            let err = GreenLot::import(import, id(1), 1, at(0)).unwrap_err();
            assert_eq!(
                err,
                GreenLotError::Missing {
                    field: FieldPath::from(field)
                }
            );
            assert_eq!(err.violation(), Violation::MissingParameter);
        }
    }

    #[test]
    fn import_with_blank_or_too_long_texts_is_an_invalid_parameter() {
        let blank_name = GreenLotImport {
            name: Some("  ".into()),
            ..input(kg("1"))
        };
        let long_external_id = GreenLotImport {
            external_id: Some("x".repeat(text::EXTERNAL_ID_MAX + 1)),
            ..input(kg("1"))
        };
        let bad_country = GreenLotImport {
            details: GreenLotDetails {
                countries_of_origin: vec!["ET".into()],
                ..Default::default()
            },
            ..input(kg("1"))
        };
        for import in [blank_name, long_external_id, bad_country] {
            let err = GreenLot::import(import, id(1), 1, at(0)).unwrap_err();
            assert_eq!(err.violation(), Violation::InvalidParameter, "{err}");
        }
    }

    #[test]
    fn import_of_zero_weight_is_an_invalid_weight() {
        let err = GreenLot::import(input(kg("0")), id(1), 1, at(0)).unwrap_err();
        assert_eq!(err, GreenLotError::ZeroImportWeight(kg("0")));
        assert_eq!(err.violation(), Violation::InvalidWeight);
    }

    #[test]
    fn import_reports_malformed_fields_before_the_weight() {
        let import = GreenLotImport {
            name: Some(String::new()),
            ..input(kg("0"))
        };
        let err = GreenLot::import(import, id(1), 1, at(0)).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    fn decide(
        references: ImportReferences,
        weight: &str,
        price: &str,
    ) -> Result<GreenLot, GreenLotError> {
        let draft = GreenLotDraft::parse(
            Some("Guji"),
            Some("erp-42"),
            None,
            GreenLotDetails::default(),
        )
        .unwrap();
        let requested = |amount: &str| Decimal::from_str(amount).unwrap();
        GreenLot::decide_import(
            draft,
            references,
            RequestedWeight {
                amount: requested(weight),
                unit: WeightUnit::Kg,
            },
            Some(RequestedPrice {
                amount: requested(price),
                currency: Currency::parse("EUR").unwrap(),
            }),
            (id(1), 1),
            at(0),
        )
    }

    #[test]
    fn an_import_is_decided_conflicts_first_then_weight_then_price() {
        let found = |twice: bool, taken: bool| ImportReferences {
            location_id: Some(HAMBURG),
            location_given_twice: twice,
            projects: vec![],
            external_id_taken: taken,
        };
        assert_eq!(
            decide(found(true, true), "-1", "-1").unwrap_err(),
            GreenLotError::LocationGivenTwice
        );
        assert_eq!(
            decide(found(false, true), "-1", "-1").unwrap_err(),
            GreenLotError::DuplicateExternalId("erp-42".into())
        );
        assert!(matches!(
            decide(found(false, false), "-1", "-1").unwrap_err(),
            GreenLotError::Weight(WeightError::Negative(_))
        ));
        assert!(matches!(
            decide(found(false, false), "0", "-1").unwrap_err(),
            GreenLotError::ZeroImportWeight(_)
        ));
        assert!(matches!(
            decide(found(false, false), "1", "-1").unwrap_err(),
            GreenLotError::Price(_)
        ));
        let lot = decide(found(false, false), "60.5", "5.2").unwrap();
        assert_eq!((lot.weight(), lot.location_id), (kg("60.5"), Some(HAMBURG)));
    }

    #[test]
    fn a_requested_weight_is_judged_after_the_state_and_conflict_rules() {
        let negative = RequestedWeight {
            amount: Decimal::from(-1),
            unit: WeightUnit::Kg,
        };
        let mut placed = lot(kg("10"));
        assert_eq!(
            placed
                .transfer(negative, new_at(HAMBURG), at(1))
                .unwrap_err(),
            GreenLotError::SameLocation {
                id: id(1),
                location_id: HAMBURG
            }
        );
        assert!(matches!(
            placed
                .transfer(negative, new_at(BERLIN), at(1))
                .unwrap_err(),
            GreenLotError::Weight(WeightError::Negative(_))
        ));
        placed.set_weight(kg("0"), at(1)).unwrap();
        assert_eq!(
            placed
                .transfer(negative, new_at(HAMBURG), at(2))
                .unwrap_err(),
            GreenLotError::Consumed(id(1))
        );
        assert_eq!(
            placed.set_weight(negative, at(2)).unwrap_err(),
            GreenLotError::Consumed(id(1))
        );
        let mut active = lot(kg("10"));
        assert!(matches!(
            active.set_weight(negative, at(1)).unwrap_err(),
            GreenLotError::Stock(StockError::Weight(WeightError::Negative(_)))
        ));
        assert_eq!(
            active.weight(),
            kg("10"),
            "a refused change leaves the lot as it was"
        );
    }

    #[test]
    fn a_draft_holds_every_shape_rule() {
        let details = GreenLotDetails::default;
        assert_eq!(
            GreenLotDraft::parse(None, Some("x"), None, details()).unwrap_err(),
            GreenLotError::Missing {
                field: FieldPath::from("name")
            }
        );
        assert_eq!(
            GreenLotDraft::parse(Some("n"), None, None, details()).unwrap_err(),
            GreenLotError::Missing {
                field: FieldPath::from("externalId")
            }
        );
        assert_eq!(
            GreenLotDraft::parse(Some(" "), Some("x"), None, details())
                .unwrap_err()
                .violation(),
            Violation::InvalidParameter
        );
    }

    #[test]
    fn unknown_lots_are_not_found_and_duplicate_external_ids_conflict() {
        assert_eq!(
            GreenLotError::NotFound(id(9)).violation(),
            Violation::NotFound
        );
        assert_eq!(
            GreenLotError::DuplicateExternalId("erp-42".into()).violation(),
            Violation::Conflict
        );
    }

    #[test]
    fn set_weight_to_zero_consumes_the_lot() {
        let mut lot = lot(kg("60"));
        assert_eq!(lot.set_weight(kg("0"), at(5)), Ok(WeightChange::Consumed));
        assert!(lot.is_consumed());
        assert_eq!(lot.consumed_date(), Some(at(5)));
        assert_eq!(lot.last_modified_date, at(5));
    }

    #[test]
    fn set_weight_above_zero_replaces_the_weight_in_the_lots_unit() {
        let mut lot = lot(kg("60"));
        assert_eq!(
            lot.set_weight(lbs("100"), at(5)),
            Ok(WeightChange::Replaced)
        );
        assert_eq!(lot.weight(), kg("45.359237"));
        assert!(!lot.is_consumed());
        assert_eq!(lot.last_modified_date, at(5));
    }

    #[test]
    fn a_consumed_lot_is_final_and_setting_zero_again_changes_nothing() {
        let mut lot = lot(kg("60"));
        lot.set_weight(kg("0"), at(5)).unwrap();
        assert_eq!(lot.set_weight(lbs("0"), at(9)), Ok(WeightChange::Unchanged));
        assert_eq!(lot.last_modified_date, at(5));
        assert_eq!(lot.consumed_date(), Some(at(5)));
        let err = lot.set_weight(kg("1"), at(9)).unwrap_err();
        assert_eq!(err, GreenLotError::Consumed(lot.id));
        assert_eq!(err.violation(), Violation::BusinessRule);
    }

    #[test]
    fn transfer_to_a_location_without_a_lot_of_the_origin_creates_one() {
        let mut source = lot(kg("60"));
        let transfer = source.transfer(kg("20"), new_at(BERLIN), at(5)).unwrap();
        assert_eq!((transfer.taken, transfer.received), (kg("20"), kg("20")));
        assert!(!transfer.source_consumed);
        let new = created(transfer);
        assert_eq!(source.weight(), kg("40"));
        assert_eq!(
            (new.id, new.lot_number, new.number()),
            (id(2), 2, "PG-2".into())
        );
        assert_eq!(new.origin_id, source.origin_id);
        assert_eq!(new.location_id, Some(BERLIN));
        assert_eq!(new.weight(), kg("20"));
        assert_eq!(new.external_id, None);
        assert_eq!(
            (
                &new.name,
                &new.ico_number,
                new.price,
                &new.projects,
                &new.details
            ),
            (
                &source.name,
                &source.ico_number,
                source.price,
                &source.projects,
                &source.details
            )
        );
        assert_eq!(
            (new.registration_date, new.last_modified_date),
            (at(5), at(5))
        );
        assert_eq!(source.last_modified_date, at(5));
    }

    #[test]
    fn transfer_to_a_location_holding_an_active_lot_of_the_origin_increases_its_weight() {
        let mut source = lot(kg("60"));
        let mut berlin = created(source.transfer(kg("20"), new_at(BERLIN), at(5)).unwrap());
        assert!(berlin.is_merge_target_for(source.origin_id, BERLIN));
        let transfer = source
            .transfer(kg("15"), Destination::Merge(&mut berlin), at(9))
            .unwrap();
        assert_eq!(transfer.destination, TransferredTo::Merged(berlin.id));
        assert_eq!(transfer.received, kg("15"));
        assert_eq!((source.weight(), berlin.weight()), (kg("25"), kg("35")));
        assert_eq!(
            (source.last_modified_date, berlin.last_modified_date),
            (at(9), at(9))
        );
        assert_eq!(berlin.registration_date, at(5));
    }

    #[test]
    fn moving_weight_back_merges_into_the_lot_it_came_from() {
        let mut hamburg = lot(kg("60"));
        let mut berlin = created(hamburg.transfer(kg("20"), new_at(BERLIN), at(5)).unwrap());
        berlin
            .transfer(kg("5"), Destination::Merge(&mut hamburg), at(9))
            .unwrap();
        assert_eq!((hamburg.weight(), berlin.weight()), (kg("45"), kg("15")));
    }

    #[test]
    fn transfer_from_a_consumed_lot_is_refused() {
        let mut source = lot(kg("60"));
        source.set_weight(kg("0"), at(5)).unwrap();
        let before = source.clone();
        let err = source.transfer(kg("1"), new_at(BERLIN), at(9)).unwrap_err();
        assert_eq!(err, GreenLotError::Consumed(source.id));
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert_eq!(source, before);
    }

    #[test]
    fn transfer_to_the_lots_own_location_conflicts() {
        let mut source = lot(kg("60"));
        let err = source
            .transfer(kg("1"), new_at(HAMBURG), at(9))
            .unwrap_err();
        assert_eq!(
            err,
            GreenLotError::SameLocation {
                id: source.id,
                location_id: HAMBURG
            }
        );
        assert_eq!(err.violation(), Violation::Conflict);
        assert_eq!(source.weight(), kg("60"));
    }

    #[test]
    fn a_consumed_source_ranks_before_the_own_location_conflict() {
        let mut source = lot(kg("60"));
        source.set_weight(kg("0"), at(5)).unwrap();
        let err = source
            .transfer(kg("0"), new_at(HAMBURG), at(9))
            .unwrap_err();
        assert_eq!(err.violation(), Violation::BusinessRule);
    }

    #[test]
    fn the_own_location_conflict_ranks_before_the_weight_rules() {
        let mut source = lot(kg("60"));
        for weight in [kg("0"), kg("61")] {
            let err = source.transfer(weight, new_at(HAMBURG), at(9)).unwrap_err();
            assert_eq!(err.violation(), Violation::Conflict);
        }
    }

    #[test]
    fn a_zero_transfer_is_an_invalid_weight() {
        let mut source = lot(kg("60"));
        // 0.000001 LBS is 0.00000045 KG: zero once rounded into the lot's unit.
        for weight in [kg("0"), lbs("0.000001")] {
            let err = source.transfer(weight, new_at(BERLIN), at(9)).unwrap_err();
            assert_eq!(err, GreenLotError::ZeroTransfer(source.id));
            assert_eq!(err.violation(), Violation::InvalidWeight);
        }
        assert_eq!(source.weight(), kg("60"));
    }

    #[test]
    fn transfer_of_more_than_the_lot_holds_is_an_invalid_weight() {
        let mut source = lot(kg("12.5"));
        let before = source.clone();
        let err = source
            .transfer(kg("20"), new_at(BERLIN), at(9))
            .unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidWeight);
        assert_eq!(
            err.to_string(),
            format!("green lot {} holds 12.5 KG; 20 KG were asked", source.id)
        );
        assert_eq!(source, before);
    }

    #[test]
    fn transfer_of_all_weight_consumes_the_source() {
        let mut source = lot(kg("60"));
        let transfer = source.transfer(kg("60"), new_at(BERLIN), at(9)).unwrap();
        assert!(transfer.source_consumed);
        assert!(source.is_consumed());
        assert!(source.weight().is_zero());
        assert_eq!(source.consumed_date(), Some(at(9)));
        assert_eq!(created(transfer).weight(), kg("60"));
    }

    #[test]
    fn a_transfer_in_pounds_takes_the_converted_weight_and_the_new_lot_keeps_the_source_unit() {
        let mut source = lot(kg("60"));
        let transfer = source.transfer(lbs("100"), new_at(BERLIN), at(9)).unwrap();
        assert_eq!(transfer.taken, kg("45.359237"));
        assert_eq!(source.weight(), kg("14.640763"));
        let new = created(transfer);
        assert_eq!(new.weight(), kg("45.359237"));
        assert_eq!(new.weight().unit(), WeightUnit::Kg);
    }

    #[test]
    fn a_merge_converts_the_weight_into_the_destination_unit() {
        let mut source = lot(kg("60"));
        // Lots of one origin share its unit; a merge still converts, should stored data differ.
        let mut berlin = lot(lbs("10"));
        berlin.id = id(3);
        berlin.location_id = Some(BERLIN);
        let transfer = source
            .transfer(kg("45.359237"), Destination::Merge(&mut berlin), at(9))
            .unwrap();
        assert_eq!(transfer.taken, kg("45.359237"));
        assert_eq!(transfer.received, lbs("100"));
        assert_eq!(berlin.weight(), lbs("110"));
        assert_eq!(source.weight(), kg("14.640763"));
    }

    #[test]
    fn a_consumed_lot_is_never_a_merge_target() {
        let mut source = lot(kg("60"));
        let mut berlin = created(source.transfer(kg("20"), new_at(BERLIN), at(5)).unwrap());
        berlin.set_weight(kg("0"), at(6)).unwrap();
        assert!(!berlin.is_merge_target_for(source.origin_id, BERLIN));

        let (source_before, berlin_before) = (source.clone(), berlin.clone());
        let err = source
            .transfer(kg("5"), Destination::Merge(&mut berlin), at(9))
            .unwrap_err();
        assert!(matches!(err, GreenLotError::NotAMergeTarget { .. }));
        assert_eq!(
            (source.clone(), berlin.clone()),
            (source_before, berlin_before)
        );

        // The caller creates a new lot beside the consumed one instead.
        let beside = Destination::New {
            location_id: BERLIN,
            id: id(4),
            lot_number: 3,
        };
        let new = created(source.transfer(kg("5"), beside, at(9)).unwrap());
        assert_eq!((new.location_id, new.weight()), (Some(BERLIN), kg("5")));
        assert!(berlin.is_consumed());
    }

    #[test]
    fn only_an_active_lot_of_the_same_origin_at_the_destination_is_a_merge_target() {
        let source = lot(kg("60"));
        let mut other_origin = GreenLot::import(input(kg("5")), id(8), 8, at(0)).unwrap();
        other_origin.location_id = Some(BERLIN);
        assert!(!other_origin.is_merge_target_for(source.origin_id, BERLIN));
        assert!(other_origin.is_merge_target_for(other_origin.origin_id, BERLIN));
        assert!(!other_origin.is_merge_target_for(other_origin.origin_id, HAMBURG));

        let mut source = source;
        let err = source
            .transfer(kg("1"), Destination::Merge(&mut other_origin), at(9))
            .unwrap_err();
        assert_eq!(err.violation(), Violation::Conflict);
        assert_eq!(source.weight(), kg("60"));
    }
}

/// Random sequences of transfers and weight settings over the lots of two origins, played the way
/// the store-backed use case plays them: look for the merge target, else create a lot.
#[cfg(test)]
mod properties {
    use std::collections::{HashMap, HashSet};

    use proptest::prelude::*;

    use super::*;
    use crate::weight::WeightUnit;

    const LOCATIONS: [Uuid; 4] = [
        Uuid::from_u128(0xA0),
        Uuid::from_u128(0xA1),
        Uuid::from_u128(0xA2),
        Uuid::from_u128(0xA3),
    ];

    #[derive(Debug, Clone)]
    enum Op {
        Transfer {
            lot: usize,
            weight: Weight,
            to: usize,
        },
        SetWeight {
            lot: usize,
            weight: Weight,
        },
    }

    fn unit() -> impl Strategy<Value = WeightUnit> {
        prop_oneof![Just(WeightUnit::Kg), Just(WeightUnit::Lbs)]
    }

    /// Zero, tiny amounts that may round to zero in the other unit, and amounts up to well above
    /// what any lot holds.
    fn weight() -> impl Strategy<Value = Weight> {
        let micros = prop_oneof![
            1 => Just(0_i64),
            2 => 1_i64..=3,
            7 => 1_i64..=150_000_000,
        ];
        (micros, unit()).prop_map(|(m, u)| Weight::from_micros(m, u).unwrap())
    }

    fn op() -> impl Strategy<Value = Op> {
        let set_weight = prop_oneof![
            3 => unit().prop_map(Weight::zero),
            1 => weight(),
        ];
        prop_oneof![
            6 => (any::<usize>(), weight(), 0..LOCATIONS.len())
                .prop_map(|(lot, weight, to)| Op::Transfer { lot, weight, to }),
            1 => (any::<usize>(), set_weight).prop_map(|(lot, weight)| Op::SetWeight { lot, weight }),
        ]
    }

    fn import(n: u128, weight: Weight, location_id: Option<Uuid>) -> GreenLot {
        let input = GreenLotImport {
            name: Some(format!("lot {n}")),
            external_id: Some(format!("erp-{n}")),
            weight,
            ico_number: None,
            price: None,
            location_id,
            projects: Vec::new(),
            details: GreenLotDetails::default(),
        };
        GreenLot::import(input, Uuid::from_u128(n), n as i64, at(0)).unwrap()
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    /// The category the rules of §2 give a transfer, checked independently of `transfer`.
    fn expected(source: &GreenLot, weight: Weight, to: Uuid) -> Option<Violation> {
        let asked = weight.to_unit(source.weight().unit()).micros();
        if source.is_consumed() {
            Some(Violation::BusinessRule)
        } else if source.location_id == Some(to) {
            Some(Violation::Conflict)
        } else if asked == 0 || asked > source.weight().micros() {
            Some(Violation::InvalidWeight)
        } else {
            None
        }
    }

    fn check_invariants(lots: &[GreenLot], totals: &HashMap<Uuid, (WeightUnit, i64)>) {
        let mut sums: HashMap<Uuid, i64> = HashMap::new();
        let mut active = HashSet::new();
        let mut ids = HashSet::new();
        for lot in lots {
            assert!(ids.insert(lot.id), "id {} used twice", lot.id);
            let (unit, _) = totals[&lot.origin_id];
            assert_eq!(
                lot.weight().unit(),
                unit,
                "lot {} left its origin's unit",
                lot.id
            );
            assert!(lot.weight().micros() >= 0);
            assert_eq!(lot.is_consumed(), lot.weight().is_zero(), "lot {}", lot.id);
            *sums.entry(lot.origin_id).or_default() += lot.weight().micros();
            if !lot.is_consumed() {
                assert!(
                    active.insert((lot.origin_id, lot.location_id)),
                    "two active lots of origin {} at {:?}",
                    lot.origin_id,
                    lot.location_id
                );
            }
        }
        for (origin, (_, total)) in totals {
            assert_eq!(
                sums[origin], *total,
                "weight of origin {origin} not conserved"
            );
        }
    }

    proptest! {
        #[test]
        fn transfers_conserve_each_origins_weight_and_keep_one_active_lot_per_location(
            first in (1_i64..=100_000_000, unit()),
            second in (1_i64..=100_000_000, unit()),
            ops in prop::collection::vec(op(), 1..60),
        ) {
            let first = Weight::from_micros(first.0, first.1).unwrap();
            let second = Weight::from_micros(second.0, second.1).unwrap();
            let mut lots = vec![import(1, first, Some(LOCATIONS[0])), import(2, second, None)];
            // Per origin: its unit and the weight its lots must hold, in micro-units of that unit.
            // Only `set_weight` changes the latter, by exactly what it replaced.
            let mut totals: HashMap<Uuid, (WeightUnit, i64)> = lots
                .iter()
                .map(|l| (l.origin_id, (l.weight().unit(), l.weight().micros())))
                .collect();
            let mut next_number = 3_i64;

            for (step, op) in ops.into_iter().enumerate() {
                let now = at(step as i64 + 1);
                let before = lots.clone();
                match op {
                    Op::Transfer { lot, weight, to } => {
                        let from = lot % lots.len();
                        let to = LOCATIONS[to];
                        let mut source = lots[from].clone();
                        let expected = expected(&source, weight, to);
                        let target = lots.iter().position(|l| {
                            l.id != source.id && l.is_merge_target_for(source.origin_id, to)
                        });
                        let new_id = Uuid::from_u128(next_number as u128);
                        let destination = match target {
                            Some(j) => Destination::Merge(&mut lots[j]),
                            None => Destination::New { location_id: to, id: new_id, lot_number: next_number },
                        };
                        match source.transfer(weight, destination, now) {
                            Ok(transfer) => {
                                prop_assert_eq!(expected, None);
                                prop_assert_eq!(transfer.taken, transfer.received);
                                prop_assert_eq!(transfer.source_consumed, source.is_consumed());
                                prop_assert_eq!(source.last_modified_date, now);
                                lots[from] = source;
                                match transfer.destination {
                                    TransferredTo::Created(new) => {
                                        prop_assert!(target.is_none());
                                        prop_assert_eq!(new.external_id.clone(), None);
                                        lots.push(*new);
                                        next_number += 1;
                                    }
                                    TransferredTo::Merged(id) => {
                                        let j = target.unwrap();
                                        prop_assert_eq!(lots[j].id, id);
                                        prop_assert_eq!(lots[j].last_modified_date, now);
                                    }
                                }
                            }
                            Err(err) => {
                                prop_assert_eq!(Some(err.violation()), expected, "{}", err);
                                prop_assert_eq!(&lots, &before, "a refused transfer changed a lot");
                            }
                        }
                    }
                    Op::SetWeight { lot, weight } => {
                        let lot = &mut lots[lot % before.len()];
                        let old = lot.weight().micros();
                        let was_consumed = lot.is_consumed();
                        match lot.set_weight(weight, now) {
                            Ok(change) => {
                                prop_assert_eq!(change == WeightChange::Unchanged, was_consumed);
                                totals.get_mut(&lot.origin_id).unwrap().1 += lot.weight().micros() - old;
                            }
                            Err(err) => {
                                prop_assert_eq!(lot.weight().micros(), old, "a refused change changed the lot");
                                let in_lot_unit = weight.to_unit(lot.weight().unit());
                                if in_lot_unit.is_zero() && !weight.is_zero() {
                                    // A positive weight too small for the lot's unit.
                                    prop_assert_eq!(err.violation(), Violation::InvalidWeight);
                                } else {
                                    prop_assert!(was_consumed && !in_lot_unit.is_zero());
                                    prop_assert_eq!(err.violation(), Violation::BusinessRule);
                                }
                            }
                        }
                    }
                }
                check_invariants(&lots, &totals);
            }
        }
    }
}
