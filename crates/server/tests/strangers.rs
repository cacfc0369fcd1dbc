//! Clients without an account attack the real `roastery` binary, on SQLite and on PostgreSQL
//! (`ROASTERY_TEST_DATABASE_URL`; the PostgreSQL tests are skipped with a message when it is
//! unset), and the process's peak resident memory (`VmHWM` in `/proc/PID/status`) must stay
//! within a few hundred MiB (api-decisions §4):
//!
//! - `abandoned_token_requests_*`: 300 token requests with a known client id and a wrong
//!   secret, ten at a time per connection batch, cut with a TCP reset 3 ms apart, so that the
//!   argon2 checks are abandoned by their clients while they wait, start or run.
//! - `bodies_without_a_token_*`: many connections at once, each sending a 1 MiB body to an
//!   operation without a token.
//!
//! The numbers these tests print (`ROASTERY_TEST_BINARY` measures another build the same way)
//! are in docs/robustness.md.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout
)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::*;

/// The most the server may ever hold resident, in KiB: "a few hundred MiB".
const BOUND_KIB: u64 = 300 * 1024;

type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// A field of `/proc/PID/status` in KiB (`VmRSS`: now, `VmHWM`: the peak so far).
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

fn tls_config(cert_der: &[u8]) -> Arc<rustls::ClientConfig> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(cert_der.to_vec()))
        .expect("test certificate");
    Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

fn connect(port: u16, config: &Arc<rustls::ClientConfig>) -> std::io::Result<Tls> {
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("server name");
    let conn = rustls::ClientConnection::new(Arc::clone(config), name).expect("TLS client");
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(30)))?;
    tcp.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    // Complete the handshake now, so what follows is the request alone.
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// Closes with a TCP reset (`SO_LINGER` 0), as a client that vanishes does.
fn reset(tcp: TcpStream, runtime: &tokio::runtime::Handle) {
    let _inside = runtime.enter();
    if tcp.set_nonblocking(true).is_ok()
        && let Ok(tcp) = tokio::net::TcpStream::from_std(tcp)
    {
        let _ = tcp.set_zero_linger();
    }
}

/// Asks for a token until one is issued (abandoned checks may still hold the server busy).
async fn token_after_the_storm(env: &Env, server: &Server, account: &(String, String)) {
    let http = env.client();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let answer = http
            .post(format!("{}/oauth2/token", server.base()))
            .basic_auth(&account.0, Some(&account.1))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .send()
            .await;
        match answer.map(|r| r.status().as_u16()) {
            Ok(200) => return,
            Ok(503) | Err(_) => {}
            Ok(other) => panic!("token request answered {other}: {}", server.logs()),
        }
        assert!(
            Instant::now() < deadline,
            "no token was issued after the attack: {}",
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn report(what: &str, backend: &str, pid: u32, before_kib: u64) -> u64 {
    let peak = memory_kib(pid, "VmHWM");
    let now = memory_kib(pid, "VmRSS");
    eprintln!(
        "{what} ({backend}, {}): resident before {} MiB, peak {} MiB, after {} MiB",
        binary().display(),
        before_kib / 1024,
        peak / 1024,
        now / 1024
    );
    peak
}

async fn abandoned_token_requests(backend: Backend, label: &str) {
    let Some(env) = Env::new(backend, "strangers_token", "core.location") else {
        return;
    };
    let account = env.account();
    let server = env.serve("abandoned");
    let pid = server.child.id();
    token_after_the_storm(&env, &server, &account).await;
    let before = memory_kib(pid, "VmRSS");
    let config = tls_config(&env.cert_der);
    let runtime = tokio::runtime::Handle::current();
    let (port, client_id) = (server.port, account.0.clone());
    tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            for thread in 0..30 {
                let (config, runtime, client_id) = (&config, &runtime, &client_id);
                scope.spawn(move || {
                    // Ten connections ready, then ten requests at once, then ten resets.
                    let mut open: Vec<Tls> =
                        (0..10).filter_map(|_| connect(port, config).ok()).collect();
                    for (k, tls) in open.iter_mut().enumerate() {
                        let form = format!(
                            "grant_type=client_credentials&client_id={client_id}&client_secret=wrong-{thread}-{k}"
                        );
                        let request = format!(
                            "POST /oauth2/token HTTP/1.1\r\nHost: localhost\r\n\
                             Content-Type: application/x-www-form-urlencoded\r\n\
                             Content-Length: {}\r\n\r\n{form}",
                            form.len()
                        );
                        let _ = tls.write_all(request.as_bytes()).and_then(|()| tls.flush());
                    }
                    // Each cut 3 ms after the one before, so that the cuts fall on checks
                    // waiting, starting and running alike.
                    for tls in open {
                        std::thread::sleep(Duration::from_millis(3));
                        reset(tls.sock, runtime);
                    }
                });
            }
        });
    })
    .await
    .expect("attack threads");
    // Every abandoned check has run or been dropped once a new request gets its turn.
    token_after_the_storm(&env, &server, &account).await;
    let peak = report("300 abandoned token requests", label, pid, before);
    assert!(
        peak < BOUND_KIB,
        "the server peaked at {} MiB resident",
        peak / 1024
    );
}

