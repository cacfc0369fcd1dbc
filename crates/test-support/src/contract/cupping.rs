//! Cuppings, their results, and physical analyses.

use chrono::{DateTime, Utc};
use roastery_domain::cupping::{CuppedCoffee, Cupping, CuppingState};
use roastery_domain::cupping_result::{CuppingResult, Score, ScoringState, SensorialAttribute};
use roastery_domain::physical_analysis::{Defect, PhysicalAnalysis, ScreenSize};
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{CuppingFilter, CuppingRepo, PhysicalFilter, PhysicalRepo};
use roastery_ports::{Store, StoreError};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::fixtures::{all_pages, at, page_of, read, write, write_err};
use super::green_lot::{green_lot, locations};

pub fn lot(n: u128, kind: LotKind) -> TypedLotRef {
    TypedLotRef {
        id: Uuid::from_u128(n),
        kind,
    }
}

/// Cupping `n` (number `n`) started at `minutes`, cupping these lots; its coffees are
/// `n * 10 + 1`, `n * 10 + 2`, ... (numbered the same).
pub fn cupping(n: u128, minutes: i64, state: CuppingState, lots: &[TypedLotRef]) -> Cupping {
    Cupping::restore(
        Uuid::from_u128(n),
        i64::try_from(n).unwrap(),
        at(minutes),
        state,
        format!("SCA sheet {n}"),
        (1..)
            .zip(lots)
            .map(|(i, lot)| CuppedCoffee {
                id: Uuid::from_u128(n * 10 + i),
                number: i64::try_from(n * 10 + i).unwrap(),
                lot: *lot,
            })
            .collect(),
    )
}

fn result(
    n: u128,
    cupped_coffee_id: Uuid,
    score: &str,
    recorded_at: DateTime<Utc>,
) -> CuppingResult {
    CuppingResult {
        id: Uuid::from_u128(n),
        cupped_coffee_id,
        note: Some(format!("cup {n}: stone fruit")),
        final_score: Score::new("finalScore", score.parse().unwrap()).unwrap(),
        scoring_state: ScoringState::Included,
        evaluator: Some("Ana".into()),
        sensorial_attributes: vec![
            SensorialAttribute {
                name: "acidity".into(),
                score: Score::new("score", Decimal::new(825, 2)).unwrap(),
            },
            SensorialAttribute {
                name: "body".into(),
                score: Score::new("score", Decimal::from(7)).unwrap(),
            },
        ],
        recorded_at,
    }
}

pub fn cuppings_load_list_and_page_newest_first<S: Store>(store: S) {
    let green = lot(500, LotKind::Green);
    let roasted = lot(501, LotKind::Roasted);
    // Two start at the same instant: the id breaks the tie.
    let cuppings = [
        cupping(1, 0, CuppingState::Draft, &[green, roasted]),
        cupping(2, 5, CuppingState::Open, &[roasted]),
        cupping(3, 5, CuppingState::Closed, &[]),
        cupping(4, 9, CuppingState::Draft, &[green]),
    ];
    // Stored out of their order.
    write(&store, |tx| {
        [3, 0, 2, 1]
            .into_iter()
            .try_for_each(|i| tx.insert_cupping(&cuppings[i]))
    });
    let [c1, c2, c3, c4] = cuppings;
    assert_eq!(read(&store, |tx| tx.cupping(c1.id())), Some(c1.clone()));
    assert_eq!(read(&store, |tx| tx.cupping(Uuid::from_u128(99))), None);

    let listed = all_pages(3, |page| {
        read(&store, |tx| {
            tx.list_cuppings(&CuppingFilter::default(), page)
        })
    });
    assert_eq!(listed, vec![c4.clone(), c3.clone(), c2.clone(), c1.clone()]);
    let window = CuppingFilter {
        start_from: Some(at(5)),
        start_to: Some(at(9)),
        state: None,
    };
    let listed = all_pages(1, |page| read(&store, |tx| tx.list_cuppings(&window, page)));
    assert_eq!(
        listed,
        vec![c3.clone(), c2.clone()],
        "from inclusive, to exclusive"
    );
    let drafts = CuppingFilter {
        state: Some(CuppingState::Draft),
        ..CuppingFilter::default()
    };
    let listed = all_pages(5, |page| read(&store, |tx| tx.list_cuppings(&drafts, page)));
    assert_eq!(listed, vec![c4.clone(), c1.clone()]);
    let first = read(&store, |tx| {
        tx.list_cuppings(&CuppingFilter::default(), &page_of::<Cupping>(4, None))
    });
    assert_eq!(
        (first.items.len(), first.next),
        (4, None),
        "an exact page has no next"
    );

    // By ids: in the asked order, unknown ids skipped, each once.
    assert_eq!(
        read(&store, |tx| tx.cuppings_by_ids(&[
            c3.id(),
            Uuid::from_u128(99),
            c1.id(),
            c3.id()
        ])),
        vec![c3.clone(), c1.clone()]
    );
    assert_eq!(read(&store, |tx| tx.cuppings_by_ids(&[])), vec![]);

    // Unique id, number, cupped coffee id and cupped coffee number.
    let clashes = [
        cupping(1, 20, CuppingState::Draft, &[]),
        Cupping::restore(
            Uuid::from_u128(7),
            c2.number(),
            at(20),
            CuppingState::Draft,
            "sheet".into(),
            vec![],
        ),
        Cupping::restore(
            Uuid::from_u128(8),
            8,
            at(20),
            CuppingState::Draft,
            "sheet".into(),
            vec![CuppedCoffee {
                id: c2.coffees()[0].id,
                number: 81,
                lot: green,
            }],
        ),
        Cupping::restore(
            Uuid::from_u128(9),
            9,
            at(20),
            CuppingState::Draft,
            "sheet".into(),
            vec![CuppedCoffee {
                id: Uuid::from_u128(91),
                number: c2.coffees()[0].number,
                lot: green,
            }],
        ),
    ];
    for clash in clashes {
        let refused = write_err(&store, |tx| tx.insert_cupping(&clash));
        assert!(matches!(refused, StoreError::Duplicate(_)), "{refused:?}");
    }
    assert_eq!(
        read(&store, |tx| tx.cuppings_by_ids(&[
            Uuid::from_u128(7),
            Uuid::from_u128(8),
            Uuid::from_u128(9)
        ])),
        vec![],
        "nothing of a refused cupping is kept"
    );
}

