//! Webhooks and their deliveries: queued, claimed under a lease, attempts recorded.

use roastery_domain::event::Event;
use roastery_domain::webhook::{DeliveryStatus, Webhook, WebhookStatus};
use roastery_ports::repo::{AttemptRecord, ClaimedDelivery, Delivery, EventRepo, WebhookRepo};
use roastery_ports::{Store, StoreError};
use uuid::Uuid;

use super::feed::{event, lease, new_ids, numbered, publish, webhook};
use super::fixtures::{all_pages, at, page_of, read, write, write_err};

pub fn webhooks_by_id_newest_first_pages_health_and_deletion<S: Store>(store: S) {
    // Two share an instant: the id breaks the tie.
    let hooks = [
        webhook(1, 0, &[]),
        webhook(2, 5, &["greenLot.created"]),
        webhook(3, 5, &["greenLot.created", "roastedLot.updated"]),
        Webhook {
            status: WebhookStatus::Disabled,
            consecutive_failures: 7,
            description: None,
            ..webhook(4, 9, &[])
        },
    ];
    write(&store, |tx| {
        hooks.iter().try_for_each(|w| tx.insert_webhook(w))
    });
    assert!(matches!(
        write_err(&store, |tx| tx.insert_webhook(&webhook(1, 10, &[]))),
        StoreError::Duplicate(_)
    ));
    let [w1, w2, w3, w4] = hooks;
    assert_eq!(read(&store, |tx| tx.webhook(w3.id)), Some(w3.clone()));
    assert_eq!(read(&store, |tx| tx.webhook(w4.id)), Some(w4.clone()));
    assert_eq!(read(&store, |tx| tx.webhook(Uuid::from_u128(99))), None);
    let listed = all_pages(3, |page| read(&store, |tx| tx.list_webhooks(page)));
    assert_eq!(listed, vec![w4.clone(), w3.clone(), w2.clone(), w1.clone()]);
    let first = read(&store, |tx| tx.list_webhooks(&page_of::<Webhook>(4, None)));
    assert_eq!(
        (first.items.len(), first.next),
        (4, None),
        "an exact page has no next"
    );

    write(&store, |tx| {
        tx.update_webhook_health(w2.id, 3, WebhookStatus::Disabled)
    });
    write(&store, |tx| {
        tx.update_webhook_health(Uuid::from_u128(99), 1, WebhookStatus::Active)
    });
    assert_eq!(
        read(&store, |tx| tx.webhook(w2.id)),
        Some(Webhook {
            consecutive_failures: 3,
            status: WebhookStatus::Disabled,
            ..w2.clone()
        })
    );

    assert!(write(&store, |tx| tx.delete_webhook(w1.id)));
    assert!(!write(&store, |tx| tx.delete_webhook(w1.id)));
    assert_eq!(read(&store, |tx| tx.webhook(w1.id)), None);
    let listed = all_pages(2, |page| read(&store, |tx| tx.list_webhooks(page)));
    assert_eq!(listed.len(), 3);
}

fn pending(id: u128, hook: &Webhook, event: &Event, minutes: i64) -> Delivery {
    Delivery {
        id: Uuid::from_u128(id),
        webhook_id: hook.id,
        event_id: event.id,
        attempt: 0,
        status: DeliveryStatus::Pending,
        http_status: None,
        error: None,
        created_date: at(minutes),
    }
}

fn claim(delivery: &Delivery, hook: &Webhook, event: &Event, held_by: Uuid) -> ClaimedDelivery {
    ClaimedDelivery {
        delivery: Delivery {
            attempt: delivery.attempt + 1,
            ..delivery.clone()
        },
        webhook: hook.clone(),
        event: event.clone(),
        lease: held_by,
    }
}

fn deliveries<S: Store>(store: &S, hook: &Webhook) -> Vec<Delivery> {
    all_pages(1, |page| {
        read(store, |tx| tx.list_deliveries(hook.id, page))
    })
}

