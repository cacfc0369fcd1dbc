//! The listing read model's stored items: cleared whenever a lot is written, the written lot
//! handed back to the unit of work, items stored and paged as stored.

use roastery_domain::page::{JoinedPage, Limit, PageRequest, Position};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::{LotKind, Stock};
use roastery_ports::Store;
use roastery_ports::listing::{ListingRepo, RenderedItem};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{BlendRepo, GreenLotRepo, RoastRepo, SystemRepo};
use uuid::Uuid;

use super::blend::blend;
use super::fixtures::{at, read, write};
use super::green_lot::{green_lot, kg, locations};
use super::roast::{roast, roasted};

fn item(id: Uuid, json: &str) -> RenderedItem {
    RenderedItem {
        id,
        json: json.into(),
    }
}

/// A page's items as joined text.
fn joined(page: &JoinedPage) -> &str {
    std::str::from_utf8(page.items()).expect("items are text")
}

fn first_page(limit: i64) -> PageRequest {
    PageRequest {
        limit: Limit::parse(Some(limit)).unwrap(),
        after: None,
    }
}

pub fn a_written_lot_loses_its_item_and_is_handed_back_in_its_last_state<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let (a, b) = (green_lot(1, 0, &here), green_lot(2, 1, &here));
    let written = write(&store, |tx| {
        tx.insert_green_lot(&a)?;
        tx.insert_green_lot(&b)?;
        let written = tx.take_written_lots();
        assert!(tx.take_written_lots().is_empty(), "taken once");
        // A lot's item put twice in one call: the last one is kept, as if put one by one.
        tx.put_listing_items(
            LotKind::Green,
            &[
                item(a.id, r#"{"a":0}"#),
                item(b.id, r#"{"b":1}"#),
                item(a.id, r#"{"a":1}"#),
            ],
        )?;
        Ok(written)
    });
    assert_eq!(written.green, vec![a.clone(), b.clone()]);
    assert!(written.roasted.is_empty() && written.blended.is_empty());
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(10))).expect("all kept");
    assert_eq!(
        joined(&page),
        r#"{"b":1},{"a":1}"#,
        "newest registration first"
    );
    assert_eq!((page.len(), page.next()), (2, None), "the last page");
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(1))).expect("all kept");
    assert_eq!(joined(&page), r#"{"b":1}"#);
    assert_eq!(
        page.next(),
        Some(Position::Keyset {
            at: b.registration_date,
            id: b.id
        }),
        "the next page starts after the last item's position"
    );

    // Written twice in one unit of work: handed back once, as last written; its item is gone.
    let last = write(&store, |tx| {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|l| l.stock = Stock::restore(kg("50"), None))?;
        tx.update_green_lot(&lot)?;
        lot.apply(|l| l.stock = Stock::restore(kg("40"), None))?;
        tx.update_green_lot(&lot)?;
        Ok(tx.take_written_lots())
    });
    assert_eq!(last.green.len(), 1);
    assert_eq!(last.green[0].stock.weight(), kg("40"));
    assert_eq!(
        read(&store, |tx| tx.green_lot_items(None, &first_page(10))),
        None
    );
    // Past a page of one, the lot without its item only tells that another page follows.
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(1))).expect("page kept");
    assert_eq!((joined(&page), page.next().is_some()), (r#"{"b":1}"#, true));
    assert_eq!(
        read(&store, |tx| tx.lots_to_render(
            LotKind::Green,
            false,
            None,
            10
        )),
        vec![a.id]
    );
    let mut stored = read(&store, |tx| {
        tx.stored_listing_items(LotKind::Green, &[a.id, b.id])
    });
    stored.sort();
    assert_eq!(
        stored,
        vec![(a.id, None), (b.id, Some(r#"{"b":1}"#.into()))]
    );
}

pub fn items_are_paged_filtered_and_listed_for_rendering_in_id_order<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let lots: Vec<_> = (1..=3)
        .map(|n| green_lot(n, i64::try_from(n).unwrap(), &here))
        .collect();
    write(&store, |tx| {
        for lot in &lots {
            tx.insert_green_lot(lot)?;
        }
        let items: Vec<_> = lots
            .iter()
            .map(|l| item(l.id, &format!("{}", l.lot_number)))
            .collect();
        // An item for a lot that is not stored is not kept.
        let stray = item(Uuid::from_u128(99), "99");
        tx.put_listing_items(LotKind::Green, &[items, vec![stray]].concat())
    });
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(1))).unwrap();
    assert_eq!(joined(&page), "3", "the newest");
    let newest = Position::Keyset {
        at: lots[2].registration_date,
        id: lots[2].id,
    };
    assert_eq!(page.next(), Some(newest), "another page after it");
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(3))).unwrap();
    assert_eq!(
        (joined(&page), page.next()),
        ("3,2,1", None),
        "all, the last page"
    );
    let modified = read(&store, |tx| {
        tx.green_lot_items(Some(at(2)), &first_page(10))
    })
    .unwrap();
    assert_eq!(joined(&modified), "3,2", "modified at or after");
    // After a keyset position: older lots, and at the same instant those of smaller id.
    let after = |from: Option<i64>, minutes: i64, id: u128| -> String {
        let page = PageRequest {
            limit: Limit::parse(Some(10)).unwrap(),
            after: Some(Position::Keyset {
                at: at(minutes),
                id: Uuid::from_u128(id),
            }),
        };
        let page = read(&store, |tx| tx.green_lot_items(from.map(at), &page)).unwrap();
        joined(&page).to_owned()
    };
    assert_eq!(after(None, 3, 3), "2,1", "after the newest");
    assert_eq!(
        after(Some(2), 3, 3),
        "2",
        "after the newest, modified at or after"
    );
    assert_eq!(
        after(None, 2, 99),
        "2,1",
        "same instant, greater id: included"
    );
    assert_eq!(after(None, 2, 1), "1", "same instant, smaller id: excluded");
    let all = |after| {
        read(&store, |tx| {
            tx.lots_to_render(LotKind::Green, true, after, 2)
        })
    };
    assert_eq!(all(None), vec![lots[0].id, lots[1].id]);
    assert_eq!(all(Some(lots[1].id)), vec![lots[2].id]);
    assert!(
        read(&store, |tx| tx.lots_to_render(
            LotKind::Green,
            false,
            None,
            10
        ))
        .is_empty()
    );
    assert!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[Uuid::from_u128(99)]))
        .is_empty()
    );

    // Roasted lots: by roast date, and by ids in any order.
    let r1 = roasted(&store, 10, here.id, at(10), None);
    let r2 = roasted(&store, 11, here.id, at(11), None);
    write(&store, |tx| {
        tx.put_listing_items(LotKind::Roasted, &[item(r1.id, "r1"), item(r2.id, "r2")])
    });
    let page = read(&store, |tx| {
        tx.roasted_lot_items(Some(at(11)), &first_page(10))
    })
    .unwrap();
    assert_eq!(joined(&page), "r2");
    // By ids: in the asked order, an id of no lot left out, paged over the lots found.
    let asked = [r1.id, Uuid::from_u128(99), r2.id];
    let by_ids = |ids: &[Uuid], page: PageRequest| {
        read(&store, |tx| tx.roasted_lot_items_by_ids(ids, &page))
    };
    let all = by_ids(&asked, first_page(10)).unwrap();
    assert_eq!(joined(&all), "r1,r2");
    assert_eq!((all.len(), all.next()), (2, None));
    let reversed = by_ids(&[r2.id, r1.id], first_page(10)).unwrap();
    assert_eq!(joined(&reversed), "r2,r1");
    let first = by_ids(&asked, first_page(1)).unwrap();
    assert_eq!(joined(&first), "r1");
    assert_eq!(first.next(), Some(Position::Index(1)));
    let second = PageRequest {
        limit: Limit::parse(Some(1)).unwrap(),
        after: first.next(),
    };
    let last = by_ids(&asked, second).unwrap();
    assert_eq!(joined(&last), "r2");
    assert_eq!(last.next(), None);
    let past = PageRequest {
        after: Some(Position::Index(5)),
        ..second
    };
    assert!(by_ids(&asked, past).unwrap().is_empty());
    assert!(
        by_ids(&[Uuid::from_u128(98)], first_page(10))
            .unwrap()
            .is_empty()
    );
    // Writing a roasted lot's stock clears its item: a page holding it is no longer stored; a
    // page past it still is.
    write(&store, |tx| {
        let lot = tx.roasted_lot_for_update(r1.id)?.unwrap();
        tx.update_roasted_lot_stock(&lot)
    });
    assert_eq!(by_ids(&asked, first_page(10)), None);
    assert_eq!(joined(&by_ids(&asked, second).unwrap()), "r2");
}

