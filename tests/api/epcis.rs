//! EPCIS 2.0 export end to end (api-decisions §16): the events of a genealogy are exactly the
//! operations of its ledger, weighing what the ledger says, identical from export to export and
//! from instance to instance.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;
use crate::trace::{World, id, ok, world};

async fn export(app: &TestApp, token: &str, filter: Value) -> (u16, String) {
    let (status, text) = call(app, token, filter).await;
    (status.as_u16(), text)
}

async fn call(app: &TestApp, token: &str, filter: Value) -> (StatusCode, String) {
    app.call_raw(
        token,
        "inventory.trace.exportEpcis",
        &json!({"params": {"filter": filter}}).to_string(),
    )
    .await
}

async fn document(app: &TestApp, token: &str, filter: Value) -> Value {
    let (status, text) = export(app, token, filter).await;
    assert_eq!(status, 200, "{text}");
    parse(&text)["result"]["document"].clone()
}

fn events(document: &Value) -> &Vec<Value> {
    document["epcisBody"]["eventList"]
        .as_array()
        .expect("an event list")
}

/// The part of a URI after `/{kind}/`.
fn tail<'a>(uri: &'a str, kind: &str) -> &'a str {
    uri.rsplit_once(&format!("/{kind}/"))
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("{uri} names no {kind}"))
}

/// Every ledger entry of these lots, by id.
async fn ledger(app: &TestApp, token: &str, lots: &[&String]) -> BTreeMap<String, Value> {
    let mut entries = BTreeMap::new();
    for lot in lots {
        for e in app
            .list_all(
                token,
                "inventory.trace.listLedgerEntries",
                "ledgerEntries",
                json!({"lotId": lot}),
                100,
            )
            .await
        {
            entries.insert(id(&e), e);
        }
    }
    entries
}

