//! inventory.roast: roasted lots, their details and curves, processing profiles, and the writes
//! that create them (recording a roast, importing a profile, setting a roasted lot's weight).
//!
//! Reads answer views: a stored record plus the few names and external ids of what it refers to
//! (its profile, its location), looked up in the same transaction.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use roastery_domain::page::{self, MAX_IDS, Page, PageRequest};
use roastery_domain::profile::Profile;
use roastery_domain::roast::RoastError;
use roastery_domain::roast_curve::RoastCurve;
use roastery_domain::roast_details::RoastDetails;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::weight::Weight;
use uuid::Uuid;

use crate::error::AppError;
use crate::repo::*;
use crate::{Repos, Roastery, Store};

/// `location` of a lot: `{"id", "externalId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationRef {
    pub id: Uuid,
    pub external_id: Option<String>,
}

/// `profile` of a roasted lot: `{"id", "name", "externalId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRef {
    pub id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
}

/// An `ObjectReference` to a lot: `{"id", "name"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LotRef {
    pub id: Uuid,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastedLotView {
    pub lot: RoastedLot,
    pub profile: Option<ProfileRef>,
    pub location: LocationRef,
}

/// The details of one roast and the lot they belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastDetailsView {
    pub roasted_lot: LotRef,
    pub details: RoastDetails,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileView {
    pub profile: Profile,
    pub reference_roast: Option<LotRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRoastedLotWeight {
    pub roasted_lot_id: Uuid,
    pub weight: Weight,
}

/// The records found for an asked id list, in the asked order, unknown ids left out, paged by
/// index.
pub(crate) fn in_asked_order<T>(
    ids: &[Uuid],
    found: Vec<T>,
    key: impl Fn(&T) -> Uuid,
    page: &PageRequest,
) -> Result<Page<T>, AppError> {
    let mut by_id: HashMap<Uuid, T> = found.into_iter().map(|t| (key(&t), t)).collect();
    let ordered: Vec<T> = ids.iter().filter_map(|id| by_id.remove(id)).collect();
    Ok(Page::from_found(ordered, page)?)
}

/// Checks a by-ids request before any lookup: the cursor kind and the id list.
pub(crate) fn check_by_ids(
    field: &'static str,
    ids: &[Uuid],
    page: &PageRequest,
) -> Result<(), AppError> {
    page.index()?;
    page::unique_ids(field, ids, MAX_IDS)?;
    Ok(())
}

/// The location reference of a lot (a stored lot's location always exists; should it not, the
/// reference carries no external id rather than failing the read).
pub(crate) fn location_ref(tx: &mut impl Repos, id: Uuid) -> Result<LocationRef, AppError> {
    Ok(LocationRef {
        id,
        external_id: tx.location(id)?.and_then(|l| l.external_id),
    })
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

fn profile_view(tx: &mut impl Repos, profile: Profile) -> Result<ProfileView, AppError> {
    let reference_roast = match profile.reference_roast_id {
        None => None,
        Some(id) => tx.roasted_lot(id)?.map(|l| LotRef {
            id: l.id,
            name: l.name,
        }),
    };
    Ok(ProfileView {
        profile,
        reference_roast,
    })
}

impl<S: Store> Roastery<S> {
    pub fn list_roasted_lots(
        &self,
        from: Option<DateTime<Utc>>,
        page: PageRequest,
    ) -> Result<Page<RoastedLotView>, AppError> {
        page.keyset()?;
        self.store.read(|tx| {
            let lots = tx.list_roasted_lots(from, &page)?;
            let next = lots.next;
            let items = lots
                .items
                .into_iter()
                .map(|lot| roasted_view(tx, lot))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Page { items, next })
        })
    }

    pub fn roasted_lots_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<RoastedLotView>, AppError> {
        const FIELD: &str = "filter.roastedLotIds";
        check_by_ids(FIELD, &ids, &page)?;
        self.store.read(|tx| {
            let found = tx.roasted_lots_by_ids(&ids)?;
            let page = in_asked_order(&ids, found, |l| l.id, &page)?;
            let next = page.next;
            let items = page
                .items
                .into_iter()
                .map(|lot| roasted_view(tx, lot))
                .collect::<Result<Vec<_>, _>>()?;
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
        check_by_ids(FIELD, &ids, &page)?;
        self.store.read(|tx| {
            let lots = tx.roasted_lots_by_ids(&ids)?;
            let mut details: HashMap<Uuid, RoastDetails> =
                tx.roast_details_by_ids(&ids)?.into_iter().collect();
            let found = lots
                .into_iter()
                .map(|l| RoastDetailsView {
                    details: details.remove(&l.id).unwrap_or_default(),
                    roasted_lot: LotRef {
                        id: l.id,
                        name: l.name,
                    },
                })
                .collect();
            in_asked_order(&ids, found, |d| d.roasted_lot.id, &page)
        })
    }

    /// The curves of one roast, in the order they were recorded; an unknown lot is not found.
    pub fn roast_curves(&self, roasted_lot_id: Uuid) -> Result<Vec<RoastCurve>, AppError> {
        self.store.read(|tx| {
            if tx.roasted_lot(roasted_lot_id)?.is_none() {
                return Err(RoastError::NotFound(roasted_lot_id).into());
            }
            Ok(tx.roast_curves(roasted_lot_id)?)
        })
    }

    pub fn profiles_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<ProfileView>, AppError> {
        const FIELD: &str = "filter.profileIds";
        check_by_ids(FIELD, &ids, &page)?;
        self.store.read(|tx| {
            let found = tx.profiles_by_ids(&ids)?;
            let page = in_asked_order(&ids, found, |p| p.id, &page)?;
            let next = page.next;
            let items = page
                .items
                .into_iter()
                .map(|p| profile_view(tx, p))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Page { items, next })
        })
    }

    /// Like `setGreenLotWeight`: zero consumes; a consumed lot is final.
    pub fn set_roasted_lot_weight(
        &self,
        cmd: SetRoastedLotWeight,
    ) -> Result<RoastedLotView, AppError> {
        let now = self.clock.now();
        self.store.write(|tx| {
            let mut lot = tx
                .roasted_lot(cmd.roasted_lot_id)?
                .ok_or(RoastError::NotFound(cmd.roasted_lot_id))?;
            lot.set_weight(cmd.weight, now)?;
            tx.update_roasted_lot_stock(&lot)?;
            roasted_view(tx, lot)
        })
    }
}
