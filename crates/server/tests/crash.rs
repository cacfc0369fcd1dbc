//! The real `roastery` binary under abuse, on SQLite and on PostgreSQL
//! (`ROASTERY_TEST_DATABASE_URL`; the PostgreSQL tests are skipped with a message when it is unset).
//!
//! - `crash_*`: clients write concurrently, the process is killed with SIGKILL mid-flight and
//!   restarted on the same database; every write that answered 200 must be there and the
//!   invariants must hold (weight conserved exactly, lot numbers unique and gapless).
//! - `graceful_shutdown_*`: SIGTERM while requests are half sent; they complete with 200, the
//!   process exits with success, and their writes are there after a restart.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::net::TcpStream;
use std::process::Command;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};

const SCOPES: &str = "inventory.green core.location";
/// The weight of the origin lot, moved around by the transfers.
const ORIGIN_KG: &str = "100.000001";

mod support;
use support::*;

/// The writes that answered 200.
#[derive(Default)]
struct Acknowledged {
    /// id → external id.
    locations: Vec<(String, String)>,
    /// id → (external id, weight in kg).
    lots: Vec<(String, String, Decimal)>,
    /// Destination lot ids of transfers.
    transfers: Vec<String>,
}

/// One client: imports locations and lots and moves weight of the origin between locations, until
/// the server stops answering.
async fn writer(
    http: oauth2::reqwest::Client,
    base: String,
    token: String,
    client: usize,
    origin: String,
    places: Vec<String>,
    acknowledged: Arc<AtomicUsize>,
) -> Acknowledged {
    let mut done = Acknowledged::default();
    let (mut lot, mut at) = (origin.clone(), 0usize);
    for round in 0.. {
        let (operation, body) = match round % 3 {
            0 => {
                let external = format!("LOC-{client}-{round}");
                let body = json!({"data": {"name": format!("Place {client}/{round}"), "externalId": external}});
                ("core.location.importLocation", body)
            }
            1 => {
                // An exact amount with six decimals, sent as a JSON number.
                let amount: Value =
                    serde_json::from_str(&format!("{}.{:06}", client + 1, round)).unwrap();
                let body = json!({"data": {"name": format!("Lot {client}/{round}"),
                    "externalId": format!("ERP-{client}-{round}"),
                    "weight": {"amount": amount, "unit": "KG"}}});
                ("inventory.green.importGreenLot", body)
            }
            _ => {
                let to = (at + 1 + (client + round) % 2) % 3;
                let body = json!({"data": {"greenLotId": lot,
                    "weight": {"amount": 0.123457, "unit": "KG"},
                    "destinationLocationId": places[to]}});
                ("inventory.green.transferGreenLotToLocation", body)
            }
        };
        let Ok((status, text)) = call(&http, &base, &token, operation, &body).await else {
            return done; // the server is gone
        };
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        match (status, round % 3) {
            (200, 0) => done.locations.push((
                id_of(&answer, "/result/location/id"),
                body["data"]["externalId"].as_str().unwrap().to_owned(),
            )),
            (200, 1) => done.lots.push((
                id_of(&answer, "/result/greenLot/id"),
                body["data"]["externalId"].as_str().unwrap().to_owned(),
                Decimal::from_str(&format!("{}.{:06}", client + 1, round)).unwrap(),
            )),
            (200, _) => {
                lot = id_of(&answer, "/result/destinationGreenLot/id");
                at = (at + 1 + (client + round) % 2) % 3;
                done.transfers.push(lot.clone());
            }
            // Another client emptied or consumed this lot: go back to the origin.
            (422, 2) => {
                let code = answer["error"]["code"].as_str().unwrap_or_default();
                assert!(
                    code == "invalid_weight" || code == "invalid_request",
                    "{text}"
                );
                (lot, at) = (origin.clone(), 0);
            }
            _ => panic!("unexpected answer {status} to {operation}: {text}"),
        }
        if status == 200 {
            acknowledged.fetch_add(1, Ordering::SeqCst);
        }
    }
    done
}

