//! The webhook client ignores `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`: the address checked
//! (api-decisions §13, "Safety") must be the address connected to, so a proxy set in the
//! server's environment never carries a delivery. The receiver here is the server itself (its
//! 404 for an unknown path proves the request arrived directly); the "proxy" is a listener
//! that counts connections.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;
use support::*;

async fn deliveries_go_direct_whatever_proxy_is_set(backend: Backend) {
    let Some(env) = Env::new(backend, "webhook_proxy", "core.event core.location") else {
        return;
    };
    // A "proxy" that only counts who connects, then hangs up.
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let reached = Arc::new(AtomicUsize::new(0));
    {
        let reached = reached.clone();
        std::thread::spawn(move || {
            for stream in proxy.incoming() {
                reached.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
    }
    let cert = env.dir.path().join("cert.pem");
    let cert = cert.to_str().unwrap();
    let server = env.serve_with(
        "proxy",
        &[
            ("HTTPS_PROXY", &proxy_url),
            ("https_proxy", &proxy_url),
            ("HTTP_PROXY", &proxy_url),
            ("http_proxy", &proxy_url),
            ("ALL_PROXY", &proxy_url),
            ("all_proxy", &proxy_url),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
            ("ROASTERY_WEBHOOK_ALLOW_PRIVATE", "on"),
            ("ROASTERY_WEBHOOK_CA_FILE", cert),
        ],
    );
    let account = env.account();
    let http = env.client();
    let base = server.base();
    let tok = token(&http, &base, &account).await;
    // The server answers an unknown path itself: 404.
    let hook = call_ok(
        &http,
        &base,
        &tok,
        "core.event.createWebhook",
        json!({"data": {"url": format!("{base}/hooks/roastery")}}),
    )
    .await;
    let hook_id = hook["result"]["webhook"]["id"].as_str().unwrap().to_owned();
    call_ok(
        &http,
        &base,
        &tok,
        "core.location.importLocation",
        json!({"data": {"name": "Hamburg"}}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let delivery: Value = loop {
        let listed = call_ok(
            &http,
            &base,
            &tok,
            "core.event.listDeliveries",
            json!({"params": {"filter": {"webhookId": hook_id}}}),
        )
        .await;
        let first = listed["result"]["deliveries"][0].clone();
        if !first["httpStatus"].is_null() || !first["error"].is_null() {
            break first;
        }
        assert!(Instant::now() < deadline, "no attempt: {listed}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        delivery["httpStatus"], 404,
        "the receiver itself answered: {delivery}"
    );
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "nothing went through the proxy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_deliveries_ignore_proxy_variables_sqlite() {
    deliveries_go_direct_whatever_proxy_is_set(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_deliveries_ignore_proxy_variables_postgres() {
    deliveries_go_direct_whatever_proxy_is_set(Backend::Postgres).await;
}
