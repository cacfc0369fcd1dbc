//! `roastery seed bench`: the data set `make bench` measures against: many green lots, some roasts
//! and orders, written through the same use cases as the API (one transaction per use case) from
//! several threads, and one genealogy chain of five lot levels (transfer, transfer and merge,
//! roast, blend) ending in a shipped order, for the trace scenario. Prints the ids the load
//! scenarios need as one JSON object.

#![allow(
    clippy::print_stdout,
    clippy::indexing_slicing,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::manual_is_multiple_of,
    reason = "a seeding tool: small fixed tables indexed by counters, answers on standard output"
)]

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{TimeDelta, Utc};
use roastery_app::Roastery;
use roastery_app::blend::CreateBlend;
use roastery_app::due_diligence::SetDueDiligence;
use roastery_app::green_lot::{ImportGreenLot, PriceInput, TransferGreenLot, WeightInput};
use roastery_app::location::ImportLocation;
use roastery_app::order::{SetOrder, SetOrderItem, ShipAllocation, ShipOrder};
use roastery_app::plan::{SetProfilePlanning, SetRecipe};
use roastery_app::product::{SyncProduct, SyncVariant};
use roastery_app::profile::ImportProfile;
use roastery_app::roast::RecordRoast;
use roastery_domain::due_diligence::{DueDiligenceInput, StatementInput, SupplierInput};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::order::CustomerType;
use roastery_domain::planning::RecipeComponent;
use roastery_domain::price::Currency;
use roastery_domain::product::PackageSize;
use roastery_domain::profile::ComponentDraft;
use roastery_domain::weight::RequestedWeight;
use roastery_domain::weight::WeightUnit;
use roastery_ports::Store;
use rust_decimal::Decimal;
use serde_json::json;

/// How much to write.
#[derive(Debug, Clone, Copy)]
pub struct BenchSize {
    pub green_lots: usize,
    pub roasts: usize,
    pub orders: usize,
    pub threads: usize,
}

/// Lots the distinct-lot transfer scenario cycles through (each gets a few transfers per second).
const TRANSFER_LOTS: usize = 2_000;
const SKUS: [&str; 4] = ["BENCH-250", "BENCH-500", "BENCH-1000", "BENCH-SAMPLE"];

pub fn bench<S: Store>(app: &Roastery<S>, size: BenchSize) -> anyhow::Result<()> {
    let mut locations = Vec::new();
    for (name, external_id) in [
        ("Bench warehouse", "BENCH-WH"),
        ("Bench roastery floor", "BENCH-FLOOR"),
        ("Bench shop", "BENCH-SHOP"),
    ] {
        locations.push(
            app.import_location(ImportLocation {
                name: name.into(),
                external_id: Some(external_id.into()),
            })?
            .id,
        );
    }
    let (warehouse, floor, shop) = (locations[0], locations[1], locations[2]);

    // The hot lot holds enough for any number of small transfers.
    let hot = app.import_green_lot(green_lot(usize::MAX, "1000000", warehouse)?)?;
    let lots = import_green_lots(app, size, warehouse)?;

    let mut roasted = Vec::new();
    for (i, green) in lots.iter().take(size.roasts).enumerate() {
        let recorded = app.record_roast(RecordRoast {
            name: format!("Bench roast {i}"),
            location_id: floor,
            roasted_date: Utc::now() - TimeDelta::minutes(i as i64),
            weight: kg("8.5")?,
            green_lots: vec![(*green, kg("10")?)],
            profile_id: None,
            details: None,
            curves: Vec::new(),
            projects: Vec::new(),
        })?;
        roasted.push(recorded.roasted_lot.lot.id);
    }

    app.sync_products(vec![SyncProduct {
        external_id: "BENCH-PRODUCT".into(),
        name: "Bench espresso".into(),
        variants: SKUS
            .iter()
            .zip(["PACKAGE250G", "PACKAGE500G", "PACKAGE1000G", "PACKAGE13_2G"])
            .map(|(sku, size)| {
                Ok(SyncVariant {
                    sku: (*sku).into(),
                    package_size: PackageSize::parse(size)?,
                })
            })
            .collect::<anyhow::Result<_>>()?,
    }])?;
    // Planning (`mrp.plan.getNetRequirements`): 100 profiles over seeded lots, 49 more products,
    // every product with a recipe of two profiles; each seeded order also asks for one of them.
    let planned = plan_data(app, lots.get(size.roasts..).unwrap_or_default())?;
    let now = Utc::now();
    let mut written = 0;
    while written < size.orders {
        let batch: Vec<SetOrder> = (written..size.orders.min(written + 50))
            .map(|i| bench_order(&format!("SEED-{i}"), now, i))
            .collect();
        written += batch.len();
        app.set_orders(batch)?;
    }

    // From the last two seeded lots, so the chain sits among all the others.
    let chain = match lots.as_slice() {
        [.., second, original] => Some(trace_chain(app, *original, *second, [floor, shop])?),
        _ => None,
    };

    let transfer_lots: Vec<_> = lots.iter().skip(size.roasts).take(TRANSFER_LOTS).collect();
    println!(
        "{}",
        json!({
            "warehouse": warehouse,
            "floor": floor,
            "shop": shop,
            "hotLot": hot.lot.id,
            "hotLotKg": "1000000",
            "transferLots": transfer_lots,
            "roastedLots": roasted,
            "skus": SKUS,
            "traceChain": chain,
            "planning": planned,
        })
    );
    Ok(())
}

