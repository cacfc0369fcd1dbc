//! The unit of work over a pooled connection.

use std::sync::Arc;
use std::time::Duration;

use diesel::Connection;
use diesel::connection::{AnsiTransactionManager, TransactionManager};

use roastery_ports::repo::StoreResult;
use roastery_ports::{AppError, Store, StoreError};

use crate::connection::{self, AnyConnection, Backend, DatabaseUrl, Pool, PoolOptions};
use crate::error::store_error;

type Tm = <AnyConnection as Connection>::TransactionManager;

/// How often a write unit of work is retried when a concurrent transaction won.
const RETRIES: u32 = 16;

#[derive(Clone)]
pub struct DieselStore {
    pool: Pool,
    /// Connections to a read replica (PostgreSQL hot standby), for [`Store::read_replica`].
    replica: Option<Pool>,
    url: DatabaseUrl,
    /// SQLite has one writer at a time anyway; queueing writers of this process here, before
    /// `BEGIN IMMEDIATE`, spares them SQLite's sleep-and-poll busy handler and its long tails.
    sqlite_writers: Arc<std::sync::Mutex<()>>,
    /// Locations and profiles read so far (they never change).
    references: Arc<crate::references::References>,
    /// Listing items read so far, by lot and digest (PostgreSQL pages).
    items: Arc<crate::item_cache::ItemCache>,
    /// Tells this store's SQLite read connections (kept per thread) from another store's.
    identity: Arc<()>,
}

impl std::fmt::Debug for DieselStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselStore")
            .field("backend", &self.url.backend())
            .finish()
    }
}

impl DieselStore {
    /// Connects, runs pending migrations and builds the pool.
    pub fn open(url: &str, pool_size: Option<u32>) -> Result<Self, StoreError> {
        Self::open_with(
            url,
            &PoolOptions {
                max_size: pool_size,
                ..PoolOptions::default()
            },
        )
    }

    /// [`DieselStore::open`] with every pool and session setting.
    pub fn open_with(url: &str, options: &PoolOptions) -> Result<Self, StoreError> {
        let url = DatabaseUrl::parse(url)?;
        crate::statements::count_from_now_on();
        crate::migrate::run(&url)?;
        let pool = connection::pool(&url, options)?;
        connection::warn_if_messages_may_be_translated(&pool);
        // SQLite pages read their items in the process: nothing to keep.
        let items = crate::item_cache::ItemCache::new(match url.backend() {
            Backend::Postgres => options.listing_cache_bytes,
            Backend::Sqlite => 0,
        });
        Ok(Self {
            pool,
            replica: None,
            url,
            sqlite_writers: Default::default(),
            references: Default::default(),
            items: Arc::new(items),
            identity: Arc::new(()),
        })
    }

    pub fn backend(&self) -> Backend {
        self.url.backend()
    }

    /// Serves listings, by-ids reads and traces from the PostgreSQL replica at `read_url` (no
    /// migrations run there: they reach it from the primary).
    /// How many connections this store may hold open at once (both pools). More units of work
    /// at a time than this only wait for a connection.
    pub fn connection_limit(&self) -> usize {
        let size = |pool: &Pool| usize::try_from(pool.max_size()).unwrap_or(usize::MAX);
        size(&self.pool).saturating_add(self.replica.as_ref().map_or(0, size))
    }

    pub fn with_read_replica(
        mut self,
        read_url: &str,
        options: &PoolOptions,
    ) -> Result<Self, StoreError> {
        let read_url = DatabaseUrl::parse(read_url)?;
        if read_url.backend() != Backend::Postgres || self.backend() != Backend::Postgres {
            return Err(StoreError::Unavailable(
                "a read replica needs PostgreSQL for both the primary and the replica".into(),
            ));
        }
        self.replica = Some(connection::pool(&read_url, options)?);
        Ok(self)
    }

