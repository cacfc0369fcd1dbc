//! `src/schema.rs` says what the migrations make: after every migration has run, each table it
//! declares has exactly its columns with their types and nullability, on SQLite and on
//! PostgreSQL; and every table the migrations make is declared, but for the few the code reaches by
//! raw SQL only. (Column order may differ: Diesel names every column it selects.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed setup step or assertion stops the test with its message"
)]

use std::collections::BTreeMap;

use diesel::sql_types::{Integer, Text};
use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl, SqliteConnection};
use roastery_adapters_diesel::DieselStore;
use roastery_test_support::database;

/// Tables that are not in `schema.rs`, and why.
const NOT_DECLARED: [(&str, &str); 2] = [
    (
        "__diesel_schema_migrations",
        "Diesel's own record of the migrations run",
    ),
    (
        "rate_limits",
        "PostgreSQL only, read and written by raw SQL in rate_limit.rs",
    ),
];

/// Columns that are not in `schema.rs`, and why.
const COLUMNS_NOT_DECLARED: [(&str, &str, &str); 3] = [
    ("green_lots", "listing_digest", DIGEST_ONLY),
    ("roasted_lots", "listing_digest", DIGEST_ONLY),
    ("blended_lots", "listing_digest", DIGEST_ONLY),
];

const DIGEST_ONLY: &str =
    "PostgreSQL only, computed by the database, read by raw SQL in listing.rs";

/// A column as both sides see it: name, portable type, nullable.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Column {
    name: String,
    sql_type: String,
    nullable: bool,
}

type Tables = BTreeMap<String, Vec<Column>>;

/// The tables of `schema.rs`, read from its `diesel::table!` blocks.
fn declared() -> Tables {
    let source = include_str!("../src/schema.rs");
    let mut tables = Tables::new();
    let mut lines = source.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line != "diesel::table! {" {
            continue;
        }
        let head = lines.next().expect("a table name");
        let name = head.split_whitespace().next().expect("a table name");
        let mut columns = Vec::new();
        for line in lines.by_ref() {
            if line == "}" {
                break;
            }
            let (column, sql_type) = line
                .trim_end_matches(',')
                .split_once(" -> ")
                .unwrap_or_else(|| panic!("a column line in table {name}: {line}"));
            let (sql_type, nullable) = match sql_type.strip_prefix("Nullable<") {
                Some(inner) => (inner.trim_end_matches('>'), true),
                None => (sql_type, false),
            };
            columns.push(Column {
                name: column.to_owned(),
                sql_type: sql_type.to_owned(),
                nullable,
            });
        }
        tables.insert(name.to_owned(), columns);
    }
    assert!(tables.len() > 20, "schema.rs was read: {tables:#?}");
    tables
}

/// A database type as Diesel names it (`Text`, `BigInt`, ...), or the database's own name when
/// Diesel has no portable type for it.
fn diesel_type(database_type: &str) -> String {
    match database_type.to_ascii_lowercase().as_str() {
        "text" => "Text",
        "bigint" => "BigInt",
        "integer" => "Integer",
        "boolean" => "Bool",
        "timestamp" | "timestamp without time zone" => "Timestamp",
        other => return other.to_owned(),
    }
    .to_owned()
}

fn compare(backend: &str, mut found: Tables) {
    for (table, _) in NOT_DECLARED {
        found.remove(table);
    }
    for (table, column, _) in COLUMNS_NOT_DECLARED {
        if let Some(columns) = found.get_mut(table) {
            columns.retain(|c| c.name != column);
        }
    }
    let declared = declared();
    let declared_names: Vec<&String> = declared.keys().collect();
    let found_names: Vec<&String> = found.keys().collect();
    assert_eq!(declared_names, found_names, "tables on {backend}");
    let by_name = |columns: &Vec<Column>| {
        let mut columns = columns.clone();
        columns.sort_by(|a, b| a.name.cmp(&b.name));
        columns
    };
    for (table, columns) in &declared {
        assert_eq!(
            Some(by_name(columns)),
            found.get(table).map(by_name),
            "table {table} on {backend}"
        );
    }
}

#[derive(QueryableByName)]
struct SqliteTable {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct SqliteColumn {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    r#type: String,
    #[diesel(sql_type = Integer)]
    notnull: i32,
    #[diesel(sql_type = Integer)]
    pk: i32,
}

#[test]
fn schema_matches_the_migrations_on_sqlite() {
    let db = database::sqlite();
    drop(DieselStore::open(&db.url, Some(1)).expect("migrate"));
    let path = db.url.trim_start_matches("sqlite://");
    let mut conn = SqliteConnection::establish(path).expect("open the database");
    let names: Vec<SqliteTable> = diesel::sql_query(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .load(&mut conn)
    .expect("list tables");
    let mut found = Tables::new();
    for SqliteTable { name } in names {
        let columns: Vec<SqliteColumn> = diesel::sql_query(format!(
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info('{name}') ORDER BY cid"
        ))
        .load(&mut conn)
        .expect("list columns");
        let columns = columns
            .into_iter()
            .map(|c| Column {
                name: c.name,
                sql_type: diesel_type(&c.r#type),
                // SQLite lets a PRIMARY KEY column that is not an INTEGER hold NULL unless it says
                // NOT NULL; the migrations say it.
                nullable: c.notnull == 0 && c.pk == 0,
            })
            .collect();
        found.insert(name, columns);
    }
    compare("SQLite", found);
}

#[derive(QueryableByName)]
struct PgColumn {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    data_type: String,
    #[diesel(sql_type = Text)]
    is_nullable: String,
}

#[test]
fn schema_matches_the_migrations_on_postgres() {
    let Some(db) = database::postgres("schema") else {
        return;
    };
    drop(DieselStore::open(&db.url, Some(1)).expect("migrate"));
    let mut conn = PgConnection::establish(&db.url).expect("connect");
    let columns: Vec<PgColumn> = diesel::sql_query(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text \
         FROM information_schema.columns WHERE table_schema = 'public' \
         ORDER BY table_name, ordinal_position",
    )
    .load(&mut conn)
    .expect("list columns");
    let mut found = Tables::new();
    for c in columns {
        found.entry(c.table_name).or_default().push(Column {
            name: c.column_name,
            sql_type: diesel_type(&c.data_type),
            nullable: c.is_nullable == "YES",
        });
    }
    compare("PostgreSQL", found);
}
