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

/// The bytes of what is remembered of pages asked for (about 2,300 pages of 50 read whole).
const PAGE_BYTES: u64 = 4 * 1024 * 1024;

/// Of the items a page held when last read, the share still kept for it to be read by its
/// digests (three in four).
const HELD_FOR_DIGESTS: (usize, usize) = (3, 4);

/// What tells a listing page from others.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct AskedPage {
    pub(crate) table: &'static str,
    pub(crate) from: Option<NaiveDateTime>,
    pub(crate) after: Option<(NaiveDateTime, String)>,
    pub(crate) limit: u32,
}

/// What this process knows of a page asked for before.
#[derive(Clone)]
enum Seen {
    /// Asked for once, read with its items, none kept.
    Once,
    /// Read with its items kept: its rows' keys then.
    Read(Arc<[ItemKey]>),
}

/// How a PostgreSQL page is best read, from what this process knows of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageRead {
    /// Never asked for (a client walking every page asks for each once): with its items, none
    /// kept; by its digests first it would cost a second statement, and keeping its items more
    /// of the server's CPU than it saves.
    First,
    /// With its items, kept: asked for again, or most of its items are no longer kept (a walk
    /// over more lots than are kept, read again).
    Whole,
    /// By its digests: most of the items it held when last read are still kept.
    ByDigests,
}

/// The items kept, some evicted whenever they would take more than their bytes, and what is
/// known of the pages asked for, which tells how each is best read ([`PageRead`]).
pub(crate) struct ItemCache {
    items: Cache<ItemKey, Arc<[u8]>, ByLength>,
    pages: Cache<AskedPage, Seen, PageLength>,
    /// Keeps nothing (no bytes given): every page is read with its items.
    off: bool,
}

#[derive(Clone)]
struct PageLength;

impl Weighter<AskedPage, Seen> for PageLength {
    /// The page's key (its cursor's id included) and the keys of its rows, beyond the entry.
    fn weight(&self, page: &AskedPage, seen: &Seen) -> u64 {
        let rows = match seen {
            Seen::Once => 0,
            Seen::Read(keys) => keys.len(),
        };
        let cursor = page.after.as_ref().map_or(0, |(_, id)| id.len());
        let bytes = std::mem::size_of::<ItemKey>()
            .saturating_mul(rows)
            .saturating_add(std::mem::size_of::<AskedPage>())
            .saturating_add(cursor);
        u64::try_from(bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(ENTRY_BYTES)
    }
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
            pages: Cache::with_weighter(1024, if off { 1 } else { PAGE_BYTES }, PageLength),
            off,
        }
    }

    /// How `page` is best read now; from now on it was asked for.
    pub(crate) fn how_to_read(&self, page: &AskedPage) -> PageRead {
        if self.off {
            return PageRead::First;
        }
        match self.pages.get(page) {
            None => {
                self.pages.insert(page.clone(), Seen::Once);
                PageRead::First
            }
            Some(Seen::Once) => PageRead::Whole,
            Some(Seen::Read(keys)) => {
                let held = keys.iter().filter(|k| self.items.contains_key(*k)).count();
                let (part, whole) = HELD_FOR_DIGESTS;
                if held.saturating_mul(whole) >= keys.len().saturating_mul(part) {
                    PageRead::ByDigests
                } else {
                    PageRead::Whole
                }
            }
        }
    }

    /// Notes the keys of `page`'s rows as just read, its items kept.
    pub(crate) fn page_read(&self, page: AskedPage, keys: &[ItemKey]) {
        if !self.off {
            self.pages.insert(page, Seen::Read(Arc::from(keys)));
        }
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

    fn keys(n: u128) -> Vec<ItemKey> {
        (0..n).map(|i| (Uuid::from_u128(i), [7; 16])).collect()
    }

    #[test]
    fn a_page_is_read_first_then_whole_then_by_digests_while_its_items_are_kept() {
        let cache = ItemCache::new(1024 * 1024);
        assert_eq!(cache.how_to_read(&page(50)), PageRead::First);
        assert_eq!(cache.how_to_read(&page(50)), PageRead::Whole);
        assert_eq!(
            cache.how_to_read(&page(10)),
            PageRead::First,
            "another size"
        );
        let read = keys(8);
        for key in &read {
            cache.keep(*key, Arc::from(&b"{}"[..]));
        }
        cache.page_read(page(50), &read);
        assert_eq!(cache.how_to_read(&page(50)), PageRead::ByDigests);
        // Three of eight items no longer kept: fewer than three in four held.
        let fewer = ItemCache::new(1024 * 1024);
        for key in read.iter().skip(3) {
            fewer.keep(*key, Arc::from(&b"{}"[..]));
        }
        fewer.page_read(page(50), &read);
        assert_eq!(fewer.how_to_read(&page(50)), PageRead::Whole);
        // Two of eight: six in eight held.
        let most = ItemCache::new(1024 * 1024);
        for key in read.iter().skip(2) {
            most.keep(*key, Arc::from(&b"{}"[..]));
        }
        most.page_read(page(50), &read);
        assert_eq!(most.how_to_read(&page(50)), PageRead::ByDigests);
    }

    #[test]
    fn a_cache_of_no_bytes_keeps_nothing_and_reads_every_page_first() {
        let cache = ItemCache::new(0);
        cache.page_read(page(50), &keys(3));
        for _ in 0..3 {
            assert_eq!(cache.how_to_read(&page(50)), PageRead::First);
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
