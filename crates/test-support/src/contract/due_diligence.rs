//! Due diligence of green lots, and which green lots are source lots.

use roastery_domain::due_diligence::{
    DueDiligence, DueDiligenceDraft, DueDiligenceInput, SourceLot, StatementInput, SupplierInput,
};
use roastery_domain::green_lot::GreenLot;
use roastery_domain::ledger::{EntryKind, Reference};
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_ports::repo::{DueDiligenceRepo, GreenLotRepo, SizedSource, TraceRepo};
use roastery_ports::{Store, StoreError};
use uuid::Uuid;

use super::fixtures::{at, read, write, write_err};
use super::green_lot::{green_lot, locations};
use super::ledger::entry;

/// A due diligence of plots in `country`, decided at `minutes`, with a statement when given.
pub fn due_diligence(country: &str, statement: Option<&str>, minutes: i64) -> DueDiligence {
    DueDiligenceDraft::parse(DueDiligenceInput {
        country_of_production: country.into(),
        production_from: "2025-10-01".into(),
        production_to: "2026-02-28".into(),
        plots: r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.60,2.050]},"properties":{"Area":2}}]}"#.into(),
        suppliers: vec![SupplierInput {
            name: format!("Cooperative of {country}"),
            country: Some(country.into()),
            ..SupplierInput::default()
        }],
        statements: statement
            .map(|reference| StatementInput {
                reference_number: reference.into(),
                verification_number: Some("K7R8LA90".into()),
                kind: "DDS".into(),
                role: "UPSTREAM".into(),
            })
            .into_iter()
            .collect(),
        hs_code: None,
    })
    .unwrap()
    .decide(at(minutes))
}

pub fn due_diligence_is_replaced_whole_and_read_back_per_lot<S: Store>(store: S) {
    let [here, there] = locations(&store);
    let (g1, g2, g3) = (
        green_lot(1, 0, &here),
        green_lot(2, 0, &there),
        GreenLot {
            origin_id: Uuid::from_u128(77),
            ..green_lot(3, 0, &here)
        },
    );
    write(&store, |tx| {
        [&g1, &g2, &g3]
            .into_iter()
            .try_for_each(|l| tx.insert_green_lot(l))
    });
    let (d1, d2) = (
        due_diligence("CO", Some("25NLSN6LX69730"), 1),
        due_diligence("BR", None, 2),
    );
    write(&store, |tx| {
        tx.put_due_diligence(g1.id, &d1)?;
        tx.put_due_diligence(g2.id, &d2)
    });
    let mut found = read(&store, |tx| {
        tx.due_diligence_of(&[g2.id, g3.id, Uuid::from_u128(99), g1.id])
    });
    found.sort_by_key(|(id, _)| *id);
    assert_eq!(
        found,
        vec![(g1.id, d1.clone()), (g2.id, d2.clone())],
        "each lot that has one, as stored"
    );
    assert_eq!(read(&store, |tx| tx.due_diligence_of(&[])), vec![]);

    // Sizes are known without reading the documents: the stored document's length.
    let mut sizes = read(&store, |tx| {
        tx.due_diligence_sizes(&[g2.id, g3.id, Uuid::from_u128(99), g1.id])
    });
    sizes.sort_by_key(|(id, _)| *id);
    let length = |d: &DueDiligence| {
        u64::try_from(d.to_document().map_or(0, |doc| doc.len())).unwrap_or(u64::MAX)
    };
    assert_eq!(sizes, vec![(g1.id, length(&d1)), (g2.id, length(&d2))]);
    assert_eq!(read(&store, |tx| tx.due_diligence_sizes(&[])), vec![]);

    // A second put replaces the first whole.
    let replaced = due_diligence("ET", None, 5);
    write(&store, |tx| tx.put_due_diligence(g1.id, &replaced));
    assert_eq!(
        read(&store, |tx| tx.due_diligence_of(&[g1.id])),
        vec![(g1.id, replaced.clone())]
    );
    assert_eq!(
        read(&store, |tx| tx.due_diligence_of(&[g2.id])),
        vec![(g2.id, d2)],
        "the other lot's is untouched"
    );

    // Only a stored green lot has one.
    assert!(matches!(
        write_err(&store, |tx| tx.put_due_diligence(
            Uuid::from_u128(99),
            &due_diligence("CO", None, 6)
        )),
        StoreError::Internal(_)
    ));
    assert_eq!(
        read(&store, |tx| tx.due_diligence_of(&[Uuid::from_u128(99)])),
        vec![]
    );
}

