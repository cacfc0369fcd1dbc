//! What calls cost in statements: a batch of 50 orders or products is written with as many SQL
//! statements as a batch of 2, and a trace is read with one statement on PostgreSQL (one
//! transaction on SQLite), on both databases.
//!
//! Statements are recorded by Diesel's instrumentation, installed as the default for every
//! connection this test binary opens. Each thread records the statements it runs (a store runs
//! a unit of work on the calling thread), so tests running at once do not see each other's.

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
use roastery_test_support::imports::green_import;

use std::cell::RefCell;
use std::sync::{Arc, Once};

use chrono::DateTime;
use diesel::connection::{Instrumentation, InstrumentationEvent, set_default_instrumentation};
use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_app::order::{SetOrder, SetOrderItem};
use roastery_app::product::{SyncProduct, SyncVariant};
use roastery_domain::ledger::Direction;
use roastery_domain::order::CustomerType;
use roastery_domain::product::PackageSize;
use roastery_ports::testing::{ManualClock, SequentialIds};
use roastery_test_support::contract::ledger::{Genealogy, genealogy};
use uuid::Uuid;

thread_local! {
    /// The SQL of every statement this thread started, in order.
    static STATEMENTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The SQL of every statement this thread prepared and kept for its connection.
    static KEPT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn recording() -> Option<Box<dyn Instrumentation>> {
    Some(Box::new(|event: InstrumentationEvent<'_>| match event {
        InstrumentationEvent::StartQuery { query, .. } => {
            STATEMENTS.with(|s| s.borrow_mut().push(query.to_string()));
        }
        InstrumentationEvent::CacheQuery { sql, .. } => {
            KEPT.with(|s| s.borrow_mut().push(sql.to_owned()));
        }
        _ => {}
    }))
}

fn record_statements() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| set_default_instrumentation(recording).unwrap());
}

/// The statements `work` ran on this thread.
fn sql_of(work: impl FnOnce()) -> Vec<String> {
    let before = STATEMENTS.with(|s| s.borrow().len());
    work();
    STATEMENTS.with(|s| s.borrow().get(before..).unwrap_or_default().to_vec())
}

/// The statements `work` prepared and kept on this thread.
fn kept_by(work: impl FnOnce()) -> Vec<String> {
    let before = KEPT.with(|s| s.borrow().len());
    work();
    KEPT.with(|s| s.borrow().get(before..).unwrap_or_default().to_vec())
}

fn statements_of(work: impl FnOnce()) -> usize {
    sql_of(work).len()
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
    record_statements();
    check(&support::sqlite().url);
    if let Some(db) = support::postgres("statements") {
        check(&db.url);
    }
}

/// A store of one connection holding the contract's genealogy, and the genealogy.
fn traced(url: &str) -> (Roastery<DieselStore>, Genealogy) {
    let store = DieselStore::open(url, Some(1)).unwrap();
    let g = genealogy(&store);
    let app = Roastery::new(
        store,
        Arc::new(ManualClock::default()),
        Arc::new(SequentialIds::default()),
    );
    (app, g)
}

/// Draws the lot numbers the contract's genealogy holds (its lots are written with the first
/// numbers, which the use cases' sequence would give again).
fn skip_the_genealogys_numbers(app: &Roastery<DieselStore>) {
    roastery_ports::Store::write(app.store(), |tx| {
        use roastery_ports::repo::SystemRepo as _;
        for _ in 0..100 {
            tx.next_number("PG")?;
        }
        Ok(())
    })
    .unwrap();
}

/// The statements of traces of the contract's genealogy (green lots to roasts, a blend, orders
/// and cuppings), both ways, and of a trace of no lot.
fn trace_statements(url: &str) -> Vec<Vec<String>> {
    let (app, g) = traced(url);
    let green = g.green[0].id;
    let blended = g.blended.id;
    let unknown = Uuid::from_u128(99);
    // Opens the connections first (and sets their pragmas): not counted.
    app.trace_lot(green, Direction::Downstream).unwrap();
    [
        (green, Direction::Downstream),
        (blended, Direction::Upstream),
        (blended, Direction::Downstream),
        (unknown, Direction::Downstream),
    ]
    .into_iter()
    .map(|(lot, direction)| {
        sql_of(|| match app.trace_lot(lot, direction) {
            Ok(trace) => assert!(!trace.edges.is_empty(), "{lot} {direction:?}: {trace:?}"),
            Err(e) => assert_eq!(lot, unknown, "{e}"),
        })
    })
    .collect()
}

