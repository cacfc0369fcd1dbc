//! In-memory cuppings.

use super::MemTx;
use crate::repo::CuppingRepo;

#[derive(Debug, Clone, Default)]
pub struct CuppingData {}

impl CuppingRepo for MemTx {}
