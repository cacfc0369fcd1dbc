//! Two `roastery serve` processes on one database, as behind a load balancer.
//!
//! Both instances take concurrent transfers on one hot lot, imports and overlapping order batches
//! at once. Afterwards: weight is conserved exactly, no lot number or order is duplicated, and
//! every write that answered 200 is in the data. On PostgreSQL (`ROASTERY_TEST_DATABASE_URL`;
//! skipped with a message when unset) a row lock held by another session on one lot does not
//! hold up a write to another lot, while a write to the locked lot waits and, past
//! `ROASTERY_LOCK_TIMEOUT`, answers 503 with `Retry-After` and changes nothing. The same workload
//! runs on one SQLite file shared by both processes, each with its own pool of connections.

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
use std::str::FromStr;
use std::time::{Duration, Instant};

use diesel::{Connection, PgConnection, RunQueryDsl};
use rust_decimal::Decimal;
use serde_json::{Value, json};

const SCOPES: &str = "inventory.green core.location mrp.product mrp.order inventory.trace";
/// Long enough that the writes to another lot finish while one waits for a held lock.
const LOCK_TIMEOUT_SECONDS: &str = "8";
/// Concurrent clients per instance.
const CLIENTS: usize = 4;
/// Requests per client.
const ROUNDS: usize = 12;

mod support;
use roastery_test_support::database::database_on;
use support::*;

/// What the clients of both instances were told succeeded.
#[derive(Default)]
struct Acknowledged {
    /// (lot id, external id, weight) of imports.
    imports: Vec<(String, String, Decimal)>,
    /// Destination lot ids of transfers of the hot origin.
    transfers: Vec<String>,
    /// External ids of orders in batches that answered 200, with the id answered.
    orders: Vec<(String, String)>,
    /// Answers 503 (lock wait past the timeout): allowed, and must have changed nothing.
    busy: usize,
}

/// One client on one instance: imports its own lots, moves weight of the hot origin around the
/// three places and sends order batches whose external ids overlap with every other client's.
async fn client(
    http: oauth2::reqwest::Client,
    base: String,
    token: String,
    client: usize,
    hot: String,
    places: Vec<String>,
) -> Acknowledged {
    let mut done = Acknowledged::default();
    let (mut lot, mut at) = (hot.clone(), 0usize);
    for round in 0..ROUNDS {
        let (operation, body) = match round % 3 {
            0 => {
                let amount: Value =
                    serde_json::from_str(&format!("{}.{:06}", client + 1, round + 1)).unwrap();
                let body = json!({"data": {"name": format!("Lot {client}/{round}"),
                    "externalId": format!("ERP-{client}-{round}"),
                    "locationId": places[round % 3],
                    "weight": {"amount": amount, "unit": "KG"}}});
                ("inventory.green.importGreenLot", body)
            }
            1 => {
                let to = (at + 1 + (client + round) % 2) % 3;
                let body = json!({"data": {"greenLotId": lot,
                    "weight": {"amount": 0.123457, "unit": "KG"},
                    "destinationLocationId": places[to]}});
                ("inventory.green.transferGreenLotToLocation", body)
            }
            _ => {
                // Every client writes orders o-0..o-5 (shared by all) and one of its own.
                let mut orders: Vec<Value> = (0..6)
                    .map(|i| (i + client + round) % 6)
                    .map(|i| order(&format!("o-{i}"), client, round))
                    .collect();
                orders.push(order(&format!("o-{client}-{round}"), client, round));
                ("mrp.order.setOrders", json!({"data": orders}))
            }
        };
        let (status, text) = call(&http, &base, &token, operation, &body)
            .await
            .unwrap_or_else(|e| panic!("{operation}: no answer: {e}"));
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        match (status, round % 3) {
            (200, 0) => done.imports.push((
                id_of(&answer, "/result/greenLot/id"),
                body["data"]["externalId"].as_str().unwrap().to_owned(),
                Decimal::from_str(&format!("{}.{:06}", client + 1, round + 1)).unwrap(),
            )),
            (200, 1) => {
                lot = id_of(&answer, "/result/destinationGreenLot/id");
                at = (at + 1 + (client + round) % 2) % 3;
                done.transfers.push(lot.clone());
            }
            (200, _) => {
                for synced in answer["result"]["syncedOrders"].as_array().expect("orders") {
                    done.orders.push((
                        synced["externalId"].as_str().unwrap().to_owned(),
                        synced["id"].as_str().unwrap().to_owned(),
                    ));
                }
            }
            // Another client emptied or consumed this lot: start again from the hot lot.
            (422, 1) => {
                let code = answer["error"]["code"].as_str().unwrap_or_default();
                assert!(
                    code == "invalid_weight" || code == "invalid_request",
                    "{text}"
                );
                (lot, at) = (hot.clone(), 0);
            }
            (503, _) => {
                assert_eq!(answer["error"]["code"], "server_error", "{text}");
                done.busy += 1;
            }
            _ => panic!("unexpected answer {status} to {operation}: {text}"),
        }
    }
    done
}

