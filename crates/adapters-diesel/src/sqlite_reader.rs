//! SQLite read connections kept per thread, one per open store: a listing page is one statement
//! on a connection the calling thread already holds.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use roastery_ports::StoreError;

use crate::connection::{AnyConnection, Manager};
use crate::error::OrStoreError;

thread_local! {
    /// SQLite read connections of this thread, one per open store (its identity held weakly,
    /// so the connection of a store that is gone is closed at the next read).
    static SQLITE_READERS: RefCell<Vec<(Weak<()>, AnyConnection)>> = const { RefCell::new(Vec::new()) };
}

/// This thread's read connection to the store `identity` names: taken out while in use (a read
/// run inside another gets its own), given back by [`give_back_sqlite_reader`].
pub(crate) fn take_sqlite_reader(
    identity: &Arc<()>,
    manager: &Manager,
) -> Result<AnyConnection, StoreError> {
    let found = SQLITE_READERS.with(|readers| {
        let mut readers = readers.borrow_mut();
        readers.retain(|(store, _)| store.strong_count() > 0);
        readers
            .iter()
            .position(|(store, _)| std::ptr::eq(store.as_ptr(), Arc::as_ptr(identity)))
            .map(|at| readers.swap_remove(at).1)
    });
    if let Some(conn) = found {
        return Ok(conn);
    }
    use diesel::r2d2::ManageConnection;
    let mut conn = manager
        .connect()
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let AnyConnection::Sqlite(c) = &mut conn else {
        return Err(StoreError::Internal(
            "a SQLite reader asked of another database".into(),
        ));
    };
    // This connection only reads: a read that tried to write would be refused.
    for pragma in crate::connection::SQLITE_PRAGMAS
        .iter()
        .chain(&["PRAGMA query_only = ON;"])
    {
        diesel::connection::SimpleConnection::batch_execute(c, pragma).store()?;
    }
    Ok(conn)
}

pub(crate) fn give_back_sqlite_reader(identity: &Arc<()>, mut conn: AnyConnection) {
    use diesel::r2d2::R2D2Connection;
    if conn.is_broken() {
        return;
    }
    SQLITE_READERS.with(|readers| {
        readers.borrow_mut().push((Arc::downgrade(identity), conn));
    });
}