    /// Rate-limit buckets shared by every instance on this database: PostgreSQL only (one
    /// SQLite process keeps its limiter in memory).
    pub fn shared_rate_limit(&self) -> Option<crate::rate_limit::PgRateLimit> {
        (self.backend() == Backend::Postgres)
            .then(|| crate::rate_limit::PgRateLimit::new(self.pool.clone()))
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    fn connection(&self, pool: &Pool) -> Result<DieselTx, StoreError> {
        pool.get()
            .map(|conn| self.tx(TxConnection::Pooled(conn)))
            .map_err(|e| StoreError::Unavailable(e.to_string()))
    }

    fn tx(&self, conn: TxConnection) -> DieselTx {
        DieselTx {
            conn,
            locking: false,
            changes: Default::default(),
            lock_on_load: None,
            locked_origin: None,
            written: Default::default(),
            references: self.references.clone(),
            items: self.items.clone(),
            held: None,
        }
    }

    /// Runs the read `work` (which is never retried) as `unit` on a connection of `pool`.
    fn read_once<T>(
        &self,
        pool: &Pool,
        unit: Unit,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let mut work = Some(work);
        self.run_on(pool, unit, &mut |tx| match work.take() {
            Some(work) => work(tx),
            None => Err(StoreError::Internal("read unit of work ran twice".into()).into()),
        })
    }

    fn run<T>(
        &self,
        unit: Unit,
        work: &mut dyn FnMut(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.run_on(&self.pool, unit, work)
    }

    fn run_on<T>(
        &self,
        pool: &Pool,
        unit: Unit,
        work: &mut dyn FnMut(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let mut tx = self.connection(pool)?;
        let write = unit == Unit::Write;
        let begin = match (self.backend(), unit) {
            (Backend::Sqlite, Unit::Write) => "BEGIN IMMEDIATE",
            (Backend::Sqlite, Unit::Read | Unit::Report) => "BEGIN",
            (Backend::Postgres, Unit::Write) => "BEGIN ISOLATION LEVEL READ COMMITTED",
            (Backend::Postgres, Unit::Read) => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            // One round trip: `SET LOCAL` ends with the transaction.
            (Backend::Postgres, Unit::Report) => {
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; \
                 SET LOCAL plan_cache_mode = force_generic_plan"
            }
        };
        begin_with(&mut tx.conn, begin).map_err(store_error)?;
        // PostgreSQL writers lock the rows they load to change (`SELECT … FOR UPDATE`, see
        // `lock.rs`): READ COMMITTED then reads the latest committed version of each after the
        // lock is granted, so read-modify-write units never lose an update, while writers of
        // other rows go on in parallel. SQLite's BEGIN IMMEDIATE makes writers take turns.
        tx.locking = write && self.backend() == Backend::Postgres;
        // Its last writes go to PostgreSQL together, in one round trip (`held_writes.rs`).
        tx.held = tx.locking.then(crate::held_writes::HeldWrites::default);
        let mut outcome = work(&mut tx);
        if outcome.is_ok() && tx.lock_on_load.is_some() {
            // A row was to be locked by its load, and no load took the lock.
            outcome = Err(StoreError::Internal(format!(
                "a lock was noted and not taken: {:?}",
                tx.lock_on_load
            ))
            .into());
        }
        if outcome.is_ok() && !tx.changes.is_empty() {
            // Committing would lose the events of these changes.
            outcome = Err(StoreError::Internal(
                "changes were noted but no events written (write through Roastery::write)".into(),
            )
            .into());
        }
        if outcome.is_ok()
            && let Err(e) = tx.send_held()
        {
            outcome = Err(e.into());
        }
        match outcome {
            Ok(value) => {
                Tm::commit_transaction(&mut *tx.conn).map_err(store_error)?;
                Ok(value)
            }
            Err(err) => {
                // A failed rollback leaves the connection broken; the pool then discards it.
                if let Err(rollback) = Tm::rollback_transaction(&mut *tx.conn) {
                    tracing::warn!(error = %rollback, "rollback failed");
                }
                Err(err)
            }
        }
    }
}

/// What a unit of work does, which decides how it begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Write,
    Read,
    /// A read of [`Store::read_report`]: on PostgreSQL each statement keeps the plan it was
    /// first given (a generic plan) instead of being planned again at each call.
    Report,
}

fn begin_with(conn: &mut AnyConnection, sql: &str) -> diesel::QueryResult<()> {
    match conn {
        AnyConnection::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, sql),
        AnyConnection::Postgresql(c) => AnsiTransactionManager::begin_transaction_sql(c, sql),
    }
}

impl Store for DieselStore {
    type Tx = DieselTx;

    fn read<T>(
        &self,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read_once(&self.pool, Unit::Read, work)
    }

    fn read_report<T>(
        &self,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read_once(&self.pool, Unit::Report, work)
    }

    fn read_replica<T>(
        &self,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let Some(replica) = &self.replica else {
            return self.read(work);
        };
        self.read_once(replica, Unit::Read, work)
    }

    fn read_statement<T>(
        &self,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        match self.backend() {
            // WAL readers never wait for the writer: a page is read on this thread's own
            // connection, with no pool and no thread hand-off.
            Backend::Sqlite => {
                let conn = crate::sqlite_reader::take_sqlite_reader(
                    &self.identity,
                    &connection::Manager {
                        url: self.url.clone(),
                    },
                )?;
                let mut tx = self.tx(TxConnection::Local(Box::new(conn)));
                let outcome = work(&mut tx);
                if let TxConnection::Local(conn) = tx.conn {
                    crate::sqlite_reader::give_back_sqlite_reader(&self.identity, *conn);
                }
                outcome
            }
            // One statement outside a transaction: one round trip.
            Backend::Postgres => {
                let mut tx = self.connection(self.replica.as_ref().unwrap_or(&self.pool))?;
                work(&mut tx)
            }
        }
    }

