//! Bodies are decoded by shape (api-decisions §2): for every operation the served OpenAPI
//! document lists, a JSON array where the contract has an object — `data`, `params`,
//! `params.filter`, `params.pagination` or any object nested in them — is a wrong type: 400
//! `invalid_parameter`, a message that names no internal type, and nothing applied.

use serde_json::{Map, Value};

use crate::both_databases;
use crate::helpers::*;

/// One step from a value to a part of it.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Item,
}

/// Follows `$ref`s and the `oneOf`/`anyOf`/`allOf` utoipa writes for optional references to
/// the object or array schema they stand for (the first that is one).
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.rsplit('/').next()?;
        return resolve(doc, &doc["components"]["schemas"][name]);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(options) = schema[key].as_array() {
            return options
                .iter()
                .find_map(|o| resolve(doc, o).filter(|s| is_object(s) || is_array(s)));
        }
    }
    Some(schema)
}

fn has_type(schema: &Value, name: &str) -> bool {
    match &schema["type"] {
        Value::String(t) => t == name,
        Value::Array(ts) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

fn is_object(schema: &Value) -> bool {
    has_type(schema, "object") || schema.get("properties").is_some()
}

fn is_array(schema: &Value) -> bool {
    has_type(schema, "array")
}

/// Every path below `schema` (at most `depth` steps) where the contract has an object.
fn object_paths(doc: &Value, schema: &Value, at: &[Step], depth: usize, out: &mut Vec<Vec<Step>>) {
    let Some(schema) = resolve(doc, schema) else {
        return;
    };
    if depth == 0 {
        return;
    }
    if is_object(schema) {
        if !at.is_empty() {
            out.push(at.to_vec());
        }
        if let Some(props) = schema["properties"].as_object() {
            for (key, sub) in props {
                let mut next = at.to_vec();
                next.push(Step::Key(key.clone()));
                object_paths(doc, sub, &next, depth - 1, out);
            }
        }
    } else if is_array(schema) && !at.is_empty() {
        let mut next = at.to_vec();
        next.push(Step::Item);
        object_paths(doc, &schema["items"], &next, depth - 1, out);
    }
}

/// A body with `leaf` at `path` and nothing else.
fn body_at(path: &[Step], leaf: Value) -> Value {
    path.iter().rev().fold(leaf, |inner, step| match step {
        Step::Key(k) => {
            let mut m = Map::new();
            m.insert(k.clone(), inner);
            Value::Object(m)
        }
        Step::Item => Value::Array(vec![inner]),
    })
}

fn describe(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!(".{k}"),
            Step::Item => "[0]".to_owned(),
        })
        .collect()
}

both_databases! {
    async fn an_array_never_fills_an_object_on_any_operation(app) {
        let doc = app.http.get(format!("{}/rpc/v1/openapi.json", app.base))
            .send().await.unwrap().text().await.unwrap();
        let doc: Value = serde_json::from_str(&doc).unwrap();
        // Every scope an operation of the document needs.
        let mut scopes: Vec<String> = doc["paths"].as_object().unwrap().values()
            .flat_map(|p| p["post"]["security"][0]["oauth2"].as_array().cloned().unwrap_or_default())
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect();
        scopes.sort();
        scopes.dedup();
        let token = app.token(&scopes.join(" ")).await;
        let internal: Vec<String> = doc["components"]["schemas"].as_object().unwrap()
            .keys().cloned().collect();
        // Something to lose: a lot, a location and a webhook-free feed position.
        let location = app.call(&token, "core.location.importLocation",
            json!({"data": {"name": "Array warehouse", "externalId": "ARR-0"}})).await.1;
        let location_id = location["result"]["location"]["id"].as_str().unwrap().to_owned();
        let lot = app.call(&token, "inventory.green.importGreenLot", json!({"data": {
            "name": "Kenya AA", "externalId": "G-ARR", "locationId": location_id,
            "weight": {"amount": 60, "unit": "KG"}}})).await.1;
        let lot_id = lot["result"]["greenLot"]["id"].as_str().unwrap().to_owned();
        let feed = app.call(&token, "core.event.listEvents",
            json!({"params": {"pagination": {"limit": 100}}})).await.1;
        let cursor = feed["meta"]["pagination"]["endCursor"].clone();

        let mut tried = 0;
        let mut wrong = Vec::new();
        let paths = doc["paths"].as_object().unwrap();
        assert!(paths.len() >= 40, "{}", paths.len());
        for (route, item) in paths {
            let Some(operation) = route.strip_prefix("/rpc/v1/") else { continue };
            let Some(schema) = item["post"]["requestBody"]["content"]["application/json"].get("schema") else {
                continue;
            };
            let mut targets = Vec::new();
            object_paths(&doc, schema, &[], 6, &mut targets);
            assert!(!targets.is_empty(), "{operation} has no object to try");
            for path in targets {
                // The examples of the finding: an id and a weight by position.
                for leaf in [json!([lot_id, [0, "KG"]]), json!([null, null]), json!([1])] {
                    let body = body_at(&path, leaf);
                    let (status, answer) = app.call(&token, operation, body.clone()).await;
                    tried += 1;
                    let message = answer["error"]["message"].as_str().unwrap_or_default().to_owned();
                    let names_internal = internal.iter()
                        .find(|n| message.contains(n.as_str()))
                        .cloned()
                        .or_else(|| ["struct ", "u32", "u64", "i64", "usize"].iter()
                            .find(|w| message.contains(*w)).map(|w| (*w).to_owned()));
                    if status != 400 || answer["error"]["code"] != "invalid_parameter" || names_internal.is_some() {
                        wrong.push(format!("{operation} {}: {status} {answer} (internal name: {names_internal:?}) for {body}", describe(&path)));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{} of {tried} calls were not a wrong type:\n{}", wrong.len(), wrong.join("\n"));

        // Nothing applied: the lot keeps its weight, and no write emitted an event.
        let (status, details) = app.call(&token, "inventory.green.listGreenLots", json!({})).await;
        assert_eq!(status, 200, "{details}");
        let lots = details["result"]["greenLots"].as_array().unwrap();
        assert_eq!(lots.len(), 1, "{details}");
        assert_eq!(lots[0]["weight"]["amount"], 60, "{details}");
        let after = app.call(&token, "core.event.listEvents",
            json!({"params": {"pagination": {"limit": 100, "after": cursor}}})).await.1;
        assert_eq!(after["result"]["events"], json!([]), "{after}");
    }
}
