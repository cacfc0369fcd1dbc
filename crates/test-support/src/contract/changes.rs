//! Change notes: every repository write method notes what it created or changed, the same on
//! every store, so that the change feed does not depend on the database.

use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::cupping::CuppingState;
use roastery_domain::event::{Change, Changes, Resource, Subject};
use roastery_domain::location::Location;
use roastery_domain::product::Variant;
use roastery_domain::project::Project;
use roastery_domain::scope::ScopeSet;
use roastery_domain::stock::{LotKind, Stock};
use roastery_domain::webhook::{DeliveryStatus, WebhookStatus};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::*;
use roastery_ports::{Store, StoreError};
use uuid::Uuid;

use super::blend::blend;
use super::cupping::{analysis, cupping, lot};
use super::due_diligence::due_diligence;
use super::feed::event;
use super::feed::{lease, new_ids, webhook};
use super::fixtures::{at, read};
use super::green_lot::{green_lot, kg};
use super::ledger::genealogy;
use super::order::{order, product};
use super::roast::{full_details, profile, roast};

/// What `work`, run alone in a write unit of work, noted.
fn noted<S: Store>(store: &S, work: impl Fn(&mut S::Tx) -> Result<(), StoreError>) -> Changes {
    store
        .write(|tx| {
            work(tx)?;
            Ok(tx.take_changes())
        })
        .unwrap()
}

/// These notes, in this order.
fn notes(entries: &[(Resource, u128, Change)]) -> Changes {
    let mut changes = Changes::default();
    for (resource, id, change) in entries {
        changes.record(Subject::new(*resource, Uuid::from_u128(*id)), *change);
    }
    changes
}

