//! Errors of the use cases.
//!
//! Policy:
//! - A broken business rule is a domain error enum (`domain::*Error`). It converts into
//!   [`AppError::Rejected`] whole: transport adapters map its [`Violation`] category to a status
//!   and code in one table and show its message; tests match the exact error with
//!   [`AppError::rule`].
//! - A bulk call collects one [`ItemFailure`] per failing item and fails as a whole
//!   ([`AppError::Bulk`]); nothing of the batch is stored.
//! - Field paths in rejections are relative to what the use case was given (`name`,
//!   `[2].orderItems[0].sku`, `filter.roastedLotIds`); the transport puts them under its
//!   request's envelope once, with [`AppError::under`], before anything is written.
//! - Authentication and authorisation failures have their own variants.
//! - Store failures are [`StoreError`]: never shown to clients beyond "internal error"; adapters
//!   log them with their cause.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use roastery_domain::{BrokenRule, FieldPath, Violation};

/// A broken rule: the domain error itself, kept whole on its way to the transport's error table.
#[derive(Clone)]
pub struct Rejection(Arc<dyn BrokenRule>);

impl Rejection {
    pub fn new(rule: impl BrokenRule) -> Self {
        Self(Arc::new(rule))
    }

    /// The category the transport maps to a status and code.
    pub fn violation(&self) -> Violation {
        self.0.violation()
    }

    /// What the client is told.
    pub fn message(&self) -> String {
        self.0.to_string()
    }

    /// The rejection with every field path it names put under `base` ([`BrokenRule::rebase`]).
    /// A rejection is placed once, before it is shared: a clone cannot be changed, so placing one
    /// leaves its paths as they were (and says so in the log).
    pub fn under(mut self, base: &FieldPath) -> Self {
        match Arc::get_mut(&mut self.0) {
            Some(rule) => rule.rebase(base),
            None => {
                tracing::warn!(%base, rule = %self.0, "a shared rejection kept its field paths")
            }
        }
        self
    }

    /// The domain error, when it is an `E`: `rejection.rule::<CuppingError>()`.
    pub fn rule<E: BrokenRule>(&self) -> Option<&E> {
        let rule: &(dyn Error + 'static) = &*self.0;
        rule.downcast_ref()
    }
}

impl fmt::Debug for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// Rejections are equal when they break the same category of rule with the same message: the
/// error types themselves cannot be compared through the trait object.
impl PartialEq for Rejection {
    fn eq(&self, other: &Self) -> bool {
        self.violation() == other.violation() && self.message() == other.message()
    }
}

impl Eq for Rejection {}

/// One failing item of a bulk call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemFailure {
    pub index: usize,
    pub external_id: Option<String>,
    pub rejection: Rejection,
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
    #[error("{0}")]
    Rejected(Rejection),
    #[error("{} item(s) of the batch failed; nothing was applied", .0.len())]
    Bulk(Vec<ItemFailure>),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The EU's EUDR information system refused a call or could not be reached.
    #[error(transparent)]
    Eudr(crate::eudr::EudrFault),
}

impl AppError {
    /// The violation category of a rejected request, if it is one.
    pub fn violation(&self) -> Option<Violation> {
        match self {
            Self::Rejected(r) => Some(r.violation()),
            _ => None,
        }
    }

    /// The error with every field path it names put under `base`: the part of the request the
    /// use case was given (`data`, `params`). Bulk items name their fields relative to the batch
    /// (`[2].orderItems[0].sku`), so they are placed under the same base.
    pub fn under(self, base: &FieldPath) -> Self {
        match self {
            Self::Rejected(r) => Self::Rejected(r.under(base)),
            Self::Bulk(items) => Self::Bulk(
                items
                    .into_iter()
                    .map(|item| ItemFailure {
                        rejection: item.rejection.under(base),
                        ..item
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    /// The domain error of a rejected request, when it is an `E`; tests assert the exact rule
    /// broken with it: `assert_eq!(err.rule(), Some(&CuppingError::NotFound(id)))`.
    pub fn rule<E: BrokenRule>(&self) -> Option<&E> {
        match self {
            Self::Rejected(r) => r.rule(),
            _ => None,
        }
    }
}

impl<E: BrokenRule> From<E> for AppError {
    fn from(rule: E) -> Self {
        Self::Rejected(Rejection::new(rule))
    }
}

impl AppError {
    /// The failing items of a bulk call judged by the domain: nothing of the batch is applied.
    pub fn bulk<E: BrokenRule>(failures: Vec<roastery_domain::bulk::ItemFailure<E>>) -> Self {
        Self::Bulk(
            failures
                .into_iter()
                .map(|f| ItemFailure {
                    index: f.index,
                    external_id: Some(f.external_id),
                    rejection: Rejection::new(f.error),
                })
                .collect(),
        )
    }
}

impl From<Rejection> for AppError {
    fn from(rejection: Rejection) -> Self {
        Self::Rejected(rejection)
    }
}
