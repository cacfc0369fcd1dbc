//! inventory.green end to end: every operation, every error of api-decisions §2 for them, exact
//! weights, concurrent transfers over many connections and paging through thousands of lots.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use chrono::{DateTime, TimeDelta, Utc};
use roastery_domain::green_lot::{GreenLot, GreenLotImport};
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::Store;
use roastery_ports::repo::{GreenLotRepo, SystemRepo};
use rust_decimal::Decimal;
use serde_json::Value;
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::both_databases;
use crate::helpers::*;

const SCOPES: &str = "inventory.green core.location core.project";

async fn location(app: &TestApp, token: &str, name: &str, external_id: &str) -> String {
    let (status, body) = app
        .call(
            token,
            "core.location.importLocation",
            json!({"data": {"name": name, "externalId": external_id}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["location"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn import(app: &TestApp, token: &str, data: Value) -> (StatusCode, Value) {
    app.call(
        token,
        "inventory.green.importGreenLot",
        json!({ "data": data }),
    )
    .await
}

async fn transfer(
    app: &TestApp,
    token: &str,
    id: &str,
    weight: Value,
    to: &str,
) -> (StatusCode, Value) {
    app.call(
        token,
        "inventory.green.transferGreenLotToLocation",
        json!({"data": {"greenLotId": id, "weight": weight, "destinationLocationId": to}}),
    )
    .await
}

async fn set_weight(app: &TestApp, token: &str, id: &str, weight: Value) -> (StatusCode, Value) {
    app.call(
        token,
        "inventory.green.setGreenLotWeight",
        json!({"data": {"greenLotId": id, "weight": weight}}),
    )
    .await
}

async fn all_lots(app: &TestApp, token: &str) -> Vec<Value> {
    app.list_all(
        token,
        "inventory.green.listGreenLots",
        "greenLots",
        json!({}),
        100,
    )
    .await
}

fn field<'a>(raw: &'a RawValue, key: &str) -> &'a RawValue {
    let map: HashMap<&str, &RawValue> = serde_json::from_str(raw.get()).expect("an object");
    map.get(key)
        .copied()
        .unwrap_or_else(|| panic!("no `{key}` in {}", raw.get()))
}

/// `(id, exact weight amount, unit)` of each lot in a listing body,
/// read from the raw JSON so no amount passes through floating point.
fn exact_weights(text: &str) -> Vec<(String, Decimal, String)> {
    let body: &RawValue = serde_json::from_str(text).expect("json");
    let lots: Vec<&RawValue> =
        serde_json::from_str(field(field(body, "result"), "greenLots").get()).unwrap();
    lots.into_iter()
        .map(|lot| {
            let id: String = serde_json::from_str(field(lot, "id").get()).unwrap();
            let weight = field(lot, "weight");
            let amount = Decimal::from_str(field(weight, "amount").get())
                .or_else(|_| Decimal::from_scientific(field(weight, "amount").get()))
                .unwrap();
            let unit: String = serde_json::from_str(field(weight, "unit").get()).unwrap();
            (id, amount, unit)
        })
        .collect()
}

/// Every lot of the listing, exactly, through all pages.
async fn all_exact_weights(app: &TestApp, token: &str) -> Vec<(String, Decimal, String)> {
    let mut out = Vec::new();
    let mut after = Value::Null;
    loop {
        let body = json!({"params": {"pagination": {"limit": 100, "after": after}}});
        let (status, text) = app
            .call_raw(token, "inventory.green.listGreenLots", &body.to_string())
            .await;
        assert_eq!(status, 200, "{text}");
        out.extend(exact_weights(&text));
        after = parse(&text)["meta"]["pagination"]["endCursor"].clone();
        if after.is_null() {
            return out;
        }
    }
}

both_databases! {
    async fn import_green_lot_returns_the_whole_resource_with_exact_amounts(app) {
        let token = app.token(SCOPES).await;
        let hamburg = location(&app, &token, "Hamburg", "WH-HAM").await;
        let (status, body) = app.call(&token, "core.project.importProject",
            json!({"data": {"name": "Direct Trade"}})).await;
        assert_eq!(status, 200, "{body}");
        let (status, text) = app.call_raw(&token, "inventory.green.importGreenLot", r#"{"data": {
            "name": " Guji Natural ", "externalId": "ERP-1", "icoNumber": "010-0001-0042",
            "weight": {"amount": 12345678.1234565, "unit": "KG"},
            "price": {"amount": 6.850000001, "currency": "EUR"},
            "location": {"externalId": "WH-HAM"},
            "projects": [{"name": "Direct Trade"}],
            "details": {"note": "Blueberry", "grade": "G1", "cropYear": "2025/26",
                "processingMethods": ["Natural"], "countriesOfOrigin": ["ETH"],
                "varieties": [{"name": "Heirloom"}], "certifications": [{"name": "Organic"}]}
        }}"#).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(r#""amount":12345678.123456,"unit":"KG""#), "{text}");
        assert!(text.contains(r#""amount":6.85,"currency":"EUR""#), "{text}");
        let body = parse(&text);
        let lot = &body["result"]["greenLot"];
        assert_eq!(body["ok"], true);
        assert_eq!(lot["lotNumber"], "PG-1");
        assert_eq!(lot["name"], "Guji Natural");
        assert_eq!(lot["externalId"], "ERP-1");
        assert_eq!(lot["icoNumber"], "010-0001-0042");
        assert_eq!(lot["location"], json!({"id": hamburg, "externalId": "WH-HAM"}));
        assert_eq!(lot["projects"], json!([{"name": "Direct Trade"}]));
        assert_eq!(lot["consumedDate"], Value::Null);
        assert_eq!(lot["registrationDate"], lot["lastModifiedDate"]);
        let registered = lot["registrationDate"].as_str().unwrap();
        assert!(DateTime::parse_from_rfc3339(registered).is_ok() && registered.ends_with('Z'));
        assert!(Uuid::parse_str(lot["id"].as_str().unwrap()).is_ok());

        // By locationId, without price or location: both answer null.
        let (status, body) = import(&app, &token, json!({"name": "B", "externalId": "ERP-2",
            "weight": {"amount": 10, "unit": "LBS"}, "locationId": hamburg})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["greenLot"]["lotNumber"], "PG-2");
        assert_eq!(body["result"]["greenLot"]["weight"], json!({"amount": 10, "unit": "LBS"}));
        let (_, body) = import(&app, &token, json!({"name": "C", "externalId": "ERP-3",
            "weight": {"amount": 1, "unit": "KG"}})).await;
        assert_eq!(body["result"]["greenLot"]["price"], Value::Null);
        assert_eq!(body["result"]["greenLot"]["location"], Value::Null);
        assert_eq!(body["result"]["greenLot"]["projects"], json!([]));

        // Details come back as imported.
        let id = lot["id"].clone();
        let (status, body) = app.call(&token, "inventory.green.getGreenLotDetailsByIds",
            json!({"params": {"filter": {"greenLotIds": [id]}}})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["greenLotDetails"], json!([{"greenLotId": id, "note": "Blueberry",
            "grade": "G1", "cropYear": "2025/26", "processingMethods": ["Natural"],
            "countriesOfOrigin": ["ETH"], "varieties": [{"name": "Heirloom"}],
            "certifications": [{"name": "Organic"}], "dueDiligence": null}]));

        // Without the green scope: 403.
        let other = app.token("core.location").await;
        let (status, body) = import(&app, &other, json!({"name": "X", "externalId": "X",
            "weight": {"amount": 1, "unit": "KG"}})).await;
        assert_error(status, &body, 403, "access_denied");
    }

    async fn every_bad_import_gets_its_code_and_stores_nothing(app) {
        let token = app.token(SCOPES).await;
        let hamburg = location(&app, &token, "Hamburg", "WH-HAM").await;
        let ok = json!({"name": "Guji", "externalId": "ERP-1", "weight": {"amount": 60, "unit": "KG"}});
        let (status, body) = import(&app, &token, ok.clone()).await;
        assert_eq!(status, 200, "{body}");
        let before = all_lots(&app, &token).await;
        let with = |patch: Value| {
            let mut data = ok.clone();
            data["externalId"] = json!("ERP-NEW");
            for (k, v) in patch.as_object().unwrap() {
                if v.is_null() { data.as_object_mut().unwrap().remove(k); } else { data[k] = v.clone(); }
            }
            data
        };
        let unknown = Uuid::now_v7().to_string();
        let cases = [
            (with(json!({"name": null})), 400, "missing_parameter"),
            (with(json!({"externalId": null})), 400, "missing_parameter"),
            (with(json!({"weight": null})), 400, "missing_parameter"),
            (with(json!({"weight": {"unit": "KG"}})), 400, "missing_parameter"),
            (with(json!({"name": "  "})), 400, "invalid_parameter"),
            (with(json!({"name": 5})), 400, "invalid_parameter"),
            (with(json!({"weight": {"amount": "1", "unit": "KG"}})), 400, "invalid_parameter"),
            (with(json!({"locationId": "not-a-uuid"})), 400, "invalid_parameter"),
            (with(json!({"details": {"countriesOfOrigin": ["ET"]}})), 400, "invalid_parameter"),
            (with(json!({"weight": {"amount": 1, "unit": "G"}})), 400, "unsupported_unit"),
            (with(json!({"price": {"amount": 1, "currency": "XXY"}})), 400, "unsupported_currency"),
            (with(json!({"locationId": unknown})), 422, "resource_not_found"),
            (with(json!({"location": {"externalId": "NOWHERE"}})), 422, "resource_not_found"),
            (with(json!({"projects": [{"name": "No such project"}]})), 422, "resource_not_found"),
            (with(json!({"locationId": unknown, "location": {"externalId": "WH-HAM"}})), 422, "resource_not_found"),
            (with(json!({"locationId": hamburg, "location": {"externalId": "WH-HAM"}})), 422, "resource_conflict"),
            (with(json!({"externalId": "ERP-1"})), 422, "resource_conflict"),
            (with(json!({"externalId": "ERP-1", "weight": {"amount": -1, "unit": "KG"}})), 422, "resource_conflict"),
            (with(json!({"weight": {"amount": -0.5, "unit": "KG"}})), 422, "invalid_weight"),
            (with(json!({"weight": {"amount": 0, "unit": "LBS"}})), 422, "invalid_weight"),
            (with(json!({"price": {"amount": -1, "currency": "EUR"}})), 422, "invalid_price"),
        ];
        for (data, status, code) in cases {
            let (got, body) = import(&app, &token, data.clone()).await;
            assert_eq!(got.as_u16(), status, "{data} → {body}");
            assert_error(got, &body, status, code);
        }
        assert_eq!(all_lots(&app, &token).await, before);
        let (_, body) = import(&app, &token, with(json!({}))).await;
        assert_eq!(body["result"]["greenLot"]["lotNumber"], "PG-2", "no number was used up");
    }

    async fn transfers_create_merge_consume_and_refuse_bad_input_untouched(app) {
        let token = app.token(SCOPES).await;
        let hamburg = location(&app, &token, "Hamburg", "WH-HAM").await;
        let berlin = location(&app, &token, "Berlin", "WH-BER").await;
        let (_, body) = import(&app, &token, json!({"name": "Guji", "externalId": "ERP-1",
            "weight": {"amount": 60, "unit": "KG"}, "locationId": hamburg,
            "price": {"amount": 5.2, "currency": "EUR"}, "icoNumber": "ICO-1"})).await;
        let source = body["result"]["greenLot"].clone();
        let source_id = source["id"].as_str().unwrap().to_owned();

        let (status, body) = transfer(&app, &token, &source_id, json!({"amount": 20.5, "unit": "KG"}), &berlin).await;
        assert_eq!(status, 200, "{body}");
        let moved = &body["result"];
        assert_eq!(moved["sourceGreenLot"]["weight"], json!({"amount": 39.5, "unit": "KG"}));
        let dest = moved["destinationGreenLot"].clone();
        assert_eq!(dest["lotNumber"], "PG-2");
        assert_eq!(dest["weight"], json!({"amount": 20.5, "unit": "KG"}));
        assert_eq!(dest["location"], json!({"id": berlin, "externalId": "WH-BER"}));
        assert_eq!((&dest["name"], &dest["icoNumber"], &dest["price"]), (&source["name"], &source["icoNumber"], &source["price"]));
        assert_eq!(dest["externalId"], Value::Null);
        let dest_id = dest["id"].as_str().unwrap().to_owned();

        // Pounds are converted into the lot's unit; a second transfer merges.
        let (status, body) = transfer(&app, &token, &source_id, json!({"amount": 10, "unit": "LBS"}), &berlin).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["destinationGreenLot"]["id"], json!(dest_id));
        assert_eq!(body["result"]["destinationGreenLot"]["weight"], json!({"amount": 25.035924, "unit": "KG"}));
        assert_eq!(body["result"]["sourceGreenLot"]["weight"], json!({"amount": 34.964076, "unit": "KG"}));

        // Moving everything back consumes the Berlin lot and merges into the imported one.
        let (status, body) = transfer(&app, &token, &dest_id, json!({"amount": 25.035924, "unit": "KG"}), &hamburg).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["destinationGreenLot"]["id"], json!(source_id));
        assert_eq!(body["result"]["destinationGreenLot"]["weight"], json!({"amount": 60, "unit": "KG"}));
        assert_eq!(body["result"]["sourceGreenLot"]["weight"], json!({"amount": 0, "unit": "KG"}));
        assert!(body["result"]["sourceGreenLot"]["consumedDate"].is_string());

        let before = all_lots(&app, &token).await;
        let unknown = Uuid::now_v7().to_string();
        let kg = |a: f64| json!({"amount": a, "unit": "KG"});
        let cases = [
            (json!({"weight": kg(1.0), "destinationLocationId": berlin}), 400, "missing_parameter"),
            (json!({"greenLotId": source_id, "destinationLocationId": berlin}), 400, "missing_parameter"),
            (json!({"greenLotId": source_id, "weight": kg(1.0)}), 400, "missing_parameter"),
            (json!({"greenLotId": "nope", "weight": kg(1.0), "destinationLocationId": berlin}), 400, "invalid_parameter"),
            (json!({"greenLotId": source_id, "weight": {"amount": 1, "unit": "TONS"}, "destinationLocationId": berlin}), 400, "unsupported_unit"),
            (json!({"greenLotId": unknown, "weight": kg(1.0), "destinationLocationId": berlin}), 422, "resource_not_found"),
            (json!({"greenLotId": source_id, "weight": kg(1.0), "destinationLocationId": unknown}), 422, "resource_not_found"),
            (json!({"greenLotId": dest_id, "weight": kg(1.0), "destinationLocationId": hamburg}), 422, "invalid_request"),
            (json!({"greenLotId": dest_id, "weight": kg(-1.0), "destinationLocationId": berlin}), 422, "invalid_request"),
            (json!({"greenLotId": source_id, "weight": kg(1.0), "destinationLocationId": hamburg}), 422, "resource_conflict"),
            (json!({"greenLotId": source_id, "weight": kg(0.0), "destinationLocationId": berlin}), 422, "invalid_weight"),
            (json!({"greenLotId": source_id, "weight": kg(-1.0), "destinationLocationId": berlin}), 422, "invalid_weight"),
            (json!({"greenLotId": source_id, "weight": kg(60.000001), "destinationLocationId": berlin}), 422, "invalid_weight"),
        ];
        for (data, status, code) in cases {
            let (got, body) = app.call(&token, "inventory.green.transferGreenLotToLocation", json!({"data": data})).await;
            assert_error(got, &body, status, code);
        }
        assert_eq!(all_lots(&app, &token).await, before);

        // A consumed lot is never a merge target: a new lot appears beside it.
        let (status, body) = transfer(&app, &token, &source_id, kg(1.0), &berlin).await;
        assert_eq!(status, 200, "{body}");
        assert_ne!(body["result"]["destinationGreenLot"]["id"], json!(dest_id));
        assert_eq!(body["result"]["destinationGreenLot"]["lotNumber"], "PG-3");
    }

    async fn set_weight_replaces_consumes_and_moves_last_modified(app) {
        let token = app.token(SCOPES).await;
        let (_, body) = import(&app, &token, json!({"name": "Guji", "externalId": "ERP-1",
            "weight": {"amount": 60, "unit": "KG"}})).await;
        let lot = body["result"]["greenLot"].clone();
        let id = lot["id"].as_str().unwrap().to_owned();
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;

        let (status, body) = set_weight(&app, &token, &id, json!({"amount": 100, "unit": "LBS"})).await;
        assert_eq!(status, 200, "{body}");
        let changed = &body["result"]["greenLot"];
        assert_eq!(changed["weight"], json!({"amount": 45.359237, "unit": "KG"}));
        assert_ne!(changed["lastModifiedDate"], lot["lastModifiedDate"]);
        assert_eq!(changed["registrationDate"], lot["registrationDate"]);
        let modified = changed["lastModifiedDate"].clone();

        // The filter is inclusive and leaves out lots not modified since.
        let (_, other) = import(&app, &token, json!({"name": "Other", "externalId": "ERP-2",
            "weight": {"amount": 1, "unit": "KG"}})).await;
        let listed = app.list_all(&token, "inventory.green.listGreenLots", "greenLots",
            json!({"lastModifiedDate": {"from": modified}}), 10).await;
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0]["id"], other["result"]["greenLot"]["id"], "newest registration first");
        assert_eq!(listed[1]["id"], json!(id));
        let later = (DateTime::parse_from_rfc3339(other["result"]["greenLot"]["lastModifiedDate"].as_str().unwrap())
            .unwrap() + TimeDelta::seconds(5)).to_rfc3339();
        let none = app.list_all(&token, "inventory.green.listGreenLots", "greenLots",
            json!({"lastModifiedDate": {"from": later}}), 10).await;
        assert!(none.is_empty());

        let (status, body) = set_weight(&app, &token, &id, json!({"amount": 0, "unit": "KG"})).await;
        assert_eq!(status, 200, "{body}");
        let consumed = body["result"]["greenLot"].clone();
        assert!(consumed["consumedDate"].is_string());
        assert_eq!(consumed["weight"], json!({"amount": 0, "unit": "KG"}));
        let (status, body) = set_weight(&app, &token, &id, json!({"amount": 0, "unit": "LBS"})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["greenLot"], consumed, "zero again changes nothing");

        let before = all_lots(&app, &token).await;
        let unknown = Uuid::now_v7().to_string();
        let cases = [
            (json!({"weight": {"amount": 1, "unit": "KG"}}), 400, "missing_parameter"),
            (json!({"greenLotId": id}), 400, "missing_parameter"),
            (json!({"greenLotId": id, "weight": {"amount": 1, "unit": "kg"}}), 400, "unsupported_unit"),
            (json!({"greenLotId": unknown, "weight": {"amount": 1, "unit": "KG"}}), 422, "resource_not_found"),
            (json!({"greenLotId": id, "weight": {"amount": 1, "unit": "KG"}}), 422, "invalid_request"),
            (json!({"greenLotId": id, "weight": {"amount": -1, "unit": "KG"}}), 422, "invalid_request"),
            (json!({"greenLotId": other["result"]["greenLot"]["id"], "weight": {"amount": -1, "unit": "KG"}}), 422, "invalid_weight"),
        ];
        for (data, status, code) in cases {
            let (got, body) = app.call(&token, "inventory.green.setGreenLotWeight", json!({"data": data})).await;
            assert_error(got, &body, status, code);
        }
        assert_eq!(all_lots(&app, &token).await, before);

        // Listing filter errors.
        let (status, body) = app.call(&token, "inventory.green.listGreenLots",
            json!({"params": {"filter": {"lastModifiedDate": {"from": "yesterday"}}}})).await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = app.call(&token, "inventory.green.listGreenLots",
            json!({"params": {"pagination": {"after": "forged"}}})).await;
        assert_error(status, &body, 400, "invalid_parameter");
    }

    async fn details_by_ids_answer_in_the_asked_order_and_page(app) {
        let token = app.token(SCOPES).await;
        let mut ids = Vec::new();
        for i in 0..3 {
            let (_, body) = import(&app, &token, json!({"name": format!("L{i}"), "externalId": format!("E{i}"),
                "weight": {"amount": 1, "unit": "KG"}, "details": {"grade": format!("G{i}")}})).await;
            ids.push(body["result"]["greenLot"]["id"].clone());
        }
        let unknown = json!(Uuid::now_v7().to_string());
        let asked = json!([ids[2], unknown, ids[0], ids[1]]);
        let details = app.list_all(&token, "inventory.green.getGreenLotDetailsByIds", "greenLotDetails",
            json!({"greenLotIds": asked}), 1).await;
        let got: Vec<&Value> = details.iter().map(|d| &d["greenLotId"]).collect();
        assert_eq!(got, [&ids[2], &ids[0], &ids[1]]);
        assert_eq!(details[0]["grade"], "G2");
        assert_eq!(details[0]["processingMethods"], json!([]));

        let many: Vec<String> = (0..101).map(|_| Uuid::now_v7().to_string()).collect();
        let cases = [
            (json!({"params": {}}), 400, "missing_parameter"),
            (json!({"params": {"filter": {}}}), 400, "missing_parameter"),
            (json!({"params": {"filter": {"greenLotIds": []}}}), 400, "invalid_parameter"),
            (json!({"params": {"filter": {"greenLotIds": [ids[0], ids[0]]}}}), 400, "invalid_parameter"),
            (json!({"params": {"filter": {"greenLotIds": many}}}), 400, "invalid_parameter"),
            (json!({"params": {"filter": {"greenLotIds": ["x"]}}}), 400, "invalid_parameter"),
            (json!({"params": {"filter": {"greenLotIds": [ids[0]]}, "pagination": {"limit": 0}}}), 400, "invalid_parameter"),
        ];
        for (body, status, code) in cases {
            let (got, answer) = app.call(&token, "inventory.green.getGreenLotDetailsByIds", body).await;
            assert_error(got, &answer, status, code);
        }
    }

    async fn parallel_transfers_over_many_connections_conserve_the_weight_exactly(app) {
        let token = app.token(SCOPES).await;
        let mut places = Vec::new();
        for (name, external) in [("A", "LOC-A"), ("B", "LOC-B"), ("C", "LOC-C")] {
            places.push(location(&app, &token, name, external).await);
        }
        let (_, body) = import(&app, &token, json!({"name": "Guji", "externalId": "ERP-1",
            "weight": {"amount": 100.000001, "unit": "KG"}, "locationId": places[0]})).await;
        let origin = body["result"]["greenLot"]["id"].as_str().unwrap().to_owned();

        let clients = 16;
        let rounds = 8;
        let app = std::sync::Arc::new(app);
        let mut tasks = Vec::new();
        for c in 0..clients {
            let app = app.clone();
            let token = token.clone();
            let places = places.clone();
            let origin = origin.clone();
            tasks.push(tokio::spawn(async move {
                // Concurrent requests of one client open as many connections as are in flight.
                let (mut lot, mut at) = (origin, 0usize);
                let mut done = 0;
                for r in 0..rounds {
                    let to = (at + 1 + (c + r) % 2) % 3;
                    let weight = if (c + r) % 3 == 0 {
                        json!({"amount": 2.204623, "unit": "LBS"})
                    } else {
                        json!({"amount": 1.234567, "unit": "KG"})
                    };
                    // Writers take turns, so contention queues: every answer is final, never 503.
                    let (status, body) = transfer(&app, &token, &lot, weight, &places[to]).await;
                    match status.as_u16() {
                        200 => {
                            done += 1;
                            lot = body["result"]["destinationGreenLot"]["id"].as_str().unwrap().to_owned();
                            at = to;
                        }
                        422 => {
                            let code = body["error"]["code"].as_str().unwrap_or_default().to_owned();
                            assert!(code == "invalid_weight" || code == "invalid_request", "{body}");
                        }
                        _ => panic!("unexpected answer {status}: {body}"),
                    }
                }
                done
            }));
        }
        let mut done = 0;
        for t in tasks {
            done += t.await.expect("client task");
        }
        assert!(done > clients, "most transfers succeed ({done})");

        let lots = all_exact_weights(&app, &token).await;
        assert!(lots.iter().all(|(_, _, unit)| unit == "KG"));
        let total: Decimal = lots.iter().map(|(_, amount, _)| *amount).sum();
        assert_eq!(total, Decimal::from_str("100.000001").unwrap());
        // At most one active lot of the origin per location.
        let listed = all_lots(&app, &token).await;
        let mut active = HashSet::new();
        for lot in listed.iter().filter(|l| l["consumedDate"].is_null()) {
            assert!(active.insert(lot["location"]["id"].to_string()), "two active lots at one place");
        }
        let numbers: HashSet<String> = listed.iter().map(|l| l["lotNumber"].as_str().unwrap().to_owned()).collect();
        assert_eq!(numbers.len(), listed.len());
        for n in 1..=listed.len() {
            assert!(numbers.contains(&format!("PG-{n}")), "PG-{n} missing: numbers have a gap");
        }
    }

    async fn paging_through_thousands_of_lots_returns_each_once_newest_first(app) {
        let token = app.token(SCOPES).await;
        let base = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let count = 2400;
        let seeded: Vec<(DateTime<Utc>, Uuid)> = app.roastery.store().write(|tx| {
            let mut seeded = Vec::new();
            for i in 0..count {
                // Three lots per second: ties on the registration date are broken by id.
                let at = base + TimeDelta::seconds(i / 3);
                let id = Uuid::now_v7();
                let lot = GreenLot::import(GreenLotImport {
                    name: Some(format!("Lot {i}")),
                    external_id: Some(format!("SEED-{i}")),
                    weight: Weight::new(Decimal::new(i + 1, 3), WeightUnit::Kg).unwrap(),
                    ico_number: None,
                    price: None,
                    location_id: None,
                    projects: Vec::new(),
                    details: GreenLotDetails::default(),
                }, id, tx.next_number("PG")?, at)?;
                tx.insert_green_lot(&lot)?;
                seeded.push((at, id));
            }
            // Fixtures written past the use cases: no events for them.
            drop(roastery_ports::repo::EventRepo::take_changes(tx));
            Ok(seeded)
        }).unwrap();
        let mut expected = seeded.clone();
        expected.sort_by(|a, b| b.cmp(a));

        let listed = app.list_all(&token, "inventory.green.listGreenLots", "greenLots", json!({}), 100).await;
        let ids: Vec<Uuid> = listed.iter().map(|l| Uuid::parse_str(l["id"].as_str().unwrap()).unwrap()).collect();
        assert_eq!(ids.len(), seeded.len());
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "each lot exactly once");
        assert_eq!(ids, expected.iter().map(|(_, id)| *id).collect::<Vec<_>>());

        // The lastModifiedDate filter, inclusive, over the same pages.
        let from = base + TimeDelta::seconds(500);
        let filtered = app.list_all(&token, "inventory.green.listGreenLots", "greenLots",
            json!({"lastModifiedDate": {"from": from.to_rfc3339()}}), 77).await;
        let wanted = seeded.iter().filter(|(at, _)| *at >= from).count();
        assert_eq!(filtered.len(), wanted);
        assert_eq!(filtered.last().unwrap()["registrationDate"], json!("2027-01-15T08:08:20Z"));
    }
}
