//! Limits and robustness: rate limits per service account and per client id, and malformed
//! bodies thrown at every operation.

use crate::helpers::*;

async fn limited_app(backend: Backend) -> Option<TestApp> {
    TestApp::spawn_with(backend, |c| c.rate_limit = "5/s,burst=10".into()).await
}

#[track_caller]
fn header(response: &oauth2::reqwest::Response, name: &str) -> u64 {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("header {name} missing"))
        .to_str()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("header {name} is not a number"))
}

async fn list_locations(app: &TestApp, token: &str) -> oauth2::reqwest::Response {
    app.http
        .post(format!("{}/rpc/v1/core.location.listLocations", app.base))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(r#"{"params": {}}"#)
        .send()
        .await
        .expect("request sent")
}

async fn operations_are_limited_per_account(backend: Backend) {
    let Some(app) = limited_app(backend).await else {
        return;
    };
    let token = app.token("core.location").await;
    let other = app.token("core.location").await;
    let mut statuses = Vec::new();
    let mut refused = None;
    for _ in 0..30 {
        let response = list_locations(&app, &token).await;
        let status = response.status().as_u16();
        assert_eq!(header(&response, "ratelimit-limit"), 10);
        header(&response, "ratelimit-remaining");
        header(&response, "ratelimit-reset");
        statuses.push(status);
        if status == 429 && refused.is_none() {
            let retry_after = header(&response, "retry-after");
            assert!(retry_after >= 1);
            assert_eq!(header(&response, "ratelimit-remaining"), 0);
            refused = Some(parse(&response.text().await.unwrap()));
        }
    }
    assert!(
        statuses[..10].iter().all(|s| *s == 200),
        "the burst passes: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let body = refused.expect("at least one call is refused");
    assert_error(
        StatusCode::TOO_MANY_REQUESTS,
        &body,
        429,
        "too_many_requests",
    );
    let response = list_locations(&app, &other).await;
    assert_eq!(response.status(), 200, "another account has its own bucket");
    assert_eq!(header(&response, "ratelimit-remaining"), 9);
}

async fn errors_past_the_limiter_carry_the_headers(backend: Backend) {
    let Some(app) = limited_app(backend).await else {
        return;
    };
    let token = app.token("core.location").await;
    let (status, _) = app
        .call_raw(&token, "core.location.listLocations", "{not json")
        .await;
    assert_eq!(status, 400);
    let response = app
        .http
        .post(format!("{}/rpc/v1/core.location.listLocations", app.base))
        .bearer_auth(&token)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(header(&response, "ratelimit-remaining"), 8);
    // Refused before the limiter: no bucket is touched, no headers.
    let response = app
        .http
        .post(format!("{}/rpc/v1/core.location.listLocations", app.base))
        .bearer_auth("not-a-token")
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert!(response.headers().get("ratelimit-limit").is_none());
}

async fn the_token_endpoint_is_limited_per_client_id(backend: Backend) {
    let Some(app) = limited_app(backend).await else {
        return;
    };
    let (id, secret) = app.account("core.location");
    let (other_id, other_secret) = app.account("core.location");
    // Sent together: verifying a secret is slow on purpose, so sequential requests could
    // refill the bucket as fast as they drain it.
    let requests = (0..30).map(|_| {
        app.http
            .post(format!("{}/oauth2/token", app.base))
            .basic_auth(&id, Some(&secret))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .send()
    });
    let mut statuses = Vec::new();
    let mut refused = None;
    for response in futures_util::future::join_all(requests).await {
        let response = response.unwrap();
        assert_eq!(header(&response, "ratelimit-limit"), 10);
        header(&response, "ratelimit-remaining");
        header(&response, "ratelimit-reset");
        let status = response.status().as_u16();
        statuses.push(status);
        if status == 429 && refused.is_none() {
            assert!(header(&response, "retry-after") >= 1);
            refused = Some(parse(&response.text().await.unwrap()));
        }
    }
    assert!(
        statuses.iter().filter(|s| **s == 200).count() >= 10,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let body = refused.expect("a token request is refused");
    assert_eq!(body["error"], json!("too_many_requests"), "{body}");
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    assert!(
        app.fetch_token(&other_id, &other_secret, None)
            .await
            .is_ok()
    );
}

macro_rules! on_both {
    ($($name:ident),*) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(super::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(super::Backend::Postgres).await;
            }
        }
    )*};
}

