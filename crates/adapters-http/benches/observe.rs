//! What observing one request costs (`cargo bench -p roastery-adapters-http --bench observe`):
//! the request id, the operation label, the metrics and the request's context, without the log
//! line itself.
//! Plain timing loops so the bench needs no extra crate; results go in docs/performance.md.

// A bench reports by printing.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use actix_web::http::header::{HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use roastery_adapters_http::metrics::{Metrics, operation_label};
use roastery_adapters_http::request_context::{Answer, RequestContext};
use roastery_adapters_http::request_id;

const ROUNDS: u32 = 1_000_000;

/// The best of five runs of `ROUNDS` calls, in nanoseconds per call.
fn measure(name: &str, mut work: impl FnMut()) {
    for _ in 0..ROUNDS / 10 {
        work();
    }
    let best = (0..5)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..ROUNDS {
                work();
            }
            started.elapsed()
        })
        .min()
        .unwrap_or_default();
    println!(
        "{name:<48} {:>8.1} ns/request",
        best.as_nanos() as f64 / f64::from(ROUNDS)
    );
}

fn main() {
    let metrics = Metrics::new();
    let mut with_id = HeaderMap::new();
    with_id.insert(
        request_id::HEADER,
        HeaderValue::from_static("0f8e6a52-client-chosen-id"),
    );
    let without_id = HeaderMap::new();
    let path = "/rpc/v1/inventory.green.listGreenLots";
    let elapsed = Duration::from_micros(1_800);

    measure("request id: the client's, checked", || {
        black_box(request_id::of(black_box(&with_id)));
    });
    measure("request id: a new UUID v7", || {
        black_box(request_id::of(black_box(&without_id)));
    });
    measure("operation label of the path", || {
        black_box(operation_label(black_box(path)));
    });
    measure("metrics: count and time one request", || {
        metrics.record(operation_label(path), StatusCode::OK, black_box(elapsed));
    });
    measure("all of it (id, label, metrics, context, header)", || {
        let id = request_id::of(black_box(&without_id));
        let operation = operation_label(black_box(path));
        let request = RequestContext::new(id.clone(), operation, Method::POST, path);
        metrics.record(operation, StatusCode::OK, black_box(elapsed));
        request.answered(Answer {
            status: 200,
            latency_us: 1_800,
        });
        black_box(&request);
        let mut headers = HeaderMap::new();
        headers.insert(request_id::HEADER, id);
        black_box(headers);
    });
}
