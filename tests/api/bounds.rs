//! Bounds on what one request may cost, and rows read back as stored (issue: one bad row, one big
//! plot or one slow receiver must never hurt anyone else): plots limited in positions and checked
//! in O(n log n), never re-checked on read; due diligence answers bounded; numbers and text kept
//! as sent that every decoder takes; long event type filters; event retention checked at
//! start-up; CSV never read as formulas; more reserved address ranges refused for webhooks.

use std::time::Instant;

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

async fn ok(app: &TestApp, token: &str, operation: &str, body: Value) -> Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_owned()
}

fn kg(amount: u32) -> Value {
    json!({"amount": amount, "unit": "KG"})
}

/// A location and `n` green lots (60 KG each) named by `name(i)`; returns the location and lots.
async fn lots(
    app: &TestApp,
    token: &str,
    n: usize,
    name: impl Fn(usize) -> String,
) -> (String, Vec<String>) {
    let location = id(&ok(
        app,
        token,
        "core.location.importLocation",
        json!({"data": {"name": "Hamburg"}}),
    )
    .await["location"]);
    let mut ids = Vec::new();
    for i in 0..n {
        let lot = ok(
            app,
            token,
            "inventory.green.importGreenLot",
            json!({"data": {"name": name(i), "externalId": format!("G-{i}"), "weight": kg(60), "locationId": location}}),
        )
        .await;
        ids.push(id(&lot["greenLot"]));
    }
    (location, ids)
}

fn set_body(lot: &str, plots: &str) -> String {
    format!(
        r#"{{"data":{{"greenLotId":"{lot}","countryOfProduction":"CO",
            "productionPeriod":{{"from":"2025-10-01","to":"2026-02-28"}},"plots":{plots},
            "statements":[{{"referenceNumber":"REF{}","kind":"DDS","role":"UPSTREAM"}}]}}}}"#,
        lot[..8].to_uppercase()
    )
}

async fn set(app: &TestApp, token: &str, lot: &str, plots: &str) -> (u16, Value) {
    let (status, text) = app
        .call_raw(
            token,
            "inventory.green.setDueDiligence",
            &set_body(lot, plots),
        )
        .await;
    (status.as_u16(), parse(&text))
}

fn polygon(ring: &str) -> String {
    format!(
        r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Polygon","coordinates":[{ring}]}},"properties":{{}}}}]}}"#
    )
}

