//! Hostile texts and paths: control characters are refused at the edge on both databases, and
//! paths under `/rpc/v1/` that name no operation answer like an unknown operation.

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

/// Sends a form to the token endpoint; returns the status and the parsed body.
async fn token_form(app: &TestApp, form: &str, basic: Option<(&str, &str)>) -> (StatusCode, Value) {
    let mut request = app
        .http
        .post(format!("{}/oauth2/token", app.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form.to_owned());
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.expect("sent");
    let status = response.status();
    (status, parse(&response.text().await.expect("body")))
}

both_databases! {
    async fn control_characters_in_any_text_are_refused_naming_the_field(app) {
        let token = app.token(ALL_SCOPES).await;
        // The text rule is checked before anything the body refers to is looked up.
        let green = "0190a000-0000-7000-8000-000000000001";
        let cases = [
            ("core.location.importLocation", json!({"data": {"name": "\u{202e}\u{0}"}}), "data.name"),
            ("core.project.importProject", json!({"data": {"name": "P", "description": "x\u{1b}[31m"}}), "data.description"),
            ("quality.cupping.createCupping", json!({"data": {
                "startDate": "2026-03-02T10:00:00Z", "cuppingSheet": {"name": "a\u{0}b"},
                "coffees": [{"lotId": green, "type": "INVENTORY_GREEN"}]}}), "data.cuppingSheet.name"),
            ("inventory.roast.recordRoast", json!({"data": {
                "name": "Roast", "roastedDate": "2026-03-01T08:00:00Z",
                "weight": {"amount": 10, "unit": "KG"},
                "greenLots": [{"id": green, "usedWeight": {"amount": 12, "unit": "KG"}}],
                "details": {"roastTechnician": "\u{202e}\u{0}"}}}), "data.details.roastTechnician"),
            ("inventory.green.importGreenLot", json!({"data": {"name": "Guji\u{85}"}}), "data.name"),
            ("inventory.green.listGreenLots", json!({"params": {"filter": {"name": "\u{7f}"}}}), "params.filter.name"),
            ("mrp.order.setOrders", json!({"data": [{"externalId": "o\u{9f}"}]}), "data[0].externalId"),
        ];
        for (operation, body, field) in cases {
            let (s, b) = app.call(&token, operation, body).await;
            assert_error(s, &b, 400, "invalid_parameter");
            let message = b["error"]["message"].as_str().unwrap();
            assert!(message.starts_with(&format!("{field}:")), "{operation}: {message}");
        }
        // Nothing was stored on the way.
        let locations = app.list_all(&token, "core.location.listLocations", "locations", json!({}), 100).await;
        assert!(locations.is_empty(), "{locations:?}");

        // Tab, line feed, carriage return and format characters are text and round-trip.
        let name = "North\tsite\r\nbay \u{202e}2";
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": name}})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["location"]["name"], json!(name));
        let locations = app.list_all(&token, "core.location.listLocations", "locations", json!({}), 100).await;
        assert_eq!(locations[0]["name"], json!(name));
    }

    async fn the_token_endpoint_refuses_control_characters_and_odd_client_ids_cleanly(app) {
        let (id, secret) = app.account("core.location");
        let grant = "grant_type=client_credentials";
        for form in [
            format!("{grant}&client_id=%00&client_secret={secret}"),
            format!("{grant}&client_id={id}%00&client_secret={secret}"),
            format!("{grant}&client_id={id}&client_secret=%1F{secret}"),
            format!("{grant}&client_id={id}&client_secret={secret}&scope=core.location%C2%85"),
            format!("{grant}%00&client_id={id}&client_secret={secret}"),
        ] {
            let (s, b) = token_form(&app, &form, None).await;
            assert_eq!((s.as_u16(), &b["error"]), (400, &json!("invalid_request")), "{form}: {b}");
            assert!(b["error_description"].as_str().unwrap().contains("control character"), "{b}");
        }
        let (s, b) = token_form(&app, grant, Some(("rc-\u{0}", secret.as_str()))).await;
        assert_eq!((s.as_u16(), &b["error"]), (400, &json!("invalid_request")), "{b}");
        // Odd but clean client ids are simply unknown clients.
        for odd in ["", "%E2%80%AE", "%F0%9F%98%80", &"x".repeat(200), "'%3B--", "rc-%09"] {
            let (s, b) = token_form(&app, &format!("{grant}&client_id={odd}&client_secret={secret}"), None).await;
            assert_eq!((s.as_u16(), &b["error"]), (401, &json!("invalid_client")), "{odd}: {b}");
        }
        // Longer than any client id can be: refused before it is looked up (api-decisions §4).
        let (s, b) = token_form(&app, &format!("{grant}&client_id={}&client_secret={secret}", "x".repeat(5000)), None).await;
        assert_eq!((s.as_u16(), &b["error"]), (400, &json!("invalid_request")), "{b}");
        // The real client still gets its token.
        let (s, b) = token_form(&app, &format!("{grant}&client_id={id}&client_secret={secret}"), None).await;
        assert_eq!(s, 200, "{b}");
    }

    async fn paths_under_rpc_v1_naming_no_operation_are_405(app) {
        let token = app.token(ALL_SCOPES).await;
        for path in ["/rpc/v1/", "/rpc/v1/inventory.green.listGreenLots/extra", "/rpc/v1/a.b.c/extra/more"] {
            let response = app.http.post(format!("{}{path}", app.base))
                .bearer_auth(&token)
                .header("Content-Type", "application/json")
                .body("{}").send().await.unwrap();
            let status = response.status();
            let body = parse(&response.text().await.unwrap());
            assert_error(status, &body, 405, "invalid_request");
        }
        // Outside /rpc/v1/ it is still 404 (`/rpc/v1` itself and `/rpc/v1x` are outside), and
        // a real operation still answers.
        for path in ["/rpc/v2/x", "/rpc/v1", "/rpc/v1x", "/rpc/v1x/inventory.green.listGreenLots"] {
            let response = app.http.post(format!("{}{path}", app.base))
                .bearer_auth(&token)
                .header("Content-Type", "application/json")
                .body("{}").send().await.unwrap();
            assert_eq!(response.status(), 404, "{path}");
        }
        // The OpenAPI document beside the operations is read with GET; POSTed it is no operation.
        let response = app.http.get(format!("{}/rpc/v1/openapi.json", app.base)).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let response = app.http.post(format!("{}/rpc/v1/openapi.json", app.base))
            .bearer_auth(&token)
            .header("Content-Type", "application/json")
            .body("{}").send().await.unwrap();
        assert_eq!(response.status(), 405);
        let (s, b) = app.call(&token, "inventory.green.listGreenLots", json!({})).await;
        assert_eq!(s, 200, "{b}");
    }
}
