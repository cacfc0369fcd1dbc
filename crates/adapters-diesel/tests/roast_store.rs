//! Roasts and blends under concurrency on SQLite and PostgreSQL: opposite lock orders, racing
//! imports. What a store answers one unit of work at a time is the repository contract
//! (`roastery_test_support::contract`), run on every store by `tests/contract.rs`.

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

use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_app::blend::CreateBlend;
use roastery_app::green_lot::{ImportGreenLot, WeightInput};
use roastery_app::location::ImportLocation;
use roastery_app::roast_log::ImportRoastLog;
use roastery_domain::location::Location;
use roastery_domain::lot_source::{SourceInfo, UsedSource};
use roastery_domain::roast::{NewRoast, record_roast};
use roastery_domain::roast_log::{LogWeight, RoastLog};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::Store;
use roastery_ports::repo::{EventRepo, RoastRepo, SystemRepo};
use roastery_ports::testing::{ManualClock, SequentialIds};
use rust_decimal::Decimal;
use uuid::Uuid;

use roastery_test_support::database as support;
use roastery_test_support::imports::green_import;

fn kg(s: &str) -> Weight {
    Weight::new(Decimal::from_str(s).unwrap(), WeightUnit::Kg).unwrap()
}

fn input(s: &str) -> WeightInput {
    WeightInput {
        amount: Decimal::from_str(s).unwrap(),
        unit: WeightUnit::Kg,
    }
}

/// A roasted lot made from a green lot that is not stored (green storage is another module's).
fn roasted(
    app: &Roastery<DieselStore>,
    location_id: Uuid,
    name: &str,
    at: DateTime<Utc>,
    weight: &str,
) -> RoastedLot {
    let id = Uuid::now_v7();
    app.store()
        .write(|tx| {
            let number = tx.next_number("PR")?;
            let lot = record_roast(
                NewRoast {
                    name: name.into(),
                    location_id,
                    roasted_date: at,
                    weight: kg(weight).into(),
                    profile_id: None,
                    projects: vec![],
                    external_id: None,
                },
                vec![UsedSource {
                    lot: SourceInfo {
                        lot_id: Uuid::from_u128(77),
                        name: "Guji".into(),
                        external_id: Some("ERP-77".into()),
                    },
                    stock: &mut Stock::new(kg("100"), at),
                    used: kg("20").into(),
                }],
                id,
                number,
                at,
            )?;
            tx.insert_roasted_lot(&lot)?;
            // A fixture written past the use cases: no events for it.
            drop(tx.take_changes());
            Ok(lot)
        })
        .unwrap()
}

/// The use cases over `store`, with a manual clock and one location, the roastery floor.
fn floor(
    store: DieselStore,
    external_id: Option<&str>,
) -> (Roastery<DieselStore>, ManualClock, Location) {
    let clock = ManualClock::default();
    let app = Roastery::new(
        store,
        Arc::new(clock.clone()),
        Arc::new(SequentialIds::default()),
    );
    let location = app
        .import_location(ImportLocation {
            name: "Roastery floor".into(),
            external_id: external_id.map(Into::into),
        })
        .unwrap();
    (app, clock, location)
}

/// Blends naming the same two roasted lots in opposite orders, many side by side: every one is
/// made, each lot loses exactly what the blends took, and on PostgreSQL the database never has
/// to break a deadlock (the lots are locked in one statement, in id order).
fn opposite_blends(store: DieselStore) {
    const ROUNDS: usize = 20;
    let (app, clock, location) = floor(store, None);
    let t0 = clock.now_value();
    let a = roasted(&app, location.id, "Guji light", t0, "16").id;
    let b = roasted(&app, location.id, "Guji dark", t0, "16").id;
    let blend = |first, second| {
        app.create_blend(CreateBlend {
            name: "House blend".into(),
            location_id: location.id,
            blended_date: t0,
            roasted_lots: vec![(first, input("0.1")), (second, input("0.1"))],
            projects: vec![],
        })
    };
    std::thread::scope(|s| {
        let forward = s.spawn(|| (0..ROUNDS).map(|_| blend(a, b)).collect::<Vec<_>>());
        let backward = s.spawn(|| (0..ROUNDS).map(|_| blend(b, a)).collect::<Vec<_>>());
        for made in [forward.join().unwrap(), backward.join().unwrap()].concat() {
            assert_eq!(made.unwrap().lot.stock.weight(), kg("0.2"));
        }
    });
    let weights = app
        .store()
        .read(|tx| Ok(tx.roasted_lots_by_ids(&[a, b])?))
        .unwrap()
        .into_iter()
        .map(|l| l.stock.weight())
        .collect::<Vec<_>>();
    // 16 kg less 2 × ROUNDS blends of 100 g each.
    assert_eq!(weights, [kg("12"), kg("12")]);
}