/// A simple zigzag ring of `n` vertices 0.001° apart, closed under them (`n + 3` positions).
fn zigzag(n: usize) -> String {
    let mut positions: Vec<String> = (0..n)
        .map(|i| format!("[{}.{:03},{}]", i / 1000, i % 1000, i % 2))
        .collect();
    let last = n - 1;
    positions.push(format!("[{}.{:03},-1]", last / 1000, last % 1000));
    positions.push("[0,-1]".to_owned());
    positions.push("[0,0]".to_owned());
    format!("[{}]", positions.join(","))
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

both_databases! {
    async fn a_ring_of_a_mebibyte_is_answered_and_stored_plots_are_read_back_unchecked(app) {
        let token = app.token(ALL_SCOPES).await;
        let (_, ids) = lots(&app, &token, 2, |i| format!("Lot {i}")).await;
        // 90,000 vertices in just under 1 MiB: over the limit of a ring, refused naming it.
        let big = set_body(&ids[0], &polygon(&zigzag(90_000)));
        assert!(big.len() < 1024 * 1024 && big.len() > 900_000, "{}", big.len());
        let at = Instant::now();
        let (s, b) = app.call_raw(&token, "inventory.green.setDueDiligence", &big).await;
        eprintln!("90k-vertex ring refused in {:?}", at.elapsed());
        let b = parse(&b);
        assert_error(s, &b, 400, "invalid_parameter");
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.contains("data.plots.features[0].geometry.coordinates") && message.contains("50000"), "{message}");

        // The largest ring accepted: checked on write, answered on read without a check.
        let at = Instant::now();
        let (s, b) = set(&app, &token, &ids[0], &polygon(&zigzag(49_997))).await;
        eprintln!("50k-vertex ring accepted in {:?}", at.elapsed());
        assert_eq!(s, 200, "{b}");
        let at = Instant::now();
        let r = ok(&app, &token, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": ids[0]}}})).await;
        eprintln!("getDueDiligence of it in {:?}", at.elapsed());
        assert_eq!(r["plots"]["features"][0]["geometry"]["coordinates"][0].as_array().unwrap().len(), 50_000);
        let at = Instant::now();
        let r = ok(&app, &token, "inventory.green.getGreenLotDetailsByIds", json!({"params": {"filter": {"greenLotIds": [ids[0]]}}})).await;
        eprintln!("getGreenLotDetailsByIds of it in {:?}", at.elapsed());
        assert_eq!(r["greenLotDetails"][0]["dueDiligence"]["plots"]["features"].as_array().unwrap().len(), 1);

        // A stored ring today's rules refuse (a bow tie) still reads back, as stored.
        let (s, b) = set(&app, &token, &ids[1], &polygon("[[0,0],[1,0],[1,1],[0,1],[0,0]]")).await;
        assert_eq!(s, 200, "{b}");
        let n = roastery_test_support::database::execute(
            &app.database_url,
            &format!("UPDATE green_lot_due_diligence SET document = REPLACE(document, '[1,0],[1,1]', '[1,1],[1,0]') WHERE green_lot_id = '{}'", ids[1]),
        );
        assert_eq!(n, 1);
        let r = ok(&app, &token, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": ids[1]}}})).await;
        assert_eq!(r["plots"]["features"][0]["geometry"]["coordinates"], json!([[[0,0],[1,1],[1,0],[0,1],[0,0]]]));
        let r = ok(&app, &token, "inventory.green.getGreenLotDetailsByIds", json!({"params": {"filter": {"greenLotIds": [ids[1]]}}})).await;
        assert_eq!(r["greenLotDetails"][0]["dueDiligence"]["plots"]["features"][0]["geometry"]["coordinates"],
            json!([[[0,0],[1,1],[1,0],[0,1],[0,0]]]));
    }

    async fn numbers_no_decoder_takes_and_lone_surrogates_are_refused_naming_the_field(app) {
        let token = app.token(ALL_SCOPES).await;
        let (_, ids) = lots(&app, &token, 1, |_| "Lot".to_owned()).await;
        let point = |coordinates: &str, properties: &str| format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Point","coordinates":{coordinates}}},"properties":{properties}}}]}}"#
        );
        let cases = [
            (point("[38.5,6.25,1e999999]", r#"{"Area":1}"#), "data.plots.features[0].geometry.coordinates"),
            (point(&format!("[38.5,6.25,{}]", "9".repeat(5_000)), r#"{"Area":1}"#), "data.plots.features[0].geometry.coordinates"),
            (point("[38.5,6.25]", r#"{"Area":1,"ProducerName":"\ud800"}"#), "data.plots.features[0].properties.ProducerName"),
            (point("[38.5,6.25]", r#"{"Area":1,"Note":{"height":1e999999}}"#), "data.plots.features[0].properties.Note"),
        ];
        for (plots, field) in cases {
            let (s, b) = set(&app, &token, &ids[0], &plots).await;
            assert_eq!(s, 400, "{field}: {b}");
            assert_eq!(b["error"]["code"], "invalid_parameter", "{b}");
            assert!(b["error"]["message"].as_str().unwrap().contains(field), "{b}");
        }
        // A surrogate pair and an ordinary altitude are kept and answered as sent.
        let (s, b) = set(&app, &token, &ids[0], &point("[38.5,6.25,1850.25]", r#"{"Area":1,"ProducerName":"Finca \ud83d\ude00"}"#)).await;
        assert_eq!(s, 200, "{b}");
    }

    async fn a_due_diligence_answer_over_the_bound_is_refused_naming_its_sources(app) {
        let token = app.token(ALL_SCOPES).await;
        let (location, ids) = lots(&app, &token, 5, |i| format!("Lot {i}")).await;
        // About 0.9 MB of plots per lot: 7,000 small squares.
        let squares: Vec<String> = (0..7_000)
            .map(|i| {
                let (x, y) = (i % 100, i / 100);
                format!(
                    r#"{{"type":"Feature","geometry":{{"type":"Polygon","coordinates":[[[{x}.1,{y}.1],[{x}.2,{y}.1],[{x}.2,{y}.2],[{x}.1,{y}.2],[{x}.1,{y}.1]]]}},"properties":{{}}}}"#
                )
            })
            .collect();
        let plots = format!(r#"{{"type":"FeatureCollection","features":[{}]}}"#, squares.join(","));
        assert!(plots.len() > 800_000, "{}", plots.len());
        for lot in &ids {
            let (s, b) = set(&app, &token, lot, &plots).await;
            assert_eq!(s, 200, "{b}");
        }
        let green: Vec<Value> = ids.iter().map(|g| json!({"id": g, "usedWeight": kg(10)})).collect();
        let roast = ok(&app, &token, "inventory.roast.recordRoast", json!({"data": {
            "name": "All five", "locationId": location, "roastedDate": "2026-03-01T09:30:00Z",
            "weight": kg(40), "greenLots": green}})).await;
        let roast = id(&roast["roastedLot"]);
        let before = peak_rss_kib();
        let (s, b) = app.call(&token, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": roast}}})).await;
        eprintln!("peak RSS of the test process {before} KiB -> {} KiB", peak_rss_kib());
        assert_error(s, &b, 422, "invalid_request");
        let message = b["error"]["message"].as_str().unwrap();
        for lot in &ids {
            assert!(message.contains(lot.as_str()), "{message}");
        }
        assert!(message.contains("filter.lotId"), "{message}");
        // Each source alone is answered.
        for lot in &ids {
            let r = ok(&app, &token, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": lot}}})).await;
            assert_eq!(r["plots"]["features"].as_array().unwrap().len(), 7_000);
        }
        // A page of details ends before it passes the bound; its cursor goes on.
        let (s, b) = app.call(&token, "inventory.green.getGreenLotDetailsByIds",
            json!({"params": {"filter": {"greenLotIds": ids}, "pagination": {"limit": 100}}})).await;
        assert_eq!(s, 200);
        let first = b["result"]["greenLotDetails"].as_array().unwrap().len();
        assert!((1..5).contains(&first), "{first} of 5 on the first page");
        assert!(b["meta"]["pagination"]["endCursor"].is_string());
        let all = app.list_all(&token, "inventory.green.getGreenLotDetailsByIds", "greenLotDetails",
            json!({"greenLotIds": ids}), 100).await;
        let got: Vec<String> = all.iter().map(|d| d["greenLotId"].as_str().unwrap_or_default().to_owned()).collect();
        assert_eq!(all.len(), 5, "{got:?}");
        assert!(all.iter().all(|d| d["dueDiligence"]["plots"]["features"].as_array().unwrap().len() == 7_000));
    }

    async fn an_event_filter_of_33000_types_is_answered(app) {
        let token = app.token(ALL_SCOPES).await;
        ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Hamburg"}})).await;
        let types: Vec<&str> = ["location.created", "greenLot.updated", "order.created"]
            .into_iter().cycle().take(33_000).collect();
        let (s, b) = app.call(&token, "core.event.listEvents",
            json!({"params": {"filter": {"types": types}, "pagination": {"limit": 100}}})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["events"].as_array().unwrap().len(), 1, "{b}");
    }

    async fn reserved_address_ranges_are_refused_as_webhook_receivers(app) {
        let token = app.token(ALL_SCOPES).await;
        for host in ["198.18.0.1", "198.19.1.1", "192.0.0.8", "240.0.0.1", "[2002:7f00:1::]",
                     "[2002:a9fe:a9fe::1]", "[64:ff9b:1::a00:1]"] {
            let (s, b) = app.call(&token, "core.event.createWebhook",
                json!({"data": {"url": format!("https://{host}/hooks")}})).await;
            assert_error(s, &b, 400, "invalid_parameter");
        }
    }

    async fn csv_fields_beginning_like_formulas_are_written_as_text(app) {
        let token = app.token(ALL_SCOPES).await;
        let names = ["=HYPERLINK(\"https://evil.example\",\"x\")", "+1+2", "-3+4", "@SUM(A1)", "\tTab", "Plain"];
        let (location, ids) = lots(&app, &token, names.len(), |i| names[i].to_owned()).await;
        for lot in &ids {
            let (s, b) = set(&app, &token, lot, &polygon("[[0,0],[1,0],[1,1],[0,1],[0,0]]")).await;
            assert_eq!(s, 200, "{b}");
        }
        let green: Vec<Value> = ids.iter().map(|g| json!({"id": g, "usedWeight": kg(10)})).collect();
        let roast = ok(&app, &token, "inventory.roast.recordRoast", json!({"data": {
            "name": "=1+1", "locationId": location, "roastedDate": "2026-03-01T09:30:00Z",
            "weight": kg(40), "greenLots": green}})).await;
        let roast: uuid::Uuid = id(&roast["roastedLot"]).parse().unwrap();
        let report = app.roastery.due_diligence_of_all(roastery_app::due_diligence::DueDiligenceOf::Lot(roast)).unwrap();
        let mut eudr = Vec::new();
        roastery_server::eudr::write_csv(&report, &mut eudr).unwrap();
        let first: uuid::Uuid = ids[0].parse().unwrap();
        let trace = app.roastery.trace_lot(first, roastery_domain::ledger::Direction::Downstream).unwrap();
        let mut traced = Vec::new();
        roastery_server::traceability::write_csv(&trace, &mut traced).unwrap();
        for csv in [String::from_utf8(eudr).unwrap(), String::from_utf8(traced).unwrap()] {
            // No field (after any quote) begins with a formula character.
            for line in csv.lines() {
                for field in line.split(',') {
                    let field = field.trim_start_matches('"');
                    assert!(!field.starts_with(['=', '+', '@', '\t']), "{field:?} in {csv}");
                    assert!(!field.starts_with('-') || field.starts_with("-0") , "{field:?} in {csv}");
                }
            }
            assert!(csv.contains("'="), "{csv}");
        }
    }

    async fn an_event_retention_out_of_range_stops_the_start(app) {
        for days in [100_000_000, 0] {
            let mut config = roastery_server::Config {
                listen: "127.0.0.1:0".into(),
                database_url: app.database_url.clone(),
                tls_cert: Some(certificate().dir.path().join("cert.pem")),
                tls_key: Some(certificate().dir.path().join("key.pem")),
                rate_limit: "off".into(),
                workers: Some(1),
                pool_size: Some(2),
                ..roastery_server::Config::default()
            };
            config.event_retention_days = days;
            let e = match roastery_server::Application::build(&config) {
                Ok(_) => panic!("started with {days} days of retention"),
                Err(e) => format!("{e:#}"),
            };
            assert!(e.contains("ROASTERY_EVENT_RETENTION_DAYS"), "{e}");
        }
    }
}
