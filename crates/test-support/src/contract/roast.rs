//! Roasted lots, details, curves and profiles.

use chrono::{DateTime, Utc};
use roastery_domain::lot_source::{SourceInfo, UsedSource};
use roastery_domain::profile::{Component, GreenLotRef, NewProfile, Profile};
use roastery_domain::roast::{NewRoast, record_roast};
use roastery_domain::roast_curve::{DataPoint, RoastCurve};
use roastery_domain::roast_details::{
    RoastDetails, RoastDetailsDraft, RoastValue, Temperature, Time,
};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{ProfileRepo, RoastRepo, SystemRepo};
use roastery_ports::{Store, StoreError};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::fixtures::{all_pages, at, read, write, write_err};
use super::green_lot::{kg, locations};

/// A roasted lot of 16.5 kg, stored, made from a green lot the roast module does not need.
pub fn roasted<S: Store>(
    store: &S,
    n: u128,
    location_id: Uuid,
    roasted_date: DateTime<Utc>,
    external_id: Option<&str>,
) -> RoastedLot {
    write(store, |tx| {
        let number = tx.next_number("PR")?;
        let lot = RoastedLot {
            external_id: external_id.map(Into::into),
            ..roast(n, number, location_id, roasted_date, &[(77, "20")])
        };
        tx.insert_roasted_lot(&lot)?;
        Ok(lot)
    })
}

/// Roasted lot `n` of 16.5 kg (not stored), numbered `number`, roasted at `roasted_date` from
/// these green lots: `(green lot n, kilograms used)`, in that order.
pub fn roast(
    n: u128,
    number: i64,
    location_id: Uuid,
    roasted_date: DateTime<Utc>,
    sources: &[(u128, &str)],
) -> RoastedLot {
    let mut stocks: Vec<Stock> = sources
        .iter()
        .map(|_| Stock::new(kg("100"), roasted_date))
        .collect();
    record_roast(
        NewRoast {
            name: format!("Roast {n}"),
            location_id,
            roasted_date,
            weight: kg("16.5").into(),
            profile_id: None,
            projects: vec![],
            external_id: None,
        },
        sources
            .iter()
            .zip(stocks.iter_mut())
            .map(|((source, used), stock)| UsedSource {
                lot: SourceInfo {
                    lot_id: Uuid::from_u128(*source),
                    name: format!("Green {source}"),
                    external_id: Some(format!("ERP-{source}")),
                },
                stock,
                used: kg(used).into(),
            })
            .collect(),
        Uuid::from_u128(n),
        number,
        roasted_date,
    )
    .unwrap()
}

pub fn roasted_lots_stock_write_back_and_listing<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = roasted(&store, 1, here.id, at(0), Some("roast-log-1"));
    let b = roasted(&store, 2, here.id, at(10), None);
    let c = roasted(&store, 3, here.id, at(20), None);
    assert_eq!(read(&store, |tx| tx.roasted_lot(a.id)), Some(a.clone()));
    assert_eq!(read(&store, |tx| tx.roasted_lot(Uuid::from_u128(99))), None);
    assert_eq!(
        read(&store, |tx| tx.roasted_lot_by_external_id("roast-log-1")),
        Some(a.clone())
    );
    assert!(matches!(
        write_err(&store, |tx| {
            let again = RoastedLot {
                id: Uuid::from_u128(4),
                lot_number: 40,
                ..a.clone()
            };
            tx.insert_roasted_lot(&again)
        }),
        StoreError::Duplicate(_)
    ));
    // By ids: what exists, in any order.
    let mut found = read(&store, |tx| {
        tx.roasted_lots_by_ids(&[c.id, Uuid::from_u128(99), a.id])
    });
    found.sort_by_key(|l| l.id);
    assert_eq!(found, vec![a.clone(), c.clone()]);

    let listed = all_pages(2, |page| {
        read(&store, |tx| tx.list_roasted_lots(None, page))
    });
    assert_eq!(listed, vec![c.clone(), b.clone(), a.clone()]);
    let from = all_pages(5, |page| {
        read(&store, |tx| tx.list_roasted_lots(Some(at(10)), page))
    });
    assert_eq!(from, vec![c.clone(), b.clone()], "from is inclusive");

    write(&store, |tx| {
        let mut locked = tx.roasted_lots_for_update(&[b.id, a.id])?;
        locked.sort_by_key(|l| l.id);
        assert_eq!(locked.len(), 2);
        for lot in &mut locked {
            lot.apply(|lot| {
                lot.stock = Stock::restore(kg("0"), Some(at(30)));
                lot.last_modified_at = at(30);
                lot.name = "not written: only the stock is".into();
            })?;
            tx.update_roasted_lot_stock(lot)?;
        }
        let one = tx.roasted_lot_for_update(c.id)?.unwrap();
        assert_eq!(*one, c);
        Ok(())
    });
    let written = read(&store, |tx| tx.roasted_lot(a.id)).unwrap();
    assert_eq!(
        written,
        RoastedLot {
            stock: Stock::restore(kg("0"), Some(at(30))),
            last_modified_at: at(30),
            ..a
        }
    );
}

