//! In-memory orders.

use super::MemTx;
use crate::repo::OrderRepo;

#[derive(Debug, Clone, Default)]
pub struct OrderData {}

impl OrderRepo for MemTx {}
