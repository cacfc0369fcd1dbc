//! EUDR submissions, their poll claims, imported weights and re-verification claims.

use roastery_domain::dds::{ActivityType, EudrStatus};
use roastery_domain::due_diligence::Verification;
use roastery_domain::ledger::EntryKind;
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_domain::submission::{HistoryEntry, Submission, SubmissionStatus};
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::Store;
use roastery_ports::repo::{
    DueDiligenceRepo, GreenLotRepo, SubmissionFilter, SubmissionRepo, TraceRepo,
};
use uuid::Uuid;

use super::due_diligence::due_diligence;
use super::fixtures::{all_pages, at, read, write};
use super::green_lot::{green_lot, locations};
use super::ledger::entry;

fn submission(n: u128, minutes: i64, lots: &[Uuid]) -> Submission {
    Submission {
        id: Uuid::from_u128(n),
        eu_uuid: None,
        status: SubmissionStatus::Sending,
        internal_reference_number: format!("RST-{n}"),
        activity_type: ActivityType::Import,
        green_lot_ids: lots.to_vec(),
        reference_number: None,
        verification_number: None,
        submitted_date: at(minutes),
        updated_date: at(minutes),
        history: vec![HistoryEntry {
            status: "SENDING".into(),
            date: at(minutes),
            message: None,
        }],
        statement: r#"{"operatorRole":"OPERATOR"}"#.into(),
        next_poll_at: Some(at(minutes + 30)),
    }
}

pub fn submissions_are_stored_listed_newest_first_and_filtered<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let (g1, g2) = (green_lot(1, 0, &here), green_lot(2, 0, &here));
    write(&store, |tx| {
        tx.insert_green_lot(&g1)?;
        tx.insert_green_lot(&g2)
    });
    let (s1, s2, s3) = (
        submission(11, 1, &[g1.id]),
        submission(12, 2, &[g1.id, g2.id]),
        submission(13, 3, &[g2.id]),
    );
    write(&store, |tx| {
        [&s1, &s2, &s3]
            .into_iter()
            .try_for_each(|s| tx.insert_submission(s))
    });
    let all = all_pages(2, |p| {
        read(&store, |tx| {
            tx.list_submissions(&SubmissionFilter::default(), p)
        })
    });
    assert_eq!(
        all,
        vec![s3.clone(), s2.clone(), s1.clone()],
        "newest first, as stored"
    );
    let of_g1 = all_pages(1, |p| {
        read(&store, |tx| {
            tx.list_submissions(
                &SubmissionFilter {
                    status: None,
                    green_lot_id: Some(g1.id),
                },
                p,
            )
        })
    });
    assert_eq!(of_g1, vec![s2.clone(), s1.clone()]);

    let mut changed = s1.clone();
    changed.eu_uuid = Some("c2a6d8a4-0000-4000-8000-000000000001".into());
    changed.status = SubmissionStatus::Eu(EudrStatus::Available);
    changed.reference_number = Some("26DE7XTVCZAQ2S".into());
    changed.verification_number = Some("SFFCB4Y3".into());
    changed.history.push(HistoryEntry {
        status: "AVAILABLE".into(),
        date: at(40),
        message: Some("ok".into()),
    });
    changed.next_poll_at = None;
    changed.updated_date = at(40);
    write(&store, |tx| tx.update_submission(&changed));
    assert_eq!(
        read(&store, |tx| tx.submission_for_update(s1.id)),
        Some(changed.clone())
    );
    let available = read(&store, |tx| {
        tx.list_submissions(
            &SubmissionFilter {
                status: Some("AVAILABLE".into()),
                green_lot_id: None,
            },
            &super::fixtures::page_of::<Submission>(10, None),
        )
    });
    assert_eq!(available.items, vec![changed.clone()]);
    let mut by_ids = read(&store, |tx| {
        tx.submissions_by_ids(&[s3.id, Uuid::from_u128(99), s1.id])
    });
    by_ids.sort_by_key(|s| s.id);
    assert_eq!(by_ids, vec![changed, s3]);
}

