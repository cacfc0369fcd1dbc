//! The `roastery` binary's library: configuration, wiring of the adapters and the command line.
//! Integration tests start the service through [`Application`] exactly as `roastery serve` does.

pub mod bench_data;
pub mod cli;
pub mod config;
pub mod csv;
pub mod eudr;
pub mod log_text;
pub mod log_writer;
pub mod logs;
pub mod map;
pub mod planning;
pub mod seed;
pub mod startup;
pub mod tls;
pub mod traceability;

pub use config::Config;
pub use startup::{Application, open_roastery};
