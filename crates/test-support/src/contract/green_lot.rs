//! Green lots.

use std::str::FromStr;

use roastery_domain::green_lot::GreenLot;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::location::Location;
use roastery_domain::price::{Currency, Price};
use roastery_domain::project::ProjectRef;
use roastery_domain::stock::Stock;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{GreenLotRepo, LocationRepo};
use roastery_ports::{Store, StoreError};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::fixtures::{all_pages, at, read, write, write_err};

pub fn kg(amount: &str) -> Weight {
    Weight::new(Decimal::from_str(amount).unwrap(), WeightUnit::Kg).unwrap()
}

/// Two locations, stored.
pub fn locations<S: Store>(store: &S) -> [Location; 2] {
    let locations = [1, 2].map(|n| {
        Location::new(
            Uuid::from_u128(1000 + n),
            &format!("Warehouse {n}"),
            None,
            at(0),
        )
        .unwrap()
    });
    write(store, |tx| {
        locations.iter().try_for_each(|l| tx.insert_location(l))
    });
    locations
}

/// An imported lot (its own origin) registered at `minutes`, with every optional field set.
pub fn green_lot(n: u128, minutes: i64, location: &Location) -> GreenLot {
    let id = Uuid::from_u128(n);
    GreenLot {
        id,
        origin_id: id,
        lot_number: i64::try_from(n).unwrap(),
        name: format!("Guji {n}"),
        ico_number: Some(format!("010/{n}/2026")),
        external_id: Some(format!("ERP-{n}")),
        stock: Stock::new(kg("60.5"), at(minutes)),
        price: Some(Price::new(Decimal::new(1234, 2), Currency::parse("EUR").unwrap()).unwrap()),
        location_id: Some(location.id),
        projects: vec![],
        details: GreenLotDetails::default(),
        registration_date: at(minutes),
        last_modified_date: at(minutes),
    }
}

/// Lot `n` of `origin`'s origin at `location`, as a transfer splits it off.
fn split_off(origin: &GreenLot, n: u128, location: &Location) -> GreenLot {
    GreenLot {
        id: Uuid::from_u128(n),
        lot_number: i64::try_from(n).unwrap(),
        external_id: None,
        location_id: Some(location.id),
        ..origin.clone()
    }
}

pub fn green_lots_load_as_stored_in_the_asked_order<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let lots = [
        green_lot(1, 0, &here),
        green_lot(2, 1, &here),
        green_lot(3, 2, &here),
    ];
    write(&store, |tx| {
        lots.iter().try_for_each(|l| tx.insert_green_lot(l))
    });
    let [a, b, c] = lots;
    assert_eq!(read(&store, |tx| tx.green_lot(b.id)), Some(b.clone()));
    assert_eq!(read(&store, |tx| tx.green_lot(Uuid::from_u128(99))), None);
    assert_eq!(
        read(&store, |tx| tx.green_lot_by_external_id("ERP-3")),
        Some(c.clone())
    );
    assert_eq!(
        read(&store, |tx| tx.green_lot_by_external_id("ERP-9")),
        None
    );
    let asked = [c.id, Uuid::from_u128(99), a.id];
    assert_eq!(
        read(&store, |tx| tx.green_lots_by_ids(&asked)),
        vec![c.clone(), a.clone()],
        "in the asked order, unknown ids skipped"
    );
    // Unique id, lot number and external id (away from any location: one active lot per origin
    // and location is another rule).
    let a = GreenLot {
        location_id: None,
        ..a
    };
    for clash in [
        GreenLot {
            external_id: None,
            lot_number: 50,
            ..a.clone()
        },
        GreenLot {
            id: Uuid::from_u128(51),
            origin_id: Uuid::from_u128(51),
            external_id: None,
            ..a.clone()
        },
        GreenLot {
            id: Uuid::from_u128(52),
            origin_id: Uuid::from_u128(52),
            lot_number: 52,
            ..a.clone()
        },
    ] {
        assert!(matches!(
            write_err(&store, |tx| tx.insert_green_lot(&clash)),
            StoreError::Duplicate(_)
        ));
    }
}

pub fn green_lot_listing_filters_on_modification_and_pages<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let mut lots: Vec<GreenLot> = (1..=5)
        .map(|n| green_lot(n, i64::try_from(n).unwrap(), &here))
        .collect();
    // Registered in one order, modified in another.
    lots[0].last_modified_date = at(100);
    lots[3].last_modified_date = at(90);
    write(&store, |tx| {
        lots.iter().try_for_each(|l| tx.insert_green_lot(l))
    });
    let newest_first: Vec<GreenLot> = lots.iter().rev().cloned().collect();
    let listed = all_pages(2, |page| read(&store, |tx| tx.list_green_lots(None, page)));
    assert_eq!(listed, newest_first);
    let modified = all_pages(1, |page| {
        read(&store, |tx| tx.list_green_lots(Some(at(90)), page))
    });
    assert_eq!(
        modified,
        vec![lots[3].clone(), lots[0].clone()],
        "from is inclusive"
    );
}

