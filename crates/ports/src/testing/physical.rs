//! In-memory physical analyses.

use super::MemTx;
use crate::repo::PhysicalRepo;

#[derive(Debug, Clone, Default)]
pub struct PhysicalData {}

impl PhysicalRepo for MemTx {}
