//! Writes to one lot take turns in the instance before they reach the store.
//!
//! Many writes to one lot at once (a hot lot) would otherwise all wait on its row lock in
//! PostgreSQL, and a statement waiting there holds its snapshot: every version of the row that the
//! writes ahead of it leave behind stays alive until the oldest waiter ends, and each later write
//! steps over all of them in the table and in each of its indexes. A write waiting here holds no
//! connection and no snapshot, so at most one write of a lot per instance waits in the database.
//!
//! Lots share a turn when their ids fall in the same of [`STRIPES`] stripes: a rare wait, never a
//! different answer. A use case takes at most one turn, before its unit of work begins, so turns
//! cannot wait on each other nor on a row lock held by a waiting turn.

use std::sync::{Mutex, MutexGuard, PoisonError};

use uuid::Uuid;

/// Enough that 64 writes to distinct lots rarely share one (expected pairs: 64·63/2/4096 ≈ 0.5).
pub(crate) const STRIPES: usize = 4096;

/// The turns of the lots of one instance.
#[derive(Debug)]
pub(crate) struct LotTurns {
    stripes: Box<[Mutex<()>]>,
}

/// A lot's turn: its write runs while this is held.
pub(crate) type Turn<'a> = MutexGuard<'a, ()>;

impl Default for LotTurns {
    fn default() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl LotTurns {
    /// Waits for `lot`'s turn.
    pub(crate) fn take(&self, lot: Uuid) -> Turn<'_> {
        // A poisoned turn only means a write panicked; the store rolled it back.
        self.stripe(lot)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `lot`'s turn if no other write holds it.
    #[cfg(test)]
    fn try_take(&self, lot: Uuid) -> Option<Turn<'_>> {
        self.stripe(lot).try_lock().ok()
    }

    fn stripe(&self, lot: Uuid) -> &Mutex<()> {
        // `stripe_of` is below `STRIPES`, the length of `stripes`: the spare is never taken,
        // and would only make more lots share one turn.
        static SPARE: Mutex<()> = Mutex::new(());
        self.stripes.get(stripe_of(lot)).unwrap_or(&SPARE)
    }
}

/// Ids made at the same millisecond share their high bits (UUID v7), so both halves are mixed
/// before the stripe is taken from the product's high bits.
fn stripe_of(lot: Uuid) -> usize {
    let (high, low) = lot.as_u64_pair();
    let mixed = (high ^ low).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    usize::try_from(mixed >> (64 - STRIPES.trailing_zeros())).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn v7(n: u16) -> Uuid {
        // Same millisecond, counter in the random bits: the ids a bulk import makes.
        Uuid::from_u128((0x0193_0000_0000_7000_8000_0000_0000_0000u128) | u128::from(n) << 64)
    }

    #[test]
    fn a_lot_waits_for_its_own_turn_only() {
        let turns = LotTurns::default();
        let hot = v7(1);
        let held = turns.take(hot);
        assert!(turns.try_take(hot).is_none(), "the same lot waits");
        let other = (2..100)
            .map(v7)
            .find(|id| stripe_of(*id) != stripe_of(hot))
            .expect("another stripe");
        assert!(turns.try_take(other).is_some(), "another lot does not");
        drop(held);
        assert!(turns.try_take(hot).is_some(), "the turn is free again");
    }

    #[test]
    fn ids_of_one_millisecond_spread_over_the_stripes() {
        let stripes: HashSet<usize> = (0..1000).map(|n| stripe_of(v7(n))).collect();
        // 1,000 ids over 4,096 stripes: about 890 distinct stripes expected at random.
        assert!(stripes.len() > 800, "{} stripes", stripes.len());
        assert!(stripes.iter().all(|s| *s < STRIPES));
    }

    #[test]
    fn a_poisoned_turn_is_taken_again() {
        let turns = std::sync::Arc::new(LotTurns::default());
        let lot = v7(7);
        let panicking = std::sync::Arc::clone(&turns);
        let result = std::thread::spawn(move || {
            let _turn = panicking.take(lot);
            panic!("a write panicked");
        })
        .join();
        assert!(result.is_err());
        drop(turns.take(lot));
    }
}
