//! The ledger and the genealogy: entries, the audit, traces both ways, and what a trace shows
//! of the lots, orders and cuppings it reaches.

use std::str::FromStr;

use chrono::{DateTime, TimeDelta, Utc};

use roastery_app::trace::{LotNotFound, Trace, TraceLotView};
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::cupping::{Cupping, CuppingState};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::ledger::{
    Direction, Edge, EdgeKind, EntryKind, LedgerEntry, Movement, Origin, Reference, entries,
};
use roastery_domain::location::Location;
use roastery_domain::order::{Order, OrderStatus, Shipment};
use roastery_domain::product::Sku;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::{LotKind, Stock, TypedLotRef};
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{
    BlendRepo, CuppingRepo, GreenLotRepo, LedgerFilter, LocationRepo, LotAudit, OrderRepo,
    ProductRepo, RoastRepo, TraceRepo, TracedCupping, TracedLot,
};
use roastery_ports::testing::InMemoryStore;
use roastery_ports::view::LocationRef;
use roastery_ports::{Store, StoreError};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::blend::blend;
use super::cupping::{cupping, lot};
use super::fixtures::{all_pages, at, read, write, write_err};
use super::green_lot::{green_lot, kg, locations};
use super::order::{order, product};
use super::roast::roast;

pub fn ledger_entries_filter_and_page_newest_first<S: Store>(store: S) {
    let lot = |n| TypedLotRef {
        id: Uuid::from_u128(n),
        kind: LotKind::Green,
    };
    let mut next = 0u128;
    let mut made = Vec::new();
    for (n, minutes) in [(1, 0), (2, 1), (1, 2), (1, 2)] {
        let origin = Origin {
            operation: "inventory.green.importGreenLot".into(),
            client_id: "client-a".into(),
            created_date: at(minutes),
        };
        let movement = Movement::created(lot(n), EntryKind::Import, kg("10"));
        made.extend(entries(&[movement], &origin, || {
            next += 1;
            Uuid::from_u128(next)
        }));
    }
    write(&store, |tx| tx.insert_ledger_entries(&made));
    let newest_first = |mut v: Vec<_>| {
        v.sort_by_key(|e: &roastery_domain::ledger::LedgerEntry| {
            std::cmp::Reverse((e.created_date, e.id))
        });
        v
    };
    let all = all_pages(3, |page| {
        read(&store, |tx| {
            tx.list_ledger_entries(&LedgerFilter::default(), page)
        })
    });
    assert_eq!(all, newest_first(made.clone()));
    let of_one = LedgerFilter {
        lot_id: Some(lot(1).id),
        from: Some(at(1)),
        to: None,
    };
    let listed = all_pages(1, |page| {
        read(&store, |tx| tx.list_ledger_entries(&of_one, page))
    });
    let expected: Vec<_> = made
        .iter()
        .filter(|e| e.lot.id == lot(1).id && e.created_date >= at(1))
        .cloned()
        .collect();
    assert_eq!(listed, newest_first(expected));
    assert_eq!(listed.len(), 2);
}

/// The entries of some lots and those naming one of them as reference, each once, in one
/// query, however many lots are asked for.
pub fn ledger_entries_touching_a_lot_or_naming_it<S: Store>(store: S) {
    let green = |n| TypedLotRef {
        id: Uuid::from_u128(n),
        kind: LotKind::Green,
    };
    let roasted = TypedLotRef {
        id: Uuid::from_u128(10),
        kind: LotKind::Roasted,
    };
    let order = Reference::Order(Uuid::from_u128(30));
    let made = vec![
        entry(101, green(1), EntryKind::Import, "30", "30", None, 0),
        entry(102, green(2), EntryKind::Import, "5", "5", None, 0),
        entry(
            103,
            green(1),
            EntryKind::TransferOut,
            "-10",
            "20",
            Some(Reference::Lot(green(3))),
            1,
        ),
        entry(
            104,
            green(3),
            EntryKind::TransferIn,
            "10",
            "10",
            Some(Reference::Lot(green(1))),
            1,
        ),
        entry(
            105,
            green(2),
            EntryKind::RoastInput,
            "-5",
            "0",
            Some(Reference::Lot(roasted)),
            2,
        ),
        entry(106, roasted, EntryKind::RoastOutput, "4", "4", None, 2),
        entry(107, roasted, EntryKind::Shipment, "-1", "3", Some(order), 3),
    ];
    write(&store, |tx| tx.insert_ledger_entries(&made));
    let touching = |ids: &[Uuid]| {
        let mut found = read(&store, |tx| tx.ledger_entries_touching(ids));
        found.sort_by_key(|e| e.id);
        found
            .into_iter()
            .map(|e| e.id.as_u128())
            .collect::<Vec<_>>()
    };
    // Lot 3's own entry and the transfer out of lot 1 that names it.
    assert_eq!(touching(&[green(3).id]), vec![103, 104]);
    // The roasted lot's entries and the roast input naming it; the order's id names no lot.
    assert_eq!(touching(&[roasted.id]), vec![105, 106, 107]);
    assert_eq!(touching(&[Uuid::from_u128(30)]), vec![107]);
    assert_eq!(touching(&[green(1).id, green(3).id]), vec![101, 103, 104]);
    assert_eq!(touching(&[]), Vec::<u128>::new());
    // Past one chunk of ids.
    let many: Vec<Uuid> = (1000..1700)
        .map(Uuid::from_u128)
        .chain([green(2).id])
        .collect();
    assert_eq!(touching(&many), vec![102, 105]);
}

