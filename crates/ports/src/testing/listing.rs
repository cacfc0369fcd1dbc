//! The in-memory store keeps no listing items: its listings are answered from the domain.

use chrono::{DateTime, Utc};
use roastery_domain::page::PageRequest;
use uuid::Uuid;

use super::MemTx;
use crate::listing::{ListingItem, ListingRepo};
use crate::repo::StoreResult;

impl ListingRepo for MemTx {
    fn green_lot_items(
        &mut self,
        _modified_from: Option<DateTime<Utc>>,
        _page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        Ok(None)
    }

    fn roasted_lot_items(
        &mut self,
        _from: Option<DateTime<Utc>>,
        _page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        Ok(None)
    }

    fn roasted_lot_items_by_ids(&mut self, _ids: &[Uuid]) -> StoreResult<Option<Vec<ListingItem>>> {
        Ok(None)
    }

    fn blended_lot_items(
        &mut self,
        _from: Option<DateTime<Utc>>,
        _page: &PageRequest,
    ) -> StoreResult<Option<Vec<ListingItem>>> {
        Ok(None)
    }
}
