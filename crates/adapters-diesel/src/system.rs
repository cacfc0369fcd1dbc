//! Settings and gapless number sequences.

use diesel::prelude::*;
use roastery_ports::repo::*;

use crate::error::OrStoreError;
use crate::store::DieselTx;

use crate::schema::*;

impl SystemRepo for DieselTx {
    fn ping(&mut self) -> StoreResult<()> {
        diesel::sql_query("SELECT 1")
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn setting_or_insert(&mut self, name: &str, value: &str) -> StoreResult<String> {
        // Insert unless present, then read what won: instances starting together on a fresh
        // database each offer a value and all read the one that was stored. (On PostgreSQL the
        // insert waits for a concurrent one to commit, and the read that follows sees it.)
        on_backend!(self.conn()?, |c| diesel::insert_into(settings::table)
            .values((settings::name.eq(name), settings::value.eq(value)))
            .on_conflict_do_nothing()
            .execute(c))
        .store()?;
        settings::table
            .find(name)
            .select(settings::value)
            .first(self.conn()?)
            .store()
    }

    fn put_setting(&mut self, name: &str, value: &str) -> StoreResult<()> {
        on_backend!(self.conn()?, |c| diesel::insert_into(settings::table)
            .values((settings::name.eq(name), settings::value.eq(value)))
            .on_conflict(settings::name)
            .do_update()
            .set(settings::value.eq(value))
            .execute(c))
        .store()
        .map(drop)
    }

    fn next_number(&mut self, sequence: &str) -> StoreResult<i64> {
        // One statement takes the next number and reads it back (and locks the counter's row
        // on PostgreSQL until the transaction ends, which keeps the numbers gapless).
        let next: Option<i64> = on_backend!(self.conn()?, |c| diesel::update(
            sequences::table.find(sequence)
        )
        .set(sequences::last_value.eq(sequences::last_value + 1))
        .returning(sequences::last_value)
        .get_result(c)
        .optional())
        .store()?;
        if let Some(next) = next {
            return Ok(next);
        }
        diesel::insert_into(sequences::table)
            .values((sequences::name.eq(sequence), sequences::last_value.eq(1)))
            .execute(self.conn()?)
            .store()
            .map_err(crate::error::concurrent_insert)?;
        Ok(1)
    }
}

impl DieselTx {
    /// The last value of counter `name` (0 before its first use).
    pub(crate) fn counter(&mut self, name: &str) -> StoreResult<i64> {
        Ok(sequences::table
            .find(name)
            .select(sequences::last_value)
            .first(self.conn()?)
            .optional()
            .store()?
            .unwrap_or(0))
    }

    /// Sets counter `name` to `value`, creating it when needed.
    pub(crate) fn set_counter(&mut self, name: &str, value: i64) -> StoreResult<()> {
        let updated = diesel::update(sequences::table.find(name))
            .set(sequences::last_value.eq(value))
            .execute(self.conn()?)
            .store()?;
        if updated == 0 {
            diesel::insert_into(sequences::table)
                .values((sequences::name.eq(name), sequences::last_value.eq(value)))
                .execute(self.conn()?)
                .store()?;
        }
        Ok(())
    }
}
