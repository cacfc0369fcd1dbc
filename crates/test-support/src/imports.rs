//! Use-case commands with only what a test needs filled in.

use roastery_app::green_lot::{ImportGreenLot, WeightInput};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::WeightUnit;
use rust_decimal::Decimal;

/// An import of `kg` kilograms of a green lot named `name` with the external id `external_id`,
/// at no location, with no price, projects or details.
pub fn green_import(name: &str, external_id: &str, kg: i64) -> ImportGreenLot {
    ImportGreenLot {
        name: Some(name.to_owned()),
        external_id: Some(external_id.to_owned()),
        weight: WeightInput {
            amount: Decimal::from(kg),
            unit: WeightUnit::Kg,
        },
        ico_number: None,
        price: None,
        location_id: None,
        location_external_id: None,
        projects: Vec::new(),
        details: GreenLotDetails::default(),
    }
}
