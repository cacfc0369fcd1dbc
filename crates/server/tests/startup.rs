//! Starting the real `roastery` binary: several instances at once on a fresh database (SQLite and
//! PostgreSQL; `ROASTERY_TEST_DATABASE_URL`, skipped with a message when unset), what start-up
//! says about the database, and the TLS settings it refuses.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout
)]

use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use diesel::{Connection, PgConnection, RunQueryDsl};
use serde_json::json;

mod support;
use roastery_test_support::database::database_on;
use support::*;

const INSTANCES: usize = 4;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Starts every instance before waiting for any, as a deployment of several replicas does.
fn start_together(env: &Env, count: usize) -> Vec<Server> {
    let mut servers: Vec<Server> = (0..count)
        .map(|k| {
            let port = free_port();
            let log = env.dir.path().join(format!("together-{k}.log"));
            let child = env
                .command(port)
                .arg("serve")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("log file"))
                .spawn()
                .expect("start roastery serve");
            Server { child, port, log }
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    for server in &mut servers {
        while TcpStream::connect(("127.0.0.1", server.port)).is_err() {
            if let Some(status) = server.child.try_wait().expect("try_wait") {
                panic!("an instance exited with {status}: {}", server.logs());
            }
            assert!(Instant::now() < deadline, "no server: {}", server.logs());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    servers
}

async fn instances_started_together_all_serve(backend: Backend) {
    let Some(env) = Env::new(backend, "startup", "core.location") else {
        return;
    };
    let servers = start_together(&env, INSTANCES);
    let account = env.account();
    let http = env.client();
    // Every instance signs cursors with the one key that was stored: a cursor of one is
    // accepted by every other.
    let first = servers[0].base();
    let tok = token(&http, &first, &account).await;
    for k in 0..3 {
        let body = json!({"data": {"name": format!("Warehouse {k}")}});
        call_ok(&http, &first, &tok, "core.location.importLocation", body).await;
    }
    let page = call_ok(
        &http,
        &first,
        &tok,
        "core.location.listLocations",
        json!({"params": {"pagination": {"limit": 1}}}),
    )
    .await;
    let cursor = page["meta"]["pagination"]["endCursor"].clone();
    assert!(cursor.is_string(), "{page}");
    for server in &servers {
        let next = call_ok(
            &http,
            &server.base(),
            &tok,
            "core.location.listLocations",
            json!({"params": {"pagination": {"limit": 1, "after": cursor}}}),
        )
        .await;
        assert_eq!(next["result"]["locations"].as_array().unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_started_together_on_a_fresh_database_all_serve_postgres() {
    instances_started_together_all_serve(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_started_together_on_a_fresh_database_all_serve_sqlite() {
    instances_started_together_all_serve(Backend::Sqlite).await;
}

/// A role that owns its database but is no superuser: it may not `SET lc_messages`, and start-up
/// says so; its password (ignored by the test server's trust rule) never reaches the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_that_cannot_set_lc_messages_is_warned_about_and_its_password_never_logged() {
    let Some(mut env) = Env::new(Backend::Postgres, "startup_role", "core.location") else {
        return;
    };
    let (admin, database) = env
        .pg
        .as_ref()
        .and_then(|db| db.pg_admin())
        .map(|(admin, name)| (admin.to_owned(), name.to_owned()))
        .unwrap();
    let role = format!("roastery_plain_{}", uuid::Uuid::now_v7().simple());
    let mut conn = PgConnection::establish(&admin).expect("connect to PostgreSQL");
    for statement in [
        format!("CREATE ROLE {role} LOGIN"),
        format!("ALTER DATABASE {database} OWNER TO {role}"),
    ] {
        diesel::sql_query(statement).execute(&mut conn).unwrap();
    }
    let url = database_on(&admin, &database);
    let (scheme, rest) = url.split_once("://").unwrap();
    let host_and_database = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    env.database_url = format!("{scheme}://{role}:s3cret-pw@{host_and_database}");
    let server = env.serve("plain-role");
    let logs = server.wait_for_log("roastery is listening");
    drop(server);
    drop(env);
    diesel::sql_query(format!("DROP ROLE IF EXISTS {role}"))
        .execute(&mut conn)
        .ok();
    let warning = logs
        .lines()
        .find(|l| l.contains("lc_messages"))
        .unwrap_or_else(|| panic!("no lc_messages warning: {logs}"));
    assert!(warning.to_ascii_uppercase().contains("WARN"), "{warning}");
    assert!(!logs.contains("s3cret-pw"), "{logs}");
    assert!(logs.contains(&format!("{role}:***@")), "{logs}");
}

#[test]
fn a_certificate_without_its_key_stops_start_up() {
    let env = Env::new(Backend::Sqlite, "startup_tls", "core.location").unwrap();
    for (missing, named) in [
        ("ROASTERY_TLS_KEY", "ROASTERY_TLS_KEY"),
        ("ROASTERY_TLS_CERT", "ROASTERY_TLS_CERT"),
    ] {
        let output = env
            .command(free_port())
            .env_remove(missing)
            .arg("serve")
            .stdin(Stdio::null())
            .output()
            .expect("run roastery serve");
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{stderr}");
    }
    assert!(!env.dir.path().join("roastery-cert.pem").exists());
}
