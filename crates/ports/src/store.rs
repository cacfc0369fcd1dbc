//! The unit of work.
//!
//! A use case hands the store one closure; the store runs it inside one transaction over all
//! repositories ([`Repos`]) and commits only if it returns `Ok`. Write units of work are isolated
//! from each other (SQLite runs writers one at a time; PostgreSQL writers lock the rows they
//! change); where a database still reports a conflict
//! with a concurrent transaction ([`StoreError::Contention`]), the store rolls back and runs the
//! closure again, which is why it is `FnMut` and must not have effects outside the transaction.

use crate::error::AppError;
use crate::listing::ListingRepo;
use crate::repo::*;

/// Every repository, as one transaction sees them.
pub trait Repos:
    SystemRepo
    + AccountRepo
    + LocationRepo
    + ProjectRepo
    + GreenLotRepo
    + RoastRepo
    + ProfileRepo
    + BlendRepo
    + CuppingRepo
    + PhysicalRepo
    + ProductRepo
    + OrderRepo
    + TraceRepo
    + DueDiligenceRepo
    + SubmissionRepo
    + EventRepo
    + WebhookRepo
    + ListingRepo
    + PlanRepo
{
}

impl<T> Repos for T where
    T: SystemRepo
        + AccountRepo
        + LocationRepo
        + ProjectRepo
        + GreenLotRepo
        + RoastRepo
        + ProfileRepo
        + BlendRepo
        + CuppingRepo
        + PhysicalRepo
        + ProductRepo
        + OrderRepo
        + TraceRepo
        + DueDiligenceRepo
        + SubmissionRepo
        + EventRepo
        + WebhookRepo
        + ListingRepo
        + PlanRepo
{
}

pub trait Store: Clone + Send + Sync + 'static {
    type Tx: Repos;

    /// Runs `work` in a read-only transaction.
    fn read<T>(
        &self,
        work: impl FnOnce(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError>;

    /// Runs `work` in a read-only transaction, as [`Store::read`] does, for a report that
    /// follows a lot's genealogy by ids (due diligence, cost, EPCIS history): a few statements
    /// over bound id arrays, each reading a handful of rows by index, whose cost is in planning
    /// them. A store that plans statements may plan each of them once and keep the plan
    /// (PostgreSQL: a generic plan; planning at each call was two thirds of a report's database
    /// time, docs/performance.md).
    fn read_report<T>(
        &self,
        work: impl FnOnce(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read(work)
    }

    /// Runs `work` in a read-only transaction that a read replica may serve, a moment behind the
    /// primary: for listings and by-ids reads, never for token checks or reads that decide a
    /// write. Stores without replicas read as [`Store::read`] does.
    fn read_replica<T>(
        &self,
        work: impl FnOnce(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read(work)
    }

    /// Runs `work`, which issues a single statement (atomic on its own), without a
    /// transaction around it: on PostgreSQL one round trip instead of three; a replica may
    /// serve it as for [`Store::read_replica`]. For the listing read model's pages and traces
    /// (a repository method that needs several statements on some database opens its own
    /// transaction there, as [`TraceRepo::trace_parts`] does on SQLite).
    fn read_statement<T>(
        &self,
        work: impl FnOnce(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read_replica(work)
    }

    /// Runs `work`, which issues a single statement (atomic on its own), without a
    /// transaction around it, as [`Store::read_statement`] does, but always on the primary: for
    /// a report that must show the latest writes (due diligence), in one round trip on
    /// PostgreSQL instead of three.
    fn read_report_statement<T>(
        &self,
        work: impl FnOnce(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError> {
        self.read_report(work)
    }

    /// Whether [`Store::read_statement`] takes so little time, with no wait for a pooled
    /// connection, that an async worker may run it itself instead of handing it to a thread
    /// that may block (SQLite: a read on a connection of the calling thread).
    fn reads_inline(&self) -> bool {
        false
    }

    /// Runs `work` in a write transaction; commits on `Ok`, rolls back on `Err`, and retries
    /// `work` a few times when the database reports contention.
    fn write<T>(
        &self,
        work: impl FnMut(&mut Self::Tx) -> Result<T, AppError>,
    ) -> Result<T, AppError>;

    /// The connection pool's state right now, for operators' gauges; `None` for a store
    /// without a pool.
    fn pool_state(&self) -> Option<PoolState> {
        None
    }
}

/// Connections of a store's pool, and what they have run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolState {
    /// Checked out by a unit of work.
    pub in_use: u32,
    /// Open and waiting in the pool.
    pub idle: u32,
    /// Statements sent so far by this process's connections (each one round trip).
    pub statements: u64,
    /// Transactions begun so far by this process's connections.
    pub transactions: u64,
}
