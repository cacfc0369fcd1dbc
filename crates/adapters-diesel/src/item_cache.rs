//! Listing items this process keeps, by lot id and digest, so that a PostgreSQL page need not
//! carry its items' bytes (about half of what the page's statement costs PostgreSQL).
//!
//! PostgreSQL stores each item's digest beside it, computed from the item by the database itself
//! (a generated column), so a page's rows name exactly the items they hold: an item kept here under
//! the digest a row names is that row's item, whichever instance wrote it and however long ago.
//! Nothing is ever stale, nothing needs invalidating; a lot written again gets a new digest and
//! its old item simply stops being asked for. Only the memory is bounded.

use std::sync::Arc;

use chrono::NaiveDateTime;
use quick_cache::Weighter;
use quick_cache::sync::Cache;
use uuid::Uuid;

/// An item's digest as PostgreSQL computes it from the stored item (`listing_digest`).
pub(crate) type Digest = [u8; 16];

/// What a page's row names: the lot and its item's digest.
pub(crate) type ItemKey = (Uuid, Digest);

/// The bytes of items kept, at most: about 70,000 items of a green lot's size.
pub(crate) const KEPT_BYTES: u64 = 32 * 1024 * 1024;

/// What an entry costs beyond its item's bytes (key, pointer, the map's slot), roughly.
const ENTRY_BYTES: u64 = 64;

/// How many pages asked for are remembered as asked.
const PAGES_REMEMBERED: usize = 10_000;

/// What tells a listing page from others.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct AskedPage {
    pub(crate) table: &'static str,
    pub(crate) from: Option<NaiveDateTime>,
    pub(crate) after: Option<(NaiveDateTime, String)>,
    pub(crate) limit: u32,
}

/// The items kept, some evicted whenever they would take more than their bytes, and the pages
/// asked for so far (a page asked for once is read with its items: `listing.rs`).
pub(crate) struct ItemCache {
    items: Cache<ItemKey, Arc<[u8]>, ByLength>,
    pages: Cache<AskedPage, ()>,
    /// Keeps nothing (no bytes given): every page is read with its items.
    off: bool,
}

#[derive(Clone)]
struct ByLength;

impl Weighter<ItemKey, Arc<[u8]>> for ByLength {
    fn weight(&self, _: &ItemKey, item: &Arc<[u8]>) -> u64 {
        u64::try_from(item.len())
            .unwrap_or(u64::MAX)
            .saturating_add(ENTRY_BYTES)
    }
}

impl ItemCache {
    /// A cache of `bytes`; 0 keeps nothing.
    pub(crate) fn new(bytes: u64) -> Self {
        let off = bytes == 0;
        // Room made ahead for items of about 512 bytes, up to a million of them.
        let estimated = usize::try_from(bytes / 512)
            .unwrap_or(usize::MAX)
            .clamp(1, 1_000_000);
        Self {
            items: Cache::with_weighter(estimated, bytes.max(1), ByLength),
            pages: Cache::new(if off { 1 } else { PAGES_REMEMBERED }),
            off,
        }
    }

    /// Whether `page` was asked for before (never when nothing is kept); from now on it was.
    pub(crate) fn asked_before(&self, page: AskedPage) -> bool {
        if self.off {
            return false;
        }
        if self.pages.get(&page).is_some() {
            return true;
        }
        self.pages.insert(page, ());
        false
    }

    pub(crate) fn get(&self, key: &ItemKey) -> Option<Arc<[u8]>> {
        self.items.get(key)
    }

    pub(crate) fn keep(&self, key: ItemKey, item: Arc<[u8]>) {
        self.items.insert(key, item);
    }

    /// The bytes the kept items take, their keys included.
    #[cfg(test)]
    pub(crate) fn weight(&self) -> u64 {
        self.items.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_found_only_under_its_lot_and_digest() {
        let cache = ItemCache::new(1024 * 1024);
        let lot = Uuid::from_u128(1);
        cache.keep((lot, [1; 16]), Arc::from(&b"{\"a\":1}"[..]));
        assert_eq!(
            cache.get(&(lot, [1; 16])).as_deref(),
            Some(&b"{\"a\":1}"[..])
        );
        assert!(cache.get(&(lot, [2; 16])).is_none(), "another digest");
        assert!(
            cache.get(&(Uuid::from_u128(2), [1; 16])).is_none(),
            "another lot"
        );
    }

    fn page(limit: u32) -> AskedPage {
        AskedPage {
            table: "green_lots",
            from: None,
            after: None,
            limit,
        }
    }

    #[test]
    fn a_page_was_asked_before_from_its_second_time_on() {
        let cache = ItemCache::new(1024 * 1024);
        assert!(!cache.asked_before(page(50)));
        assert!(cache.asked_before(page(50)));
        assert!(cache.asked_before(page(50)));
        assert!(!cache.asked_before(page(10)), "another size");
    }

    #[test]
    fn a_cache_of_no_bytes_keeps_nothing_and_no_page_was_asked_before() {
        let cache = ItemCache::new(0);
        for _ in 0..3 {
            assert!(!cache.asked_before(page(50)));
        }
        let key = (Uuid::from_u128(1), [1; 16]);
        cache.keep(key, Arc::from(&b"{}"[..]));
        assert!(cache.get(&key).is_none());
    }

    #[test]
    fn the_items_kept_stay_within_their_bytes() {
        let bytes = 64 * 1024;
        let cache = ItemCache::new(bytes);
        let item: Arc<[u8]> = Arc::from(vec![b'x'; 500]);
        for n in 0..10_000u128 {
            cache.keep((Uuid::from_u128(n), [0; 16]), item.clone());
        }
        assert!(cache.weight() <= bytes, "{} > {bytes}", cache.weight());
        assert!(
            cache.weight() >= bytes / 2,
            "still keeps: {}",
            cache.weight()
        );
    }
}
