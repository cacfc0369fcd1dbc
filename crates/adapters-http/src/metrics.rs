//! `GET /metrics`: request counts, latencies, rate-limit rejections and the database pool, in the
//! Prometheus text format.
//!
//! Label values come from a fixed set (the operation names, a few service paths, `unknown` for
//! everything else) so a client cannot grow the series without bound. Each operation's histogram
//! and rejection counter are resolved once, at start, so recording a request takes no lock.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry, TextEncoder,
};
use roastery_domain::operation::Operation;
use roastery_ports::PoolState;

/// The `operation` label of requests that are not operations.
pub const TOKEN: &str = "token";
const HEALTH: &str = "healthz";
const OPENAPI: &str = "openapi";
const DOCS: &str = "docs";
const METRICS: &str = "metrics";
/// Anything else: unknown operations and paths.
pub const UNKNOWN: &str = "unknown";

/// Latency buckets in seconds: from a cached read (well under a millisecond) to a slow write.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The `operation` label of a request path: an operation's name, a service path's short name, or
/// [`UNKNOWN`].
pub fn operation_label(path: &str) -> &'static str {
    static OPERATIONS: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    match path {
        "/oauth2/token" => TOKEN,
        "/healthz" => HEALTH,
        "/rpc/v1/openapi.json" => OPENAPI,
        "/docs" => DOCS,
        "/metrics" => METRICS,
        _ => path
            .strip_prefix("/rpc/v1/")
            .and_then(|name| {
                OPERATIONS
                    .get_or_init(|| {
                        Operation::ALL
                            .iter()
                            .map(|op| (op.name(), op.name()))
                            .collect()
                    })
                    .get(name)
                    .copied()
            })
            .unwrap_or(UNKNOWN),
    }
}

/// Per-label handles resolved at start.
struct Series {
    duration: Histogram,
    rate_limited: IntCounter,
}

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    series: HashMap<&'static str, Series>,
    pool_in_use: IntGauge,
    pool_idle: IntGauge,
    statements: IntCounter,
    transactions: IntCounter,
    deliveries: IntCounterVec,
    queue_pending: IntGauge,
    queue_age: prometheus::Gauge,
}

impl Metrics {
    #[allow(
        clippy::expect_used,
        reason = "metric names, help texts and labels are constants, valid by construction and unique (the unit tests build them)"
    )]
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "roastery_requests_total",
                "Requests answered, by operation and HTTP status.",
            ),
            &["operation", "status"],
        )
        .expect("valid metric");
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "roastery_request_duration_seconds",
                "Time from the request head to the response, by operation.",
            )
            .buckets(BUCKETS.to_vec()),
            &["operation"],
        )
        .expect("valid metric");
        let rate_limited = IntCounterVec::new(
            Opts::new(
                "roastery_rate_limited_total",
                "Requests refused by the rate limit (429), by operation.",
            ),
            &["operation"],
        )
        .expect("valid metric");
        let pool_in_use = IntGauge::new(
            "roastery_db_pool_connections_in_use",
            "Database connections checked out by a unit of work.",
        )
        .expect("valid metric");
        let pool_idle = IntGauge::new(
            "roastery_db_pool_connections_idle",
            "Open database connections waiting in the pool.",
        )
        .expect("valid metric");
        let statements = IntCounter::new(
            "roastery_db_statements_total",
            "Database statements sent by this instance's connections (one round trip each), \
             transaction control included.",
        )
        .expect("valid metric");
        let transactions = IntCounter::new(
            "roastery_db_transactions_total",
            "Database transactions begun by this instance's connections.",
        )
        .expect("valid metric");
        let deliveries = IntCounterVec::new(
            Opts::new(
                "roastery_webhook_deliveries_total",
                "Webhook delivery attempts by outcome: delivered, retrying (another attempt is due later) or failed (no attempt left, or a refused address).",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        let queue_pending = IntGauge::new(
            "roastery_webhook_queue_pending",
            "Webhook deliveries not yet delivered or failed, as this instance last saw them.",
        )
        .expect("valid metric");
        let queue_age = prometheus::Gauge::new(
            "roastery_webhook_queue_age_seconds",
            "Age of the oldest pending webhook delivery, as this instance last saw it.",
        )
        .expect("valid metric");
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(deliveries.clone()),
            Box::new(queue_pending.clone()),
            Box::new(queue_age.clone()),
            Box::new(duration.clone()),
            Box::new(rate_limited.clone()),
            Box::new(pool_in_use.clone()),
            Box::new(pool_idle.clone()),
            Box::new(statements.clone()),
            Box::new(transactions.clone()),
        ] {
            registry
                .register(collector)
                .expect("metric names are unique");
        }
        let labels = Operation::ALL
            .iter()
            .map(|op| op.name())
            .chain([TOKEN, HEALTH, OPENAPI, DOCS, METRICS, UNKNOWN]);
        let series = labels
            .map(|label| {
                (
                    label,
                    Series {
                        duration: duration.with_label_values(&[label]),
                        rate_limited: rate_limited.with_label_values(&[label]),
                    },
                )
            })
            .collect();
        Self {
            registry,
            requests,
            series,
            pool_in_use,
            pool_idle,
            statements,
            transactions,
            deliveries,
            queue_pending,
            queue_age,
        }
    }

    /// Counts one delivery attempt by the status it left the delivery in.
    pub fn record_delivery(&self, status: &str) {
        let outcome = match status {
            "DELIVERED" => "delivered",
            "PENDING" => "retrying",
            _ => "failed",
        };
        self.deliveries.with_label_values(&[outcome]).inc();
    }

    /// The pending deliveries and the age of the oldest.
    pub fn record_delivery_queue(&self, pending: u64, oldest: Duration) {
        self.queue_pending
            .set(i64::try_from(pending).unwrap_or(i64::MAX));
        self.queue_age.set(oldest.as_secs_f64());
    }

    /// Counts one answered request; `operation` comes from [`operation_label`].
    pub fn record(&self, operation: &'static str, status: StatusCode, elapsed: Duration) {
        let Some(series) = self
            .series
            .get(operation)
            .or_else(|| self.series.get(UNKNOWN))
        else {
            return;
        };
        series.duration.observe(elapsed.as_secs_f64());
        self.requests
            .with_label_values(&[operation, status.as_str()])
            .inc();
        if status == StatusCode::TOO_MANY_REQUESTS {
            series.rate_limited.inc();
        }
    }

    /// The text exposition, with the pool gauges read now.
    pub fn render(&self, pool: Option<PoolState>) -> String {
        if let Some(pool) = pool {
            self.pool_in_use.set(i64::from(pool.in_use));
            self.pool_idle.set(i64::from(pool.idle));
            // Counters only move forward: each takes what its source counted since last time.
            for (counter, now) in [
                (&self.statements, pool.statements),
                (&self.transactions, pool.transactions),
            ] {
                counter.inc_by(now.saturating_sub(counter.get()));
            }
        }
        let mut out = Vec::new();
        if let Err(err) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %err, "encoding metrics failed");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The `/metrics` answer.