/// A lot inserted with its item keeps that item, reads back as inserted, is listed with it and
/// is not handed back for rendering; written again without one in the same unit of work, it
/// loses the item and is handed back in that state.
pub fn a_lot_inserted_with_its_item_keeps_it<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = green_lot(1, 0, &here);
    let written = write(&store, |tx| {
        tx.insert_green_lot_with_item(&a, r#"{"a":0}"#)?;
        Ok(tx.take_written_lots())
    });
    assert!(written.is_empty(), "{written:?}");
    assert_eq!(read(&store, |tx| tx.green_lot(a.id)), Some(a.clone()));
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[a.id])),
        vec![(a.id, Some(r#"{"a":0}"#.to_owned()))]
    );
    let page = read(&store, |tx| tx.green_lot_items(None, &first_page(10))).unwrap();
    assert_eq!(joined(&page), r#"{"a":0}"#);

    let b = green_lot(2, 0, &here);
    let written = write(&store, |tx| {
        tx.insert_green_lot_with_item(&b, r#"{"b":0}"#)?;
        let mut lot = tx.green_lot_for_update(b.id)?.unwrap();
        lot.apply(|l| l.stock = Stock::restore(kg("5"), None))?;
        tx.update_green_lot(&lot)?;
        Ok(tx.take_written_lots())
    });
    assert_eq!(written.green.len(), 1);
    assert_eq!(written.green[0].stock.weight(), kg("5"));
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[b.id])),
        vec![(b.id, None)]
    );
}

