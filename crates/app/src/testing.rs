//! The use cases over a fresh in-memory store, for tests.

use std::sync::Arc;

use roastery_ports::testing::{InMemoryStore, ManualClock, SequentialIds};

use crate::Roastery;

/// A [`Roastery`] over a fresh in-memory store, and its clock.
pub fn memory_roastery() -> (Roastery<InMemoryStore>, ManualClock) {
    let clock = ManualClock::default();
    let app = Roastery::new(
        InMemoryStore::default(),
        Arc::new(clock.clone()),
        Arc::new(SequentialIds::default()),
    );
    (app, clock)
}
