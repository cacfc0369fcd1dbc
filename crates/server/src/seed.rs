//! `roastery seed demo`: a realistic data set, written through the same use cases as the API.

#![allow(
    clippy::print_stdout,
    reason = "the command line answers on standard output"
)]

use chrono::{TimeDelta, Utc};
use std::str::FromStr;

use roastery_app::Roastery;
use roastery_app::blend::CreateBlend;
use roastery_app::cupping::{CreateCupping, RecordCuppingResults, ResultInput, SetCuppingState};
use roastery_app::due_diligence::SetDueDiligence;
use roastery_app::green_lot::{ImportGreenLot, PriceInput, TransferGreenLot, WeightInput};
use roastery_app::location::ImportLocation;
use roastery_app::order::{SetOrder, SetOrderItem, SetOrderStatus, ShipAllocation, ShipOrder};
use roastery_app::plan::{SetProfilePlanning, SetRecipe};
use roastery_app::product::{SyncProduct, SyncVariant};
use roastery_app::profile::ImportProfile;
use roastery_app::project::ImportProject;
use roastery_app::roast::{CurveDraft, RecordRoast};
use roastery_domain::cupping::CuppingState;
use roastery_domain::cupping_result::NewSensorialAttribute;
use roastery_domain::due_diligence::{DueDiligenceInput, StatementInput, SupplierInput};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::order::{CustomerType, Order, OrderStatus};
use roastery_domain::page::PageRequest;
use roastery_domain::physical_analysis::{NewDefect, NewPhysicalAnalysis, NewScreenSize};
use roastery_domain::planning::RecipeComponent;
use roastery_domain::price::Currency;
use roastery_domain::product::PackageSize;
use roastery_domain::profile::ComponentDraft;
use roastery_domain::roast_curve::DataPoint;
use roastery_domain::roast_details::{RoastDetailsDraft, RoastValue, Temperature, Time};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::weight::RequestedWeight;
use roastery_domain::weight::WeightUnit;
use roastery_ports::Store;
use rust_decimal::Decimal;
use uuid::Uuid;

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
    let orders = mrp(app)?;
    let green = green_lots(app, &locations)?;
    due_diligence(app, &green)?;
    let made = roasts_and_blends(app, &locations)?;
    shipments(app, &orders, (made.guji_roast, made.house_blend))?;
    quality(app, &green)?;
    planning(app, &made)?;
    println!("demo data loaded");
    Ok(())
}

