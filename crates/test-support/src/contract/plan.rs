//! Planning data, recipes and the reads of planning and costs (api-decisions §15).

use std::collections::BTreeMap;

use roastery_domain::cost::{Basis, CostLot};
use roastery_domain::ledger::{EntryKind, Reference};
use roastery_domain::order::OrderStatus;
use roastery_domain::planning::{BatchSize, ProfilePlanning, Recipe, RecipeComponent};
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::{LotKind, Stock, TypedLotRef};
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::Store;
use roastery_ports::repo::{
    GreenLotRepo, OrderRepo, PlanRepo, ProductRepo, ProfileRepo, RoastRepo, TraceRepo,
};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::fixtures::{at, read, write};
use super::green_lot::{green_lot, kg, locations};
use super::ledger::entry;
use super::order::{order, product};
use super::roast::{profile, roast};

pub fn planning_data_and_recipes_are_replaced_and_read_back<S: Store>(store: S) {
    let (a, b) = (profile(500, None, None), profile(501, None, None));
    let p = product(60, 0, &["ESP-250"]);
    write(&store, |tx| {
        tx.insert_profile(&a)?;
        tx.insert_profile(&b)?;
        tx.insert_products(std::slice::from_ref(&p))
    });
    let set = ProfilePlanning {
        expected_loss: Some(Decimal::new(1425, 2)),
        batch_size: Some(BatchSize {
            min: kg("5"),
            max: Weight::new(Decimal::from(30), WeightUnit::Lbs).unwrap(),
        }),
    };
    write(&store, |tx| tx.put_profile_planning(a.id, &set, at(1)));
    assert_eq!(
        read(&store, |tx| tx.profile_plannings(&[a.id, b.id])),
        vec![(a.id, set)]
    );
    // Replaced whole: nothing set is nothing stored.
    write(&store, |tx| {
        tx.put_profile_planning(a.id, &ProfilePlanning::default(), at(2))
    });
    assert_eq!(
        read(&store, |tx| tx.profile_plannings(&[a.id])),
        vec![(a.id, ProfilePlanning::default())]
    );
    let recipe = Recipe {
        components: vec![
            RecipeComponent {
                profile_id: b.id,
                percentage: Decimal::new(6667, 2),
            },
            RecipeComponent {
                profile_id: a.id,
                percentage: Decimal::new(3333, 2),
            },
        ],
    };
    assert_eq!(read(&store, |tx| tx.recipes_of(&[p.id])), vec![]);
    write(&store, |tx| tx.put_recipe(p.id, Some(&recipe), at(3)));
    assert_eq!(
        read(&store, |tx| tx.recipes_of(&[p.id, Uuid::from_u128(9)])),
        vec![(p.id, recipe.clone())]
    );
    let one = Recipe {
        components: vec![RecipeComponent {
            profile_id: a.id,
            percentage: Decimal::ONE_HUNDRED,
        }],
    };
    write(&store, |tx| tx.put_recipe(p.id, Some(&one), at(4)));
    assert_eq!(read(&store, |tx| tx.recipes_of(&[p.id])), vec![(p.id, one)]);
    write(&store, |tx| tx.put_recipe(p.id, None, at(5)));
    assert_eq!(read(&store, |tx| tx.recipes_of(&[p.id])), vec![]);
    assert_eq!(read(&store, |tx| tx.product_by_id(p.id)), Some(p));
    assert_eq!(
        read(&store, |tx| tx.product_by_id(Uuid::from_u128(9))),
        None
    );
}

/// Roasted lot `n` of profile `profile`, roasted `minutes` after the fixed instant, 16.5 kg out
/// of `used` kg of green.
fn roasted_of(
    n: u128,
    number: i64,
    here: Uuid,
    minutes: i64,
    used: &str,
    profile: Uuid,
) -> RoastedLot {
    RoastedLot {
        profile_id: Some(profile),
        ..roast(n, number, here, at(minutes), &[(77, used)])
    }
}

