//! Stored cuppings.

use roastery_ports::repo::CuppingRepo;

use crate::store::DieselTx;

impl CuppingRepo for DieselTx {}
