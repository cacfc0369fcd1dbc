//! The mrp use cases against the Diesel store, on SQLite (always) and on PostgreSQL (when
//! `ROASTERY_TEST_DATABASE_URL` is set; each run gets its own database, dropped at the end).

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

use chrono::{DateTime, TimeDelta, Utc};
use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_app::order::{ListOrders, SetOrder, SetOrderItem, SetOrderStatus};
use roastery_app::product::{SyncProduct, SyncVariant};
use roastery_domain::Violation;
use roastery_domain::order::{CustomerType, Order, OrderStatus};
use roastery_domain::page::{Limit, PageRequest};
use roastery_domain::product::PackageSize;
use roastery_ports::AppError;
use roastery_ports::testing::{ManualClock, SequentialIds};

type App = Roastery<DieselStore>;

fn app(url: &str) -> (App, ManualClock) {
    let clock = ManualClock::default();
    let store = DieselStore::open(url, Some(2)).unwrap();
    let app = Roastery::new(
        store,
        Arc::new(clock.clone()),
        Arc::new(SequentialIds::default()),
    );
    (app, clock)
}

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
}

fn all() -> PageRequest {
    PageRequest {
        limit: Limit::parse(Some(100)).unwrap(),
        after: None,
    }
}

fn product(ext: &str, name: &str, variants: &[(&str, &str)]) -> SyncProduct {
    SyncProduct {
        external_id: ext.into(),
        name: name.into(),
        variants: variants
            .iter()
            .map(|(sku, size)| SyncVariant {
                sku: (*sku).into(),
                package_size: PackageSize::parse(size).unwrap(),
            })
            .collect(),
    }
}

fn order(ext: &str, date: i64, items: &[(&str, i32)]) -> SetOrder {
    SetOrder {
        external_id: ext.into(),
        order_date: at(date),
        customer: Some("Café Nord".into()),
        customer_type: Some(CustomerType::Wholesale),
        items: items
            .iter()
            .map(|(sku, quantity)| SetOrderItem {
                sku: (*sku).into(),
                quantity: *quantity,
            })
            .collect(),
    }
}

fn orders(app: &App, cmd: ListOrders) -> Vec<Order> {
    app.list_orders(cmd, all()).unwrap().items
}

fn bulk_summary(err: AppError) -> Vec<(usize, String, Violation)> {
    let AppError::Bulk(items) = err else {
        panic!("expected a bulk failure, got {err:?}")
    };
    items
        .into_iter()
        .map(|i| {
            (
                i.index,
                i.external_id.unwrap_or_default(),
                i.rejection.violation(),
            )
        })
        .collect()
}