fn source(lot: &GreenLot) -> SourceLot {
    SourceLot {
        id: lot.id,
        lot_number: lot.number(),
        number: lot.lot_number,
        name: lot.name.clone(),
    }
}

pub fn source_lots_are_imported_or_opened<S: Store>(store: S) {
    let [here, there] = locations(&store);
    // 1 is imported (its own origin); 2 came from 1; 3 and 4 came from a lot never stored, and
    // 3 has an opening entry.
    let g1 = green_lot(1, 0, &here);
    let g2 = GreenLot {
        origin_id: g1.id,
        ..green_lot(2, 1, &there)
    };
    let g3 = GreenLot {
        origin_id: Uuid::from_u128(77),
        ..green_lot(3, 2, &here)
    };
    let g4 = GreenLot {
        origin_id: Uuid::from_u128(77),
        ..green_lot(4, 3, &there)
    };
    write(&store, |tx| {
        [&g1, &g2, &g3, &g4]
            .into_iter()
            .try_for_each(|l| tx.insert_green_lot(l))
    });
    let lot = |l: &GreenLot| TypedLotRef {
        id: l.id,
        kind: LotKind::Green,
    };
    write(&store, |tx| {
        tx.insert_ledger_entries(&[
            entry(100, lot(&g3), EntryKind::Opening, "60.5", "60.5", None, 2),
            entry(
                101,
                lot(&g4),
                EntryKind::TransferIn,
                "60.5",
                "60.5",
                None,
                3,
            ),
        ])
    });
    let mut found = read(&store, |tx| {
        tx.source_green_lots(&[g4.id, g3.id, g2.id, Uuid::from_u128(99), g1.id])
    });
    found.sort_by_key(|s| s.id);
    assert_eq!(found, vec![source(&g1), source(&g3)]);
    assert_eq!(read(&store, |tx| tx.source_green_lots(&[g2.id])), vec![]);

    // Each source with the size of its stored due diligence, none for a source without; a lot
    // that is not a source stays out whatever it holds.
    let d3 = due_diligence("CO", None, 3);
    write(&store, |tx| {
        tx.put_due_diligence(g3.id, &d3)?;
        tx.put_due_diligence(g2.id, &d3)
    });
    let asked = [g4.id, g3.id, g2.id, Uuid::from_u128(99), g1.id];
    let sized = |read_up_to: u64| {
        let mut sized = read(&store, |tx| tx.sized_source_green_lots(&asked, read_up_to));
        sized.sort_by_key(|s| s.lot.id);
        sized
    };
    let length = u64::try_from(d3.to_document().map_or(0, |doc| doc.len())).unwrap_or(u64::MAX);
    let with = |due_diligence: Option<DueDiligence>| {
        vec![
            SizedSource {
                lot: source(&g1),
                size: None,
                due_diligence: None,
            },
            SizedSource {
                lot: source(&g3),
                size: Some(length),
                due_diligence,
            },
        ]
    };
    // Read with the lots when every asked lot's due diligence (g2's too) fits the bound.
    assert_eq!(sized(u64::MAX), with(Some(d3.clone())));
    assert_eq!(sized(2 * length), with(Some(d3.clone())));
    // Never past it.
    assert_eq!(sized(0), with(None));
    assert_eq!(sized(length - 1), with(None));
    assert_eq!(
        read(&store, |tx| tx.sized_source_green_lots(&[], u64::MAX)),
        vec![]
    );
    // Past a thousand ids (more than one statement's worth on some stores) the same lots and
    // sizes; due diligence, where a store reads it with them, as stored.
    let many: Vec<Uuid> = (1000..2000_u128)
        .map(Uuid::from_u128)
        .chain(asked)
        .collect();
    let mut sized_many = read(&store, |tx| tx.sized_source_green_lots(&many, u64::MAX));
    sized_many.sort_by_key(|s| s.lot.id);
    for (got, expected) in sized_many.iter().zip(with(Some(d3.clone()))) {
        assert_eq!((&got.lot, got.size), (&expected.lot, expected.size));
        if let Some(d) = &got.due_diligence {
            assert_eq!(Some(d), expected.due_diligence.as_ref());
        }
    }
    assert_eq!(sized_many.len(), 2);
}