/// An entry of `lot` at `minutes`: `delta` kg, leaving `after` kg.
pub fn entry(
    n: u128,
    lot: TypedLotRef,
    kind: EntryKind,
    delta: &str,
    after: &str,
    reference: Option<Reference>,
    minutes: i64,
) -> LedgerEntry {
    LedgerEntry {
        id: Uuid::from_u128(n),
        lot,
        kind,
        delta_micros: Decimal::from_str(delta)
            .unwrap()
            .checked_mul(Decimal::from(1_000_000))
            .and_then(|d| i64::try_from(d).ok())
            .unwrap(),
        weight_after: kg(after),
        reference,
        operation: "inventory.green.transferGreenLot".into(),
        client_id: "client-a".into(),
        created_date: at(minutes),
    }
}

/// A genealogy with every kind of edge, stored past the use cases:
/// - green lot 1 gives 10 kg to green lot 2 (minute 1), which gives 2 kg back (minute 5);
/// - roasted lot 10 is roasted from lots 1 (20 kg) then 2 (5 kg) at minute 2, roasted lot 11
///   from green lot 77 (never stored);
/// - blended lot 20 blends roasted lots 10 (10 kg) then 11 (6.5 kg) at minute 3;
/// - order 30 ships from 20 then 10 (minute 4), order 31 (stored first, ordered later) from 20
///   (minute 6);
/// - cupping 41 (stored first) cups 10, cupping 40 cups 2 and 20, cupping 42 lot 77.
pub struct Genealogy {
    pub green: [GreenLot; 2],
    pub roasted: [RoastedLot; 2],
    pub blended: BlendedLot,
    pub orders: [Order; 2],
    pub cuppings: [Cupping; 3],
    pub entries: Vec<LedgerEntry>,
}

fn lot_ref(id: Uuid, kind: LotKind) -> TypedLotRef {
    TypedLotRef { id, kind }
}