/// Shop products with their package sizes, and a few orders along the status machine.
fn mrp<S: Store>(app: &Roastery<S>) -> anyhow::Result<Vec<Order>> {
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
        (
            "SHOP-DECAF",
            "Colombia Decaf",
            &[("DECAF-250", "PACKAGE250G")][..],
        ),
    ];
    let products = products
        .iter()
        .map(|(external_id, name, variants)| {
            Ok(SyncProduct {
                external_id: (*external_id).into(),
                name: (*name).into(),
                variants: variants
                    .iter()
                    .map(|(sku, size)| {
                        Ok(SyncVariant {
                            sku: (*sku).into(),
                            package_size: PackageSize::parse(size)?,
                        })
                    })
                    .collect::<anyhow::Result<_>>()?,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    app.sync_products(products)?;
    let now = Utc::now();
    let order =
        |external_id: &str, days_ago: i64, customer: &str, kind, items: &[(&str, i32)]| SetOrder {
            external_id: external_id.into(),
            order_date: now - TimeDelta::days(days_ago),
            customer: Some(customer.into()),
            customer_type: Some(kind),
            items: items
                .iter()
                .map(|(sku, quantity)| SetOrderItem {
                    sku: (*sku).into(),
                    quantity: *quantity,
                })
                .collect(),
        };
    let orders = app.set_orders(vec![
        order(
            "WEB-1001",
            6,
            "Café Nord",
            CustomerType::Wholesale,
            &[("HOUSE-250", 40), ("GUJI-1000", 5)],
        ),
        order(
            "WEB-1002",
            4,
            "Jana Berg",
            CustomerType::Retail,
            &[("GUJI-250", 2)],
        ),
        order(
            "WEB-1003",
            2,
            "Kaffeebar Süd",
            CustomerType::Wholesale,
            &[("HUILA-500", 12)],
        ),
        order(
            "WEB-1004",
            1,
            "Tom Weber",
            CustomerType::Retail,
            &[("HOUSE-SAMPLE", 3), ("HUILA-250", 1)],
        ),
        order(
            "WEB-1005",
            1,
            "Café Nord",
            CustomerType::Wholesale,
            &[("HOUSE-250", 8)],
        ),
        // Open orders for `roastery plan`: this week's wholesale, and one due in five days.
        order(
            "WEB-1006",
            0,
            "Café Nord",
            CustomerType::Wholesale,
            &[("HOUSE-250", 60), ("GUJI-1000", 10)],
        ),
        order(
            "WEB-1007",
            0,
            "Kaffeebar Süd",
            CustomerType::Wholesale,
            &[("HOUSE-250", 24), ("HUILA-250", 8), ("HOUSE-SAMPLE", 50)],
        ),
        order(
            "WEB-1008",
            -5,
            "Hotel Alster",
            CustomerType::Wholesale,
            &[("GUJI-250", 40), ("DECAF-250", 12)],
        ),
    ])?;
    for (index, statuses) in [
        (0, &["IN_PROGRESS", "COMPLETED"][..]),
        (1, &["IN_PROGRESS"][..]),
        (3, &["CANCELLED"][..]),
    ] {
        let order = orders
            .get(index)
            .ok_or_else(|| anyhow::anyhow!("the demo set has no order {index}"))?;
        for status in statuses {
            app.set_order_status(SetOrderStatus {
                order_id: order.id,
                status: OrderStatus::parse(status)?,
            })?;
        }
    }
    Ok(orders)
}

/// Ships two orders from the demo's lots, so a bag can be traced back to its green lots at once.
fn shipments<S: Store>(
    app: &Roastery<S>,
    orders: &[Order],
    (guji_roast, house_blend): (Option<Uuid>, Uuid),
) -> anyhow::Result<()> {
    let shipped = Utc::now() - TimeDelta::hours(2);
    let mut plan = vec![("WEB-1005", "HOUSE-250", house_blend, 8)];
    if let Some(guji) = guji_roast {
        plan.push(("WEB-1002", "GUJI-250", guji, 2));
    }
    for (external_id, sku, lot_id, quantity) in plan {
        let order = orders
            .iter()
            .find(|o| o.external_id == external_id)
            .ok_or_else(|| anyhow::anyhow!("demo order {external_id} missing"))?;
        app.ship_order(ShipOrder {
            order_id: order.id,
            shipped_date: shipped,
            allocations: vec![ShipAllocation {
                sku: sku.into(),
                lot_id,
                quantity,
            }],
        })?;
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

/// EUDR due diligence of the demo's source lots: plots and statements for Ethiopia and Colombia;
/// Brazil's statement has not arrived yet, so the demo shows what is `missing`.
fn due_diligence<S: Store>(app: &Roastery<S>, green: &[GreenLot]) -> anyhow::Result<()> {
    let plots = [
        // Two smallholder plots near Hambela (a point up to 4 ha, a polygon above).
        r#"{"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Point","coordinates":[38.7601234,5.8312345]},
             "properties":{"ProducerName":"Alemu Bekele","Area":2.5}},
            {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[38.7702,5.8351],[38.7751,5.8353],[38.7749,5.8398],[38.7701,5.8395],[38.7702,5.8351]]]},
             "properties":{"ProducerName":"Tsehay Worku","ProductionPlace":"Hambela Wamena"}}]}"#,
        // One farm of two fields near Pitalito.
        r#"{"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[
              [[[-76.0451,1.8512],[-76.0402,1.8514],[-76.0405,1.8561],[-76.0453,1.8558],[-76.0451,1.8512]]],
              [[[-76.0380,1.8490],[-76.0351,1.8491],[-76.0352,1.8520],[-76.0381,1.8519],[-76.0380,1.8490]]]]},
             "properties":{"ProducerName":"Finca El Mirador","ProductionPlace":"Pitalito, Huila"}}]}"#,
        r#"{"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-47.1012,-18.9521],[-47.0903,-18.9519],[-47.0905,-18.9602],[-47.1010,-18.9604],[-47.1012,-18.9521]]]},
             "properties":{"ProducerName":"Fazenda Boa Vista"}}]}"#,
    ];
    let facts = [
        (
            "ET",
            "Yirgacheffe Coffee Farmers Cooperative Union",
            Some("25DEXW3Y7K2150"),
        ),
        (
            "CO",
            "Cooperativa de Caficultores del Sur del Huila",
            Some("25NLSN6LX69730"),
        ),
        ("BR", "Fazenda Boa Vista", None),
    ];
    for ((lot, plots), (country, supplier, statement)) in green.iter().zip(plots).zip(facts) {
        app.set_due_diligence(SetDueDiligence {
            green_lot_id: lot.id,
            input: DueDiligenceInput {
                country_of_production: country.into(),
                production_from: "2025-10-01".into(),
                production_to: "2026-02-28".into(),
                plots: plots.into(),
                suppliers: vec![SupplierInput {
                    name: supplier.into(),
                    country: Some(country.into()),
                    ..SupplierInput::default()
                }],
                statements: statement
                    .map(|reference| StatementInput {
                        reference_number: reference.into(),
                        verification_number: Some("K7R8LA90".into()),
                        kind: "DDS".into(),
                        role: "UPSTREAM".into(),
                    })
                    .into_iter()
                    .collect(),
                hs_code: None,
            },
        })?;
    }
    Ok(())
}

