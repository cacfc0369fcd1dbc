//! EUDR due diligence end to end (api-decisions §12): setting it on source green lots with every
//! rule of the plots, reading it back with the digits as sent, the report behind a lot or an
//! order through transfers, roasts, blends and shipments, and enforcement on shipping.

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

const SCOPES: &str = "core.location inventory.green inventory.roast inventory.blend \
                      inventory.trace mrp.product mrp.order";

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

/// A square plot near Huila with coordinates carrying more digits than a binary double holds.
const SQUARE: &str = r#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-75.58123456789012345678,2.1],[-75.57,2.1],[-75.57,2.11],[-75.58123456789012345678,2.11],[-75.58123456789012345678,2.1]]]},"properties":{"ProducerName":"Finca La Esperanza","Area":12.5}}"#;
const POINT: &str = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":3.75,"ProducerCountry":"CO"}}"#;

fn collection(features: &[&str]) -> String {
    format!(
        r#"{{"type":"FeatureCollection","features":[{}]}}"#,
        features.join(",")
    )
}

/// A `setDueDiligence` body with these plots (JSON text) and statements.
fn set_body(lot: &str, plots: &str, statements: Value) -> String {
    format!(
        r#"{{"data":{{"greenLotId":"{lot}","countryOfProduction":"CO",
            "productionPeriod":{{"from":"2025-10-01","to":"2026-02-28"}},
            "plots":{plots},
            "suppliers":[{{"name":"Cooperativa del Sur","country":"CO"}}],
            "statements":{statements}}}}}"#
    )
}

fn statement(reference: &str) -> Value {
    json!([{"referenceNumber": reference, "verificationNumber": "VER12", "kind": "DDS", "role": "UPSTREAM"}])
}

async fn set_raw(app: &TestApp, token: &str, body: &str) -> (u16, Value, String) {
    let (status, text) = app
        .call_raw(token, "inventory.green.setDueDiligence", body)
        .await;
    (status.as_u16(), parse(&text), text)
}

