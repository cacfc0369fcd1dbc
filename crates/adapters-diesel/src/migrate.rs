//! Embedded migrations, one folder per backend with the same version ids.

use diesel::RunQueryDsl;
use diesel::connection::SimpleConnection;
use diesel::sql_query;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use roastery_ports::StoreError;

use crate::connection::{AnyConnection, DatabaseUrl};

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// An arbitrary, fixed key: server instances starting together take turns migrating.
const MIGRATION_LOCK: i64 = 0x526f_6173_7465_7279;

/// Runs pending migrations on a dedicated connection. Instances starting together take turns:
/// on PostgreSQL under an advisory lock, on SQLite under an exclusive lock of a file beside the
/// database (each migration is its own transaction, so nothing inside SQLite spans the run).
pub(crate) fn run(url: &DatabaseUrl) -> Result<(), StoreError> {
    let _turn = sqlite_turn(url)?;
    let mut conn = url
        .establish()
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| {
        StoreError::Internal(format!("migration failed: {e}"))
    };
    match &mut conn {
        AnyConnection::Sqlite(c) => {
            // Table rebuilds in SQLite migrations need foreign keys off; they are checked after.
            c.batch_execute("PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = OFF;")
                .map_err(crate::error::store_error)?;
        }
        AnyConnection::Postgresql(c) => {
            sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
                .execute(c)
                .map_err(crate::error::store_error)?;
        }
    }
    let result = match &mut conn {
        AnyConnection::Sqlite(_) => conn.run_pending_migrations(SQLITE).map(|v| v.len()),
        AnyConnection::Postgresql(_) => conn.run_pending_migrations(POSTGRES).map(|v| v.len()),
    };
    if let AnyConnection::Postgresql(c) = &mut conn {
        sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
            .execute(c)
            .map_err(crate::error::store_error)?;
    }
    let applied = result.map_err(failed)?;
    if let AnyConnection::Sqlite(c) = &mut conn {
        check_foreign_keys(c)?;
    }
    if applied > 0 {
        tracing::info!(applied, "database migrations applied");
    }
    Ok(())
}

/// The exclusive lock of `<database file>.migrate-lock`, held until dropped; `None` for
/// PostgreSQL and for an in-memory SQLite database.
fn sqlite_turn(url: &DatabaseUrl) -> Result<Option<std::fs::File>, StoreError> {
    let Some(path) = url.sqlite_path() else {
        return Ok(None);
    };
    if path.is_empty() || path.starts_with(":memory:") {
        return Ok(None);
    }
    let lock_path = format!("{path}.migrate-lock");
    let failed = |e: std::io::Error| {
        StoreError::Unavailable(format!("locking {lock_path} for migrations: {e}"))
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(failed)?;
    file.lock().map_err(failed)?;
    Ok(Some(file))
}

fn check_foreign_keys(conn: &mut diesel::SqliteConnection) -> Result<(), StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Violation {
        #[diesel(sql_type = diesel::sql_types::Text)]
        table: String,
    }
    let violations: Vec<Violation> = sql_query("PRAGMA foreign_key_check")
        .load(conn)
        .map_err(crate::error::store_error)?;
    match violations.first() {
        None => Ok(()),
        Some(v) => Err(StoreError::Internal(format!(
            "migrations left broken foreign keys in table {}",
            v.table
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    fn versions(backend: &str) -> BTreeSet<String> {
        let dir = format!("{}/../../migrations/{backend}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn both_backends_have_the_same_migrations() {
        let sqlite = versions("sqlite");
        assert!(!sqlite.is_empty());
        assert_eq!(sqlite, versions("postgres"));
    }
}
