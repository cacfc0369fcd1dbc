//! Connections: one enum over both backends, a pool manager that picks the backend by URL
//! scheme, and the per-connection SQLite settings.

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{CustomizeConnection, R2D2Connection};
use diesel::{Connection, PgConnection, SqliteConnection};

use roastery_ports::StoreError;

#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Postgresql(PgConnection),
    Sqlite(SqliteConnection),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database URL, checked: `sqlite://PATH` or `postgres://…` / `postgresql://…`. Anything else
/// is refused rather than guessed (a typo must not silently create a SQLite file). Its `Debug`
/// form hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    url: String,
    backend: Backend,
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseUrl")
            .field("url", &redact(&self.url))
            .field("backend", &self.backend)
            .finish()
    }
}

/// `url` fit for a log line or a message: the password of its user part and any `password`
/// parameter replaced by `***`, everything else (scheme, user, host, database) kept.
pub fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        // The user part ends at the last `@`: a password may hold `@` or `/`.
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
                None => format!("{scheme}://{userinfo}@{host}"),
            },
            None => base.to_owned(),
        },
        None => base.to_owned(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => param.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> Result<Self, StoreError> {
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite://") || url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(StoreError::Unavailable(
                "the database URL must start with sqlite:// or postgres://".into(),
            ));
        };
        Ok(Self {
            url: url.to_owned(),
            backend,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The file of a SQLite URL (without `sqlite://` and query), `None` for PostgreSQL.
    pub fn sqlite_path(&self) -> Option<&str> {
        if self.backend != Backend::Sqlite {
            return None;
        }
        let rest = self
            .url
            .strip_prefix("sqlite://")
            .or_else(|| self.url.strip_prefix("sqlite:"))?;
        Some(rest.split('?').next().unwrap_or(rest))
    }

    pub fn as_str(&self) -> &str {
        &self.url
    }

    pub(crate) fn establish(&self) -> diesel::ConnectionResult<AnyConnection> {
        match self.backend {
            Backend::Postgres => crate::libpq::connect(&self.url).map(AnyConnection::Postgresql),
            Backend::Sqlite => {
                let path = self.sqlite_path().unwrap_or_default();
                SqliteConnection::establish(path).map(AnyConnection::Sqlite)
            }
        }
    }
}

pub(crate) struct Manager {
    pub url: DatabaseUrl,
}

impl r2d2::ManageConnection for Manager {
    type Connection = AnyConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<AnyConnection, Self::Error> {
        self.url
            .establish()
            .map_err(diesel::r2d2::Error::ConnectionError)
    }

    fn is_valid(&self, conn: &mut AnyConnection) -> Result<(), Self::Error> {
        conn.ping().map_err(diesel::r2d2::Error::QueryError)
    }

    fn has_broken(&self, conn: &mut AnyConnection) -> bool {
        conn.is_broken()
    }
}

/// Settings of the pool and of every PostgreSQL session it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolOptions {
    /// Connections in the pool; `None`: 8 on SQLite, 16 on PostgreSQL.
    pub max_size: Option<u32>,
    /// How long a statement waits for a row lock before the unit of work fails (503, nothing
    /// applied) rather than queueing without end behind a stuck transaction.
    pub lock_timeout: Duration,
    /// The longest any one statement may run.
    pub statement_timeout: Duration,
    /// A session idle inside an open transaction this long is ended by the server, releasing
    /// its locks (a process frozen mid-transaction must not hold rows forever).
    pub idle_in_transaction_timeout: Duration,
    /// Shown in `pg_stat_activity`, so operators can tell the instances apart.
    pub application_name: String,
    /// How long a unit of work waits for a free connection of the pool.
    pub connection_timeout: Duration,
    /// PostgreSQL: the bytes of listing items each store keeps to answer pages it served before
    /// (`item_cache.rs`); 0 keeps none. SQLite keeps none.
    pub listing_cache_bytes: u64,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_size: None,
            lock_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
            idle_in_transaction_timeout: Duration::from_secs(60),
            application_name: default_application_name(),
            connection_timeout: Duration::from_secs(5),
            listing_cache_bytes: crate::item_cache::KEPT_BYTES,
        }
    }
}

/// `roastery/<host>/<pid>`: unique per process, readable in `pg_stat_activity`.
pub fn default_application_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    format!("roastery/{host}/{}", std::process::id())
}