pub fn loaders_for_update_load_what_plain_loaders_load<S: Store>(store: S) {
    let [here, there] = locations(&store);
    let a = green_lot(1, 0, &here);
    let b = green_lot(2, 1, &there);
    // A lot of a's origin at the other location.
    let a_there = split_off(&a, 3, &there);
    write(&store, |tx| {
        [&a, &b, &a_there]
            .into_iter()
            .try_for_each(|l| tx.insert_green_lot(l))
    });
    write(&store, |tx| {
        let one = tx.green_lot_for_update(a.id)?.unwrap();
        assert_eq!(*one, a);
        assert!(tx.green_lot_for_update(Uuid::from_u128(99))?.is_none());
        let many = tx.green_lots_for_update(&[b.id, Uuid::from_u128(99), a.id])?;
        let many: Vec<GreenLot> = many.into_iter().map(|l| l.into_inner()).collect();
        assert_eq!(many, vec![b.clone(), a.clone()]);
        let (source, target) = tx.green_lot_to_transfer(a.id, there.id)?.unwrap();
        assert_eq!((*source).clone(), a);
        assert_eq!(target.map(|t| t.into_inner()), Some(a_there.clone()));
        let (_, none) = tx.green_lot_to_transfer(b.id, here.id)?.unwrap();
        assert!(none.is_none());
        assert!(
            tx.green_lot_to_transfer(Uuid::from_u128(99), here.id)?
                .is_none()
        );
        Ok(())
    });
    assert_eq!(
        read(&store, |tx| tx.active_green_lot_at(a.origin_id, there.id)),
        Some(a_there)
    );
    assert_eq!(
        read(&store, |tx| tx.active_green_lot_at(b.origin_id, here.id)),
        None
    );
}

pub fn a_written_back_green_lot_keeps_its_fixed_fields<S: Store>(store: S) {
    let [here, there] = locations(&store);
    let a = green_lot(1, 0, &here);
    write(&store, |tx| tx.insert_green_lot(&a));
    write(&store, |tx| {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|lot| {
            lot.origin_id = Uuid::from_u128(77);
            lot.lot_number = 77;
            lot.registration_date = at(77);
            lot.name = "Guji, renamed".into();
            lot.location_id = Some(there.id);
            lot.stock = Stock::restore(kg("0"), Some(at(5)));
            lot.price = None;
            lot.projects = vec![ProjectRef {
                id: Uuid::from_u128(5),
                name: "Direct trade".into(),
            }];
            lot.last_modified_date = at(5);
        })?;
        tx.update_green_lot(&lot)
    });
    let stored = read(&store, |tx| tx.green_lot(a.id)).unwrap();
    assert_eq!(
        stored,
        GreenLot {
            name: "Guji, renamed".into(),
            location_id: Some(there.id),
            stock: Stock::restore(kg("0"), Some(at(5))),
            price: None,
            projects: vec![ProjectRef {
                id: Uuid::from_u128(5),
                name: "Direct trade".into()
            }],
            last_modified_date: at(5),
            ..a
        }
    );
}

pub fn one_active_green_lot_per_origin_and_location<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = green_lot(1, 0, &here);
    write(&store, |tx| tx.insert_green_lot(&a));
    let twin = GreenLot {
        id: Uuid::from_u128(2),
        lot_number: 2,
        external_id: None,
        ..a.clone()
    };
    // A concurrent creation of the active lot: the unit of work should run again and merge.
    let refused = write_err(&store, |tx| tx.insert_green_lot(&twin));
    assert!(matches!(refused, StoreError::Contention), "{refused:?}");
    let consumed = GreenLot {
        stock: Stock::restore(kg("0"), Some(at(1))),
        ..twin
    };
    write(&store, |tx| tx.insert_green_lot(&consumed));
}