/// A closed cupping and an open one of the green lots, with scores, and a physical analysis of
/// each green lot.
fn quality<S: Store>(app: &Roastery<S>, green: &[GreenLot]) -> anyhow::Result<()> {
    let d = |s: &str| Decimal::from_str(s);
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).map(|t| t.to_utc());
    let lots: Vec<TypedLotRef> = green
        .iter()
        .map(|lot| TypedLotRef {
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
    for (i, lot) in (0_i64..).zip(lots.iter()) {
        app.record_physical_analysis(NewPhysicalAnalysis {
            analysis_date: at("2026-02-01T08:00:00Z")? + chrono::TimeDelta::days(i),
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

fn kg(amount: &str) -> anyhow::Result<WeightInput> {
    Ok(WeightInput {
        amount: Decimal::from_str(amount)?,
        unit: WeightUnit::Kg,
    })
}

/// A bean-temperature or environment curve sampled every two seconds over a twelve-minute roast.
fn demo_curve(name: &str, start: i64, end: i64) -> CurveDraft {
    let samples: i64 = 360;
    CurveDraft {
        name: name.into(),
        unit: "CELSIUS".into(),
        data_points: (0..=samples)
            .map(|i| DataPoint {
                time_ms: i * 2_000,
                value: Decimal::new((start * samples + (end - start) * i) * 10 / samples, 1),
            })
            .collect(),
    }
}

fn demo_details(technician: &str, minutes: &str, agtron: i64) -> anyhow::Result<RoastDetailsDraft> {
    Ok(RoastDetailsDraft {
        roast_technician: Some(technician.into()),
        note: Some("Demo roast".into()),
        start_temperature: Some(Temperature::parse(Decimal::from(205), "CELSIUS")?),
        end_temperature: Some(Temperature::parse(Decimal::new(2125, 1), "CELSIUS")?),
        roast_value: Some(RoastValue::parse(Decimal::from(agtron), "AGTRON_GOURMET")?),
        roast_value2: Some(RoastValue::parse(
            Decimal::from(agtron + 8),
            "AGTRON_GOURMET",
        )?),
        roast_duration: Some(Time::parse(Decimal::from_str(minutes)?, "MINUTE")?),
        first_crack_time: Some(Time::parse(Decimal::from(510), "SECOND")?),
        color_change_time: Some(Time::parse(Decimal::from(285), "SECOND")?),
        machine: Some("Probat P12".into()),
    })
}

/// A house espresso profile, three roasts from the demo green lots and a blend of two of them.
/// Returns the Guji roast (when there is Guji on the floor) and the house blend.
/// What the demo roasted and blended, and the profiles it roasted with.
struct Made {
    guji_roast: Option<Uuid>,
    house_blend: Uuid,
    espresso: Uuid,
    guji_filter: Uuid,
    huila: Uuid,
}

fn roasts_and_blends<S: Store>(
    app: &Roastery<S>,
    locations: &[roastery_domain::location::Location],
) -> anyhow::Result<Made> {
    let floor = locations
        .get(1)
        .ok_or_else(|| anyhow::anyhow!("demo roastery floor missing"))?;
    let green = app.list_green_lots(None, PageRequest::default())?.items;
    let by_external_id = |external_id: &str| {
        green
            .iter()
            .find(|g| g.lot.external_id.as_deref() == Some(external_id))
            .map(|g| g.lot.id)
            .ok_or_else(|| anyhow::anyhow!("demo green lot {external_id} missing"))
    };
    let huila = by_external_id("ERP-GL-1002")?;
    let cerrado = by_external_id("ERP-GL-1003")?;
    let guji_on_floor = green
        .iter()
        .find(|g| g.lot.location_id == Some(floor.id) && !g.lot.is_consumed())
        .map(|g| g.lot.id);
    // The Guji filter profile draws from the lot on the floor first, then the warehouse.
    let guji_lots: Vec<Uuid> = guji_on_floor
        .into_iter()
        .chain(by_external_id("ERP-GL-1001").ok())
        .collect();
    let guji_filter = app.import_profile(ImportProfile {
        name: "Guji Filter".into(),
        external_id: Some("PRF-FIL-1".into()),
        profile_group: Some("Filter".into()),
        components: vec![ComponentDraft {
            percentage: Decimal::from(100),
            green_lot_ids: guji_lots,
        }],
        reference_roast_id: None,
        projects: Vec::new(),
    })?;
    let espresso = app.import_profile(ImportProfile {
        name: "House Espresso".into(),
        external_id: Some("PRF-ESP-1".into()),
        profile_group: Some("Espresso".into()),
        components: vec![
            ComponentDraft {
                percentage: Decimal::from(60),
                green_lot_ids: vec![huila],
            },
            ComponentDraft {
                percentage: Decimal::from(40),
                green_lot_ids: vec![cerrado],
            },
        ],
        reference_roast_id: None,
        projects: vec!["Espresso Program".into()],
    })?;
    let day = |d: u32, h: u32| {
        chrono::NaiveDate::from_ymd_opt(2026, 11, d)
            .and_then(|date| date.and_hms_opt(h, 0, 0))
            .map(|at| at.and_utc())
            .ok_or_else(|| anyhow::anyhow!("bad demo date"))
    };
    let city = app.record_roast(RecordRoast {
        name: "Huila City Roast".into(),
        location_id: floor.id,
        roasted_date: day(16, 8)?,
        weight: kg("10.2")?,
        green_lots: vec![(huila, kg("12")?)],
        profile_id: None,
        details: Some(demo_details("Ana", "11.5", 62)?),
        curves: vec![demo_curve("BT", 95, 212), demo_curve("ET", 230, 245)],
        projects: vec!["Direct Trade 2026".into()],
    })?;
    let house = app.record_roast(RecordRoast {
        name: "House Espresso batch 1".into(),
        location_id: floor.id,
        roasted_date: day(17, 9)?,
        weight: kg("8.4")?,
        green_lots: vec![(huila, kg("6")?), (cerrado, kg("4")?)],
        profile_id: Some(espresso.profile.id),
        details: Some(demo_details("Jonas", "12", 55)?),
        curves: vec![demo_curve("BT", 90, 215)],
        projects: vec!["Espresso Program".into()],
    })?;
    let guji_roast = match guji_on_floor {
        None => None,
        Some(guji) => Some(app.record_roast(RecordRoast {
            name: "Guji Filter Roast".into(),
            location_id: floor.id,
            roasted_date: day(18, 8)?,
            weight: kg("8.5")?,
            green_lots: vec![(guji, kg("10")?)],
            profile_id: Some(guji_filter.profile.id),
            details: Some(demo_details("Ana", "10", 70)?),
            curves: vec![demo_curve("BT", 100, 205)],
            projects: Vec::new(),
        })?),
    }
    .map(|r| r.roasted_lot.lot.id);
    let blend = app.create_blend(CreateBlend {
        name: "House Blend".into(),
        location_id: floor.id,
        blended_date: day(19, 10)?,
        roasted_lots: vec![
            (city.roasted_lot.lot.id, kg("5")?),
            (house.roasted_lot.lot.id, kg("8.4")?),
        ],
        projects: vec!["Espresso Program".into()],
    })?;
    Ok(Made {
        guji_roast,
        house_blend: blend.lot.id,
        espresso: espresso.profile.id,
        guji_filter: guji_filter.profile.id,
        huila,
    })
}

/// Planning data and recipes, so `roastery plan` prints a roast list for the open orders: the
/// espresso and the Guji filter learn their loss from their roasts, the Huila profile has one
/// set; the decaf has no recipe yet and shows as not planned.
fn planning<S: Store>(app: &Roastery<S>, made: &Made) -> anyhow::Result<()> {
    let huila = app.import_profile(ImportProfile {
        name: "Huila Washed".into(),
        external_id: Some("PRF-HUI-1".into()),
        profile_group: Some("Filter".into()),
        components: vec![ComponentDraft {
            percentage: Decimal::from(100),
            green_lot_ids: vec![made.huila],
        }],
        reference_roast_id: None,
        projects: Vec::new(),
    })?;
    let batch = |min: &str, max: &str| -> anyhow::Result<_> {
        let w = |a: &str| -> anyhow::Result<RequestedWeight> {
            Ok(RequestedWeight {
                amount: Decimal::from_str(a)?,
                unit: WeightUnit::Kg,
            })
        };
        Ok(Some((w(min)?, w(max)?)))
    };
    for (profile_id, expected_loss, batch_size) in [
        (made.espresso, None, batch("6", "15")?),
        (made.guji_filter, None, batch("5", "12")?),
        (huila.profile.id, Some(Decimal::from(14)), batch("5", "12")?),
    ] {
        app.set_profile_planning(SetProfilePlanning {
            profile_id,
            expected_loss,
            batch_size,
        })?;
    }
    let products = app.list_products(PageRequest::default())?.items;
    for (external_id, profile_id) in [
        ("SHOP-HOUSE", made.espresso),
        ("SHOP-GUJI", made.guji_filter),
        ("SHOP-HUILA", huila.profile.id),
    ] {
        let product = products
            .iter()
            .find(|p| p.product.external_id == external_id)
            .ok_or_else(|| anyhow::anyhow!("demo product {external_id} missing"))?;
        app.set_recipe(SetRecipe {
            product_id: product.product.id,
            components: vec![RecipeComponent {
                profile_id,
                percentage: Decimal::from(100),
            }],
        })?;
    }
    Ok(())
}