/// The PostgreSQL session settings of [`PoolOptions`], as one `SET` batch. Values are numbers
/// of milliseconds and a name limited to safe characters, so nothing needs escaping.
fn postgres_session(options: &PoolOptions) -> String {
    let name: String = options
        .application_name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "/-_.:".contains(*c))
        .take(63)
        .collect();
    format!(
        "SET lock_timeout = {}; SET statement_timeout = {}; \
         SET idle_in_transaction_session_timeout = {}; SET application_name = '{name}';",
        options.lock_timeout.as_millis().max(1),
        options.statement_timeout.as_millis().max(1),
        options.idle_in_transaction_timeout.as_millis().max(1),
    )
}

/// Per-connection settings. `busy_timeout` first, one statement per PRAGMA (Diesel's advice);
/// `foreign_keys` and `busy_timeout` hold only for the connection that sets them.
/// `synchronous = FULL`: a commit that answered 200 survives power loss, not just a crash.
#[derive(Debug)]
pub(crate) struct SessionSettings {
    postgres: String,
}

/// Session settings a server may refuse without harm to correctness, each on its own:
/// - Diesel does not expose the SQLSTATE of a deadlock, a lock timeout or a cancelled statement,
///   so `error.rs` knows them by their message: ask for untranslated messages. Only a superuser
///   (or a role granted `SET ON PARAMETER lc_messages`) may (docs/deploy.md).
/// - No JIT compilation: the service's statements take a millisecond or less, and a trace's
///   recursive query, whose row estimates are large before statistics exist, spent 30 ms to
///   0.5 s compiling (`EXPLAIN ANALYZE`: JIT emission 29 ms, execution 0.6 ms without it).
const BEST_EFFORT_SETTINGS: [&str; 2] = ["SET lc_messages = 'C';", "SET jit = off;"];

pub(crate) const SQLITE_PRAGMAS: [&str; 4] = [
    "PRAGMA busy_timeout = 10000;",
    "PRAGMA journal_mode = WAL;",
    "PRAGMA synchronous = FULL;",
    "PRAGMA foreign_keys = ON;",
];

impl CustomizeConnection<AnyConnection, diesel::r2d2::Error> for SessionSettings {
    fn on_acquire(&self, conn: &mut AnyConnection) -> Result<(), diesel::r2d2::Error> {
        match conn {
            AnyConnection::Sqlite(c) => {
                for pragma in SQLITE_PRAGMAS {
                    c.batch_execute(pragma)
                        .map_err(diesel::r2d2::Error::QueryError)?;
                }
            }
            AnyConnection::Postgresql(c) => {
                c.batch_execute(&self.postgres)
                    .map_err(diesel::r2d2::Error::QueryError)?;
                for setting in BEST_EFFORT_SETTINGS {
                    if let Err(refused) = c.batch_execute(setting) {
                        tracing::debug!(%refused, setting, "the server's own setting stays");
                    }
                }
            }
        }
        Ok(())
    }
}

pub(crate) type Pool = r2d2::Pool<Manager>;

/// Says at start-up, at warn level, when PostgreSQL sessions could not be switched to
/// untranslated messages (see `BEST_EFFORT_SETTINGS`): lock timeouts, cancelled statements and
/// deadlocks are then recognised only while the server's own `lc_messages` is English.
pub(crate) fn warn_if_messages_may_be_translated(pool: &Pool) {
    #[derive(diesel::QueryableByName)]
    struct Setting {
        #[diesel(sql_type = diesel::sql_types::Text)]
        lc_messages: String,
    }
    // An unreachable server is reported by the first use of the store, not here.
    let Ok(mut conn) = pool.get() else {
        return;
    };
    let AnyConnection::Postgresql(c) = &mut *conn else {
        return;
    };
    use diesel::RunQueryDsl;
    match diesel::sql_query("SHOW lc_messages").get_result::<Setting>(c) {
        Ok(setting) if setting.lc_messages == "C" => {}
        Ok(setting) => tracing::warn!(
            lc_messages = %setting.lc_messages,
            "this PostgreSQL role may not SET lc_messages = 'C'; lock timeouts and deadlocks are \
             recognised by their English message, so unless the server's lc_messages is English \
             they answer 500 instead of 503 or a retry (GRANT SET ON PARAMETER lc_messages to the \
             role; docs/deploy.md)"
        ),
        Err(error) => tracing::warn!(%error, "could not read lc_messages"),
    }
}