fn is_transaction_control(sql: &str) -> bool {
    let word = sql.split_whitespace().next().unwrap_or_default();
    [
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "START",
    ]
    .iter()
    .any(|w| word.eq_ignore_ascii_case(w))
}

#[test]
fn a_trace_is_one_statement_on_postgresql_and_one_transaction_on_sqlite() {
    record_statements();
    for statements in trace_statements(&support::sqlite().url) {
        eprintln!("SQLite trace: {} statements", statements.len());
        assert!(statements.len() > 2, "{statements:#?}");
        assert!(
            statements.first().unwrap().starts_with("BEGIN"),
            "{statements:#?}"
        );
        assert_eq!(statements.last().unwrap(), "COMMIT", "{statements:#?}");
        let inside = &statements[1..statements.len() - 1];
        assert!(
            !inside.iter().any(|s| is_transaction_control(s)),
            "{statements:#?}"
        );
    }
    if let Some(db) = support::postgres("trace_statements") {
        for statements in trace_statements(&db.url) {
            eprintln!("PostgreSQL trace: {} statements", statements.len());
            assert_eq!(statements.len(), 1, "{statements:#?}");
            assert!(!is_transaction_control(&statements[0]), "{statements:#?}");
        }
    }
}

/// A PostgreSQL trace's statement is prepared once per connection and kept: the first trace of
/// each direction prepares it, the next ones (past the five after which PostgreSQL may keep one
/// plan) prepare nothing, and all answer the same.
#[test]
fn a_trace_statement_is_prepared_once_per_connection_on_postgresql() {
    record_statements();
    let Some(db) = support::postgres("trace_prepared") else {
        return;
    };
    let (app, g) = traced(&db.url);
    let green = g.green[0].id;
    for direction in [Direction::Downstream, Direction::Upstream] {
        let mut first = None;
        let kept = kept_by(|| first = Some(app.trace_lot(green, direction).unwrap()));
        assert_eq!(
            kept.iter().filter(|sql| sql.contains("RECURSIVE")).count(),
            1,
            "{direction:?}: {kept:#?}"
        );
        for _ in 0..8 {
            let mut again = None;
            let kept = kept_by(|| again = Some(app.trace_lot(green, direction).unwrap()));
            assert!(kept.is_empty(), "{direction:?}: prepared again: {kept:#?}");
            assert_eq!(again, first, "{direction:?}");
        }
    }
}

/// Sets the weight of the green lot `lot` to `kg`.
fn set_weight(app: &Roastery<DieselStore>, lot: Uuid, kg: i64) {
    app.set_green_lot_weight(roastery_app::green_lot::SetGreenLotWeight {
        green_lot_id: lot,
        weight: roastery_app::green_lot::WeightInput {
            amount: rust_decimal::Decimal::from(kg),
            unit: roastery_domain::weight::WeightUnit::Kg,
        },
    })
    .unwrap();
}

/// One green lot written back on PostgreSQL is locked by the statement that loads it
/// (`SELECT … FOR UPDATE`), not by a lock statement of its own before the load, and the whole
/// write is four round trips: its writes are held and sent together before the commit.
#[test]
fn a_green_lot_is_locked_by_the_statement_that_loads_it_on_postgresql() {
    record_statements();
    let Some(db) = support::postgres("statements_lock") else {
        return;
    };
    let (app, g) = traced(&db.url);
    let lot = g.green[0].id;
    let set = |kg: i64| set_weight(&app, lot, kg);
    set(70); // opens the connection first: not counted
    let statements = sql_of(|| {
        set(71);
    });
    let locking: Vec<&String> = statements
        .iter()
        .filter(|s| s.contains("FOR UPDATE"))
        .collect();
    assert_eq!(locking.len(), 1, "{statements:#?}");
    assert!(
        locking[0].contains("\"green_lots\".\"weight_micros\""),
        "the lock is taken by the load of the whole row: {statements:#?}"
    );
    // Lock and load, then the lot, its ledger entry and its event (stamped with the writer's
    // transaction id by the insert itself) in one statement, in one transaction.
    assert_held_shape(&statements, 1);
}