/// The plots of each source lot of the chain: a farm of two fields and a smallholder's point.
const BENCH_PLOTS: &str = r#"{"type":"FeatureCollection","features":[
    {"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[
      [[[-76.0451,1.8512],[-76.0402,1.8514],[-76.0405,1.8561],[-76.0453,1.8558],[-76.0451,1.8512]]],
      [[[-76.0380,1.8490],[-76.0351,1.8491],[-76.0352,1.8520],[-76.0381,1.8519],[-76.0380,1.8490]]]]},
     "properties":{"ProducerName":"Finca El Mirador"}},
    {"type":"Feature","geometry":{"type":"Point","coordinates":[-76.0501,1.8533]},
     "properties":{"ProducerName":"Ana Ruiz","Area":1.2}}]}"#;

/// The lots of the trace scenario's chain.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TraceChain {
    /// Level 1: the imported green lot (traced downstream).
    green_lot: uuid::Uuid,
    /// Level 2: part of it transferred to the roastery floor.
    floor_lot: uuid::Uuid,
    /// Level 3: part of that transferred to the shop, twice (the second merges into the first).
    shop_lot: uuid::Uuid,
    /// Level 4: roasted from the shop lot and a second green lot.
    roasted_lot: uuid::Uuid,
    /// Level 5: blended from that roast and a second roast (traced upstream); shipped in `order`.
    blended_lot: uuid::Uuid,
    order: uuid::Uuid,
}

