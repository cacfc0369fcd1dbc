//! The test harness.
//!
//! ```ignore
//! both_databases! {
//!     async fn imported_locations_are_listed(app) {
//!         let token = app.token("core.location").await;
//!         let (status, body) = app.call(&token, "core.location.importLocation", json!({...})).await;
//!         assert_eq!(status, 200);
//!     }
//! }
//! ```
//! `both_databases!` turns each `async fn NAME(app)` into a module `NAME` with two tests,
//! `sqlite` and `postgres`, each given a fresh [`TestApp`]: a server on its own port and database.
//! `app.roastery` gives the use cases on the same database, to seed data without HTTP.

use std::sync::OnceLock;

use oauth2::basic::BasicClient;
use oauth2::{ClientId, ClientSecret, Scope as OAuthScope, TokenResponse, TokenUrl};
use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_server::{Application, Config};
use serde_json::Value;

pub use oauth2::reqwest::StatusCode;
pub use serde_json::json;

/// Every scope, space-separated.
pub const ALL_SCOPES: &str = "inventory.green inventory.roast inventory.blend inventory.trace quality.cupping \
    quality.physical mrp.product mrp.order mrp.plan core.location core.project core.event eudr.statement";

use roastery_test_support::database::{self, TestDatabase};

pub struct Certificate {
    pub dir: tempfile::TempDir,
    pub der: Vec<u8>,
}

/// One self-signed certificate for `localhost` per test process.
pub fn certificate() -> &'static Certificate {
    static CERT: OnceLock<Certificate> = OnceLock::new();
    CERT.get_or_init(|| {
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".into()])
            .expect("certificate generation");
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("cert.pem"), generated.cert.pem()).expect("write cert");
        std::fs::write(
            dir.path().join("key.pem"),
            generated.signing_key.serialize_pem(),
        )
        .expect("write key");
        Certificate {
            der: generated.cert.der().to_vec(),
            dir,
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[allow(dead_code)] // fields offered to every test module; not each uses all
pub struct TestApp {
    pub base: String,
    pub port: u16,
    pub http: oauth2::reqwest::Client,
    pub roastery: Roastery<DieselStore>,
    pub backend: Backend,
    pub database_url: String,
    server: Option<actix_server::ServerHandle>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
    _pg: Option<TestDatabase>,
}

impl TestApp {
    /// A server on SQLite, or `None` for PostgreSQL when no server is configured.
    pub async fn spawn(backend: Backend) -> Option<TestApp> {
        Self::spawn_with(backend, |_| {}).await
    }

    /// Like [`TestApp::spawn`], with the configuration adjusted by `adjust`.
    pub async fn spawn_with(backend: Backend, adjust: impl FnOnce(&mut Config)) -> Option<TestApp> {
        let (database_url, dir, pg) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("roastery.db").display());
                (url, Some(dir), None)
            }
            Backend::Postgres => {
                let db = database::postgres("roastery_t")?;
                (db.url.clone(), None, Some(db))
            }
        };
        let cert = certificate();
        let mut config = Config {
            listen: "127.0.0.1:0".into(),
            database_url: database_url.clone(),
            tls_cert: Some(cert.dir.path().join("cert.pem")),
            tls_key: Some(cert.dir.path().join("key.pem")),
            rate_limit: "off".into(),
            workers: Some(2),
            pool_size: Some(8),
            ..Config::default()
        };
        adjust(&mut config);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                match Application::build(&config) {
                    Ok(app) => {
                        tx.send(Ok((app.port(), app.handle()))).ok();
                        app.run_until_stopped().await.ok();
                    }
                    Err(e) => {
                        tx.send(Err(format!("{e:#}"))).ok();
                    }
                }
            })
        });
        let (port, handle) = rx
            .recv()
            .expect("server thread answered")
            .expect("server started");
        let roastery =
            roastery_server::open_roastery(&database_url, Some(4)).expect("open the test database");
        let http = oauth2::reqwest::ClientBuilder::new()
            .redirect(oauth2::reqwest::redirect::Policy::none())
            .add_root_certificate(
                oauth2::reqwest::Certificate::from_der(&cert.der).expect("certificate"),
            )
            .build()
            .expect("http client");
        Some(TestApp {
            base: format!("https://localhost:{port}"),
            port,
            http,
            roastery,
            backend,
            database_url,
            server: Some(handle),
            thread: Some(thread),
            _dir: dir,
            _pg: pg,
        })
    }

    /// Creates a service account with `scopes` and returns `(client_id, client_secret)`.
    pub fn account(&self, scopes: &str) -> (String, String) {
        let created = self
            .roastery
            .create_account("test client", scopes)
            .expect("create account");
        (created.account.client_id, created.client_secret)
    }

    /// An access token for a new account with `scopes`, fetched with the oauth2 crate.
    pub async fn token(&self, scopes: &str) -> String {
        let (id, secret) = self.account(scopes);
        self.fetch_token(&id, &secret, None)
            .await
            .expect("token request")
    }

    /// Runs the client credentials flow with the oauth2 crate (HTTP Basic credentials).
    pub async fn fetch_token(
        &self,
        client_id: &str,
        secret: &str,
        scopes: Option<&str>,
    ) -> Result<String, String> {
        let client = BasicClient::new(ClientId::new(client_id.into()))
            .set_client_secret(ClientSecret::new(secret.into()))
            .set_token_uri(TokenUrl::new(format!("{}/oauth2/token", self.base)).expect("url"));
        let mut request = client.exchange_client_credentials();
        for scope in scopes.unwrap_or_default().split_whitespace() {
            request = request.add_scope(OAuthScope::new(scope.into()));
        }
        request
            .request_async(&self.http)
            .await
            .map(|t| t.access_token().secret().clone())
            .map_err(|e| match e {
                oauth2::RequestTokenError::ServerResponse(r) => r.error().to_string(),
                other => format!("{other:?}"),
            })
    }

    /// Calls an operation with a JSON body; returns the status and the parsed body.
    pub async fn call(&self, token: &str, operation: &str, body: Value) -> (StatusCode, Value) {
        let (status, text) = self.call_raw(token, operation, &body.to_string()).await;
        (status, parse(&text))
    }

    /// Calls an operation with a raw JSON body; returns the status and the body text.
    pub async fn call_raw(&self, token: &str, operation: &str, body: &str) -> (StatusCode, String) {
        let response = self
            .http
            .post(format!("{}/rpc/v1/{operation}", self.base))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("request sent");
        let status = response.status();
        (status, response.text().await.expect("body read"))
    }

    /// All pages of a listing, following `endCursor`; `key` names the result array.
    pub async fn list_all(
        &self,
        token: &str,
        operation: &str,
        key: &str,
        filter: Value,
        limit: u32,
    ) -> Vec<Value> {
        let mut items = Vec::new();
        let mut after = Value::Null;
        loop {
            let (status, body) = self
                .call(
                    token,
                    operation,
                    json!({"params": {"filter": filter, "pagination": {"limit": limit, "after": after}}}),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            items.extend(
                body["result"][key]
                    .as_array()
                    .expect("result array")
                    .iter()
                    .cloned(),
            );
            after = body["meta"]["pagination"]["endCursor"].clone();
            if after.is_null() {
                return items;
            }
        }
    }
}

pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Asserts an error envelope with `status` and `code`.
#[track_caller]
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, code: &str) {
    assert_eq!(status.as_u16(), expected_status, "{body}");
    assert_eq!(body["ok"], json!(false), "{body}");
    assert_eq!(body["error"]["code"], json!(code), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(handle) = self.server.take() {
            std::thread::spawn(move || actix_rt::System::new().block_on(handle.stop(false)))
                .join()
                .ok();
        }
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
        // The database (`_pg`) is dropped after the server has stopped.
    }
}

/// Turns each `async fn NAME(app) { ... }` into tests `NAME::sqlite` and `NAME::postgres`.
/// `async fn NAME(app, config: |c| { ... })` adjusts the server's configuration first.
#[macro_export]
macro_rules! both_databases {
    ($(async fn $name:ident($app:ident $(, config: $adjust:expr)?) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                async fn run($app: $crate::helpers::TestApp) $body

                fn adjust(_config: &mut roastery_server::Config) {
                    $( ($adjust)(_config); )?
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let app = $crate::helpers::TestApp::spawn_with(
                        $crate::helpers::Backend::Sqlite,
                        adjust,
                    )
                    .await
                    .expect("SQLite always runs");
                    run(app).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = $crate::helpers::TestApp::spawn_with(
                        $crate::helpers::Backend::Postgres,
                        adjust,
                    )
                    .await
                    {
                        run(app).await;
                    }
                }
            }
        )*
    };
}
