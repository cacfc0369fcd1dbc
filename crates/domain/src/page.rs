//! Forward-only, newest-first pagination.
//!
//! Listings are ordered by an immutable instant with the record id as tie-breaker, and a page ends
//! at a keyset [`Position`]: the next page starts strictly after it, so a page deep in a long list
//! costs what the first one costs. By-ids reads page through the asked list by index.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::field::FieldPath;
use crate::violation::{BrokenRule, Violation};

pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 100;
/// Most ids a by-ids read accepts.
pub const MAX_IDS: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("pagination.limit must be between 1 and {MAX_LIMIT}; {0} was given")]
    LimitOutOfRange(i64),
    #[error("{field} must not be empty")]
    NoIds { field: FieldPath },
    #[error("{field} holds {count} ids; at most {max} are accepted")]
    TooManyIds {
        field: FieldPath,
        count: usize,
        max: usize,
    },
    #[error("{field} lists id {id} more than once")]
    DuplicateId { field: FieldPath, id: Uuid },
    #[error("the pagination cursor does not belong to this list")]
    ForeignCursor,
}

impl BrokenRule for PageError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::NoIds { field }
            | Self::TooManyIds { field, .. }
            | Self::DuplicateId { field, .. } => {
                field.rebase(base);
            }
            Self::LimitOutOfRange(_) | Self::ForeignCursor => {}
        }
    }
}

/// Page size: 1 to 100, 50 when not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(u32);

impl Limit {
    pub fn parse(limit: Option<i64>) -> Result<Self, PageError> {
        match limit {
            None => Ok(Self(DEFAULT_LIMIT)),
            Some(n) if (1..=i64::from(MAX_LIMIT)).contains(&n) => {
                Ok(Self(u32::try_from(n).unwrap_or(DEFAULT_LIMIT)))
            }
            Some(n) => Err(PageError::LimitOutOfRange(n)),
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }

    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}

impl Default for Limit {
    fn default() -> Self {
        Self(DEFAULT_LIMIT)
    }
}

/// Where a page ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Position {
    /// Keyset position in a newest-first listing: the last record's sort instant and id.
    Keyset { at: DateTime<Utc>, id: Uuid },
    /// Number of entries of an asked id list already returned.
    Index(u32),
    /// The last sequence number of an oldest-first feed already returned (0: none yet).
    Sequence(i64),
}

/// A page request: how many, and after which position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageRequest {
    pub limit: Limit,
    pub after: Option<Position>,
}

impl PageRequest {
    /// The keyset the page starts after, or an error when the cursor came from a by-ids read.
    pub fn keyset(&self) -> Result<Option<(DateTime<Utc>, Uuid)>, PageError> {
        match self.after {
            None => Ok(None),
            Some(Position::Keyset { at, id }) => Ok(Some((at, id))),
            Some(Position::Index(_) | Position::Sequence(_)) => Err(PageError::ForeignCursor),
        }
    }

    /// The sequence number a feed page starts after (0 from the beginning).
    pub fn sequence(&self) -> Result<i64, PageError> {
        match self.after {
            None => Ok(0),
            Some(Position::Sequence(s)) => Ok(s),
            Some(Position::Keyset { .. } | Position::Index(_)) => Err(PageError::ForeignCursor),
        }
    }

    /// The index a by-ids page starts at.
    pub fn index(&self) -> Result<usize, PageError> {
        match self.after {
            None => Ok(0),
            Some(Position::Index(i)) => Ok(i as usize),
            Some(Position::Keyset { .. } | Position::Sequence(_)) => Err(PageError::ForeignCursor),
        }
    }
}

/// One page of records and where the next one starts (`None` on the last page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Position>,
}

impl<T> Page<T> {
    /// Builds a keyset page from up to `limit + 1` rows fetched newest first: the extra row only
    /// tells that another page exists.
    pub fn from_overfetch(
        mut rows: Vec<T>,
        limit: Limit,
        key: impl Fn(&T) -> (DateTime<Utc>, Uuid),
    ) -> Self {
        let next = if rows.len() > limit.as_usize() {
            rows.truncate(limit.as_usize());
            rows.last().map(|last| {
                let (at, id) = key(last);
                Position::Keyset { at, id }
            })
        } else {
            None
        };
        Self { items: rows, next }
    }

    /// Pages through records found for an asked id list, already in the asked order.
    pub fn from_found(found: Vec<T>, request: &PageRequest) -> Result<Self, PageError> {
        let start = request.index()?;
        let limit = request.limit.as_usize();
        let total = found.len();
        let items: Vec<T> = found.into_iter().skip(start).take(limit).collect();
        let end = start.saturating_add(items.len());
        let next = (end < total).then(|| Position::Index(u32::try_from(end).unwrap_or(u32::MAX)));
        Ok(Self { items, next })
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            next: self.next,
        }
    }
}

