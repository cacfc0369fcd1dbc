//! Operating endpoints (api-decisions §11): `/metrics`, `/docs` and `X-Request-Id`.

use roastery_server::config::Switch;

use crate::both_databases;
use crate::helpers::*;

async fn get(app: &TestApp, path: &str) -> oauth2::reqwest::Response {
    app.http
        .get(format!("{}{path}", app.base))
        .send()
        .await
        .expect("request sent")
}

async fn metrics(app: &TestApp) -> String {
    let response = get(app, "/metrics").await;
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    response.text().await.unwrap()
}

/// The value of the sample named exactly `series` (name and labels).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().expect("a number"))
}

fn request_id(response: &oauth2::reqwest::Response) -> String {
    response.headers()["x-request-id"]
        .to_str()
        .expect("ASCII")
        .to_owned()
}

both_databases! {
    async fn metrics_count_operations_tokens_and_the_pool(app) {
        let token = app.token("core.location").await;
        let statements_before = sample(&metrics(&app).await, "roastery_db_statements_total").expect("statements");
        for _ in 0..2 {
            let (status, _) = app
                .call(&token, "core.location.listLocations", json!({"params": {}}))
                .await;
            assert_eq!(status, StatusCode::OK);
        }
        // Counted at each connection of the process (other tests' servers share it): at least
        // one statement per listing.
        let text = metrics(&app).await;
        let statements = sample(&text, "roastery_db_statements_total").expect("statements");
        assert!(statements >= statements_before + 2.0, "{statements_before} -> {statements}");
        assert!(sample(&text, "roastery_db_transactions_total").is_some_and(|t| t >= 1.0), "{text}");
        let (status, _) = app.call(&token, "core.project.listProjects", json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        // Made-up operation names all count as `unknown`: a client cannot add series.
        for name in ["no.such.op", "another.made.up"] {
            let (status, _) = app.call_raw(&token, name, "{}").await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        }
        let text = metrics(&app).await;
        let listing = r#"operation="core.location.listLocations""#;
        assert_eq!(sample(&text, &format!("roastery_requests_total{{{listing},status=\"200\"}}")), Some(2.0), "{text}");
        assert_eq!(sample(&text, &format!("roastery_request_duration_seconds_count{{{listing}}}")), Some(2.0), "{text}");
        assert_eq!(sample(&text, &format!("roastery_request_duration_seconds_bucket{{{listing},le=\"+Inf\"}}")), Some(2.0));
        assert_eq!(sample(&text, r#"roastery_requests_total{operation="core.project.listProjects",status="403"}"#), Some(1.0));
        assert_eq!(sample(&text, r#"roastery_requests_total{operation="token",status="200"}"#), Some(1.0), "{text}");
        assert_eq!(sample(&text, r#"roastery_requests_total{operation="unknown",status="405"}"#), Some(2.0), "{text}");
        assert!(!text.contains("no.such.op") && !text.contains("made.up"));
        assert_eq!(sample(&text, r#"roastery_rate_limited_total{operation="core.location.listLocations"}"#), Some(0.0));
        let in_use = sample(&text, "roastery_db_pool_connections_in_use").expect("in-use gauge");
        let idle = sample(&text, "roastery_db_pool_connections_idle").expect("idle gauge");
        assert!(idle >= 1.0, "the pool keeps a connection open: {text}");
        assert!(in_use + idle <= 8.0, "the pool holds at most pool_size (8): {text}");
        // No token needed, and each scrape is counted.
        let text = metrics(&app).await;
        assert_eq!(sample(&text, r#"roastery_requests_total{operation="metrics",status="200"}"#), Some(3.0));
    }

    async fn rate_limit_rejections_are_counted(app, config: |c: &mut roastery_server::Config| {
        c.rate_limit = "1/s,burst=1".into();
    }) {
        let token = app.token("core.location").await;
        let mut refused = 0;
        for _ in 0..3 {
            let (status, _) = app
                .call(&token, "core.location.listLocations", json!({"params": {}}))
                .await;
            if status == StatusCode::TOO_MANY_REQUESTS {
                refused += 1;
            }
        }
        assert!(refused >= 1, "three calls in a burst of one");
        let text = metrics(&app).await;
        assert_eq!(
            sample(&text, r#"roastery_rate_limited_total{operation="core.location.listLocations"}"#),
            Some(f64::from(refused)),
            "{text}"
        );
        assert_eq!(
            sample(&text, r#"roastery_requests_total{operation="core.location.listLocations",status="429"}"#),
            Some(f64::from(refused))
        );
    }

    async fn metrics_off_removes_the_endpoint(app, config: |c: &mut roastery_server::Config| {
        c.metrics = Switch::Off;
    }) {
        let response = get(&app, "/metrics").await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let body = parse(&response.text().await.unwrap());
        assert_eq!(body["error"]["code"], "resource_not_found");
    }

    async fn docs_name_every_operation_and_load_nothing_from_elsewhere(app) {
        let response = get(&app, "/docs").await;
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'"), "{csp}");
        let html = response.text().await.unwrap();
        for name in roastery_adapters_http::operation_names() {
            assert!(
                html.contains(&format!("<h3 class=\"operation\"><code>{name}</code></h3>")),
                "{name} is not on the page"
            );
        }
        assert!(html.contains("<code class=\"op-scope\">inventory.green</code>"));
        assert!(!html.contains("<script") && !html.contains("https://") && !html.contains("http://"));
        // A POST is not the page.
        let response = app.http.post(format!("{}/docs", app.base)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    async fn a_valid_request_id_is_echoed_on_every_kind_of_response(app) {
        let id = "client-req_01.a~Z";
        let token = app.token("core.location").await;
        let requests = [
            app.http.get(format!("{}/healthz", app.base)),
            app.http.get(format!("{}/docs", app.base)),
            app.http.get(format!("{}/nowhere", app.base)),
            app.http.post(format!("{}/rpc/v1/core.location.listLocations", app.base)),
            app.http
                .post(format!("{}/rpc/v1/core.location.listLocations", app.base))
                .bearer_auth(&token)
                .header("Content-Type", "application/json")
                .body(r#"{"params": {}}"#),
            app.http.post(format!("{}/oauth2/token", app.base)).body("grant_type=password"),
        ];
        let mut statuses = Vec::new();
        for request in requests {
            let response = request.header("X-Request-Id", id).send().await.unwrap();
            statuses.push(response.status().as_u16());
            assert_eq!(request_id(&response), id, "{}", response.url());
        }
        assert_eq!(statuses, [200, 200, 404, 401, 200, 400]);
    }

    async fn plain_http_on_the_https_port_gets_a_request_id_too(app) {
        let response = oauth2::reqwest::Client::new()
            .get(format!("http://127.0.0.1:{}/healthz", app.port))
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert!(uuid::Uuid::parse_str(&request_id(&response)).is_ok());
    }

    async fn an_invalid_or_missing_request_id_is_replaced(app) {
        let too_long = "a".repeat(129);
        let mut seen = std::collections::HashSet::new();
        for sent in [None, Some(too_long.as_str()), Some("has space"), Some("a/b"), Some("")] {
            let mut request = app.http.get(format!("{}/healthz", app.base));
            if let Some(sent) = sent {
                request = request.header("X-Request-Id", sent);
            }
            let response = request.send().await.unwrap();
            let id = request_id(&response);
            assert_ne!(Some(id.as_str()), sent);
            assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id} is a new UUID");
            assert!(seen.insert(id), "every new id is new");
        }
        let longest = "b".repeat(128);
        let response = app
            .http
            .get(format!("{}/healthz", app.base))
            .header("X-Request-Id", &longest)
            .send()
            .await
            .unwrap();
        assert_eq!(request_id(&response), longest);
    }
}
