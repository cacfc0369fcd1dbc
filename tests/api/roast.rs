//! inventory.roast and inventory.blend end to end: recording roasts from green lots, their
//! details and curves, profiles, roasted lot weights, blends, listings and by-ids reads.

use std::str::FromStr;

use roastery_app::green_lot::{ImportGreenLot, WeightInput};
use roastery_app::location::ImportLocation;
use roastery_app::project::ImportProject;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::WeightUnit;
use roastery_ports::Store;
use roastery_ports::repo::{GreenLotRepo, RoastRepo};
use rust_decimal::Decimal;
use serde_json::Value;
use uuid::Uuid;

use crate::both_databases;
use crate::helpers::*;

const SCOPES: &str = "inventory.roast inventory.blend";

struct Seeded {
    location: Uuid,
    /// Green lots: 60 KG "Guji" (ERP-1) and 10 KG "Huila" (ERP-2).
    green: [Uuid; 2],
}

fn seed(app: &TestApp) -> Seeded {
    let location = app
        .roastery
        .import_location(ImportLocation {
            name: "Roastery floor".into(),
            external_id: Some("RST-01".into()),
        })
        .unwrap()
        .id;
    app.roastery
        .import_project(ImportProject {
            name: "Espresso Program".into(),
            description: None,
        })
        .unwrap();
    let green = [("Guji", "ERP-1", "60"), ("Huila", "ERP-2", "10")].map(|(name, ext, kg)| {
        app.roastery
            .import_green_lot(ImportGreenLot {
                name: Some(name.into()),
                external_id: Some(ext.into()),
                weight: WeightInput {
                    amount: Decimal::from_str(kg).unwrap(),
                    unit: WeightUnit::Kg,
                },
                ico_number: None,
                price: None,
                location_id: Some(location),
                location_external_id: None,
                projects: vec![],
                details: GreenLotDetails::default(),
            })
            .unwrap()
            .lot
            .id
    });
    Seeded { location, green }
}

fn green_kg(app: &TestApp, id: Uuid) -> String {
    app.roastery
        .store()
        .read(|tx| Ok(tx.green_lot(id)?.unwrap().stock.weight().amount()))
        .unwrap()
        .to_string()
}

fn roast_body(s: &Seeded, name: &str, weight: f64, used: &[(usize, f64)]) -> Value {
    json!({"data": {
        "name": name,
        "locationId": s.location,
        "roastedDate": "2026-03-01T09:30:00+01:00",
        "weight": {"amount": weight, "unit": "KG"},
        "greenLots": used.iter().map(|(i, w)| json!({"id": s.green[*i], "usedWeight": {"amount": w, "unit": "KG"}})).collect::<Vec<_>>(),
    }})
}

