//! Records of the change feed and webhooks that the event and webhook contracts share.

use roastery_domain::event::{Event, EventType, Subject};
use roastery_domain::webhook::{Webhook, WebhookStatus, WebhookUrl};
use roastery_ports::Store;
use roastery_ports::repo::EventRepo;
use uuid::Uuid;

use super::fixtures::{at, write};

/// Event `n` of `event_type` at `minutes`, not yet numbered.
pub fn event(n: u128, event_type: &str, minutes: i64) -> Event {
    let event_type = EventType::parse(event_type).unwrap();
    Event {
        id: Uuid::from_u128(n),
        sequence: None,
        event_type,
        subject: Subject::new(event_type.resource, Uuid::from_u128(n + 1000)),
        operation: "inventory.green.createGreenLot".into(),
        client_id: "client-a".into(),
        created_date: at(minutes),
    }
}

/// `event` numbered `sequence`.
pub fn numbered(event: &Event, sequence: i64) -> Event {
    Event {
        sequence: Some(sequence),
        ..event.clone()
    }
}

/// Stores `events` in one unit of work, then numbers them in another.
pub fn publish<S: Store>(store: &S, events: &[Event]) {
    write(store, |tx| tx.insert_events(events));
    write(store, |tx| tx.place_events());
}

/// Webhook `n`, active, made at `minutes`, wanting `types` (every type when empty).
pub fn webhook(n: u128, minutes: i64, types: &[&str]) -> Webhook {
    Webhook {
        id: Uuid::from_u128(n),
        url: WebhookUrl::parse(&format!("https://hooks.example.com/roastery/{n}")).unwrap(),
        types: types.iter().map(|t| EventType::parse(t).unwrap()).collect(),
        description: Some(format!("receiver {n}")),
        status: WebhookStatus::Active,
        created_date: at(minutes),
        secret: format!("whsec_secret{n}"),
        consecutive_failures: 0,
    }
}

/// Lease `n`.
pub fn lease(n: u128) -> Uuid {
    Uuid::from_u128(0xABC0 + n)
}

/// Ids counting up from `first`.
pub fn new_ids(first: u128) -> impl FnMut() -> Uuid {
    let mut next = first;
    move || {
        next += 1;
        Uuid::from_u128(next - 1)
    }
}