/// A page of items kept as JSON, joined into one buffer as its rows are read, up to
/// `limit + 1` of them: a keyset page read newest first ([`JoinedPage::new`],
/// [`Page::from_overfetch`] for stored bytes), or the records found for an asked id list read in
/// the asked order ([`JoinedPage::found`], [`Page::from_found`] for stored bytes). Each item is
/// copied once, into the buffer the answer is written from, and only the row that fills the page
/// gives its position; a row after that only tells that another page exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinedPage {
    limit: usize,
    count: usize,
    items: Vec<u8>,
    last: Option<Position>,
    more: bool,
    /// Of a by-ids page: how many found records pages before this one returned.
    start: usize,
    /// Of those, how many are still to be passed over.
    to_skip: usize,
}

impl JoinedPage {
    /// A keyset page, filled with [`JoinedPage::push`].
    pub fn new(limit: Limit) -> Self {
        Self {
            limit: limit.as_usize(),
            count: 0,
            items: Vec::new(),
            last: None,
            more: false,
            start: 0,
            to_skip: 0,
        }
    }

    /// A by-ids page of `request`, filled with [`JoinedPage::push_found`] by each record found,
    /// in the asked order; an error when its cursor is not a by-ids one.
    pub fn found(request: &PageRequest) -> Result<Self, PageError> {
        let start = request.index()?;
        Ok(Self {
            start,
            to_skip: start,
            ..Self::new(request.limit)
        })
    }

    /// Passes over the next found record when an earlier page returned it: true when it is
    /// passed over (its item is not needed), false when it is for [`JoinedPage::push_found`].
    pub fn skip_found(&mut self) -> bool {
        if self.to_skip == 0 {
            return false;
        }
        self.to_skip = self.to_skip.saturating_sub(1);
        true
    }

    /// Adds the next found record's item (after [`JoinedPage::skip_found`] said it is not
    /// passed over); one past a full page is taken as [`JoinedPage::more`].
    pub fn push_found(&mut self, item: &[u8]) {
        let end = self.start.saturating_add(self.limit);
        let position = Position::Index(u32::try_from(end).unwrap_or(u32::MAX));
        self.push_at(item, || Ok::<_, std::convert::Infallible>(position))
            .unwrap_or_else(|never| match never {});
    }

    /// Whether the page holds all its items: the next row read only tells that another page
    /// exists ([`JoinedPage::more`]).
    pub fn is_full(&self) -> bool {
        self.count >= self.limit
    }

    /// Adds the next row's item after the ones read before it; `position` (its sort instant and
    /// id) is asked only of the row that fills the page. A row past a full page is taken as
    /// [`JoinedPage::more`].
    pub fn push<E>(
        &mut self,
        item: &[u8],
        position: impl FnOnce() -> Result<(DateTime<Utc>, Uuid), E>,
    ) -> Result<(), E> {
        self.push_at(item, || {
            position().map(|(at, id)| Position::Keyset { at, id })
        })
    }

    fn push_at<E>(
        &mut self,
        item: &[u8],
        position: impl FnOnce() -> Result<Position, E>,
    ) -> Result<(), E> {
        if self.is_full() {
            self.more();
            return Ok(());
        }
        if self.count > 0 {
            self.items.push(b',');
        } else {
            self.reserve_like(item);
        }
        self.items.extend_from_slice(item);
        self.count = self.count.saturating_add(1);
        if self.is_full() {
            self.last = Some(position()?);
        }
        Ok(())
    }

    /// Room for a page of items the size of the first one (a page's items are alike), up to
    /// [`JoinedPage::RESERVED`]: the buffer is not regrown a dozen times as the page fills.
    fn reserve_like(&mut self, first: &[u8]) {
        let page = first
            .len()
            .saturating_add(1)
            .saturating_mul(self.limit)
            .min(Self::RESERVED);
        self.items.reserve(page);
    }

    /// The most room taken ahead for a page's items; beyond it the buffer grows as needed.
    const RESERVED: usize = 64 * 1024;

    /// Notes a row after the full page: another page follows.
    pub fn more(&mut self) {
        self.more = true;
    }

    /// The page's items, separated by commas (a JSON array's content).
    pub fn items(&self) -> &[u8] {
        &self.items
    }

    /// How many items the page holds.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Where the next page starts, `None` on the last page.
    pub fn next(&self) -> Option<Position> {
        if self.more { self.last } else { None }
    }
}

