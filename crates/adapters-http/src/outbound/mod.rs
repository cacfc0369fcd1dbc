//! Outbound adapters: what Roastery calls rather than what calls Roastery.
//!
//! - [`eudr`]: the SOAP client of the EU's EUDR information system (implements
//!   `roastery_ports::eudr::EudrSystem`).
//! - [`eudr_jobs`]: the sequences that call it between units of work, and the background jobs
//!   (poller, re-verifier) each instance runs.
//! - [`webhook`]: the delivery of events to webhooks: the loop, the HTTPS client and where it may
//!   connect, Standard Webhooks signing.
//!
//! No client runs a use case or touches a store itself: the use cases' units of work and the
//! network calls alternate, so no database transaction is held across a call.

pub mod eudr;
pub mod eudr_jobs;
pub mod webhook;
