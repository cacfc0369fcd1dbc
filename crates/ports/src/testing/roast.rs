//! In-memory roasted lots, profiles and curves.

use super::MemTx;
use crate::repo::RoastRepo;

#[derive(Debug, Clone, Default)]
pub struct RoastData {}

impl RoastRepo for MemTx {}
