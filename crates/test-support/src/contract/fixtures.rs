//! What every contract function starts from: the use cases over a store, fixed instants, pages
//! and units of work run with their results unwrapped.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use roastery_app::Roastery;
use roastery_domain::page::{Limit, Page, PageRequest};
use roastery_ports::testing::{ManualClock, SequentialIds};
use roastery_ports::{AppError, Store, StoreError};

/// The use cases over `store`, to put records in place the way the service does.
pub fn app<S: Store>(store: S) -> (Roastery<S>, ManualClock) {
    let clock = ManualClock::default();
    let app = Roastery::new(
        store,
        Arc::new(clock.clone()),
        Arc::new(SequentialIds::default()),
    );
    (app, clock)
}

/// A fixed instant, whole microseconds (what both databases keep), plus `minutes`.
pub fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + TimeDelta::minutes(minutes)
}

/// A page of `limit` records after `after`.
pub fn page_of<T>(limit: i64, after: Option<&Page<T>>) -> PageRequest {
    PageRequest {
        limit: Limit::parse(Some(limit)).unwrap(),
        after: after.and_then(|p| p.next),
    }
}

/// Every record of a listing, page by page (`limit` each), checking that only the last page has
/// no next position.
pub fn all_pages<T>(limit: i64, mut list: impl FnMut(&PageRequest) -> Page<T>) -> Vec<T> {
    let mut all = Vec::new();
    let mut request = page_of::<T>(limit, None);
    loop {
        let page = list(&request);
        let next = page.next;
        assert!(page.items.len() <= usize::try_from(limit).unwrap());
        all.extend(page.items);
        match next {
            Some(next) => request.after = Some(next),
            None => return all,
        }
    }
}

/// Runs `work` in a write unit of work, unwrapping.
pub fn write<S: Store, T>(
    store: &S,
    mut work: impl FnMut(&mut S::Tx) -> Result<T, StoreError>,
) -> T {
    store
        .write(|tx| {
            let value = work(tx)?;
            // Repository contracts write past the use cases: no events for these rows.
            drop(roastery_ports::repo::EventRepo::take_changes(tx));
            Ok(value)
        })
        .unwrap()
}

/// Runs `work` in a read unit of work, unwrapping.
pub fn read<S: Store, T>(store: &S, work: impl FnOnce(&mut S::Tx) -> Result<T, StoreError>) -> T {
    store.read(|tx| Ok(work(tx)?)).unwrap()
}

/// What a write unit of work answers, as a store error.
pub fn write_err<S: Store, T: std::fmt::Debug>(
    store: &S,
    mut work: impl FnMut(&mut S::Tx) -> Result<T, StoreError>,
) -> StoreError {
    match store.write(|tx| Ok(work(tx)?)) {
        Err(AppError::Store(e)) => e,
        other => panic!("expected a store error, got {other:?}"),
    }
}
