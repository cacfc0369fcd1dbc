//! Stored green lots.

use roastery_ports::repo::GreenLotRepo;

use crate::store::DieselTx;

impl GreenLotRepo for DieselTx {}