pub fn genealogy<S: Store>(store: &S) -> Genealogy {
    let [here, there] = locations(store);
    let g1 = green_lot(1, 0, &here);
    let g2 = GreenLot {
        location_id: Some(there.id),
        stock: Stock::restore(kg("0"), Some(at(7))),
        ..green_lot(2, 1, &there)
    };
    let r10 = roast(10, 1, here.id, at(2), &[(1, "20"), (2, "5")]);
    let r11 = roast(11, 2, here.id, at(2), &[(77, "20")]);
    let b20 = blend(20, 1, here.id, at(3), &[(&r10, "10"), (&r11, "6.5")]);
    let (g1_ref, g2_ref) = (
        lot_ref(g1.id, LotKind::Green),
        lot_ref(g2.id, LotKind::Green),
    );
    let entries = vec![
        entry(100, g1_ref, EntryKind::Import, "60.5", "60.5", None, 0),
        entry(
            101,
            g1_ref,
            EntryKind::TransferOut,
            "-10",
            "50.5",
            Some(Reference::Lot(g2_ref)),
            1,
        ),
        entry(
            102,
            g2_ref,
            EntryKind::TransferIn,
            "10",
            "10",
            Some(Reference::Lot(g1_ref)),
            1,
        ),
        entry(
            103,
            g2_ref,
            EntryKind::TransferOut,
            "-2",
            "8",
            Some(Reference::Lot(g1_ref)),
            5,
        ),
        entry(
            104,
            g1_ref,
            EntryKind::TransferIn,
            "2",
            "52.5",
            Some(Reference::Lot(g2_ref)),
            5,
        ),
    ];
    let products = [product(60, 0, &["ESP-250", "ESP-1000"])];
    let shipment = |lot: TypedLotRef, lot_number, weight| Shipment {
        sku: Sku::parse("ESP-1000").unwrap(),
        lot,
        lot_number,
        quantity: 2,
        weight: kg(weight),
    };
    let b20_ref = lot_ref(b20.id, LotKind::Blended);
    let r10_ref = lot_ref(r10.id, LotKind::Roasted);
    let o30 = Order {
        status: OrderStatus::Completed,
        shipped_date: Some(at(4)),
        shipments: vec![
            shipment(b20_ref, b20.lot_number, "2"),
            shipment(r10_ref, r10.lot_number, "1"),
        ],
        ..order(30, 0, OrderStatus::Open, &[("ESP-1000", 2)])
    };
    let o31 = Order {
        status: OrderStatus::Completed,
        shipped_date: Some(at(6)),
        shipments: vec![shipment(b20_ref, b20.lot_number, "2")],
        ..order(31, 1, OrderStatus::Open, &[("ESP-1000", 2)])
    };
    let c40 = cupping(40, 0, CuppingState::Open, &[g2_ref, b20_ref]);
    let c41 = cupping(41, 1, CuppingState::Draft, &[r10_ref]);
    let c42 = cupping(42, 2, CuppingState::Draft, &[lot(77, LotKind::Green)]);
    write(store, |tx| {
        tx.insert_green_lot(&g1)?;
        tx.insert_green_lot(&g2)?;
        tx.insert_roasted_lot(&r10)?;
        tx.insert_roasted_lot(&r11)?;
        tx.insert_blended_lot(&b20)?;
        tx.insert_ledger_entries(&entries)?;
        tx.insert_products(&products)?;
        // Stored before they ship, as the service does.
        let unshipped = |o: &Order| Order {
            status: OrderStatus::Open,
            shipped_date: None,
            shipments: vec![],
            ..o.clone()
        };
        tx.insert_orders(&[unshipped(&o31), unshipped(&o30)])?;
        for shipped in [&o31, &o30] {
            let mut locked = tx.order_for_update(shipped.id)?.unwrap();
            locked.put(shipped.clone())?;
            tx.record_shipments(&locked)?;
        }
        tx.insert_cupping(&c41)?;
        tx.insert_cupping(&c40)?;
        tx.insert_cupping(&c42)
    });
    Genealogy {
        green: [g1, g2],
        roasted: [r10, r11],
        blended: b20,
        orders: [o30, o31],
        cuppings: [c40, c41, c42],
        entries,
    }
}

fn edge(from: TypedLotRef, to: Reference, kind: EdgeKind, weight: &str, minutes: i64) -> Edge {
    Edge {
        from,
        to,
        kind,
        weight: kg(weight),
        date: at(minutes),
    }
}

/// The edges of [`genealogy`], by name.
struct Edges {
    g1_g2: Edge,
    g1_r10: Edge,
    g2_r10: Edge,
    g77_r11: Edge,
    r10_b20: Edge,
    r11_b20: Edge,
    b20_o30: Edge,
    r10_o30: Edge,
    g2_g1: Edge,
    b20_o31: Edge,
}

