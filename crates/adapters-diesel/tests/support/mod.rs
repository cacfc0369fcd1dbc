//! Test databases for the store tests: a SQLite file in a temporary folder, or a fresh PostgreSQL
//! database on the server named by `ROASTERY_TEST_DATABASE_URL`, dropped when the test ends.

use diesel::{Connection, PgConnection, RunQueryDsl};

pub const PG_ENV: &str = "ROASTERY_TEST_DATABASE_URL";

/// A database URL that stays valid while the value lives.
pub struct TestDatabase {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

pub fn sqlite() -> TestDatabase {
    let dir = tempfile::tempdir().expect("temp dir");
    TestDatabase {
        url: format!("sqlite://{}", dir.path().join("store.db").display()),
        _dir: Some(dir),
        pg: None,
    }
}

/// A fresh PostgreSQL database, or `None` (saying so) when no server is configured.
pub fn postgres(prefix: &str) -> Option<TestDatabase> {
    let Ok(admin) = std::env::var(PG_ENV) else {
        eprintln!("skipped: {PG_ENV} is not set, so this PostgreSQL test did not run");
        return None;
    };
    let name = format!("{prefix}_{}", uuid::Uuid::now_v7().simple());
    let mut conn = PgConnection::establish(&admin).expect("connect to PostgreSQL");
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .expect("create a test database");
    let server = admin.split('?').next().unwrap_or(&admin);
    let server = server.rsplit_once('/').map_or(server, |(s, _)| s);
    Some(TestDatabase {
        url: format!("{server}/{name}"),
        _dir: None,
        pg: Some((admin, name)),
    })
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take()
            && let Ok(mut conn) = PgConnection::establish(&admin)
        {
            diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut conn)
                .ok();
        }
    }
}
