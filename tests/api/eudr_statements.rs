//! Filing and verifying EUDR statements end to end (api-decisions §14), against the stub EU
//! information system: verification outcomes, submission → SUBMITTED → AVAILABLE with the
//! numbers recorded on every lot, amend and withdraw, the IS's faults answered with nothing
//! recorded, a submission left SENDING resolved by the poller, and no secret in any answer.

use std::time::Duration;

use roastery_app::eudr_settings::EudrTiming;
use roastery_test_support::eu_stub::{EuStub, EuStubConfig, Injection, StubError};
use serde_json::Value;

use crate::helpers::*;

const SCOPES: &str = "core.location inventory.green eudr.statement core.event";

/// Runs `$body` with `$app` (a server connected to `$stub`, polling at scale 0.001) on SQLite
/// and PostgreSQL.
macro_rules! with_stub {
    ($(async fn $name:ident($app:ident, $stub:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                async fn run($app: TestApp, $stub: EuStub) $body

                async fn spawn(backend: Backend) -> Option<(TestApp, EuStub, tempfile::TempDir)> {
                    let stub = EuStub::start(EuStubConfig::default());
                    let dir = tempfile::tempdir().unwrap();
                    let ca = dir.path().join("eu-ca.pem");
                    std::fs::write(&ca, stub.ca_pem()).unwrap();
                    let config = stub.config().clone();
                    let base = stub.base_url().to_owned();
                    let app = TestApp::spawn_with(backend, move |c| {
                        c.eudr_endpoint = Some(base);
                        c.eudr_username = Some(config.username.clone());
                        c.eudr_auth_key = Some(roastery_server::config::Secret::new(config.auth_key.clone()));
                        c.eudr_client_id = Some(config.client_id.clone());
                        c.eudr_ca_file = Some(ca);
                        c.eudr_poll_scale = "0.001".into();
                    })
                    .await?;
                    Some((app, stub, dir))
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let (app, stub, _dir) = spawn(Backend::Sqlite).await.expect("SQLite always runs");
                    run(app, stub).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some((app, stub, _dir)) = spawn(Backend::Postgres).await {
                        run(app, stub).await;
                    }
                }
            }
        )*
    };
}

async fn ok(app: &TestApp, token: &str, operation: &str, body: Value) -> Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}

const PLOTS: &str = r#"{"type":"FeatureCollection","features":[
    {"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":2,"ProducerName":"Finca A"}},
    {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-75.1,2.0],[-75.1,2.1],[-75.0,2.1],[-75.0,2.0],[-75.1,2.0]]]},"properties":{"ProducerName":"Finca B","ProducerCountry":"PE"}}]}"#;

/// A token and two source lots (60 kg and 25 kg) with due diligence and these statements on
/// the first.
async fn world(app: &TestApp, statements: Value) -> (String, String, String) {
    let token = app.token(SCOPES).await;
    let t = token.as_str();
    let import = |name: &str, ext: &str, kg: u32| json!({"data": {"name": name, "externalId": ext, "weight": {"amount": kg, "unit": "KG"}}});
    let g1 = ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Huila", "G-1", 60),
    )
    .await["greenLot"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let g2 = ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Guji", "G-2", 25),
    )
    .await["greenLot"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (lot, statements) in [(&g1, statements), (&g2, json!([]))] {
        let body = format!(
            r#"{{"data":{{"greenLotId":"{lot}","countryOfProduction":"CO",
                "productionPeriod":{{"from":"2025-10-01","to":"2026-02-28"}},
                "plots":{PLOTS},"statements":{statements}}}}}"#
        );
        let (status, text) = app
            .call_raw(t, "inventory.green.setDueDiligence", &body)
            .await;
        assert_eq!(status, 200, "{text}");
    }
    (token, g1, g2)
}

async fn statements_of(app: &TestApp, token: &str, lot: &str) -> Vec<Value> {
    let r = ok(
        app,
        token,
        "inventory.green.getGreenLotDetailsByIds",
        json!({"params": {"filter": {"greenLotIds": [lot]}}}),
    )
    .await;
    r["greenLotDetails"][0]["dueDiligence"]["statements"]
        .as_array()
        .unwrap()
        .clone()
}

async fn submission(app: &TestApp, token: &str, id: &str) -> Value {
    ok(
        app,
        token,
        "eudr.statement.getSubmissionsByIds",
        json!({"params": {"filter": {"submissionIds": [id]}}}),
    )
    .await["submissions"][0]
        .clone()
}

