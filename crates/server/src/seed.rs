//! `roastery seed demo`: a realistic data set, written through the same use cases as the API.

use chrono::{TimeDelta, Utc};
use std::str::FromStr;

use roastery_domain::cupping::{CuppingState, LotRef};
use roastery_domain::cupping_result::NewSensorialAttribute;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::physical_analysis::{NewDefect, NewPhysicalAnalysis, NewScreenSize};
use roastery_domain::price::Currency;
use roastery_domain::stock::LotKind;
use roastery_domain::weight::WeightUnit;
use roastery_ports::cupping::{CreateCupping, RecordCuppingResults, ResultInput, SetCuppingState};
use roastery_ports::green_lot::{ImportGreenLot, PriceInput, TransferGreenLot, WeightInput};
use roastery_ports::location::ImportLocation;
use roastery_ports::order::{SetOrder, SetOrderItem, SetOrderStatus};
use roastery_ports::product::{SyncProduct, SyncVariant};
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
    mrp(app)?;
    let green = green_lots(app, &locations)?;
    quality(app, &green)?;
    println!("demo data loaded");
    Ok(())
}

/// Shop products with their package sizes, and a few orders along the status machine.
fn mrp<S: Store>(app: &Roastery<S>) -> anyhow::Result<()> {
    let products = [
        (
            "SHOP-GUJI",
            "Ethiopia Guji Natural",
            &[("GUJI-250", "PACKAGE250G"), ("GUJI-1000", "PACKAGE1000G")][..],
        ),
        (
            "SHOP-HUILA",
            "Colombia Huila Washed",
            &[("HUILA-250", "PACKAGE250G"), ("HUILA-500", "PACKAGE500G")][..],
        ),
        (
            "SHOP-HOUSE",
            "House Espresso Blend",
            &[
                ("HOUSE-250", "PACKAGE250G"),
                ("HOUSE-SAMPLE", "PACKAGE13_2G"),
            ][..],
        ),
    ];
    app.sync_products(
        products
            .iter()
            .map(|(external_id, name, variants)| SyncProduct {
                external_id: (*external_id).into(),
                name: (*name).into(),
                variants: variants
                    .iter()
                    .map(|(sku, size)| SyncVariant {
                        sku: (*sku).into(),
                        package_size: (*size).into(),
                    })
                    .collect(),
            })
            .collect(),
    )?;
    let now = Utc::now();
    let order =
        |external_id: &str, days_ago: i64, customer: &str, kind: &str, items: &[(&str, i32)]| {
            SetOrder {
                external_id: external_id.into(),
                order_date: now - TimeDelta::days(days_ago),
                customer: Some(customer.into()),
                customer_type: Some(kind.into()),
                items: items
                    .iter()
                    .map(|(sku, quantity)| SetOrderItem {
                        sku: (*sku).into(),
                        quantity: *quantity,
                    })
                    .collect(),
            }
        };
    let orders = app.set_orders(vec![
        order(
            "WEB-1001",
            6,
            "Café Nord",
            "WHOLESALE",
            &[("HOUSE-250", 40), ("GUJI-1000", 5)],
        ),
        order("WEB-1002", 4, "Jana Berg", "RETAIL", &[("GUJI-250", 2)]),
        order(
            "WEB-1003",
            2,
            "Kaffeebar Süd",
            "WHOLESALE",
            &[("HUILA-500", 12)],
        ),
        order(
            "WEB-1004",
            1,
            "Tom Weber",
            "RETAIL",
            &[("HOUSE-SAMPLE", 3), ("HUILA-250", 1)],
        ),
    ])?;
    for (index, statuses) in [
        (0, &["IN_PROGRESS", "COMPLETED"][..]),
        (1, &["IN_PROGRESS"][..]),
        (3, &["CANCELLED"][..]),
    ] {
        for status in statuses {
            app.set_order_status(SetOrderStatus {
                order_id: orders[index].id,
                status: (*status).into(),
            })?;
        }
    }
    Ok(())
}

/// Green lots in the warehouse, and some of the first one moved to the roastery floor.
fn green_lots<S: Store>(
    app: &Roastery<S>,
    locations: &[roastery_domain::location::Location],
) -> anyhow::Result<Vec<GreenLot>> {
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
    Ok(imported)
}

/// A closed cupping and an open one of the green lots, with scores, and a physical analysis of
/// each green lot.
fn quality<S: Store>(app: &Roastery<S>, green: &[GreenLot]) -> anyhow::Result<()> {
    let d = |s: &str| Decimal::from_str(s);
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).map(|t| t.to_utc());
    let lots: Vec<LotRef> = green
        .iter()
        .map(|lot| LotRef {
            id: lot.id,
            kind: LotKind::Green,
        })
        .collect();
    for (start, scores, close) in [
        (
            "2026-02-10T09:00:00Z",
            [["86.5", "85.75"], ["84", "83.25"]],
            true,
        ),
        (
            "2026-03-05T09:00:00Z",
            [["87", "88.25"], ["82.5", "79"]],
            false,
        ),
    ] {
        let view = app.create_cupping(CreateCupping {
            start_date: at(start)?,
            cupping_sheet: "SCA Cupping Form".into(),
            state: Some(CuppingState::Open),
            coffees: lots.iter().take(2).copied().collect(),
        })?;
        let mut results = Vec::new();
        for (coffee, scores) in view.cupping.coffees().iter().zip(scores) {
            for (score, evaluator) in scores.into_iter().zip(["Maria", "Jonas"]) {
                results.push(ResultInput {
                    cupped_coffee_id: coffee.id,
                    final_score: Some(d(score)?),
                    scoring_state: None,
                    evaluator: Some(evaluator.into()),
                    note: Some("clean, sweet finish".into()),
                    sensorial_attributes: vec![
                        NewSensorialAttribute {
                            name: "Acidity".into(),
                            score: Some(d("8.25")?),
                        },
                        NewSensorialAttribute {
                            name: "Body".into(),
                            score: Some(d("7.75")?),
                        },
                    ],
                });
            }
        }
        let cupping_id = view.cupping.id();
        app.record_cupping_results(RecordCuppingResults {
            cupping_id,
            results,
        })?;
        if close {
            app.set_cupping_state(SetCuppingState {
                cupping_id,
                state: CuppingState::Closed,
            })?;
        }
    }
    for (i, lot) in lots.iter().enumerate() {
        app.record_physical_analysis(NewPhysicalAnalysis {
            analysis_date: at("2026-02-01T08:00:00Z")? + chrono::TimeDelta::days(i as i64),
            analysed_lot: *lot,
            moisture: Some(d("10.8")?),
            water_activity: Some(d("0.56")?),
            density: Some(d("702.5")?),
            screen_sizes: vec![
                NewScreenSize {
                    size: "18".into(),
                    percentage: Some(d("55.5")?),
                },
                NewScreenSize {
                    size: "17".into(),
                    percentage: Some(d("38")?),
                },
            ],
            defects: vec![NewDefect {
                name: "Quakers".into(),
                count: Some(3),
            }],
            note: None,
            evaluator: Some("QC lab".into()),
        })?;
    }
    Ok(())
}
