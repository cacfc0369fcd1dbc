//! In-memory green lots.

use super::MemTx;
use crate::repo::GreenLotRepo;

#[derive(Debug, Clone, Default)]
pub struct GreenData {}

impl GreenLotRepo for MemTx {}