pub fn every_write_notes_what_it_created_or_changed<S: Store>(store: S) {
    use Change::{Created, Updated};
    use Resource as R;
    let none = Changes::default();

    // Settings, sequences, accounts and tokens are not in the change feed.
    let account = Account::open(
        "client-a".into(),
        "account client-a",
        ScopeSet::parse("core.location").unwrap(),
        at(0),
    )
    .unwrap();
    let grant = AccessGrant::issue(&account, account.scopes, at(0));
    let credentials = Credentials {
        account,
        secret_hash: "$argon2id$hash".into(),
    };
    let noted_nothing = noted(&store, |tx| {
        tx.setting_or_insert("key", "value")?;
        tx.next_number("PG")?;
        tx.insert_account(&credentials)?;
        tx.insert_token("hash", &grant)?;
        tx.set_account_revoked("client-a", at(1))?;
        tx.delete_tokens_expired_before(at(1_000_000)).map(drop)
    });
    assert_eq!(noted_nothing, none);

    let here = Location::new(Uuid::from_u128(1001), "Warehouse", None, at(0)).unwrap();
    let there = Location::new(Uuid::from_u128(1002), "Shop", None, at(0)).unwrap();
    assert_eq!(
        noted(&store, |tx| {
            tx.insert_location(&here)?;
            tx.insert_location(&there)
        }),
        notes(&[(R::Location, 1001, Created), (R::Location, 1002, Created)])
    );
    let project = Project::new(Uuid::from_u128(3), "Direct trade", None, at(0)).unwrap();
    assert_eq!(
        noted(&store, |tx| tx.insert_project(&project)),
        notes(&[(R::Project, 3, Created)])
    );

    // Green lots: created, then changed; a lot created and changed in one unit of work was
    // created.
    let g1 = green_lot(1, 0, &here);
    assert_eq!(
        noted(&store, |tx| tx.insert_green_lot(&g1)),
        notes(&[(R::GreenLot, 1, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let lot = tx.green_lot_for_update(g1.id)?.unwrap();
            tx.update_green_lot(&lot)
        }),
        notes(&[(R::GreenLot, 1, Updated)])
    );
    let g2 = green_lot(2, 0, &there);
    assert_eq!(
        noted(&store, |tx| {
            tx.insert_green_lot(&g2)?;
            let lot = tx.green_lot_for_update(g2.id)?.unwrap();
            tx.update_green_lot(&lot)
        }),
        notes(&[(R::GreenLot, 2, Created)])
    );

    // Roasted lots; their details and curves are part of the lot's creation.
    let r10 = roast(10, 1, here.id, at(1), &[(1, "20")]);
    assert_eq!(
        noted(&store, |tx| tx.insert_roasted_lot(&r10)),
        notes(&[(R::RoastedLot, 10, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            tx.insert_roast_details(r10.id, &full_details("Ana"))?;
            tx.insert_roast_curves(r10.id, &[])
        }),
        none
    );
    assert_eq!(
        noted(&store, |tx| {
            let mut lot = tx.roasted_lot_for_update(r10.id)?.unwrap();
            lot.apply(|l| l.stock = Stock::restore(kg("16"), None))?;
            tx.update_roasted_lot_stock(&lot)
        }),
        notes(&[(R::RoastedLot, 10, Updated)])
    );
    assert_eq!(
        noted(&store, |tx| {
            for mut lot in tx.roasted_lots_for_update(&[r10.id])? {
                lot.apply(|l| l.stock = Stock::restore(kg("15"), None))?;
                tx.update_roasted_lot_stock(&lot)?;
            }
            Ok(())
        }),
        notes(&[(R::RoastedLot, 10, Updated)])
    );
    assert_eq!(
        noted(&store, |tx| tx.insert_profile(&profile(
            500,
            None,
            Some(r10.id)
        ))),
        notes(&[(R::Profile, 500, Created)])
    );

    // Blended lots.
    let b20 = blend(20, 1, here.id, at(2), &[(&r10, "10")]);
    assert_eq!(
        noted(&store, |tx| tx.insert_blended_lot(&b20)),
        notes(&[(R::BlendedLot, 20, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let lot = tx.blended_lot_for_update(b20.id)?.unwrap();
            tx.update_blended_lot_stock(&lot)
        }),
        notes(&[(R::BlendedLot, 20, Updated)])
    );

    // Cuppings: created, their state changed; results are rows of their own (the use case
    // notes the cupping they change).
    let c = cupping(40, 0, CuppingState::Draft, &[lot(1, LotKind::Green)]);
    assert_eq!(
        noted(&store, |tx| tx.insert_cupping(&c)),
        notes(&[(R::Cupping, 40, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let mut locked = tx.cupping_for_update(c.id())?.unwrap();
            locked
                .apply(|c| c.set_state(CuppingState::Open))?
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            tx.update_cupping_state(&locked)
        }),
        notes(&[(R::Cupping, 40, Updated)])
    );
    let opened = read(&store, |tx| tx.cupping(c.id())).unwrap();
    let results = opened
        .record_results(
            roastery_domain::cupping::ResultsDraft::parse(
                vec![roastery_domain::cupping_result::NewCuppingResult {
                    id: Uuid::from_u128(401),
                    cupped_coffee_id: c.coffees()[0].id,
                    final_score: Some(rust_decimal::Decimal::from(85)),
                    scoring_state: None,
                    evaluator: None,
                    note: None,
                    sensorial_attributes: vec![],
                }],
                at(3),
            )
            .unwrap(),
        )
        .unwrap();
    assert_eq!(
        noted(&store, |tx| tx.insert_cupping_results(&results)),
        none
    );
    assert_eq!(
        noted(&store, |tx| tx.insert_physical_analysis(&analysis(
            50,
            0,
            lot(1, LotKind::Green)
        ))),
        notes(&[(R::PhysicalAnalysis, 50, Created)])
    );

    // Products and orders, in the order given.
    let products = [product(61, 0, &["ESP-250"]), product(60, 0, &["FLT-250"])];
    assert_eq!(
        noted(&store, |tx| tx.insert_products(&products)),
        notes(&[(R::Product, 61, Created), (R::Product, 60, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let locked = tx.products_for_update(&["SHOP-60".into()])?;
            let updates: Vec<ProductUpdate> = locked
                .into_iter()
                .map(|mut product| {
                    let added = vec![Variant::parse("FLT-1000", "PACKAGE1000G").unwrap()];
                    product.apply(|p| p.variants.extend(added.clone()))?;
                    Ok(ProductUpdate { product, added })
                })
                .collect::<Result<_, StoreError>>()?;
            tx.update_products(&updates)
        }),
        notes(&[(R::Product, 60, Updated)])
    );
    let orders = [
        order(
            71,
            0,
            roastery_domain::order::OrderStatus::Open,
            &[("ESP-250", 1)],
        ),
        order(
            70,
            0,
            roastery_domain::order::OrderStatus::Open,
            &[("FLT-250", 1)],
        ),
    ];
    assert_eq!(
        noted(&store, |tx| tx.insert_orders(&orders)),
        notes(&[(R::Order, 71, Created), (R::Order, 70, Created)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let locked = tx.orders_for_update(&["ORD-70".into()])?;
            tx.update_orders(&locked)
        }),
        notes(&[(R::Order, 70, Updated)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let locked = tx.order_for_update(Uuid::from_u128(71))?.unwrap();
            tx.record_shipments(&locked)
        }),
        notes(&[(R::Order, 71, Updated)])
    );
    assert_eq!(
        noted(&store, |tx| {
            let lot = tx.green_lot_for_update(g1.id)?.unwrap();
            tx.update_green_lot(&lot)?;
            let locked = tx.order_for_update(Uuid::from_u128(70))?.unwrap();
            tx.record_shipments(&locked)?;
            tx.insert_location(
                &Location::new(Uuid::from_u128(1003), "Cellar", None, at(5)).unwrap(),
            )
        }),
        notes(&[
            (R::GreenLot, 1, Updated),
            (R::Order, 70, Updated),
            (R::Location, 1003, Created)
        ]),
        "in the order first noted"
    );

    // A due diligence is not in the change feed (the use case notes its green lot's update),
    // nor are the feed itself, webhooks and deliveries.
    assert_eq!(
        noted(&store, |tx| tx
            .put_due_diligence(g1.id, &due_diligence("CO", None, 6))),
        none
    );
    let hook = webhook(900, 6, &[]);
    assert_eq!(
        noted(&store, |tx| {
            tx.insert_webhook(&hook)?;
            tx.insert_events(&[event(901, "greenLot.updated", 6)])?;
            tx.place_events()?;
            let queued = tx.enqueue_deliveries(at(6), &mut new_ids(910))?;
            assert_eq!(queued, 1);
            let claimed = tx.claim_deliveries(at(6), at(7), lease(1), 10, 10)?;
            tx.record_attempt(&AttemptRecord {
                delivery_id: claimed[0].delivery.id,
                lease: lease(1),
                status: DeliveryStatus::Failed,
                http_status: Some(500),
                error: None,
                next_attempt_at: None,
                at: at(6),
            })?;
            tx.update_webhook_health(hook.id, 1, WebhookStatus::Disabled)?;
            tx.delete_events_before(at(100)).map(drop)
        }),
        none
    );
    assert_eq!(
        noted(&store, |tx| tx.delete_webhook(hook.id).map(drop)),
        none
    );
}

/// The ledger is not in the change feed: the lots its entries move are.
pub fn ledger_entries_note_nothing<S: Store>(store: S) {
    let g = genealogy(&store);
    let entries: Vec<_> = g
        .entries
        .iter()
        .map(|e| roastery_domain::ledger::LedgerEntry {
            id: Uuid::from_u128(e.id.as_u128() + 1000),
            ..e.clone()
        })
        .collect();
    assert_eq!(
        noted(&store, |tx| tx.insert_ledger_entries(&entries)),
        Changes::default()
    );
}
