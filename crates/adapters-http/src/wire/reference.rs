//! References to other resources as several operations write or read them: lots by id and type,
//! by id and name, locations, names.

use roastery_app::reference::{LocationRef, NamedLotRef};
use roastery_domain::lot_source::LotSource;
use roastery_domain::profile::GreenLotRef;
use roastery_domain::project::ProjectRef;
use roastery_domain::stock::TypedLotRef;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::value::{WeightDto, required, rule};
use crate::error::ApiError;

/// `{"id", "type"}`: a green, roasted or blended lot.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
pub struct LotRefDto {
    #[schema(value_type = Uuid, required = true)]
    pub id: Option<Uuid>,
    /// `INVENTORY_GREEN`, `INVENTORY_ROAST` or `INVENTORY_BLEND`.
    #[serde(rename = "type")]
    #[schema(value_type = String, required = true)]
    pub lot_type: Option<String>,
}

impl LotRefDto {
    pub fn parse(
        id: Option<Uuid>,
        lot_type: Option<String>,
        field: &str,
    ) -> Result<TypedLotRef, ApiError> {
        let id = required(id, &format!("{field}.id"))?;
        let lot_type = required(lot_type, &format!("{field}.type"))?;
        TypedLotRef::parse(id, &lot_type).map_err(|e| rule(&format!("{field}.type"), e))
    }
}

impl From<TypedLotRef> for LotRefDto {
    fn from(l: TypedLotRef) -> Self {
        Self {
            id: Some(l.id),
            lot_type: Some(l.kind.reference_type().to_owned()),
        }
    }
}

/// `ObjectReference`: `{"id", "name"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ObjectRefDto {
    pub id: Uuid,
    pub name: String,
}

impl From<NamedLotRef> for ObjectRefDto {
    fn from(r: NamedLotRef) -> Self {
        Self {
            id: r.id,
            name: r.name,
        }
    }
}

impl From<GreenLotRef> for ObjectRefDto {
    fn from(r: GreenLotRef) -> Self {
        Self {
            id: r.id,
            name: r.name,
        }
    }
}

impl From<ProjectRef> for ObjectRefDto {
    fn from(p: ProjectRef) -> Self {
        Self {
            id: p.id,
            name: p.name,
        }
    }
}

impl From<ProjectRef> for ProjectNameDto {
    fn from(p: ProjectRef) -> Self {
        Self { name: p.name }
    }
}

/// `{"id", "externalId"}`
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocationRefDto {
    pub id: Uuid,
    #[schema(required = true)]
    pub external_id: Option<String>,
}

impl From<LocationRef> for LocationRefDto {
    fn from(l: LocationRef) -> Self {
        Self {
            id: l.id,
            external_id: l.external_id,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectNameDto {
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NameDto {
    pub name: String,
}

/// `LotSource`: `{"id", "name", "externalId", "usedWeight"}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LotSourceDto {
    pub id: Uuid,
    pub name: String,
    #[schema(required = true)]
    pub external_id: Option<String>,
    pub used_weight: WeightDto,
}

impl From<LotSource> for LotSourceDto {
    fn from(s: LotSource) -> Self {
        Self {
            id: s.lot_id,
            name: s.name,
            external_id: s.external_id,
            used_weight: s.used_weight.into(),
        }
    }
}