pub fn recent_roasts_are_the_last_of_each_profile_and_on_hand_the_unconsumed<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let (a, b) = (profile(500, None, None), profile(501, None, None));
    let lots = [
        roasted_of(10, 1, here.id, 0, "20", a.id),
        roasted_of(11, 2, here.id, 5, "18", a.id),
        roasted_of(12, 3, here.id, 3, "22", a.id),
        roasted_of(13, 4, here.id, 1, "30", b.id),
        RoastedLot {
            stock: Stock::restore(kg("0"), Some(at(9))),
            ..roasted_of(14, 5, here.id, 2, "25", b.id)
        },
    ];
    write(&store, |tx| {
        tx.insert_profile(&a)?;
        tx.insert_profile(&b)?;
        lots.iter().try_for_each(|l| tx.insert_roasted_lot(l))
    });
    let mut recent: Vec<(Uuid, Vec<Weight>)> =
        read(&store, |tx| tx.recent_roasts(&[a.id, b.id], 2))
            .into_iter()
            .map(|(p, r)| {
                assert_eq!(r.roasted, kg("16.5"));
                (p, r.used_green)
            })
            .collect();
    recent.sort_by_key(|(p, used)| (*p, used[0].micros()));
    // a: the two newest (minutes 5 and 3: 18 and 22 kg); b: both, the consumed one too.
    assert_eq!(
        recent,
        vec![
            (a.id, vec![kg("18")]),
            (a.id, vec![kg("22")]),
            (b.id, vec![kg("25")]),
            (b.id, vec![kg("30")]),
        ]
    );
    assert_eq!(
        read(&store, |tx| tx.recent_roasts(&[Uuid::from_u128(9)], 10)),
        vec![]
    );
    let mut on_hand = read(&store, |tx| tx.roasted_on_hand(&[a.id, b.id]));
    on_hand.sort_by_key(|(p, w)| (*p, w.micros()));
    assert_eq!(on_hand.len(), 4, "the consumed lot is not on hand");
    assert!(on_hand.iter().all(|(_, w)| *w == kg("16.5")));
    assert_eq!(on_hand.iter().filter(|(p, _)| *p == b.id).count(), 1);
}

pub fn open_demand_sums_the_bags_of_open_orders_up_to_a_date<S: Store>(store: S) {
    let products = [
        product(60, 0, &["ESP-250", "ESP-1000"]),
        product(61, 0, &["FLT-250"]),
    ];
    let orders = [
        order(1, 10, OrderStatus::Open, &[("ESP-250", 4), ("FLT-250", 1)]),
        order(2, 20, OrderStatus::InProgress, &[("ESP-250", 6)]),
        order(3, 30, OrderStatus::Open, &[("ESP-1000", 2)]),
        order(4, 15, OrderStatus::Cancelled, &[("ESP-250", 100)]),
        order(5, 15, OrderStatus::Completed, &[("FLT-250", 100)]),
    ];
    write(&store, |tx| {
        tx.insert_products(&products)?;
        tx.insert_orders(&orders)
    });
    let demand = |until| -> BTreeMap<String, (i64, Uuid, String)> {
        read(&store, |tx| tx.open_demand(until))
            .into_iter()
            .map(|d| {
                (
                    d.sku.to_string(),
                    (d.bags, d.product_id, d.package_size.to_string()),
                )
            })
            .collect()
    };
    let all = demand(None);
    assert_eq!(all.len(), 3);
    assert_eq!(all["ESP-250"], (10, products[0].id, "PACKAGE250G".into()));
    assert_eq!(all["FLT-250"].0, 1);
    assert_eq!(all["FLT-250"].1, products[1].id);
    assert_eq!(all["ESP-1000"].0, 2);
    // Up to and including the instant.
    let early = demand(Some(at(20)));
    assert_eq!(early.len(), 2);
    assert_eq!(early["ESP-250"].0, 10);
    assert_eq!(demand(Some(at(19)))["ESP-250"].0, 4);
    assert!(demand(Some(at(0))).is_empty());
}

