//! Settings and number sequences.

use super::store::MemTx;
use crate::repo::*;

impl SystemRepo for MemTx {
    fn ping(&mut self) -> StoreResult<()> {
        Ok(())
    }

    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String> {
        Ok(self
            .data
            .system
            .settings
            .entry(name.to_owned())
            .or_insert_with(|| value.to_owned())
            .clone())
    }

    fn put_setting(&mut self, name: &str, value: &str) -> StoreResult<()> {
        self.data
            .system
            .settings
            .insert(name.to_owned(), value.to_owned());
        Ok(())
    }

    fn next_number(&mut self, sequence: &str) -> StoreResult<i64> {
        let n = self
            .data
            .system
            .sequences
            .entry(sequence.to_owned())
            .or_insert(0);
        *n += 1;
        Ok(*n)
    }
}