fn scenario(url: &str) {
    let (app, clock) = app(url);

    // Products: create, then add a variant and rename.
    let first = app
        .sync_products(vec![
            product(
                "p-1",
                "Guji",
                &[("GUJI-250", "PACKAGE250G"), ("GUJI-13", "PACKAGE13_2G")],
            ),
            product("p-2", "Huila", &[("HUILA-250", "PACKAGE250G")]),
        ])
        .unwrap();
    clock.advance(TimeDelta::seconds(1));
    let second = app
        .sync_products(vec![product(
            "p-1",
            "Guji Natural",
            &[("GUJI-1000", "PACKAGE1000G")],
        )])
        .unwrap();
    assert_eq!(second[0].id, first[0].id);
    let products: Vec<_> = app
        .list_products(all())
        .unwrap()
        .items
        .into_iter()
        .map(|v| v.product)
        .collect();
    let ext: Vec<_> = products.iter().map(|p| p.external_id.as_str()).collect();
    assert_eq!(ext, ["p-2", "p-1"]);
    let p1 = &products[1];
    assert_eq!(p1.name, "Guji Natural");
    let variants: Vec<_> = p1
        .variants
        .iter()
        .map(|v| (v.sku.to_string(), v.package_size.to_string()))
        .collect();
    assert_eq!(
        variants,
        [
            ("GUJI-250".to_owned(), "PACKAGE250G".to_owned()),
            ("GUJI-13".to_owned(), "PACKAGE13_2G".to_owned()),
            ("GUJI-1000".to_owned(), "PACKAGE1000G".to_owned()),
        ]
    );
    // Idempotent, and a failing batch stores nothing.
    let again = app
        .sync_products(vec![product(
            "p-1",
            "Guji Natural",
            &[("GUJI-1000", "PACKAGE1000G")],
        )])
        .unwrap();
    assert_eq!(again[0], products[1]);
    let err = app
        .sync_products(vec![
            product("p-3", "New", &[("NEW-1", "PACKAGE1G")]),
            product("p-2", "Huila", &[("HUILA-250", "PACKAGE500G")]),
            product("p-4", "Thief", &[("GUJI-250", "PACKAGE250G")]),
        ])
        .unwrap_err();
    assert_eq!(
        bulk_summary(err),
        [
            (1, "p-2".to_owned(), Violation::Conflict),
            (2, "p-4".to_owned(), Violation::Conflict)
        ]
    );
    let listed: Vec<_> = app
        .list_products(all())
        .unwrap()
        .items
        .into_iter()
        .map(|v| v.product)
        .collect();
    assert_eq!(listed, products);

    // Orders: a batch of 50 is created in request order.
    let batch: Vec<_> = (0..50)
        .map(|i| order(&format!("o-{i}"), i, &[("GUJI-250", 1), ("HUILA-250", 2)]))
        .collect();
    let synced = app.set_orders(batch.clone()).unwrap();
    let ext: Vec<_> = synced.iter().map(|o| o.external_id.clone()).collect();
    let expected: Vec<_> = (0..50).map(|i| format!("o-{i}")).collect();
    assert_eq!(ext, expected);
    let stored = orders(&app, ListOrders::default());
    assert_eq!(stored.len(), 50);
    assert_eq!(stored[0].external_id, "o-49");
    assert!(stored.iter().all(|o| o.status == OrderStatus::Open));
    // Repeating changes nothing.
    clock.advance(TimeDelta::seconds(1));
    app.set_orders(batch).unwrap();
    assert_eq!(orders(&app, ListOrders::default()), stored);

    // Updates of many orders in one call: customer, type and items replaced, date kept.
    let updates: Vec<_> = (0..10)
        .map(|i| {
            let mut o = order(&format!("o-{i}"), 999, &[("GUJI-1000", i + 1)]);
            o.customer = if i % 2 == 0 {
                None
            } else {
                Some(format!("Shop {i}"))
            };
            o.customer_type = Some(CustomerType::Retail);
            o
        })
        .collect();
    let updated = app.set_orders(updates).unwrap();
    for (i, o) in updated.iter().enumerate() {
        assert_eq!(o.id, synced[i].id);
    }
    let stored = orders(&app, ListOrders::default());
    for i in 0..50 {
        let o = stored
            .iter()
            .find(|o| o.external_id == format!("o-{i}"))
            .unwrap();
        assert_eq!(o.order_date, at(i));
        if i < 10 {
            assert_eq!(o.customer_type, Some(CustomerType::Retail));
            let expected = (i % 2 == 1).then(|| format!("Shop {i}"));
            assert_eq!(o.customer, expected);
            assert_eq!(o.items.len(), 1);
            assert_eq!(o.items[0].sku.as_str(), "GUJI-1000");
            assert_eq!(i64::from(o.items[0].quantity), i + 1);
        } else {
            assert_eq!(o.customer_type, Some(CustomerType::Wholesale));
            assert_eq!(o.items.len(), 2);
        }
    }

    // Status machine.
    let set = |id, status: OrderStatus| {
        app.set_order_status(SetOrderStatus {
            order_id: id,
            status,
        })
    };
    assert_eq!(
        set(synced[20].id, OrderStatus::InProgress).unwrap().status,
        OrderStatus::InProgress
    );
    assert_eq!(
        set(synced[21].id, OrderStatus::Cancelled).unwrap().status,
        OrderStatus::Cancelled
    );
    assert_eq!(
        set(synced[21].id, OrderStatus::Open)
            .unwrap_err()
            .violation(),
        Some(Violation::BusinessRule)
    );

    // A mixed batch: nothing of it is stored.
    let before = orders(&app, ListOrders::default());
    let err = app
        .set_orders(vec![
            order("o-new", 100, &[("GUJI-250", 1)]),
            order("o-1", 100, &[("NOPE", 1)]),
            order("o-20", 100, &[("GUJI-250", 3)]),
            order("o-2", 100, &[("GUJI-250", 0)]),
            order("o-3", 100, &[]),
            order("o-4", 100, &[("GUJI-250", 7)]),
        ])
        .unwrap_err();
    assert_eq!(
        bulk_summary(err),
        [
            (1, "o-1".to_owned(), Violation::NotFound),
            (2, "o-20".to_owned(), Violation::BusinessRule),
            (3, "o-2".to_owned(), Violation::BusinessRule),
            (4, "o-3".to_owned(), Violation::BusinessRule),
        ]
    );
    assert_eq!(orders(&app, ListOrders::default()), before);

    // Filters: date range (from inclusive, to exclusive) and status, across pages.
    let range = ListOrders {
        order_date_from: Some(at(10)),
        order_date_to: Some(at(13)),
        status: None,
    };
    let ext: Vec<_> = orders(&app, range)
        .into_iter()
        .map(|o| o.external_id)
        .collect();
    assert_eq!(ext, ["o-12", "o-11", "o-10"]);
    let cancelled = ListOrders {
        status: Some(OrderStatus::Cancelled),
        ..ListOrders::default()
    };
    let ext: Vec<_> = orders(&app, cancelled)
        .into_iter()
        .map(|o| o.external_id)
        .collect();
    assert_eq!(ext, ["o-21"]);
    let mut page = PageRequest {
        limit: Limit::parse(Some(7)).unwrap(),
        after: None,
    };
    let mut seen = Vec::new();
    loop {
        let result = app.list_orders(ListOrders::default(), page).unwrap();
        seen.extend(result.items.into_iter().map(|o| o.external_id));
        match result.next {
            Some(next) => page.after = Some(next),
            None => break,
        }
    }
    let expected: Vec<_> = (0..50).rev().map(|i| format!("o-{i}")).collect();
    assert_eq!(seen, expected);
}