#[test]
fn opposite_blends_on_sqlite() {
    let db = support::sqlite();
    opposite_blends(DieselStore::open(&db.url, Some(2)).unwrap());
}

#[test]
fn opposite_blends_on_postgres() {
    let Some(db) = support::postgres("roast_blends") else {
        return;
    };
    opposite_blends(DieselStore::open(&db.url, Some(2)).unwrap());
    assert_eq!(support::deadlocks(&db.url), 0, "PostgreSQL broke deadlocks");
}

/// The same roast log imported by several clients at once (a retry racing the original): every
/// import answers the one roasted lot it made, none "the lot is consumed", and the green lot
/// gave its weight once.
fn simultaneous_imports_of_one_log(store: DieselStore) {
    const ROUNDS: usize = 8;
    const CLIENTS: usize = 3;
    let (app, _clock, location) = floor(store, None);
    for round in 0..ROUNDS {
        let green = app
            .import_green_lot(ImportGreenLot {
                location_id: Some(location.id),
                ..green_import(&format!("Guji {round}"), &format!("green-{round}"), 10)
            })
            .unwrap()
            .lot
            .id;
        let samples = || (0..3).map(|i| Some(Decimal::from(150 + i))).collect();
        let log = RoastLog {
            title: Some("Morning roast".into()),
            roast_uuid: format!("log-{round}"),
            roast_epoch: Decimal::from(1_767_225_600),
            timex: (0..3).map(Decimal::from).collect(),
            temp1: samples(),
            temp2: samples(),
            // The whole lot goes in: after the first import it is consumed.
            weight: Some(LogWeight {
                green: Decimal::from(10),
                roasted: Decimal::from_str("8.5").unwrap(),
                unit: "Kg".into(),
            }),
            ..RoastLog::default()
        };
        let start = std::sync::Barrier::new(CLIENTS);
        let answers: Vec<_> = std::thread::scope(|s| {
            let clients: Vec<_> = (0..CLIENTS)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        app.import_roast_log(ImportRoastLog {
                            log: log.clone(),
                            location_id: location.id,
                            green_lots: vec![(green, None)],
                            name: None,
                            profile_id: None,
                            projects: vec![],
                        })
                    })
                })
                .collect();
            clients.into_iter().map(|c| c.join().unwrap()).collect()
        });
        let ids: Vec<Uuid> = answers
            .into_iter()
            .map(|a| {
                a.expect("every import answers the roast")
                    .roasted_lot
                    .lot
                    .id
            })
            .collect();
        assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
        let lot = app
            .store()
            .read(|tx| Ok(tx.roasted_lot_by_external_id(&format!("log-{round}"))?))
            .unwrap()
            .unwrap();
        assert_eq!(lot.id, ids[0]);
        assert_eq!(lot.stock.weight(), kg("8.5"));
    }
}

#[test]
fn simultaneous_imports_of_one_log_on_sqlite() {
    let db = support::sqlite();
    simultaneous_imports_of_one_log(DieselStore::open(&db.url, Some(4)).unwrap());
}

#[test]
fn simultaneous_imports_of_one_log_on_postgres() {
    let Some(db) = support::postgres("roast_log_imports") else {
        return;
    };
    simultaneous_imports_of_one_log(DieselStore::open(&db.url, Some(4)).unwrap());
}