/// Moves weight from the seeded lot `original` down five lot levels and ships the blend, each step
/// through its use case. `second` (also seeded) is the other green input of the roasts.
fn trace_chain<S: Store>(
    app: &Roastery<S>,
    original: uuid::Uuid,
    second: uuid::Uuid,
    [floor, shop]: [uuid::Uuid; 2],
) -> anyhow::Result<TraceChain> {
    let transfer =
        |lot: uuid::Uuid, amount: &str, destination: uuid::Uuid| -> anyhow::Result<uuid::Uuid> {
            Ok(app
                .transfer_green_lot(TransferGreenLot {
                    green_lot_id: lot,
                    weight: kg(amount)?,
                    destination_location_id: destination,
                })?
                .destination
                .lot
                .id)
        };
    let floor_lot = transfer(original, "100", floor)?;
    let shop_lot = transfer(floor_lot, "40", shop)?;
    let merged = transfer(floor_lot, "20", shop)?;
    anyhow::ensure!(
        merged == shop_lot,
        "the second transfer to the shop did not merge"
    );
    let roast = |name: &str,
                 weight: &str,
                 green_lots: Vec<(uuid::Uuid, WeightInput)>|
     -> anyhow::Result<uuid::Uuid> {
        Ok(app
            .record_roast(RecordRoast {
                name: name.into(),
                location_id: floor,
                roasted_date: Utc::now(),
                weight: kg(weight)?,
                green_lots,
                profile_id: None,
                details: None,
                curves: Vec::new(),
                projects: Vec::new(),
            })?
            .roasted_lot
            .lot
            .id)
    };
    let roasted_lot = roast(
        "Bench trace roast",
        "51",
        vec![(shop_lot, kg("50")?), (second, kg("10")?)],
    )?;
    let other_roast = roast("Bench trace roast 2", "8.5", vec![(second, kg("10")?)])?;
    let blended_lot = app
        .create_blend(CreateBlend {
            name: "Bench trace blend".into(),
            location_id: shop,
            blended_date: Utc::now(),
            roasted_lots: vec![(roasted_lot, kg("40")?), (other_roast, kg("8")?)],
            projects: Vec::new(),
        })?
        .lot
        .id;
    let order = app
        .set_orders(vec![SetOrder {
            external_id: "BENCH-TRACE".into(),
            order_date: Utc::now(),
            customer: Some("Bench trace customer".into()),
            customer_type: Some(CustomerType::Wholesale),
            items: vec![SetOrderItem {
                sku: SKUS[2].into(),
                quantity: 5,
            }],
        }])?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("setOrders returned no order"))?
        .id;
    app.ship_order(ShipOrder {
        order_id: order,
        shipped_date: Utc::now(),
        allocations: vec![ShipAllocation {
            sku: SKUS[2].into(),
            lot_id: blended_lot,
            quantity: 5,
        }],
    })?;
    // Due diligence on both source lots of the chain: the first complete, the second still
    // waiting for its statement, so a report reads both and names what is missing.
    for (lot, statement) in [(original, Some("25BENCH0001")), (second, None)] {
        app.set_due_diligence(SetDueDiligence {
            green_lot_id: lot,
            input: DueDiligenceInput {
                country_of_production: "CO".into(),
                production_from: "2025-10-01".into(),
                production_to: "2026-02-28".into(),
                plots: BENCH_PLOTS.into(),
                suppliers: vec![SupplierInput {
                    name: "Bench cooperative".into(),
                    ..SupplierInput::default()
                }],
                statements: statement
                    .map(|reference| StatementInput {
                        reference_number: reference.into(),
                        verification_number: None,
                        kind: "DDS".into(),
                        role: "UPSTREAM".into(),
                    })
                    .into_iter()
                    .collect(),
                hs_code: None,
            },
        })?;
    }
    Ok(TraceChain {
        green_lot: original,
        floor_lot,
        shop_lot,
        roasted_lot,
        blended_lot,
        order,
    })
}

/// Profiles and (besides the bench product) products of the planning scenario.
const PLAN_PROFILES: usize = 100;
const PLAN_PRODUCTS: usize = 49;

fn plan_sku(product: usize) -> String {
    format!("BENCH-PLAN-{product}-250")
}

/// 100 profiles of two components over two seeded lots each (expected loss set, batch sizes),
/// 49 products besides the bench product, and a recipe of two profiles for every one of them.
/// Returns whether it made them (not when too few lots were seeded).
fn plan_data<S: Store>(app: &Roastery<S>, lots: &[uuid::Uuid]) -> anyhow::Result<bool> {
    let lots: Vec<uuid::Uuid> = lots.iter().skip(TRANSFER_LOTS).copied().collect();
    if lots.len() < 4 * PLAN_PROFILES {
        return Ok(false);
    }
    let mut profiles = Vec::with_capacity(PLAN_PROFILES);
    for (p, four) in lots.chunks(4).take(PLAN_PROFILES).enumerate() {
        let profile = app.import_profile(ImportProfile {
            name: format!("Bench profile {p:03}"),
            external_id: None,
            profile_group: None,
            components: four
                .chunks(2)
                .zip([70, 30])
                .map(|(ids, percentage)| ComponentDraft {
                    percentage: Decimal::from(percentage),
                    green_lot_ids: ids.to_vec(),
                })
                .collect(),
            reference_roast_id: None,
            projects: Vec::new(),
        })?;
        let w = |amount: i64| RequestedWeight {
            amount: Decimal::from(amount),
            unit: WeightUnit::Kg,
        };
        app.set_profile_planning(SetProfilePlanning {
            profile_id: profile.profile.id,
            expected_loss: Some(Decimal::new(1500 + (p as i64 % 5) * 50, 2)),
            batch_size: Some((w(5), w(15))),
        })?;
        profiles.push(profile.profile.id);
    }
    app.sync_products(
        (0..PLAN_PRODUCTS)
            .map(|p| {
                Ok(SyncProduct {
                    external_id: format!("BENCH-PLAN-{p}"),
                    name: format!("Bench planned coffee {p}"),
                    variants: vec![SyncVariant {
                        sku: plan_sku(p),
                        package_size: PackageSize::parse("PACKAGE250G")?,
                    }],
                })
            })
            .collect::<anyhow::Result<_>>()?,
    )?;
    let products = app
        .list_products(roastery_domain::page::PageRequest {
            limit: roastery_domain::page::Limit::parse(Some(100))?,
            after: None,
        })?
        .items;
    for (i, product) in products.iter().enumerate() {
        let two = [i.wrapping_mul(2), i.wrapping_mul(2).wrapping_add(1)]
            .map(|k| profiles.get(k % PLAN_PROFILES).copied());
        let [Some(a), Some(b)] = two else { continue };
        app.set_recipe(SetRecipe {
            product_id: product.product.id,
            components: vec![
                RecipeComponent {
                    profile_id: a,
                    percentage: Decimal::from(60),
                },
                RecipeComponent {
                    profile_id: b,
                    percentage: Decimal::from(40),
                },
            ],
        })?;
    }
    Ok(true)
}

