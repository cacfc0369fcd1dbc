//! Test databases: a SQLite file in a temporary folder, or a fresh PostgreSQL database on the
//! server named by `ROASTERY_TEST_DATABASE_URL`, dropped when the value is dropped.

use diesel::{Connection, PgConnection, RunQueryDsl};

/// The variable naming the PostgreSQL server tests may create databases on.
pub const PG_ENV: &str = "ROASTERY_TEST_DATABASE_URL";

/// A database URL that stays valid while the value lives.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

/// A SQLite database file in a new temporary folder.
pub fn sqlite() -> TestDatabase {
    let dir = tempfile::tempdir().expect("temp dir");
    TestDatabase {
        url: format!("sqlite://{}", dir.path().join("store.db").display()),
        _dir: Some(dir),
        pg: None,
    }
}

/// The PostgreSQL server's URL, or `None` (saying so on stderr) when none is configured.
pub fn postgres_server() -> Option<String> {
    match std::env::var(PG_ENV) {
        Ok(url) => {
            // Before this process's first PostgreSQL connection: OpenSSL set up without its exit
            // handler, as the store sets it up (`adapters-diesel/src/libpq.rs`), so a test binary
            // that exits while a pool thread still closes a connection does not crash.
            openssl_sys::init();
            Some(url)
        }
        Err(_) => {
            eprintln!("skipped: {PG_ENV} is not set, so this PostgreSQL test did not run");
            None
        }
    }
}

/// A fresh PostgreSQL database named `<prefix>_<uuid>`, or `None` (saying so) when no server is
/// configured.
pub fn postgres(prefix: &str) -> Option<TestDatabase> {
    let admin = postgres_server()?;
    let name = format!("{prefix}_{}", uuid::Uuid::now_v7().simple());
    let mut conn = PgConnection::establish(&admin).expect("connect to PostgreSQL");
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .expect("create a test database");
    Some(TestDatabase {
        url: database_on(&admin, &name),
        _dir: None,
        pg: Some((admin, name)),
    })
}

/// The same server URL with another database name (query parameters kept).
pub fn database_on(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (admin, None),
    };
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base.get(authority_end..).and_then(|rest| rest.find('/')) {
        Some(i) => base.get(..authority_end + i).unwrap_or(base),
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

impl TestDatabase {
    /// The PostgreSQL database's name; `None` for SQLite.
    pub fn pg_name(&self) -> Option<&str> {
        self.pg.as_ref().map(|(_, name)| name.as_str())
    }

    /// The PostgreSQL server's URL it was created on and the database's name; `None` for
    /// SQLite.
    pub fn pg_admin(&self) -> Option<(&str, &str)> {
        self.pg
            .as_ref()
            .map(|(admin, name)| (admin.as_str(), name.as_str()))
    }
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

/// How many deadlocks PostgreSQL detected (and broke by aborting a transaction) in the database
/// at `url`, once every other session of it has ended: a session reports its statistics when it
/// exits at the latest. (Each statement here is its own transaction, so it reads fresh
/// statistics.)
pub fn deadlocks(url: &str) -> i64 {
    use diesel::sql_types::BigInt;

    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = PgConnection::establish(url).expect("connect to the test database");
    let mut count = |sql: &str| {
        diesel::sql_query(sql)
            .get_result::<Count>(&mut conn)
            .expect("read PostgreSQL statistics")
            .n
    };
    for _ in 0..100 {
        let others = count(
            "SELECT count(*) AS n FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        );
        if others == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    count("SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()")
}

/// Runs one SQL statement on the database at `url` (`sqlite://…` or `postgres://…`), as an
/// operator or an older release would have written it: for tests of rows today's rules refuse.
pub fn execute(url: &str, sql: &str) -> usize {
    match url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut conn = diesel::SqliteConnection::establish(path).expect("open SQLite");
            diesel::sql_query(sql).execute(&mut conn).expect("run SQL")
        }
        None => {
            let mut conn = PgConnection::establish(url).expect("connect to PostgreSQL");
            diesel::sql_query(sql).execute(&mut conn).expect("run SQL")
        }
    }
}
