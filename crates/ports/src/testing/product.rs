//! In-memory products.

use super::MemTx;
use crate::repo::ProductRepo;

#[derive(Debug, Clone, Default)]
pub struct ProductData {}

impl ProductRepo for MemTx {}
