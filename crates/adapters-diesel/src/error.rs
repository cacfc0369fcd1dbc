//! Diesel errors as store errors.

use diesel::result::{DatabaseErrorKind, Error};
use roastery_ports::StoreError;

pub(crate) fn store_error(err: Error) -> StoreError {
    match err {
        Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => StoreError::Contention,
        Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            StoreError::Duplicate(info.message().to_owned())
        }
        // SQLite reports a writer that waited past busy_timeout this way; PostgreSQL aborts one
        // of two transactions that lock rows in opposite orders (40P01, which Diesel does not
        // classify). Both are retried like a serialisation failure.
        Error::DatabaseError(_, info)
            if info.message().contains("database is locked")
                || info.message().contains("deadlock detected") =>
        {
            StoreError::Contention
        }
        // A row lock waited past `lock_timeout`, or a statement ran past `statement_timeout`
        // (SQLSTATE 55P03 / 57014; Diesel classifies neither): the database is too busy for
        // this request now. Not retried here, which would multiply the wait; nothing is applied.
        Error::DatabaseError(_, info)
            if info.message().contains("lock timeout")
                || info.message().contains("statement timeout")
                || info.message().contains("canceling statement") =>
        {
            StoreError::Unavailable(info.message().to_owned())
        }
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
            StoreError::Unavailable(info.message().to_owned())
        }
        other => StoreError::Internal(other.to_string()),
    }
}

/// A unique key refused an insert that the unit of work had checked to be new: a concurrent
/// transaction inserted the same key after the check (only possible on PostgreSQL, where writers
/// of different rows run in parallel). Running the unit of work again sees that row.
pub(crate) fn concurrent_insert(err: StoreError) -> StoreError {
    match err {
        StoreError::Duplicate(_) => StoreError::Contention,
        other => other,
    }
}

/// A stored value that the domain refuses: the row is corrupt.
pub(crate) fn corrupt(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("corrupt {what} row: {detail}"))
}

pub(crate) trait OrStoreError<T> {
    fn store(self) -> Result<T, StoreError>;
}

impl<T> OrStoreError<T> for Result<T, Error> {
    fn store(self) -> Result<T, StoreError> {
        self.map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database_error(message: &str) -> Error {
        Error::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()))
    }

    #[test]
    fn deadlocks_and_locked_databases_are_contention_to_retry() {
        assert_eq!(
            store_error(database_error("deadlock detected")),
            StoreError::Contention
        );
        assert_eq!(
            store_error(database_error("database is locked")),
            StoreError::Contention
        );
        assert!(matches!(
            store_error(database_error("canceling statement due to lock timeout")),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            store_error(database_error(
                "canceling statement due to statement timeout"
            )),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            store_error(database_error("syntax error")),
            StoreError::Internal(_)
        ));
    }
}
