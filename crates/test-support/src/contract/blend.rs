//! Blended lots.

use chrono::{DateTime, Utc};
use roastery_app::blend::CreateBlend;
use roastery_app::green_lot::WeightInput;
use roastery_domain::blended_lot::{BlendedLot, NewBlend, create_blend};
use roastery_domain::location::Location;
use roastery_domain::lot_source::{SourceInfo, UsedSource};
use roastery_domain::page::PageRequest;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use roastery_domain::weight::WeightUnit;
use roastery_ports::Store;
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{BlendRepo, LocationRepo, RoastRepo, SystemRepo};
use uuid::Uuid;

use super::fixtures::{all_pages, app, at, read, write};
use super::green_lot::{kg, locations};
use super::roast::roasted;

/// A blended lot of two stored roasted lots (16.5 kg), stored; the roasted lots are `n * 100 + 1`
/// and `n * 100 + 2`.
pub fn blended<S: Store>(
    store: &S,
    n: u128,
    location_id: Uuid,
    blended_date: DateTime<Utc>,
) -> BlendedLot {
    let first_roast = roasted(store, n * 100 + 1, location_id, blended_date, None);
    let second_roast = roasted(store, n * 100 + 2, location_id, blended_date, None);
    write(store, |tx| {
        let number = tx.next_number("PB")?;
        let lot = blend(
            n,
            number,
            location_id,
            blended_date,
            &[(&first_roast, "10"), (&second_roast, "6.5")],
        );
        tx.insert_blended_lot(&lot)?;
        Ok(lot)
    })
}

/// Blended lot `n` (not stored), numbered `number`, of these roasted lots and the kilograms
/// used of each, in that order.
pub fn blend(
    n: u128,
    number: i64,
    location_id: Uuid,
    blended_date: DateTime<Utc>,
    sources: &[(&RoastedLot, &str)],
) -> BlendedLot {
    let mut stocks: Vec<Stock> = sources
        .iter()
        .map(|_| Stock::new(kg("100"), blended_date))
        .collect();
    create_blend(
        NewBlend {
            name: format!("Blend {n}"),
            location_id,
            blended_date,
            projects: vec![],
        },
        sources
            .iter()
            .zip(stocks.iter_mut())
            .map(|((lot, used), stock)| UsedSource {
                lot: SourceInfo {
                    lot_id: lot.id,
                    name: lot.name.clone(),
                    external_id: None,
                },
                stock,
                used: kg(used).into(),
            })
            .collect(),
        Uuid::from_u128(n),
        number,
        blended_date,
    )
    .unwrap()
}

pub fn blended_lots_stock_write_back_and_listing<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = blended(&store, 1, here.id, at(0));
    let b = blended(&store, 2, here.id, at(10));
    let c = blended(&store, 3, here.id, at(20));
    assert_eq!(read(&store, |tx| tx.blended_lot(a.id)), Some(a.clone()));
    assert_eq!(read(&store, |tx| tx.blended_lot(Uuid::from_u128(99))), None);
    assert_eq!(a.sources.len(), 2, "sources keep their given order");

    let listed = all_pages(2, |page| {
        read(&store, |tx| tx.list_blended_lots(None, page))
    });
    assert_eq!(listed, vec![c.clone(), b.clone(), a.clone()]);
    let from = all_pages(5, |page| {
        read(&store, |tx| tx.list_blended_lots(Some(at(10)), page))
    });
    assert_eq!(from, vec![c.clone(), b.clone()], "from is inclusive");

    write(&store, |tx| {
        let mut lot = tx.blended_lot_for_update(a.id)?.unwrap();
        assert_eq!(*lot, a);
        lot.apply(|lot| {
            lot.stock = Stock::restore(kg("0"), Some(at(30)));
            lot.last_modified_at = at(30);
            lot.name = "not written: only the stock is".into();
        })?;
        tx.update_blended_lot_stock(&lot)?;
        assert!(tx.blended_lot_for_update(Uuid::from_u128(99))?.is_none());
        Ok(())
    });
    assert_eq!(
        read(&store, |tx| tx.blended_lot(a.id)),
        Some(BlendedLot {
            stock: Stock::restore(kg("0"), Some(at(30))),
            last_modified_at: at(30),
            ..a
        })
    );
    assert_eq!(read(&store, |tx| tx.blended_lot(b.id)), Some(b));
}

/// The blend use case on this store: it takes the roasted weight in one unit of work and keeps
/// its lineage.
pub fn a_blend_takes_roasted_weight_and_keeps_its_lineage<S: Store>(store: S) {
    let floor = Location::new(
        Uuid::from_u128(1000),
        "Roastery floor",
        Some("RST-01"),
        at(0),
    )
    .unwrap();
    write(&store, |tx| tx.insert_location(&floor));
    let a = roasted(&store, 1, floor.id, at(0), None);
    let b = roasted(&store, 2, floor.id, at(60), None);
    let (app, _clock) = app(store);
    let input = |amount: &str| WeightInput {
        amount: amount.parse().unwrap(),
        unit: WeightUnit::Kg,
    };
    let blend = app
        .create_blend(CreateBlend {
            name: "House blend".into(),
            location_id: floor.id,
            blended_date: at(120),
            roasted_lots: vec![(a.id, input("16.5")), (b.id, input("5"))],
            projects: vec![],
        })
        .unwrap();
    assert_eq!(blend.lot.stock.weight(), kg("21.5"));
    assert_eq!(blend.location.external_id.as_deref(), Some("RST-01"));
    let (a_after, b_after, stored) = read(app.store(), |tx| {
        Ok((
            tx.roasted_lot(a.id)?.unwrap(),
            tx.roasted_lot(b.id)?.unwrap(),
            tx.blended_lot(blend.lot.id)?,
        ))
    });
    assert!(a_after.stock.is_consumed());
    assert_eq!(b_after.stock.weight(), kg("11.5"));
    assert_eq!(stored.as_ref(), Some(&blend.lot));
    let sources: Vec<Uuid> = blend.lot.sources.iter().map(|s| s.lot_id).collect();
    assert_eq!(sources, vec![a.id, b.id], "sources in the given order");
    let listed = app
        .list_blended_lots(Some(at(120)), PageRequest::default())
        .unwrap();
    assert_eq!(listed.items, vec![blend]);
}