async fn crash_keeps_every_acknowledged_write(backend: Backend) {
    let Some(env) = Env::new(backend, "crash", SCOPES) else {
        return;
    };
    let account = env.account();
    let http = env.client();
    let mut server = env.serve("first");
    let base = server.base();
    let token = token(&http, &base, &account).await;

    let mut places = Vec::new();
    for name in ["A", "B", "C"] {
        let body = call_ok(&http, &base, &token, "core.location.importLocation",
            json!({"data": {"name": format!("Warehouse {name}"), "externalId": format!("WH-{name}")}})).await;
        places.push(id_of(&body, "/result/location/id"));
    }
    let body: Value = serde_json::from_str(&format!(
        r#"{{"data": {{"name": "Origin", "externalId": "ORIGIN", "weight": {{"amount": {ORIGIN_KG}, "unit": "KG"}}, "locationId": "{}"}}}}"#,
        places[0]
    ))
    .unwrap();
    let body = call_ok(&http, &base, &token, "inventory.green.importGreenLot", body).await;
    let origin = id_of(&body, "/result/greenLot/id");

    let clients = 6;
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for client in 0..clients {
        tasks.push(tokio::spawn(writer(
            http.clone(),
            base.clone(),
            token.clone(),
            client,
            origin.clone(),
            places.clone(),
            acknowledged.clone(),
        )));
    }
    // Kill once the clients are well under way, while they keep writing.
    let deadline = Instant::now() + Duration::from_secs(120);
    while acknowledged.load(Ordering::SeqCst) < 150 {
        assert!(Instant::now() < deadline, "the clients made no progress");
        assert!(
            tasks.iter().all(|t| !t.is_finished()),
            "a client stopped early: {}",
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("wait for the killed server");
    let mut done = Acknowledged::default();
    for task in tasks {
        let one = task.await.expect("client task");
        done.locations.extend(one.locations);
        done.lots.extend(one.lots);
        done.transfers.extend(one.transfers);
    }
    assert!(
        !done.locations.is_empty() && !done.lots.is_empty() && !done.transfers.is_empty(),
        "every kind of write was acknowledged before the kill"
    );

    let server = env.serve("after-crash");
    let base = server.base();
    let http = env.client();
    let token = self::token(&http, &base, &account).await;

    let locations = list_all(
        &http,
        &base,
        &token,
        "core.location.listLocations",
        "locations",
    )
    .await;
    let by_id: HashMap<&str, &Value> = locations
        .iter()
        .map(|(l, _)| (l["id"].as_str().unwrap(), l))
        .collect();
    for (id, external) in &done.locations {
        let found = by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("acknowledged location {id} lost"));
        assert_eq!(found["externalId"], json!(external));
    }
    assert_eq!(by_id.len(), locations.len(), "no location twice");

    let lots = list_all(
        &http,
        &base,
        &token,
        "inventory.green.listGreenLots",
        "greenLots",
    )
    .await;
    let lots_by_id: HashMap<&str, (&Value, Decimal)> = lots
        .iter()
        .map(|(l, w)| (l["id"].as_str().unwrap(), (l, w.expect("a weight"))))
        .collect();
    assert_eq!(lots_by_id.len(), lots.len(), "no lot twice");
    for (id, external, weight) in &done.lots {
        let (found, stored) = lots_by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("acknowledged lot {id} lost"));
        assert_eq!(found["externalId"], json!(external));
        assert_eq!(stored, weight, "the imported weight, exactly");
    }
    for id in &done.transfers {
        let (found, _) = lots_by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("acknowledged transfer destination {id} lost"));
        assert_eq!(found["name"], json!("Origin"));
    }
    // The origin's weight is only moved, never created or lost, even by a transfer cut short.
    let origin_total: Decimal = lots
        .iter()
        .filter(|(l, _)| l["name"] == json!("Origin"))
        .map(|(_, w)| w.unwrap())
        .sum();
    assert_eq!(origin_total, Decimal::from_str(ORIGIN_KG).unwrap());
    // Lot numbers: unique and gapless (an interrupted write used none up).
    let numbers: HashSet<&str> = lots
        .iter()
        .map(|(l, _)| l["lotNumber"].as_str().unwrap())
        .collect();
    assert_eq!(numbers.len(), lots.len(), "duplicate lot numbers");
    for n in 1..=lots.len() {
        assert!(
            numbers.contains(format!("PG-{n}").as_str()),
            "PG-{n} missing"
        );
    }
    eprintln!(
        "acknowledged before SIGKILL: {} locations, {} lots, {} transfers; stored after restart: {} locations, {} lots",
        done.locations.len(),
        done.lots.len(),
        done.transfers.len(),
        locations.len(),
        lots.len()
    );
}