/// `statements` are a write's four round trips: begin, lock and load, one statement of `lots`
/// lot updates, their ledger entries and events, commit.
fn assert_held_shape(statements: &[String], lots: usize) {
    let shape: Vec<String> = statements
        .iter()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        shape,
        [
            "BEGIN ISOLATION LEVEL",
            "SELECT \"green_lots\".\"id\", \"green_lots\".\"origin_id\",",
            "WITH w0 AS",
            "COMMIT",
        ],
        "{statements:#?}"
    );
    let held = statements[2].split(" -- binds").next().unwrap_or_default();
    assert_eq!(
        held.matches("UPDATE green_lots SET").count(),
        lots,
        "{held}"
    );
    let ledger = held.find("INSERT INTO ledger_entries").expect(held);
    let events = held.find("INSERT INTO events").expect(held);
    assert!(
        held.rfind("UPDATE green_lots").unwrap() < ledger && ledger < events,
        "{held}"
    );
}

/// A transfer into the lot of its origin at the destination (a merge) locks both lots with one
/// statement and writes both, their ledger entries and events with another: while a hot lot is
/// locked, its writer makes two round trips (the writes, the commit) besides the lock's own.
#[test]
fn a_merge_is_four_round_trips_on_postgresql() {
    record_statements();
    let Some(db) = support::postgres("statements_merge") else {
        return;
    };
    let (app, g) = traced(&db.url);
    let transfer = || {
        app.transfer_green_lot(roastery_app::green_lot::TransferGreenLot {
            green_lot_id: g.green[0].id,
            weight: roastery_app::green_lot::WeightInput {
                amount: rust_decimal::Decimal::ONE,
                unit: roastery_domain::weight::WeightUnit::Kg,
            },
            destination_location_id: Uuid::from_u128(1002),
        })
        .unwrap()
    };
    skip_the_genealogys_numbers(&app);
    let created = transfer(); // creates the lot at the destination
    let statements = sql_of(|| {
        let merged = transfer();
        assert_eq!(merged.destination.lot.id, created.destination.lot.id);
    });
    assert_held_shape(&statements, 2);
}

/// Listing items as a lot's number: enough to store one per write.
struct Numbers;

impl roastery_ports::listing::ListingRender for Numbers {
    fn version(&self) -> u32 {
        1
    }
    fn green_lot(
        &self,
        view: &roastery_ports::view::GreenLotView,
    ) -> Result<String, roastery_ports::StoreError> {
        Ok(view.lot.lot_number.to_string())
    }
    fn roasted_lot(
        &self,
        view: &roastery_ports::view::RoastedLotView,
    ) -> Result<String, roastery_ports::StoreError> {
        Ok(view.lot.lot_number.to_string())
    }
    fn blended_lot(
        &self,
        view: &roastery_ports::view::BlendedLotView,
    ) -> Result<String, roastery_ports::StoreError> {
        Ok(view.lot.lot_number.to_string())
    }
}

