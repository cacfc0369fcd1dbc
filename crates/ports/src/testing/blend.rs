//! In-memory blended lots.

use super::MemTx;
use crate::repo::BlendRepo;

#[derive(Debug, Clone, Default)]
pub struct BlendData {}

impl BlendRepo for MemTx {}
