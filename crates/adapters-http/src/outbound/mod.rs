//! Outbound adapters: what Roastery calls rather than what calls Roastery.
//!
//! - [`eudr`]: the SOAP client of the EU's EUDR information system (implements
//!   `roastery_ports::eudr::EudrSystem`).
//! - [`eudr_jobs`]: the sequences that call it between units of work, and the background jobs
//!   (poller, re-verifier) each instance runs.
//!
//! The client runs no use case and touches no store: the use cases' units of work and its calls
//! alternate, so no database transaction is held across a call.

pub mod eudr;
pub mod eudr_jobs;
