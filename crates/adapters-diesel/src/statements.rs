//! The statements and transactions this process's database connections have run, counted at
//! each connection (Diesel's instrumentation): what `/metrics` reports as
//! `roastery_db_statements_total` and `roastery_db_transactions_total`, and how the load
//! benchmark measures statements (round trips: Diesel sends one statement at a time) per request.

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::connection::{
    Instrumentation, InstrumentationEvent, get_default_instrumentation, set_default_instrumentation,
};

static STATEMENTS: AtomicU64 = AtomicU64::new(0);
static TRANSACTIONS: AtomicU64 = AtomicU64::new(0);

/// Counts each statement sent (transaction control included) and each transaction begun.
struct Counting;

impl Instrumentation for Counting {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartQuery { .. } => {
                STATEMENTS.fetch_add(1, Ordering::Relaxed);
            }
            InstrumentationEvent::BeginTransaction { .. } => {
                TRANSACTIONS.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

/// Every connection opened from now on counts what it runs, unless the process installed an
/// instrumentation of its own (a test that records statements), which is kept.
pub(crate) fn count_from_now_on() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if get_default_instrumentation().is_some() {
            return;
        }
        if let Err(e) = set_default_instrumentation(|| Some(Box::new(Counting))) {
            tracing::warn!(error = %e, "database statements will not be counted");
        }
    });
}

/// (statements, transactions) run so far by every counted connection of this process.
pub(crate) fn counts() -> (u64, u64) {
    (
        STATEMENTS.load(Ordering::Relaxed),
        TRANSACTIONS.load(Ordering::Relaxed),
    )
}
