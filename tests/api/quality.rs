//! quality.cupping and quality.physical end to end.

use roastery_app::green_lot::{ImportGreenLot, WeightInput};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::WeightUnit;
use rust_decimal::Decimal;
use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

/// A stored green lot, through the use case (its HTTP operations live in their own namespace).
fn green_lot(app: &TestApp, external_id: &str) -> String {
    app.roastery
        .import_green_lot(ImportGreenLot {
            name: Some(format!("Lot {external_id}")),
            external_id: Some(external_id.into()),
            weight: WeightInput {
                amount: Decimal::from(60),
                unit: WeightUnit::Kg,
            },
            ico_number: None,
            price: None,
            location_id: None,
            location_external_id: None,
            projects: vec![],
            details: GreenLotDetails::default(),
        })
        .expect("green lot imported")
        .lot
        .id
        .to_string()
}

async fn create_cupping(
    app: &TestApp,
    token: &str,
    start: &str,
    state: Option<&str>,
    lots: &[&str],
) -> Value {
    let coffees: Vec<Value> = lots
        .iter()
        .map(|id| json!({"lotId": id, "type": "INVENTORY_GREEN"}))
        .collect();
    let mut data =
        json!({"startDate": start, "cuppingSheet": {"name": "SCA 2024"}, "coffees": coffees});
    if let Some(state) = state {
        data["state"] = json!(state);
    }
    let (status, body) = app
        .call(
            token,
            "quality.cupping.createCupping",
            json!({ "data": data }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["cupping"].clone()
}

async fn set_state(app: &TestApp, token: &str, id: &Value, state: &str) -> (StatusCode, Value) {
    app.call(
        token,
        "quality.cupping.setCuppingState",
        json!({"data": {"cuppingId": id, "state": state}}),
    )
    .await
}

fn result(cc: &Value, score: Value, state: &str) -> Value {
    json!({
        "cuppedCoffeeId": cc, "evaluator": {"name": "Ana"}, "finalScore": score,
        "scoringState": state, "note": "stone fruit",
        "sensorialAttributes": [{"name": "Acidity", "score": 8.25}]
    })
}

async fn record(
    app: &TestApp,
    token: &str,
    id: &Value,
    results: Vec<Value>,
) -> (StatusCode, Value) {
    app.call(
        token,
        "quality.cupping.recordCuppingResults",
        json!({"data": {"cuppingId": id, "results": results}}),
    )
    .await
}

async fn all_cuppings(app: &TestApp, token: &str, filter: Value) -> Vec<Value> {
    app.list_all(token, "quality.cupping.listCuppings", "cuppings", filter, 2)
        .await
}

fn ids(items: &[Value]) -> Vec<Value> {
    items.iter().map(|c| c["id"].clone()).collect()
}

both_databases! {
    async fn a_cupping_is_created_with_numbered_coffees_of_existing_lots(app) {
        let token = app.token("quality.cupping").await;
        let (a, b) = (green_lot(&app, "g-1"), green_lot(&app, "g-2"));
        let cupping = create_cupping(&app, &token, "2026-03-01T10:00:00+02:00", None, &[&a, &b]).await;
        assert_eq!(cupping["cuppingNumber"], "CU-1");
        assert_eq!(cupping["state"], "DRAFT");
        assert_eq!(cupping["startDate"], "2026-03-01T08:00:00Z");
        assert_eq!(cupping["cuppingSheet"], json!({"name": "SCA 2024"}));
        let coffees = cupping["cuppedCoffees"].as_array().unwrap();
        assert_eq!(coffees.len(), 2);
        assert_eq!(coffees[0]["cuppedCoffeeNumber"], "CC-1");
        assert_eq!(coffees[1]["cuppedCoffeeNumber"], "CC-2");
        assert_eq!(coffees[1]["cuppedLot"], json!({"id": b, "type": "INVENTORY_GREEN"}));
        assert_eq!(coffees[0]["averageScore"], Value::Null);
        assert_eq!(
            coffees[0]["resultSummary"],
            json!({"averageScore": null, "resultCount": 0, "minScore": null, "maxScore": null})
        );
        let open = create_cupping(&app, &token, "2026-03-02T10:00:00Z", Some("OPEN"), &[&a]).await;
        assert_eq!(open["state"], "OPEN");
        assert_eq!(open["cuppingNumber"], "CU-2");
        assert_eq!(open["cuppedCoffees"][0]["cuppedCoffeeNumber"], "CC-3");
    }

    async fn bad_cupping_creations_are_refused_and_store_nothing(app) {
        let token = app.token("quality.cupping").await;
        let lot = green_lot(&app, "g-1");
        let unknown = "0190a000-0000-7000-8000-000000000001";
        let good = |lot: &str, kind: &str| json!({"data": {
            "startDate": "2026-03-01T10:00:00Z", "cuppingSheet": {"name": "SCA"},
            "coffees": [{"lotId": lot, "type": kind}]}});
        let cases = [
            (good(unknown, "INVENTORY_GREEN"), 422, "resource_not_found"),
            // A green lot's id under another kind is not that lot.
            (good(&lot, "INVENTORY_BLEND"), 422, "resource_not_found"),
            (good(&lot, "GREEN"), 400, "invalid_parameter"),
            (good("not-a-uuid", "INVENTORY_GREEN"), 400, "invalid_parameter"),
            (json!({"data": {"cuppingSheet": {"name": "SCA"}, "coffees": [{"lotId": lot, "type": "INVENTORY_GREEN"}]}}), 400, "missing_parameter"),
            (json!({"data": {"startDate": "2026-03-01T10:00:00Z", "coffees": [{"lotId": lot, "type": "INVENTORY_GREEN"}]}}), 400, "missing_parameter"),
            (json!({"data": {"startDate": "2026-03-01T10:00:00Z", "cuppingSheet": {"name": "SCA"}}}), 400, "missing_parameter"),
            (json!({"data": {"startDate": "2026-03-01T10:00:00Z", "cuppingSheet": {"name": "SCA"}, "coffees": []}}), 400, "invalid_parameter"),
            (json!({"data": {"startDate": "yesterday", "cuppingSheet": {"name": "SCA"}, "coffees": [{"lotId": lot, "type": "INVENTORY_GREEN"}]}}), 400, "invalid_parameter"),
            (json!({"data": {"startDate": "2026-03-01T10:00:00Z", "state": "CLOSED", "cuppingSheet": {"name": "SCA"}, "coffees": [{"lotId": lot, "type": "INVENTORY_GREEN"}]}}), 400, "invalid_parameter"),
            (json!({"data": {"startDate": "2026-03-01T10:00:00Z", "state": "open", "cuppingSheet": {"name": "SCA"}, "coffees": [{"lotId": lot, "type": "INVENTORY_GREEN"}]}}), 400, "invalid_parameter"),
        ];
        for (body, status, code) in cases {
            let (s, b) = app.call(&token, "quality.cupping.createCupping", body.clone()).await;
            assert_error(s, &b, status, code);
        }
        assert!(all_cuppings(&app, &token, json!({})).await.is_empty());
        // Refused calls used no number.
        let cupping = create_cupping(&app, &token, "2026-03-01T10:00:00Z", None, &[&lot]).await;
        assert_eq!(cupping["cuppingNumber"], "CU-1");
        assert_eq!(cupping["cuppedCoffees"][0]["cuppedCoffeeNumber"], "CC-1");
    }

    async fn a_cupping_goes_draft_open_closed_and_nothing_else(app) {
        let token = app.token("quality.cupping").await;
        let lot = green_lot(&app, "g-1");
        let cupping = create_cupping(&app, &token, "2026-03-01T10:00:00Z", None, &[&lot]).await;
        let id = &cupping["id"];
        let (s, b) = set_state(&app, &token, id, "CLOSED").await;
        assert_error(s, &b, 422, "invalid_request");
        let (s, b) = set_state(&app, &token, id, "DRAFT").await;
        assert_error(s, &b, 422, "invalid_request");
        let (s, b) = set_state(&app, &token, id, "OPEN").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["cupping"]["state"], "OPEN");
        assert_eq!(b["result"]["cupping"]["cuppedCoffees"], cupping["cuppedCoffees"]);
        let (s, b) = set_state(&app, &token, id, "OPEN").await;
        assert_error(s, &b, 422, "invalid_request");
        let (s, b) = set_state(&app, &token, id, "CLOSED").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["cupping"]["state"], "CLOSED");
        for state in ["DRAFT", "OPEN", "CLOSED"] {
            let (s, b) = set_state(&app, &token, id, state).await;
            assert_error(s, &b, 422, "invalid_request");
        }
        let (s, b) = set_state(&app, &token, id, "REOPENED").await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = set_state(&app, &token, &json!("0190a000-0000-7000-8000-000000000001"), "OPEN").await;
        assert_error(s, &b, 422, "resource_not_found");
        let (s, b) = app.call(&token, "quality.cupping.setCuppingState", json!({"data": {"cuppingId": id}})).await;
        assert_error(s, &b, 400, "missing_parameter");
        let stored = all_cuppings(&app, &token, json!({})).await;
        assert_eq!(stored[0]["state"], "CLOSED");
    }

    async fn results_are_recorded_only_while_open_and_summarised_exactly(app) {
        let token = app.token("quality.cupping").await;
        let (a, b) = (green_lot(&app, "g-1"), green_lot(&app, "g-2"));
        let cupping = create_cupping(&app, &token, "2026-03-01T10:00:00Z", None, &[&a, &b]).await;
        let id = &cupping["id"];
        let cc1 = cupping["cuppedCoffees"][0]["id"].clone();
        let cc2 = cupping["cuppedCoffees"][1]["id"].clone();
        // DRAFT: refused.
        let (s, body) = record(&app, &token, id, vec![result(&cc1, json!(85), "INCLUDED")]).await;
        assert_error(s, &body, 422, "invalid_request");
        set_state(&app, &token, id, "OPEN").await;
        let (s, body) = record(&app, &token, id, vec![
            result(&cc1, json!(85.25), "INCLUDED"),
            result(&cc1, json!(86), "INCLUDED"),
            result(&cc1, json!(40), "EXCLUDED"),
        ]).await;
        assert_eq!(s, 200, "{body}");
        let recorded = body["result"]["cuppingResults"].as_array().unwrap().clone();
        assert_eq!(recorded.len(), 3);
        assert_eq!(recorded[0]["cuppedCoffeeId"], cc1);
        assert_eq!(recorded[0]["finalScore"], json!(85.25));
        assert_eq!(recorded[0]["scoringState"], "INCLUDED");
        assert_eq!(recorded[0]["evaluator"], json!({"name": "Ana"}));
        assert_eq!(recorded[0]["note"], "stone fruit");
        assert_eq!(recorded[0]["sensorialAttributes"], json!([{"name": "Acidity", "score": 8.25}]));
        // Shape errors, unknown coffees, unknown cuppings: nothing stored.
        for (results, cupping_id, status, code) in [
            (vec![result(&cc1, json!(100.5), "INCLUDED")], id.clone(), 400, "invalid_parameter"),
            (vec![result(&cc1, json!(-1), "INCLUDED")], id.clone(), 400, "invalid_parameter"),
            (vec![result(&cc1, json!(80), "MAYBE")], id.clone(), 400, "invalid_parameter"),
            (vec![json!({"cuppedCoffeeId": cc1})], id.clone(), 400, "missing_parameter"),
            (vec![], id.clone(), 400, "invalid_parameter"),
            (vec![result(&cc1, json!(80), "INCLUDED"), result(&json!("0190a000-0000-7000-8000-000000000009"), json!(80), "INCLUDED")], id.clone(), 422, "resource_not_found"),
            (vec![result(&cc1, json!(80), "INCLUDED")], json!("0190a000-0000-7000-8000-000000000009"), 422, "resource_not_found"),
        ] {
            let (s, body) = record(&app, &token, &cupping_id, results).await;
            assert_error(s, &body, status, code);
        }
        // More results later keep the summary consistent.
        let (s, body) = record(&app, &token, id, vec![result(&cc1, json!(86.5), "INCLUDED")]).await;
        assert_eq!(s, 200, "{body}");
        let (s, body) = app.call(&token, "quality.cupping.getCuppingsByIds",
            json!({"params": {"filter": {"cuppingIds": [id]}}})).await;
        assert_eq!(s, 200, "{body}");
        let coffee = &body["result"]["cuppings"][0]["cuppedCoffees"][0];
        // (85.25 + 86 + 86.5) / 3 = 85.91666… → 85.92; the EXCLUDED 40 does not count.
        assert_eq!(coffee["averageScore"], json!(85.92));
        assert_eq!(coffee["resultSummary"], json!({"averageScore": 85.92, "resultCount": 3, "minScore": 85.25, "maxScore": 86.5}));
        assert_eq!(body["result"]["cuppings"][0]["cuppedCoffees"][1]["averageScore"], Value::Null);
        // Results by cupped coffee.
        let results = app.list_all(&token, "quality.cupping.listCuppingResults", "cuppingResults",
            json!({"cuppedCoffeeIds": [cc2, cc1]}), 3).await;
        assert_eq!(results.len(), 4);
        assert_eq!(results[..3], recorded[..]);
        assert_eq!(results[3]["finalScore"], json!(86.5));
        // CLOSED: final.
        set_state(&app, &token, id, "CLOSED").await;
        let (s, body) = record(&app, &token, id, vec![result(&cc2, json!(90), "INCLUDED")]).await;
        assert_error(s, &body, 422, "invalid_request");
        let results = app.list_all(&token, "quality.cupping.listCuppingResults", "cuppingResults",
            json!({"cuppedCoffeeIds": [cc2]}), 50).await;
        assert!(results.is_empty());
    }

    async fn cuppings_list_newest_first_with_date_and_state_filters(app) {
        let token = app.token("quality.cupping").await;
        let lot = green_lot(&app, "g-1");
        let mut created = Vec::new();
        for (day, state) in [(1, None), (2, Some("OPEN")), (3, None), (4, Some("OPEN")), (5, None)] {
            let c = create_cupping(&app, &token, &format!("2026-03-0{day}T10:00:00Z"), state, &[&lot]).await;
            created.push(c["id"].clone());
        }
        let newest_first: Vec<Value> = created.iter().rev().cloned().collect();
        assert_eq!(ids(&all_cuppings(&app, &token, json!({})).await), newest_first);
        let window = json!({"startDate": {"from": "2026-03-02T10:00:00Z", "to": "2026-03-04T10:00:00Z"}});
        assert_eq!(ids(&all_cuppings(&app, &token, window).await), vec![created[2].clone(), created[1].clone()]);
        assert_eq!(
            ids(&all_cuppings(&app, &token, json!({"state": "OPEN"})).await),
            vec![created[3].clone(), created[1].clone()]
        );
        let both = json!({"state": "DRAFT", "startDate": {"from": "2026-03-03T00:00:00Z"}});
        assert_eq!(ids(&all_cuppings(&app, &token, both).await), vec![created[4].clone(), created[2].clone()]);
        let (s, b) = app.call(&token, "quality.cupping.listCuppings", json!({"params": {"filter": {"state": "SHUT"}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = app.call(&token, "quality.cupping.listCuppings", json!({"params": {"filter": {"startDate": {"from": "March"}}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = app.call(&token, "quality.cupping.listCuppings", json!({})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["result"]["cuppings"].as_array().unwrap().len(), 5);
    }

    async fn by_ids_reads_keep_order_skip_unknown_and_take_at_most_100_ids(app) {
        let token = app.token("quality.cupping").await;
        let lot = green_lot(&app, "g-1");
        let a = create_cupping(&app, &token, "2026-03-01T10:00:00Z", None, &[&lot]).await;
        let b = create_cupping(&app, &token, "2026-03-02T10:00:00Z", None, &[&lot]).await;
        let unknown = "0190a000-0000-7000-8000-000000000001";
        let found = app.list_all(&token, "quality.cupping.getCuppingsByIds", "cuppings",
            json!({"cuppingIds": [a["id"], unknown, b["id"]]}), 1).await;
        assert_eq!(ids(&found), vec![a["id"].clone(), b["id"].clone()]);
        assert_eq!(found[0], a);
        let many: Vec<String> = (0..101).map(|i| format!("0190a000-0000-7000-8000-{i:012}")).collect();
        let hundred = &many[..100];
        for op in ["quality.cupping.getCuppingsByIds", "quality.cupping.listCuppingResults"] {
            let field = if op.ends_with("ByIds") { "cuppingIds" } else { "cuppedCoffeeIds" };
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {field: many}}})).await;
            assert_error(s, &body, 400, "invalid_parameter");
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {field: hundred}}})).await;
            assert_eq!(s, 200, "{body}");
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {field: [unknown, unknown]}}})).await;
            assert_error(s, &body, 400, "invalid_parameter");
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {field: []}}})).await;
            assert_error(s, &body, 400, "invalid_parameter");
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {}}})).await;
            assert_error(s, &body, 400, "missing_parameter");
            let (s, body) = app.call(&token, op, json!({"params": {"filter": {field: ["nope"]}}})).await;
            assert_error(s, &body, 400, "invalid_parameter");
        }
    }

    async fn physical_analyses_are_recorded_exactly_and_listed_with_filters(app) {
        let token = app.token("quality.physical").await;
        let (a, b) = (green_lot(&app, "g-1"), green_lot(&app, "g-2"));
        let analysis = |lot: &str, date: &str| json!({"data": {
            "analysisDate": date,
            "analysedLot": {"id": lot, "type": "INVENTORY_GREEN"},
            "moisture": 10.123456, "waterActivity": 0.55, "density": 690.5,
            "screenSizes": [{"size": "18", "percentage": 60.25}, {"size": "17", "percentage": 39.75}],
            "defects": [{"name": "Quakers", "count": 2}],
            "note": "clean cup", "evaluator": {"name": "Lab"}
        }});
        let (s, body) = app.call(&token, "quality.physical.recordPhysicalAnalysis", analysis(&a, "2026-03-01T10:00:00Z")).await;
        assert_eq!(s, 200, "{body}");
        let first = body["result"]["physicalAnalysis"].clone();
        assert_eq!(first["analysisNumber"], "QC-1");
        assert_eq!(first["analysisDate"], "2026-03-01T10:00:00Z");
        assert_eq!(first["analysedLot"], json!({"id": a, "type": "INVENTORY_GREEN"}));
        assert_eq!(first["moisture"], json!(10.123456));
        assert_eq!(first["waterActivity"], json!(0.55));
        assert_eq!(first["density"], json!(690.5));
        assert_eq!(first["screenSizes"], json!([{"size": "18", "percentage": 60.25}, {"size": "17", "percentage": 39.75}]));
        assert_eq!(first["defects"], json!([{"name": "Quakers", "count": 2}]));
        assert_eq!(first["note"], "clean cup");
        assert_eq!(first["evaluator"], json!({"name": "Lab"}));
        let mut second = analysis(&b, "2026-03-02T10:00:00Z");
        second["data"]["analysedLot"]["type"] = json!("INVENTORY_GREEN");
        let (s, body) = app.call(&token, "quality.physical.recordPhysicalAnalysis", second).await;
        assert_eq!(s, 200, "{body}");
        let second = body["result"]["physicalAnalysis"].clone();
        assert_eq!(second["analysisNumber"], "QC-2");
        let (s, body) = app.call(&token, "quality.physical.recordPhysicalAnalysis", analysis(&a, "2026-03-03T10:00:00Z")).await;
        assert_eq!(s, 200, "{body}");
        let third = body["result"]["physicalAnalysis"].clone();

        let list = |filter: Value| app.list_all(&token, "quality.physical.listPhysicalAnalyses", "physicalAnalyses", filter, 2);
        assert_eq!(list(json!({})).await, vec![third.clone(), second.clone(), first.clone()]);
        assert_eq!(
            list(json!({"analysisDate": {"from": "2026-03-01T10:00:00Z", "to": "2026-03-03T10:00:00Z"}})).await,
            vec![second.clone(), first.clone()]
        );
        assert_eq!(list(json!({"analysedLotIds": [a]})).await, vec![third.clone(), first.clone()]);

        let unknown = "0190a000-0000-7000-8000-000000000001";
        let mut bad_moisture = analysis(&a, "2026-03-04T10:00:00Z");
        bad_moisture["data"]["moisture"] = json!(101);
        let mut no_date = analysis(&a, "2026-03-04T10:00:00Z");
        no_date["data"].as_object_mut().unwrap().remove("analysisDate");
        let mut bad_type = analysis(&a, "2026-03-04T10:00:00Z");
        bad_type["data"]["analysedLot"]["type"] = json!("LOT");
        let mut over = analysis(&a, "2026-03-04T10:00:00Z");
        over["data"]["screenSizes"][1]["percentage"] = json!(40);
        for (body, status, code) in [
            (analysis(unknown, "2026-03-04T10:00:00Z"), 422, "resource_not_found"),
            (bad_moisture, 400, "invalid_parameter"),
            (no_date, 400, "missing_parameter"),
            (bad_type, 400, "invalid_parameter"),
            (over, 422, "invalid_request"),
        ] {
            let (s, b) = app.call(&token, "quality.physical.recordPhysicalAnalysis", body).await;
            assert_error(s, &b, status, code);
        }
        assert_eq!(list(json!({})).await.len(), 3, "refused analyses are not stored");

        let many: Vec<String> = (0..101).map(|i| format!("0190a000-0000-7000-8000-{i:012}")).collect();
        let (s, b) = app.call(&token, "quality.physical.listPhysicalAnalyses", json!({"params": {"filter": {"analysedLotIds": many}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        let (s, b) = app.call(&token, "quality.physical.listPhysicalAnalyses", json!({"params": {"filter": {"analysedLotIds": many[..100]}}})).await;
        assert_eq!(s, 200, "{b}");
    }

    async fn roasted_and_blended_lots_are_cupped_and_analysed(app) {
        let token = app.token(ALL_SCOPES).await;
        let green = green_lot(&app, "g-1");
        let (s, b) = app.call(&token, "core.location.importLocation", json!({"data": {"name": "Roastery"}})).await;
        assert_eq!(s, 200, "{b}");
        let location = b["result"]["location"]["id"].clone();
        let (s, b) = app.call(&token, "inventory.roast.recordRoast", json!({"data": {
            "name": "Roast 1", "locationId": location, "roastedDate": "2026-03-01T08:00:00Z",
            "weight": {"amount": 10, "unit": "KG"},
            "greenLots": [{"id": green, "usedWeight": {"amount": 12, "unit": "KG"}}]
        }})).await;
        assert_eq!(s, 200, "{b}");
        let roasted = b["result"]["roastedLot"]["id"].clone();
        let (s, b) = app.call(&token, "inventory.blend.createBlend", json!({"data": {
            "name": "House", "locationId": location, "blendedDate": "2026-03-01T09:00:00Z",
            "roastedLots": [{"id": roasted, "usedWeight": {"amount": 4, "unit": "KG"}}]
        }})).await;
        assert_eq!(s, 200, "{b}");
        let blended = b["result"]["blendedLot"]["id"].clone();
        let (s, b) = app.call(&token, "quality.cupping.createCupping", json!({"data": {
            "startDate": "2026-03-02T10:00:00Z", "cuppingSheet": {"name": "SCA"},
            "coffees": [
                {"lotId": green, "type": "INVENTORY_GREEN"},
                {"lotId": roasted, "type": "INVENTORY_ROAST"},
                {"lotId": blended, "type": "INVENTORY_BLEND"}
            ]
        }})).await;
        assert_eq!(s, 200, "{b}");
        let lots: Vec<Value> = b["result"]["cupping"]["cuppedCoffees"].as_array().unwrap()
            .iter().map(|c| c["cuppedLot"].clone()).collect();
        assert_eq!(lots, vec![
            json!({"id": green, "type": "INVENTORY_GREEN"}),
            json!({"id": roasted, "type": "INVENTORY_ROAST"}),
            json!({"id": blended, "type": "INVENTORY_BLEND"}),
        ]);
        // Each id belongs to its own kind only.
        let (s, b) = app.call(&token, "quality.cupping.createCupping", json!({"data": {
            "startDate": "2026-03-02T10:00:00Z", "cuppingSheet": {"name": "SCA"},
            "coffees": [{"lotId": roasted, "type": "INVENTORY_BLEND"}]
        }})).await;
        assert_error(s, &b, 422, "resource_not_found");
        for (lot, kind) in [(&roasted, "INVENTORY_ROAST"), (&blended, "INVENTORY_BLEND")] {
            let (s, b) = app.call(&token, "quality.physical.recordPhysicalAnalysis", json!({"data": {
                "analysisDate": "2026-03-03T10:00:00Z", "analysedLot": {"id": lot, "type": kind},
                "moisture": 2.5
            }})).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["result"]["physicalAnalysis"]["analysedLot"], json!({"id": lot, "type": kind}));
            assert_eq!(b["result"]["physicalAnalysis"]["screenSizes"], json!([]));
        }
        let (s, b) = app.call(&token, "quality.physical.recordPhysicalAnalysis", json!({"data": {
            "analysisDate": "2026-03-03T10:00:00Z", "analysedLot": {"id": blended, "type": "INVENTORY_ROAST"}
        }})).await;
        assert_error(s, &b, 422, "resource_not_found");
    }

    async fn quality_operations_need_their_own_scope(app) {
        let cupping = app.token("quality.cupping").await;
        let (s, b) = app.call(&cupping, "quality.physical.listPhysicalAnalyses", json!({})).await;
        assert_error(s, &b, 403, "access_denied");
        let physical = app.token("quality.physical").await;
        let (s, b) = app.call(&physical, "quality.cupping.listCuppings", json!({})).await;
        assert_error(s, &b, 403, "access_denied");
    }
}
