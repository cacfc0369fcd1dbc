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
/// is refused rather than guessed (a typo must not silently create a SQLite file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    url: String,
    backend: Backend,
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
            Backend::Postgres => PgConnection::establish(&self.url).map(AnyConnection::Postgresql),
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

/// Per-connection settings. `busy_timeout` first, one statement per PRAGMA (Diesel's advice);
/// `foreign_keys` and `busy_timeout` hold only for the connection that sets them.
/// `synchronous = FULL`: a commit that answered 200 survives power loss, not just a crash.
#[derive(Debug)]
pub(crate) struct SqlitePragmas;

pub(crate) const SQLITE_PRAGMAS: [&str; 4] = [
    "PRAGMA busy_timeout = 10000;",
    "PRAGMA journal_mode = WAL;",
    "PRAGMA synchronous = FULL;",
    "PRAGMA foreign_keys = ON;",
];

impl CustomizeConnection<AnyConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut AnyConnection) -> Result<(), diesel::r2d2::Error> {
        if let AnyConnection::Sqlite(c) = conn {
            for pragma in SQLITE_PRAGMAS {
                c.batch_execute(pragma)
                    .map_err(diesel::r2d2::Error::QueryError)?;
            }
        }
        Ok(())
    }
}

pub(crate) type Pool = r2d2::Pool<Manager>;

pub(crate) fn pool(url: &DatabaseUrl, max_size: Option<u32>) -> Result<Pool, StoreError> {
    let default_size = match url.backend {
        Backend::Sqlite => 8,
        Backend::Postgres => 16,
    };
    r2d2::Pool::builder()
        .max_size(max_size.unwrap_or(default_size))
        // Connections open when asked for, never in the background: a pool thread still
        // connecting while a one-shot command exits has crashed libpq's TLS at exit.
        .min_idle(Some(0))
        .connection_timeout(Duration::from_secs(5))
        .connection_customizer(Box::new(SqlitePragmas))
        .build(Manager { url: url.clone() })
        .map_err(|e| StoreError::Unavailable(e.to_string()))
}
