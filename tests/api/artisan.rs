//! inventory.roast.importRoastLog end to end (api-decisions §9): Artisan logs as Artisan writes
//! them (`.alog`, the `repr` of a Python dict, and the JSON export) recorded as complete roasts,
//! once per `roastUUID`, also under concurrent retries.

use std::str::FromStr;

use roastery_app::green_lot::{ImportGreenLot, WeightInput};
use roastery_app::location::ImportLocation;
use roastery_domain::green_lot_details::GreenLotDetails;
use roastery_domain::weight::WeightUnit;
use roastery_ports::Store;
use roastery_ports::repo::GreenLotRepo;
use rust_decimal::Decimal;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::both_databases;
use crate::helpers::*;

const OP: &str = "inventory.roast.importRoastLog";

struct Seeded {
    location: Uuid,
    /// Green lots: 60 KG "Kenya AA" and 10 KG "Huila".
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
    let green = [("Kenya AA", "ERP-1", "60"), ("Huila", "ERP-2", "10")].map(|(name, ext, kg)| {
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

/// A roast as Artisan records it: `seconds` samples one second apart, BT rising from the turning
/// point, ET falling gently; CHARGE at sample 2, DRY END 5, FCs 8, DROP 11, COOL 13 when the
/// profile is short, scaled for long ones.
fn profile(samples: usize) -> Map<String, Value> {
    let timex: Vec<Value> = (0..samples).map(|i| json!(i as f64)).collect();
    let temp1: Vec<Value> = (0..samples)
        .map(|i| json!(240.0 - (i % 100) as f64 * 0.25))
        .collect();
    let temp2: Vec<Value> = (0..samples)
        .map(|i| json!(150.0 + (i % 200) as f64 * 0.5))
        .collect();
    let timeindex = if samples < 20 {
        json!([2, 5, 8, 9, 0, 0, 11, 13])
    } else {
        json!([
            30,
            samples * 2 / 5,
            samples * 3 / 4,
            samples * 4 / 5,
            0,
            0,
            samples - 60,
            samples - 5
        ])
    };
    let value = json!({
        "recording_version": "3.1.0", "recording_revision": "a1b2c3", "recording_build": "0",
        "version": "3.1.0", "revision": "a1b2c3", "build": "0",
        "artisan_os": "Darwin", "artisan_os_version": "14.5", "artisan_os_arch": "arm64",
        "mode": "C", "viewerMode": false,
        "timeindex": timeindex,
        "flavors": [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
        "flavorlabels": ["Acidity", "Aftertaste", "Clean Cup", "Head", "Fragrance", "Sweetness", "Aroma", "Balance", "Body"],
        "title": "Kenya AA Kiambu #42",
        "locale": "en",
        "beans": "Kenya AA Kiambu, washed",
        "weight": [1000.0, 852.5, "g"],
        "volume": [0.0, 0.0, "l"],
        "density": [0.0, "g", 1.0, "l"],
        "roastertype": "Giesen W6A", "roastersize": 6.0, "roasterheating": 3,
        "machinesetup": "Giesen W6A",
        "operator": "Ana Ruiz", "organization": "Roastery Ltd.", "drumspeed": "",
        "roastdate": "Sun Nov 23 2025", "roastisodate": "2025-11-23", "roasttime": "13:13:20",
        "roastepoch": 1763900000, "roasttzoffset": -3600, "roastbatchnr": 42, "roastbatchprefix": "W",
        "specialevents": [40, 60], "specialeventstype": [0, 3], "specialeventsvalue": [5.0, 7.0],
        "specialeventsStrings": ["Fan 50", "Burner 70"],
        "etypes": ["Air", "Drum", "Damper", "Burner", "--"]
    });
    let more = json!({
        "roastingnotes": "Sweet, 'juicy' finish\nFirst crack loud",
        "cuppingnotes": "",
        "timex": timex, "temp1": temp1, "temp2": temp2,
        "phases": [300, 300, 390, 390],
        "extradevices": [25], "extraname1": ["{3}"], "extraname2": ["{0}"],
        "whole_color": 65, "ground_color": 72, "color_system": "Agtron",
        "samplingInterval": 1.0, "flag_start_background": false,
        "roastUUID": Uuid::new_v4().simple().to_string(),
        // Artisan's own summary can be wrong; the import never reads it.
        "computed": {"CHARGE_ET": 999.0, "CHARGE_BT": 999.0, "DROP_BT": 1.0, "DROP_time": 1.0,
            "totaltime": 1.0, "weight_loss": 99.0, "FCs_time": 3.0}
    });
    let (Value::Object(mut map), Value::Object(more)) = (value, more) else {
        unreachable!()
    };
    map.extend(more);
    map
}

/// The `.alog` text Artisan writes: the `repr` of the profile dict. Volume and density are
/// written as tuples, as older versions of Artisan do.
fn alog(profile: &Map<String, Value>) -> String {
    fn repr(value: &Value, tuple: bool, out: &mut String) {
        match value {
            Value::Null => out.push_str("None"),
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::String(s) => {
                out.push('\'');
                for c in s.chars() {
                    match c {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        c => out.push(c),
                    }
                }
                out.push('\'');
            }
            Value::Array(items) => {
                out.push(if tuple { '(' } else { '[' });
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    repr(item, false, out);
                }
                out.push(if tuple { ')' } else { ']' });
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    repr(&Value::String(k.clone()), false, out);
                    out.push_str(": ");
                    repr(v, k == "volume" || k == "density", out);
                }
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    repr(&Value::Object(profile.clone()), false, &mut out);
    out
}

fn body(s: &Seeded, content: String, green_lots: Value) -> Value {
    json!({"data": {
        "format": "ARTISAN",
        "content": content,
        "locationId": s.location,
        "greenLots": green_lots,
    }})
}

fn one_lot(s: &Seeded) -> Value {
    json!([{"id": s.green[0]}])
}

async fn details_of(app: &TestApp, token: &str, id: &str) -> Value {
    let (status, body) = app
        .call(
            token,
            "inventory.roast.getRoastDetailsByIds",
            json!({"params": {"filter": {"roastedLotIds": [id]}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["roastDetails"][0].clone()
}

async fn curves_of(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let (status, body) = app
        .call(
            token,
            "inventory.roast.getRoastCurvesById",
            json!({"params": {"filter": {"roastedLotId": id}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["roastCurves"].as_array().unwrap().clone()
}

/// The events after `cursor` (one page of up to 100), moving `cursor` to the page's end.
async fn events_after(app: &TestApp, token: &str, cursor: &mut Value) -> Vec<Value> {
    let (status, body) = app
        .call(
            token,
            "core.event.listEvents",
            json!({"params": {"pagination": {"limit": 100, "after": cursor}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    *cursor = body["meta"]["pagination"]["endCursor"].clone();
    body["result"]["events"].as_array().unwrap().clone()
}

async fn roasted_count(app: &TestApp, token: &str) -> usize {
    let (status, body) = app
        .call(token, "inventory.roast.listRoastedLots", json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["roastedLots"].as_array().unwrap().len()
}

both_databases! {
    async fn an_alog_is_recorded_as_a_complete_roast(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast").await;
        let mut log = profile(16);
        // Missing samples (-1): BT at sample 4, ET at sample 3.
        log["temp2"][4] = json!(-1.0);
        log["temp1"][3] = json!(-1.0);
        let uuid = log["roastUUID"].as_str().unwrap().to_owned();
        let (status, answer) = app.call(&token, OP, body(&s, alog(&log), one_lot(&s))).await;
        assert_eq!(status, 200, "{answer}");
        let lot = &answer["result"]["roastedLot"];
        assert_eq!(lot["name"], "Kenya AA Kiambu #42", "the name defaults to the log's title");
        assert_eq!(lot["externalId"], json!(uuid));
        assert_eq!(lot["weight"], json!({"amount": 0.8525, "unit": "KG"}));
        assert_eq!(lot["roastedDate"], "2025-11-23T12:13:20Z");
        assert_eq!(lot["weightLoss"], json!({"amount": 0.1475, "unit": "KG", "percentage": 14.75}));
        assert_eq!(lot["greenLots"][0]["usedWeight"], json!({"amount": 1, "unit": "KG"}),
            "the log's green weight (1000 g) is taken from the single green lot");
        assert_eq!(answer["result"]["greenLots"][0]["weight"]["amount"], 59);
        assert_eq!(green_kg(&app, s.green[0]), "59");
        let id = lot["id"].as_str().unwrap().to_owned();

        let details = details_of(&app, &token, &id).await;
        // CHARGE at sample 2 (BT 151), DROP at 11 (BT 155.5): never the `computed` block.
        assert_eq!(details["startTemperature"], json!({"amount": 151, "unit": "CELSIUS"}));
        assert_eq!(details["endTemperature"], json!({"amount": 155.5, "unit": "CELSIUS"}));
        assert_eq!(details["roastDuration"], json!({"amount": 9, "unit": "SECOND"}));
        assert_eq!(details["firstCrackTime"], json!({"amount": 6, "unit": "SECOND"}));
        assert_eq!(details["colorChangeTime"], json!({"amount": 3, "unit": "SECOND"}));
        assert_eq!(details["roastTechnician"], json!({"name": "Ana Ruiz"}));
        assert_eq!(details["machine"], json!({"name": "Giesen W6A"}));
        assert_eq!(details["note"], "Sweet, 'juicy' finish\nFirst crack loud");
        assert_eq!(details["roastValue"], json!({"amount": 65, "unit": "AGTRON_GOURMET"}));
        assert_eq!(details["roastValue2"], json!({"amount": 72, "unit": "AGTRON_GOURMET"}));

        let curves = curves_of(&app, &token, &id).await;
        assert_eq!(curves.len(), 2);
        assert_eq!(curves[0]["name"], "beanTemperature");
        assert_eq!(curves[0]["unit"], "CELSIUS");
        assert_eq!(curves[1]["name"], "environmentTemperature");
        // Samples 2..=11, BT's -1 at sample 4 left out; times in ms since CHARGE.
        let bt = curves[0]["dataPoints"].as_array().unwrap();
        assert_eq!(bt.len(), 9);
        assert_eq!(bt[0], json!({"time": 0, "value": 151}));
        assert_eq!(bt[1], json!({"time": 1000, "value": 151.5}));
        assert_eq!(bt[2], json!({"time": 3000, "value": 152.5}));
        assert_eq!(bt[8], json!({"time": 9000, "value": 155.5}));
        let et = curves[1]["dataPoints"].as_array().unwrap();
        assert_eq!(et.len(), 9);
        assert_eq!(et[1], json!({"time": 2000, "value": 239}));

        // Roasts recorded otherwise carry no external id.
        let (status, recorded) = app.call(&token, "inventory.roast.recordRoast", json!({"data": {
            "name": "By hand", "locationId": s.location, "roastedDate": "2026-01-01T00:00:00Z",
            "weight": {"amount": 0.8, "unit": "KG"},
            "greenLots": [{"id": s.green[1], "usedWeight": {"amount": 1, "unit": "KG"}}]}})).await;
        assert_eq!(status, 200, "{recorded}");
        assert_eq!(recorded["result"]["roastedLot"]["externalId"], Value::Null);
        let (status, read) = app.call(&token, "inventory.roast.getRoastedLotsByIds",
            json!({"params": {"filter": {"roastedLotIds": [id]}}})).await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read["result"]["roastedLots"][0]["externalId"], json!(uuid));
    }

    async fn a_json_export_in_fahrenheit_and_ounces_with_unmarked_events_over_two_lots(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast").await;
        let mut log = profile(16);
        log["mode"] = json!("F");
        log["weight"] = json!([400.0, 340.8, "oz"]);
        // An old file: seven events, CHARGE and DRY END unmarked, DROP unmarked too.
        log["timeindex"] = json!([-1, 0, 8, 0, 0, 0, 0]);
        log["color_system"] = json!("tonino");
        log["ground_color"] = json!(0);
        log["timex"][15] = json!(15.0005);
        log["title"] = json!("Ignored");
        let mut request = body(&s, Value::Object(log).to_string(), json!([
            {"id": s.green[0], "usedWeight": {"amount": 20, "unit": "LBS"}},
            {"id": s.green[1], "usedWeight": {"amount": 5, "unit": "LBS"}},
        ]));
        request["data"]["name"] = json!("Kenya + Huila");
        let (status, answer) = app.call(&token, OP, request).await;
        assert_eq!(status, 200, "{answer}");
        let lot = &answer["result"]["roastedLot"];
        assert_eq!(lot["name"], "Kenya + Huila");
        // 340.8 oz = 21.3 lb exactly.
        assert_eq!(lot["weight"], json!({"amount": 21.3, "unit": "LBS"}));
        assert_eq!(lot["greenLots"][1]["usedWeight"], json!({"amount": 2.267962, "unit": "KG"}));
        assert_eq!(green_kg(&app, s.green[0]), "50.928153");
        let id = lot["id"].as_str().unwrap().to_owned();

        let details = details_of(&app, &token, &id).await;
        // CHARGE unmarked: the first sample.
        assert_eq!(details["startTemperature"], json!({"amount": 150, "unit": "FAHRENHEIT"}));
        assert_eq!(details["endTemperature"], Value::Null);
        assert_eq!(details["roastDuration"], Value::Null);
        assert_eq!(details["colorChangeTime"], Value::Null);
        assert_eq!(details["firstCrackTime"], json!({"amount": 8, "unit": "SECOND"}));
        assert_eq!(details["roastValue"], json!({"amount": 65, "unit": "TONINO"}));
        assert_eq!(details["roastValue2"], Value::Null, "a zero colour is not a reading");

        let curves = curves_of(&app, &token, &id).await;
        assert_eq!(curves[0]["unit"], "FAHRENHEIT");
        let bt = curves[0]["dataPoints"].as_array().unwrap();
        assert_eq!(bt.len(), 16, "without DROP the curve runs to the last sample");
        // 15.0005 s = 15000.5 ms, rounded half-even.
        assert_eq!(bt[15]["time"], 15000);
    }

    async fn a_retried_import_answers_the_same_roast_and_changes_nothing(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast core.event").await;
        let log = profile(16);
        let request = body(&s, alog(&log), one_lot(&s));
        let mut cursor = Value::Null;
        assert!(!events_after(&app, &token, &mut cursor).await.is_empty(), "the seed's events");
        let (status, first) = app.call(&token, OP, request.clone()).await;
        assert_eq!(status, 200, "{first}");
        // The import created a roasted lot and changed the green lot it took from.
        let mut emitted: Vec<(String, String, String)> = events_after(&app, &token, &mut cursor)
            .await
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap().to_owned(),
                    e["subject"]["id"].as_str().unwrap().to_owned(),
                    e["operation"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        emitted.sort();
        let roasted = first["result"]["roastedLot"]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            emitted,
            vec![
                ("greenLot.updated".to_owned(), s.green[0].to_string(), OP.to_owned()),
                ("roastedLot.created".to_owned(), roasted, OP.to_owned()),
            ]
        );
        for _ in 0..2 {
            let (status, again) = app.call(&token, OP, request.clone()).await;
            assert_eq!(status, 200, "{again}");
            assert_eq!(again["result"]["roastedLot"], first["result"]["roastedLot"]);
            assert_eq!(again["result"]["greenLots"][0]["weight"]["amount"], 59);
        }
        // The same log as JSON export is the same roast.
        let (status, json_again) = app.call(&token, OP,
            body(&s, Value::Object(log.clone()).to_string(), one_lot(&s))).await;
        assert_eq!(status, 200, "{json_again}");
        assert_eq!(json_again["result"]["roastedLot"]["id"], first["result"]["roastedLot"]["id"]);
        assert_eq!(green_kg(&app, s.green[0]), "59");
        assert_eq!(roasted_count(&app, &token).await, 1);
        // Retries change nothing, so they emit nothing.
        assert_eq!(events_after(&app, &token, &mut cursor).await, Vec::<Value>::new());
    }

    async fn concurrent_retries_of_one_log_roast_once(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast").await;
        let request = body(&s, alog(&profile(600)), one_lot(&s));
        let app = std::sync::Arc::new(app);
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (app, token, request) = (app.clone(), token.clone(), request.clone());
                tokio::spawn(async move { app.call(&token, OP, request).await })
            })
            .collect();
        let mut ids = Vec::new();
        for task in tasks {
            let (status, answer) = task.await.unwrap();
            assert_eq!(status, 200, "{answer}");
            ids.push(answer["result"]["roastedLot"]["id"].clone());
        }
        ids.dedup();
        assert_eq!(ids.len(), 1, "every retry answers the one roast: {ids:?}");
        assert_eq!(green_kg(&app, s.green[0]), "59", "the green weight was taken once");
        assert_eq!(roasted_count(&app, &token).await, 1);
    }

    async fn a_twenty_minute_log_at_one_sample_a_second_imports_whole(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast").await;
        let content = alog(&profile(1200));
        let request = body(&s, content, one_lot(&s));
        let size = request.to_string().len();
        assert!(size < 256 * 1024, "a 20-minute log is {size} bytes, well within 1 MiB");
        let (status, answer) = app.call(&token, OP, request).await;
        assert_eq!(status, 200, "{answer}");
        let id = answer["result"]["roastedLot"]["id"].as_str().unwrap().to_owned();
        let curves = curves_of(&app, &token, &id).await;
        // CHARGE at 30, DROP at 1140: 1111 samples, the last 1110 s after CHARGE.
        let bt = curves[0]["dataPoints"].as_array().unwrap();
        assert_eq!(bt.len(), 1111);
        assert_eq!(bt[1110]["time"], 1_110_000);
        let details = details_of(&app, &token, &id).await;
        assert_eq!(details["roastDuration"], json!({"amount": 1110, "unit": "SECOND"}));
    }

    async fn malformed_logs_answer_400_saying_what_is_wrong_and_change_nothing(app) {
        let s = seed(&app);
        let token = app.token("inventory.roast").await;
        let without = |key: &str| {
            let mut log = profile(16);
            log.remove(key);
            alog(&log)
        };
        let with = |key: &str, value: Value| {
            let mut log = profile(16);
            log.insert(key.into(), value);
            alog(&log)
        };
        // Two samples 10^27 s apart, no events: milliseconds beyond any decimal.
        let beyond_any_clock = {
            let mut log = profile(16);
            log.insert("timex".into(), json!([0.0, 1e27]));
            log.insert("temp1".into(), json!([200.0, 201.0]));
            log.insert("temp2".into(), json!([150.0, 151.0]));
            log.remove("timeindex");
            alog(&log)
        };
        let cases: Vec<(String, &str)> = vec![
            ("not a log".into(), "not an Artisan log"),
            ("[1, 2, 3]".into(), "expected a dict, found a list"),
            ("{'roastUUID': 'x', 'timex': [0.0, 1.0".into(), "expected `,` or `]` in a list"),
            ("os.system('true')".into(), "`os` is not a literal"),
            (without("roastUUID"), "`roastUUID` is required"),
            (without("roastepoch"), "`roastepoch` is required"),
            (without("timex"), "`timex` is required"),
            (without("temp1"), "`temp1` is required"),
            (without("temp2"), "`temp2` is required"),
            (without("weight"), "`weight` is required"),
            (with("temp2", json!([150.0, 151.0])), "`timex` has 16 samples but `temp2` has 2"),
            (with("timeindex", json!([2, 5, 8, 9, 0, 0, 16, 0])),
                "entry 6 (DROP) is 16, outside `timex` (0..16)"),
            (with("weight", json!([1000.0, 850.0, "stone"])), "use one of g, Kg, lb, oz"),
            (with("mode", json!("K")), "`mode` is `K`; use C or F"),
            (with("timex", json!("0,1,2")), "`timex` must be a list, not a string"),
            (beyond_any_clock, "`timex` sample 1 is out of range"),
        ];
        for (content, expected) in cases {
            let (status, answer) = app.call(&token, OP, body(&s, content.clone(), one_lot(&s))).await;
            assert_error(status, &answer, 400, "invalid_parameter");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(expected), "{content:.80}: {message}");
        }
        // Several green lots need their used weights.
        let (status, answer) = app.call(&token, OP, body(&s, alog(&profile(16)),
            json!([{"id": s.green[0]}, {"id": s.green[1], "usedWeight": {"amount": 1, "unit": "KG"}}]))).await;
        assert_error(status, &answer, 400, "missing_parameter");
        assert!(answer["error"]["message"].as_str().unwrap().contains("greenLots[0].usedWeight"), "{answer}");
        // The request's own fields.
        let mut request = body(&s, alog(&profile(16)), one_lot(&s));
        request["data"]["format"] = json!("CROPSTER");
        let (status, answer) = app.call(&token, OP, request).await;
        assert_error(status, &answer, 400, "invalid_parameter");
        let mut request = body(&s, alog(&profile(16)), one_lot(&s));
        request["data"].as_object_mut().unwrap().remove("content");
        let (status, answer) = app.call(&token, OP, request).await;
        assert_error(status, &answer, 400, "missing_parameter");
        // Business rules as recordRoast.
        let (status, answer) = app.call(&token, OP,
            body(&s, with("weight", json!([1000.0, 0.0, "g"])), one_lot(&s))).await;
        assert_error(status, &answer, 422, "invalid_weight");
        let (status, answer) = app.call(&token, OP,
            body(&s, with("weight", json!([1000.0, 1000.5, "g"])), one_lot(&s))).await;
        assert_error(status, &answer, 422, "invalid_weight");
        let (status, answer) = app.call(&token, OP,
            body(&s, alog(&profile(16)), json!([{"id": Uuid::now_v7()}]))).await;
        assert_error(status, &answer, 422, "resource_not_found");
        let mut request = body(&s, alog(&profile(16)), one_lot(&s));
        request["data"]["locationId"] = json!(Uuid::now_v7());
        let (status, answer) = app.call(&token, OP, request).await;
        assert_error(status, &answer, 422, "resource_not_found");
        // None of it changed anything.
        assert_eq!(green_kg(&app, s.green[0]), "60");
        assert_eq!(green_kg(&app, s.green[1]), "10");
        assert_eq!(roasted_count(&app, &token).await, 0);
    }
}
