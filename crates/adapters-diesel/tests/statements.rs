//! Bulk calls cost a constant number of statements: a batch of 50 orders or products is written
//! with as many SQL statements as a batch of 2, on both databases.
//!
//! Statements are counted by Diesel's instrumentation, installed as the default for every
//! connection this test binary opens (one test per binary, so nothing else is counted).

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use roastery_test_support::database as support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::DateTime;
use diesel::connection::{Instrumentation, InstrumentationEvent, set_default_instrumentation};
use roastery_adapters_diesel::DieselStore;
use roastery_domain::order::CustomerType;
use roastery_domain::product::PackageSize;
use roastery_ports::Roastery;
use roastery_ports::order::{SetOrder, SetOrderItem};
use roastery_ports::product::{SyncProduct, SyncVariant};
use roastery_ports::testing::{ManualClock, SequentialIds};

static STATEMENTS: AtomicUsize = AtomicUsize::new(0);

fn counting() -> Option<Box<dyn Instrumentation>> {
    Some(Box::new(|event: InstrumentationEvent<'_>| {
        if let InstrumentationEvent::StartQuery { .. } = event {
            STATEMENTS.fetch_add(1, Ordering::SeqCst);
        }
    }))
}

fn statements_of(work: impl FnOnce()) -> usize {
    let before = STATEMENTS.load(Ordering::SeqCst);
    work();
    STATEMENTS.load(Ordering::SeqCst) - before
}

fn products(n: usize, round: usize) -> Vec<SyncProduct> {
    (0..n)
        .map(|i| SyncProduct {
            external_id: format!("P-{round}-{i}"),
            name: format!("Coffee {i}"),
            variants: vec![SyncVariant {
                sku: format!("SKU-{round}-{i}"),
                package_size: PackageSize::parse("PACKAGE250G").unwrap(),
            }],
        })
        .collect()
}

fn orders(n: usize, round: usize, quantity: i32) -> Vec<SetOrder> {
    (0..n)
        .map(|i| SetOrder {
            external_id: format!("O-{round}-{i}"),
            order_date: DateTime::from_timestamp(1_800_000_000 + i as i64, 0).unwrap_or_default(),
            customer: Some("Café Nord".into()),
            customer_type: Some(CustomerType::Retail),
            items: vec![SetOrderItem {
                sku: format!("SKU-{round}-{i}"),
                quantity,
            }],
        })
        .collect()
}

/// Statements to create `n` products, create `n` orders and update those `n` orders.
fn costs(app: &Roastery<DieselStore>, n: usize, round: usize) -> [usize; 3] {
    [
        statements_of(|| {
            app.sync_products(products(n, round)).unwrap();
        }),
        statements_of(|| {
            app.set_orders(orders(n, round, 1)).unwrap();
        }),
        statements_of(|| {
            app.set_orders(orders(n, round, 2)).unwrap();
        }),
    ]
}

fn check(url: &str) {
    let app = Roastery::new(
        DieselStore::open(url, Some(1)).unwrap(),
        Arc::new(ManualClock::default()),
        Arc::new(SequentialIds::default()),
    );
    // The first call also opens the pooled connection (and sets its pragmas): not counted.
    costs(&app, 1, 0);
    let small = costs(&app, 2, 1);
    let large = costs(&app, 50, 2);
    assert_eq!(small, large, "statements for 2 items vs 50 items ({url})");
    assert!(
        large.iter().all(|&n| n > 0),
        "nothing was counted: {large:?}"
    );
}

#[test]
fn batches_of_50_cost_what_batches_of_2_cost() {
    set_default_instrumentation(counting).unwrap();
    check(&support::sqlite().url);
    if let Some(db) = support::postgres("statements") {
        check(&db.url);
    }
}