fn edges(g: &Genealogy) -> Edges {
    let green = |l: &GreenLot| Reference::Lot(lot_ref(l.id, LotKind::Green));
    let roasted = |l: &RoastedLot| Reference::Lot(lot_ref(l.id, LotKind::Roasted));
    let blended = Reference::Lot(lot_ref(g.blended.id, LotKind::Blended));
    let from = |r: Reference| match r {
        Reference::Lot(l) => l,
        Reference::Order(_) => unreachable!(),
    };
    let [g1, g2] = &g.green;
    let [r10, r11] = &g.roasted;
    let [o30, o31] = &g.orders;
    Edges {
        g1_g2: edge(from(green(g1)), green(g2), EdgeKind::Transfer, "10", 1),
        g1_r10: edge(from(green(g1)), roasted(r10), EdgeKind::Roast, "20", 2),
        g2_r10: edge(from(green(g2)), roasted(r10), EdgeKind::Roast, "5", 2),
        g77_r11: edge(
            lot(77, LotKind::Green),
            roasted(r11),
            EdgeKind::Roast,
            "20",
            2,
        ),
        r10_b20: edge(from(roasted(r10)), blended, EdgeKind::Blend, "10", 3),
        r11_b20: edge(from(roasted(r11)), blended, EdgeKind::Blend, "6.5", 3),
        b20_o30: edge(
            from(blended),
            Reference::Order(o30.id),
            EdgeKind::Shipment,
            "2",
            4,
        ),
        r10_o30: edge(
            from(roasted(r10)),
            Reference::Order(o30.id),
            EdgeKind::Shipment,
            "1",
            4,
        ),
        g2_g1: edge(from(green(g2)), green(g1), EdgeKind::Transfer, "2", 5),
        b20_o31: edge(
            from(blended),
            Reference::Order(o31.id),
            EdgeKind::Shipment,
            "2",
            6,
        ),
    }
}

/// Traces answer every edge reachable, each once (weight moved back and forth does not loop),
/// oldest first; edges of one instant in the order of the roast, blend or order they belong to.
pub fn traces_reach_every_edge_once_oldest_first<S: Store>(store: S) {
    let g = genealogy(&store);
    let e = edges(&g);
    let g1 = lot_ref(g.green[0].id, LotKind::Green);
    let r11 = lot_ref(g.roasted[1].id, LotKind::Roasted);
    let b20 = lot_ref(g.blended.id, LotKind::Blended);
    assert_eq!(
        read(&store, |tx| tx.trace_edges(g1, Direction::Downstream)),
        vec![
            e.g1_g2.clone(),
            e.g1_r10.clone(),
            e.g2_r10.clone(),
            e.r10_b20.clone(),
            e.b20_o30.clone(),
            e.r10_o30.clone(),
            e.g2_g1.clone(),
            e.b20_o31.clone(),
        ]
    );
    assert_eq!(
        read(&store, |tx| tx.trace_edges(r11, Direction::Downstream)),
        vec![e.r11_b20.clone(), e.b20_o30.clone(), e.b20_o31.clone()]
    );
    assert_eq!(
        read(&store, |tx| tx.trace_edges(b20, Direction::Upstream)),
        vec![
            e.g1_g2.clone(),
            e.g1_r10.clone(),
            e.g2_r10.clone(),
            e.g77_r11.clone(),
            e.r10_b20.clone(),
            e.r11_b20.clone(),
            e.g2_g1.clone(),
        ]
    );
    assert_eq!(
        read(&store, |tx| tx.trace_edges(g1, Direction::Upstream)),
        vec![e.g1_g2.clone(), e.g2_g1.clone()]
    );
    assert_eq!(
        read(&store, |tx| tx
            .trace_edges(lot(99, LotKind::Green), Direction::Downstream)),
        vec![]
    );

    let [o30, o31] = &g.orders;
    assert_eq!(
        read(&store, |tx| tx.upstream_edges(&[Reference::Order(o30.id)])),
        vec![
            e.g1_g2.clone(),
            e.g1_r10.clone(),
            e.g2_r10.clone(),
            e.g77_r11.clone(),
            e.r10_b20.clone(),
            e.r11_b20.clone(),
            e.b20_o30.clone(),
            e.r10_o30.clone(),
            e.g2_g1.clone(),
        ]
    );
    let g2 = lot_ref(g.green[1].id, LotKind::Green);
    assert_eq!(
        read(&store, |tx| tx.upstream_edges(&[
            Reference::Lot(g2),
            Reference::Order(o31.id)
        ])),
        vec![
            e.g1_g2, e.g1_r10, e.g2_r10, e.g77_r11, e.r10_b20, e.r11_b20, e.g2_g1, e.b20_o31,
        ]
    );
    assert_eq!(read(&store, |tx| tx.upstream_edges(&[])), vec![]);
}