/// A request body that sends its first half, then waits at `gate` before sending the rest.
struct SlowBody {
    first: Vec<u8>,
    rest: Vec<u8>,
    gate: Option<std::sync::mpsc::Receiver<()>>,
    waiting: Arc<AtomicUsize>,
}

impl Read for SlowBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.first.is_empty() {
            let n = buf.len().min(self.first.len());
            buf[..n].copy_from_slice(&self.first[..n]);
            self.first.drain(..n);
            return Ok(n);
        }
        if let Some(gate) = self.gate.take() {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            gate.recv().ok();
        }
        let n = buf.len().min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest.drain(..n);
        Ok(n)
    }
}

async fn graceful_shutdown_finishes_requests_in_flight(backend: Backend) {
    let Some(env) = Env::new(backend, "crash", SCOPES) else {
        return;
    };
    let account = env.account();
    let http = env.client();
    let mut server = env.serve("first");
    let base = server.base();
    let token = token(&http, &base, &account).await;

    // Bodies of about 600 KiB (valid JSON padded with whitespace), each stopped halfway until
    // SIGTERM was sent and the server stopped accepting connections.
    let slow = 4;
    let waiting = Arc::new(AtomicUsize::new(0));
    let mut gates = Vec::new();
    let mut requests = Vec::new();
    for i in 0..slow {
        let data = json!({"name": format!("Slow {i}"), "externalId": format!("SLOW-{i}"),
            "weight": {"amount": 1.5, "unit": "KG"}});
        let body = format!("{{{}\"data\": {data}}}", " ".repeat(600 * 1024)).into_bytes();
        let (open, gate) = std::sync::mpsc::channel();
        gates.push(open);
        let half = body.len() / 2;
        let slow_body = SlowBody {
            first: body[..half].to_vec(),
            rest: body[half..].to_vec(),
            gate: Some(gate),
            waiting: waiting.clone(),
        };
        let cert = env.cert_der.clone();
        let (base, token) = (base.clone(), token.clone());
        requests.push(std::thread::spawn(move || {
            let client = oauth2::reqwest::blocking::ClientBuilder::new()
                .add_root_certificate(
                    oauth2::reqwest::Certificate::from_der(&cert).expect("certificate"),
                )
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(120))
                .build()
                .expect("client");
            let response = client
                .post(format!("{base}/rpc/v1/inventory.green.importGreenLot"))
                .bearer_auth(token)
                .header("Content-Type", "application/json")
                .body(oauth2::reqwest::blocking::Body::new(slow_body))
                .send()
                .map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            Ok::<_, String>((status, response.text().map_err(|e| e.to_string())?))
        }));
    }
    // Each request is connected and half sent.
    let deadline = Instant::now() + Duration::from_secs(60);
    while waiting.load(Ordering::SeqCst) < slow {
        assert!(Instant::now() < deadline, "the slow requests did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // `http` keeps its idle keep-alive connection open across the shutdown.
    terminate(&server);
    // The server stops accepting: it has begun shutting down.
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", server.port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "still accepting after SIGTERM: {}",
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        server.child.try_wait().expect("try_wait").is_none(),
        "the server exited with requests in flight"
    );
    for gate in gates {
        gate.send(()).expect("the request still waits");
    }
    let mut ids = Vec::new();
    for request in requests {
        let (status, text) = request
            .join()
            .expect("request thread")
            .expect("the request in flight got an answer");
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        ids.push(id_of(&answer, "/result/greenLot/id"));
    }
    // The idle connection does not hold the exit until the 30 s drain timeout.
    let status = server.wait_for_exit(Duration::from_secs(10));
    drop(http);
    assert!(status.success(), "exit status {status}: {}", server.logs());
    let logs = server.logs();
    assert!(logs.contains("stopped"), "{logs}");
    // The server logged the requests after it had begun shutting down.
    let (before, after) = logs
        .split_once("SIGTERM received")
        .unwrap_or_else(|| panic!("no SIGTERM in the logs: {logs}"));
    assert!(!before.contains("inventory.green.importGreenLot"), "{logs}");
    let answered = after
        .lines()
        .filter(|l| l.contains("inventory.green.importGreenLot"))
        .count();
    assert_eq!(answered, slow, "{logs}");

    let server = env.serve("after-shutdown");
    let base = server.base();
    let http = env.client();
    let token = self::token(&http, &base, &account).await;
    let lots = list_all(
        &http,
        &base,
        &token,
        "inventory.green.listGreenLots",
        "greenLots",
    )
    .await;
    let stored: HashSet<&str> = lots
        .iter()
        .map(|(l, _)| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), slow);
    for id in &ids {
        assert!(
            stored.contains(id.as_str()),
            "lot {id} of a finished request lost"
        );
    }
}

