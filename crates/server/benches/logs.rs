//! What the log line of one request costs (`cargo bench -p roastery-server --bench logs -- MODE
//! [REQUESTS]`): the request's context as the HTTP layer makes it (id, operation, method, path,
//! then client, status and latency recorded), made current as the request runs, and the `request`
//! line. Send standard error to a file, as a deployment does; for counts steadier than time on a
//! busy machine, run the binary under `perf stat -e instructions:u` or valgrind's callgrind with
//! two request counts and take the difference per request.
//!
//! MODE: `json` and `pretty` (the service's logging, lines written by a thread of their own),
//! `off` (`RUST_LOG=warn`: no request line), `json-span` (the service's JSON lines for a `tracing`
//! span around the request, as the HTTP layer made it before requests had a context of their
//! own), `json-sync` and `pretty-sync` (that span in `tracing-subscriber`'s own formats, written
//! to standard error by the request's thread, as at first).

// A bench reports by printing; a bad argument ends it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::time::Instant;

use actix_web::http::Method;
use actix_web::http::header::HeaderMap;
use roastery_adapters_http::metrics::operation_label;
use roastery_adapters_http::request_context::{self, Answer, RequestContext};
use roastery_adapters_http::request_id;
use roastery_server::config::LogFormat;
use roastery_server::logs;
use tracing_subscriber::EnvFilter;

const PATH: &str = "/rpc/v1/inventory.green.listGreenLots";

fn one_request(headers: &HeaderMap) {
    let started = Instant::now();
    let id = request_id::of(headers);
    let operation = operation_label(PATH);
    let request = RequestContext::new(id, operation, Method::POST, PATH);
    {
        // The request future is current as it is polled; authentication names the client.
        let _in = request.enter();
        request_context::record_client("rc-0f8e6a52-bench-client");
    }
    {
        // The use case runs on a blocking thread with the request current.
        let _in = request.enter();
        let _blocking = request_context::Entered::new(request_context::current());
        black_box(());
    }
    request.answered(Answer {
        status: 200,
        latency_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    });
    let _in = request.enter();
    tracing::info!("request");
}

/// A request as a `tracing` span, as the HTTP layer made it before.
fn one_request_in_a_span(headers: &HeaderMap) {
    let started = Instant::now();
    let id = request_id::of(headers);
    let operation = operation_label(PATH);
    let span = tracing::info_span!(
        "request",
        request_id = id.to_str().unwrap_or_default(),
        operation,
        method = "POST",
        path = PATH,
        client_id = tracing::field::Empty,
        status = tracing::field::Empty,
        latency_us = tracing::field::Empty,
    );
    {
        let _entered = span.enter();
        tracing::Span::current().record("client_id", "rc-0f8e6a52-bench-client");
    }
    {
        let _entered = span.enter();
        let current = tracing::Span::current();
        current.in_scope(|| black_box(()));
    }
    span.record("status", 200u16);
    span.record(
        "latency_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
    span.in_scope(|| tracing::info!("request"));
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mode = args.first().map_or("json", String::as_str);
    let requests: u32 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(200_000);
    let sync = |json: bool| {
        let logs = tracing_subscriber::fmt()
            .with_env_filter(EnvFilter::new(logs::DEFAULT_FILTER))
            .with_writer(std::io::stderr);
        if json {
            logs.json()
                .with_current_span(true)
                .with_span_list(false)
                .init();
        } else {
            logs.with_ansi(false).init();
        }
        None
    };
    let guard = match mode {
        "json" | "pretty" | "off" | "json-span" => {
            if mode == "off" {
                require_filter("warn,rustls=error");
            }
            let format = if mode == "pretty" {
                LogFormat::Pretty
            } else {
                LogFormat::Json
            };
            logs::init(Some(format), true).ok()
        }
        "json-sync" => sync(true),
        "pretty-sync" => sync(false),
        other => {
            eprintln!(
                "unknown mode {other}: json, pretty, off, json-span, json-sync or pretty-sync"
            );
            std::process::exit(2);
        }
    };
    let headers = HeaderMap::new();
    let started = Instant::now();
    let in_a_span = matches!(mode, "json-span" | "json-sync" | "pretty-sync");
    for _ in 0..requests {
        if in_a_span {
            one_request_in_a_span(black_box(&headers));
        } else {
            one_request(black_box(&headers));
        }
    }
    let elapsed = started.elapsed();
    drop(guard);
    let total = started.elapsed();
    println!(
        "{mode:<12} {requests} requests: {:.0} ns/request on the request's thread, {:.0} ns/request until written",
        elapsed.as_nanos() as f64 / f64::from(requests.max(1)),
        total.as_nanos() as f64 / f64::from(requests.max(1)),
    );
}

/// The `off` mode is the service's logging with `RUST_LOG` set as the load benchmark had it.
fn require_filter(filter: &str) {
    if std::env::var("RUST_LOG").as_deref() != Ok(filter) {
        eprintln!("mode off: run with RUST_LOG={filter}");
        std::process::exit(2);
    }
}
