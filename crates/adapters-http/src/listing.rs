//! The listing items the store keeps with each lot (`roastery_ports::listing`), rendered by the
//! very DTOs the lot listings answer with, so a stored item is byte for byte what the domain
//! path would answer.

use roastery_app::blend::BlendedLotView;
use roastery_app::green_lot::GreenLotView;
use roastery_app::roast::RoastedLotView;
use roastery_ports::StoreError;
use roastery_ports::listing::ListingRender;
use serde::Serialize;
use utoipa::PartialSchema;

use crate::ops::{BlendedLotDto, RoastedLotDto};
use crate::wire::GreenLotDto;

/// Renders listing items as the lot listings answer them.
#[derive(Debug, Clone, Copy, Default)]
pub struct WireListing;

/// Raised by hand when an item's encoding changes without its schema changing.
const ENCODING_EPOCH: u32 = 1;

fn json(dto: &impl Serialize) -> Result<String, StoreError> {
    serde_json::to_string(dto).map_err(|e| StoreError::Internal(format!("encoding an item: {e}")))
}

/// FNV-1a: a hash that is the same in every build and process.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// What the version hashes: the encoding epoch and the three items' schemas.
fn versioned_text(epoch: u32) -> String {
    serde_json::to_string(&(
        epoch,
        GreenLotDto::schema(),
        RoastedLotDto::schema(),
        BlendedLotDto::schema(),
    ))
    .unwrap_or_default()
}

impl ListingRender for WireListing {
    /// The items' schemas (and the encoding epoch): a release that changes a listed field
    /// renders the stored items again when it opens the database.
    fn version(&self) -> u32 {
        fnv1a(versioned_text(ENCODING_EPOCH).as_bytes())
    }

    fn green_lot(&self, view: &GreenLotView) -> Result<String, StoreError> {
        json(&GreenLotDto::from(view.clone()))
    }

    fn roasted_lot(&self, view: &RoastedLotView) -> Result<String, StoreError> {
        let dto = RoastedLotDto::try_from(view.clone())
            .map_err(|e| StoreError::Internal(format!("rendering a roasted lot: {e:?}")))?;
        json(&dto)
    }

    fn blended_lot(&self, view: &BlendedLotView) -> Result<String, StoreError> {
        json(&BlendedLotDto::from(view.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version hashes every listed field's name of each item and the epoch: adding,
    /// renaming or retyping a field, or raising the epoch, changes it.
    #[test]
    fn the_version_follows_the_items_schemas_and_the_epoch() {
        let text = versioned_text(ENCODING_EPOCH);
        for field in [
            "lotNumber",
            "icoNumber",
            "lastModifiedDate",
            "registrationDate",
            "weightLoss",
            "greenLots",
            "profile",
            "roastedDate",
            "roastedLots",
            "blendedDate",
            "consumedDate",
        ] {
            assert!(text.contains(&format!("\"{field}\"")), "{field} not hashed");
        }
        assert_eq!(WireListing.version(), fnv1a(text.as_bytes()));
        assert_ne!(
            fnv1a(versioned_text(ENCODING_EPOCH + 1).as_bytes()),
            WireListing.version()
        );
        // FNV-1a's published values, so the version is the same in every build.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
    }
}
