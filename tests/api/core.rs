//! Transport, authentication, the error table and the core namespaces.

use std::time::Duration;

use roastery_domain::account::AccessGrant;
use roastery_domain::scope::ScopeSet;
use roastery_ports::Store;
use roastery_ports::repo::AccountRepo;
use roastery_ports::secret::hash_token;

use crate::both_databases;
use crate::helpers::*;

async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, serde_json::Value) {
    let mut request = app.http.post(format!("{}{path}", app.base)).body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(ct) = content_type {
        request = request.header("Content-Type", ct);
    }
    let response = request.send().await.expect("sent");
    let status = response.status();
    (status, parse(&response.text().await.expect("body")))
}

both_databases! {
    async fn oauth2_client_gets_an_eight_hour_token_with_percent_twenty_scopes(app) {
        let (id, secret) = app.account("core.location core.project");
        // HTTP Basic, as the oauth2 crate sends it.
        let token = app.fetch_token(&id, &secret, Some("core.location")).await.unwrap();
        assert!(!token.is_empty());
        // Credentials in the body, as the specification's sample sends them.
        let form = format!("grant_type=client_credentials&client_id={id}&client_secret={secret}");
        let response = app.http.post(format!("{}/oauth2/token", app.base))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["cache-control"], "no-store");
        let body = parse(&response.text().await.unwrap());
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["expires_in"], 28800);
        assert_eq!(body["scope"], "core.location%20core.project");
    }

    async fn token_errors_follow_rfc_6749(app) {
        let (id, secret) = app.account("core.location");
        assert_eq!(app.fetch_token(&id, "wrong", None).await.unwrap_err(), "invalid_client");
        assert_eq!(app.fetch_token("rc-nobody", &secret, None).await.unwrap_err(), "invalid_client");
        assert_eq!(app.fetch_token(&id, &secret, Some("mrp.order")).await.unwrap_err(), "invalid_scope");
        let send = |form: String, ct: &'static str| {
            app.http.post(format!("{}/oauth2/token", app.base)).header("Content-Type", ct).body(form).send()
        };
        let r = send(format!("grant_type=password&client_id={id}&client_secret={secret}"), "application/x-www-form-urlencoded").await.unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(r.text().await.map(|t| parse(&t)).unwrap()["error"], "unsupported_grant_type");
        let r = send(format!("client_id={id}&client_secret={secret}"), "application/x-www-form-urlencoded").await.unwrap();
        assert_eq!(r.text().await.map(|t| parse(&t)).unwrap()["error"], "invalid_request");
        let r = send("grant_type=client_credentials".into(), "application/x-www-form-urlencoded").await.unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(r.text().await.map(|t| parse(&t)).unwrap()["error"], "invalid_client");
        let r = send(format!("grant_type=client_credentials&client_id={id}&client_secret={secret}"), "application/json").await.unwrap();
        assert_eq!(r.status(), 400);
    }

    async fn missing_garbage_expired_and_revoked_tokens_are_401(app) {
        let op = "core.location.listLocations";
        let (status, body) = post(&app, &format!("/rpc/v1/{op}"), None, Some("application/json"), b"{}".to_vec()).await;
        assert_error(status, &body, 401, "invalid_authentication");
        let (status, body) = app.call("garbage", op, json!({})).await;
        assert_error(status, &body, 401, "invalid_authentication");

        let expired = "an-expired-token-value";
        let (id, _) = app.account("core.location");
        let grant = AccessGrant {
            client_id: id,
            scopes: ScopeSet::parse("core.location").unwrap(),
            expires_at: chrono::Utc::now() - chrono::TimeDelta::seconds(1),
        };
        app.roastery.store().write(|tx| Ok(tx.insert_token(&hash_token(expired), &grant)?)).unwrap();
        let (status, body) = app.call(expired, op, json!({})).await;
        assert_error(status, &body, 401, "invalid_authentication");
        assert!(body["error"]["message"].as_str().unwrap().contains("expired"));

        let (id, secret) = app.account("core.location");
        let token = app.fetch_token(&id, &secret, None).await.unwrap();
        app.roastery.revoke_account(&id).unwrap();
        let (status, body) = app.call(&token, op, json!({})).await;
        assert_error(status, &body, 401, "invalid_authentication");
        assert_eq!(app.fetch_token(&id, &secret, None).await.unwrap_err(), "invalid_client");
    }

    async fn a_remembered_secret_check_lets_neither_a_wrong_secret_nor_a_revoked_account_through(app) {
        let (id, secret) = app.account("core.location");
        // The first request checks the secret in full and remembers it; the second is answered
        // from that memory.
        for _ in 0..2 {
            assert!(app.fetch_token(&id, &secret, None).await.is_ok());
        }
        assert_eq!(app.fetch_token(&id, "not-the-secret", None).await.unwrap_err(), "invalid_client");
        assert_eq!(app.fetch_token(&id, &format!("{secret}x"), None).await.unwrap_err(), "invalid_client");
        let (other, _) = app.account("core.location");
        assert_eq!(app.fetch_token(&other, &secret, None).await.unwrap_err(), "invalid_client");
        assert!(app.fetch_token(&id, &secret, None).await.is_ok());
        // Revocation is read from the store on every request: refused at once.
        app.roastery.revoke_account(&id).unwrap();
        assert_eq!(app.fetch_token(&id, &secret, None).await.unwrap_err(), "invalid_client");
    }

    async fn a_token_without_the_namespace_scope_is_403(app) {
        let token = app.token("core.project").await;
        let (status, body) = app.call(&token, "core.location.listLocations", json!({})).await;
        assert_error(status, &body, 403, "access_denied");
    }

    async fn transport_errors_have_their_codes(app) {
        let token = app.token(ALL_SCOPES).await;
        let path = "/rpc/v1/core.location.importLocation";
        let good = br#"{"data": {"name": "Hamburg"}}"#.to_vec();
        let (s, b) = post(&app, path, Some(&token), None, good.clone()).await;
        assert_error(s, &b, 400, "invalid_request");
        let (s, b) = post(&app, path, Some(&token), Some("text/plain"), good.clone()).await;
        assert_error(s, &b, 400, "invalid_request");
        let (s, b) = post(&app, path, Some(&token), Some("application/json; charset=utf-8"), good).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = post(&app, path, Some(&token), Some("application/json"), b"{\"data\": ".to_vec()).await;
        assert_error(s, &b, 400, "invalid_json");
        let (s, b) = post(&app, path, Some(&token), Some("application/json"), b"[1, 2]".to_vec()).await;
        assert_error(s, &b, 400, "invalid_json");
        let big = format!("{{\"data\": {{\"name\": \"{}\"}}}}", "x".repeat(1024 * 1024 + 10));
        let (s, b) = post(&app, path, Some(&token), Some("application/json"), big.into_bytes()).await;
        assert_error(s, &b, 400, "invalid_request");
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"externalId": "x"}})).await;
        assert_error(s, &b, 400, "missing_parameter");
        let (s, b) = app.call(&token, "core.location.importLocation", json!({})).await;
        assert_error(s, &b, 400, "missing_parameter");
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": 7}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": "  "}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
    }

    async fn unknown_operations_and_other_methods_are_405_before_auth(app) {
        let (s, b) = app.call("garbage", "core.location.deleteEverything", json!({})).await;
        assert_error(s, &b, 405, "invalid_request");
        let response = app.http.get(format!("{}/rpc/v1/core.location.listLocations", app.base)).send().await.unwrap();
        assert_eq!(response.status(), 405);
        let body = parse(&response.text().await.unwrap());
        assert_eq!(body["error"]["code"], "invalid_request");
        let (s, b) = post(&app, "/nowhere", None, None, vec![]).await;
        assert_error(s, &b, 404, "resource_not_found");
        // 401 wins over a malformed body.
        let (s, b) = post(&app, "/rpc/v1/core.location.importLocation", None, Some("application/json"), b"{".to_vec()).await;
        assert_error(s, &b, 401, "invalid_authentication");
    }

    async fn duplicates_are_conflicts(app) {
        let token = app.token(ALL_SCOPES).await;
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": "A", "externalId": "wh-1"}})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["location"]["externalId"], "wh-1");
        assert_eq!(b["meta"], json!({}));
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": "B", "externalId": "wh-1"}})).await;
        assert_error(s, &b, 422, "resource_conflict");
        let (s, b) = app.call(&token, "core.project.importProject", json!({"data": {"name": "Espresso", "description": "house"}})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["project"]["description"], "house");
        let (s, b) = app.call(&token, "core.project.importProject", json!({"data": {"name": "Espresso"}})).await;
        assert_error(s, &b, 422, "resource_conflict");
    }

    async fn listings_page_newest_first_each_record_once(app) {
        let token = app.token(ALL_SCOPES).await;
        for i in 0..7 {
            let (s, b) = app.call(&token, "core.project.importProject", json!({"data": {"name": format!("P{i}")}})).await;
            assert_eq!(s, 200, "{b}");
        }
        let all = app.list_all(&token, "core.project.listProjects", "projects", json!({}), 3).await;
        let names: Vec<&str> = all.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["P6", "P5", "P4", "P3", "P2", "P1", "P0"]);
        let (s, b) = app.call(&token, "core.project.listProjects", json!({})).await;
        assert_eq!(s, 200);
        assert_eq!(b["result"]["projects"].as_array().unwrap().len(), 7);
        assert!(b["meta"]["pagination"]["endCursor"].is_null());
    }

    async fn bad_limits_and_cursors_are_invalid_parameters(app) {
        let token = app.token(ALL_SCOPES).await;
        for limit in [0, 101, -1] {
            let (s, b) = app.call(&token, "core.location.listLocations", json!({"params": {"pagination": {"limit": limit}}})).await;
            assert_error(s, &b, 400, "invalid_parameter");
        }
        for i in 0..3 {
            app.call(&token, "core.location.importLocation", json!({"data": {"name": format!("L{i}")}})).await;
        }
        let (_, b) = app.call(&token, "core.location.listLocations", json!({"params": {"pagination": {"limit": 1}}})).await;
        let cursor = b["meta"]["pagination"]["endCursor"].as_str().unwrap().to_owned();
        let (s, b) = app.call(&token, "core.project.listProjects", json!({"params": {"pagination": {"after": cursor}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let mut forged = cursor.clone();
        forged.insert(2, 'A');
        let (s, b) = app.call(&token, "core.location.listLocations", json!({"params": {"pagination": {"after": forged}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, _) = app.call(&token, "core.location.listLocations", json!({"params": {"pagination": {"after": cursor}}})).await;
        assert_eq!(s, 200);
    }

    async fn health_answers_and_plain_http_gets_an_error_envelope(app) {
        let response = app.http.get(format!("{}/healthz", app.base)).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.headers().contains_key("strict-transport-security"));
        let plain = oauth2::reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/rpc/v1/core.location.listLocations", app.port))
            .timeout(Duration::from_secs(10))
            .header("Content-Type", "application/json")
            .body("{}")
            .send()
            .await
            .expect("a plain HTTP client gets an answer, not a hang");
        assert_eq!(plain.status(), 400);
        let body = parse(&plain.text().await.unwrap());
        assert_eq!(body["error"]["code"], "invalid_request");
    }
}