/// On PostgreSQL every statement of a weight write is prepared once per connection and kept,
/// the inserts of its ledger entry and event included (Diesel keeps no insert of a slice of
/// rows): the first write prepares them, the next prepares nothing and runs as many.
#[test]
fn a_write_prepares_its_statements_once_on_postgresql() {
    record_statements();
    let Some(db) = support::postgres("statements_kept_write") else {
        return;
    };
    let (app, g) = traced(&db.url);
    // As served: each write stores the lot's listing item too.
    let app = app.rendering_listings(Arc::new(Numbers));
    let lot = g.green[0].id;
    let set = |kg: i64| set_weight(&app, lot, kg);
    let mut ran = Vec::new();
    let kept = kept_by(|| ran = sql_of(|| set(70)));
    let writes: Vec<&String> = ran.iter().filter(|s| !is_transaction_control(s)).collect();
    // Load and lock, read the lot's location (once, then cached), then the update with the
    // listing item, the ledger entry and the event in one statement.
    assert!(writes.len() >= 2, "{ran:#?}");
    let updates: Vec<&&String> = writes
        .iter()
        .filter(|s| s.contains("UPDATE green_lots"))
        .collect();
    assert_eq!(updates.len(), 1, "one row version per write: {ran:#?}");
    assert!(
        updates[0].contains("listing_item = $13") && updates[0].contains("Some(\"1\")"),
        "the lot's item is written with it: {ran:#?}"
    );
    for statement in writes {
        let text = statement.split(" -- binds").next().unwrap_or_default();
        assert!(
            kept.iter().any(|k| k == text),
            "not kept: {text}\nkept: {kept:#?}"
        );
    }
    for kg in 71..75 {
        let kept = kept_by(|| set(kg));
        assert!(kept.is_empty(), "prepared again: {kept:#?}");
    }
}

/// The statements of a due-diligence report (the upstream trace from its starts, the source
/// lots, their documents' sizes) have one text whatever the starts, on either database: the
/// report of an order after the report of a lot prepares nothing new, and no id is written into
/// a statement's text (on SQLite such a statement was parsed at every call). On PostgreSQL a
/// report's one start is bound as one value, not as an array: a generic plan of it is as good
/// as one made for the value, so PostgreSQL keeps it.
#[test]
fn due_diligence_reads_are_prepared_once_whatever_their_ids() {
    use roastery_app::due_diligence::DueDiligenceOf;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_kept_dd");
    let urls = std::iter::once((&sqlite.url, "json_each(?)"))
        .chain(pg.as_ref().map(|db| (&db.url, "= $1")));
    for (url, one_of_the_ids) in urls {
        let (app, g) = traced(url);
        let report = |of| app.due_diligence_of(of).unwrap();
        let first = kept_by(|| {
            let r = report(DueDiligenceOf::Lot(g.blended.id));
            assert!(!r.sources.is_empty(), "{url}: {r:?}");
        });
        assert!(
            first
                .iter()
                .any(|sql| sql.contains("RECURSIVE") && sql.contains(one_of_the_ids)),
            "{url}: {first:#?}"
        );
        for of in [
            DueDiligenceOf::Order(g.orders[0].id),
            DueDiligenceOf::Lot(g.roasted[0].id),
            DueDiligenceOf::Order(g.orders[1].id),
        ] {
            let mut ran = Vec::new();
            let kept = kept_by(|| ran = sql_of(|| drop(report(of))));
            assert!(kept.is_empty(), "{url}: {of:?} prepared again: {kept:#?}");
            assert!(
                !ran.iter().any(|sql| sql.contains(" IN ('")),
                "{url}: {of:?}: ids written into a statement: {ran:#?}"
            );
        }
    }
}

/// An order's due diligence report is one statement outside a transaction on either database
/// (on PostgreSQL one round trip): its upstream trace, its source lots and their due diligence
/// (and its size, which bounds what the same statement reads); its shipments, which the trace
/// reads, prove the order exists. An order nothing was shipped from is read again, in a
/// transaction, to tell an empty report from an unknown order.
#[test]
fn an_orders_due_diligence_report_is_one_statement() {
    use roastery_app::due_diligence::{DueDiligenceOf, SetDueDiligence};
    use roastery_domain::due_diligence::DueDiligenceInput;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_dd_order");
    for url in std::iter::once(&sqlite.url).chain(pg.as_ref().map(|db| &db.url)) {
        let (app, g) = traced(url);
        for lot in &g.green {
            app.set_due_diligence(SetDueDiligence {
                green_lot_id: lot.id,
                input: DueDiligenceInput {
                    country_of_production: "CO".into(),
                    production_from: "2025-10-01".into(),
                    production_to: "2026-02-28".into(),
                    plots: r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":2}}]}"#.into(),
                    suppliers: Vec::new(),
                    statements: Vec::new(),
                    hs_code: None,
                },
            })
            .unwrap();
        }
        let order = DueDiligenceOf::Order(g.orders[0].id);
        app.due_diligence_of(order).unwrap();
        let mut report = None;
        let ran: Vec<String> = sql_of(|| report = Some(app.due_diligence_of(order).unwrap()));
        let report = report.unwrap();
        assert!(
            !report.sources.is_empty() && report.sources.iter().all(|s| s.due_diligence.is_some()),
            "{url}: {report:?}"
        );
        assert_eq!(ran.len(), 1, "{url}: {ran:#?}");
        assert!(ran[0].starts_with("WITH RECURSIVE"), "{url}: {ran:#?}");
        // No sources: asked again in a transaction, with the order's own row.
        let unknown = DueDiligenceOf::Order(Uuid::from_u128(404));
        let mut answer = None;
        let ran = sql_of(|| answer = Some(app.due_diligence_of(unknown)));
        assert!(
            answer.unwrap().is_err(),
            "{url}: an unknown order has a report"
        );
        assert!(
            ran.iter().any(|sql| is_transaction_control(sql))
                && ran
                    .iter()
                    .any(|sql| sql.contains("FROM \"orders\"") || sql.contains("FROM `orders`")),
            "{url}: {ran:#?}"
        );
    }
}