pub fn due_submissions_are_claimed_by_one_lease_at_a_time<S: Store>(store: S) {
    let (s1, s2) = (submission(21, 0, &[]), submission(22, 10, &[]));
    write(&store, |tx| {
        tx.insert_submission(&s1)?;
        tx.insert_submission(&s2)
    });
    let (a, b) = (Uuid::from_u128(501), Uuid::from_u128(502));
    // s1 falls due at 30, s2 at 40.
    assert!(write(&store, |tx| tx.claim_due_submissions(at(29), at(31), a, 10)).is_empty());
    let claimed = write(&store, |tx| tx.claim_due_submissions(at(35), at(36), a, 10));
    assert_eq!(claimed, vec![s1.clone()]);
    assert!(read(&store, |tx| tx.holds_submission(s1.id, a)));
    assert!(!read(&store, |tx| tx.holds_submission(s1.id, b)));
    // Held until 36: another lease gets nothing before, and takes it over after.
    assert!(write(&store, |tx| tx.claim_due_submissions(at(35), at(37), b, 10)).is_empty());
    let claimed = write(&store, |tx| tx.claim_due_submissions(at(41), at(42), b, 1));
    assert_eq!(
        claimed,
        vec![s1.clone()],
        "the earliest due first, up to the limit"
    );
    assert!(!read(&store, |tx| tx.holds_submission(s1.id, a)));
    // Storing it drops the claim.
    write(&store, |tx| tx.update_submission(&s1));
    assert!(!read(&store, |tx| tx.holds_submission(s1.id, b)));
}

pub fn imported_weights_and_verification_claims<S: Store>(store: S) {
    let [here, _] = locations(&store);
    let (g1, g2, g3) = (
        green_lot(1, 0, &here),
        green_lot(2, 0, &here),
        green_lot(3, 0, &here),
    );
    write(&store, |tx| {
        [&g1, &g2, &g3]
            .into_iter()
            .try_for_each(|l| tx.insert_green_lot(l))
    });
    let lot = |id| TypedLotRef {
        id,
        kind: LotKind::Green,
    };
    write(&store, |tx| {
        tx.insert_ledger_entries(&[
            entry(1, lot(g1.id), EntryKind::Import, "60", "60", None, 1),
            entry(2, lot(g2.id), EntryKind::Opening, "12.5", "12.5", None, 1),
            entry(3, lot(g1.id), EntryKind::SetWeight, "-1", "59", None, 2),
        ])
    });
    let mut weights = read(&store, |tx| tx.imported_weights(&[g1.id, g2.id, g3.id]));
    weights.sort_by_key(|(id, _)| *id);
    let kg = |s: &str| Weight::new(s.parse().unwrap(), WeightUnit::Kg).unwrap();
    assert_eq!(weights, vec![(g1.id, kg("60")), (g2.id, kg("12.5"))]);

    // A verification is stored inside the due diligence, and read back as stored.
    let mut d = due_diligence("CO", Some("25NLSN6LX69730"), 1);
    d.statements[0].verification = Some(Verification {
        result: "EXISTING_USABLE".into(),
        status: Some("AVAILABLE".into()),
        checked_date: at(3),
    });
    write(&store, |tx| {
        tx.put_due_diligence(g1.id, &d)?;
        tx.put_due_diligence(g2.id, &due_diligence("CO", None, 1))
    });
    assert_eq!(read(&store, |tx| tx.due_diligence_of(&[g1.id]))[0].1, d);
    assert_eq!(read(&store, |tx| tx.lots_with_statements()), vec![g1.id]);

    let (a, b) = (Uuid::from_u128(601), Uuid::from_u128(602));
    assert!(write(&store, |tx| tx.claim_verification(
        g1.id,
        at(10),
        at(11),
        a
    )));
    assert!(!write(&store, |tx| tx.claim_verification(
        g1.id,
        at(10),
        at(12),
        b
    )));
    assert!(write(&store, |tx| tx.claim_verification(
        g1.id,
        at(12),
        at(13),
        b
    )));
}