pub fn deliveries_are_queued_claimed_and_recorded<S: Store>(store: S) {
    // Published before any webhook: never delivered.
    let e1 = event(1, "greenLot.created", 0);
    publish(&store, std::slice::from_ref(&e1));
    // Stored out of id order; 3 is disabled.
    let (every, green, off) = (
        webhook(1, 1, &[]),
        webhook(2, 1, &["greenLot.created"]),
        Webhook {
            status: WebhookStatus::Disabled,
            ..webhook(3, 1, &[])
        },
    );
    write(&store, |tx| {
        tx.insert_webhook(&green)?;
        tx.insert_webhook(&off)?;
        tx.insert_webhook(&every)
    });
    let e2 = event(2, "greenLot.created", 2);
    let e3 = event(3, "roastedLot.created", 3);
    publish(&store, &[e2.clone(), e3.clone()]);
    let (e2, e3) = (numbered(&e2, 2), numbered(&e3, 3));

    // Webhook by webhook in id order, each one's events oldest first.
    let mut ids = new_ids(100);
    assert_eq!(
        write(&store, |tx| tx.enqueue_deliveries(at(10), &mut ids)),
        3
    );
    assert_eq!(
        write(&store, |tx| tx.enqueue_deliveries(at(11), &mut ids)),
        0
    );
    let (d100, d101, d102) = (
        pending(100, &every, &e2, 10),
        pending(101, &every, &e3, 10),
        pending(102, &green, &e2, 10),
    );
    assert_eq!(deliveries(&store, &every), vec![d101.clone(), d100.clone()]);
    assert_eq!(deliveries(&store, &green), vec![d102.clone()]);
    assert_eq!(deliveries(&store, &off), vec![]);
    assert_eq!(
        read(&store, |tx| tx.pending_deliveries()),
        (3, Some(at(10)))
    );

    // Due first, then by id; a claim holds until its end, inclusive.
    assert_eq!(
        write(&store, |tx| tx.claim_deliveries(
            at(10),
            at(15),
            lease(1),
            2,
            10
        )),
        vec![
            claim(&d100, &every, &e2, lease(1)),
            claim(&d101, &every, &e3, lease(1))
        ]
    );
    assert_eq!(
        write(&store, |tx| tx.claim_deliveries(
            at(12),
            at(17),
            lease(2),
            10,
            10
        )),
        vec![claim(&d102, &green, &e2, lease(2))]
    );
    assert_eq!(
        write(&store, |tx| tx.claim_deliveries(
            at(15),
            at(20),
            lease(3),
            10,
            10
        )),
        vec![]
    );

    // Only the claim's holder records its outcome.
    let record = |id: u128, held_by: Uuid, status: DeliveryStatus| AttemptRecord {
        delivery_id: Uuid::from_u128(id),
        lease: held_by,
        status,
        http_status: Some(204),
        error: None,
        next_attempt_at: None,
        at: at(16),
    };
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&record(
            100,
            lease(2),
            DeliveryStatus::Delivered
        ))),
        None
    );
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&record(
            100,
            lease(1),
            DeliveryStatus::Delivered
        ))),
        Some(every.clone())
    );
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&record(
            100,
            lease(1),
            DeliveryStatus::Failed
        ))),
        None,
        "a recorded attempt releases the claim"
    );
    let retry = AttemptRecord {
        http_status: Some(503),
        error: Some("the receiver answered 503".into()),
        next_attempt_at: Some(at(30)),
        ..record(101, lease(1), DeliveryStatus::Pending)
    };
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&retry)),
        Some(every.clone())
    );
    let (d100, d101) = (
        Delivery {
            attempt: 1,
            status: DeliveryStatus::Delivered,
            http_status: Some(204),
            ..d100
        },
        Delivery {
            attempt: 1,
            http_status: Some(503),
            error: Some("the receiver answered 503".into()),
            ..d101
        },
    );
    assert_eq!(deliveries(&store, &every), vec![d101.clone(), d100.clone()]);
    assert_eq!(
        read(&store, |tx| tx.pending_deliveries()),
        (2, Some(at(10)))
    );

    // 101 waits until its next attempt; 102's claim has run out.
    let d102 = Delivery { attempt: 1, ..d102 };
    assert_eq!(
        write(&store, |tx| tx.claim_deliveries(
            at(20),
            at(25),
            lease(3),
            10,
            10
        )),
        vec![claim(&d102, &green, &e2, lease(3))]
    );
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&record(
            102,
            lease(2),
            DeliveryStatus::Failed
        ))),
        None,
        "an expired claim's holder records nothing"
    );
    let failed = AttemptRecord {
        http_status: None,
        error: Some("connection refused".into()),
        ..record(102, lease(3), DeliveryStatus::Failed)
    };
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&failed)),
        Some(green.clone())
    );
    assert_eq!(
        deliveries(&store, &green),
        vec![Delivery {
            attempt: 2,
            status: DeliveryStatus::Failed,
            error: Some("connection refused".into()),
            ..d102
        }]
    );

    // A disabled webhook's deliveries are neither claimed nor queued.
    write(&store, |tx| {
        tx.update_webhook_health(every.id, 5, WebhookStatus::Disabled)
    });
    assert_eq!(
        write(&store, |tx| tx.claim_deliveries(
            at(40),
            at(45),
            lease(4),
            10,
            10
        )),
        vec![]
    );
    let e4 = event(4, "greenLot.created", 40);
    publish(&store, std::slice::from_ref(&e4));
    assert_eq!(
        write(&store, |tx| tx.enqueue_deliveries(at(40), &mut ids)),
        1
    );
    assert_eq!(deliveries(&store, &green)[0], pending(103, &green, &e4, 40));
    assert_eq!(
        read(&store, |tx| tx.pending_deliveries()),
        (2, Some(at(10)))
    );

    // Deleting a webhook deletes its deliveries.
    assert!(write(&store, |tx| tx.delete_webhook(every.id)));
    assert_eq!(deliveries(&store, &every), vec![]);
    assert_eq!(
        read(&store, |tx| tx.pending_deliveries()),
        (1, Some(at(40)))
    );
    assert_eq!(read(&store, |tx| tx.last_sequence()), 4);
}