/// The listing items of lots asked by id are read by one statement each database keeps,
/// whatever the ids: the ids joined as rows in the asked order, from one bound array
/// (PostgreSQL) or JSON array (SQLite). (What it reads is the listing contract's,
/// `contract::listing`, on every store.)
#[test]
fn items_by_ids_are_read_by_one_kept_statement() {
    use roastery_ports::Store;
    use roastery_ports::listing::ListingRepo;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_kept_by_ids");
    let urls = std::iter::once((&sqlite.url, "FROM json_each(?) AS a JOIN")).chain(
        pg.as_ref().map(|db| {
            (
                &db.url,
                "FROM unnest($1) WITH ORDINALITY AS a(value, key) JOIN",
            )
        }),
    );
    for (url, one_of_the_ids) in urls {
        let (app, g) = traced(url);
        let read = |ids: Vec<Uuid>| {
            app.store()
                .read_statement(|tx| Ok(tx.roasted_lot_items_by_ids(&ids, &Default::default())?))
                .unwrap();
        };
        let first = kept_by(|| read(vec![g.roasted[0].id]));
        assert!(
            first.iter().any(|sql| sql.contains(one_of_the_ids)),
            "{url}: {first:#?}"
        );
        let again = kept_by(|| read(vec![g.roasted[1].id, g.roasted[0].id, Uuid::from_u128(7)]));
        assert!(again.is_empty(), "{url}: prepared again: {again:#?}");
    }
}

/// Runs `work` and checks that every statement it ran besides transaction control was kept on
/// this thread before, and that it prepared nothing new; returns how many it ran.
fn reads_all_kept(url: &str, work: impl FnOnce()) -> usize {
    let kept = KEPT.with(|k| k.borrow().clone());
    let mut ran = Vec::new();
    let again = kept_by(|| ran = sql_of(work));
    assert!(again.is_empty(), "{url}: prepared again: {again:#?}");
    let read: Vec<&str> = ran
        .iter()
        .filter(|sql| !is_transaction_control(sql))
        .map(|sql| sql.split(" -- ").next().unwrap_or_default())
        .collect();
    for sql in &read {
        assert!(kept.iter().any(|k| k == sql), "{url}: not kept: {sql}");
    }
    read.len()
}

/// A page of orders is read by statements each database keeps, whatever the number of orders on
/// it: the orders, their items and their shipments (on SQLite, a statement naming the page's ids
/// one by one was parsed at every call).
#[test]
fn an_orders_page_is_read_by_kept_statements() {
    use roastery_app::order::ListOrders;
    use roastery_domain::page::PageRequest;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_orders_page");
    for url in std::iter::once(&sqlite.url).chain(pg.as_ref().map(|db| &db.url)) {
        let (app, g) = traced(url);
        let list = || {
            app.list_orders(ListOrders::default(), PageRequest::default())
                .unwrap()
                .items
        };
        assert_eq!(list().len(), 2, "{url}");
        // A third order on the page, with neither shipments nor the genealogy's SKUs.
        app.sync_products(products(1, 9)).unwrap();
        app.set_orders(orders(1, 9, 1)).unwrap();
        let mut page = Vec::new();
        assert_eq!(reads_all_kept(url, || page = list()), 3, "{url}");
        assert_eq!(page.len(), 3, "{url}: {page:?}");
        for order in &g.orders {
            let listed = page.iter().find(|o| o.id == order.id).unwrap();
            assert_eq!(listed.items, order.items, "{url}");
            assert_eq!(listed.shipments, order.shipments, "{url}");
            assert!(!listed.shipments.is_empty(), "{url}: {listed:?}");
        }
    }
}

