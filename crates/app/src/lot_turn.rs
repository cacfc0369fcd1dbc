//! Writes to one lot take turns in the instance before they reach the store.
//!
//! Many writes to one lot at once (a hot lot) would otherwise all wait on its row lock in
//! PostgreSQL, and a statement waiting there holds its snapshot: every version of the row that the
//! writes ahead of it leave behind stays alive until the oldest waiter ends, and each later write
//! steps over all of them in the table and in each of its indexes. A write waiting here holds no
//! connection and no snapshot, so at most one write of a lot per instance waits in the database.
//!
//! A write waits for its turn at most [`TURN_WAIT`], as long as a request waits for a database
//! connection by default; then it is refused as unavailable (503, try again) rather than hold its
//! thread longer. Lots share a turn when their ids fall in the same of [`STRIPES`] stripes: a rare
//! wait, never a different answer. A use case takes at most one turn, before its unit of work
//! begins, so turns cannot wait on each other nor on a row lock held by a waiting turn.

use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use roastery_ports::StoreError;
use uuid::Uuid;

/// Enough that 64 writes to distinct lots rarely share one (expected pairs: 64·63/2/4096 ≈ 0.5).
pub(crate) const STRIPES: usize = 4096;
/// The longest a write waits for its lot's turn.
pub(crate) const TURN_WAIT: Duration = Duration::from_secs(5);

/// The turns of the lots of one instance.
#[derive(Debug)]
pub(crate) struct LotTurns {
    stripes: Box<[Mutex<()>]>,
    wait: Duration,
}

/// A lot's turn: its write runs while this is held.
pub(crate) type Turn<'a> = MutexGuard<'a, ()>;

impl Default for LotTurns {
    fn default() -> Self {
        Self::waiting(TURN_WAIT)
    }
}

impl LotTurns {
    fn waiting(wait: Duration) -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            wait,
        }
    }

    /// Waits for `lot`'s turn; refused as unavailable after the longest wait.
    pub(crate) fn take(&self, lot: Uuid) -> Result<Turn<'_>, StoreError> {
        self.stripe(lot).try_lock_for(self.wait).ok_or_else(|| {
            StoreError::Unavailable(format!(
                "lot {lot} has more writes waiting than one instance runs in {} s",
                self.wait.as_secs()
            ))
        })
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
        let turns = LotTurns::waiting(Duration::ZERO);
        let hot = v7(1);
        let held = turns.take(hot).unwrap();
        let refused = turns.take(hot).unwrap_err();
        assert!(
            matches!(&refused, StoreError::Unavailable(m) if m.contains(&hot.to_string())),
            "the same lot waits, then is refused: {refused:?}"
        );
        let other = (2..100)
            .map(v7)
            .find(|id| stripe_of(*id) != stripe_of(hot))
            .expect("another stripe");
        assert!(turns.take(other).is_ok(), "another lot does not wait");
        drop(held);
        assert!(turns.take(hot).is_ok(), "the turn is free again");
    }

    #[test]
    fn a_turn_passes_to_the_next_writer_when_released() {
        let turns = std::sync::Arc::new(LotTurns::waiting(Duration::from_secs(30)));
        let lot = v7(7);
        let held = turns.take(lot).unwrap();
        let next = std::sync::Arc::clone(&turns);
        let waiter = std::thread::spawn(move || next.take(lot).map(drop));
        drop(held);
        assert!(waiter.join().unwrap().is_ok());
    }

    #[test]
    fn ids_of_one_millisecond_spread_over_the_stripes() {
        let stripes: HashSet<usize> = (0..1000).map(|n| stripe_of(v7(n))).collect();
        // 1,000 ids over 4,096 stripes: about 890 distinct stripes expected at random.
        assert!(stripes.len() > 800, "{} stripes", stripes.len());
        assert!(stripes.iter().all(|s| *s < STRIPES));
    }
}