/// The lots, orders and cuppings a trace shows.
pub fn traced_lots_orders_and_cuppings<S: Store>(store: S) {
    let g = genealogy(&store);
    let [g1, g2] = &g.green;
    let [r10, r11] = &g.roasted;
    let b20 = &g.blended;
    let traced = |l: TypedLotRef, number, name: &str, weight, location_id, consumed_at| TracedLot {
        lot: l,
        lot_number: number,
        name: name.into(),
        weight: kg(weight),
        location_id: Some(location_id),
        consumed_at,
    };
    let mut found = read(&store, |tx| {
        tx.traced_lots(&[
            lot_ref(b20.id, LotKind::Blended),
            lot_ref(g1.id, LotKind::Green),
            // A lot is found under its own kind only, even when its own kind's table is read
            // for another lot.
            lot_ref(g1.id, LotKind::Roasted),
            lot_ref(r11.id, LotKind::Green),
            lot(99, LotKind::Green),
            lot_ref(r10.id, LotKind::Roasted),
            lot_ref(g2.id, LotKind::Green),
        ])
    });
    found.sort_by_key(|l| l.lot.id);
    assert_eq!(
        found,
        vec![
            traced(
                lot_ref(g1.id, LotKind::Green),
                1,
                "Guji 1",
                "60.5",
                g1.location_id.unwrap(),
                None
            ),
            traced(
                lot_ref(g2.id, LotKind::Green),
                2,
                "Guji 2",
                "0",
                g2.location_id.unwrap(),
                Some(at(7))
            ),
            traced(
                lot_ref(r10.id, LotKind::Roasted),
                1,
                "Roast 10",
                "16.5",
                r10.location_id,
                None
            ),
            traced(
                lot_ref(b20.id, LotKind::Blended),
                1,
                "Blend 20",
                "16.5",
                b20.location_id,
                None
            ),
        ]
    );
    assert_eq!(read(&store, |tx| tx.traced_lots(&[])), vec![]);

    // Orders by order date, each once.
    let [o30, o31] = &g.orders;
    assert_eq!(
        read(&store, |tx| tx.orders_shipped_from(&[b20.id, r10.id])),
        vec![o30.clone(), o31.clone()]
    );
    assert_eq!(
        read(&store, |tx| tx.orders_shipped_from(&[r10.id])),
        vec![o30.clone()]
    );
    assert_eq!(read(&store, |tx| tx.orders_shipped_from(&[g1.id])), vec![]);
    assert_eq!(read(&store, |tx| tx.orders_shipped_from(&[])), vec![]);

    // Cuppings by id, each once.
    let [c40, c41, c42] = &g.cuppings;
    assert_eq!(
        read(&store, |tx| tx.cuppings_of_lots(&[b20.id, r10.id, g2.id])),
        vec![c40.clone(), c41.clone()]
    );
    assert_eq!(
        read(&store, |tx| tx.cuppings_of_lots(&[Uuid::from_u128(77)])),
        vec![c42.clone()]
    );
    assert_eq!(read(&store, |tx| tx.cuppings_of_lots(&[g1.id])), vec![]);
    assert_eq!(read(&store, |tx| tx.cuppings_of_lots(&[])), vec![]);
}

/// `minutes` (see [`at`]) and `micros` microseconds.
fn micros(minutes: i64, micros: i64) -> DateTime<Utc> {
    at(minutes) + TimeDelta::microseconds(micros)
}

fn lbs(amount: &str) -> Weight {
    Weight::new(Decimal::from_str(amount).unwrap(), WeightUnit::Lbs).unwrap()
}

/// [`genealogy`] and more, at instants with microseconds:
/// - green lot 3, in pounds, at no location and used up, and green lot 1 are roasted into
///   roasted lot 12 (minute 8) at a third location, one with an external id;
/// - order 32 ships from 12 and, weighed in pounds, from blended lot 20 (minute 9);
/// - cupping 43 cups 12, 3 and lot 77 (never stored).
pub struct WiderGenealogy {
    pub genealogy: Genealogy,
    pub green: GreenLot,
    pub roasted: RoastedLot,
    pub order: Order,
    pub cupping: Cupping,
    pub location: Location,
}

