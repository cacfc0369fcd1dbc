//! What Roastery's test suites share: headless Chromium ([`browser`]), throw-away SQLite and
//! PostgreSQL databases ([`database`]) and the repository contract every [`Store`](roastery_ports::Store) must meet
//! ([`contract`], run on the in-memory store, SQLite and PostgreSQL by
//! `crates/adapters-diesel/tests/contract.rs`), a stand-in for the EU's EUDR information system
//! ([`eu_stub`]), and use-case commands with only what a test needs ([`imports`]).
//!
//! Test code only: a failed setup step or assertion panics with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    reason = "test support: a failed setup step or assertion should stop the test with its message"
)]

pub mod browser;
pub mod contract;
pub mod database;
pub mod eu_stub;
pub mod imports;