/// Lot id → lot number, from an upstream trace of `lot`.
async fn lot_numbers(app: &TestApp, token: &str, lot: &str) -> BTreeMap<String, String> {
    let trace = ok(
        app,
        token,
        "inventory.trace.traceLot",
        json!({"params": {"filter": {"lotId": lot, "direction": "UPSTREAM"}}}),
    )
    .await;
    trace["lots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (id(l), l["lotNumber"].as_str().unwrap().to_owned()))
        .collect()
}

/// `(epcClass lot number, quantity text, uom)` of a quantity list.
fn quantities(list: &Value) -> BTreeSet<(String, String, String)> {
    list.as_array()
        .map(|l| {
            l.iter()
                .map(|q| {
                    (
                        tail(q["epcClass"].as_str().unwrap(), "lot").to_owned(),
                        q["quantity"].to_string(),
                        q["uom"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn with_statement(app: &TestApp, w: &World) {
    let (status, body) = app
        .call(
            &w.token,
            "inventory.green.setDueDiligence",
            json!({"data": {"greenLotId": w.g1, "countryOfProduction": "ET",
                "productionPeriod": {"from": "2025-10-01", "to": "2026-02-28"},
                "plots": {"type": "FeatureCollection", "features": [{"type": "Feature",
                    "geometry": {"type": "Point", "coordinates": [38.2, 6.1]},
                    "properties": {"Area": 2}}]},
                "statements": [{"referenceNumber": "25ETGUJI0001", "kind": "DDS", "role": "OWN"}]}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

/// The document without its `creationDate`, as text.
fn without_creation_date(text: &str) -> String {
    let created = parse(text)["result"]["document"]["creationDate"]
        .as_str()
        .expect("a creation date")
        .to_owned();
    assert_eq!(text.matches(&created).count(), 1, "{text}");
    text.replace(&created, "")
}

both_databases! {
    async fn an_order_exports_exactly_the_events_of_its_ledger(app) {
        let w = world(&app).await;
        with_statement(&app, &w).await;
        let t = w.token.as_str();
        let doc = document(&app, t, json!({"orderId": w.o1})).await;
        assert_eq!(doc["type"], "EPCISDocument");
        assert_eq!(doc["schemaVersion"], "2.0");
        assert_eq!(
            doc["@context"],
            json!(["https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld",
                   {"roastery": "urn:roastery:epcis:"}])
        );
        // Upstream of O1's shipment: B1, R1, R2, G1b, G2, G1 (G3 and O2 are elsewhere).
        let lots = [&w.b1, &w.r1, &w.r2, &w.g1b, &w.g2, &w.g1];
        let all = ledger(&app, t, &lots).await;
        let expected: BTreeSet<String> = all
            .iter()
            .filter(|(_, e)| e["kind"] != "SET_WEIGHT")
            .filter(|(_, e)| !(e["kind"] == "SHIPMENT" && e["reference"]["id"] != json!(w.o1)))
            .map(|(entry, _)| entry.clone())
            .collect();
        let numbers = lot_numbers(&app, t, &w.b1).await;
        let mut exported = BTreeSet::new();
        let mut kinds = BTreeMap::<String, usize>::new();
        let base = {
            let uri = events(&doc)[0]["roastery:ledgerEntries"][0].as_str().unwrap().to_owned();
            uri.rsplit_once("/ledger/").unwrap().0.to_owned()
        };
        for event in events(&doc) {
            let kind = format!("{} {}", event["type"].as_str().unwrap(), event["bizStep"].as_str().unwrap());
            *kinds.entry(kind).or_default() += 1;
            assert!(event["eventID"].as_str().unwrap().starts_with("ni:///sha-256;"), "{event}");
            assert!(event["eventID"].as_str().unwrap().ends_with("?ver=CBV2.0"), "{event}");
            let Some(entries) = event["roastery:ledgerEntries"].as_array() else {
                assert_eq!(event["bizStep"], "urn:roastery:epcis:notifying", "{event}");
                continue;
            };
            // Inputs and outputs weigh what the ledger says: each entry's lot appears with the
            // weight its entry moved, in its unit.
            let listed: BTreeSet<(String, String, String)> = ["quantityList", "inputQuantityList", "outputQuantityList"]
                .iter()
                .flat_map(|l| quantities(&event[*l]))
                .collect();
            for uri in entries {
                let uri = uri.as_str().unwrap();
                assert!(uri.starts_with(&base), "{uri}");
                let entry = &all[tail(uri, "ledger")];
                exported.insert(tail(uri, "ledger").to_owned());
                let amount = entry["delta"]["amount"].as_f64().unwrap().abs();
                let uom = if entry["delta"]["unit"] == "KG" { "KGM" } else { "LBR" };
                let lot = &numbers[&id(&entry["lot"])];
                assert!(
                    listed.iter().any(|(l, q, u)| l == lot && q.parse::<f64>().unwrap() == amount && u == uom),
                    "{entry} in {event}"
                );
            }
        }
        assert_eq!(exported, expected);
        let expected_kinds: BTreeMap<String, usize> = [
            ("ObjectEvent commissioning", 2),
            ("ObjectEvent shipping", 4),
            ("TransformationEvent receiving", 3),
            ("TransformationEvent commissioning", 3),
            ("ObjectEvent urn:roastery:epcis:notifying", 1),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_owned(), n))
        .collect();
        assert_eq!(kinds, expected_kinds, "{doc}");
        // The shipment names the order; the notifying event carries G1's statement.
        let shipped: Vec<&Value> = events(&doc).iter().filter(|e| e["disposition"] == "in_transit").collect();
        assert_eq!(shipped.len(), 1);
        assert_eq!(shipped[0]["bizTransactionList"], json!([{"type": "po", "bizTransaction": format!("{base}/order/{}", w.o1)}]));
        assert_eq!(shipped[0]["eventTime"], "2026-03-04T09:00:00.000Z");
        let notifying = events(&doc).iter().find(|e| e["bizStep"] == "urn:roastery:epcis:notifying").unwrap();
        assert_eq!(notifying["quantityList"], json!([{"epcClass": format!("{base}/lot/{}", numbers[&w.g1])}]));
        assert_eq!(notifying["roastery:eudrStatements"], json!([{"roastery:referenceNumber": "25ETGUJI0001", "roastery:kind": "DDS", "roastery:role": "OWN"}]));
        // By eventTime, then eventID.
        let order: Vec<(String, String)> = events(&doc).iter()
            .map(|e| (e["eventTime"].as_str().unwrap().to_owned(), e["eventID"].as_str().unwrap().to_owned()))
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        // The default base is the installation's, the same for any instance over this database.
        let installation = app.roastery.installation_id().unwrap();
        assert_eq!(base, format!("urn:roastery:{installation}"));
    }

    async fn a_lot_exports_its_genealogy_in_either_direction(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        // Upstream is the default.
        let up = document(&app, t, json!({"lotId": w.r1})).await;
        let explicit = document(&app, t, json!({"lotId": w.r1, "direction": "UPSTREAM"})).await;
        assert_eq!(events(&up), events(&explicit));
        assert!(events(&up).iter().all(|e| e["disposition"].is_null()), "no shipment upstream");
        let down = document(&app, t, json!({"lotId": w.g2, "direction": "DOWNSTREAM"})).await;
        let orders: BTreeSet<String> = events(&down).iter()
            .filter_map(|e| e["bizTransactionList"][0]["bizTransaction"].as_str())
            .map(|uri| tail(uri, "order").to_owned())
            .collect();
        // G2 → R2 → B1 → O1; R1's shipment to O2 is not downstream of G2.
        assert_eq!(orders, [w.o1.clone()].into_iter().collect());
        // The blend lists both its inputs, R1 included, though R1 is not downstream of G2.
        let blend = events(&down).iter()
            .find(|e| e["outputQuantityList"][0]["epcClass"].as_str().is_some_and(|c| c.ends_with("/lot/PB-1")))
            .expect("the blend");
        assert_eq!(blend["inputQuantityList"].as_array().unwrap().len(), 2, "{blend}");
        // An event is the same in every export that holds it: R1's roast, upstream of R1 and
        // downstream of G1.
        let from_g1 = document(&app, t, json!({"lotId": w.g1, "direction": "DOWNSTREAM"})).await;
        let roast = events(&up).iter()
            .find(|e| e["outputQuantityList"][0]["epcClass"].as_str().is_some_and(|c| c.ends_with("/lot/PR-1")))
            .expect("R1's roast");
        assert!(events(&from_g1).contains(roast), "{from_g1}");
    }

    async fn the_same_export_is_identical_but_for_its_creation_date(app) {
        let w = world(&app).await;
        let body = json!({"orderId": w.o1});
        let (s1, first) = export(&app, &w.token, body.clone()).await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let (s2, second) = export(&app, &w.token, body.clone()).await;
        assert_eq!((s1, s2), (200, 200));
        assert_eq!(without_creation_date(&first), without_creation_date(&second));
        // Another instance over the same database exports the same bytes.
        let url = app.database_url.clone();
        let other = TestApp::spawn_with(app.backend, move |c| c.database_url = url)
            .await
            .expect("a second instance");
        let (s3, third) = export(&other, &w.token, body).await;
        assert_eq!(s3, 200, "{third}");
        assert_eq!(without_creation_date(&first), without_creation_date(&third));
    }

    async fn unknown_lots_and_orders_and_ambiguous_filters_are_refused(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let unknown = "01900000-0000-7000-8000-00000000dead";
        for filter in [json!({"lotId": unknown}), json!({"orderId": unknown}),
                       json!({"lotId": unknown, "direction": "DOWNSTREAM"})] {
            let (status, text) = call(&app, t, filter).await;
            assert_error(status, &parse(&text), 422, "resource_not_found");
        }
        for filter in [json!({"lotId": w.g1, "orderId": w.o1}), json!({})] {
            let (status, text) = call(&app, t, filter).await;
            assert_error(status, &parse(&text), 400, "invalid_parameter");
        }
        let (status, text) = call(&app, t, json!({"lotId": w.g1, "direction": "SIDEWAYS"})).await;
        assert_error(status, &parse(&text), 400, "invalid_parameter");
        // No params at all: neither filter.
        let (status, text) = app.call_raw(t, "inventory.trace.exportEpcis", "{}").await;
        assert_error(status, &parse(&text), 400, "invalid_parameter");
    }
}