pub fn a_cupping_state_is_written_alone<S: Store>(store: S) {
    let c = cupping(1, 0, CuppingState::Draft, &[lot(500, LotKind::Green)]);
    let other = cupping(2, 1, CuppingState::Draft, &[]);
    write(&store, |tx| {
        tx.insert_cupping(&c)?;
        tx.insert_cupping(&other)
    });
    write(&store, |tx| {
        let mut locked = tx.cupping_for_update(c.id())?.unwrap();
        assert_eq!(*locked, c);
        assert!(tx.cupping_for_update(Uuid::from_u128(99))?.is_none());
        locked.apply(|c| c.set_state(CuppingState::Open))?.unwrap();
        tx.update_cupping_state(&locked)
    });
    let opened = read(&store, |tx| tx.cupping(c.id())).unwrap();
    assert_eq!(opened.state(), CuppingState::Open);
    assert_eq!(
        opened,
        Cupping::restore(
            c.id(),
            c.number(),
            c.start_date(),
            CuppingState::Open,
            c.cupping_sheet().to_owned(),
            c.coffees().to_vec()
        )
    );
    assert_eq!(read(&store, |tx| tx.cupping(other.id())), Some(other));
    let open = CuppingFilter {
        state: Some(CuppingState::Open),
        ..CuppingFilter::default()
    };
    let listed = all_pages(5, |page| read(&store, |tx| tx.list_cuppings(&open, page)));
    assert_eq!(listed, vec![opened]);
}

