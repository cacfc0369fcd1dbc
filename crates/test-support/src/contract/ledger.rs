//! The ledger.

use roastery_domain::ledger::{EntryKind, Movement, Origin, entries};
use roastery_domain::stock::LotKind;
use roastery_domain::stock::TypedLotRef;
use roastery_ports::Store;
use roastery_ports::repo::{LedgerFilter, TraceRepo};
use uuid::Uuid;

use super::green_lot::kg;
use super::{all_pages, at, read, write};

pub fn ledger_entries_filter_and_page_newest_first<S: Store>(store: S) {
    let lot = |n| TypedLotRef {
        id: Uuid::from_u128(n),
        kind: LotKind::Green,
    };
    let mut next = 0u128;
    let mut made = Vec::new();
    for (n, minutes) in [(1, 0), (2, 1), (1, 2), (1, 2)] {
        let origin = Origin {
            operation: "inventory.green.importGreenLot".into(),
            client_id: "client-a".into(),
            created_date: at(minutes),
        };
        let movement = Movement::created(lot(n), EntryKind::Import, kg("10"));
        made.extend(entries(&[movement], &origin, || {
            next += 1;
            Uuid::from_u128(next)
        }));
    }
    write(&store, |tx| tx.insert_ledger_entries(&made));
    let newest_first = |mut v: Vec<_>| {
        v.sort_by_key(|e: &roastery_domain::ledger::LedgerEntry| {
            std::cmp::Reverse((e.created_date, e.id))
        });
        v
    };
    let all = all_pages(3, |page| {
        read(&store, |tx| {
            tx.list_ledger_entries(&LedgerFilter::default(), page)
        })
    });
    assert_eq!(all, newest_first(made.clone()));
    let of_one = LedgerFilter {
        lot_id: Some(lot(1).id),
        from: Some(at(1)),
        to: None,
    };
    let listed = all_pages(1, |page| {
        read(&store, |tx| tx.list_ledger_entries(&of_one, page))
    });
    let expected: Vec<_> = made
        .iter()
        .filter(|e| e.lot.id == lot(1).id && e.created_date >= at(1))
        .cloned()
        .collect();
    assert_eq!(listed, newest_first(expected));
    assert_eq!(listed.len(), 2);
}