/// An exact amount as a JSON number.
fn kg(amount: &str) -> Value {
    serde_json::from_str(amount).expect("a number")
}

fn order(external_id: &str, client: usize, round: usize) -> Value {
    json!({"externalId": external_id, "orderDate": "2026-03-01T10:00:00Z",
        "customer": format!("Client {client}/{round}"), "customerType": "WHOLESALE",
        "orderItems": [{"sku": "HOT-250", "quantity": round + 1}]})
}

/// Lots by id: (lot number, external id, exact kg, consumed, location id).
async fn lots(
    http: &oauth2::reqwest::Client,
    base: &str,
    token: &str,
) -> HashMap<String, (String, Option<String>, Decimal, Value)> {
    let mut out = HashMap::new();
    for (lot, weight) in list_all(
        http,
        base,
        token,
        "inventory.green.listGreenLots",
        "greenLots",
    )
    .await
    {
        let id = lot["id"].as_str().unwrap().to_owned();
        let previous = out.insert(
            id.clone(),
            (
                lot["lotNumber"].as_str().unwrap().to_owned(),
                lot["externalId"].as_str().map(str::to_owned),
                weight.expect("a lot has a weight"),
                lot["location"]["id"].clone(),
            ),
        );
        assert!(previous.is_none(), "lot {id} listed twice");
    }
    out
}