/// The lots a transfer loaded with its lock are not answered again once the unit of work wrote
/// a green lot: later loads read what was written.
pub fn a_transfer_reads_its_lots_as_written_after_a_write<S: Store>(store: S) {
    let [here, there] = locations(&store);
    let a = green_lot(1, 0, &here);
    let a_there = split_off(&a, 3, &there);
    write(&store, |tx| {
        tx.insert_green_lot(&a)?;
        tx.insert_green_lot(&a_there)
    });
    write(&store, |tx| {
        let (mut source, target) = tx.green_lot_to_transfer(a.id, there.id)?.unwrap();
        let mut target = target.expect("a's active lot there");
        assert_eq!(*target, a_there);
        // Before any write, plain loads answer the same lots.
        assert_eq!(tx.green_lot(a.id)?, Some(a.clone()));
        assert_eq!(
            tx.active_green_lot_at(a.origin_id, there.id)?,
            Some(a_there.clone())
        );
        source.apply(|l| l.stock = Stock::restore(kg("900"), None))?;
        tx.update_green_lot(&source)?;
        assert_eq!(tx.green_lot(a.id)?.unwrap().stock.weight(), kg("900"));
        target.apply(|l| l.stock = Stock::restore(kg("0"), Some(at(9))))?;
        tx.update_green_lot(&target)?;
        assert_eq!(
            tx.active_green_lot_at(a.origin_id, there.id)?,
            None,
            "the lot there was consumed by this unit of work"
        );
        Ok(())
    });
    assert_eq!(
        read(&store, |tx| tx.active_green_lot_at(a.origin_id, there.id)),
        None
    );
}

/// A write unit of work reads back what it wrote, whenever the store sends its writes (a lot
/// written twice, its ledger entry), and a unit of work that fails after writing leaves nothing.
pub fn a_unit_of_work_reads_back_what_it_wrote<S: Store>(store: S) {
    use roastery_domain::ledger::{EntryKind, Movement, Origin, entries};
    use roastery_domain::stock::{LotKind, TypedLotRef};
    use roastery_ports::repo::{EventRepo, LedgerFilter, TraceRepo};

    let [here, _] = locations(&store);
    let a = green_lot(1, 0, &here);
    write(&store, |tx| tx.insert_green_lot(&a));
    let entry = |n: u128, before: &str, after: &str| {
        let movement = Movement {
            lot: TypedLotRef {
                id: a.id,
                kind: LotKind::Green,
            },
            kind: EntryKind::SetWeight,
            before: kg(before),
            after: kg(after),
            reference: None,
        };
        let origin = Origin {
            operation: "inventory.green.setGreenLotWeight".into(),
            client_id: "client-a".into(),
            created_date: at(1),
        };
        entries(&[movement], &origin, || Uuid::from_u128(n))
    };
    let entries_of_a = |tx: &mut S::Tx| {
        let of_a = LedgerFilter {
            lot_id: Some(a.id),
            from: None,
            to: None,
        };
        tx.list_ledger_entries(&of_a, &roastery_domain::page::PageRequest::default())
            .map(|page| page.items)
    };
    let set = |tx: &mut S::Tx, weight: &str| -> Result<(), StoreError> {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|lot| lot.stock = Stock::restore(kg(weight), None))?;
        tx.update_green_lot(&lot)
    };
    let (seen, seen_entries) = write(&store, |tx| {
        set(tx, "50")?;
        tx.insert_ledger_entries(&entry(11, "60.5", "50"))?;
        set(tx, "40")?;
        tx.insert_ledger_entries(&entry(12, "50", "40"))?;
        // A write with no rows (a weight set to what it was) writes nothing.
        tx.insert_ledger_entries(&[])?;
        tx.insert_events(&[])?;
        Ok((tx.green_lot(a.id)?, entries_of_a(tx)?))
    });
    assert_eq!(
        seen.map(|lot| lot.stock),
        Some(Stock::restore(kg("40"), None))
    );
    assert_eq!(seen_entries.len(), 2, "{seen_entries:?}");
    let stored = read(&store, |tx| tx.green_lot(a.id)).unwrap();
    assert_eq!(stored.stock, Stock::restore(kg("40"), None));
    assert_eq!(read(&store, |tx| entries_of_a(tx)).len(), 2);

    // Written, then failed: the rollback takes back what was held as well as what was sent.
    let failed = store.write(|tx| {
        set(tx, "30")?;
        tx.insert_ledger_entries(&entry(13, "40", "30"))?;
        drop(roastery_ports::repo::EventRepo::take_changes(tx));
        Err::<(), _>(roastery_ports::AppError::Store(StoreError::Internal(
            "refused after writing".into(),
        )))
    });
    assert!(failed.is_err());
    let stored = read(&store, |tx| tx.green_lot(a.id)).unwrap();
    assert_eq!(stored.stock, Stock::restore(kg("40"), None));
    assert_eq!(read(&store, |tx| entries_of_a(tx)).len(), 2);
}