/// Cuppings read by id, with their coffees, their results and their scores, are one kept
/// statement each, whatever the number of ids (a page of cuppings reads its coffees so).
#[test]
fn cuppings_by_ids_are_read_by_kept_statements() {
    use roastery_ports::Store;
    use roastery_ports::repo::CuppingRepo;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_cuppings");
    for url in std::iter::once(&sqlite.url).chain(pg.as_ref().map(|db| &db.url)) {
        let (app, g) = traced(url);
        let ids: Vec<Uuid> = g.cuppings.iter().map(|c| c.id()).collect();
        let coffees: Vec<Uuid> = g
            .cuppings
            .iter()
            .flat_map(|c| c.coffees().iter().map(|coffee| coffee.id))
            .collect();
        assert!(coffees.len() > 1, "{url}: {coffees:?}");
        let read = |ids: &[Uuid], coffees: &[Uuid]| {
            app.store()
                .read(|tx| {
                    let cuppings = tx.cuppings_by_ids(ids)?;
                    tx.cupping_results(coffees)?;
                    tx.result_scores(coffees)?;
                    Ok(cuppings)
                })
                .unwrap()
        };
        assert_eq!(read(&ids[..1], &coffees[..1]).len(), 1, "{url}");
        let mut found = Vec::new();
        assert_eq!(
            reads_all_kept(url, || found = read(&ids, &coffees)),
            4,
            "{url}"
        );
        assert_eq!(found, g.cuppings.to_vec(), "{url}");
    }
}

/// The ledger entries touching lots and the orders shipped from them (what an EPCIS export reads,
/// and a trace on SQLite) are one kept statement each, whatever the number of lots.
#[test]
fn entries_and_orders_of_lots_are_read_by_kept_statements() {
    use roastery_ports::Store;
    use roastery_ports::repo::TraceRepo;
    record_statements();
    let sqlite = support::sqlite();
    let pg = support::postgres("statements_lots_entries");
    for url in std::iter::once(&sqlite.url).chain(pg.as_ref().map(|db| &db.url)) {
        let (app, g) = traced(url);
        let read = |lots: &[Uuid]| {
            app.store()
                .read(|tx| {
                    Ok((
                        tx.ledger_entries_touching(lots)?,
                        tx.orders_shipped_from(lots)?,
                    ))
                })
                .unwrap()
        };
        // The genealogy's entries move green lots; its orders ship from the blend.
        let (entries, orders) = read(&[g.green[0].id, g.blended.id]);
        assert!(!entries.is_empty() && orders.len() == 2, "{url}");
        let lots: Vec<Uuid> = g
            .green
            .iter()
            .map(|l| l.id)
            .chain(g.roasted.iter().map(|l| l.id))
            .chain([g.blended.id])
            .collect();
        let mut found = None;
        // Entries, orders, their items, their shipments.
        assert_eq!(
            reads_all_kept(url, || found = Some(read(&lots))),
            4,
            "{url}"
        );
        let (entries, orders) = found.unwrap();
        let mut entry_ids: Vec<Uuid> = entries.iter().map(|e| e.id).collect();
        let mut expected: Vec<Uuid> = g.entries.iter().map(|e| e.id).collect();
        entry_ids.sort();
        expected.sort();
        assert_eq!(entry_ids, expected, "{url}");
        let mut order_ids: Vec<Uuid> = orders.iter().map(|o| o.id).collect();
        let mut expected: Vec<Uuid> = g.orders.iter().map(|o| o.id).collect();
        order_ids.sort();
        expected.sort();
        assert_eq!(order_ids, expected, "{url}");
    }
}

