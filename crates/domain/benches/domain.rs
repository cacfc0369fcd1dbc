//! Micro-benchmarks of the rules on every write: weight arithmetic and a green-lot transfer.

#![allow(
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "benchmark fixtures: fixed valid inputs"
)]

use std::hint::black_box;

use chrono::{DateTime, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use roastery_domain::green_lot::{Destination, GreenLot, GreenLotImport};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::{Weight, WeightUnit};
use rust_decimal::Decimal;
use uuid::Uuid;

fn at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn kg(amount: Decimal) -> Weight {
    Weight::new(amount, WeightUnit::Kg).expect("a non-negative weight")
}

fn lot(id: u128, weight: Weight) -> GreenLot {
    GreenLot::import(
        GreenLotImport {
            name: Some("Ethiopia Guji Natural G1".into()),
            external_id: Some(format!("ERP-{id}")),
            weight,
            ico_number: Some("010/0001/0001".into()),
            price: None,
            location_id: Some(Uuid::from_u128(100)),
            projects: Vec::new(),
            details: GreenLotDetails {
                grade: Some("G1".into()),
                countries_of_origin: vec!["ETH".into()],
                ..Default::default()
            },
        },
        Uuid::from_u128(id),
        id as i64,
        at(),
    )
    .expect("a valid import")
}

fn weights(c: &mut Criterion) {
    let a = kg(Decimal::new(6905, 1));
    let b = Weight::new(Decimal::new(1_322_774, 4), WeightUnit::Lbs).expect("a weight");
    c.bench_function("weight: add kg + lbs", |bench| {
        bench.iter(|| black_box(a).checked_add(black_box(b)))
    });
    c.bench_function("weight: subtract", |bench| {
        bench.iter(|| black_box(a).checked_sub(black_box(kg(Decimal::new(1, 3)))))
    });
    c.bench_function("weight: kg to lbs", |bench| {
        bench.iter(|| black_box(a).to_unit(WeightUnit::Lbs))
    });
    c.bench_function("weight: parse 690.5 kg", |bench| {
        bench.iter(|| Weight::new(black_box(Decimal::new(6905, 1)), WeightUnit::Kg))
    });
}

fn transfers(c: &mut Criterion) {
    let source = lot(1, kg(Decimal::from(1_000_000)));
    let target = {
        let mut t = lot(2, kg(Decimal::from(5)));
        t.location_id = Some(Uuid::from_u128(200));
        t
    };
    let gram = kg(Decimal::new(1, 3));
    c.bench_function("green lot: transfer 1 g, merge", |bench| {
        bench.iter_batched_ref(
            || (source.clone(), target.clone()),
            |(source, target)| source.transfer(gram, Destination::Merge(target), at()),
            criterion::BatchSize::SmallInput,
        )
    });
    c.bench_function("green lot: transfer 1 g, new lot", |bench| {
        bench.iter_batched_ref(
            || source.clone(),
            |source| {
                source.transfer(
                    gram,
                    Destination::New {
                        location_id: Uuid::from_u128(300),
                        id: Uuid::from_u128(3),
                        lot_number: 3,
                    },
                    at(),
                )
            },
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, weights, transfers);
criterion_main!(benches);
