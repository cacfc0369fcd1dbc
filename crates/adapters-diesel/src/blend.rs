//! Stored blended lots.

use roastery_ports::repo::BlendRepo;

use crate::store::DieselTx;

impl BlendRepo for DieselTx {}