    // One statement outside a transaction, on the primary: one round trip on PostgreSQL.
    fn read_report_statement<T>(
        &self,
        work: impl FnOnce(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let mut tx = self.connection(&self.pool)?;
        work(&mut tx)
    }

    fn reads_inline(&self) -> bool {
        self.backend() == Backend::Sqlite
    }

    fn write<T>(
        &self,
        mut work: impl FnMut(&mut DieselTx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        let _turn = match self.backend() {
            // A poisoned lock only means another writer panicked; the database is consistent.
            Backend::Sqlite => Some(
                self.sqlite_writers
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
            Backend::Postgres => None,
        };
        let mut attempt = 0;
        loop {
            match self.run(Unit::Write, &mut work) {
                Err(AppError::Store(StoreError::Contention)) if attempt < RETRIES => {
                    attempt += 1;
                    // Back off a little, more each time, so the winners can finish; the jitter
                    // keeps transactions that collided from colliding again in lockstep.
                    let ceiling = 2u64 << attempt.min(6);
                    std::thread::sleep(Duration::from_millis(1 + jitter() % ceiling));
                }
                other => return other,
            }
        }
    }

    fn pool_state(&self) -> Option<roastery_ports::PoolState> {
        let state = self.pool.state();
        let (statements, transactions) = crate::statements::counts();
        Some(roastery_ports::PoolState {
            in_use: state.connections.saturating_sub(state.idle_connections),
            idle: state.idle_connections,
            statements,
            transactions,
        })
    }
}

/// A cheap pseudo-random number for retry jitter (no need for a cryptographic source).
fn jitter() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// A pooled connection, or a SQLite read connection kept by the thread that reads.
pub(crate) enum TxConnection {
    Pooled(r2d2::PooledConnection<connection::Manager>),
    Local(Box<AnyConnection>),
}

impl std::ops::Deref for TxConnection {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            TxConnection::Pooled(c) => c,
            TxConnection::Local(c) => c,
        }
    }
}

impl std::ops::DerefMut for TxConnection {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            TxConnection::Pooled(c) => c,
            TxConnection::Local(c) => c,
        }
    }
}

/// One transaction's access to the database.
pub struct DieselTx {
    pub(crate) conn: TxConnection,
    /// A PostgreSQL write unit of work: loaders of rows it may change lock them.
    pub(crate) locking: bool,
    /// Changes noted by the repositories and not yet turned into events.
    pub(crate) changes: roastery_domain::event::Changes,
    /// The green lot whose lock its next load takes (`lock.rs`); `None` again by commit.
    pub(crate) lock_on_load: Option<String>,
    /// The lots of the origin a transfer locked, read by its lock (`green_row.rs`).
    pub(crate) locked_origin: Option<crate::green_row::LockedOrigin>,
    /// Lots written whose listing items the unit of work has not stored yet.
    pub(crate) written: roastery_ports::listing::WrittenLots,
    pub(crate) references: Arc<crate::references::References>,
    pub(crate) items: Arc<crate::item_cache::ItemCache>,
    /// A PostgreSQL write unit of work's writes not sent yet (`held_writes.rs`); `None`: every
    /// write is sent at once.
    pub(crate) held: Option<crate::held_writes::HeldWrites>,
}

impl DieselTx {
    /// The transaction's connection, once the writes it holds are sent: every statement the
    /// unit of work runs after a held write sees that write.
    pub(crate) fn conn(&mut self) -> StoreResult<&mut AnyConnection> {
        self.send_held()?;
        Ok(&mut self.conn)
    }

    /// Sends the writes this unit of work holds (`held_writes.rs`), as one statement.
    pub(crate) fn send_held(&mut self) -> StoreResult<()> {
        let Some(held) = self.held.as_mut().filter(|h| !h.is_empty()) else {
            return Ok(());
        };
        let writes = held.take();
        let AnyConnection::Postgresql(c) = &mut *self.conn else {
            return Err(StoreError::Internal("writes held on SQLite".into()));
        };
        crate::held_writes::send(c, &writes)
    }
}

#[cfg(test)]
mod tests {
    use diesel::RunQueryDsl;
    use diesel::sql_types::{BigInt, Text};
    use roastery_ports::repo::DueDiligenceRepo;
    use uuid::Uuid;

    use super::*;

    #[derive(diesel::QueryableByName, Debug)]
    struct Plans {
        #[diesel(sql_type = Text)]
        statement: String,
        #[diesel(sql_type = BigInt)]
        generic_plans: i64,
        #[diesel(sql_type = BigInt)]
        custom_plans: i64,
    }