#[test]
fn mrp_on_sqlite() {
    scenario(&support::sqlite().url);
}

#[test]
fn mrp_on_postgres() {
    if let Some(db) = support::postgres("mrp_store") {
        scenario(&db.url);
    }
}

/// Shipments naming the same two lots in opposite orders, many side by side: every one ships,
/// the weight taken is exactly what was shipped, and on PostgreSQL the lots are locked in one
/// order, so the database never has to break a deadlock.
fn opposite_shipments(url: &str) {
    use roastery_app::order::{ShipAllocation, ShipOrder};
    use roastery_test_support::imports::green_import;
    use rust_decimal::Decimal;

    const ROUNDS: usize = 40;
    let (app, _clock) = app(url);
    app.sync_products(vec![product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")])])
        .unwrap();
    let lot = |name: &str| {
        app.import_green_lot(green_import(name, name, 100))
            .unwrap()
            .lot
            .id
    };
    let (a, b) = (lot("lot-a"), lot("lot-b"));
    let orders: Vec<Order> = (0..2 * ROUNDS)
        .map(|i| order(&format!("ship-{i}"), i as i64, &[("GUJI-250", 2)]))
        .collect::<Vec<_>>()
        .chunks(ROUNDS)
        .flat_map(|batch| app.set_orders(batch.to_vec()).unwrap())
        .collect();
    let ship = |order: &Order, first, second| {
        let allocation = |lot_id| ShipAllocation {
            sku: "GUJI-250".into(),
            lot_id,
            quantity: 1,
        };
        app.ship_order(ShipOrder {
            order_id: order.id,
            shipped_date: at(10_000),
            allocations: vec![allocation(first), allocation(second)],
        })
    };
    std::thread::scope(|s| {
        let (forward, backward) = orders.split_at(ROUNDS);
        let forward = s.spawn(|| forward.iter().map(|o| ship(o, a, b)).collect::<Vec<_>>());
        let backward = s.spawn(|| backward.iter().map(|o| ship(o, b, a)).collect::<Vec<_>>());
        for shipped in [forward.join().unwrap(), backward.join().unwrap()].concat() {
            assert_eq!(shipped.unwrap().status, OrderStatus::Completed);
        }
    });
    let lots = app
        .list_green_lots(None, all())
        .unwrap()
        .items
        .into_iter()
        .map(|v| v.lot.weight().amount())
        .collect::<Vec<_>>();
    // 100 kg less 2 × ROUNDS shipments of 250 g from each lot.
    assert_eq!(lots, [Decimal::from(80), Decimal::from(80)]);
}

#[test]
fn opposite_shipments_on_sqlite() {
    opposite_shipments(&support::sqlite().url);
}

#[test]
fn opposite_shipments_on_postgres() {
    let Some(db) = support::postgres("mrp_ship") else {
        return;
    };
    opposite_shipments(&db.url);
    assert_eq!(support::deadlocks(&db.url), 0, "PostgreSQL broke deadlocks");
}