pub fn green_lot_use_sums_roasts_and_shipments_since_an_instant<S: Store>(store: S) {
    let [here, there] = locations(&store);
    let g1 = green_lot(1, 0, &here);
    let g2 = green_lot(2, 0, &there);
    let g3 = roastery_domain::green_lot::GreenLot {
        stock: Stock::restore(kg("0"), Some(at(9))),
        ..green_lot(3, 0, &here)
    };
    let lot = |g: &roastery_domain::green_lot::GreenLot| TypedLotRef {
        id: g.id,
        kind: LotKind::Green,
    };
    let other = Reference::Lot(TypedLotRef {
        id: Uuid::from_u128(99),
        kind: LotKind::Roasted,
    });
    let entries = vec![
        entry(100, lot(&g1), EntryKind::Import, "60.5", "60.5", None, 0),
        entry(
            101,
            lot(&g1),
            EntryKind::RoastInput,
            "-10",
            "50.5",
            Some(other),
            10,
        ),
        entry(
            102,
            lot(&g1),
            EntryKind::Shipment,
            "-0.5",
            "50",
            Some(Reference::Order(Uuid::from_u128(7))),
            20,
        ),
        entry(
            103,
            lot(&g1),
            EntryKind::RoastInput,
            "-20",
            "30",
            Some(other),
            1,
        ),
        entry(104, lot(&g1), EntryKind::SetWeight, "-5", "25", None, 30),
        entry(
            105,
            lot(&g2),
            EntryKind::RoastInput,
            "-3",
            "57.5",
            Some(other),
            30,
        ),
    ];
    write(&store, |tx| {
        [&g1, &g2, &g3]
            .iter()
            .try_for_each(|g| tx.insert_green_lot(g))?;
        tx.insert_ledger_entries(&entries)
    });
    let mut all = read(&store, |tx| tx.green_lot_use(at(5), None));
    all.sort_by_key(|u| u.lot_number);
    let used: Vec<(i64, i64)> = all.iter().map(|u| (u.lot_number, u.used_micros)).collect();
    // g1: 10 + 0.5 since minute 5 (not the earlier 20, not the set weight); g3 is consumed.
    assert_eq!(used, vec![(1, 10_500_000), (2, 3_000_000)]);
    assert_eq!(all[0].weight, g1.stock.weight());
    let here_only = read(&store, |tx| tx.green_lot_use(at(5), Some(here.id)));
    assert_eq!(here_only.len(), 1);
    assert_eq!(here_only[0].id, g1.id);
}

pub fn cost_lots_answer_prices_and_weights_at_creation<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let g1 = roastery_domain::green_lot::GreenLot {
        price: None,
        ..green_lot(1, 0, &here)
    };
    let g2 = green_lot(2, 0, &here);
    let r = RoastedLot {
        stock: Stock::restore(kg("4"), None),
        ..roast(10, 1, here.id, at(1), &[(2, "20")])
    };
    write(&store, |tx| {
        tx.insert_green_lot(&g1)?;
        tx.insert_green_lot(&g2)?;
        tx.insert_roasted_lot(&r)
    });
    let refs = [
        TypedLotRef {
            id: g1.id,
            kind: LotKind::Green,
        },
        TypedLotRef {
            id: g2.id,
            kind: LotKind::Green,
        },
        TypedLotRef {
            id: r.id,
            kind: LotKind::Roasted,
        },
        // The same id under another kind is not that lot.
        TypedLotRef {
            id: r.id,
            kind: LotKind::Blended,
        },
        TypedLotRef {
            id: Uuid::from_u128(9),
            kind: LotKind::Green,
        },
    ];
    let mut found = read(&store, |tx| tx.cost_lots(&refs));
    found.sort_by_key(|l| l.lot.id);
    assert_eq!(
        found,
        vec![
            CostLot {
                lot: refs[0],
                lot_number: 1,
                weight: kg("60.5"),
                basis: Basis::Green { price: None }
            },
            CostLot {
                lot: refs[1],
                lot_number: 2,
                weight: kg("60.5"),
                basis: Basis::Green { price: g2.price }
            },
            CostLot {
                lot: refs[2],
                lot_number: 1,
                weight: kg("4"),
                basis: Basis::Roasted {
                    created: kg("16.5")
                }
            },
        ]
    );
}