async fn record(app: &TestApp, token: &str, body: Value) -> Value {
    let (status, body) = app.call(token, "inventory.roast.recordRoast", body).await;
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

both_databases! {
    async fn a_recorded_roast_takes_green_weight_and_reads_back_with_details_and_curves(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let points: Vec<Value> = (0..10_000).map(|i| json!({"time": i * 100, "value": 150.25})).collect();
        let mut body = roast_body(&s, "Guji light", 55.5, &[(0, 50.0), (1, 10.0)]);
        body["data"]["details"] = json!({
            "roastTechnician": "Ana",
            "machine": {"name": "Probat P12"},
            "note": "even development",
            "startTemperature": {"amount": 200, "unit": "CELSIUS"},
            "endTemperature": {"amount": 421.5, "unit": "FAHRENHEIT"},
            "roastValue": {"amount": 62, "unit": "AGTRON_GOURMET"},
            "roastValue2": {"amount": 70, "unit": "TONINO"},
            "roastDuration": {"amount": 11.5, "unit": "MINUTE"},
            "firstCrackTime": {"amount": 480, "unit": "SECOND"},
            "colorChangeTime": {"amount": 270000, "unit": "MILLISECOND"}
        });
        body["data"]["curves"] = json!([
            {"name": "BT", "unit": "CELSIUS", "dataPoints": points},
            {"name": "ROR", "unit": "CELSIUS_PER_MINUTE", "dataPoints": [{"time": 0, "value": 12.000001}]}
        ]);
        body["data"]["projects"] = json!([{"name": "Espresso Program"}]);
        let result = record(&app, &token, body).await;
        let lot = &result["roastedLot"];
        assert_eq!(lot["lotNumber"], "PR-1");
        assert_eq!(lot["name"], "Guji light");
        assert_eq!(lot["weight"], json!({"amount": 55.5, "unit": "KG"}));
        assert_eq!(lot["weightLoss"], json!({"amount": 4.5, "unit": "KG", "percentage": 7.5}));
        assert_eq!(lot["greenLots"][0], json!({"id": s.green[0], "name": "Guji", "externalId": "ERP-1", "usedWeight": {"amount": 50, "unit": "KG"}}));
        assert_eq!(lot["greenLots"][1]["usedWeight"]["amount"], 10);
        assert_eq!(lot["profile"], Value::Null);
        assert_eq!(lot["location"], json!({"id": s.location, "externalId": "RST-01"}));
        assert_eq!(lot["roastedDate"], "2026-03-01T08:30:00Z");
        assert_eq!(lot["projects"], json!([{"name": "Espresso Program"}]));
        assert_eq!(lot["consumedDate"], Value::Null);
        // The green lots after the roast: one drawn down, one consumed.
        assert_eq!(result["greenLots"][0]["weight"]["amount"], 10);
        assert_eq!(result["greenLots"][1]["weight"]["amount"], 0);
        assert!(result["greenLots"][1]["consumedDate"].is_string());
        assert_eq!(green_kg(&app, s.green[0]), "10");
        let id = lot["id"].as_str().unwrap().to_owned();

        let (status, body) = app.call(&token, "inventory.roast.getRoastDetailsByIds",
            json!({"params": {"filter": {"roastedLotIds": [id]}}})).await;
        assert_eq!(status, 200, "{body}");
        let details = &body["result"]["roastDetails"][0];
        assert_eq!(details["roastTechnician"], json!({"name": "Ana"}));
        assert_eq!(details["machine"], json!({"name": "Probat P12"}));
        assert_eq!(details["endTemperature"], json!({"amount": 421.5, "unit": "FAHRENHEIT"}));
        assert_eq!(details["roastDuration"], json!({"amount": 11.5, "unit": "MINUTE"}));
        assert_eq!(details["colorChangeTime"], json!({"amount": 270000, "unit": "MILLISECOND"}));
        assert_eq!(details["roastValue2"], json!({"amount": 70, "unit": "TONINO"}));
        assert_eq!(details["roastedLot"], json!({"id": id, "name": "Guji light"}));
        assert_eq!(body["meta"]["pagination"]["endCursor"], Value::Null);

        let started = std::time::Instant::now();
        let (status, body) = app.call(&token, "inventory.roast.getRoastCurvesById",
            json!({"params": {"filter": {"roastedLotId": id}}})).await;
        let elapsed = started.elapsed();
        assert_eq!(status, 200, "{body}");
        let curves = body["result"]["roastCurves"].as_array().unwrap();
        assert_eq!(curves.len(), 2);
        assert_eq!(curves[0]["dataPoints"].as_array().unwrap().len(), 10_000);
        assert_eq!(curves[0]["dataPoints"][9_999], json!({"time": 999_900, "value": 150.25}));
        assert_eq!(curves[1]["dataPoints"][0]["value"].to_string(), "12.000001");
        assert!(elapsed.as_secs_f64() < 5.0, "10,000-point curves took {elapsed:?}");

        let (status, body) = app.call(&token, "inventory.roast.getRoastCurvesById",
            json!({"params": {"filter": {"roastedLotId": Uuid::now_v7()}}})).await;
        assert_error(status, &body, 422, "resource_not_found");
        let (status, body) = app.call(&token, "inventory.roast.getRoastCurvesById", json!({})).await;
        assert_error(status, &body, 400, "missing_parameter");
    }

    async fn roast_errors_follow_the_table_and_change_nothing(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let call = |body: Value| {
            let token = token.clone();
            let app = &app;
            async move { app.call(&token, "inventory.roast.recordRoast", body).await }
        };
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"].as_object_mut().unwrap().remove("name");
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "missing_parameter");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["weight"]["unit"] = json!("G");
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "unsupported_unit");
        let (st, b) = call(roast_body(&s, "x", 1.0, &[])).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let (st, b) = call(roast_body(&s, "x", 1.0, &[(0, 1.0), (0, 1.0)])).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["locationId"] = json!("not-a-uuid");
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["details"] = json!({"roastTechnician": 7});
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["details"] = json!({"startTemperature": {"amount": 1, "unit": "KELVIN"}});
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["curves"] = json!([{"name": "BT", "unit": "C", "dataPoints": [{"time": -1, "value": 1}]}]);
        let (st, b) = call(body).await;
        assert_error(st, &b, 400, "invalid_parameter");
        // An unknown green lot ranks before a negative weight.
        let mut body = roast_body(&s, "x", -1.0, &[(0, -2.0)]);
        body["data"]["greenLots"][0]["id"] = json!(Uuid::now_v7());
        let (st, b) = call(body).await;
        assert_error(st, &b, 422, "resource_not_found");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["profileId"] = json!(Uuid::now_v7());
        let (st, b) = call(body).await;
        assert_error(st, &b, 422, "resource_not_found");
        let mut body = roast_body(&s, "x", 1.0, &[(0, 2.0)]);
        body["data"]["projects"] = json!([{"name": "Nope"}]);
        let (st, b) = call(body).await;
        assert_error(st, &b, 422, "resource_not_found");
        let (st, b) = call(roast_body(&s, "x", 61.0, &[(0, 50.0), (1, 10.0)])).await;
        assert_error(st, &b, 422, "invalid_weight");
        let (st, b) = call(roast_body(&s, "x", 1.0, &[(0, 60.0), (1, 10.5)])).await;
        assert_error(st, &b, 422, "invalid_weight");
        let (st, b) = call(roast_body(&s, "x", 1.0, &[(0, -1.0)])).await;
        assert_error(st, &b, 422, "invalid_weight");
        let (st, b) = call(roast_body(&s, "x", 0.0, &[(0, 1.0)])).await;
        assert_error(st, &b, 422, "invalid_weight");
        assert_eq!((green_kg(&app, s.green[0]), green_kg(&app, s.green[1])), ("60".into(), "10".into()));
        let listed = app.list_all(&token, "inventory.roast.listRoastedLots", "roastedLots", json!({}), 50).await;
        assert!(listed.is_empty(), "no failed roast left a roasted lot");
        // A consumed green lot is a state rule, before a negative weight.
        record(&app, &token, roast_body(&s, "All Huila", 8.0, &[(1, 10.0)])).await;
        let (st, b) = call(roast_body(&s, "x", 1.0, &[(0, -1.0), (1, 1.0)])).await;
        assert_error(st, &b, 422, "invalid_request");
        assert_eq!(green_kg(&app, s.green[0]), "60");
        // The blend scope alone does not record roasts.
        let blend_only = app.token("inventory.blend").await;
        let (st, b) = app.call(&blend_only, "inventory.roast.recordRoast", roast_body(&s, "x", 1.0, &[(0, 2.0)])).await;
        assert_error(st, &b, 403, "access_denied");
    }

    async fn roasted_lots_list_newest_first_from_a_date_and_read_by_ids_in_the_asked_order(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let mut ids = Vec::new();
        for (i, date) in ["2026-03-01T08:00:00Z", "2026-03-03T08:00:00Z", "2026-03-02T08:00:00Z"].iter().enumerate() {
            let mut body = roast_body(&s, &format!("R{i}"), 1.0, &[(0, 1.0)]);
            body["data"]["roastedDate"] = json!(date);
            ids.push(record(&app, &token, body).await["roastedLot"]["id"].clone());
        }
        let all = app.list_all(&token, "inventory.roast.listRoastedLots", "roastedLots", json!({}), 2).await;
        let names: Vec<_> = all.iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["R1", "R2", "R0"]);
        let from = app.list_all(&token, "inventory.roast.listRoastedLots", "roastedLots",
            json!({"roastedDate": {"from": "2026-03-02T08:00:00Z"}}), 1).await;
        let names: Vec<_> = from.iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["R1", "R2"]);
        let (st, b) = app.call(&token, "inventory.roast.listRoastedLots", json!({"params": {"filter": {"roastedDate": {"from": "yesterday"}}}})).await;
        assert_error(st, &b, 400, "invalid_parameter");

        let asked = json!([ids[2], Uuid::now_v7(), ids[0], ids[1]]);
        let found = app.list_all(&token, "inventory.roast.getRoastedLotsByIds", "roastedLots",
            json!({"roastedLotIds": asked}), 2).await;
        let names: Vec<_> = found.iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["R2", "R0", "R1"]);
        let details = app.list_all(&token, "inventory.roast.getRoastDetailsByIds", "roastDetails",
            json!({"roastedLotIds": asked}), 100).await;
        let ids_back: Vec<_> = details.iter().map(|d| d["roastedLot"]["id"].clone()).collect();
        assert_eq!(ids_back, [ids[2].clone(), ids[0].clone(), ids[1].clone()]);
        assert_eq!(details[0]["roastTechnician"], Value::Null);
        let (st, b) = app.call(&token, "inventory.roast.getRoastedLotsByIds",
            json!({"params": {"filter": {"roastedLotIds": [ids[0], ids[0]]}}})).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let many: Vec<Uuid> = (0..101).map(|_| Uuid::now_v7()).collect();
        let (st, b) = app.call(&token, "inventory.roast.getRoastedLotsByIds",
            json!({"params": {"filter": {"roastedLotIds": many}}})).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let (st, b) = app.call(&token, "inventory.roast.getRoastedLotsByIds", json!({"params": {"filter": {}}})).await;
        assert_error(st, &b, 400, "missing_parameter");
        let (st, b) = app.call(&token, "inventory.roast.getRoastedLotsByIds", json!({"params": {"filter": {"roastedLotIds": []}}})).await;
        assert_error(st, &b, 400, "invalid_parameter");
    }

    async fn profiles_are_imported_read_by_ids_and_referenced_by_roasts(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let reference = record(&app, &token, roast_body(&s, "Reference", 1.0, &[(0, 1.0)])).await;
        let (st, b) = app.call(&token, "inventory.roast.importProfile", json!({"data": {
            "name": "House espresso", "externalId": "PRF-1", "profileGroup": {"name": "Espresso"},
            "components": [
                {"percentage": 60.5, "greenLotIds": [s.green[0]]},
                {"percentage": 39.5, "greenLotIds": [s.green[1]]}
            ],
            "referenceRoastId": reference["roastedLot"]["id"],
            "projects": [{"name": "Espresso Program"}]
        }})).await;
        assert_eq!(st, 200, "{b}");
        let profile = &b["result"]["profile"];
        assert_eq!(profile["profileType"], "PRE_ROAST_BLEND");
        assert_eq!(profile["profileGroup"], json!({"name": "Espresso"}));
        assert_eq!(profile["components"][0], json!({"percentage": 60.5, "greenLots": [{"id": s.green[0], "name": "Guji"}]}));
        assert_eq!(profile["referenceRoast"], json!({"id": reference["roastedLot"]["id"], "name": "Reference"}));
        assert_eq!(profile["projects"][0]["name"], "Espresso Program");
        assert!(profile["projects"][0]["id"].is_string());
        let profile_id = profile["id"].clone();
        let (st, b) = app.call(&token, "inventory.roast.importProfile", json!({"data": {
            "name": "Single", "components": [{"percentage": 100, "greenLotIds": [s.green[0]]}]
        }})).await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(b["result"]["profile"]["profileType"], "SINGLE_ORIGIN");
        assert_eq!(b["result"]["profile"]["externalId"], Value::Null);
        let single_id = b["result"]["profile"]["id"].clone();

        let found = app.list_all(&token, "inventory.roast.getProfilesByIds", "profiles",
            json!({"profileIds": [single_id, Uuid::now_v7(), profile_id]}), 1).await;
        let names: Vec<_> = found.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Single", "House espresso"]);

        let import = |components: Value, external_id: &str| json!({"data": {
            "name": "P", "externalId": external_id, "components": components}});
        let (st, b) = app.call(&token, "inventory.roast.importProfile",
            import(json!([{"percentage": 50, "greenLotIds": [s.green[0]]}, {"percentage": 40, "greenLotIds": [s.green[1]]}]), "PRF-2")).await;
        assert_error(st, &b, 422, "invalid_request");
        let (st, b) = app.call(&token, "inventory.roast.importProfile",
            import(json!([{"percentage": 100, "greenLotIds": [s.green[0]]}]), "PRF-1")).await;
        assert_error(st, &b, 422, "resource_conflict");
        let (st, b) = app.call(&token, "inventory.roast.importProfile",
            import(json!([{"percentage": 100, "greenLotIds": [Uuid::now_v7()]}]), "PRF-3")).await;
        assert_error(st, &b, 422, "resource_not_found");
        let (st, b) = app.call(&token, "inventory.roast.importProfile", import(json!([]), "PRF-4")).await;
        assert_error(st, &b, 400, "invalid_parameter");
        let (st, b) = app.call(&token, "inventory.roast.importProfile", json!({"data": {"name": "P"}})).await;
        assert_error(st, &b, 400, "missing_parameter");

        let mut body = roast_body(&s, "With profile", 1.0, &[(0, 1.0)]);
        body["data"]["profileId"] = profile_id.clone();
        let lot = record(&app, &token, body).await;
        assert_eq!(lot["roastedLot"]["profile"], json!({"id": profile_id, "name": "House espresso", "externalId": "PRF-1"}));
    }

    async fn roasted_lot_weights_are_set_like_green_lot_weights(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let lot = record(&app, &token, roast_body(&s, "R", 50.0, &[(0, 60.0)])).await;
        let id = lot["roastedLot"]["id"].clone();
        let set = |amount: f64| json!({"data": {"roastedLotId": id, "weight": {"amount": amount, "unit": "KG"}}});
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight", set(-1.0)).await;
        assert_error(st, &b, 422, "invalid_weight");
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight", set(20.0)).await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(b["result"]["roastedLot"]["weight"]["amount"], 20);
        assert_eq!(b["result"]["roastedLot"]["weightLoss"]["amount"], 10, "the loss is what roasting lost");
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight", set(0.0)).await;
        assert_eq!(st, 200, "{b}");
        assert!(b["result"]["roastedLot"]["consumedDate"].is_string());
        let (st, _) = app.call(&token, "inventory.roast.setRoastedLotWeight", set(0.0)).await;
        assert_eq!(st, 200);
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight", set(1.0)).await;
        assert_error(st, &b, 422, "invalid_request");
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight",
            json!({"data": {"roastedLotId": Uuid::now_v7(), "weight": {"amount": -1, "unit": "KG"}}})).await;
        assert_error(st, &b, 422, "resource_not_found");
        let (st, b) = app.call(&token, "inventory.roast.setRoastedLotWeight", json!({"data": {"roastedLotId": id}})).await;
        assert_error(st, &b, 400, "missing_parameter");
        // Consumed lots stay listed with weight 0.
        let all = app.list_all(&token, "inventory.roast.listRoastedLots", "roastedLots", json!({}), 50).await;
        assert_eq!(all[0]["weight"]["amount"], 0);
    }

    async fn blends_take_roasted_weight_and_keep_their_lineage(app) {
        let s = seed(&app);
        let token = app.token(SCOPES).await;
        let a = record(&app, &token, roast_body(&s, "A", 50.0, &[(0, 60.0)])).await["roastedLot"]["id"].clone();
        let b = record(&app, &token, roast_body(&s, "B", 8.0, &[(1, 10.0)])).await["roastedLot"]["id"].clone();
        let blend = |used: Value, date: &str| json!({"data": {
            "name": "House blend", "locationId": s.location, "blendedDate": date,
            "roastedLots": used, "projects": [{"name": "Espresso Program"}]}});
        let used = |id: &Value, kg: f64| json!({"id": id, "usedWeight": {"amount": kg, "unit": "KG"}});
        let (st, body) = app.call(&token, "inventory.blend.createBlend",
            blend(json!([used(&a, 20.0), used(&b, 8.0)]), "2026-03-05T10:00:00Z")).await;
        assert_eq!(st, 200, "{body}");
        let lot = &body["result"]["blendedLot"];
        assert_eq!(lot["lotNumber"], "PB-1");
        assert_eq!(lot["weight"], json!({"amount": 28, "unit": "KG"}));
        assert_eq!(lot["roastedLots"][1], json!({"id": b, "name": "B", "externalId": null, "usedWeight": {"amount": 8, "unit": "KG"}}));
        assert_eq!(lot["location"], json!({"id": s.location, "externalId": "RST-01"}));
        assert_eq!(lot["blendedDate"], "2026-03-05T10:00:00Z");
        assert_eq!(lot["projects"][0]["name"], "Espresso Program");
        assert!(lot["projects"][0]["id"].is_string());
        assert_eq!(lot["consumedDate"], Value::Null);
        let roasted = app.list_all(&token, "inventory.roast.getRoastedLotsByIds", "roastedLots", json!({"roastedLotIds": [a, b]}), 10).await;
        assert_eq!(roasted[0]["weight"]["amount"], 30);
        assert!(roasted[1]["consumedDate"].is_string());
        // Lineage: the blend names roasted lot B, whose source is green lot Huila.
        assert_eq!(roasted[1]["greenLots"][0]["id"], json!(s.green[1]));

        // Failures change nothing.
        let (st, body) = app.call(&token, "inventory.blend.createBlend", blend(json!([used(&a, 31.0)]), "2026-03-06T10:00:00Z")).await;
        assert_error(st, &body, 422, "invalid_weight");
        let (st, body) = app.call(&token, "inventory.blend.createBlend",
            blend(json!([used(&a, -1.0), used(&json!(Uuid::now_v7()), 1.0)]), "2026-03-06T10:00:00Z")).await;
        assert_error(st, &body, 422, "resource_not_found");
        let (st, body) = app.call(&token, "inventory.blend.createBlend", blend(json!([used(&a, 1.0), used(&b, 1.0)]), "2026-03-06T10:00:00Z")).await;
        assert_error(st, &body, 422, "invalid_request");
        let (st, body) = app.call(&token, "inventory.blend.createBlend", blend(json!([]), "2026-03-06T10:00:00Z")).await;
        assert_error(st, &body, 400, "invalid_parameter");
        let (st, body) = app.call(&token, "inventory.blend.createBlend", json!({"data": {"name": "x", "locationId": s.location, "roastedLots": [used(&a, 1.0)]}})).await;
        assert_error(st, &body, 400, "missing_parameter");
        let a_id = Uuid::parse_str(a.as_str().unwrap()).unwrap();
        let a_weight = app.roastery.store().read(|tx| Ok(tx.roasted_lot(a_id)?.unwrap().stock.weight().amount())).unwrap();
        assert_eq!(a_weight.to_string(), "30");

        let (st, body) = app.call(&token, "inventory.blend.createBlend", blend(json!([used(&a, 5.0)]), "2026-03-07T10:00:00Z")).await;
        assert_eq!(st, 200, "{body}");
        assert_eq!(body["result"]["blendedLot"]["lotNumber"], "PB-2");
        let all = app.list_all(&token, "inventory.blend.listBlendedLots", "blendedLots", json!({}), 1).await;
        let numbers: Vec<_> = all.iter().map(|l| l["lotNumber"].as_str().unwrap()).collect();
        assert_eq!(numbers, ["PB-2", "PB-1"]);
        let from = app.list_all(&token, "inventory.blend.listBlendedLots", "blendedLots",
            json!({"blendedDate": {"from": "2026-03-06T00:00:00Z"}}), 10).await;
        assert_eq!(from.len(), 1);
        let roast_only = app.token("inventory.roast").await;
        let (st, body) = app.call(&roast_only, "inventory.blend.listBlendedLots", json!({})).await;
        assert_error(st, &body, 403, "access_denied");
    }
}
