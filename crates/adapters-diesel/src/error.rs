//! Diesel errors as store errors.

use diesel::result::{DatabaseErrorKind, Error};
use roastery_ports::StoreError;

pub(crate) fn store_error(err: Error) -> StoreError {
    match err {
        Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => StoreError::Contention,
        Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            StoreError::Duplicate(info.message().to_owned())
        }
        // PostgreSQL breaks a lock cycle by failing one transaction (40P01); a rerun succeeds.
        Error::DatabaseError(_, info) if info.message().contains("deadlock detected") => {
            StoreError::Contention
        }
        // SQLite reports a writer that waited past busy_timeout this way.
        Error::DatabaseError(_, info) if info.message().contains("database is locked") => {
            StoreError::Contention
        }
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
            StoreError::Unavailable(info.message().to_owned())
        }
        other => StoreError::Internal(other.to_string()),
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
