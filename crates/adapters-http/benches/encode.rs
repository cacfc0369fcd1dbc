//! Encoding a `listGreenLots` page of 50 lots to JSON, as the operation answers it.

#![allow(
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "benchmark fixtures: fixed valid inputs"
)]

use std::hint::black_box;

use chrono::{DateTime, Utc};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roastery_adapters_http::bench_support::encode_green_lot_page;
use roastery_app::green_lot::GreenLotView;
use roastery_domain::green_lot::{GreenLot, GreenLotImport};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::location::Location;
use roastery_domain::price::{Currency, Price};
use roastery_domain::project::ProjectRef;
use roastery_domain::weight::{Weight, WeightUnit};
use rust_decimal::Decimal;
use uuid::Uuid;

fn page() -> Vec<GreenLotView> {
    let at = DateTime::<Utc>::from_timestamp(1_790_000_000, 0).unwrap_or_default();
    let location = Location {
        id: Uuid::from_u128(7),
        name: "Bench warehouse".into(),
        external_id: Some("BENCH-WH".into()),
        created_at: at,
    };
    (0..50u128)
        .map(|i| {
            let lot = GreenLot::import(
                GreenLotImport {
                    name: Some(format!("Bench lot {i}")),
                    external_id: Some(format!("BENCH-{i}")),
                    weight: Weight::new(Decimal::new(6905, 1), WeightUnit::Kg).expect("a weight"),
                    ico_number: Some(format!("010/{i:04}/0000")),
                    price: Some(
                        Price::new(Decimal::new(725, 2), Currency::parse("EUR").expect("EUR"))
                            .expect("a price"),
                    ),
                    location_id: Some(location.id),
                    projects: vec![ProjectRef {
                        id: Uuid::from_u128(9),
                        name: "Direct Trade 2026".into(),
                    }],
                    details: GreenLotDetails::default(),
                },
                Uuid::from_u128(1000 + i),
                i as i64 + 1,
                at,
            )
            .expect("a valid import");
            GreenLotView {
                lot,
                location: Some(location.clone()),
            }
        })
        .collect()
}

fn encode(c: &mut Criterion) {
    let lots = page();
    let cursor = Some("eyJ2IjoxLCJvcCI6Imludm.signature-of-forty-three-characters-xx".to_owned());
    let bytes = encode_green_lot_page(lots.clone(), cursor.clone())
        .expect("encodes")
        .len();
    let mut group = c.benchmark_group("listGreenLots page of 50");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("encode to JSON", |bench| {
        bench.iter_batched(
            || lots.clone(),
            |lots| black_box(encode_green_lot_page(lots, cursor.clone())),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);
