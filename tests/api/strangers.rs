//! What a client without a valid token can make the server do (api-decisions §4): little. Its
//! body is never read, its connection is closed with the answer, and token requests are judged
//! by their size before any lookup.

use std::io::Write;

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;
use crate::slow_clients::{connect, read_until_closed};

/// Sends only the head of a request announcing a 1 MiB body and reads the answer: a server
/// that waited for the body would answer only after its body timeout, and then 400.
async fn head_only(app: &TestApp, path: &'static str, authorization: Option<String>) -> String {
    let port = app.port;
    tokio::task::spawn_blocking(move || {
        let mut tls = connect(port);
        let authorization = authorization
            .map(|value| format!("Authorization: {value}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\n{authorization}\
             Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
        );
        tls.write_all(head.as_bytes()).expect("send the head");
        tls.flush().expect("flush");
        read_until_closed(&mut tls)
    })
    .await
    .expect("client thread")
}

fn long_body_wait(config: &mut roastery_server::Config) {
    // Far beyond the test client's patience: only an answer that does not wait for the body
    // arrives before the client gives up.
    config.body_timeout = 600;
}

async fn token_form(app: &TestApp, form: &str) -> (StatusCode, Value) {
    let response = app
        .http
        .post(format!("{}/oauth2/token", app.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form.to_owned())
        .send()
        .await
        .expect("sent");
    let status = response.status();
    (status, parse(&response.text().await.expect("body")))
}

both_databases! {
    async fn a_request_without_a_valid_token_is_answered_401_before_its_body_and_closed(app, config: long_body_wait) {
        let cases = [
            (None, "no token"),
            (Some("Bearer not-a-token-we-issued".to_owned()), "unknown token"),
            (Some("Basic abc".to_owned()), "not a bearer token"),
        ];
        for (authorization, case) in cases {
            let answer = head_only(&app, "/rpc/v1/core.location.listLocations", authorization).await;
            assert!(answer.starts_with("HTTP/1.1 401"), "{case}: {answer}");
            assert!(answer.to_ascii_lowercase().contains("connection: close"), "{case}: {answer}");
            assert!(answer.contains("invalid_authentication"), "{case}: {answer}");
        }
        // 405 still wins over 401, and is answered the same way to a stranger.
        let answer = head_only(&app, "/rpc/v1/core.location.dropEverything", None).await;
        assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    }

    async fn a_known_caller_is_still_judged_after_its_whole_body(app) {
        let token = app.token("core.location").await;
        let (status, body) = app.call_raw(&token, "core.location.importLocation", "{\"data\": ").await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(parse(&body)["error"]["code"], "invalid_json");
        let (status, body) = app.call(&token, "core.location.importLocation", json!({"data": {"name": "Kept"}})).await;
        assert_eq!(status, 200, "{body}");
    }

    async fn client_ids_over_200_characters_are_invalid_request(app) {
        let long = "a".repeat(201);
        let (status, body) = token_form(
            &app,
            &format!("grant_type=client_credentials&client_id={long}&client_secret=s"),
        ).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"], "invalid_request");
        assert!(body["error_description"].as_str().unwrap().contains("200"), "{body}");
        let response = app
            .http
            .post(format!("{}/oauth2/token", app.base))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .basic_auth(&long, Some("s"))
            .body("grant_type=client_credentials")
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), 400);
        // At the limit, the id is looked up like any other: unknown, so invalid_client.
        let (status, body) = token_form(
            &app,
            &format!("grant_type=client_credentials&client_id={}&client_secret=s", "a".repeat(200)),
        ).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["error"], "invalid_client");
    }

    async fn a_token_request_body_is_bounded_far_below_an_operations(app) {
        let (id, secret) = app.account("core.location");
        let padding = "x".repeat(32 * 1024);
        let (status, body) = token_form(
            &app,
            &format!("grant_type=client_credentials&client_id={id}&client_secret={secret}&pad={padding}"),
        ).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"], "invalid_request");
        let (status, body) = token_form(
            &app,
            &format!("grant_type=client_credentials&client_id={id}&client_secret={secret}"),
        ).await;
        assert_eq!(status, 200, "{body}");
    }
}
