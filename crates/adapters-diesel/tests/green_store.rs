//! Green lots under concurrency on SQLite and PostgreSQL: racing imports of one external id.
//! What a store answers one unit of work at a time is the repository contract
//! (`roastery_test_support::contract`), run on every store by `tests/contract.rs`.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_domain::green_lot::GreenLotError;
use roastery_ports::Store;
use roastery_ports::repo::GreenLotRepo;
use roastery_ports::testing::{ManualClock, SequentialIds};

use roastery_test_support::database as support;
use roastery_test_support::imports::green_import;

/// The same lot imported by several clients at once (an ERP's retry racing the original): one
/// import makes the lot, every other one is told the external id is taken (409 for the client,
/// never the store's generic conflict), and one lot holds the id.
fn simultaneous_imports_of_one_external_id(store: DieselStore) {
    const ROUNDS: usize = 8;
    const CLIENTS: usize = 4;
    let app = Roastery::new(
        store,
        Arc::new(ManualClock::default()),
        Arc::new(SequentialIds::default()),
    );
    for round in 0..ROUNDS {
        let external_id = format!("erp-{round}");
        let start = std::sync::Barrier::new(CLIENTS);
        let answers: Vec<_> = std::thread::scope(|s| {
            let clients: Vec<_> = (0..CLIENTS)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        app.import_green_lot(green_import("Guji Natural", &external_id, 60))
                    })
                })
                .collect();
            clients.into_iter().map(|c| c.join().unwrap()).collect()
        });
        let (made, refused): (Vec<_>, Vec<_>) = answers.into_iter().partition(Result::is_ok);
        assert_eq!(made.len(), 1, "round {round}: {refused:?}");
        for err in refused.into_iter().map(Result::unwrap_err) {
            assert_eq!(
                err.rule::<GreenLotError>(),
                Some(&GreenLotError::DuplicateExternalId(external_id.clone())),
                "round {round}: {err:?}"
            );
        }
        let stored = app
            .store()
            .read(|tx| Ok(tx.green_lot_by_external_id(&external_id)?))
            .unwrap()
            .expect("the lot made");
        let made = made.into_iter().next().map(|view| view.unwrap().lot.id);
        assert_eq!(Some(stored.id), made);
    }
}

#[test]
fn simultaneous_imports_of_one_external_id_on_sqlite() {
    let db = support::sqlite();
    simultaneous_imports_of_one_external_id(DieselStore::open(&db.url, Some(4)).unwrap());
}

#[test]
fn simultaneous_imports_of_one_external_id_on_postgres() {
    let Some(db) = support::postgres("green_imports") else {
        return;
    };
    simultaneous_imports_of_one_external_id(DieselStore::open(&db.url, Some(4)).unwrap());
}