/// An order of the bench product line; the load generator sends the same shape.
fn bench_order(external_id: &str, now: chrono::DateTime<Utc>, i: usize) -> SetOrder {
    SetOrder {
        external_id: external_id.into(),
        order_date: now - TimeDelta::minutes(i as i64),
        customer: Some(format!("Bench customer {}", i % 97)),
        customer_type: Some(if i % 3 == 0 {
            CustomerType::Wholesale
        } else {
            CustomerType::Retail
        }),
        items: vec![
            SetOrderItem {
                sku: SKUS[i % SKUS.len()].into(),
                quantity: 1 + (i % 7) as i32,
            },
            SetOrderItem {
                sku: SKUS[(i + 1) % SKUS.len()].into(),
                quantity: 2,
            },
            SetOrderItem {
                sku: plan_sku(i % PLAN_PRODUCTS),
                quantity: 1,
            },
        ],
    }
}

/// Green lots from `threads` threads; returns their ids in import order of each thread.
fn import_green_lots<S: Store>(
    app: &Roastery<S>,
    size: BenchSize,
    warehouse: uuid::Uuid,
) -> anyhow::Result<Vec<uuid::Uuid>> {
    let next = AtomicUsize::new(0);
    let results: Vec<anyhow::Result<Vec<uuid::Uuid>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..size.threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut ids = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= size.green_lots {
                            return Ok(ids);
                        }
                        ids.push(
                            app.import_green_lot(green_lot(i, "690.5", warehouse)?)?
                                .lot
                                .id,
                        );
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a seeding thread panicked")))
            })
            .collect()
    });
    let mut ids = Vec::with_capacity(size.green_lots);
    for r in results {
        ids.extend(r?);
    }
    Ok(ids)
}

fn green_lot(i: usize, kg: &str, warehouse: uuid::Uuid) -> anyhow::Result<ImportGreenLot> {
    let hot = i == usize::MAX;
    Ok(ImportGreenLot {
        name: Some(if hot {
            "Bench hot lot".into()
        } else {
            format!("Bench lot {i}")
        }),
        external_id: Some(if hot {
            "BENCH-HOT".into()
        } else {
            format!("BENCH-{i}")
        }),
        weight: WeightInput {
            amount: Decimal::from_str(kg)?,
            unit: WeightUnit::Kg,
        },
        ico_number: Some(format!("010/{:04}/{:04}", i % 10_000, i / 10_000 % 10_000)),
        price: Some(PriceInput {
            amount: Decimal::new(725, 2),
            currency: Currency::parse("EUR")?,
        }),
        location_id: Some(warehouse),
        location_external_id: None,
        projects: Vec::new(),
        details: GreenLotDetails {
            note: Some("Bench lot: washed, clean cup".into()),
            grade: Some("Specialty".into()),
            crop_year: Some("2025/26".into()),
            processing_methods: vec!["Washed".into()],
            countries_of_origin: vec![["ETH", "COL", "BRA", "KEN"][i % 4].into()],
            varieties: vec!["Caturra".into()],
            certifications: Vec::new(),
        },
    })
}

fn kg(amount: &str) -> anyhow::Result<WeightInput> {
    Ok(WeightInput {
        amount: Decimal::from_str(amount)?,
        unit: WeightUnit::Kg,
    })
}