pub fn cupping_results_by_cupped_coffee_oldest_first<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let green = green_lot(500, 0, &here);
    write(&store, |tx| {
        roastery_ports::repo::GreenLotRepo::insert_green_lot(tx, &green)
    });
    let c = cupping(
        1,
        0,
        CuppingState::Open,
        &[lot(500, LotKind::Green), lot(500, LotKind::Green)],
    );
    write(&store, |tx| tx.insert_cupping(&c));
    let (first, second) = (c.coffees()[0].id, c.coffees()[1].id);
    // Recorded at the same instant: the id breaks the tie.
    let r1 = result(101, first, "86.25", at(10));
    let r2 = result(102, second, "80", at(5));
    let r3 = result(103, first, "84.5", at(3));
    let r4 = CuppingResult {
        scoring_state: ScoringState::Excluded,
        ..result(104, first, "99", at(10))
    };
    write(&store, |tx| {
        tx.insert_cupping_results(&[r1.clone(), r2.clone()])?;
        tx.insert_cupping_results(&[r4.clone(), r3.clone()])
    });
    assert_eq!(
        read(&store, |tx| tx.cupping_results(&[second, first])),
        vec![r2.clone(), r3.clone(), r1.clone(), r4.clone()],
        "in the order of the cupped coffees, then oldest first"
    );
    assert_eq!(
        read(&store, |tx| tx.cupping_results(&[
            first,
            Uuid::from_u128(99),
            first
        ])),
        vec![r3.clone(), r1.clone(), r4.clone()],
        "each once, unknown ids answer nothing"
    );
    assert_eq!(read(&store, |tx| tx.cupping_results(&[])), vec![]);
    let mut scores = read(&store, |tx| tx.result_scores(&[first, Uuid::from_u128(99)]));
    scores.sort_by_key(|(id, score, _)| (*id, *score));
    assert_eq!(
        scores,
        vec![
            (first, r3.final_score, ScoringState::Included),
            (first, r1.final_score, ScoringState::Included),
            (first, r4.final_score, ScoringState::Excluded),
        ]
    );
    assert_eq!(read(&store, |tx| tx.result_scores(&[])), vec![]);

    // A result id is unique; a result belongs to a stored cupped coffee.
    let again = result(101, second, "70", at(20));
    assert!(matches!(
        write_err(&store, |tx| tx
            .insert_cupping_results(std::slice::from_ref(&again))),
        StoreError::Duplicate(_)
    ));
    let orphan = result(105, Uuid::from_u128(99), "70", at(20));
    assert!(matches!(
        write_err(&store, |tx| tx
            .insert_cupping_results(std::slice::from_ref(&orphan))),
        StoreError::Internal(_)
    ));

    // Lots exist in their own table only.
    assert!(read(&store, |tx| tx.lot_exists(LotKind::Green, green.id)));
    assert!(!read(&store, |tx| tx.lot_exists(LotKind::Roasted, green.id)));
    assert!(!read(&store, |tx| tx
        .lot_exists(LotKind::Green, Uuid::from_u128(99))));
}

pub fn analysis(n: u128, minutes: i64, analysed_lot: TypedLotRef) -> PhysicalAnalysis {
    PhysicalAnalysis {
        id: Uuid::from_u128(n),
        number: i64::try_from(n).unwrap(),
        analysis_date: at(minutes),
        analysed_lot,
        moisture: Some(Decimal::new(1075, 2)),
        water_activity: Some(Decimal::new(553_125, 6)),
        density: None,
        screen_sizes: vec![
            ScreenSize {
                size: "18".into(),
                percentage: Decimal::new(625, 1),
            },
            ScreenSize {
                size: "17/18".into(),
                percentage: Decimal::new(375, 1),
            },
        ],
        defects: vec![Defect {
            name: "quaker".into(),
            count: 3,
        }],
        note: None,
        evaluator: Some("Ana".into()),
    }
}

pub fn physical_analyses_filter_and_page_newest_first<S: Store>(store: S) {
    let (a, b) = (lot(500, LotKind::Green), lot(501, LotKind::Roasted));
    let analyses = [
        analysis(1, 0, a),
        analysis(2, 5, b),
        PhysicalAnalysis {
            moisture: None,
            water_activity: None,
            density: Some(Decimal::new(712, 0)),
            screen_sizes: vec![],
            defects: vec![],
            note: Some("sparse".into()),
            evaluator: None,
            ..analysis(3, 5, a)
        },
        analysis(4, 9, a),
    ];
    write(&store, |tx| {
        [2, 0, 3, 1]
            .into_iter()
            .try_for_each(|i| tx.insert_physical_analysis(&analyses[i]))
    });
    let [p1, p2, p3, p4] = analyses;
    let all = all_pages(3, |page| {
        read(&store, |tx| {
            tx.list_physical_analyses(&PhysicalFilter::default(), page)
        })
    });
    assert_eq!(all, vec![p4.clone(), p3.clone(), p2.clone(), p1.clone()]);
    let window = PhysicalFilter {
        from: Some(at(5)),
        to: Some(at(9)),
        lot_ids: vec![],
    };
    let listed = all_pages(1, |page| {
        read(&store, |tx| tx.list_physical_analyses(&window, page))
    });
    assert_eq!(
        listed,
        vec![p3.clone(), p2.clone()],
        "from inclusive, to exclusive"
    );
    let of_a = PhysicalFilter {
        lot_ids: vec![Uuid::from_u128(99), a.id],
        ..PhysicalFilter::default()
    };
    let listed = all_pages(2, |page| {
        read(&store, |tx| tx.list_physical_analyses(&of_a, page))
    });
    assert_eq!(listed, vec![p4.clone(), p3.clone(), p1.clone()]);

    for clash in [
        analysis(1, 20, b),
        PhysicalAnalysis {
            id: Uuid::from_u128(7),
            ..p2.clone()
        },
    ] {
        assert!(matches!(
            write_err(&store, |tx| tx.insert_physical_analysis(&clash)),
            StoreError::Duplicate(_)
        ));
    }
}