/// A report's sources: the source green lots among its starts and upstream of them (a lot never
/// stored is none), each sized, with its due diligence when that of all of them fits the bound;
/// read alike inside a transaction and, as one statement, outside one.
pub fn upstream_sources_are_the_source_lots_behind_the_starts<S: Store>(store: S) {
    let g = super::ledger::genealogy(&store);
    let (g1, g2) = (&g.green[0], &g.green[1]);
    // Where the first lot is (the genealogy stored the locations).
    let alone = GreenLot {
        id: Uuid::from_u128(909),
        origin_id: Uuid::from_u128(909),
        lot_number: 909,
        external_id: None,
        ..g1.clone()
    };
    let d = due_diligence("CO", None, 3);
    write(&store, |tx| {
        tx.insert_green_lot(&alone)?;
        tx.put_due_diligence(g1.id, &d)?;
        tx.put_due_diligence(alone.id, &d)
    });
    let length = u64::try_from(d.to_document().map_or(0, |doc| doc.len())).unwrap_or(u64::MAX);
    let sources = |starts: &[Reference], read_up_to: u64| {
        let mut inside = read(&store, |tx| tx.upstream_sources(starts, read_up_to));
        let mut outside = store
            .read_report_statement(|tx| Ok(tx.upstream_sources(starts, read_up_to)?))
            .unwrap();
        inside.sort_by_key(|s| s.lot.id);
        outside.sort_by_key(|s| s.lot.id);
        assert_eq!(inside, outside, "{starts:?}");
        inside
    };
    let sized = |lot: &GreenLot, due_diligence: Option<DueDiligence>| SizedSource {
        lot: source(lot),
        size: due_diligence.as_ref().map(|_| length),
        due_diligence,
    };
    let both = |due_diligence: Option<DueDiligence>| {
        let mut both = vec![
            sized(g1, due_diligence),
            SizedSource {
                lot: source(g2),
                size: None,
                due_diligence: None,
            },
        ];
        both.sort_by_key(|s| s.lot.id);
        both
    };
    let [o30, o31] = &g.orders;
    let green = |l: &GreenLot| {
        Reference::Lot(TypedLotRef {
            id: l.id,
            kind: LotKind::Green,
        })
    };
    let roasted = |id: Uuid| {
        Reference::Lot(TypedLotRef {
            id,
            kind: LotKind::Roasted,
        })
    };
    // Orders shipped from the blend and a roast of both green lots (weight moved between them).
    assert_eq!(
        sources(&[Reference::Order(o30.id)], u64::MAX),
        both(Some(d.clone()))
    );
    assert_eq!(
        sources(&[Reference::Order(o31.id)], length),
        both(Some(d.clone()))
    );
    // Past the bound, sized and unread.
    let unread = SizedSource {
        due_diligence: None,
        ..sized(g1, Some(d.clone()))
    };
    let mut expected = vec![unread, sized(g2, None)];
    expected.sort_by_key(|s| s.lot.id);
    assert_eq!(sources(&[Reference::Order(o31.id)], length - 1), expected);
    // A green start counts itself; starts together count what each does once.
    assert_eq!(
        sources(&[green(&alone)], u64::MAX),
        vec![sized(&alone, Some(d.clone()))]
    );
    let mut all = both(Some(d.clone()));
    all.push(sized(&alone, Some(d.clone())));
    all.sort_by_key(|s| s.lot.id);
    assert_eq!(
        sources(
            &[
                green(g2),
                green(&alone),
                Reference::Order(o30.id),
                roasted(g.roasted[0].id)
            ],
            u64::MAX
        ),
        all
    );
    // The roast of a lot never stored, an unknown order, no starts: no sources.
    assert_eq!(sources(&[roasted(g.roasted[1].id)], u64::MAX), vec![]);
    assert_eq!(
        sources(&[Reference::Order(Uuid::from_u128(404))], u64::MAX),
        vec![]
    );
    assert_eq!(sources(&[], u64::MAX), vec![]);
}