on_both!(
    operations_are_limited_per_account,
    errors_past_the_limiter_carry_the_headers,
    the_token_endpoint_is_limited_per_client_id
);

mod malformed_bodies {
    use proptest::prelude::*;
    use proptest::test_runner::{Config as RunnerConfig, TestRunner};
    use serde_json::Value;

    use crate::helpers::*;

    /// Codes of api-decisions §2 a malformed body may get.
    const SHAPE_CODES: &[&str] = &[
        "invalid_json",
        "invalid_request",
        "missing_parameter",
        "invalid_parameter",
        "unsupported_unit",
        "unsupported_currency",
        "resource_not_found",
        "invalid_weight",
        "invalid_price",
        "resource_conflict",
    ];

    /// A JSON value of a type no known field has at once: never a string.
    fn wrong_value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            Just("1e400".to_owned()),
            Just("-1e400".to_owned()),
            Just("123456789012345678901234567890123456789".to_owned()),
            any::<bool>().prop_map(|b| b.to_string()),
            Just("[1, \"x\", null]".to_owned()),
        ]
    }

    /// Bodies no operation accepts.
    fn malformed() -> impl Strategy<Value = String> {
        prop_oneof![
            // Random bytes that are not JSON.
            proptest::collection::vec(any::<u8>(), 0..64)
                .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
                .prop_filter("not JSON", |s| serde_json::from_str::<Value>(s).is_err()),
            // Truncated JSON.
            (1usize..40).prop_map(|n| {
                let full = r#"{"data": {"name": "Warehouse", "externalId": "x-1"}, "params": {}}"#;
                full[..n.min(full.len() - 1)].to_owned()
            }),
            // JSON that is not an object.
            wrong_value(),
            "[a-z]{0,8}".prop_map(|s| format!("\"{s}\"")),
            // Wrong types where the envelope's fields are known, plus unknown fields.
            (wrong_value(), wrong_value(), "[a-z]{1,8}").prop_map(|(d, p, extra)| {
                format!(r#"{{"data": {d}, "params": {p}, "{extra}x": {{}}}}"#)
            }),
            // Wrong types inside known fields.
            wrong_value().prop_map(|v| {
                format!(
                    r#"{{"data": {{"name": {v}, "externalId": {v}, "projects": {v}}}, "params": {{"filter": {v}, "pagination": {{"limit": {v}, "after": {v}}}}}}}"#
                )
            }),
            // Deep nesting.
            (64usize..2048).prop_map(|depth| {
                format!(
                    r#"{{"data": {open}{close}, "params": {open}{close}}}"#,
                    open = "[".repeat(depth),
                    close = "]".repeat(depth)
                )
            }),
        ]
    }

    /// A text holding at least one refused control character, among ordinary and allowed ones.
    fn hostile_text() -> impl Strategy<Value = String> {
        let refused = prop_oneof![
            (0u32..0x20)
                .prop_filter("tab, line feed and carriage return are allowed", |c| {
                    ![0x09, 0x0A, 0x0D].contains(c)
                })
                .prop_map(|c| char::from_u32(c).unwrap_or('\0')),
            Just('\u{7f}'),
            (0x80u32..0xA0).prop_map(|c| char::from_u32(c).unwrap_or('\0')),
        ];
        let ordinary = prop_oneof![
            Just('a'),
            Just('\t'),
            Just('\n'),
            Just('\u{202e}'),
            Just('é'),
            Just('"'),
            Just('\\'),
        ];
        (
            proptest::collection::vec(ordinary.clone(), 0..4),
            refused,
            proptest::collection::vec(ordinary, 0..4),
        )
            .prop_map(|(before, c, after)| before.into_iter().chain([c]).chain(after).collect())
    }

    /// Bodies whose shape every operation of its kind accepts, but with a hostile text in one of
    /// the text fields (known or not): each is refused as a whole, naming that field.
    fn hostile() -> impl Strategy<Value = (String, String)> {
        let fields = prop_oneof![
            Just(("data", "name")),
            Just(("data", "externalId")),
            Just(("data", "description")),
            Just(("data", "notes")),
            Just(("params", "name")),
        ];
        (fields, hostile_text(), any::<bool>()).prop_map(|((outer, field), text, raw_c1)| {
            // serde_json escapes C0 controls (JSON allows them no other way) and writes DEL and
            // C1 controls raw; half of the cases escape those too.
            let mut value = serde_json::to_string(&text).unwrap_or_default();
            if !raw_c1 {
                value = value
                    .chars()
                    .map(|c| match u32::from(c) {
                        0x7F..=0x9F => format!("\\u{:04x}", u32::from(c)),
                        _ => c.to_string(),
                    })
                    .collect();
            }
            let path = format!("{outer}.{field}");
            (format!(r#"{{"{outer}": {{"{field}": {value}}}}}"#), path)
        })
    }

    fn run(backend: Backend) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let Some(app) = rt.block_on(TestApp::spawn(backend)) else {
            return;
        };
        let token = rt.block_on(app.token(ALL_SCOPES));
        let operations = roastery_adapters_http::operation_names();
        let mut runner = TestRunner::new(RunnerConfig {
            cases: 64,
            failure_persistence: None,
            ..RunnerConfig::default()
        });
        runner
            .run(&malformed(), |body| {
                for operation in &operations {
                    let (status, text) = rt.block_on(app.call_raw(&token, operation, &body));
                    let envelope = parse(&text);
                    prop_assert!(
                        status == 400 || status == 422,
                        "{operation} {body:?}: {status} {text}"
                    );
                    prop_assert_eq!(&envelope["ok"], &json!(false), "{}", text);
                    let code = envelope["error"]["code"].as_str().unwrap_or_default();
                    prop_assert!(SHAPE_CODES.contains(&code), "{operation}: {text}");
                    prop_assert!(envelope["error"]["message"].is_string(), "{text}");
                }
                Ok(())
            })
            .unwrap();
        runner
            .run(&hostile(), |(body, path)| {
                for operation in &operations {
                    let (status, text) = rt.block_on(app.call_raw(&token, operation, &body));
                    let envelope = parse(&text);
                    prop_assert_eq!(status.as_u16(), 400, "{} {}: {}", operation, body, text);
                    prop_assert_eq!(
                        &envelope["error"]["code"],
                        &json!("invalid_parameter"),
                        "{}",
                        text
                    );
                    let message = envelope["error"]["message"].as_str().unwrap_or_default();
                    // Bulk writes take an array: there the object is refused as the wrong type.
                    prop_assert!(
                        message.starts_with(&format!("{path}:")) || message.starts_with("data:"),
                        "{} {}: {}",
                        operation,
                        body,
                        text
                    );
                }
                Ok(())
            })
            .unwrap();
        for (operation, key) in [
            ("core.location.listLocations", "locations"),
            ("core.project.listProjects", "projects"),
        ] {
            let items = rt.block_on(app.list_all(&token, operation, key, json!({}), 100));
            assert!(items.is_empty(), "{operation}: {items:?}");
        }
        drop(app);
    }

    #[test]
    fn sqlite() {
        run(Backend::Sqlite);
    }

    #[test]
    fn postgres() {
        run(Backend::Postgres);
    }
}