pub fn a_webhook_holds_at_most_its_share_of_claims<S: Store>(store: S) {
    let (slow, fast) = (webhook(1, 0, &[]), webhook(2, 0, &[]));
    write(&store, |tx| {
        tx.insert_webhook(&slow)?;
        tx.insert_webhook(&fast)
    });
    let events: Vec<Event> = (1..=5)
        .map(|n| event(n, "greenLot.created", i64::try_from(n).unwrap()))
        .collect();
    publish(&store, &events);
    let mut ids = new_ids(200);
    assert_eq!(
        write(&store, |tx| tx.enqueue_deliveries(at(10), &mut ids)),
        10
    );
    let per_hook = |claimed: &[ClaimedDelivery]| {
        let count = |hook: &Webhook| claimed.iter().filter(|c| c.webhook.id == hook.id).count();
        (count(&slow), count(&fast))
    };

    // Two each, whatever the limit leaves; then none while both hold two.
    let first = write(&store, |tx| {
        tx.claim_deliveries(at(10), at(15), lease(1), 10, 2)
    });
    assert_eq!(per_hook(&first), (2, 2));
    let none = write(&store, |tx| {
        tx.claim_deliveries(at(11), at(16), lease(2), 10, 2)
    });
    assert_eq!(
        per_hook(&none),
        (0, 0),
        "claims of another unit of work count"
    );

    // One of the fast receiver's answered: only it gets a new claim.
    let done = first.iter().find(|c| c.webhook.id == fast.id).unwrap();
    let answered = AttemptRecord {
        delivery_id: done.delivery.id,
        lease: lease(1),
        status: DeliveryStatus::Delivered,
        http_status: Some(204),
        error: None,
        next_attempt_at: None,
        at: at(12),
    };
    assert_eq!(
        write(&store, |tx| tx.record_attempt(&answered)),
        Some(fast.clone())
    );
    let next = write(&store, |tx| {
        tx.claim_deliveries(at(12), at(17), lease(3), 10, 2)
    });
    assert_eq!(per_hook(&next), (0, 1));

    // Expired claims hold nothing; the limit still bounds the whole claim.
    let later = write(&store, |tx| {
        tx.claim_deliveries(at(18), at(23), lease(4), 3, 2)
    });
    assert_eq!(later.len(), 3);
    let (s, f) = per_hook(&later);
    assert!(s <= 2 && f <= 2, "{s} {f}");
}