/// How many statements of `statements` write the `green_lots` table: inserts and updates (an
/// update held with a write's other statements counts where it is sent).
fn green_lot_writes(statements: &[String]) -> (usize, usize) {
    let count = |needle: &str| {
        statements
            .iter()
            .map(|s| s.split(" -- binds").next().unwrap_or_default())
            .map(|s| s.replace(['"', '`'], "").matches(needle).count())
            .sum::<usize>()
    };
    (
        count("INSERT INTO green_lots"),
        count("UPDATE green_lots SET"),
    )
}

/// Imports a green lot named `name` (its external id the same, in lower case) of `kg`
/// kilograms; its id.
fn import_green_lot(app: &Roastery<DieselStore>, name: &str, kg: i64) -> Uuid {
    let external_id = name.to_lowercase().replace(' ', "-");
    app.import_green_lot(green_import(name, &external_id, kg))
        .unwrap()
        .lot
        .id
}

/// A green lot imported, or created by a transfer to a location where its origin has no lot, is
/// inserted with its listing item: one statement and one row version for the new lot, not an
/// insert and then an update that stores its item (on PostgreSQL a dead row version for each
/// new lot). The items stored are the ones rendered from the lots now, on both databases.
fn new_lots_are_inserted_with_their_items(url: &str) {
    let (app, g) = traced(url);
    let app = app.rendering_listings(Arc::new(Numbers));
    let import = |n: usize| import_green_lot(&app, &format!("Guji {n}"), 60);
    skip_the_genealogys_numbers(&app);
    let mut written = vec![import(0)]; // opens the connection first: not counted
    let imported = sql_of(|| {
        written.push(import(1));
    });
    assert_eq!(green_lot_writes(&imported), (1, 0), "{url}: {imported:#?}");
    let transferred = sql_of(|| {
        let transfer = app
            .transfer_green_lot(roastery_app::green_lot::TransferGreenLot {
                green_lot_id: g.green[0].id,
                weight: roastery_app::green_lot::WeightInput {
                    amount: rust_decimal::Decimal::ONE,
                    unit: roastery_domain::weight::WeightUnit::Kg,
                },
                destination_location_id: Uuid::from_u128(1002),
            })
            .unwrap();
        assert_ne!(transfer.destination.lot.id, g.green[0].id);
        written.extend([g.green[0].id, transfer.destination.lot.id]);
    });
    // The source lot written back with its item, the new lot inserted with its own.
    assert_eq!(
        green_lot_writes(&transferred),
        (1, 1),
        "{url}: {transferred:#?}"
    );
    // (The genealogy's other lots were written without a renderer: their items are missing.)
    let (checked, stale) = app.check_listing_items().unwrap();
    assert!(checked >= written.len(), "{url}: {checked} lots checked");
    assert!(
        stale.iter().all(|s| !written.contains(&s.id)),
        "{url}: {written:?} {stale:#?}"
    );
}

#[test]
fn new_green_lots_are_inserted_with_their_items() {
    record_statements();
    new_lots_are_inserted_with_their_items(&support::sqlite().url);
    if let Some(db) = support::postgres("statements_new_lots") {
        new_lots_are_inserted_with_their_items(&db.url);
    }
}

/// How many statements of `statements` store listing items of several lots at once.
fn item_batches(statements: &[String]) -> usize {
    statements
        .iter()
        .filter(|s| s.contains("SET listing_item = v.item"))
        .count()
}

