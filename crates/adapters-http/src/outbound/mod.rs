//! Outbound adapters: what Roastery calls rather than what calls Roastery.
//!
//! - [`eudr`]: the SOAP client of the EU's EUDR information system (implements
//!   `roastery_ports::eudr::EudrSystem`).
//!
//! Nothing here runs a use case or touches the store: the use cases call these adapters through
//! their ports, outside any database transaction.

pub mod eudr;
