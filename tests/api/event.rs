//! The change feed and webhooks end to end (api-decisions §13): the events of every write,
//! none for refusals and retries, a feed that never skips or repeats with concurrent writers on
//! two instances, and signed, retried, safe webhook deliveries.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

mod stored_webhooks;

async fn ok(app: &TestApp, token: &str, operation: &str, body: Value) -> Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_owned()
}

fn kg(amount: f64) -> Value {
    json!({"amount": amount, "unit": "KG"})
}

/// Reads the feed from a cursor.
struct Feed {
    cursor: Value,
}

impl Feed {
    fn new() -> Self {
        Self {
            cursor: Value::Null,
        }
    }

    /// One page after the cursor; moves the cursor to its end (never null).
    async fn page(&mut self, app: &TestApp, token: &str, limit: u32) -> Vec<Value> {
        let (status, body) = app
            .call(
                token,
                "core.event.listEvents",
                json!({"params": {"pagination": {"limit": limit, "after": self.cursor}}}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let cursor = body["meta"]["pagination"]["endCursor"].clone();
        assert!(cursor.is_string(), "endCursor is never null: {body}");
        self.cursor = cursor;
        body["result"]["events"].as_array().unwrap().clone()
    }

    /// Every event after the cursor, as (type, subject id) sorted, checking each event's
    /// operation and client.
    async fn since(
        &mut self,
        app: &TestApp,
        token: &str,
        operation: &str,
        client_id: &str,
    ) -> Vec<(String, String)> {
        let mut seen = Vec::new();
        loop {
            let page = self.page(app, token, 100).await;
            if page.is_empty() {
                break;
            }
            for e in page {
                assert_eq!(e["operation"], operation, "{e}");
                assert_eq!(e["clientId"], client_id, "{e}");
                assert_eq!(
                    e["subject"]["type"],
                    e["type"].as_str().unwrap().split('.').next().unwrap(),
                    "{e}"
                );
                seen.push((
                    e["type"].as_str().unwrap().to_owned(),
                    e["subject"]["id"].as_str().unwrap().to_owned(),
                ));
            }
        }
        seen.sort();
        seen
    }
}

fn expected(events: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = events
        .iter()
        .map(|(t, id)| ((*t).to_owned(), (*id).to_owned()))
        .collect();
    v.sort();
    v
}

both_databases! {
    async fn every_write_emits_one_event_per_resource_it_created_or_changed(app, config: trusting_receivers) {
        let (client, secret) = app.account(ALL_SCOPES);
        let token = app.fetch_token(&client, &secret, None).await.unwrap();
        let t = token.as_str();
        let mut feed = Feed::new();
        assert!(feed.page(&app, t, 10).await.is_empty(), "a new database has no events");
        // Runs a write and checks the events it emitted, exactly.
        macro_rules! step {
            ($op:literal, $body:expr, |$r:ident| $events:expr) => {{
                let $r = ok(&app, t, $op, $body).await;
                let want: Vec<(&str, String)> = $events;
                let want: Vec<(&str, &str)> = want.iter().map(|(t, i)| (*t, i.as_str())).collect();
                assert_eq!(feed.since(&app, t, $op, &client).await, expected(&want), "{}", $op);
                $r
            }};
        }
        let a = step!("core.location.importLocation", json!({"data": {"name": "Hamburg", "externalId": "HH"}}),
            |r| vec![("location.created", id(&r["location"]))]);
        let a = id(&a["location"]);
        let b = step!("core.location.importLocation", json!({"data": {"name": "Berlin"}}),
            |r| vec![("location.created", id(&r["location"]))]);
        let b = id(&b["location"]);
        step!("core.project.importProject", json!({"data": {"name": "Espresso"}}),
            |r| vec![("project.created", id(&r["project"]))]);
        let g1 = step!("inventory.green.importGreenLot",
            json!({"data": {"name": "Guji", "externalId": "G-1", "weight": kg(60.0), "locationId": a}}),
            |r| vec![("greenLot.created", id(&r["greenLot"]))]);
        let g1 = id(&g1["greenLot"]);
        let moved = step!("inventory.green.transferGreenLotToLocation",
            json!({"data": {"greenLotId": g1, "weight": kg(20.0), "destinationLocationId": b}}),
            |r| vec![("greenLot.updated", g1.clone()), ("greenLot.created", id(&r["destinationGreenLot"]))]);
        let g1b = id(&moved["destinationGreenLot"]);
        step!("inventory.green.transferGreenLotToLocation",
            json!({"data": {"greenLotId": g1b, "weight": kg(5.0), "destinationLocationId": a}}),
            |_r| vec![("greenLot.updated", g1b.clone()), ("greenLot.updated", g1.clone())]);
        let g2 = step!("inventory.green.importGreenLot",
            json!({"data": {"name": "Huila", "externalId": "G-2", "weight": kg(3.0)}}),
            |r| vec![("greenLot.created", id(&r["greenLot"]))]);
        let g2 = id(&g2["greenLot"]);
        step!("inventory.green.setGreenLotWeight", json!({"data": {"greenLotId": g2, "weight": kg(2.5)}}),
            |_r| vec![("greenLot.updated", g2.clone())]);
        step!("inventory.green.setGreenLotWeight", json!({"data": {"greenLotId": g2, "weight": kg(0.0)}}),
            |_r| vec![("greenLot.updated", g2.clone())]);
        // Setting zero on a consumed lot succeeds and changes nothing: no event.
        step!("inventory.green.setGreenLotWeight", json!({"data": {"greenLotId": g2, "weight": kg(0.0)}}),
            |_r| vec![]);
        // Due diligence is an answered field of the lot: replacing it (even on a consumed lot)
        // updates the lot.
        step!("inventory.green.setDueDiligence",
            json!({"data": {"greenLotId": g2, "countryOfProduction": "CO",
                "productionPeriod": {"from": "2025-10-01", "to": "2026-02-28"},
                "plots": {"type": "FeatureCollection", "features": [{"type": "Feature",
                    "properties": {"Area": 1.5}, "geometry": {"type": "Point", "coordinates": [-75.5, 2.1]}}]}}}),
            |_r| vec![("greenLot.updated", g2.clone())]);
        step!("inventory.roast.importProfile",
            json!({"data": {"name": "House", "components": [{"percentage": 100, "greenLotIds": [g1b]}]}}),
            |r| vec![("profile.created", id(&r["profile"]))]);
        let r1 = step!("inventory.roast.recordRoast",
            json!({"data": {"name": "Guji roast", "locationId": b, "roastedDate": "2026-03-01T09:30:00Z",
                            "weight": kg(8.0), "greenLots": [{"id": g1b, "usedWeight": kg(10.0)}]}}),
            |r| vec![("greenLot.updated", g1b.clone()), ("roastedLot.created", id(&r["roastedLot"]))]);
        let r1 = id(&r1["roastedLot"]);
        step!("inventory.roast.setRoastedLotWeight", json!({"data": {"roastedLotId": r1, "weight": kg(7.5)}}),
            |_r| vec![("roastedLot.updated", r1.clone())]);
        let b1 = step!("inventory.blend.createBlend",
            json!({"data": {"name": "House blend", "locationId": b, "blendedDate": "2026-03-02T08:00:00Z",
                            "roastedLots": [{"id": r1, "usedWeight": kg(5.0)}]}}),
            |r| vec![("roastedLot.updated", r1.clone()), ("blendedLot.created", id(&r["blendedLot"]))]);
        let b1 = id(&b1["blendedLot"]);
        let cupping = step!("quality.cupping.createCupping",
            json!({"data": {"startDate": "2026-03-05T10:00:00Z", "cuppingSheet": {"name": "SCA"},
                            "coffees": [{"lotId": r1, "type": "INVENTORY_ROAST"}]}}),
            |r| vec![("cupping.created", id(&r["cupping"]))]);
        let cupping_id = id(&cupping["cupping"]);
        step!("quality.cupping.setCuppingState", json!({"data": {"cuppingId": cupping_id, "state": "OPEN"}}),
            |_r| vec![("cupping.updated", cupping_id.clone())]);
        let cupped = cupping["cupping"]["cuppedCoffees"][0]["id"].as_str().unwrap().to_owned();
        step!("quality.cupping.recordCuppingResults",
            json!({"data": {"cuppingId": cupping_id, "results": [{"cuppedCoffeeId": cupped,
                   "evaluator": {"name": "Ada"}, "finalScore": 86.5, "scoringState": "INCLUDED"}]}}),
            |_r| vec![("cupping.updated", cupping_id.clone())]);
        step!("quality.physical.recordPhysicalAnalysis",
            json!({"data": {"analysisDate": "2026-03-06T10:00:00Z", "analysedLot": {"id": g1, "type": "INVENTORY_GREEN"},
                            "moisture": 10.5}}),
            |r| vec![("physicalAnalysis.created", id(&r["physicalAnalysis"]))]);
        let products = json!({"data": [{"externalId": "P-1", "name": "House",
            "variants": [{"sku": "HOUSE-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}]});
        let synced = step!("mrp.product.syncProducts", products.clone(),
            |r| vec![("product.created", id(&r["syncedProducts"][0]))]);
        let product = id(&synced["syncedProducts"][0]);
        // The same products again change nothing.
        step!("mrp.product.syncProducts", products, |_r| vec![]);
        step!("mrp.product.syncProducts", json!({"data": [{"externalId": "P-1", "name": "House",
            "variants": [{"sku": "HOUSE-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}},
                         {"sku": "HOUSE-500", "coffeeOptions": {"packageSize": "PACKAGE500G"}}]}]}),
            |_r| vec![("product.updated", product.clone())]);
        let orders = json!({"data": [{"externalId": "O-1", "orderDate": "2026-03-03T10:00:00Z",
            "customer": "Café Nord", "customerType": "WHOLESALE", "orderItems": [{"sku": "HOUSE-250", "quantity": 4}]}]});
        let synced = step!("mrp.order.setOrders", orders.clone(),
            |r| vec![("order.created", id(&r["syncedOrders"][0]))]);
        let order = id(&synced["syncedOrders"][0]);
        step!("mrp.order.setOrders", orders, |_r| vec![]);
        step!("mrp.order.setOrderStatus", json!({"data": {"orderId": order, "status": "IN_PROGRESS"}}),
            |_r| vec![("order.updated", order.clone())]);
        step!("mrp.order.shipOrder",
            json!({"data": {"orderId": order, "shippedDate": "2026-03-04T09:00:00Z",
                            "allocations": [{"sku": "HOUSE-250", "lotId": b1, "quantity": 4}]}}),
            |_r| vec![("order.updated", order.clone()), ("blendedLot.updated", b1.clone())]);
        // Webhook management changes no resource of the feed.
        let (s, body) = app.call(t, "core.event.createWebhook",
            json!({"data": {"url": "https://localhost:1/hooks"}})).await;
        assert_eq!(s, 200, "{body}");
        assert!(feed.page(&app, t, 100).await.is_empty());

        // Refused calls emit nothing.
        let refusals = [
            ("inventory.green.transferGreenLotToLocation",
             json!({"data": {"greenLotId": g1, "weight": kg(1000.0), "destinationLocationId": b}})),
            ("inventory.green.importGreenLot",
             json!({"data": {"name": "Guji", "externalId": "G-1", "weight": kg(1.0)}})),
            ("inventory.roast.recordRoast",
             json!({"data": {"name": "x", "locationId": b, "roastedDate": "2026-03-01T09:30:00Z",
                             "weight": kg(8.0), "greenLots": [{"id": g2, "usedWeight": kg(1.0)}]}})),
            ("quality.cupping.setCuppingState", json!({"data": {"cuppingId": cupping_id, "state": "DRAFT"}})),
            ("mrp.order.setOrderStatus", json!({"data": {"orderId": order, "status": "OPEN"}})),
            ("mrp.order.setOrders", json!({"data": [{"externalId": "O-2", "orderDate": "2026-03-03T10:00:00Z",
                "customer": "X", "customerType": "RETAIL", "orderItems": [{"sku": "NOPE", "quantity": 1}]}]})),
        ];
        for (op, body) in refusals {
            let (s, b) = app.call(t, op, body).await;
            assert_eq!(s.as_u16(), 422, "{op}: {b}");
        }
        assert!(feed.page(&app, t, 100).await.is_empty(), "refusals emit no event");
    }

    async fn the_feed_filters_by_type_and_refuses_bad_input(app) {
        let token = app.token("core.location core.event").await;
        let t = token.as_str();
        for name in ["A", "B", "C"] {
            ok(&app, t, "core.location.importLocation", json!({"data": {"name": name}})).await;
        }
        let (s, b) = app.call(t, "core.event.listEvents",
            json!({"params": {"filter": {"types": ["greenLot.created"]}}})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["events"], json!([]));
        let end = b["meta"]["pagination"]["endCursor"].clone();
        assert!(end.is_string());
        let (_, b) = app.call(t, "core.event.listEvents",
            json!({"params": {"filter": {"types": ["location.created"]}, "pagination": {"limit": 2}}})).await;
        let first = b["result"]["events"].as_array().unwrap().clone();
        assert_eq!(first.len(), 2);
        let (_, b2) = app.call(t, "core.event.listEvents",
            json!({"params": {"filter": {"types": ["location.created"]},
                              "pagination": {"limit": 2, "after": b["meta"]["pagination"]["endCursor"]}}})).await;
        let second = b2["result"]["events"].as_array().unwrap().clone();
        assert_eq!(second.len(), 1);
        let seqs: Vec<i64> = first.iter().chain(&second)
            .map(|e| e["sequence"].as_str().unwrap().parse().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
        let (s, b) = app.call(t, "core.event.listEvents",
            json!({"params": {"filter": {"types": ["greenLot.deleted"]}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = app.call(t, "core.event.listEvents",
            json!({"params": {"pagination": {"after": "forged.cursor"}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let other = app.token("core.location").await;
        let (s, b) = app.call(&other, "core.event.listEvents", json!({})).await;
        assert_error(s, &b, 403, "access_denied");
    }

    async fn concurrent_writers_on_two_instances_are_seen_exactly_once_in_order(app) {
        let second = Arc::new(
            TestApp::spawn_with(app.backend, |c| c.database_url = app.database_url.clone())
                .await
                .unwrap(),
        );
        let app = Arc::new(app);
        const WRITERS: usize = 8;
        const WRITES: usize = 15;
        let done = Arc::new(AtomicUsize::new(0));
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let instance = if w % 2 == 0 { app.clone() } else { second.clone() };
            let done = done.clone();
            // Accounts live in the shared database; the first instance's handle creates them.
            let (client, secret) = app.account("core.location");
            writers.push(tokio::spawn(async move {
                let token = instance.fetch_token(&client, &secret, None).await.unwrap();
                let mut ids = Vec::new();
                for i in 0..WRITES {
                    let r = ok(&instance, &token, "core.location.importLocation",
                        json!({"data": {"name": format!("W{w}-{i}")}})).await;
                    ids.push(id(&r["location"]));
                }
                done.fetch_add(1, Ordering::SeqCst);
                ids
            }));
        }
        // The poller pages on whichever instance, alternating, while the writers write.
        let poller = {
            let (app, second, done) = (app.clone(), second.clone(), done.clone());
            tokio::spawn(async move {
                let (client, secret) = app.account("core.event");
                let tokens = [
                    app.fetch_token(&client, &secret, None).await.unwrap(),
                    second.fetch_token(&client, &secret, None).await.unwrap(),
                ];
                let instances = [app, second];
                let mut feed = Feed::new();
                let mut seen: Vec<(i64, String)> = Vec::new();
                let mut turn = 0;
                loop {
                    let finished = done.load(Ordering::SeqCst) == WRITERS;
                    let page = feed.page(&instances[turn % 2], &tokens[turn % 2], 7).await;
                    turn += 1;
                    for e in &page {
                        seen.push((e["sequence"].as_str().unwrap().parse().unwrap(),
                                   e["subject"]["id"].as_str().unwrap().to_owned()));
                    }
                    if finished && page.is_empty() && seen.len() >= WRITERS * WRITES {
                        return seen;
                    }
                    if finished && page.is_empty() {
                        // Numbering catches up with the last commits.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            })
        };
        let mut written = BTreeSet::new();
        for w in writers {
            written.extend(w.await.unwrap());
        }
        let seen = tokio::time::timeout(Duration::from_secs(60), poller).await
            .expect("the poller saw every event").unwrap();
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "sequence order");
        let ids: Vec<&String> = seen.iter().map(|(_, id)| id).collect();
        let unique: BTreeSet<String> = ids.iter().map(|s| (*s).clone()).collect();
        assert_eq!(ids.len(), unique.len(), "no event twice");
        assert_eq!(unique, written, "every write's event once");
    }
}

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
    /// When the request was answered.
    at: Instant,
}

#[derive(Default)]
struct ReceiverState {
    log: Mutex<Vec<Received>>,
    /// Requests to answer 500 before answering 204.
    fail_first: AtomicUsize,
    /// How long each answer takes (to catch two sends of one event at the same time).
    hold: Duration,
    in_flight: Mutex<HashMap<String, usize>>,
    /// The most requests for one event at the same time.
    max_parallel_per_event: AtomicUsize,
}

/// An HTTPS webhook receiver on 127.0.0.1 with the test certificate (`localhost`).
struct Receiver {
    url: String,
    state: Arc<ReceiverState>,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    fn start(fail_first: usize, hold: Duration) -> Self {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let cert = certificate();
        let chain = vec![CertificateDer::from(cert.der.clone())];
        let key = PrivateKeyDer::from_pem_file(cert.dir.path().join("key.pem")).unwrap();
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
        let state = Arc::new(ReceiverState {
            fail_first: AtomicUsize::new(fail_first),
            hold,
            ..ReceiverState::default()
        });
        let shared = state.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let server = actix_web::HttpServer::new(move || {
                    actix_web::App::new()
                        .app_data(actix_web::web::Data::from(shared.clone()))
                        .default_service(actix_web::web::to(receive))
                })
                .workers(2)
                .bind_rustls_0_23(("127.0.0.1", 0), tls)
                .unwrap();
                let port = server.addrs()[0].port();
                let server = server.run();
                tx.send((port, server.handle())).unwrap();
                server.await.ok();
            })
        });
        let (port, handle) = rx.recv().unwrap();
        Self {
            url: format!("https://localhost:{port}/hooks/roastery"),
            state,
            handle,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.state.log.lock().unwrap().clone()
    }

    /// Waits (at most a minute) until `done` holds for what was received.
    async fn wait_for(&self, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            assert!(Instant::now() < deadline, "the receiver got only {got:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        std::thread::spawn(move || actix_rt::System::new().block_on(handle.stop(false)))
            .join()
            .ok();
    }
}

async fn receive(
    request: actix_web::HttpRequest,
    body: actix_web::web::Bytes,
    state: actix_web::web::Data<ReceiverState>,
) -> actix_web::HttpResponse {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let id = header("webhook-id");
    {
        let mut in_flight = state.in_flight.lock().unwrap();
        let n = in_flight.entry(id.clone()).or_default();
        *n += 1;
        state.max_parallel_per_event.fetch_max(*n, Ordering::SeqCst);
    }
    tokio::time::sleep(state.hold).await;
    *state.in_flight.lock().unwrap().get_mut(&id).unwrap() -= 1;
    state.log.lock().unwrap().push(Received {
        id,
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        body: body.to_vec(),
        at: Instant::now(),
    });
    let failing = state
        .fail_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if failing {
        actix_web::HttpResponse::InternalServerError().finish()
    } else {
        actix_web::HttpResponse::NoContent().finish()
    }
}

/// Verifies a Standard Webhooks signature as a receiver would, independently of the server.
fn signature_is_valid(secret: &str, r: &Received) -> bool {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use hmac::{Hmac, Mac};
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", r.id, r.timestamp).as_bytes());
    mac.update(&r.body);
    let expected = STANDARD.encode(mac.finalize().into_bytes());
    r.signature
        .split(' ')
        .any(|s| s.strip_prefix("v1,") == Some(expected.as_str()))
}

fn trusting_receivers(config: &mut roastery_server::Config) {
    config.webhook_allow_private = roastery_server::config::Switch::On;
    config.webhook_ca_file = Some(certificate().dir.path().join("cert.pem"));
    config.webhook_retry_scale = "0.01".into();
}

async fn create_webhook(app: &TestApp, token: &str, url: &str) -> Value {
    ok(
        app,
        token,
        "core.event.createWebhook",
        json!({"data": {"url": url, "description": "ERP"}}),
    )
    .await["webhook"]
        .clone()
}

async fn deliveries(app: &TestApp, token: &str, webhook: &str) -> Vec<Value> {
    app.list_all(
        token,
        "core.event.listDeliveries",
        "deliveries",
        json!({"webhookId": webhook}),
        100,
    )
    .await
}

both_databases! {
    async fn receivers_get_each_event_signed(app, config: trusting_receivers) {
        let receiver = Receiver::start(0, Duration::ZERO);
        let token = app.token(ALL_SCOPES).await;
        let hook = create_webhook(&app, &token, &receiver.url).await;
        let secret = hook["secret"].as_str().unwrap().to_owned();
        {
            use base64::Engine;
            let key = base64::engine::general_purpose::STANDARD
                .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix")).unwrap();
            assert_eq!(key.len(), 32);
        }
        assert_eq!(hook["status"], "ACTIVE");
        assert_eq!(hook["types"], json!([]));
        let listed = app.list_all(&token, "core.event.listWebhooks", "webhooks", json!({}), 10).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["id"], hook["id"]);
        assert!(listed[0].get("secret").is_none(), "the secret is answered only at creation");

        let location = ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Hamburg"}})).await;
        let got = receiver.wait_for(|r| !r.is_empty()).await;
        assert_eq!(got.len(), 1, "{got:?}");
        let r = &got[0];
        assert!(signature_is_valid(&secret, r), "{r:?}");
        let mut tampered = r.clone();
        tampered.body.push(b' ');
        assert!(!signature_is_valid(&secret, &tampered));
        let sent_at: i64 = r.timestamp.parse().unwrap();
        assert!((chrono::Utc::now().timestamp() - sent_at).abs() < 300);
        let event: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(event["id"], r.id.as_str());
        assert_eq!(event["type"], "location.created");
        assert_eq!(event["subject"], json!({"id": location["location"]["id"], "type": "location"}));
        let feed = Feed::new().page(&app, &token, 100).await;
        assert_eq!(feed.first(), Some(&event), "the body is the event as the feed answers it");

        let hook_id = id(&hook);
        // The outcome is stored once the receiver has answered.
        let deadline = Instant::now() + Duration::from_secs(30);
        let d = loop {
            let d = deliveries(&app, &token, &hook_id).await;
            if d.first().is_some_and(|d| d["status"] != "PENDING") || Instant::now() > deadline {
                break d;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0]["eventId"], event["id"]);
        assert_eq!(d[0]["status"], "DELIVERED");
        assert_eq!(d[0]["attempt"], 1);
        assert_eq!(d[0]["httpStatus"], 204);

        // Deleting stops deliveries and answers unknown ids with 422.
        let (s, b) = app.call(&token, "core.event.deleteWebhook", json!({"data": {"id": hook_id}})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = app.call(&token, "core.event.deleteWebhook", json!({"data": {"id": hook_id}})).await;
        assert_error(s, &b, 422, "resource_not_found");
        let (s, b) = app.call(&token, "core.event.listDeliveries",
            json!({"params": {"filter": {"webhookId": hook_id}}})).await;
        assert_error(s, &b, 422, "resource_not_found");
        assert!(app.list_all(&token, "core.event.listWebhooks", "webhooks", json!({}), 10).await.is_empty());
    }

    async fn a_receiver_failing_twice_gets_the_event_on_the_third_attempt(app, config: trusting_receivers) {
        let receiver = Receiver::start(2, Duration::ZERO);
        let token = app.token(ALL_SCOPES).await;
        let hook = create_webhook(&app, &token, &receiver.url).await;
        let secret = hook["secret"].as_str().unwrap().to_owned();
        ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Hamburg"}})).await;
        let got = receiver.wait_for(|r| r.len() >= 3).await;
        assert!(got.iter().all(|r| r.id == got[0].id), "one event, retried: {got:?}");
        assert!(got.iter().all(|r| signature_is_valid(&secret, r)));
        let hook_id = id(&hook);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let d = deliveries(&app, &token, &hook_id).await;
            assert_eq!(d.len(), 1, "{d:?}");
            if d[0]["status"] == "DELIVERED" {
                assert_eq!(d[0]["attempt"], 3, "{d:?}");
                break;
            }
            assert!(Instant::now() < deadline, "{d:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(receiver.received().len(), 3, "nothing after the delivery");
    }

    async fn private_receivers_are_refused_at_creation_and_at_delivery(app) {
        let token = app.token(ALL_SCOPES).await;
        for url in [
            "https://127.0.0.1/hook",
            "https://localhost:8443/hook",
            "https://[::1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
            "https://10.1.2.3/hook",
            "https://192.168.0.10/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://0.0.0.0/hook",
            "https://[fe80::1]/hook",
            "http://erp.example.com/hook",
            "ftp://erp.example.com/hook",
        ] {
            let (s, b) = app.call(&token, "core.event.createWebhook", json!({"data": {"url": url}})).await;
            assert_error(s, &b, 400, "invalid_parameter");
            let message = b["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("data.url "), "the field is named in the request: {message}");
        }
        let long = format!("https://erp.example.com/{}", "x".repeat(2_000));
        let (s, b) = app.call(&token, "core.event.createWebhook",
            json!({"data": {"url": "https://erp.example.com/hook", "description": long}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        assert!(b["error"]["message"].as_str().unwrap().starts_with("data.description "), "{b}");
        let (s, b) = app.call(&token, "core.event.createWebhook", json!({"data": {}})).await;
        assert_error(s, &b, 400, "missing_parameter");
        assert!(app.list_all(&token, "core.event.listWebhooks", "webhooks", json!({}), 10).await.is_empty());

        // A webhook stored while private addresses were allowed (here: by the command line's use
        // cases) is FAILED at delivery by a server that refuses them, without a request.
        struct AllowAll;
        impl roastery_app::event::ReceiverCheck for AllowAll {
            fn check(&self, _: &roastery_domain::webhook::WebhookUrl) -> Result<(), roastery_domain::webhook::WebhookError> {
                Ok(())
            }
        }
        let receiver = Receiver::start(0, Duration::ZERO);
        let hook = app.roastery.create_webhook(roastery_app::event::CreateWebhook {
            url: receiver.url.clone(), types: vec![], description: None,
        }, &AllowAll).unwrap();
        ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Hamburg"}})).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let d = deliveries(&app, &token, &hook.id.to_string()).await;
            if d.first().is_some_and(|d| d["status"] == "FAILED") {
                let error = d[0]["error"].as_str().unwrap();
                assert!(error.starts_with("url host ") && error.contains("private"), "{d:?}");
                assert_eq!(d[0]["httpStatus"], Value::Null);
                break;
            }
            assert!(Instant::now() < deadline, "{d:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(receiver.received().is_empty(), "no request reached the private address");
    }

    async fn two_instances_send_each_event_to_a_webhook_once_and_never_at_the_same_time(app, config: trusting_receivers) {
        let second = TestApp::spawn_with(app.backend, |c| {
            trusting_receivers(c);
            c.database_url = app.database_url.clone();
        })
        .await
        .unwrap();
        let receiver = Receiver::start(0, Duration::from_millis(200));
        let (client, secret) = app.account(ALL_SCOPES);
        let tokens = [
            app.fetch_token(&client, &secret, None).await.unwrap(),
            second.fetch_token(&client, &secret, None).await.unwrap(),
        ];
        create_webhook(&app, &tokens[0], &receiver.url).await;
        let instances = [&app, &second];
        let mut written = BTreeSet::new();
        for i in 0..12 {
            let r = ok(instances[i % 2], &tokens[i % 2], "core.location.importLocation",
                json!({"data": {"name": format!("L{i}")}})).await;
            written.insert(id(&r["location"]));
        }
        let got = receiver.wait_for(|r| r.len() >= 12).await;
        // A little longer: a duplicate send would show up now.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got_all = receiver.received();
        assert_eq!(got_all.len(), got.len().max(12), "{got_all:?}");
        let ids: BTreeSet<String> = got_all.iter().map(|r| r.id.clone()).collect();
        assert_eq!(ids.len(), got_all.len(), "each event once");
        assert_eq!(receiver.state.max_parallel_per_event.load(Ordering::SeqCst), 1);
        let subjects: BTreeSet<String> = got_all.iter()
            .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["subject"]["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(subjects, written);
    }

    async fn a_receiver_that_never_answers_does_not_delay_another(app, config: trusting_receivers) {
        // Holds every request far beyond the 10 s an attempt may take.
        let dead = Receiver::start(0, Duration::from_secs(3600));
        let healthy = Receiver::start(0, Duration::ZERO);
        let token = app.token(ALL_SCOPES).await;
        create_webhook(&app, &token, &dead.url).await;
        create_webhook(&app, &token, &healthy.url).await;
        let mut written: HashMap<String, Instant> = HashMap::new();
        for i in 0..20 {
            let r = ok(&app, &token, "core.location.importLocation",
                json!({"data": {"name": format!("L{i}")}})).await;
            // Committed before it was answered: lateness is counted from the answer, so a
            // slow write on a loaded machine does not count against the delivery.
            written.insert(id(&r["location"]), Instant::now());
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let got = healthy.wait_for(|r| r.len() >= 20).await;
        let mut late = Vec::new();
        for r in &got {
            let event: Value = serde_json::from_slice(&r.body).unwrap();
            let subject = event["subject"]["id"].as_str().unwrap();
            let delay = r.at.saturating_duration_since(written[subject]);
            if delay > Duration::from_secs(2) {
                late.push((subject.to_owned(), delay));
            }
        }
        assert!(late.is_empty(), "events reached the healthy receiver late: {late:?}");
        assert!(!dead.state.in_flight.lock().unwrap().is_empty(), "the dead receiver was sent to");
    }
}
