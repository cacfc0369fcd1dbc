//! `roastery seed demo`: a realistic data set, written through the same use cases as the API.

use std::str::FromStr;

use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::price::Currency;
use roastery_domain::weight::WeightUnit;
use roastery_ports::green_lot::{ImportGreenLot, PriceInput, TransferGreenLot, WeightInput};
use roastery_ports::location::ImportLocation;
use roastery_ports::project::ImportProject;
use roastery_ports::{Roastery, Store};
use rust_decimal::Decimal;

pub fn demo<S: Store>(app: &Roastery<S>) -> anyhow::Result<()> {
    let mut locations = Vec::new();
    for (name, external_id) in [
        ("Hamburg green coffee warehouse", "WH-HAM"),
        ("Roastery floor", "RST-01"),
        ("Shop stock room", "SHOP-01"),
    ] {
        locations.push(app.import_location(ImportLocation {
            name: name.into(),
            external_id: Some(external_id.into()),
        })?);
    }
    for (name, description) in [
        (
            "Direct Trade 2026",
            "Lots bought directly from partner farms",
        ),
        ("Espresso Program", "Components of the house espresso"),
    ] {
        app.import_project(ImportProject {
            name: name.into(),
            description: Some(description.into()),
        })?;
    }
    green_lots(app, &locations)?;
    println!("demo data loaded");
    Ok(())
}

/// Green lots in the warehouse, and some of the first one moved to the roastery floor.
fn green_lots<S: Store>(
    app: &Roastery<S>,
    locations: &[roastery_domain::location::Location],
) -> anyhow::Result<()> {
    let warehouse = locations.first().and_then(|l| l.external_id.clone());
    let lots = [
        (
            "Ethiopia Guji Natural G1",
            "ERP-GL-1001",
            "60",
            WeightUnit::Kg,
            "6.85",
            "EUR",
            "ETH",
            "Natural",
            "Heirloom",
        ),
        (
            "Colombia Huila Washed",
            "ERP-GL-1002",
            "70",
            WeightUnit::Kg,
            "5.40",
            "EUR",
            "COL",
            "Washed",
            "Caturra",
        ),
        (
            "Brazil Cerrado Pulped Natural",
            "ERP-GL-1003",
            "132.277357",
            WeightUnit::Lbs,
            "3.15",
            "USD",
            "BRA",
            "Pulped natural",
            "Yellow Bourbon",
        ),
    ];
    let mut imported = Vec::new();
    for (name, external_id, amount, unit, price, currency, country, process, variety) in lots {
        let view = app.import_green_lot(ImportGreenLot {
            name: Some(name.into()),
            external_id: Some(external_id.into()),
            weight: WeightInput {
                amount: Decimal::from_str(amount)?,
                unit,
            },
            ico_number: None,
            price: Some(PriceInput {
                amount: Decimal::from_str(price)?,
                currency: Currency::parse(currency)?,
            }),
            location_id: None,
            location_external_id: warehouse.clone(),
            projects: vec!["Direct Trade 2026".into()],
            details: GreenLotDetails {
                note: Some("Demo lot".into()),
                grade: Some("Specialty".into()),
                crop_year: Some("2025/26".into()),
                processing_methods: vec![process.into()],
                countries_of_origin: vec![country.into()],
                varieties: vec![variety.into()],
                certifications: Vec::new(),
            },
        })?;
        imported.push(view.lot);
    }
    if let (Some(first), Some(floor)) = (imported.first(), locations.get(1)) {
        app.transfer_green_lot(TransferGreenLot {
            green_lot_id: first.id,
            weight: WeightInput {
                amount: Decimal::from(15),
                unit: WeightUnit::Kg,
            },
            destination_location_id: floor.id,
        })?;
    }
    Ok(())
}
