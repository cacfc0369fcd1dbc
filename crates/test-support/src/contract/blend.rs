//! Blended lots.

use chrono::{DateTime, Utc};
use roastery_domain::blended_lot::{BlendedLot, NewBlend, create_blend};
use roastery_domain::lot_source::{SourceInfo, UsedSource};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::Stock;
use roastery_ports::Store;
use roastery_ports::StoreError;
use roastery_ports::repo::{BlendRepo, SystemRepo};
use uuid::Uuid;

use super::green_lot::{kg, locations};
use super::roast::roasted;
use super::{all_pages, at, read, write};

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
        let mut first = Stock::new(kg("10"), blended_date);
        let mut second = Stock::new(kg("10"), blended_date);
        let source = |lot: &RoastedLot| SourceInfo {
            lot_id: lot.id,
            name: lot.name.clone(),
            external_id: None,
        };
        let lot = create_blend(
            NewBlend {
                name: format!("Blend {n}"),
                location_id,
                blended_date,
                projects: vec![],
            },
            vec![
                UsedSource {
                    lot: source(&first_roast),
                    stock: &mut first,
                    used: kg("10").into(),
                },
                UsedSource {
                    lot: source(&second_roast),
                    stock: &mut second,
                    used: kg("6.5").into(),
                },
            ],
            Uuid::from_u128(n),
            number,
            blended_date,
        )
        .map_err(|e| StoreError::Internal(e.to_string()))?;
        tx.insert_blended_lot(&lot)?;
        Ok(lot)
    })
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
        lot.stock = Stock::restore(kg("0"), Some(at(30)));
        lot.last_modified_at = at(30);
        lot.name = "not written: only the stock is".into();
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