/// The listing items a unit of work stores at its end are stored with one statement per kind of
/// lot on PostgreSQL, however many lots it wrote (a roast of three green lots: the green lots'
/// items in one), and so are those the store renders when it opens; a new roasted or blended lot
/// is inserted with its item (no update of its row). On both databases the items stored are the
/// ones rendered from the lots.
fn items_are_stored_one_statement_per_kind(url: &str, postgres: bool) {
    let (app, _) = traced(url);
    let app = app.rendering_listings(Arc::new(Numbers));
    skip_the_genealogys_numbers(&app);
    roastery_ports::Store::write(app.store(), |tx| {
        use roastery_ports::repo::SystemRepo as _;
        for kind in [
            roastery_domain::stock::LotKind::Roasted,
            roastery_domain::stock::LotKind::Blended,
        ] {
            for _ in 0..100 {
                tx.next_number(kind.prefix())?;
            }
        }
        Ok(())
    })
    .unwrap();
    // The genealogy's lots were written without a renderer: their items are missing, and are
    // rendered now (a batch of each kind).
    let rendered = sql_of(|| assert!(app.render_listing_items().unwrap() >= 5));
    let green: Vec<Uuid> = (0..3)
        .map(|n| import_green_lot(&app, &format!("Sidama {n}"), 30))
        .collect();
    let kg = |n: i64| roastery_app::green_lot::WeightInput {
        amount: rust_decimal::Decimal::from(n),
        unit: roastery_domain::weight::WeightUnit::Kg,
    };
    let mut roasted = None;
    let roast = sql_of(|| {
        let recorded = app
            .record_roast(roastery_app::roast::RecordRoast {
                name: "Sidama blend roast".into(),
                location_id: Uuid::from_u128(1002),
                roasted_date: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                weight: kg(5),
                green_lots: green.iter().map(|id| (*id, kg(2))).collect(),
                profile_id: None,
                details: None,
                curves: Vec::new(),
                projects: Vec::new(),
            })
            .unwrap();
        roasted = Some(recorded.roasted_lot.lot.id);
    });
    let roasted_id = roasted.unwrap();
    let blend = sql_of(|| {
        app.create_blend(roastery_app::blend::CreateBlend {
            name: "Sidama house blend".into(),
            location_id: Uuid::from_u128(1002),
            blended_date: DateTime::from_timestamp(1_800_000_100, 0).unwrap(),
            roasted_lots: vec![(roasted_id, kg(1))],
            projects: Vec::new(),
        })
        .unwrap();
    });
    let updates_of = |table: &str, s: &[String]| {
        s.iter()
            .filter(|s| {
                s.replace(['"', '`'], "")
                    .contains(&format!("UPDATE {table}"))
            })
            .count()
    };
    assert_eq!(updates_of("roasted_lots", &roast), 0, "{url}: {roast:#?}");
    assert_eq!(updates_of("blended_lots", &blend), 0, "{url}: {blend:#?}");
    assert!(
        roast.iter().any(|s| s
            .replace(['"', '`'], "")
            .contains("INSERT INTO roasted_lots")
            && s.contains("Sidama blend roast")),
        "{url}: {roast:#?}"
    );
    if postgres {
        assert_eq!(item_batches(&rendered), 3, "{rendered:#?}");
        // The green lots' items; the roasted lot inserted with its own.
        assert_eq!(item_batches(&roast), 1, "{roast:#?}");
        // The roasted lot taken from, written back without its item, then its item.
        assert_eq!(item_batches(&blend), 1, "{blend:#?}");
        let one_by_one = |s: &[String]| {
            s.iter()
                .filter(|s| s.contains("SET listing_item = $1"))
                .count()
        };
        assert_eq!(one_by_one(&rendered) + one_by_one(&roast), 0, "{roast:#?}");
    }
    let (checked, stale) = app.check_listing_items().unwrap();
    assert!(checked >= 10, "{url}: {checked} lots checked");
    assert!(stale.is_empty(), "{url}: {stale:#?}");
    let stored = roastery_ports::Store::read(app.store(), |tx| {
        use roastery_ports::listing::ListingRepo as _;
        Ok(tx.stored_listing_items(roastery_domain::stock::LotKind::Roasted, &[roasted_id])?)
    })
    .unwrap();
    assert!(
        matches!(stored.as_slice(), [(id, Some(item))] if *id == roasted_id && !item.is_empty()),
        "{url}: {stored:?}"
    );
}

#[test]
fn listing_items_are_stored_one_statement_per_kind() {
    record_statements();
    items_are_stored_one_statement_per_kind(&support::sqlite().url, false);
    if let Some(db) = support::postgres("statements_item_batches") {
        items_are_stored_one_statement_per_kind(&db.url, true);
    }
}
