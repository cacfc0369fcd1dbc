//! Errors of the use cases.
//!
//! Policy:
//! - A broken business rule is a domain error enum (`domain::*Error`). It converts into
//!   [`AppError::Rejected`], keeping its [`Violation`] category and its message; transport adapters
//!   map the category to a status and code in one table and show the message.
//! - A bulk call collects one [`ItemFailure`] per failing item and fails as a whole
//!   ([`AppError::Bulk`]); nothing of the batch is stored.
//! - Authentication and authorisation failures have their own variants.
//! - Store failures are [`StoreError`]: never shown to clients beyond "internal error"; adapters
//!   log them with their cause.

use roastery_domain::{BrokenRule, Violation};

/// A broken rule, reduced to its category and the message the client sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub violation: Violation,
    pub message: String,
}

impl Rejection {
    pub fn new(violation: Violation, message: impl Into<String>) -> Self {
        Self {
            violation,
            message: message.into(),
        }
    }
}

/// One failing item of a bulk call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemFailure {
    pub index: usize,
    pub external_id: Option<String>,
    pub violation: Violation,
    pub message: String,
}

impl ItemFailure {
    pub fn new(index: usize, external_id: Option<String>, rule: &dyn BrokenRule) -> Self {
        Self {
            index,
            external_id,
            violation: rule.violation(),
            message: rule.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or no connection was free in time.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// A concurrent transaction won; the unit of work may be retried.
    #[error("the transaction conflicted with a concurrent one")]
    Contention,
    /// A uniqueness constraint refused a write.
    #[error("a unique constraint was violated: {0}")]
    Duplicate(String),
    /// Anything else: a bug or a corrupt row.
    #[error("store failure: {0}")]
    Internal(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("{}", .0.message)]
    Rejected(Rejection),
    #[error("{} item(s) of the batch failed; nothing was applied", .0.len())]
    Bulk(Vec<ItemFailure>),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AppError {
    /// The violation category of a rejected request, if it is one.
    pub fn violation(&self) -> Option<Violation> {
        match self {
            Self::Rejected(r) => Some(r.violation),
            _ => None,
        }
    }
}

impl<E: BrokenRule> From<E> for AppError {
    fn from(rule: E) -> Self {
        Self::Rejected(Rejection::new(rule.violation(), rule.to_string()))
    }
}

impl AppError {
    /// The failing items of a bulk call judged by the domain: nothing of the batch is applied.
    pub fn bulk<E: BrokenRule>(failures: Vec<roastery_domain::bulk::ItemFailure<E>>) -> Self {
        Self::Bulk(
            failures
                .into_iter()
                .map(|f| ItemFailure::new(f.index, Some(f.external_id), &f.error))
                .collect(),
        )
    }
}

impl From<Rejection> for AppError {
    fn from(rejection: Rejection) -> Self {
        Self::Rejected(rejection)
    }
}