/// Waits (up to 30 s) until the submission reaches `status`.
async fn until_status(app: &TestApp, token: &str, id: &str, status: &str) -> Value {
    for _ in 0..300 {
        let s = submission(app, token, id).await;
        if s["status"] == status {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{id} never reached {status}: {}",
        submission(app, token, id).await
    );
}

fn own(statements: &[Value]) -> Vec<Value> {
    statements
        .iter()
        .filter(|s| s["role"] == "OWN")
        .cloned()
        .collect()
}

fn import_body(lots: &[&str]) -> Value {
    json!({"data": {"greenLotIds": lots, "activityType": "IMPORT", "countryOfActivity": "DE"}})
}

with_stub! {
    async fn verification_records_each_outcome(app, stub) {
        stub.register_declaration("25NLSN6LX69730", "K7R8LA90", "EXISTING_USABLE", Some("AVAILABLE"));
        stub.register_declaration("25NL000000WDRN", "WDRN1234", "EXISTING_NON_USABLE", Some("WITHDRAWN"));
        let (token, g1, _) = world(&app, json!([
            {"referenceNumber": "25NLSN6LX69730", "verificationNumber": "K7R8LA90", "kind": "DDS", "role": "UPSTREAM"},
            {"referenceNumber": "25NL000000WDRN", "verificationNumber": "WDRN1234", "kind": "DDS", "role": "UPSTREAM"},
            {"referenceNumber": "25NL00000NONEX", "verificationNumber": "NONEX123", "kind": "DDS", "role": "UPSTREAM"},
            {"referenceNumber": "25NL0000NOVERI", "kind": "DDS", "role": "UPSTREAM"}
        ])).await;
        let t = token.as_str();
        let r = ok(&app, t, "eudr.statement.verifyStatements", json!({"data": {"greenLotId": g1}})).await;
        let statements = r["greenLot"]["details"]["dueDiligence"]["statements"].as_array().unwrap().clone();
        let outcomes: Vec<(Value, Value)> = statements
            .iter()
            .map(|s| (s["verification"]["result"].clone(), s["verification"]["status"].clone()))
            .collect();
        assert_eq!(outcomes, vec![
            (json!("EXISTING_USABLE"), json!("AVAILABLE")),
            (json!("EXISTING_NON_USABLE"), json!("WITHDRAWN")),
            (json!("NON_EXISTENT"), Value::Null),
            (Value::Null, Value::Null),
        ], "{r}");
        assert_eq!(statements[3]["verification"], Value::Null, "no verification number: not asked");
        assert!(statements[0]["verification"]["checkedDate"].is_string());
        // Each statement with a verification number is asked about, the one without never. The
        // background re-verification may ask about the same statements meanwhile: what was asked
        // is compared, not how often.
        let mut asked: Vec<String> = stub
            .requests_for("verifyDeclaration")
            .iter()
            .filter_map(|r| r.fields.iter().find(|(p, _)| p.rsplit('/').next() == Some("referenceNumber")))
            .map(|(_, v)| v.clone())
            .collect();
        asked.sort();
        asked.dedup();
        assert_eq!(asked, ["25NL000000WDRN", "25NL00000NONEX", "25NLSN6LX69730"]);
        assert_eq!(statements_of(&app, t, &g1).await, statements, "recorded");
        // Not a source lot → refused, nothing asked.
        let (status, body) = app
            .call(t, "eudr.statement.verifyStatements", json!({"data": {"greenLotId": "0190c0de-0000-7000-8000-000000000001"}}))
            .await;
        assert_error(status, &body, 422, "resource_not_found");
    }

    async fn a_statement_goes_submitted_available_amended_and_withdrawn(app, stub) {
        let (token, g1, g2) = world(&app, json!([])).await;
        let t = token.as_str();
        let preview = ok(&app, t, "eudr.statement.previewStatement", import_body(&[&g1, &g2])).await;
        assert_eq!(preview["ready"], json!(true), "{preview}");
        let commodities = preview["statement"]["commodities"].as_array().unwrap();
        assert_eq!(commodities.len(), 2);
        assert_eq!(commodities[0]["lotId"], json!(g1));
        assert_eq!(commodities[0]["netWeight"], "60");
        assert_eq!(commodities[1]["netWeight"], "25");
        assert_eq!(commodities[0]["hsHeading"], "090111");
        let producers: Vec<(Value, Value)> = commodities[0]["producers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].clone(), p["country"].clone()))
            .collect();
        assert_eq!(producers, vec![(json!("Finca A"), json!("CO")), (json!("Finca B"), json!("PE"))]);
        // The clockwise ring goes out counterclockwise.
        assert_eq!(
            commodities[0]["producers"][1]["plots"]["features"][0]["geometry"]["coordinates"],
            json!([[[-75.1, 2.0], [-75.0, 2.0], [-75.0, 2.1], [-75.1, 2.1], [-75.1, 2.0]]])
        );

        let (status, text) = app
            .call_raw(t, "eudr.statement.submitStatement", &import_body(&[&g1, &g2]).to_string())
            .await;
        assert_eq!(status, 200, "{text}");
        assert!(!text.contains(&stub.config().auth_key), "no secret in an answer");
        let s = parse(&text)["result"]["submission"].clone();
        assert_eq!(s["status"], "SUBMITTED", "{s}");
        let id = s["id"].as_str().unwrap().to_owned();
        assert!(s["internalReferenceNumber"].as_str().unwrap().starts_with("RST-"));
        assert_eq!(stub.statements().len(), 1);
        assert_eq!(stub.statements()[0].uuid, s["euUuid"].as_str().unwrap());

        let s = until_status(&app, t, &id, "AVAILABLE").await;
        let history: Vec<&str> = s["history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["SENDING", "SUBMITTED", "AVAILABLE"], "{s}");
        let reference = s["referenceNumber"].as_str().unwrap().to_owned();
        for lot in [&g1, &g2] {
            let own = own(&statements_of(&app, t, lot).await);
            assert_eq!(own.len(), 1, "{own:?}");
            assert_eq!(own[0]["referenceNumber"], json!(reference));
            assert_eq!(own[0]["verificationNumber"], s["verificationNumber"]);
            assert_eq!(own[0]["kind"], "DDS");
            assert_eq!(own[0]["verification"]["result"], "EXISTING_USABLE");
            assert_eq!(own[0]["verification"]["status"], "AVAILABLE");
        }
        let listed = ok(&app, t, "eudr.statement.listSubmissions",
            json!({"params": {"filter": {"greenLotId": g2, "status": "AVAILABLE"}}})).await;
        assert_eq!(listed["submissions"].as_array().unwrap().len(), 1);
        let none = ok(&app, t, "eudr.statement.listSubmissions",
            json!({"params": {"filter": {"status": "REJECTED"}}})).await;
        assert_eq!(none["submissions"], json!([]));

        let amended = ok(&app, t, "eudr.statement.amendStatement",
            json!({"data": {"submissionId": id, "greenLotIds": [g1, g2], "countryOfActivity": "NL", "comment": "corrected"}})).await;
        assert_eq!(amended["submission"]["status"], "AVAILABLE", "{amended}");
        assert_eq!(stub.requests_for("amendDds").len(), 1);

        let withdrawn = ok(&app, t, "eudr.statement.withdrawStatement", json!({"data": {"submissionId": id}})).await;
        assert_eq!(withdrawn["submission"]["status"], "WITHDRAWN");
        for lot in [&g1, &g2] {
            let own = own(&statements_of(&app, t, lot).await);
            assert_eq!(own[0]["verification"]["result"], "EXISTING_NON_USABLE");
            assert_eq!(own[0]["verification"]["status"], "WITHDRAWN");
        }
        // Withdrawn: neither amend nor withdraw again.
        let (status, body) = app.call(t, "eudr.statement.withdrawStatement", json!({"data": {"submissionId": id}})).await;
        assert_error(status, &body, 422, "invalid_request");

        let events = ok(&app, t, "core.event.listEvents", json!({"params": {"filter": {"types": ["submission.created", "submission.updated"]}}})).await;
        let events = events["events"].as_array().unwrap();
        assert_eq!(events[0]["type"], "submission.created");
        assert!(events.iter().all(|e| e["subject"]["type"] == "submission"));
        assert!(events.len() >= 4, "{events:?}");
    }

    async fn the_is_faults_are_answered_and_nothing_is_recorded(app, stub) {
        let (token, g1, _) = world(&app, json!([])).await;
        let t = token.as_str();
        stub.inject_once("submitDds", Injection::BusinessRules(vec![StubError::new(
            "EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY", Some("geometryGeojson"), "invalid geometry")]));
        let (status, body) = app.call(t, "eudr.statement.submitStatement", import_body(&[&g1])).await;
        assert_error(status, &body, 422, "eudr_rejected");
        assert_eq!(body["error"]["details"][0]["code"], "EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY", "{body}");
        assert_eq!(body["error"]["details"][0]["field"], "geometryGeojson");

        stub.inject_once("submitDds", Injection::AuthFailure);
        let (status, body) = app.call(t, "eudr.statement.submitStatement", import_body(&[&g1])).await;
        assert_error(status, &body, 502, "eudr_auth_failed");
        assert!(!body.to_string().contains(&stub.config().auth_key), "no secret in an answer");

        stub.inject_once("submitDds", Injection::HttpStatus(503));
        let (status, body) = app.call(t, "eudr.statement.submitStatement", import_body(&[&g1])).await;
        assert_error(status, &body, 502, "eudr_unavailable");

        stub.inject_once("submitDds", Injection::ServerError);
        let (status, body) = app.call(t, "eudr.statement.submitStatement", import_body(&[&g1])).await;
        assert_error(status, &body, 502, "eudr_unavailable");

        let listed = ok(&app, t, "eudr.statement.listSubmissions", json!({})).await;
        let statuses: Vec<&str> = listed["submissions"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
        // Refused: FAILED. Unanswered: SENDING until the poller finds the IS never got them.
        assert_eq!(statuses.len(), 4, "{statuses:?}");
        assert!(statuses.iter().filter(|s| **s == "FAILED").count() >= 2, "{statuses:?}");
        assert!(statuses.iter().all(|s| *s == "FAILED" || *s == "SENDING"), "{statuses:?}");
        assert!(own(&statements_of(&app, t, &g1).await).is_empty(), "nothing recorded on the lot");

        // With problems nothing is sent.
        stub.clear_requests();
        let (status, body) = app.call(t, "eudr.statement.submitStatement",
            json!({"data": {"greenLotIds": [g1], "activityType": "IMPORT"}})).await;
        assert_error(status, &body, 422, "invalid_request");
        assert_eq!(body["error"]["details"][0]["rule"], "COUNTRY_OF_ACTIVITY", "{body}");
        assert_eq!(body["error"]["details"][0]["field"], "data.countryOfActivity", "{body}");
        assert!(stub.requests_for("submitDds").is_empty());
        // A preview names fields of the request under `data`, and a lot's own fields as stored.
        let preview = ok(&app, t, "eudr.statement.previewStatement",
            json!({"data": {"greenLotIds": [g1], "activityType": "IMPORT", "countryOfActivity": "US"}})).await;
        assert_eq!(preview["problems"][0]["field"], "data.countryOfActivity", "{preview}");
        assert_eq!(preview["problems"][0]["lotId"], Value::Null, "{preview}");
        // A request the use case refuses names its field under `data` too.
        let (status, body) = app.call(t, "eudr.statement.previewStatement",
            json!({"data": {"greenLotIds": [g1, g1], "activityType": "IMPORT"}})).await;
        assert_error(status, &body, 400, "invalid_parameter");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("data.greenLotIds: ") && message.contains("listed twice"), "{body}");
    }

    async fn a_submission_whose_answer_was_lost_is_found_by_its_reference_and_followed(app, stub) {
        let (token, g1, _) = world(&app, json!([])).await;
        let t = token.as_str();
        // The IS keeps the statement, but the connection drops before its answer arrives.
        stub.inject_once("submitDds", Injection::LoseAnswer);
        let (status, body) = app.call(t, "eudr.statement.submitStatement", import_body(&[&g1])).await;
        assert_error(status, &body, 502, "eudr_unavailable");
        assert_eq!(stub.statements().len(), 1, "the IS got the statement");
        let listed = ok(&app, t, "eudr.statement.listSubmissions", json!({})).await;
        let id = listed["submissions"][0]["id"].as_str().unwrap().to_owned();
        assert!(own(&statements_of(&app, t, &g1).await).is_empty(), "nothing recorded unconfirmed");
        // The poller asks by internal reference, takes the IS's uuid and follows it to AVAILABLE.
        let s = until_status(&app, t, &id, "AVAILABLE").await;
        assert!(!stub.requests_for("getDdsByInternalReference").is_empty(), "{s}");
        assert_eq!(s["euUuid"].as_str(), Some(stub.statements()[0].uuid.as_str()), "{s}");
        let own = own(&statements_of(&app, t, &g1).await);
        assert_eq!(own.len(), 1, "{own:?}");
        assert_eq!(own[0]["referenceNumber"], s["referenceNumber"], "{s}");
        assert_eq!(own[0]["verification"]["result"], "EXISTING_USABLE");
    }

    async fn a_submission_left_sending_is_resolved_by_the_poller(app, stub) {
        let (token, g1, _) = world(&app, json!([])).await;
        let t = token.as_str();
        // As if the instance crashed between storing the submission and sending it.
        let timing = EudrTiming::scaled(1, 7);
        let begun = app
            .roastery
            .begin_submission(
                roastery_domain::submission::StatementInput {
                    green_lot_ids: vec![g1.parse().unwrap()],
                    activity_type: "IMPORT".into(),
                    country_of_activity: Some("DE".into()),
                    ..Default::default()
                },
                timing,
            )
            .unwrap();
        let id = begun.submission.id.to_string();
        assert_eq!(submission(&app, t, &id).await["status"], "SENDING");
        // The IS never got it: failed an hour (× scale) later, after asking by reference.
        let s = until_status(&app, t, &id, "FAILED").await;
        assert!(!stub.requests_for("getDdsByInternalReference").is_empty(), "{s}");
        assert!(own(&statements_of(&app, t, &g1).await).is_empty());
    }
}