fn terminate(server: &Server) {
    let sent = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
}

/// SIGTERM with idle keep-alive connections only: they are closed at once and the process exits
/// within a few seconds, far below the drain timeout.
async fn idle_keep_alive_connections_do_not_hold_the_shutdown(backend: Backend) {
    let Some(env) = Env::new(backend, "crash", SCOPES) else {
        return;
    };
    let account = env.account();
    let mut server = env.serve("idle");
    let base = server.base();
    // Two clients, each keeping the connection of its last request open (reqwest pools it).
    let clients = [env.client(), env.client()];
    for http in &clients {
        let token = token(http, &base, &account).await;
        call_ok(
            http,
            &base,
            &token,
            "core.location.listLocations",
            json!({}),
        )
        .await;
    }
    let sent_at = Instant::now();
    terminate(&server);
    let status = server.wait_for_exit(Duration::from_secs(20));
    let took = sent_at.elapsed();
    assert!(status.success(), "exit status {status}: {}", server.logs());
    assert!(
        took < Duration::from_secs(5),
        "exit took {took:?} with the 30 s drain timeout: {}",
        server.logs()
    );
    drop(clients);
}

/// The drain timeout bounds a shutdown that a request in flight would hold forever.
async fn the_drain_timeout_bounds_the_shutdown(backend: Backend) {
    let Some(env) = Env::new(backend, "crash", SCOPES) else {
        return;
    };
    let account = env.account();
    let mut server = env.serve_with(
        "drain",
        &[
            ("ROASTERY_DRAIN_TIMEOUT", "2"),
            ("ROASTERY_BODY_TIMEOUT", "600"),
        ],
    );
    let base = server.base();
    let http = env.client();
    let token = token(&http, &base, &account).await;
    // A request that sends half its body and then never the rest.
    let waiting = Arc::new(AtomicUsize::new(0));
    let (open, gate) = std::sync::mpsc::channel::<()>();
    let body = format!("{{{}\"data\": {{}}}}", " ".repeat(600 * 1024)).into_bytes();
    let half = body.len() / 2;
    let slow_body = SlowBody {
        first: body[..half].to_vec(),
        rest: body[half..].to_vec(),
        gate: Some(gate),
        waiting: waiting.clone(),
    };
    let cert = env.cert_der.clone();
    let (target, bearer) = (
        format!("{base}/rpc/v1/core.location.importLocation"),
        token.clone(),
    );
    let stuck = std::thread::spawn(move || {
        let client = oauth2::reqwest::blocking::ClientBuilder::new()
            .add_root_certificate(
                oauth2::reqwest::Certificate::from_der(&cert).expect("certificate"),
            )
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client");
        client
            .post(target)
            .bearer_auth(bearer)
            .header("Content-Type", "application/json")
            .body(oauth2::reqwest::blocking::Body::new(slow_body))
            .send()
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while waiting.load(Ordering::SeqCst) < 1 {
        assert!(Instant::now() < deadline, "the stuck request did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent_at = Instant::now();
    terminate(&server);
    let status = server.wait_for_exit(Duration::from_secs(30));
    let took = sent_at.elapsed();
    assert!(status.success(), "exit status {status}: {}", server.logs());
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(10),
        "exit took {took:?} with a 2 s drain timeout: {}",
        server.logs()
    );
    drop(open);
    // The stuck request got no answer: its connection was dropped.
    let outcome = stuck.join().expect("request thread");
    assert!(outcome.is_err(), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_sqlite() {
    idle_keep_alive_connections_do_not_hold_the_shutdown(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_postgres() {
    idle_keep_alive_connections_do_not_hold_the_shutdown(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_timeout_sqlite() {
    the_drain_timeout_bounds_the_shutdown(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_timeout_postgres() {
    the_drain_timeout_bounds_the_shutdown(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_sqlite() {
    crash_keeps_every_acknowledged_write(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_postgres() {
    crash_keeps_every_acknowledged_write(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_sqlite() {
    graceful_shutdown_finishes_requests_in_flight(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_postgres() {
    graceful_shutdown_finishes_requests_in_flight(Backend::Postgres).await;
}
