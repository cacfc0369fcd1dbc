//! The repository contract (`roastery_test_support::contract`) on every store: the in-memory
//! store the use cases are tested with, and the Diesel store on SQLite and on PostgreSQL.

#![allow(
    clippy::expect_used,
    reason = "test code: a failed setup step stops the test"
)]

use roastery_adapters_diesel::DieselStore;
use roastery_test_support::{database, store_contract};

fn diesel(db: database::TestDatabase) -> (DieselStore, database::TestDatabase) {
    let store = DieselStore::open(&db.url, Some(4)).expect("open the store");
    (store, db)
}

mod in_memory {
    use super::*;
    store_contract!(Some((
        roastery_ports::testing::InMemoryStore::default(),
        ()
    )));
}

mod sqlite {
    use super::*;
    store_contract!(Some(diesel(database::sqlite())));
}

mod postgres {
    use super::*;
    store_contract!(database::postgres("contract").map(diesel));
}