async fn bodies_without_a_token(backend: Backend, label: &str) {
    let Some(env) = Env::new(backend, "strangers_bodies", "core.location") else {
        return;
    };
    let account = env.account();
    let server = env.serve("bodies");
    let pid = server.child.id();
    token_after_the_storm(&env, &server, &account).await;
    let before = memory_kib(pid, "VmRSS");
    let config = tls_config(&env.cert_der);
    let port = server.port;
    let body: Arc<Vec<u8>> = Arc::new(vec![b' '; 1024 * 1024]);
    let answers = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let senders: Vec<_> = (0..40)
                .map(|_| {
                    let (config, body) = (&config, Arc::clone(&body));
                    scope.spawn(move || {
                        // Ten connections per thread, their bodies sent a slice at a time in
                        // turn, so that all 400 are under way at once.
                        let mut open: Vec<Tls> =
                            (0..10).filter_map(|_| connect(port, config).ok()).collect();
                        let head = format!(
                            "POST /rpc/v1/core.location.listLocations HTTP/1.1\r\nHost: localhost\r\n\
                             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        for tls in &mut open {
                            let _ = tls.write_all(head.as_bytes()).and_then(|()| tls.flush());
                        }
                        // The server may close before a body is through: that is its answer.
                        let mut sent = 0;
                        for slice in body.chunks(64 * 1024) {
                            for tls in &mut open {
                                if tls.write_all(slice).and_then(|()| tls.flush()).is_ok() {
                                    sent += slice.len();
                                }
                            }
                        }
                        // Wait for each answer: the server has then done with each body.
                        let mut answer = [0u8; 512];
                        for tls in &mut open {
                            let _ = tls.read(&mut answer);
                        }
                        (open.len(), sent)
                    })
                })
                .collect();
            senders
                .into_iter()
                .map(|s| s.join().expect("sender"))
                .fold((0, 0), |(n, bytes), (m, more)| (n + m, bytes + more))
        })
    })
    .await
    .expect("attack threads");
    let (connections, sent) = answers;
    eprintln!(
        "{connections} connections without a token; {} MiB of body accepted by the socket",
        sent / (1024 * 1024)
    );
    assert!(connections > 0, "no connection was made");
    token_after_the_storm(&env, &server, &account).await;
    let peak = report("400 bodies of 1 MiB without a token", label, pid, before);
    assert!(
        peak < BOUND_KIB,
        "the server peaked at {} MiB resident",
        peak / 1024
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_token_requests_sqlite() {
    abandoned_token_requests(Backend::Sqlite, "SQLite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_token_requests_postgres() {
    abandoned_token_requests(Backend::Postgres, "PostgreSQL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_without_a_token_sqlite() {
    bodies_without_a_token(Backend::Sqlite, "SQLite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_without_a_token_postgres() {
    bodies_without_a_token(Backend::Postgres, "PostgreSQL").await;
}
