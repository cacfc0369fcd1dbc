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
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use diesel::{Connection, PgConnection, RunQueryDsl};
use oauth2::basic::BasicClient;
use oauth2::{ClientId, ClientSecret, TokenResponse, TokenUrl};
use rust_decimal::Decimal;
use serde_json::value::RawValue;
use serde_json::{Value, json};

const PG_ENV: &str = "ROASTERY_TEST_DATABASE_URL";
const SCOPES: &str = "inventory.green core.location";
/// The weight of the origin lot, moved around by the transfers.
const ORIGIN_KG: &str = "100.000001";

#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A database, a certificate and a client for them; the server is started with [`Env::serve`].
struct Env {
    dir: tempfile::TempDir,
    database_url: String,
    cert_der: Vec<u8>,
    pg_admin: Option<(String, String)>,
}

impl Env {
    fn new(backend: Backend) -> Option<Env> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (database_url, pg_admin) = match backend {
            Backend::Sqlite => (
                format!("sqlite://{}", dir.path().join("roastery.db").display()),
                None,
            ),
            Backend::Postgres => {
                let Ok(admin) = std::env::var(PG_ENV) else {
                    eprintln!("skipped: {PG_ENV} is not set, so this PostgreSQL test did not run");
                    return None;
                };
                let name = format!("roastery_crash_{}", uuid::Uuid::now_v7().simple());
                let mut conn = PgConnection::establish(&admin).expect("connect to PostgreSQL");
                diesel::sql_query(format!("CREATE DATABASE {name}"))
                    .execute(&mut conn)
                    .expect("create test database");
                (database_on(&admin, &name), Some((admin, name)))
            }
        };
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".into()])
            .expect("certificate generation");
        std::fs::write(dir.path().join("cert.pem"), generated.cert.pem()).expect("write cert");
        std::fs::write(
            dir.path().join("key.pem"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write key");
        Some(Env {
            database_url,
            cert_der: generated.cert.der().to_vec(),
            pg_admin,
            dir,
        })
    }

    fn command(&self, port: u16) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_roastery"));
        command
            .env("ROASTERY_LISTEN", format!("127.0.0.1:{port}"))
            .env("ROASTERY_DATABASE_URL", &self.database_url)
            .env("ROASTERY_RATE_LIMIT", "off")
            .env("ROASTERY_TLS_CERT", self.dir.path().join("cert.pem"))
            .env("ROASTERY_TLS_KEY", self.dir.path().join("key.pem"))
            .env("ROASTERY_WORKERS", "2")
            .env("ROASTERY_POOL_SIZE", "8")
            .env_remove("ROASTERY_LOG_FORMAT");
        command
    }