pub fn wider_genealogy<S: Store>(store: &S) -> WiderGenealogy {
    let g = genealogy(store);
    let location =
        Location::new(Uuid::from_u128(1003), "Warehouse 3", Some("WH-3"), at(0)).unwrap();
    let g3 = GreenLot {
        location_id: None,
        stock: Stock::restore(lbs("0"), Some(micros(8, 1))),
        ..green_lot(3, 2, &location)
    };
    let r12 = roast(
        12,
        3,
        location.id,
        micros(8, 123_450),
        &[(3, "20"), (1, "2.5")],
    );
    let g3_ref = lot_ref(g3.id, LotKind::Green);
    let r12_ref = lot_ref(r12.id, LotKind::Roasted);
    let b20_ref = lot_ref(g.blended.id, LotKind::Blended);
    let o32 = Order {
        status: OrderStatus::Completed,
        order_date: micros(2, 999_999),
        created_at: micros(2, 999_999),
        updated_at: micros(9, 7),
        shipped_date: Some(micros(9, 7)),
        shipments: vec![
            Shipment {
                sku: Sku::parse("ESP-250").unwrap(),
                lot: r12_ref,
                lot_number: r12.lot_number,
                quantity: 4,
                weight: kg("1"),
            },
            Shipment {
                sku: Sku::parse("ESP-1000").unwrap(),
                lot: b20_ref,
                lot_number: g.blended.lot_number,
                quantity: 1,
                weight: lbs("2.2"),
            },
        ],
        ..order(32, 2, OrderStatus::Open, &[("ESP-250", 4), ("ESP-1000", 1)])
    };
    let c43 = cupping(
        43,
        3,
        CuppingState::Closed,
        &[r12_ref, g3_ref, lot(77, LotKind::Green)],
    );
    write(store, |tx| {
        tx.insert_location(&location)?;
        tx.insert_green_lot(&g3)?;
        tx.insert_roasted_lot(&r12)?;
        tx.insert_orders(&[Order {
            status: OrderStatus::Open,
            shipped_date: None,
            shipments: vec![],
            ..o32.clone()
        }])?;
        let mut locked = tx.order_for_update(o32.id)?.unwrap();
        locked.put(o32.clone())?;
        tx.record_shipments(&locked)?;
        tx.insert_cupping(&c43)
    });
    WiderGenealogy {
        genealogy: g,
        green: g3,
        roasted: r12,
        order: o32,
        cupping: c43,
        location,
    }
}

/// What a trace of each lot shows, both ways: what the in-memory store shows; read at once or
/// inside a unit of work alike; an id of no lot (an order's, a lot's never stored, none) is not
/// found.
pub fn traces_show_lots_locations_orders_and_cuppings_both_ways<S: Store>(store: S) {
    let w = wider_genealogy(&store);
    let reference = InMemoryStore::default();
    wider_genealogy(&reference);
    let (app, _) = super::fixtures::app(store.clone());
    let (expected, _) = super::fixtures::app(reference);
    let g = &w.genealogy;
    let lots = [
        g.green[0].id,
        g.green[1].id,
        w.green.id,
        g.roasted[0].id,
        g.roasted[1].id,
        w.roasted.id,
        g.blended.id,
    ];
    // Lots and locations in a fixed order: stores answer them in any.
    let parts = |tx: &mut S::Tx, lot, direction| {
        tx.trace_parts(lot, direction).map(|p| {
            p.map(|mut p| {
                p.lots.sort_by_key(|l| l.lot.id);
                p.locations.sort_by_key(|l| l.id);
                p
            })
        })
    };
    for lot in lots {
        for direction in [Direction::Downstream, Direction::Upstream] {
            let trace = app.trace_lot(lot, direction).unwrap();
            assert_eq!(
                trace,
                expected.trace_lot(lot, direction).unwrap(),
                "{lot} {direction:?}"
            );
            let at_once = store
                .read_statement(|tx| Ok(parts(tx, lot, direction)?))
                .unwrap();
            assert_eq!(
                read(&store, |tx| parts(tx, lot, direction)),
                at_once,
                "{lot} {direction:?}"
            );
        }
    }

    // Weights in the unit of the lot they leave; a lot at no location; a location's external id;
    // orders by order date; the cupped coffees of traced lots only, in their cupping's order.
    let g3 = lot_ref(w.green.id, LotKind::Green);
    let r12 = lot_ref(w.roasted.id, LotKind::Roasted);
    assert_eq!(
        app.trace_lot(w.green.id, Direction::Downstream).unwrap(),
        Trace {
            lots: vec![
                TraceLotView {
                    lot: TracedLot {
                        lot: g3,
                        lot_number: 3,
                        name: "Guji 3".into(),
                        weight: lbs("0"),
                        location_id: None,
                        consumed_at: Some(micros(8, 1)),
                    },
                    location: None,
                    depth: 0,
                },
                TraceLotView {
                    lot: TracedLot {
                        lot: r12,
                        lot_number: 3,
                        name: "Roast 12".into(),
                        weight: kg("16.5"),
                        location_id: Some(w.location.id),
                        consumed_at: None,
                    },
                    location: Some(LocationRef {
                        id: w.location.id,
                        external_id: Some("WH-3".into()),
                    }),
                    depth: 1,
                },
            ],
            edges: vec![
                Edge {
                    weight: kg("20").to_unit(WeightUnit::Lbs),
                    date: micros(8, 123_450),
                    ..edge(g3, Reference::Lot(r12), EdgeKind::Roast, "20", 8)
                },
                Edge {
                    date: micros(9, 7),
                    ..edge(
                        r12,
                        Reference::Order(w.order.id),
                        EdgeKind::Shipment,
                        "1",
                        9
                    )
                },
            ],
            orders: vec![w.order.clone()],
            cuppings: [r12, g3]
                .map(|cupped_lot| TracedCupping {
                    id: w.cupping.id(),
                    number: 43,
                    state: CuppingState::Closed,
                    cupped_lot,
                })
                .to_vec(),
        }
    );
    let b20 = lot_ref(g.blended.id, LotKind::Blended);
    let downstream = app.trace_lot(b20.id, Direction::Downstream).unwrap();
    let to_o32 = downstream
        .edges
        .iter()
        .find(|e| e.to == Reference::Order(w.order.id))
        .unwrap();
    assert_eq!(to_o32.weight, lbs("2.2").to_unit(WeightUnit::Kg));
    assert_eq!(to_o32.weight.unit(), WeightUnit::Kg);
    assert_eq!(
        downstream.orders,
        vec![g.orders[0].clone(), g.orders[1].clone(), w.order.clone()]
    );
    let upstream = app.trace_lot(w.roasted.id, Direction::Upstream).unwrap();
    let depths: Vec<(Uuid, u32)> = upstream
        .lots
        .iter()
        .map(|l| (l.lot.lot.id, l.depth))
        .collect();
    assert_eq!(
        depths,
        vec![
            (w.roasted.id, 0),
            // In the order of the roast's sources.
            (w.green.id, 1),
            (g.green[0].id, 1),
            (g.green[1].id, 2)
        ]
    );

    for unknown in [Uuid::from_u128(99), Uuid::from_u128(77), g.orders[0].id] {
        for direction in [Direction::Downstream, Direction::Upstream] {
            let err = app.trace_lot(unknown, direction).unwrap_err();
            assert_eq!(err.rule::<LotNotFound>().map(|e| e.0), Some(unknown));
            assert_eq!(read(&store, |tx| tx.trace_parts(unknown, direction)), None);
        }
    }
}