/// A lot written with its item keeps that item and is not handed back for rendering; written
/// again without one in the same unit of work, it loses the item and is handed back as last
/// written, so a stale item can never stay stored.
pub fn a_lot_written_with_its_item_keeps_it<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let a = green_lot(1, 0, &here);
    write(&store, |tx| {
        tx.insert_green_lot(&a)?;
        tx.put_listing_items(LotKind::Green, &[item(a.id, r#"{"a":0}"#)])
    });
    let written = write(&store, |tx| {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|l| l.stock = Stock::restore(kg("50"), None))?;
        tx.update_green_lot_with_item(&lot, r#"{"a":50}"#)?;
        Ok(tx.take_written_lots())
    });
    assert!(written.is_empty(), "{written:?}");
    assert_eq!(
        read(&store, |tx| tx.green_lot(a.id))
            .unwrap()
            .stock
            .weight(),
        kg("50")
    );
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[a.id])),
        vec![(a.id, Some(r#"{"a":50}"#.to_owned()))]
    );

    // Cleared again by a later write without its item: handed back in that state.
    let written = write(&store, |tx| {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|l| l.stock = Stock::restore(kg("40"), None))?;
        tx.update_green_lot_with_item(&lot, r#"{"a":40}"#)?;
        lot.apply(|l| l.stock = Stock::restore(kg("30"), None))?;
        tx.update_green_lot(&lot)?;
        Ok(tx.take_written_lots())
    });
    assert_eq!(written.green.len(), 1);
    assert_eq!(written.green[0].stock.weight(), kg("30"));
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[a.id])),
        vec![(a.id, None)]
    );

    // Written without its item first and then with it: the item stays and nothing is handed
    // back, so the end of the unit of work cannot store an item of the earlier state.
    let written = write(&store, |tx| {
        let mut lot = tx.green_lot_for_update(a.id)?.unwrap();
        lot.apply(|l| l.stock = Stock::restore(kg("20"), None))?;
        tx.update_green_lot(&lot)?;
        lot.apply(|l| l.stock = Stock::restore(kg("10"), None))?;
        tx.update_green_lot_with_item(&lot, r#"{"a":10}"#)?;
        Ok(tx.take_written_lots())
    });
    assert!(written.is_empty(), "{written:?}");
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Green, &[a.id])),
        vec![(a.id, Some(r#"{"a":10}"#.to_owned()))]
    );
}

/// Roasted and blended lots inserted with their items keep them, read back as inserted (with
/// their sources), are listed with them and are not handed back for rendering.
pub fn roasted_and_blended_lots_inserted_with_their_items_keep_them<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let sources = [
        roasted(&store, 1, here.id, at(1), None),
        roasted(&store, 2, here.id, at(1), None),
    ];
    let (r, b) = write(&store, |tx| {
        let r = RoastedLot {
            external_id: Some("roast-log-9".into()),
            ..roast(9, tx.next_number("PR")?, here.id, at(5), &[(77, "20")])
        };
        let b = blend(
            9,
            tx.next_number("PB")?,
            here.id,
            at(6),
            &[(&sources[0], "10"), (&sources[1], "6.5")],
        );
        tx.insert_roasted_lot_with_item(&r, r#"{"r":9}"#)?;
        tx.insert_blended_lot_with_item(&b, r#"{"b":9}"#)?;
        let written = tx.take_written_lots();
        assert!(written.is_empty(), "{written:?}");
        Ok((r, b))
    });
    assert_eq!(read(&store, |tx| tx.roasted_lot(r.id)), Some(r.clone()));
    assert_eq!(read(&store, |tx| tx.blended_lot(b.id)), Some(b.clone()));
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Roasted, &[r.id])),
        vec![(r.id, Some(r#"{"r":9}"#.to_owned()))]
    );
    assert_eq!(
        read(&store, |tx| tx
            .stored_listing_items(LotKind::Blended, &[b.id])),
        vec![(b.id, Some(r#"{"b":9}"#.to_owned()))]
    );
    let roasted_page = read(&store, |tx| {
        tx.roasted_lot_items(Some(at(5)), &first_page(10))
    });
    assert_eq!(roasted_page.as_ref().map(joined), Some(r#"{"r":9}"#));
    let blended_page = read(&store, |tx| tx.blended_lot_items(None, &first_page(10)));
    assert_eq!(blended_page.as_ref().map(joined), Some(r#"{"b":9}"#));
    // The source lots were inserted without items: those are still to be rendered.
    let mut missing = read(&store, |tx| {
        tx.lots_to_render(LotKind::Roasted, false, None, 10)
    });
    missing.sort();
    let mut expected = vec![sources[0].id, sources[1].id];
    expected.sort();
    assert_eq!(missing, expected);
    assert!(
        read(&store, |tx| tx.lots_to_render(
            LotKind::Blended,
            false,
            None,
            10
        ))
        .is_empty()
    );
}
