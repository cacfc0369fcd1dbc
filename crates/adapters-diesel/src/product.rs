//! Stored products.

use roastery_ports::repo::ProductRepo;

use crate::store::DieselTx;

impl ProductRepo for DieselTx {}