async fn report(app: &TestApp, token: &str, filter: Value) -> (Value, String) {
    let (status, text) = app
        .call_raw(
            token,
            "inventory.trace.getDueDiligence",
            &json!({"params": {"filter": filter}}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    (parse(&text)["result"].clone(), text)
}

async fn details(app: &TestApp, token: &str, lot: &str) -> Value {
    let r = ok(
        app,
        token,
        "inventory.green.getGreenLotDetailsByIds",
        json!({"params": {"filter": {"greenLotIds": [lot]}}}),
    )
    .await;
    r["greenLotDetails"][0]["dueDiligence"].clone()
}

struct World {
    token: String,
    /// Imported at A (Colombia).
    g1: String,
    /// Made from G1 by a transfer to B.
    g1b: String,
    /// Imported at A (Ethiopia).
    g2: String,
    r1: String,
    b1: String,
    order: String,
}

/// G1, G2 imported at A; G1 → B 20 KG (G1b); R1 roasted from G1b, R2 from G2; B1 = R1 + R2;
/// an order ships B1. Nothing has due diligence yet.
async fn world(app: &TestApp) -> World {
    let (client_id, secret) = app.account(SCOPES);
    let token = app.fetch_token(&client_id, &secret, None).await.unwrap();
    let t = token.as_str();
    let location = |name: &str, ext: &str| json!({"data": {"name": name, "externalId": ext}});
    let a = id(&ok(
        app,
        t,
        "core.location.importLocation",
        location("Hamburg", "HH"),
    )
    .await["location"]);
    let b = id(&ok(
        app,
        t,
        "core.location.importLocation",
        location("Berlin", "B"),
    )
    .await["location"]);
    let import = |name: &str, ext: &str| json!({"data": {"name": name, "externalId": ext, "weight": kg(60), "locationId": a}});
    let g1 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Huila", "G-1"),
    )
    .await["greenLot"]);
    let g2 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Guji", "G-2"),
    )
    .await["greenLot"]);
    let moved = ok(
        app,
        t,
        "inventory.green.transferGreenLotToLocation",
        json!({"data": {"greenLotId": g1, "weight": kg(20), "destinationLocationId": b}}),
    )
    .await;
    let g1b = id(&moved["destinationGreenLot"]);
    let roast = |name: &str, green: &str| {
        json!({"data": {"name": name, "locationId": b, "roastedDate": "2026-03-01T09:30:00Z",
                        "weight": kg(8), "greenLots": [{"id": green, "usedWeight": kg(10)}]}})
    };
    let r1 = id(&ok(
        app,
        t,
        "inventory.roast.recordRoast",
        roast("Huila roast", &g1b),
    )
    .await["roastedLot"]);
    let r2 = id(&ok(
        app,
        t,
        "inventory.roast.recordRoast",
        roast("Guji roast", &g2),
    )
    .await["roastedLot"]);
    let b1 = id(&ok(
        app,
        t,
        "inventory.blend.createBlend",
        json!({"data": {
        "name": "House blend", "locationId": b, "blendedDate": "2026-03-02T08:00:00Z",
        "roastedLots": [{"id": r1, "usedWeight": kg(4)}, {"id": r2, "usedWeight": kg(4)}]}}),
    )
    .await["blendedLot"]);
    ok(app, t, "mrp.product.syncProducts", json!({"data": [
        {"externalId": "P-1", "name": "House", "variants": [{"sku": "HOUSE-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}
    ]})).await;
    let orders = ok(
        app,
        t,
        "mrp.order.setOrders",
        json!({"data": [
            {"externalId": "O-1", "orderDate": "2026-03-03T10:00:00Z", "customer": "Café Nord",
             "customerType": "WHOLESALE", "orderItems": [{"sku": "HOUSE-250", "quantity": 4}]}
        ]}),
    )
    .await;
    let order = id(&orders["syncedOrders"][0]);
    ok(
        app,
        t,
        "mrp.order.shipOrder",
        json!({"data": {"orderId": order, "shippedDate": "2026-03-04T09:00:00Z",
        "allocations": [{"sku": "HOUSE-250", "lotId": b1, "quantity": 4}]}}),
    )
    .await;
    World {
        token,
        g1,
        g1b,
        g2,
        r1,
        b1,
        order,
    }
}

async fn entry_count(app: &TestApp, token: &str, lot: &str) -> usize {
    ok(
        app,
        token,
        "inventory.trace.listLedgerEntries",
        json!({"params": {"filter": {"lotId": lot}}}),
    )
    .await["ledgerEntries"]
        .as_array()
        .unwrap()
        .len()
}

fn lot_numbers(list: &Value, pointer: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.pointer(pointer).unwrap().as_str().unwrap().to_owned())
        .collect()
}

both_databases! {
    async fn due_diligence_stands_behind_an_order_through_transfer_roast_and_blend(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let plots = collection(&[SQUARE, POINT]);
        let (status, body, text) = set_raw(&app, t, &set_body(&w.g1, &plots, statement("25NLSN6LX69730"))).await;
        assert_eq!(status, 200, "{text}");
        assert_eq!(body["result"]["greenLot"]["id"], json!(w.g1));
        assert!(
            text.contains("[-75.58123456789012345678,2.1]"),
            "coordinates come back with the digits they were sent with: {text}"
        );
        // G2's paperwork has no statement yet.
        let (status, _, text) = set_raw(&app, t, &set_body(&w.g2, &collection(&[POINT]), json!([]))).await;
        assert_eq!(status, 200, "{text}");

        let stored = details(&app, t, &w.g1).await;
        assert_eq!(stored["hsCode"], "090111");
        assert_eq!(stored["countryOfProduction"], "CO");
        assert_eq!(stored["productionPeriod"], json!({"from": "2025-10-01", "to": "2026-02-28"}));
        assert_eq!(stored["statements"][0]["referenceNumber"], "25NLSN6LX69730");
        assert_eq!(stored["plots"]["features"].as_array().unwrap().len(), 2);
        assert_eq!(details(&app, t, &w.g1b).await, Value::Null, "a transferred lot carries none");

        // The order: its blend has two sources, one without a statement.
        let (r, text) = report(&app, t, json!({"orderId": w.order})).await;
        let g1_number = r["sources"][0]["lot"]["lotNumber"].as_str().unwrap().to_owned();
        assert_eq!(
            r["sources"].as_array().unwrap().iter().map(|s| id(&s["lot"])).collect::<Vec<_>>(),
            vec![w.g1.clone(), w.g2.clone()],
            "{r}"
        );
        assert_eq!(r["sources"][0]["lot"]["type"], "INVENTORY_GREEN");
        assert_eq!(r["complete"], json!(false));
        assert_eq!(r["missing"].as_array().unwrap().len(), 1, "{r}");
        assert_eq!(r["missing"][0]["id"], json!(w.g2));
        assert_eq!(r["missing"][0]["reason"], "NO_STATEMENT");
        assert_eq!(lot_numbers(&r["statements"], "/referenceNumber"), ["25NLSN6LX69730"]);
        let features = r["plots"]["features"].as_array().unwrap();
        assert_eq!(r["plots"]["type"], "FeatureCollection");
        assert_eq!(features.len(), 3);
        assert_eq!(features[0]["properties"]["lotNumber"], json!(g1_number));
        assert_eq!(features[0]["properties"]["ProducerCountry"], "CO", "filled when absent");
        assert_eq!(features[0]["properties"]["ProducerName"], "Finca La Esperanza");
        assert!(text.contains("-75.58123456789012345678"), "{text}");

        // A lot made by a transfer answers with its source's statements.
        for lot in [&w.g1b, &w.r1] {
            let (r, _) = report(&app, t, json!({"lotId": lot})).await;
            assert_eq!(lot_numbers(&r["sources"], "/lot/id"), std::slice::from_ref(&w.g1));
            assert_eq!(r["complete"], json!(true), "{r}");
            assert_eq!(r["missing"], json!([]));
        }
        let (r, _) = report(&app, t, json!({"lotId": w.b1})).await;
        assert_eq!(r["sources"].as_array().unwrap().len(), 2);

        // Once G2 has a statement, the order is complete; statements stay distinct.
        let (status, _, text) = set_raw(&app, t, &set_body(&w.g2, &collection(&[POINT]), statement("25NLSN6LX69730"))).await;
        assert_eq!(status, 200, "{text}");
        let (r, _) = report(&app, t, json!({"orderId": w.order})).await;
        assert_eq!(r["complete"], json!(true), "{r}");
        assert_eq!(r["statements"].as_array().unwrap().len(), 1);
    }

    async fn due_diligence_is_set_on_source_lots_only(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let (status, body, _) = set_raw(&app, t, &set_body(&w.g1b, &collection(&[POINT]), statement("A1"))).await;
        assert_error(StatusCode::from_u16(status).unwrap(), &body, 422, "invalid_request");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&w.g1), "names the source lot: {message}");
        assert_eq!(details(&app, t, &w.g1b).await, Value::Null);

        let unknown = "0190d7a2-0000-7000-8000-000000000000";
        let (status, body, _) = set_raw(&app, t, &set_body(unknown, &collection(&[POINT]), statement("A1"))).await;
        assert_error(StatusCode::from_u16(status).unwrap(), &body, 422, "resource_not_found");
        let (status, body) = app
            .call(t, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"orderId": unknown}}}))
            .await;
        assert_error(status, &body, 422, "resource_not_found");
        let (status, body) = app
            .call(t, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": unknown}}}))
            .await;
        assert_error(status, &body, 422, "resource_not_found");
        let (status, body) = app
            .call(t, "inventory.trace.getDueDiligence", json!({"params": {"filter": {"lotId": w.g1, "orderId": w.order}}}))
            .await;
        assert_error(status, &body, 400, "invalid_parameter");
    }

    async fn every_broken_plot_rule_names_its_field_and_applies_nothing(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let (status, _, text) = set_raw(&app, t, &set_body(&w.g1, &collection(&[POINT]), statement("KEEP1"))).await;
        assert_eq!(status, 200, "{text}");
        let before = details(&app, t, &w.g1).await;

        let polygon = |ring: &str| format!(r#"{{"type":"Feature","geometry":{{"type":"Polygon","coordinates":[{ring}]}},"properties":{{}}}}"#);
        let bow_tie = polygon("[[-75.1,2.0],[-75.0,2.1],[-75.0,2.0],[-75.1,2.1],[-75.1,2.0]]");
        let open = polygon("[[-75.1,2.0],[-75.0,2.0],[-75.0,2.1],[-75.1,2.1]]");
        let five_ha = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":5}}"#;
        let tiny = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,2.05]},"properties":{"Area":0.00005}}"#;
        let holed = polygon("[[-75.1,2.0],[-75.0,2.0],[-75.0,2.1],[-75.1,2.1],[-75.1,2.0]],[[-75.08,2.02],[-75.08,2.04],[-75.06,2.04],[-75.06,2.02],[-75.08,2.02]]");
        let colliding = r#"{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[-75.60000001,2.05],[-75.6000009,2.0500001]]},"properties":{"Area":1}}"#;
        let lat_first = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[2.05,-95.6]},"properties":{"Area":1}}"#;
        let line = r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{}}"#;
        let cases: Vec<(String, Value, &str, &str)> = vec![
            (collection(&[POINT, POINT, &bow_tie]), statement("X1"), "data.plots.features[2].geometry.coordinates", "crosses itself"),
            (collection(&[&open]), statement("X1"), "data.plots.features[0].geometry.coordinates", "not closed"),
            (collection(&[five_ha]), statement("X1"), "data.plots.features[0].properties.Area", "4 ha"),
            (collection(&[tiny]), statement("X1"), "data.plots.features[0].properties.Area", "0.0001"),
            (collection(&[POINT, &holed]), statement("X1"), "data.plots.features[1].geometry.coordinates", "hole"),
            (collection(&[colliding]), statement("X1"), "data.plots.features[0].geometry.coordinates", "6 decimals"),
            (collection(&[POINT]), json!([{"referenceNumber": "25nl1", "kind": "DDS", "role": "OWN"}]), "data.statements[0].referenceNumber", "upper-case"),
            (collection(&[POINT]), json!([{"referenceNumber": "25NL1", "verificationNumber": "V1", "kind": "DDS", "role": "OWN"}]), "data.statements[0].verificationNumber", "5 to 35"),
            (collection(&[POINT, lat_first]), statement("X1"), "data.plots.features[1].geometry.coordinates", "latitude"),
            (collection(&[line]), statement("X1"), "data.plots.features[0].geometry.type", "LineString"),
            (collection(&[]), statement("X1"), "data.plots.features", "1 to 10000"),
            (collection(&[POINT]), json!([
                {"referenceNumber": "DUP1", "kind": "DDS", "role": "OWN"},
                {"referenceNumber": "DUP1", "kind": "DDS", "role": "UPSTREAM"}
            ]), "data.statements[1].referenceNumber", "unique"),
            (collection(&[POINT]), json!([{"referenceNumber": "25-NL", "kind": "DDS", "role": "OWN"}]), "data.statements[0].referenceNumber", "letters or digits"),
        ];
        for (plots, statements, field, problem) in cases {
            let (status, body, text) = set_raw(&app, t, &set_body(&w.g1, &plots, statements)).await;
            assert_error(StatusCode::from_u16(status).unwrap(), &body, 400, "invalid_parameter");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.starts_with(&format!("{field}:")), "{field}: {text}");
            assert!(message.contains(problem), "{problem}: {text}");
        }
        let bad_fields = [
            (r#""countryOfProduction":"CO""#, r#""countryOfProduction":"COL""#, "data.countryOfProduction"),
            (r#""from":"2025-10-01""#, r#""from":"2026-10-01""#, "data.productionPeriod"),
        ];
        for (from, to, field) in bad_fields {
            let body_text = set_body(&w.g1, &collection(&[POINT]), statement("X1")).replace(from, to);
            let (status, body, text) = set_raw(&app, t, &body_text).await;
            assert_error(StatusCode::from_u16(status).unwrap(), &body, 400, "invalid_parameter");
            assert!(body["error"]["message"].as_str().unwrap().starts_with(field), "{text}");
        }
        let (status, body) = app
            .call(t, "inventory.green.setDueDiligence", json!({"data": {"greenLotId": w.g1, "countryOfProduction": "CO",
                "productionPeriod": {"from": "2025-10-01", "to": "2026-02-28"}}}))
            .await;
        assert_error(status, &body, 400, "missing_parameter");
        assert!(body["error"]["message"].as_str().unwrap().contains("data.plots"), "{body}");
        assert_eq!(details(&app, t, &w.g1).await, before, "nothing was applied");
    }

    async fn shipping_is_refused_while_due_diligence_is_incomplete(app, config: |c: &mut roastery_server::Config| {
        c.eudr_enforce = roastery_server::config::EudrEnforceSetting::Ship;
    }) {
        let (client_id, secret) = app.account(SCOPES);
        let token = app.fetch_token(&client_id, &secret, None).await.unwrap();
        let t = token.as_str();
        let a = id(&ok(&app, t, "core.location.importLocation", json!({"data": {"name": "Hamburg", "externalId": "HH"}})).await["location"]);
        let g = id(&ok(&app, t, "inventory.green.importGreenLot",
            json!({"data": {"name": "Huila", "externalId": "G-1", "weight": kg(10), "locationId": a}})).await["greenLot"]);
        ok(&app, t, "mrp.product.syncProducts", json!({"data": [
            {"externalId": "P-1", "name": "Green", "variants": [{"sku": "GREEN-1000", "coffeeOptions": {"packageSize": "PACKAGE1000G"}}]}
        ]})).await;
        let orders = ok(&app, t, "mrp.order.setOrders", json!({"data": [
            {"externalId": "O-1", "orderDate": "2026-03-03T10:00:00Z", "customer": "Café Nord",
             "customerType": "WHOLESALE", "orderItems": [{"sku": "GREEN-1000", "quantity": 2}]}
        ]})).await;
        let order = id(&orders["syncedOrders"][0]);
        let ship = json!({"data": {"orderId": order, "shippedDate": "2026-03-04T09:00:00Z",
            "allocations": [{"sku": "GREEN-1000", "lotId": g, "quantity": 2}]}});
        let (status, body) = app.call(t, "mrp.order.shipOrder", ship.clone()).await;
        assert_error(status, &body, 422, "invalid_request");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&g) && message.contains("NO_DUE_DILIGENCE"), "{message}");
        assert_eq!(entry_count(&app, t, &g).await, 1, "nothing shipped: only the import entry");

        let (status, _, text) = set_raw(&app, t, &set_body(&g, &collection(&[POINT]), json!([]))).await;
        assert_eq!(status, 200, "{text}");
        let (status, body) = app.call(t, "mrp.order.shipOrder", ship.clone()).await;
        assert_error(status, &body, 422, "invalid_request");
        assert!(body["error"]["message"].as_str().unwrap().contains("NO_STATEMENT"), "{body}");
        assert_eq!(entry_count(&app, t, &g).await, 1);

        let (status, _, text) = set_raw(&app, t, &set_body(&g, &collection(&[POINT]), statement("25NL1"))).await;
        assert_eq!(status, 200, "{text}");
        let shipped = ok(&app, t, "mrp.order.shipOrder", ship).await;
        assert_eq!(shipped["order"]["status"], "COMPLETED");
        assert_eq!(entry_count(&app, t, &g).await, 2);
    }

    async fn shipping_verified_needs_every_upstream_statement_verified(app, config: |c: &mut roastery_server::Config| {
        c.eudr_enforce = roastery_server::config::EudrEnforceSetting::ShipVerified;
    }) {
        let (client_id, secret) = app.account(SCOPES);
        let token = app.fetch_token(&client_id, &secret, None).await.unwrap();
        let t = token.as_str();
        let a = id(&ok(&app, t, "core.location.importLocation", json!({"data": {"name": "Hamburg", "externalId": "HH"}})).await["location"]);
        let g = id(&ok(&app, t, "inventory.green.importGreenLot",
            json!({"data": {"name": "Huila", "externalId": "G-1", "weight": kg(10), "locationId": a}})).await["greenLot"]);
        ok(&app, t, "mrp.product.syncProducts", json!({"data": [
            {"externalId": "P-1", "name": "Green", "variants": [{"sku": "GREEN-1000", "coffeeOptions": {"packageSize": "PACKAGE1000G"}}]}
        ]})).await;
        let orders = ok(&app, t, "mrp.order.setOrders", json!({"data": [
            {"externalId": "O-1", "orderDate": "2026-03-03T10:00:00Z", "customer": "Café Nord",
             "customerType": "WHOLESALE", "orderItems": [{"sku": "GREEN-1000", "quantity": 2}]}
        ]})).await;
        let order = id(&orders["syncedOrders"][0]);
        let ship = json!({"data": {"orderId": order, "shippedDate": "2026-03-04T09:00:00Z",
            "allocations": [{"sku": "GREEN-1000", "lotId": g, "quantity": 2}]}});
        // Complete, but its upstream statement was never verified with the IS.
        let (status, _, text) = set_raw(&app, t, &set_body(&g, &collection(&[POINT]), statement("25NL1"))).await;
        assert_eq!(status, 200, "{text}");
        let (status, body) = app.call(t, "mrp.order.shipOrder", ship).await;
        assert_error(status, &body, 422, "invalid_request");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&g) && message.contains("25NL1") && message.contains("EXISTING_USABLE"), "{message}");
        assert_eq!(entry_count(&app, t, &g).await, 1, "nothing shipped: only the import entry");
    }

    async fn without_the_eu_information_system_every_statement_operation_answers_503(app) {
        let w = world(&app).await;
        let (client_id, secret) = app.account("eudr.statement inventory.green");
        let token = app.fetch_token(&client_id, &secret, None).await.unwrap();
        let t = token.as_str();
        let (status, _, text) = set_raw(&app, &w.token, &set_body(&w.g1, &collection(&[POINT]), statement("25NLSN6LX69730"))).await;
        assert_eq!(status, 200, "{text}");
        let before = details(&app, &w.token, &w.g1).await;
        assert_eq!(before["statements"][0]["verification"], Value::Null, "not verified yet: {before}");
        let statement_data = json!({"data": {"greenLotIds": [w.g1], "activityType": "IMPORT", "countryOfActivity": "DE"}});
        let submission = json!({"data": {"submissionId": "0190c0de-0000-7000-8000-000000000001"}});
        for (operation, body) in [
            ("eudr.statement.verifyStatements", json!({"data": {"greenLotId": w.g1}})),
            ("eudr.statement.previewStatement", statement_data.clone()),
            ("eudr.statement.submitStatement", statement_data),
            ("eudr.statement.withdrawStatement", submission),
            ("eudr.statement.listSubmissions", json!({})),
            ("eudr.statement.getSubmissionsByIds", json!({"params": {"filter": {"submissionIds": ["0190c0de-0000-7000-8000-000000000001"]}}})),
        ] {
            let (status, body) = app.call(t, operation, body).await;
            assert_error(status, &body, 503, "eudr_not_configured");
        }
        assert_eq!(details(&app, &w.token, &w.g1).await, before, "nothing changed");
    }

    async fn polygons_are_answered_wound_as_rfc_7946_wants_with_their_digits(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        // Clockwise as sent: answered counterclockwise, each position with its digits.
        let clockwise = r#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-75.1000,2.0],[-75.1,2.10],[-75.0,2.1],[-75.0,2.0],[-75.1000,2.0]]]},"properties":{}}"#;
        let (status, _, text) = set_raw(&app, t, &set_body(&w.g1, &collection(&[clockwise]), json!([]))).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            text.contains("[[[-75.1000,2.0],[-75.0,2.0],[-75.0,2.1],[-75.1,2.10],[-75.1000,2.0]]]"),
            "{text}"
        );
        let (_, text) = report(&app, t, json!({"lotId": w.g1})).await;
        assert!(text.contains("[[[-75.1000,2.0],[-75.0,2.0],[-75.0,2.1],[-75.1,2.10],[-75.1000,2.0]]]"), "{text}");
    }
}