pub(crate) fn pool(url: &DatabaseUrl, options: &PoolOptions) -> Result<Pool, StoreError> {
    let default_size = match url.backend {
        Backend::Sqlite => 8,
        Backend::Postgres => 16,
    };
    r2d2::Pool::builder()
        .max_size(options.max_size.unwrap_or(default_size).max(1))
        // Connections open when asked for, never in the background: a pool thread still
        // connecting while a one-shot command exits has crashed libpq's TLS at exit.
        .min_idle(Some(0))
        // No `SELECT 1` before each unit of work (a round trip each on PostgreSQL): a connection
        // that broke is known by its failed statement and discarded when it returns to the pool.
        .test_on_check_out(false)
        .connection_timeout(options.connection_timeout)
        .connection_customizer(Box::new(SessionSettings {
            postgres: postgres_session(options),
        }))
        .build(Manager { url: url.clone() })
        .map_err(|e| StoreError::Unavailable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_log_line() {
        let cases = [
            ("postgres://u:secret@db/x", "postgres://u:***@db/x"),
            (
                "postgresql://u:p@ss/w@rd@db:5432/x",
                "postgresql://u:***@db:5432/x",
            ),
            ("postgres://u@db/x", "postgres://u@db/x"),
            (
                "postgres://db/x?password=secret&sslmode=require",
                "postgres://db/x?password=***&sslmode=require",
            ),
            ("sqlite://roastery.db", "sqlite://roastery.db"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact(url), shown);
            let debug = format!("{:?}", DatabaseUrl::parse(url).unwrap());
            assert!(
                !debug.contains("secret") && !debug.contains("rd@"),
                "{debug}"
            );
        }
    }

    #[test]
    fn session_settings_carry_every_timeout_and_a_safe_name() {
        let sql = postgres_session(&PoolOptions {
            lock_timeout: Duration::from_secs(3),
            application_name: "roastery/h'; DROP TABLE x;--/1".into(),
            ..PoolOptions::default()
        });
        assert!(sql.contains("SET lock_timeout = 3000;"), "{sql}");
        assert!(sql.contains("SET statement_timeout = 30000;"), "{sql}");
        assert!(
            sql.contains("idle_in_transaction_session_timeout = 60000;"),
            "{sql}"
        );
        assert!(
            sql.contains("application_name = 'roastery/hDROPTABLEx--/1';"),
            "{sql}"
        );
    }

    /// `.cargo/config.toml` builds SQLite with the query planner stability guarantee; without
    /// it every statement with `LIMIT ?` is compiled again on each execution.
    #[test]
    fn sqlite_is_built_with_the_query_planner_stability_guarantee() {
        use diesel::RunQueryDsl;
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        let used: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "sqlite_compileoption_used('ENABLE_QPSG')",
        ))
        .get_result(&mut conn)
        .unwrap();
        assert_eq!(used, 1);
    }

    #[test]
    fn postgres_sessions_ask_for_untranslated_messages_and_no_jit() {
        use diesel::RunQueryDsl;
        use diesel::sql_types::Text;

        #[derive(diesel::QueryableByName)]
        struct Setting {
            #[diesel(sql_type = Text)]
            lc_messages: String,
        }
        #[derive(diesel::QueryableByName)]
        struct Jit {
            #[diesel(sql_type = Text)]
            jit: String,
        }
        let Ok(url) = std::env::var("ROASTERY_TEST_DATABASE_URL") else {
            eprintln!("skipped: ROASTERY_TEST_DATABASE_URL is not set");
            return;
        };
        let pool = pool(&DatabaseUrl::parse(&url).unwrap(), &PoolOptions::default()).unwrap();
        let mut conn = pool.get().unwrap();
        let AnyConnection::Postgresql(c) = &mut *conn else {
            panic!("{url} is not a PostgreSQL URL");
        };
        let setting: Setting = diesel::sql_query("SHOW lc_messages").get_result(c).unwrap();
        assert_eq!(setting.lc_messages, "C");
        let jit: Jit = diesel::sql_query("SHOW jit").get_result(c).unwrap();
        assert_eq!(jit.jit, "off");
    }
}
