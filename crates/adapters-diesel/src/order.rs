//! Stored orders.

use roastery_ports::repo::OrderRepo;

use crate::store::DieselTx;

impl OrderRepo for DieselTx {}
