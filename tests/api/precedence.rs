//! Which error wins when a request breaks several rules at once (api-decisions §2: 400 before
//! 422; among 422s `resource_not_found` → state rules → `resource_conflict` → weight and price),
//! and inputs at the edges of rounding.

use crate::both_databases;
use crate::helpers::*;

fn unknown() -> String {
    uuid::Uuid::now_v7().to_string()
}

async fn ok(
    app: &TestApp,
    token: &str,
    operation: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body
}

both_databases! {
    async fn a_shape_error_wins_over_every_lookup(app) {
        let token = app.token(ALL_SCOPES).await;
        // createBlend: a blank name with an unknown location and an unknown roasted lot.
        let (s, b) = app.call(&token, "inventory.blend.createBlend", json!({"data": {
            "name": " ", "locationId": unknown(), "blendedDate": "2026-01-01T00:00:00Z",
            "roastedLots": [{"id": unknown(), "usedWeight": {"amount": -1, "unit": "KG"}}]}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        // importProfile: an overlong externalId with an unknown green lot.
        let (s, b) = app.call(&token, "inventory.roast.importProfile", json!({"data": {
            "name": "House", "externalId": "x".repeat(1000),
            "components": [{"percentage": 100, "greenLotIds": [unknown()]}]}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        // importGreenLot: a blank project name and an unknown location.
        let (s, b) = app.call(&token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Guji", "externalId": "E-1", "weight": {"amount": 1, "unit": "KG"},
            "locationId": unknown(), "projects": [{"name": ""}]}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        // recordPhysicalAnalysis: a negative defect count and an unknown lot.
        let (s, b) = app.call(&token, "quality.physical.recordPhysicalAnalysis", json!({"data": {
            "analysisDate": "2026-01-01T00:00:00Z",
            "analysedLot": {"id": unknown(), "type": "INVENTORY_GREEN"},
            "screenSizes": [{"size": "16", "percentage": 80}, {"size": "17", "percentage": 80}],
            "defects": [{"name": "Broken", "count": -1}]}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
    }

    async fn an_oversized_price_is_a_400_even_for_a_duplicate(app) {
        let token = app.token(ALL_SCOPES).await;
        let lot = json!({"name": "Guji", "externalId": "E-1", "weight": {"amount": 1, "unit": "KG"}});
        ok(&app, &token, "inventory.green.importGreenLot", json!({"data": lot})).await;
        let mut again = lot.clone();
        again["price"] = json!({"amount": 1e13, "currency": "EUR"});
        let (s, b) = app.call(&token, "inventory.green.importGreenLot", json!({"data": again})).await;
        assert_error(s, &b, 400, "invalid_parameter");
    }

    async fn not_found_wins_over_conflict_for_the_two_location_forms(app) {
        let token = app.token(ALL_SCOPES).await;
        let body = ok(&app, &token, "core.location.importLocation",
            json!({"data": {"name": "Hamburg", "externalId": "WH-1"}})).await;
        let id = body["result"]["location"]["id"].clone();
        let (s, b) = app.call(&token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Guji", "externalId": "E-1", "weight": {"amount": 1, "unit": "KG"},
            "locationId": id, "location": {"externalId": "NOPE"}}})).await;
        assert_error(s, &b, 422, "resource_not_found");
        let (s, b) = app.call(&token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Guji", "externalId": "E-1", "weight": {"amount": 1, "unit": "KG"},
            "locationId": id, "location": {"externalId": "WH-1"}}})).await;
        assert_error(s, &b, 422, "resource_conflict");
    }

    async fn a_weight_too_small_for_the_lots_unit_does_not_consume_it(app) {
        let token = app.token(ALL_SCOPES).await;
        let body = ok(&app, &token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Guji", "externalId": "E-1", "weight": {"amount": 10, "unit": "KG"}}})).await;
        let id = body["result"]["greenLot"]["id"].clone();
        let (s, b) = app.call(&token, "inventory.green.setGreenLotWeight", json!({"data": {
            "greenLotId": id, "weight": {"amount": 0.000001, "unit": "LBS"}}})).await;
        assert_error(s, &b, 422, "invalid_weight");
        let list = ok(&app, &token, "inventory.green.listGreenLots", json!({})).await;
        assert_eq!(list["result"]["greenLots"][0]["weight"], json!({"amount": 10, "unit": "KG"}));
        assert!(list["result"]["greenLots"][0]["consumedDate"].is_null());
    }

    async fn curve_times_in_fractional_milliseconds_are_rounded(app) {
        let token = app.token(ALL_SCOPES).await;
        let body = ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Floor"}})).await;
        let location = body["result"]["location"]["id"].clone();
        let body = ok(&app, &token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Guji", "externalId": "E-1", "weight": {"amount": 10, "unit": "KG"}}})).await;
        let green = body["result"]["greenLot"]["id"].clone();
        let body = ok(&app, &token, "inventory.roast.recordRoast", json!({"data": {
            "name": "Guji light", "locationId": location, "roastedDate": "2026-01-01T08:00:00Z",
            "weight": {"amount": 8.5, "unit": "KG"},
            "greenLots": [{"id": green, "usedWeight": {"amount": 10, "unit": "KG"}}],
            "curves": [{"name": "BT", "unit": "CELSIUS", "dataPoints": [
                {"time": 1500.5, "value": 180.1}, {"time": 1501.5, "value": 181}]}]}})).await;
        let roasted = body["result"]["roastedLot"]["id"].clone();
        let curves = ok(&app, &token, "inventory.roast.getRoastCurvesById",
            json!({"params": {"filter": {"roastedLotId": roasted}}})).await;
        let points = &curves["result"]["roastCurves"][0]["dataPoints"];
        assert_eq!(points[0]["time"], 1500);
        assert_eq!(points[1]["time"], 1502);
    }
}
