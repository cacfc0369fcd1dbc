//! Stored roasted lots, profiles and curves.

use roastery_ports::repo::RoastRepo;

use crate::store::DieselTx;

impl RoastRepo for DieselTx {}
