//! The change feed's outbox: numbering, listing and pruning events.

use roastery_domain::event::{Event, EventType};
use roastery_domain::webhook::DeliveryStatus;
use roastery_ports::repo::{AttemptRecord, EventRepo, WebhookRepo};
use roastery_ports::{Store, StoreError};
use uuid::Uuid;

use super::feed::{event, lease, new_ids, numbered, publish, webhook};
use super::fixtures::{at, read, write, write_err};

pub fn events_are_numbered_in_commit_order_and_listed_oldest_first<S: Store>(store: S) {
    assert_eq!(read(&store, |tx| tx.last_sequence()), 0);
    assert_eq!(read(&store, |tx| tx.list_events(&[], 0, 10)), vec![]);

    let e1 = event(1, "greenLot.created", 0);
    let e2 = event(2, "greenLot.updated", 0);
    let e3 = event(3, "roastedLot.created", 1);
    write(&store, |tx| tx.insert_events(&[e1.clone(), e2.clone()]));
    write(&store, |tx| tx.insert_events(std::slice::from_ref(&e3)));
    write(&store, |tx| tx.place_events());
    let all = vec![numbered(&e1, 1), numbered(&e2, 2), numbered(&e3, 3)];
    assert_eq!(read(&store, |tx| tx.last_sequence()), 3);
    assert_eq!(read(&store, |tx| tx.list_events(&[], 0, 10)), all);
    write(&store, |tx| tx.place_events());
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 0, 10)),
        all,
        "placing again renumbers nothing"
    );

    // After a position, at most `limit`, of the types asked.
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 1, 1)),
        vec![numbered(&e2, 2)]
    );
    assert_eq!(read(&store, |tx| tx.list_events(&[], 3, 10)), vec![]);
    let types = [
        EventType::parse("roastedLot.created").unwrap(),
        EventType::parse("greenLot.created").unwrap(),
    ];
    assert_eq!(
        read(&store, |tx| tx.list_events(&types, 0, 10)),
        vec![numbered(&e1, 1), numbered(&e3, 3)]
    );
    assert_eq!(
        read(&store, |tx| tx.list_events(&types, 1, 10)),
        vec![numbered(&e3, 3)]
    );

    assert!(matches!(
        write_err(&store, |tx| tx.insert_events(&[event(
            1,
            "project.created",
            5
        )])),
        StoreError::Duplicate(_)
    ));
    let e4 = event(4, "project.created", 5);
    publish(&store, std::slice::from_ref(&e4));
    assert_eq!(read(&store, |tx| tx.last_sequence()), 4);
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 3, 10)),
        vec![numbered(&e4, 4)]
    );
}

/// Placing numbers every waiting event, however many more than one statement's batch of them
/// wait: gaplessly, in commit order, each unit of work's events in their order.
pub fn events_waiting_beyond_a_batch_are_all_numbered_in_order<S: Store>(store: S) {
    let all: Vec<Event> = (1..=250).map(|n| event(n, "greenLot.updated", 0)).collect();
    write(&store, |tx| tx.insert_events(&all[..120]));
    write(&store, |tx| tx.insert_events(&all[120..]));
    write(&store, |tx| tx.place_events());
    assert_eq!(read(&store, |tx| tx.last_sequence()), 250);
    let expected: Vec<Event> = all.iter().zip(1..).map(|(e, n)| numbered(e, n)).collect();
    assert_eq!(read(&store, |tx| tx.list_events(&[], 0, 300)), expected);
    let e251 = event(251, "greenLot.updated", 1);
    publish(&store, std::slice::from_ref(&e251));
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 250, 10)),
        vec![numbered(&e251, 251)]
    );
}

pub fn events_are_kept_until_every_webhook_is_done_with_them<S: Store>(store: S) {
    let hook = webhook(1, 0, &[]);
    write(&store, |tx| tx.insert_webhook(&hook));
    let (e1, e2, e3) = (
        event(1, "greenLot.created", 1),
        event(2, "greenLot.updated", 2),
        event(3, "greenLot.updated", 10),
    );
    publish(&store, &[e1.clone(), e2.clone(), e3.clone()]);
    let mut ids = new_ids(100);
    assert_eq!(
        write(&store, |tx| tx.enqueue_deliveries(at(20), &mut ids)),
        3
    );
    let claimed = write(&store, |tx| {
        tx.claim_deliveries(at(20), at(21), lease(1), 10, 10)
    });
    assert_eq!(claimed.len(), 3);
    let record = |delivery_id: Uuid, status: DeliveryStatus| AttemptRecord {
        delivery_id,
        lease: lease(1),
        status,
        http_status: Some(204),
        error: None,
        next_attempt_at: None,
        at: at(20),
    };
    let by_event = |event: &Event| {
        claimed
            .iter()
            .find(|c| c.event.id == event.id)
            .unwrap()
            .delivery
            .id
    };
    write(&store, |tx| {
        tx.record_attempt(&record(by_event(&e1), DeliveryStatus::Delivered))
    });

    // 1 was delivered; 2 is still pending; 3 is recent.
    assert_eq!(write(&store, |tx| tx.delete_events_before(at(5))), 1);
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 0, 10)),
        vec![numbered(&e2, 2), numbered(&e3, 3)]
    );
    assert_eq!(
        read(&store, |tx| tx.last_sequence()),
        3,
        "numbers are not handed out again"
    );
    let listed = |store: &S| {
        let mut events: Vec<Uuid> = read(store, |tx| {
            tx.list_deliveries(hook.id, &super::fixtures::page_of::<()>(10, None))
        })
        .items
        .into_iter()
        .map(|d| d.event_id)
        .collect();
        events.sort();
        events
    };
    assert_eq!(
        listed(&store),
        vec![e1.id, e2.id, e3.id],
        "deliveries made after the cut stay"
    );

    // Given up on counts as done; finished deliveries made before the cut go too.
    write(&store, |tx| {
        tx.record_attempt(&record(by_event(&e2), DeliveryStatus::Failed))
    });
    assert_eq!(write(&store, |tx| tx.delete_events_before(at(30))), 1);
    assert_eq!(
        read(&store, |tx| tx.list_events(&[], 0, 10)),
        vec![numbered(&e3, 3)]
    );
    assert_eq!(listed(&store), vec![e3.id], "the pending one stays");
    assert_eq!(
        read(&store, |tx| tx.pending_deliveries()),
        (1, Some(at(20)))
    );
}