pub fn profile(n: u128, external_id: Option<&str>, reference_roast_id: Option<Uuid>) -> Profile {
    Profile::new(
        NewProfile {
            name: format!("Profile {n}"),
            external_id: external_id.map(Into::into),
            profile_group: Some("Espresso".into()),
            components: vec![
                Component {
                    percentage: Decimal::new(333_333, 4),
                    green_lots: vec![GreenLotRef {
                        id: Uuid::from_u128(77),
                        name: "Guji".into(),
                    }],
                },
                Component {
                    percentage: Decimal::new(666_667, 4),
                    green_lots: vec![
                        GreenLotRef {
                            id: Uuid::from_u128(78),
                            name: "Huila".into(),
                        },
                        GreenLotRef {
                            id: Uuid::from_u128(79),
                            name: "Cerrado".into(),
                        },
                    ],
                },
            ],
            reference_roast_id,
            projects: vec![],
        },
        Uuid::from_u128(n),
        at(0),
    )
    .unwrap()
}

pub fn profiles_by_id_external_id_and_ids<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let roast = roasted(&store, 1, here.id, at(0), None);
    let a = profile(500, Some("PRF-1"), Some(roast.id));
    let b = profile(501, None, None);
    write(&store, |tx| {
        tx.insert_profile(&a)?;
        tx.insert_profile(&b)
    });
    assert!(matches!(
        write_err(&store, |tx| tx.insert_profile(&profile(
            502,
            Some("PRF-1"),
            None
        ))),
        StoreError::Duplicate(_)
    ));
    assert_eq!(read(&store, |tx| tx.profile(a.id)), Some(a.clone()));
    assert_eq!(read(&store, |tx| tx.profile(Uuid::from_u128(9))), None);
    assert_eq!(
        read(&store, |tx| tx.profile_by_external_id("PRF-1")),
        Some(a.clone())
    );
    let mut found = read(&store, |tx| {
        tx.profiles_by_ids(&[b.id, Uuid::from_u128(9), a.id])
    });
    found.sort_by_key(|p| p.id);
    assert_eq!(found, vec![a, b]);
}

fn curve(name: &str, points: i64) -> RoastCurve {
    RoastCurve::new(
        name,
        "CELSIUS",
        (0..points)
            .map(|i| DataPoint {
                time_ms: i * 250,
                value: Decimal::new(150_000 + i * 7, 3),
            })
            .collect(),
    )
    .unwrap()
}

pub fn curves_keep_their_order<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = roasted(&store, 1, here.id, at(0), None);
    let b = roasted(&store, 2, here.id, at(1), None);
    // Names out of alphabetical order: the stored order is the given one.
    let curves = vec![curve("ET", 40), curve("BT", 3), curve("Delta", 1)];
    write(&store, |tx| tx.insert_roast_curves(a.id, &curves));
    assert_eq!(read(&store, |tx| tx.roast_curves(a.id)), curves);
    assert_eq!(read(&store, |tx| tx.roast_curves(b.id)), vec![]);
    assert_eq!(
        read(&store, |tx| tx.roast_details_by_ids(&[a.id, b.id])),
        vec![]
    );
}

/// Details with every field set, the measures in units other than the first of their list.
pub fn full_details(technician: &str) -> RoastDetails {
    RoastDetails::new(RoastDetailsDraft {
        roast_technician: Some(technician.into()),
        note: Some("even development, a touch long after first crack".into()),
        start_temperature: Some(Temperature::parse(Decimal::new(2041, 1), "CELSIUS").unwrap()),
        end_temperature: Some(Temperature::parse(Decimal::new(4215, 1), "FAHRENHEIT").unwrap()),
        roast_value: Some(RoastValue::parse(Decimal::new(625, 1), "AGTRON_GOURMET").unwrap()),
        roast_value2: Some(RoastValue::parse(Decimal::from(70), "TONINO").unwrap()),
        roast_duration: Some(Time::parse(Decimal::new(115, 1), "MINUTE").unwrap()),
        first_crack_time: Some(Time::parse(Decimal::from(480), "SECOND").unwrap()),
        color_change_time: Some(Time::parse(Decimal::from(270_000), "MILLISECOND").unwrap()),
        machine: Some("Probat P12".into()),
    })
    .unwrap()
}

pub fn roast_details_by_ids_answer_each_stored_lot_once<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = roasted(&store, 1, here.id, at(0), None);
    let b = roasted(&store, 2, here.id, at(1), None);
    let without = roasted(&store, 3, here.id, at(2), None);
    let sparse = RoastDetails::new(RoastDetailsDraft {
        start_temperature: Some(Temperature::parse(Decimal::from(-5), "CELSIUS").unwrap()),
        ..RoastDetailsDraft::default()
    })
    .unwrap();
    write(&store, |tx| {
        tx.insert_roast_details(a.id, &full_details("Ana"))?;
        tx.insert_roast_details(b.id, &sparse)
    });
    // Unknown ids, lots without details and repeated ids answer nothing more; the order is the
    // store's (the use case puts them in the asked order).
    let mut found = read(&store, |tx| {
        tx.roast_details_by_ids(&[b.id, Uuid::from_u128(999), without.id, a.id, b.id])
    });
    found.sort_by_key(|(id, _)| *id);
    assert_eq!(found, vec![(a.id, full_details("Ana")), (b.id, sparse)]);
    assert_eq!(read(&store, |tx| tx.roast_details_by_ids(&[])), vec![]);
}

/// Curves of 10,000 points each store and load whole, in order.
pub fn long_curves_store_whole<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = roasted(&store, 1, here.id, at(0), None);
    let curves = vec![curve("BT", 10_000), curve("ET", 10_000)];
    write(&store, |tx| tx.insert_roast_curves(a.id, &curves));
    assert_eq!(read(&store, |tx| tx.roast_curves(a.id)), curves);
}
