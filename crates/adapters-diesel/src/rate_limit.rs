//! The rate-limit buckets of every server instance on one PostgreSQL database.
//!
//! One statement per check (an upsert that returns the new state): the row lock of the bucket
//! orders concurrent checks of one key, checks of other keys do not meet. Times come from the
//! database clock, so instances with skewed clocks still share one schedule.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{BigInt, Bool, Text};
use roastery_ports::StoreError;
use roastery_ports::rate_limit::{GcraCheck, GcraQuota, SharedRateLimit};

use crate::connection::{AnyConnection, Pool};
use crate::error::store_error;

/// GCRA in one round trip. `$2` is the emission interval, `$3` the tolerance, both in µs. A new
/// bucket starts full, so its first request passes; a refused request leaves the TAT as it was.
const CHECK: &str = "\
WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us)
INSERT INTO rate_limits AS r (bucket, tat, checked_at, allowed)
SELECT $1, now.us + $2, now.us, true FROM now
ON CONFLICT (bucket) DO UPDATE SET
    allowed = GREATEST(r.tat, EXCLUDED.checked_at) - EXCLUDED.checked_at <= $3,
    tat = CASE WHEN GREATEST(r.tat, EXCLUDED.checked_at) - EXCLUDED.checked_at <= $3
        THEN GREATEST(r.tat, EXCLUDED.checked_at) + $2 ELSE r.tat END,
    checked_at = EXCLUDED.checked_at
RETURNING r.tat, r.checked_at, r.allowed";

/// Buckets whose TAT has passed are full again and carry no state: forgotten now and then, so
/// that the table does not grow with every client id ever tried.
const SWEEP: &str = "DELETE FROM rate_limits \
    WHERE tat < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// How many checks pass between two sweeps (per process).
const SWEEP_EVERY: u64 = 4096;

/// [`CHECK`] with its parameters bound, as a statement each connection prepares once and keeps
/// (a `sql_query` would be parsed and planned at every request).
struct Check<'a> {
    bucket: &'a str,
    emission_micros: i64,
    tolerance_micros: i64,
}

kept_statement!(Check);

impl QueryFragment<Pg> for Check<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut rest = CHECK;
        while let Some((before, after)) = rest.split_once('$') {
            out.push_sql(before);
            let mut chars = after.chars();
            match chars.next() {
                Some('1') => out.push_bind_param::<Text, _>(&self.bucket)?,
                Some('2') => out.push_bind_param::<BigInt, _>(&self.emission_micros)?,
                Some('3') => out.push_bind_param::<BigInt, _>(&self.tolerance_micros)?,
                other => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("no rate-limit parameter ${other:?}").into(),
                    ));
                }
            }
            rest = chars.as_str();
        }
        out.push_sql(rest);
        Ok(())
    }
}

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = BigInt)]
    tat: i64,
    #[diesel(sql_type = BigInt)]
    checked_at: i64,
    #[diesel(sql_type = Bool)]
    allowed: bool,
}

/// Shared buckets in the `rate_limits` table of the primary.
#[derive(Clone)]
pub struct PgRateLimit {
    pool: Pool,
    checks: Arc<AtomicU64>,
}

impl PgRateLimit {
    pub(crate) fn new(pool: Pool) -> Self {
        Self {
            pool,
            checks: Arc::default(),
        }
    }
}

impl SharedRateLimit for PgRateLimit {
    fn check(&self, bucket: &str, quota: GcraQuota) -> Result<GcraCheck, StoreError> {
        let mut conn = self
            .pool
            .get()
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let AnyConnection::Postgresql(c) = &mut *conn else {
            return Err(StoreError::Internal(
                "shared rate limits need PostgreSQL".into(),
            ));
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1
            && let Err(e) = diesel::sql_query(SWEEP).execute(c)
        {
            tracing::warn!(error = %e, "sweeping rate-limit buckets failed");
        }
        let row: Row = Check {
            bucket,
            emission_micros: quota.emission_micros,
            tolerance_micros: quota.tolerance_micros(),
        }
        .get_result(c)
        .map_err(store_error)?;
        Ok(GcraCheck {
            allowed: row.allowed,
            tat_micros: row.tat,
            now_micros: row.checked_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use diesel::debug_query;

    use super::*;

    #[test]
    fn the_check_binds_each_parameter_where_it_is_used_and_its_text_never_changes() {
        let check = |bucket| Check {
            bucket,
            emission_micros: 1_000,
            tolerance_micros: 5_000,
        };
        let text = debug_query::<Pg, _>(&check("client-a")).to_string();
        let (sql, binds) = text.split_once(" -- binds: ").unwrap_or_default();
        assert_eq!(sql.matches('$').count(), 5, "{sql}");
        assert!(sql.contains("SELECT $1, now.us + $2"), "{sql}");
        assert_eq!(binds, r#"["client-a", 1000, 5000, 5000, 1000]"#);
        let other = debug_query::<Pg, _>(&check("client-b")).to_string();
        assert_eq!(other.split_once(" -- ").map(|p| p.0), Some(sql));
    }
}
