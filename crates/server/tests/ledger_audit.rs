//! `roastery verify` and `roastery trace` on the real binary, on SQLite and on PostgreSQL
//! (`ROASTERY_TEST_DATABASE_URL`; skipped with a message when it is unset): the demo data set
//! agrees with its ledger, a weight changed directly in the database is named, and the ledger
//! refuses to be rewritten.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

use std::process::{Command, Output, Stdio};

use diesel::{Connection, PgConnection, RunQueryDsl, SqliteConnection};

use roastery_test_support::database::{self, TestDatabase as Db};

fn sqlite() -> Db {
    database::sqlite()
}

fn postgres() -> Option<Db> {
    database::postgres("roastery_audit")
}

fn roastery(db: &Db, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roastery"))
        .env("ROASTERY_DATABASE_URL", &db.url)
        .env_remove("ROASTERY_LOG_FORMAT")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run roastery")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs `sql` on the database directly, as an operator with a SQL shell would.
fn execute(db: &Db, sql: &str) -> Result<usize, diesel::result::Error> {
    match db.url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut conn = SqliteConnection::establish(path).expect("open SQLite");
            diesel::sql_query(sql).execute(&mut conn)
        }
        None => {
            let mut conn = PgConnection::establish(&db.url).expect("connect to PostgreSQL");
            diesel::sql_query(sql).execute(&mut conn)
        }
    }
}

fn first_id(db: &Db, table: &str) -> String {
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        id: String,
    }
    let sql = format!("SELECT id FROM {table} ORDER BY lot_number LIMIT 1");
    let rows: Vec<Row> = match db.url.strip_prefix("sqlite://") {
        Some(path) => diesel::sql_query(sql)
            .load(&mut SqliteConnection::establish(path).unwrap())
            .unwrap(),
        None => diesel::sql_query(sql)
            .load(&mut PgConnection::establish(&db.url).unwrap())
            .unwrap(),
    };
    rows.into_iter().next().expect("a lot").id
}

fn verify_names_a_lot_changed_behind_the_ledger(db: Db) {
    let seeded = roastery(&db, &["seed", "demo"]);
    assert!(seeded.status.success(), "{seeded:?}");
    let clean = roastery(&db, &["verify"]);
    assert_eq!(clean.status.code(), Some(0), "{clean:?}");
    assert!(
        stdout(&clean).starts_with("ok: 8 lots"),
        "{}",
        stdout(&clean)
    );
    assert!(
        stdout(&clean).contains("ok: 8 listing items, each the one rendered from its lot"),
        "{}",
        stdout(&clean)
    );

    // A bag of the demo blend traces back to its green lots, as a spreadsheet and as JSON.
    let blend = first_id(&db, "blended_lots");
    let csv = roastery(
        &db,
        &[
            "trace",
            &blend,
            "--direction",
            "upstream",
            "--format",
            "csv",
        ],
    );
    assert!(csv.status.success(), "{csv:?}");
    let csv = stdout(&csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("from_lot_number,from_name"), "{csv}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("PG-2,Colombia Huila Washed,INVENTORY_GREEN,PR-1,")),
        "{csv}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(",PB-1,House Blend,INVENTORY_BLEND,BLEND,")),
        "{csv}"
    );
    let green = first_id(&db, "green_lots");
    let json = roastery(
        &db,
        &[
            "trace",
            &green,
            "--direction",
            "downstream",
            "--format",
            "json",
        ],
    );
    assert!(json.status.success(), "{json:?}");
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(json["lots"][0]["lotNumber"], "PG-1");
    assert!(
        json["orders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["customer"] == "Jana Berg"),
        "{json}"
    );

    // Changed directly in the database: the ledger no longer agrees, and verify says where.
    execute(
        &db,
        "UPDATE roasted_lots SET weight_micros = weight_micros + 1 WHERE lot_number = 1",
    )
    .expect("update a lot");
    let dirty = roastery(&db, &["verify"]);
    assert_eq!(dirty.status.code(), Some(1), "{dirty:?}");
    let out = stdout(&dirty);
    assert!(out.contains("PR-1 ("), "{out}");
    assert!(out.contains("but its ledger sums to"), "{out}");
    assert!(out.contains("1 of 8 lots disagree"), "{out}");
    // The lot's stored listing item still shows the weight before the change: named too.
    let roasted = first_id(&db, "roasted_lots");
    assert!(
        out.contains(&format!(
            "roasted lot {roasted}: its stored listing item differs from the lot (stale)"
        )),
        "{out}"
    );
    assert!(out.contains("1 of 8 listing items differ"), "{out}");

    // The ledger itself cannot be rewritten to hide it.
    assert!(
        execute(
            &db,
            "UPDATE ledger_entries SET delta_micros = delta_micros + 1"
        )
        .is_err()
    );
    assert!(execute(&db, "DELETE FROM ledger_entries").is_err());
    let still = roastery(&db, &["verify"]);
    assert_eq!(still.status.code(), Some(1), "{still:?}");

    let unknown = roastery(&db, &["trace", &uuid::Uuid::nil().to_string()]);
    assert!(!unknown.status.success());
}

#[test]
fn verify_on_sqlite() {
    verify_names_a_lot_changed_behind_the_ledger(sqlite());
}

#[test]
fn verify_on_postgres() {
    if let Some(db) = postgres() {
        verify_names_a_lot_changed_behind_the_ledger(db);
    }
}