pub fn response(metrics: &Metrics, pool: Option<PoolState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(metrics.render(pool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded() {
        assert_eq!(
            operation_label("/rpc/v1/inventory.green.listGreenLots"),
            "inventory.green.listGreenLots"
        );
        assert_eq!(operation_label("/rpc/v1/no.such.op"), UNKNOWN);
        assert_eq!(operation_label("/rpc/v1/"), UNKNOWN);
        assert_eq!(operation_label("/anything/else"), UNKNOWN);
        assert_eq!(operation_label("/oauth2/token"), TOKEN);
    }

    #[test]
    fn a_request_is_counted_timed_and_rate_limits_counted() {
        let metrics = Metrics::new();
        let op = operation_label("/rpc/v1/inventory.green.listGreenLots");
        metrics.record(op, StatusCode::OK, Duration::from_millis(3));
        metrics.record(op, StatusCode::TOO_MANY_REQUESTS, Duration::from_micros(50));
        metrics.record(TOKEN, StatusCode::OK, Duration::from_millis(40));
        let text = metrics.render(Some(PoolState {
            in_use: 2,
            idle: 5,
            statements: 40,
            transactions: 9,
        }));
        for line in [
            r#"roastery_requests_total{operation="inventory.green.listGreenLots",status="200"} 1"#,
            r#"roastery_requests_total{operation="inventory.green.listGreenLots",status="429"} 1"#,
            r#"roastery_requests_total{operation="token",status="200"} 1"#,
            r#"roastery_request_duration_seconds_count{operation="inventory.green.listGreenLots"} 2"#,
            r#"roastery_request_duration_seconds_bucket{operation="inventory.green.listGreenLots",le="0.005"} 2"#,
            r#"roastery_request_duration_seconds_bucket{operation="inventory.green.listGreenLots",le="0.0025"} 1"#,
            r#"roastery_rate_limited_total{operation="inventory.green.listGreenLots"} 1"#,
            r#"roastery_rate_limited_total{operation="token"} 0"#,
            "roastery_db_pool_connections_in_use 2",
            "roastery_db_pool_connections_idle 5",
            "roastery_db_statements_total 40",
            "roastery_db_transactions_total 9",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing `{line}` in\n{text}"
            );
        }
    }
}