/// Every lot beside the sum of its entries: blended, green, then roasted lots, each by number.
pub fn the_audit_sums_each_lots_entries<S: Store>(store: S) {
    let g = genealogy(&store);
    let [g1, g2] = &g.green;
    let [r10, r11] = &g.roasted;
    let audit = |l: TypedLotRef, number, weight, consumed, ledger: &str| LotAudit {
        lot: l,
        lot_number: number,
        weight: kg(weight),
        consumed,
        ledger_micros: kg(ledger).micros(),
    };
    assert_eq!(
        read(&store, |tx| tx.ledger_audit()),
        vec![
            audit(
                lot_ref(g.blended.id, LotKind::Blended),
                1,
                "16.5",
                false,
                "0"
            ),
            audit(lot_ref(g1.id, LotKind::Green), 1, "60.5", false, "52.5"),
            audit(lot_ref(g2.id, LotKind::Green), 2, "0", true, "8"),
            audit(lot_ref(r10.id, LotKind::Roasted), 1, "16.5", false, "0"),
            audit(lot_ref(r11.id, LotKind::Roasted), 2, "16.5", false, "0"),
        ]
    );
    // Entries are append-only and keep their ids.
    let again = LedgerEntry {
        created_date: at(30),
        ..g.entries[0].clone()
    };
    assert!(matches!(
        write_err(&store, |tx| tx
            .insert_ledger_entries(std::slice::from_ref(&again))),
        StoreError::Duplicate(_)
    ));
    let of_g2 = LedgerFilter {
        lot_id: Some(g2.id),
        ..LedgerFilter::default()
    };
    let listed = all_pages(1, |page| {
        read(&store, |tx| tx.list_ledger_entries(&of_g2, page))
    });
    assert_eq!(listed, vec![g.entries[3].clone(), g.entries[2].clone()]);
}