    /// The plans of the statements the store's one connection keeps prepared.
    fn plans_of(store: &DieselStore) -> Vec<Plans> {
        store
            .read(|tx| {
                let AnyConnection::Postgresql(c) = tx.conn()? else {
                    unreachable!("a PostgreSQL store")
                };
                Ok(diesel::sql_query(
                    "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements",
                )
                .load(c)
                .map_err(store_error)?)
            })
            .unwrap()
    }

    /// A transfer's lock (every lot of the asked lot's origin) keeps a generic plan once
    /// PostgreSQL has seen that it is as good as the custom one; its semi-join form was planned
    /// again at every call.
    #[test]
    fn a_transfers_lock_is_planned_once_on_postgresql() {
        use roastery_ports::repo::{EventRepo, GreenLotRepo};
        use roastery_test_support::contract::green_lot::{green_lot, locations};

        let Some(db) = roastery_test_support::database::postgres("origin_plans") else {
            return;
        };
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        let [here, there] = locations(&store);
        let lot = green_lot(1, 0, &here);
        let write = |work: &mut dyn FnMut(&mut DieselTx) -> StoreResult<()>| {
            store
                .write(|tx| {
                    work(tx)?;
                    drop(tx.take_changes());
                    Ok(())
                })
                .unwrap()
        };
        write(&mut |tx| tx.insert_green_lot(&lot));
        for _ in 0..8 {
            write(&mut |tx| {
                let (source, merge_target) = tx.green_lot_to_transfer(lot.id, there.id)?.unwrap();
                assert_eq!((source.id, merge_target.map(|t| t.id)), (lot.id, None));
                Ok(())
            });
        }
        let plans = plans_of(&store);
        let lock = plans
            .iter()
            .find(|p| p.statement.contains("FOR UPDATE") && p.statement.contains("origin_id"))
            .unwrap_or_else(|| panic!("no origin lock: {plans:#?}"));
        assert!(
            lock.generic_plans >= 1 && lock.custom_plans <= 5,
            "planned at every call: {lock:?}"
        );
    }

    /// A report's statements keep one generic plan; the same kind of statement in a plain read
    /// is planned again for its first five calls at least (PostgreSQL's `auto` mode), which is
    /// what a report no longer pays.
    #[test]
    fn a_reports_statements_are_planned_once_on_postgresql() {
        let Some(db) = roastery_test_support::database::postgres("report_plans") else {
            return;
        };
        // One connection: every unit of work below runs on the session read at the end.
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        let ids = [Uuid::from_u128(1), Uuid::from_u128(2)];
        for _ in 0..8 {
            store
                .read_report(|tx| Ok(tx.sized_source_green_lots(&ids, u64::MAX)?))
                .unwrap();
            store.read(|tx| Ok(tx.due_diligence_sizes(&ids)?)).unwrap();
        }
        let plans = plans_of(&store);
        let of = |part: &str| {
            plans
                .iter()
                .find(|p| p.statement.contains(part))
                .unwrap_or_else(|| panic!("no statement with {part}: {plans:#?}"))
        };
        let report = of("LEFT JOIN green_lot_due_diligence");
        assert_eq!(
            (report.generic_plans, report.custom_plans),
            (8, 0),
            "{report:?}"
        );
        let read = of("LENGTH(document)");
        assert!(read.custom_plans >= 5, "{read:?}");
    }

    /// A report's sources from one start, read as one statement outside a transaction (where
    /// no generic plan can be asked for), keep a generic plan once PostgreSQL has seen that it is
    /// as good as a custom one: the start is bound as one value. The same statement over an
    /// array of starts was planned again at every call (a millisecond each).
    #[test]
    fn a_reports_one_statement_is_planned_once_on_postgresql() {
        use roastery_domain::ledger::Reference;

        let Some(db) = roastery_test_support::database::postgres("report_statement_plans") else {
            return;
        };
        let store = DieselStore::open(&db.url, Some(1)).unwrap();
        for n in 0..10 {
            let start = [Reference::Order(Uuid::from_u128(n))];
            let sources = store
                .read_report_statement(|tx| Ok(tx.upstream_sources(&start, u64::MAX)?))
                .unwrap();
            assert!(sources.is_empty(), "{sources:?}");
        }
        let plans = plans_of(&store);
        let statement = plans
            .iter()
            .find(|p| p.statement.contains("WITH RECURSIVE start"))
            .unwrap_or_else(|| panic!("no report statement: {plans:#?}"));
        assert!(
            statement.generic_plans >= 5 && statement.custom_plans <= 5,
            "planned at every call: {statement:?}"
        );
    }
}