/// Checks a by-ids read before any lookup, in the order the request lists them: the id filter
/// (`field` is its path in the read's parameters, `filter.…`), then the cursor of
/// `pagination`. Returns the index the page starts at.
pub fn check_by_ids(
    field: &'static str,
    ids: &[Uuid],
    page: &PageRequest,
) -> Result<usize, PageError> {
    unique_ids(field, ids, MAX_IDS)?;
    page.index()
}

/// Checks an id filter: non-empty, at most `max` ids, none twice.
pub fn unique_ids(field: &'static str, ids: &[Uuid], max: usize) -> Result<(), PageError> {
    if ids.is_empty() {
        return Err(PageError::NoIds {
            field: field.into(),
        });
    }
    if ids.len() > max {
        return Err(PageError::TooManyIds {
            field: field.into(),
            count: ids.len(),
            max,
        });
    }
    let mut seen = HashSet::with_capacity(ids.len());
    for id in ids {
        if !seen.insert(id) {
            return Err(PageError::DuplicateId {
                field: field.into(),
                id: *id,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::at;

    #[test]
    fn limit_defaults_to_50_and_stays_within_1_to_100() {
        assert_eq!(Limit::parse(None).unwrap().get(), 50);
        assert_eq!(Limit::parse(Some(1)).unwrap().get(), 1);
        assert_eq!(Limit::parse(Some(100)).unwrap().get(), 100);
        assert_eq!(Limit::parse(Some(0)), Err(PageError::LimitOutOfRange(0)));
        assert_eq!(
            Limit::parse(Some(101)),
            Err(PageError::LimitOutOfRange(101))
        );
        assert_eq!(Limit::parse(Some(-5)), Err(PageError::LimitOutOfRange(-5)));
    }

    #[test]
    fn an_overfetched_row_means_another_page_after_the_last_kept_one() {
        let rows: Vec<(DateTime<Utc>, Uuid)> = (0..4)
            .map(|i| (at(100 - i), Uuid::from_u128(i as u128)))
            .collect();
        let page = Page::from_overfetch(rows.clone(), Limit::parse(Some(3)).unwrap(), |r| *r);
        assert_eq!(page.items.len(), 3);
        assert_eq!(
            page.next,
            Some(Position::Keyset {
                at: at(98),
                id: Uuid::from_u128(2)
            })
        );
        let last = Page::from_overfetch(rows, Limit::parse(Some(4)).unwrap(), |r| *r);
        assert_eq!(last.next, None);
    }

    /// Joined as rows arrive, the page is what [`Page::from_overfetch`] keeps of the same rows:
    /// the same items in the same order, the same next position, for every row count around
    /// the limit; only the row filling the page is asked its position.
    #[test]
    fn a_joined_page_keeps_what_an_overfetched_page_keeps() {
        let rows: Vec<(DateTime<Utc>, Uuid, String)> = (0..6)
            .map(|i| {
                (
                    at(100 - i),
                    Uuid::from_u128(i as u128),
                    format!("{{\"n\":{i}}}"),
                )
            })
            .collect();
        for limit in 1..=4 {
            let limit = Limit::parse(Some(limit)).unwrap();
            for count in 0..=rows.len() {
                let rows = &rows[..count];
                let mut joined = JoinedPage::new(limit);
                let mut asked = 0;
                for (at, id, json) in rows {
                    joined
                        .push(json.as_bytes(), || {
                            asked += 1;
                            Ok::<_, ()>((*at, *id))
                        })
                        .unwrap();
                }
                let page = Page::from_overfetch(rows.to_vec(), limit, |r| (r.0, r.1));
                let items: Vec<&str> = page.items.iter().map(|r| r.2.as_str()).collect();
                assert_eq!(joined.items(), items.join(",").as_bytes());
                assert_eq!(joined.len(), page.items.len());
                assert_eq!(joined.is_empty(), page.items.is_empty());
                assert_eq!(joined.next(), page.next, "limit {limit:?}, {count} rows");
                assert_eq!(asked, usize::from(count >= limit.as_usize()));
            }
        }
    }

    /// A by-ids page joined from the found records in the asked order keeps what
    /// [`Page::from_found`] keeps: for every limit, start and number found, the same items and
    /// the same next position, the records before the start passed over unread.
    #[test]
    fn a_found_page_keeps_what_a_page_of_found_records_keeps() {
        let found: Vec<String> = (0..7).map(|i| format!("{{\"n\":{i}}}")).collect();
        for limit in 1..=4 {
            let limit = Limit::parse(Some(limit)).unwrap();
            for start in 0..=8u32 {
                let request = PageRequest {
                    limit,
                    after: (start > 0).then_some(Position::Index(start)),
                };
                for count in 0..=found.len() {
                    let found = &found[..count];
                    let mut joined = JoinedPage::found(&request).unwrap();
                    let mut skipped = 0;
                    for item in found {
                        if joined.is_full() {
                            joined.more();
                            break;
                        }
                        if joined.skip_found() {
                            skipped += 1;
                            continue;
                        }
                        joined.push_found(item.as_bytes());
                    }
                    let page = Page::from_found(found.to_vec(), &request).unwrap();
                    let what = format!("limit {limit:?}, start {start}, {count} found");
                    assert_eq!(joined.items(), page.items.join(",").as_bytes(), "{what}");
                    assert_eq!(joined.len(), page.items.len(), "{what}");
                    assert_eq!(joined.next(), page.next, "{what}");
                    assert_eq!(skipped, count.min(start as usize), "{what}");
                }
            }
        }
        let keyset = PageRequest {
            limit: Limit::default(),
            after: Some(Position::Keyset {
                at: at(1),
                id: Uuid::nil(),
            }),
        };
        assert_eq!(JoinedPage::found(&keyset), Err(PageError::ForeignCursor));
    }

    /// The buffer is sized once by the first item for a page of alike items, and never sized
    /// ahead past [`JoinedPage::RESERVED`] for one large item.
    #[test]
    fn a_joined_page_sizes_its_buffer_by_the_first_item() {
        let limit = Limit::parse(Some(50)).unwrap();
        let mut joined = JoinedPage::new(limit);
        let item = [b'x'; 400];
        let no_position = || Ok::<_, ()>((at(1), Uuid::nil()));
        joined.push(&item, no_position).unwrap();
        let buffer = joined.items().as_ptr();
        for _ in 1..50 {
            joined.push(&item, no_position).unwrap();
        }
        assert!(joined.is_full());
        assert_eq!(joined.items().len(), 50 * 401 - 1);
        assert_eq!(joined.items().as_ptr(), buffer, "the buffer was regrown");

        let mut joined = JoinedPage::new(limit);
        joined.push(&[b'y'; 5_000], no_position).unwrap();
        assert!(joined.items.capacity() <= 2 * JoinedPage::RESERVED);
    }

    #[test]
    fn a_joined_page_asks_no_position_of_a_row_past_it_and_passes_on_its_error() {
        let limit = Limit::parse(Some(1)).unwrap();
        let mut joined = JoinedPage::new(limit);
        assert_eq!(joined.push(b"1", || Err("unreadable")), Err("unreadable"));
        let mut joined = JoinedPage::new(limit);
        joined
            .push(b"1", || Ok::<_, &str>((at(1), Uuid::nil())))
            .unwrap();
        assert!(joined.is_full());
        joined.push(b"2", || Err("not asked")).unwrap();
        assert_eq!(joined.items(), b"1");
        assert_eq!(
            joined.next(),
            Some(Position::Keyset {
                at: at(1),
                id: Uuid::nil()
            })
        );
    }

    #[test]
    fn by_ids_pages_walk_the_found_list_by_index() {
        let first = PageRequest {
            limit: Limit::parse(Some(2)).unwrap(),
            after: None,
        };
        let page = Page::from_found(vec![1, 2, 3], &first).unwrap();
        assert_eq!(
            (page.items.clone(), page.next),
            (vec![1, 2], Some(Position::Index(2)))
        );
        let second = PageRequest {
            after: page.next,
            ..first
        };
        let page = Page::from_found(vec![1, 2, 3], &second).unwrap();
        assert_eq!((page.items, page.next), (vec![3], None));
    }

    #[test]
    fn cursors_of_one_kind_of_list_do_not_fit_the_other() {
        let keyset = PageRequest {
            limit: Limit::default(),
            after: Some(Position::Index(3)),
        };
        assert_eq!(keyset.keyset(), Err(PageError::ForeignCursor));
    }

    #[test]
    fn id_filters_are_non_empty_bounded_and_unique() {
        let a = Uuid::from_u128(1);
        assert!(unique_ids("ids", &[a], 100).is_ok());
        assert_eq!(
            unique_ids("ids", &[], 100),
            Err(PageError::NoIds {
                field: FieldPath::from("ids")
            })
        );
        assert_eq!(
            unique_ids("ids", &[a, a], 100),
            Err(PageError::DuplicateId {
                field: FieldPath::from("ids"),
                id: a
            })
        );
        let many: Vec<Uuid> = (0..101).map(Uuid::from_u128).collect();
        assert!(matches!(
            unique_ids("ids", &many, 100),
            Err(PageError::TooManyIds { count: 101, .. })
        ));
    }
}