async fn two_instances(backend: Backend) {
    let Some(env) = Env::new(backend, "instances", SCOPES)
        .map(|e| e.with_var("ROASTERY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS))
    else {
        return;
    };
    let account = env.account();
    let servers = [env.serve("a"), env.serve("b")];
    let http = env.client();
    let mut tokens = Vec::new();
    for server in &servers {
        tokens.push(token(&http, &server.base(), &account).await);
    }
    let (a, ta) = (servers[0].base(), tokens[0].clone());
    let (b, tb) = (servers[1].base(), tokens[1].clone());

    let mut places = Vec::new();
    for i in 0..3 {
        let body =
            json!({"data": {"name": format!("Place {i}"), "externalId": format!("LOC-{i}")}});
        let answer = call_ok(&http, &a, &ta, "core.location.importLocation", body).await;
        places.push(id_of(&answer, "/result/location/id"));
    }
    let hot_body = json!({"data": {"name": "Hot", "externalId": "HOT", "locationId": places[0],
        "weight": {"amount": kg("100.000001"), "unit": "KG"}}});
    let hot = id_of(
        &call_ok(&http, &a, &ta, "inventory.green.importGreenLot", hot_body).await,
        "/result/greenLot/id",
    );
    let quiet_body = json!({"data": {"name": "Quiet", "externalId": "QUIET", "locationId": places[1],
        "weight": {"amount": 7, "unit": "KG"}}});
    let quiet = id_of(
        &call_ok(&http, &b, &tb, "inventory.green.importGreenLot", quiet_body).await,
        "/result/greenLot/id",
    );
    let product = json!({"data": [{"externalId": "p-hot", "name": "Hot Blend",
        "variants": [{"sku": "HOT-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}]});
    call_ok(&http, &b, &tb, "mrp.product.syncProducts", product).await;

    let mut tasks = Vec::new();
    for c in 0..2 * CLIENTS {
        let (base, token) = if c % 2 == 0 { (&a, &ta) } else { (&b, &tb) };
        tasks.push(tokio::spawn(client(
            http.clone(),
            base.clone(),
            token.clone(),
            c,
            hot.clone(),
            places.clone(),
        )));
    }
    let mut done = Acknowledged::default();
    for task in tasks {
        let part = task.await.expect("client task");
        done.imports.extend(part.imports);
        done.transfers.extend(part.transfers);
        done.orders.extend(part.orders);
        done.busy += part.busy;
    }
    eprintln!(
        "{} imports, {} transfers, {} synced orders, {} answers 503",
        done.imports.len(),
        done.transfers.len(),
        done.orders.len(),
        done.busy
    );
    assert!(!done.transfers.is_empty(), "no transfer went through");
    assert!(!done.orders.is_empty(), "no order batch went through");

    // Both instances see the same data; read it through the other one than wrote it.
    let all = lots(&http, &b, &tb).await;
    assert_eq!(all, lots(&http, &a, &ta).await, "the instances disagree");
    let numbers: HashSet<&String> = all.values().map(|(n, ..)| n).collect();
    assert_eq!(numbers.len(), all.len(), "a lot number was given twice");
    let expected_numbers: HashSet<String> = (1..=all.len()).map(|n| format!("PG-{n}")).collect();
    assert_eq!(
        numbers.into_iter().cloned().collect::<HashSet<_>>(),
        expected_numbers,
        "lot numbers are gapless"
    );
    for (id, external, kg) in &done.imports {
        let (_, stored_external, stored_kg, _) = all.get(id).expect("an imported lot is stored");
        assert_eq!(stored_external.as_deref(), Some(external.as_str()));
        assert_eq!(stored_kg, kg, "imported lot {external} keeps its weight");
    }
    for id in &done.transfers {
        assert!(all.contains_key(id), "transfer destination {id} is stored");
    }
    // Weight is conserved exactly: the hot origin's lots (every lot not imported by a client
    // nor the quiet lot) still weigh what the hot lot weighed.
    let imported: HashSet<&String> = done.imports.iter().map(|(id, ..)| id).collect();
    let hot_total: Decimal = all
        .iter()
        .filter(|(id, _)| !imported.contains(id) && **id != quiet)
        .map(|(_, (_, _, kg, _))| *kg)
        .sum();
    assert_eq!(hot_total, Decimal::from_str("100.000001").unwrap());
    assert_eq!(all[&quiet].2, Decimal::from(7));

    // Orders: one row per external id, with the id every 200 answered for it.
    let orders = list_all(&http, &a, &ta, "mrp.order.listOrders", "orders").await;
    let mut stored: HashMap<String, String> = HashMap::new();
    for (o, _) in &orders {
        let previous = stored.insert(
            o["externalId"].as_str().unwrap().to_owned(),
            o["id"].as_str().unwrap().to_owned(),
        );
        assert!(previous.is_none(), "order {o} is duplicated");
    }
    for (external, id) in &done.orders {
        assert_eq!(
            stored.get(external),
            Some(id),
            "order {external} as answered"
        );
    }

    if matches!(backend, Backend::Postgres) {
        held_row_lock(&env, &http, (&a, &ta), (&b, &tb), &hot, &quiet).await;
    }
}

/// Another session holds a row lock on the quiet lot and on a lot split off the hot lot. A write
/// to the hot lot still goes through on both instances while the locks are held; a write to the quiet lot answers 503 with
/// `Retry-After` once it has waited `ROASTERY_LOCK_TIMEOUT`, and changes nothing; once the lock
/// is released, a write to the quiet lot goes through.
async fn held_row_lock(
    env: &Env,
    http: &oauth2::reqwest::Client,
    (a, ta): (&str, &str),
    (b, tb): (&str, &str),
    hot: &str,
    quiet: &str,
) {
    let mut session = PgConnection::establish(&env.database_url).expect("connect");
    diesel::sql_query("BEGIN").execute(&mut session).unwrap();
    let locked = diesel::sql_query(format!(
        "SELECT id FROM green_lots WHERE id = '{quiet}' FOR UPDATE"
    ))
    .execute(&mut session)
    .unwrap();
    assert_eq!(locked, 1);
    // A lot that transfers split off the hot lot (one origin): a weight change of the hot lot
    // changes the hot lot alone, so a lock on its sibling does not hold it up either.
    let sibling = diesel::sql_query(format!(
        "SELECT id FROM green_lots WHERE id <> '{hot}' AND origin_id = \
         (SELECT origin_id FROM green_lots WHERE id = '{hot}') ORDER BY id LIMIT 1 FOR UPDATE"
    ))
    .execute(&mut session)
    .unwrap();
    assert_eq!(sibling, 1, "the transfers split the hot lot");

    // A write to the locked lot waits for the lock (and, as a side effect on a single global
    // writer lock, would hold up every other write).
    let body = json!({"data": {"greenLotId": quiet, "weight": {"amount": 2, "unit": "KG"}}});
    let blocked = {
        let (http, a, ta, body) = (http.clone(), a.to_owned(), ta.to_owned(), body.clone());
        tokio::spawn(async move {
            let response = http
                .post(format!("{a}/rpc/v1/inventory.green.setGreenLotWeight"))
                .bearer_auth(ta)
                .header("Content-Type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .expect("answer");
            let status = response.status().as_u16();
            let retry_after = response.headers().contains_key("retry-after");
            (status, retry_after, response.text().await.expect("body"))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while lock_waiters(&mut session) == 0 {
        assert!(
            Instant::now() < deadline,
            "the write never waited for the lock"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (base, token) in [(a, ta), (b, tb)] {
        let body = json!({"data": {"greenLotId": hot, "weight": {"amount": 1, "unit": "KG"}}});
        let (status, text) = call(
            http,
            base,
            token,
            "inventory.green.setGreenLotWeight",
            &body,
        )
        .await
        .expect("answer");
        assert_eq!(status, 200, "a write to another lot is not held up: {text}");
    }
    assert_eq!(
        lock_waiters(&mut session),
        1,
        "the writes to the other lot went through while the write to the locked lot waited"
    );
    // The lock is still held: the waiting write gives up after the lock timeout.
    let (status, retry_after, text) = blocked.await.expect("task");
    assert_eq!(status, 503, "{text}");
    assert!(retry_after, "503 carries Retry-After");
    let answer: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(answer["error"]["code"], "server_error", "{answer}");
    // Still held: the timed-out write changed nothing.
    let weight: Vec<WeightRow> = diesel::sql_query(format!(
        "SELECT weight_micros FROM green_lots WHERE id = '{quiet}'"
    ))
    .load(&mut session)
    .unwrap();
    assert_eq!(weight[0].weight_micros, 7_000_000);

    // A write that queues behind the lock goes through once it is released.
    let waiting = {
        let (http, b, tb, body) = (http.clone(), b.to_owned(), tb.to_owned(), body.clone());
        tokio::spawn(async move {
            call(&http, &b, &tb, "inventory.green.setGreenLotWeight", &body).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    diesel::sql_query("ROLLBACK").execute(&mut session).unwrap();
    let (status, text) = waiting.await.unwrap().expect("answer");
    assert_eq!(status, 200, "{text}");
    let lots = lots(http, a, ta).await;
    assert_eq!(lots[quiet].2, Decimal::from(2));
    assert_eq!(lots[hot].2, Decimal::from(1));
}

/// Sessions of the servers (named by `application_name`) waiting for a lock right now.
fn lock_waiters(session: &mut PgConnection) -> i64 {
    let rows: Vec<CountRow> = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name LIKE 'roastery/%' AND wait_event_type = 'Lock'",
    )
    .load(session)
    .expect("pg_stat_activity");
    rows[0].n
}

#[derive(diesel::QueryableByName)]
struct CountRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
struct WeightRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    weight_micros: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_postgres() {
    two_instances(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_sqlite() {
    two_instances(Backend::Sqlite).await;
}

/// Requests through both instances at once, half to each: the share that answered 200 is what
/// one quota admits, not one quota per instance. Returns (passed, seconds taken).
async fn burst_through_both(
    http: &oauth2::reqwest::Client,
    requests: usize,
    send: impl Fn(usize) -> oauth2::reqwest::RequestBuilder,
) -> (usize, f64) {
    let started = Instant::now();
    let mut pending = Vec::new();
    for i in 0..requests {
        let request = send(i);
        pending.push(tokio::spawn(async move {
            let response = request.send().await.expect("answer");
            let status = response.status().as_u16();
            for header in ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] {
                assert!(
                    response.headers().contains_key(header),
                    "{header} on {status}"
                );
            }
            if status == 429 {
                assert!(response.headers().contains_key("retry-after"));
            }
            status
        }));
    }
    let mut passed = 0;
    for task in pending {
        match task.await.expect("request task") {
            200 => passed += 1,
            429 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    let _ = http;
    (passed, started.elapsed().as_secs_f64())
}

/// With 5/s and bursts of 10, N requests over `seconds` may pass at most 10 + 5 × seconds (+1
/// for the emission that falls due at the boundary), whichever instance they reach.
fn one_quota_allows(seconds: f64) -> usize {
    10 + (5.0 * seconds).ceil() as usize + 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rate_limit_quota_across_instances_postgres() {
    let Some(env) = Env::new(Backend::Postgres, "instances", SCOPES)
        .map(|e| e.with_var("ROASTERY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS))
    else {
        return;
    };
    let account = env.account();
    let limited = [("ROASTERY_RATE_LIMIT", "5/s,burst=10")];
    let servers = [env.serve_with("a", &limited), env.serve_with("b", &limited)];
    let http = env.client();
    let bases: Vec<String> = servers.iter().map(Server::base).collect();
    let tokens = [
        token(&http, &bases[0], &account).await,
        token(&http, &bases[1], &account).await,
    ];

    let (passed, seconds) = burst_through_both(&http, 36, |i| {
        http.post(format!(
            "{}/rpc/v1/core.location.listLocations",
            bases[i % 2]
        ))
        .bearer_auth(&tokens[i % 2])
        .header("Content-Type", "application/json")
        .body("{}")
    })
    .await;
    eprintln!("operations: {passed} of 36 passed in {seconds:.2} s");
    assert!(passed >= 10, "the burst passes: {passed}");
    assert!(
        passed <= one_quota_allows(seconds),
        "{passed} passed in {seconds:.2} s: more than one quota"
    );

    // The token endpoint: one quota per client id across instances (two tokens already taken).
    let (passed, seconds) = burst_through_both(&http, 24, |i| {
        http.post(format!("{}/oauth2/token", bases[i % 2]))
            .basic_auth(&account.0, Some(&account.1))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
    })
    .await;
    eprintln!("token requests: {passed} of 24 passed in {seconds:.2} s");
    assert!(passed >= 1, "token requests pass at first");
    assert!(
        passed + 2 <= one_quota_allows(seconds + 1.0),
        "{passed} token requests passed in {seconds:.2} s: more than one quota"
    );
}

const REPLICA_ENV: &str = "ROASTERY_TEST_REPLICA_URL";

/// Resumes WAL replay on the replica when dropped, whatever the test did.
struct ReplayPaused(PgConnection);

impl ReplayPaused {
    fn pause(url: &str) -> Self {
        let mut conn = PgConnection::establish(url).expect("connect to the replica");
        diesel::sql_query("SELECT pg_wal_replay_pause()::text")
            .execute(&mut conn)
            .expect("pause replay");
        Self(conn)
    }
}

impl Drop for ReplayPaused {
    fn drop(&mut self) {
        diesel::sql_query("SELECT pg_wal_replay_resume()::text")
            .execute(&mut self.0)
            .ok();
    }
}

async fn location_names(http: &oauth2::reqwest::Client, base: &str, token: &str) -> Vec<String> {
    list_all(
        http,
        base,
        token,
        "core.location.listLocations",
        "locations",
    )
    .await
    .into_iter()
    .map(|(l, _)| l["name"].as_str().unwrap().to_owned())
    .collect()
}

/// With `ROASTERY_DATABASE_READ_URL` on a hot standby: while the standby's replay is paused,
/// a listing does not see a location just written and a trace does not find a lot just written
/// (both read the standby), while writes, reads that decide a write and token checks go on
/// against the primary. Once replay resumes, both catch up. `tests/pg-replica.sh` runs it against a throw-away primary and standby:
/// `tests/pg-replica.sh cargo test -p roastery-server --test instances -- listings_read_the_replica`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_read_the_replica_postgres() {
    let Ok(replica_admin) = std::env::var(REPLICA_ENV) else {
        eprintln!("skipped: {REPLICA_ENV} is not set, so the read-replica test did not run");
        return;
    };
    let Some(env) = Env::new(Backend::Postgres, "instances", SCOPES)
        .map(|e| e.with_var("ROASTERY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS))
    else {
        return;
    };
    let name = env
        .pg
        .as_ref()
        .and_then(|db| db.pg_name())
        .unwrap()
        .to_owned();
    let replica = database_on(&replica_admin, &name);
    let account = env.account();
    // The new database reaches the standby by replication.
    let deadline = Instant::now() + Duration::from_secs(30);
    while PgConnection::establish(&replica).is_err() {
        assert!(
            Instant::now() < deadline,
            "the database never reached the replica"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let server = env.serve_with("replica", &[("ROASTERY_DATABASE_READ_URL", &replica)]);
    let http = env.client();
    let base = server.base();
    let tok = token(&http, &base, &account).await;
    let first = json!({"data": {"name": "Seen", "externalId": "SEEN"}});
    call_ok(&http, &base, &tok, "core.location.importLocation", first).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while location_names(&http, &base, &tok).await.is_empty() {
        assert!(Instant::now() < deadline, "the replica never caught up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let paused = ReplayPaused::pause(&replica);
    let second = json!({"data": {"name": "Not yet", "externalId": "NOT-YET"}});
    let answer = call_ok(&http, &base, &tok, "core.location.importLocation", second).await;
    let not_yet = id_of(&answer, "/result/location/id");
    assert_eq!(
        location_names(&http, &base, &tok).await,
        ["Seen"],
        "the listing is served by the paused replica"
    );
    // A write that reads what the replica has not seen yet works: it runs on the primary.
    let lot = json!({"data": {"name": "Lot", "externalId": "L1", "locationId": not_yet,
        "weight": {"amount": 1, "unit": "KG"}}});
    let answer = call_ok(&http, &base, &tok, "inventory.green.importGreenLot", lot).await;
    let lot_id = id_of(&answer, "/result/greenLot/id");
    // Traces read the replica too: it has not seen the lot yet.
    let trace = json!({"params": {"filter": {"lotId": lot_id, "direction": "DOWNSTREAM"}}});
    let (status, text) = call(&http, &base, &tok, "inventory.trace.traceLot", &trace)
        .await
        .expect("answer");
    assert!(
        status != 200 && text.contains("not_found"),
        "a trace of a lot the paused replica has not seen: {status} {text}"
    );
    // So do token checks: a fresh account's token works at once.
    let late = env.account();
    let late_token = token(&http, &base, &late).await;
    let (status, text) = call(
        &http,
        &base,
        &late_token,
        "core.location.listLocations",
        &json!({}),
    )
    .await
    .expect("answer");
    assert_eq!(status, 200, "{text}");

    drop(paused);
    let deadline = Instant::now() + Duration::from_secs(30);
    while location_names(&http, &base, &tok).await.len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the replica never caught up after resuming"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, text) = call(&http, &base, &tok, "inventory.trace.traceLot", &trace)
        .await
        .expect("answer");
    assert_eq!(status, 200, "{text}");
}
