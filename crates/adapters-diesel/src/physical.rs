//! Stored physical analyses.

use roastery_ports::repo::PhysicalRepo;

use crate::store::DieselTx;

impl PhysicalRepo for DieselTx {}
