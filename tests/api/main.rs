//! End-to-end tests: the real service over real HTTPS, tokens from the `oauth2` crate's client
//! credentials flow, each test on its own SQLite file and on its own PostgreSQL database.
//!
//! PostgreSQL runs when `ROASTERY_TEST_DATABASE_URL` names a server (any database on it; each test
//! creates and drops its own). Without it the PostgreSQL variants say they are skipped.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

mod helpers;

mod artisan;
mod bounds;
mod core;
mod epcis;
mod eudr;
mod eudr_statements;
mod event;
mod green;
mod hardening;
mod limits;
mod mrp;
mod operate;
mod plan;
mod precedence;
mod quality;
mod roast;
mod shapes;
mod slow_clients;
mod strangers;
mod trace;
