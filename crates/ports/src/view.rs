//! What the repositories and the listing renderer answer about records beside the records
//! themselves: references to other records and lots with what clients see of them.

use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::location::Location;
use roastery_domain::roasted_lot::RoastedLot;
use uuid::Uuid;

/// `location` of a lot: `{"id", "externalId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationRef {
    pub id: Uuid,
    pub external_id: Option<String>,
}

/// An `ObjectReference` to a lot: `{"id", "name"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedLotRef {
    pub id: Uuid,
    pub name: String,
}

/// A lot with the location it is at, as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotView {
    pub lot: GreenLot,
    pub location: Option<Location>,
}

/// `profile` of a roasted lot: `{"id", "name", "externalId"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRef {
    pub id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastedLotView {
    pub lot: RoastedLot,
    pub profile: Option<ProfileRef>,
    pub location: LocationRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlendedLotView {
    pub lot: BlendedLot,
    pub location: LocationRef,
}