    /// `roastery accounts create --json`: `(client id, secret)`.
    fn account(&self) -> (String, String) {
        let output = self
            .command(0)
            .args(["accounts", "create", "--name", "crash test", "--json"])
            .args(["--scopes", SCOPES])
            .stdin(Stdio::null())
            .output()
            .expect("run roastery accounts create");
        assert!(
            output.status.success(),
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let created: Value = serde_json::from_slice(&output.stdout).expect("json output");
        (
            created["clientId"].as_str().unwrap().to_owned(),
            created["clientSecret"].as_str().unwrap().to_owned(),
        )
    }

    /// Starts `roastery serve` on a free port and waits until it accepts connections.
    fn serve(&self, run: &str) -> Server {
        self.serve_with(run, &[])
    }

    /// [`Env::serve`] with extra environment variables.
    fn serve_with(&self, run: &str, vars: &[(&str, &str)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let log = self.dir.path().join(format!("{run}.log"));
        let child = self
            .command(port)
            .envs(vars.iter().copied())
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start roastery serve");
        let mut server = Server { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait().expect("try_wait") {
                panic!("the server exited with {status}: {}", server.logs());
            }
            assert!(Instant::now() < deadline, "no server: {}", server.logs());
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn client(&self) -> oauth2::reqwest::Client {
        oauth2::reqwest::ClientBuilder::new()
            .redirect(oauth2::reqwest::redirect::Policy::none())
            .add_root_certificate(
                oauth2::reqwest::Certificate::from_der(&self.cert_der).expect("certificate"),
            )
            .timeout(Duration::from_secs(60))
            .build()
            .expect("http client")
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg_admin.take()
            && let Ok(mut conn) = PgConnection::establish(&admin)
        {
            diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut conn)
                .ok();
        }
    }
}

struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn base(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the process to exit, at most `limit`.
    fn wait_for_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit: {}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}

/// The same server URL with another database name.
fn database_on(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (admin, None),
    };
    let authority_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[authority_end..].find('/') {
        Some(i) => &base[..authority_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

async fn token(http: &oauth2::reqwest::Client, base: &str, account: &(String, String)) -> String {
    BasicClient::new(ClientId::new(account.0.clone()))
        .set_client_secret(ClientSecret::new(account.1.clone()))
        .set_token_uri(TokenUrl::new(format!("{base}/oauth2/token")).expect("url"))
        .exchange_client_credentials()
        .request_async(http)
        .await
        .expect("token")
        .access_token()
        .secret()
        .clone()
}

/// Calls an operation: the status and body text, or `Err` when no answer came (server gone).
async fn call(
    http: &oauth2::reqwest::Client,
    base: &str,
    token: &str,
    operation: &str,
    body: &Value,
) -> Result<(u16, String), String> {
    let response = http
        .post(format!("{base}/rpc/v1/{operation}"))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| e.to_string())?;
    Ok((status, text))
}

async fn call_ok(
    http: &oauth2::reqwest::Client,
    base: &str,
    token: &str,
    operation: &str,
    body: Value,
) -> Value {
    let (status, text) = call(http, base, token, operation, &body)
        .await
        .expect("answer");
    assert_eq!(status, 200, "{operation}: {text}");
    serde_json::from_str(&text).expect("json")
}

fn field<'a>(raw: &'a RawValue, key: &str) -> &'a RawValue {
    let map: HashMap<&str, &RawValue> = serde_json::from_str(raw.get()).expect("an object");
    map.get(key)
        .copied()
        .unwrap_or_else(|| panic!("no `{key}` in {}", raw.get()))
}

/// An exact decimal from raw JSON, never through floating point.
fn exact(raw: &RawValue) -> Decimal {
    Decimal::from_str(raw.get())
        .or_else(|_| Decimal::from_scientific(raw.get()))
        .unwrap_or_else(|_| panic!("not a decimal: {}", raw.get()))
}

/// Every item of a listing through all pages: the parsed item and its exact weight, if any.
async fn list_all(
    http: &oauth2::reqwest::Client,
    base: &str,
    token: &str,
    operation: &str,
    key: &str,
) -> Vec<(Value, Option<Decimal>)> {
    let mut out = Vec::new();
    let mut after = Value::Null;
    loop {
        let body = json!({"params": {"pagination": {"limit": 100, "after": after}}});
        let (status, text) = call(http, base, token, operation, &body)
            .await
            .expect("answer");
        assert_eq!(status, 200, "{text}");
        let raw: &RawValue = serde_json::from_str(&text).expect("json");
        let items: Vec<&RawValue> =
            serde_json::from_str(field(field(raw, "result"), key).get()).expect("array");
        for item in items {
            let weight = text_has_weight(item).then(|| {
                let weight = field(item, "weight");
                let unit: String = serde_json::from_str(field(weight, "unit").get()).unwrap();
                assert_eq!(unit, "KG", "{}", item.get());
                exact(field(weight, "amount"))
            });
            out.push((serde_json::from_str(item.get()).unwrap(), weight));
        }
        after = serde_json::from_str::<Value>(&text).unwrap()["meta"]["pagination"]["endCursor"]
            .clone();
        if after.is_null() {
            return out;
        }
    }
}

fn text_has_weight(item: &RawValue) -> bool {
    let map: HashMap<&str, &RawValue> = serde_json::from_str(item.get()).expect("an object");
    map.contains_key("weight")
}

fn id_of(body: &Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {body}"))
        .to_owned()
}

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
    let Some(env) = Env::new(backend) else {
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
    let Some(env) = Env::new(backend) else {
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
    let Some(env) = Env::new(backend) else {
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
    let Some(env) = Env::new(backend) else {
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
