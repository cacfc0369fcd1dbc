//! The real `roastery` binary as an operator sees it: its log formats (every line of a request
//! carries its request id) and the `/docs` page in a real browser (headless Chromium).
//!
//! These check the log writer and the page, which no database changes, so they run on SQLite; the
//! endpoints themselves are tested on both databases in `tests/api/operate.rs`.
//!
//! The browser test needs Chromium (`chromium`, or the path in `CHROMIUM`). Without it the test
//! says it is skipped, unless `CI` is set, where it fails. Its screenshot goes to
//! `target/ci-artifacts/docs.png` (or `$ROASTERY_ARTIFACTS_DIR/docs.png`).

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oauth2::reqwest::blocking::Client;
use roastery_test_support::browser::{browse, chromium};
use serde_json::Value;

struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    dir: tempfile::TempDir,
}

impl Server {
    /// `roastery serve` on a fresh SQLite file with a generated certificate; `env` adds variables
    /// (`None` removes one).
    fn start(env: &[(&str, Option<&str>)], args: &[&str]) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let log = dir.path().join("serve.log");
        let mut command = command(dir.path(), port, env);
        let child = command
            .args(args)
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start roastery serve");
        let mut server = Server {
            child,
            port,
            log,
            dir,
        };
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

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until a log line contains `needle` (lines are written as requests finish).
    fn wait_for_log(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let logs = self.logs();
            if logs.contains(needle) || Instant::now() > deadline {
                return logs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `roastery accounts create --json` on this server's database: `(client id, secret)`.
    fn account(&self, scopes: &str) -> (String, String) {
        let output = command(self.dir.path(), 0, &[])
            .args(["accounts", "create", "--name", "log test", "--json"])
            .args(["--scopes", scopes])
            .stdin(Stdio::null())
            .output()
            .expect("run roastery accounts create");
        assert!(output.status.success(), "{output:?}");
        let created: Value = serde_json::from_slice(&output.stdout).expect("json output");
        (
            created["clientId"].as_str().unwrap().to_owned(),
            created["clientSecret"].as_str().unwrap().to_owned(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn command(dir: &Path, port: u16, env: &[(&str, Option<&str>)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roastery"));
    command
        .current_dir(dir)
        .env("ROASTERY_LISTEN", format!("127.0.0.1:{port}"))
        .env(
            "ROASTERY_DATABASE_URL",
            format!("sqlite://{}", dir.join("roastery.db").display()),
        )
        .env("ROASTERY_RATE_LIMIT", "off")
        .env("ROASTERY_WORKERS", "1")
        .env_remove("ROASTERY_LOG_FORMAT")
        .env_remove("ROASTERY_METRICS")
        .env_remove("RUST_LOG");
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

/// The server's certificate is self-signed and generated at start.
fn client() -> Client {
    Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("http client")
}

#[test]
fn json_logs_carry_the_request_id_client_operation_status_and_latency() {
    let server = Server::start(&[("ROASTERY_LOG_FORMAT", Some("json"))], &[]);
    let (client_id, secret) = server.account("core.location");
    let http = client();
    let token = http
        .post(server.url("/oauth2/token"))
        .header("X-Request-Id", "token-request-1")
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &client_id),
            ("client_secret", &secret),
        ])
        .send()
        .and_then(|r| r.text())
        .expect("token request");
    let token: Value = serde_json::from_str(&token).expect("token json");
    let token = token["access_token"].as_str().expect("a token").to_owned();
    let response = http
        .post(server.url("/rpc/v1/core.location.listLocations"))
        .bearer_auth(&token)
        .header("Content-Type", "application/json")
        .header("X-Request-Id", "list-request-1")
        .body(r#"{"params": {}}"#)
        .send()
        .expect("operation call");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-request-id"], "list-request-1");

    let logs = server.wait_for_log("list-request-1");
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let listing: Vec<&Value> = lines
        .iter()
        .filter(|l| l["span"]["request_id"] == "list-request-1")
        .collect();
    let done = listing
        .iter()
        .find(|l| l["fields"]["message"] == "request")
        .unwrap_or_else(|| panic!("no request line in\n{logs}"));
    let span = &done["span"];
    assert_eq!(span["operation"], "core.location.listLocations", "{logs}");
    assert_eq!(span["client_id"], client_id.as_str(), "{logs}");
    assert_eq!(span["status"], 200);
    assert!(span["latency_us"].as_u64().is_some(), "{logs}");
    let token_line = lines
        .iter()
        .find(|l| l["span"]["request_id"] == "token-request-1")
        .unwrap_or_else(|| panic!("no token request line in\n{logs}"));
    assert_eq!(token_line["span"]["operation"], "token");
    assert_eq!(token_line["span"]["client_id"], client_id.as_str());
    assert!(
        !logs.contains(&secret) && !logs.contains(&token),
        "no secret is logged"
    );
}

#[test]
fn at_the_default_level_each_request_writes_one_line_and_a_stop_writes_out_every_line() {
    // The default level and, standard error being a file, the default format (JSON): lines are
    // written by a thread of their own, and the stop writes out those still waiting.
    let mut server = Server::start(&[], &[]);
    let http = client();
    let requests = 300;
    for n in 0..requests {
        let response = http
            .get(server.url("/healthz"))
            .header("X-Request-Id", format!("line-{n}"))
            .send()
            .expect("health check");
        assert_eq!(response.status(), 200);
    }
    let sent = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit: {}", server.logs());
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}: {}", server.logs());

    let logs = server.logs();
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let mut ids: Vec<&str> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "request")
        .map(|l| {
            let span = &l["span"];
            assert_eq!(span["operation"], "healthz", "{l}");
            assert_eq!(span["method"], "GET", "{l}");
            assert_eq!(span["status"], 200, "{l}");
            assert!(span["latency_us"].as_u64().is_some(), "{l}");
            span["request_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ids.len(), requests, "{logs}");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), requests, "one line per request: {logs}");
    assert!(ids.iter().all(|id| id.starts_with("line-")), "{ids:?}");
    // The last line of the process is written too.
    assert_eq!(
        lines.last().unwrap()["fields"]["message"],
        "stopped",
        "{logs}"
    );
}

#[test]
fn pretty_logs_from_the_environment_or_the_file_and_json_when_no_terminal() {
    let pretty_line = |server: &Server, id: &str| {
        let response = client()
            .get(server.url("/healthz"))
            .header("X-Request-Id", id)
            .send()
            .expect("health check");
        assert_eq!(response.status(), 200);
        let logs = server.wait_for_log(id);
        logs.lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("no line with {id} in\n{logs}"))
            .to_owned()
    };
    for setting in ["pretty", "text"] {
        let server = Server::start(&[("ROASTERY_LOG_FORMAT", Some(setting))], &[]);
        let line = pretty_line(&server, "pretty-1");
        assert!(serde_json::from_str::<Value>(&line).is_err(), "{line}");
        assert!(line.contains("request_id=\"pretty-1\""), "{line}");
        assert!(line.contains("status=200"), "{line}");
        // Standard error is a file: no colour codes.
        assert!(!line.contains('\u{1b}'), "{line}");
    }

    // The TOML file's `log_format` is read.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("roastery.toml");
    std::fs::File::create(&file)
        .and_then(|mut f| f.write_all(b"log_format = \"pretty\"\n"))
        .unwrap();
    let server = Server::start(&[], &["--config", file.to_str().unwrap()]);
    let line = pretty_line(&server, "from-file-1");
    assert!(serde_json::from_str::<Value>(&line).is_err(), "{line}");

    // Unset, with standard error not a terminal: JSON, for a log collector.
    let server = Server::start(&[], &[]);
    let line = pretty_line(&server, "unset-1");
    let line: Value = serde_json::from_str(&line).expect("a JSON line");
    assert_eq!(line["span"]["request_id"], "unset-1");
}

#[test]
fn an_unknown_log_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = command(dir.path(), 0, &[("ROASTERY_LOG_FORMAT", Some("xml"))])
        .arg("openapi")
        .output()
        .expect("run roastery");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`pretty` or `json`"), "{stderr}");
}

fn artifacts_dir() -> PathBuf {
    std::env::var_os("ROASTERY_ARTIFACTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-artifacts"))
}

#[test]
fn a_browser_renders_every_operation_of_the_reference_page() {
    let Some(chromium) = chromium("the browser test of /docs") else {
        return;
    };
    let server = Server::start(&[("ROASTERY_LOG_FORMAT", Some("json"))], &[]);
    let profile = tempfile::tempdir().unwrap();
    let url = server.url("/docs");

    let dom = browse(&chromium, profile.path(), &["--dump-dom"], &url);
    assert!(
        dom.contains("<h1>Roastery RPC API</h1>"),
        "not the page: {dom:.500}"
    );
    let names = roastery_adapters_http::operation_names();
    assert!(names.len() >= 32);
    for name in names {
        assert!(
            dom.contains(&format!("<h3 class=\"operation\"><code>{name}</code></h3>")),
            "{name} is not in the rendered page"
        );
    }

    let dir = artifacts_dir();
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    let screenshot = dir.join("docs.png");
    std::fs::remove_file(&screenshot).ok();
    browse(
        &chromium,
        profile.path(),
        &[
            "--window-size=1280,2000",
            &format!("--screenshot={}", screenshot.display()),
        ],
        &url,
    );
    let png = std::fs::read(&screenshot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{}",
        screenshot.display()
    );
    eprintln!("screenshot of /docs: {}", screenshot.display());
    // The browser asked for the page only: nothing else exists on it to load.
    let logs = server.wait_for_log("\"path\":\"/docs\"");
    assert!(logs.contains("\"path\":\"/docs\""), "{logs}");
    let other: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("\"message\":\"request\"") && !l.contains("\"path\":\"/docs\""))
        .filter(|l| !l.contains("\"path\":\"/favicon.ico\""))
        .collect();
    assert!(other.is_empty(), "the page made other requests: {other:?}");
}
