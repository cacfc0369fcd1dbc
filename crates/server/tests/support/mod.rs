//! What the tests of the real `roastery` binary share: a database on either backend
//! (`ROASTERY_TEST_DATABASE_URL`; PostgreSQL tests are skipped with a message when it is unset), a
//! certificate, the server process, and JSON calls with exact decimals.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

use oauth2::basic::BasicClient;
use oauth2::{ClientId, ClientSecret, TokenResponse, TokenUrl};
use rust_decimal::Decimal;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use roastery_test_support::database::{self, TestDatabase};

#[derive(Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database, a certificate and a client for them; the server is started with [`Env::serve`].
pub struct Env {
    /// Names the test's database and service account.
    pub name: &'static str,
    pub scopes: &'static str,
    /// Set on every command, on top of the defaults.
    pub vars: Vec<(&'static str, &'static str)>,
    pub dir: tempfile::TempDir,
    pub database_url: String,
    pub cert_der: Vec<u8>,
    /// The PostgreSQL database, dropped with the environment.
    pub pg: Option<TestDatabase>,
}

/// The `roastery` binary under test: this build's, or `ROASTERY_TEST_BINARY` (to measure
/// another build the same way, e.g. a release build or an older commit).
pub fn binary() -> PathBuf {
    std::env::var_os("ROASTERY_TEST_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_roastery")))
}

impl Env {
    pub fn new(backend: Backend, name: &'static str, scopes: &'static str) -> Option<Env> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (database_url, pg) = match backend {
            Backend::Sqlite => (
                format!("sqlite://{}", dir.path().join("roastery.db").display()),
                None,
            ),
            Backend::Postgres => {
                let db = database::postgres(&format!("roastery_{name}"))?;
                (db.url.clone(), Some(db))
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
            name,
            scopes,
            vars: Vec::new(),
            database_url,
            cert_der: generated.cert.der().to_vec(),
            pg,
            dir,
        })
    }

    /// Sets `key=value` on every command this environment runs.
    pub fn with_var(mut self, key: &'static str, value: &'static str) -> Self {
        self.vars.push((key, value));
        self
    }

    pub fn command(&self, port: u16) -> Command {
        let mut command = Command::new(binary());
        command
            .env("ROASTERY_LISTEN", format!("127.0.0.1:{port}"))
            .env("ROASTERY_DATABASE_URL", &self.database_url)
            .env("ROASTERY_RATE_LIMIT", "off")
            .env("ROASTERY_TLS_CERT", self.dir.path().join("cert.pem"))
            .env("ROASTERY_TLS_KEY", self.dir.path().join("key.pem"))
            .env("ROASTERY_WORKERS", "2")
            .env("ROASTERY_POOL_SIZE", "8")
            .env_remove("ROASTERY_LOG_FORMAT")
            .envs(self.vars.iter().copied());
        command
    }

    /// `roastery accounts create --json`: `(client id, secret)`.
    pub fn account(&self) -> (String, String) {
        let output = self
            .command(0)
            .args([
                "accounts",
                "create",
                "--name",
                &format!("{} test", self.name),
                "--json",
            ])
            .args(["--scopes", self.scopes])
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
    pub fn serve(&self, run: &str) -> Server {
        self.serve_with(run, &[])
    }

    /// [`Env::serve`] with extra environment variables.
    pub fn serve_with(&self, run: &str, vars: &[(&str, &str)]) -> Server {
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

    pub fn client(&self) -> oauth2::reqwest::Client {
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

pub struct Server {
    pub child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Server {
    pub fn base(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The log once a line contains `needle`, or as it stands after 10 s. The port accepts
    /// connections as soon as it is bound, a little before start-up logs that it listens.
    pub fn wait_for_log(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let logs = self.logs();
            if logs.contains(needle) || Instant::now() > deadline {
                return logs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to exit, at most `limit`.
    pub fn wait_for_exit(&mut self, limit: Duration) -> ExitStatus {
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

pub async fn token(
    http: &oauth2::reqwest::Client,
    base: &str,
    account: &(String, String),
) -> String {
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
pub async fn call(
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

pub async fn call_ok(
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

pub fn field<'a>(raw: &'a RawValue, key: &str) -> &'a RawValue {
    let map: HashMap<&str, &RawValue> = serde_json::from_str(raw.get()).expect("an object");
    map.get(key)
        .copied()
        .unwrap_or_else(|| panic!("no `{key}` in {}", raw.get()))
}

/// An exact decimal from raw JSON, never through floating point.
pub fn exact(raw: &RawValue) -> Decimal {
    Decimal::from_str(raw.get())
        .or_else(|_| Decimal::from_scientific(raw.get()))
        .unwrap_or_else(|_| panic!("not a decimal: {}", raw.get()))
}

/// Every item of a listing through all pages: the parsed item and its exact weight, if any.
pub async fn list_all(
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

pub fn text_has_weight(item: &RawValue) -> bool {
    let map: HashMap<&str, &RawValue> = serde_json::from_str(item.get()).expect("an object");
    map.contains_key("weight")
}

pub fn id_of(body: &Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {body}"))
        .to_owned()
}
