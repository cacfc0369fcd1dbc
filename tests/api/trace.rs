//! Traceability end to end: the ledger of every weight change, shipments of orders and the
//! genealogy of lots in both directions, across transfers (merges included), roasts, blends and
//! shipments.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

pub(crate) const SCOPES: &str = "core.location inventory.green inventory.roast inventory.blend \
                      inventory.trace mrp.product mrp.order quality.cupping";

pub(crate) async fn ok(app: &TestApp, token: &str, operation: &str, body: Value) -> Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}

pub(crate) fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_owned()
}

fn kg(amount: &str) -> Value {
    json!({"amount": amount.parse::<f64>().unwrap(), "unit": "KG"})
}

/// What the scenario made.
pub(crate) struct World {
    pub(crate) token: String,
    pub(crate) client_id: String,
    pub(crate) g1: String,
    pub(crate) g1b: String,
    pub(crate) g2: String,
    pub(crate) g3: String,
    pub(crate) r1: String,
    pub(crate) r2: String,
    pub(crate) b1: String,
    pub(crate) o1: String,
    pub(crate) o2: String,
    pub(crate) o3: String,
    pub(crate) cupping_r1: String,
}

/// Green G1 60 KG and G2 100 LBS at A, G3 5 KG at A (never used). G1 → B 20 KG (new lot G1b),
/// G1b → A 5 KG (merges back into G1), G1 → B 10 KG (merges into G1b). Roast R1 from G1b 10 KG
/// (8.5 KG out), R2 from G2 20 LBS (7.5 KG out). Blend B1 = R1 5 KG + R2 3 KG. O1 ships 4 × 250 G
/// of B1; O2 ships 1 × 1000 G of R1; O3 stays open. R1 and G3 are cupped.
pub(crate) async fn world(app: &TestApp) -> World {
    let (client_id, secret) = app.account(SCOPES);
    let token = app.fetch_token(&client_id, &secret, None).await.unwrap();
    let t = token.as_str();
    let a = id(&ok(
        app,
        t,
        "core.location.importLocation",
        json!({"data": {"name": "Hamburg", "externalId": "HH"}}),
    )
    .await["location"]);
    let b = id(&ok(
        app,
        t,
        "core.location.importLocation",
        json!({"data": {"name": "Berlin", "externalId": "B"}}),
    )
    .await["location"]);
    let import = |name: &str, ext: &str, weight: Value| json!({"data": {"name": name, "externalId": ext, "weight": weight, "locationId": a}});
    let g1 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Guji", "G-1", kg("60")),
    )
    .await["greenLot"]);
    let g2 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Huila", "G-2", json!({"amount": 100, "unit": "LBS"})),
    )
    .await["greenLot"]);
    let g3 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Sidamo", "G-3", kg("5")),
    )
    .await["greenLot"]);
    let transfer = |lot: &str, weight: Value, to: &str| json!({"data": {"greenLotId": lot, "weight": weight, "destinationLocationId": to}});
    let moved = ok(
        app,
        t,
        "inventory.green.transferGreenLotToLocation",
        transfer(&g1, kg("20"), &b),
    )
    .await;
    let g1b = id(&moved["destinationGreenLot"]);
    let back = ok(
        app,
        t,
        "inventory.green.transferGreenLotToLocation",
        transfer(&g1b, kg("5"), &a),
    )
    .await;
    assert_eq!(id(&back["destinationGreenLot"]), g1, "moving back merges");
    let again = ok(
        app,
        t,
        "inventory.green.transferGreenLotToLocation",
        transfer(&g1, kg("10"), &b),
    )
    .await;
    assert_eq!(
        id(&again["destinationGreenLot"]),
        g1b,
        "merges into the lot at B"
    );
    let roast = |name: &str, weight: Value, green: &str, used: Value| {
        json!({"data": {"name": name, "locationId": b, "roastedDate": "2026-03-01T09:30:00Z",
                        "weight": weight, "greenLots": [{"id": green, "usedWeight": used}]}})
    };
    let r1 = id(&ok(
        app,
        t,
        "inventory.roast.recordRoast",
        roast("Guji roast", kg("8.5"), &g1b, kg("10")),
    )
    .await["roastedLot"]);
    let r2 = id(&ok(
        app,
        t,
        "inventory.roast.recordRoast",
        roast(
            "Huila roast",
            kg("7.5"),
            &g2,
            json!({"amount": 20, "unit": "LBS"}),
        ),
    )
    .await["roastedLot"]);
    let b1 = id(&ok(
        app,
        t,
        "inventory.blend.createBlend",
        json!({"data": {
        "name": "House blend", "locationId": b, "blendedDate": "2026-03-02T08:00:00Z",
        "roastedLots": [{"id": r1, "usedWeight": kg("5")}, {"id": r2, "usedWeight": kg("3")}]}}),
    )
    .await["blendedLot"]);
    ok(app, t, "mrp.product.syncProducts", json!({"data": [
        {"externalId": "P-1", "name": "House", "variants": [{"sku": "HOUSE-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]},
        {"externalId": "P-2", "name": "Guji", "variants": [{"sku": "GUJI-1000", "coffeeOptions": {"packageSize": "PACKAGE1000G"}}]}
    ]})).await;
    let orders = ok(
        app,
        t,
        "mrp.order.setOrders",
        json!({"data": [
            {"externalId": "O-1", "orderDate": "2026-03-03T10:00:00Z", "customer": "Café Nord",
             "customerType": "WHOLESALE", "orderItems": [{"sku": "HOUSE-250", "quantity": 4}]},
            {"externalId": "O-2", "orderDate": "2026-03-03T11:00:00Z", "customer": "Ada Retail",
             "customerType": "RETAIL", "orderItems": [{"sku": "GUJI-1000", "quantity": 1}]},
            {"externalId": "O-3", "orderDate": "2026-03-03T12:00:00Z", "customer": "Later",
             "customerType": "RETAIL", "orderItems": [{"sku": "GUJI-1000", "quantity": 1}]}
        ]}),
    )
    .await;
    let [o1, o2, o3] = [0, 1, 2].map(|i| id(&orders["syncedOrders"][i]));
    let shipped = ok(
        app,
        t,
        "mrp.order.shipOrder",
        json!({"data": {"orderId": o1,
        "shippedDate": "2026-03-04T09:00:00Z",
        "allocations": [{"sku": "HOUSE-250", "lotId": b1, "quantity": 4}]}}),
    )
    .await;
    assert_eq!(shipped["order"]["status"], "COMPLETED");
    ok(
        app,
        t,
        "mrp.order.shipOrder",
        json!({"data": {"orderId": o2,
        "shippedDate": "2026-03-04T10:00:00Z",
        "allocations": [{"sku": "GUJI-1000", "lotId": r1, "quantity": 1}]}}),
    )
    .await;
    let cupping = ok(
        app,
        t,
        "quality.cupping.createCupping",
        json!({"data": {
        "startDate": "2026-03-05T10:00:00Z", "cuppingSheet": {"name": "SCA"},
        "coffees": [{"lotId": r1, "type": "INVENTORY_ROAST"}]}}),
    )
    .await;
    ok(
        app,
        t,
        "quality.cupping.createCupping",
        json!({"data": {
        "startDate": "2026-03-05T11:00:00Z", "cuppingSheet": {"name": "SCA"},
        "coffees": [{"lotId": g3, "type": "INVENTORY_GREEN"}]}}),
    )
    .await;
    World {
        token,
        client_id,
        g1,
        g1b,
        g2,
        g3,
        r1,
        r2,
        b1,
        o1,
        o2,
        o3,
        cupping_r1: id(&cupping["cupping"]),
    }
}

async fn trace(app: &TestApp, token: &str, lot: &str, direction: &str) -> Value {
    ok(
        app,
        token,
        "inventory.trace.traceLot",
        json!({"params": {"filter": {"lotId": lot, "direction": direction}}}),
    )
    .await
}

/// (id → depth) of the lots of a trace.
fn depths(trace: &Value) -> BTreeMap<String, u64> {
    trace["lots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (id(l), l["depth"].as_u64().unwrap()))
        .collect()
}

/// (from, to, kind, amount unit) of the edges of a trace, sorted.
fn edges(trace: &Value) -> Vec<(String, String, String, String)> {
    let mut edges: Vec<_> = trace["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                id(&e["from"]),
                id(&e["to"]),
                e["kind"].as_str().unwrap().to_owned(),
                format!(
                    "{} {}",
                    e["weight"]["amount"],
                    e["weight"]["unit"].as_str().unwrap()
                ),
            )
        })
        .collect();
    edges.sort();
    edges
}

fn sorted(items: &[(&String, &String, &str, &str)]) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = items
        .iter()
        .map(|(a, b, k, w)| ((*a).clone(), (*b).clone(), (*k).to_owned(), (*w).to_owned()))
        .collect();
    v.sort();
    v
}

both_databases! {
    async fn a_blend_traces_upstream_to_exactly_its_green_lots(app) {
        let w = world(&app).await;
        let up = trace(&app, &w.token, &w.b1, "UPSTREAM").await;
        let expected: BTreeMap<String, u64> = [
            (w.b1.clone(), 0), (w.r1.clone(), 1), (w.r2.clone(), 1),
            (w.g1b.clone(), 2), (w.g2.clone(), 2), (w.g1.clone(), 3),
        ].into_iter().collect();
        assert_eq!(depths(&up), expected, "{up}");
        assert_eq!(up["lots"][0]["id"], json!(w.b1));
        assert_eq!(up["lots"][0]["lotNumber"], "PB-1");
        assert_eq!(up["lots"][0]["type"], "INVENTORY_BLEND");
        let green: BTreeSet<String> = up["lots"].as_array().unwrap().iter()
            .filter(|l| l["type"] == "INVENTORY_GREEN").map(id).collect();
        assert_eq!(green, [w.g1.clone(), w.g1b.clone(), w.g2.clone()].into_iter().collect());
        // The weights that flowed, each in the unit of the lot it left.
        assert_eq!(edges(&up), sorted(&[
            (&w.r1, &w.b1, "BLEND", "5 KG"),
            (&w.r2, &w.b1, "BLEND", "3 KG"),
            (&w.g1b, &w.r1, "ROAST", "10 KG"),
            (&w.g2, &w.r2, "ROAST", "20 LBS"),
            (&w.g1, &w.g1b, "TRANSFER", "20 KG"),
            (&w.g1, &w.g1b, "TRANSFER", "10 KG"),
            (&w.g1b, &w.g1, "TRANSFER", "5 KG"),
        ]));
        // B1 shipped to O1.
        let orders: Vec<String> = up["orders"].as_array().unwrap().iter().map(id).collect();
        assert!(orders.contains(&w.o1), "{up}");
    }

    async fn a_green_lot_traces_downstream_to_every_roast_blend_order_customer_and_cupping(app) {
        let w = world(&app).await;
        let down = trace(&app, &w.token, &w.g1, "DOWNSTREAM").await;
        let expected: BTreeMap<String, u64> = [
            (w.g1.clone(), 0), (w.g1b.clone(), 1), (w.r1.clone(), 2), (w.b1.clone(), 3),
        ].into_iter().collect();
        assert_eq!(depths(&down), expected, "{down}");
        let mut customers: Vec<(String, String, String)> = down["orders"].as_array().unwrap().iter()
            .map(|o| (id(o), o["customer"].as_str().unwrap().to_owned(), o["shippedDate"].as_str().unwrap().to_owned()))
            .collect();
        customers.sort();
        let mut expected_orders = vec![
            (w.o1.clone(), "Café Nord".to_owned(), "2026-03-04T09:00:00Z".to_owned()),
            (w.o2.clone(), "Ada Retail".to_owned(), "2026-03-04T10:00:00Z".to_owned()),
        ];
        expected_orders.sort();
        assert_eq!(customers, expected_orders);
        assert!(down["orders"].as_array().unwrap().iter().all(|o| o["id"] != json!(w.o3)));
        let shipments: Vec<_> = edges(&down).into_iter().filter(|e| e.2 == "SHIPMENT").collect();
        assert_eq!(shipments, sorted(&[(&w.b1, &w.o1, "SHIPMENT", "1 KG"), (&w.r1, &w.o2, "SHIPMENT", "1 KG")]));
        let cuppings = down["cuppings"].as_array().unwrap();
        assert_eq!(cuppings.len(), 1, "{down}");
        assert_eq!(cuppings[0]["id"], json!(w.cupping_r1));
        assert_eq!(cuppings[0]["cuppedLot"], json!({"id": w.r1, "type": "INVENTORY_ROAST"}));
        // A lot that went nowhere traces to itself only, with its cupping.
        let alone = trace(&app, &w.token, &w.g3, "DOWNSTREAM").await;
        assert_eq!(depths(&alone), [(w.g3.clone(), 0)].into_iter().collect());
        assert!(alone["edges"].as_array().unwrap().is_empty());
        assert_eq!(alone["cuppings"].as_array().unwrap().len(), 1);
        // Unknown lot, missing or bad direction.
        let (s, b) = app.call(&w.token, "inventory.trace.traceLot",
            json!({"params": {"filter": {"lotId": w.o1, "direction": "UPSTREAM"}}})).await;
        assert_error(s, &b, 422, "resource_not_found");
        let (s, b) = app.call(&w.token, "inventory.trace.traceLot",
            json!({"params": {"filter": {"lotId": w.g1}}})).await;
        assert_error(s, &b, 400, "missing_parameter");
        let (s, b) = app.call(&w.token, "inventory.trace.traceLot",
            json!({"params": {"filter": {"lotId": w.g1, "direction": "SIDEWAYS"}}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
    }

    async fn ledger_entries_sum_to_every_lots_weight(app) {
        let w = world(&app).await;
        let entries = app.list_all(&w.token, "inventory.trace.listLedgerEntries", "ledgerEntries", json!({}), 7).await;
        // 3 imports, 3 transfers × 2, 2 roasts × 2, 1 blend × 3, 2 shipments.
        assert_eq!(entries.len(), 3 + 6 + 4 + 3 + 2);
        let dates: Vec<&str> = entries.iter().map(|e| e["createdDate"].as_str().unwrap()).collect();
        assert!(dates.windows(2).all(|p| p[0] >= p[1]), "newest first");
        assert!(entries.iter().all(|e| e["clientId"] == json!(w.client_id)));
        let audit = app.roastery.audit_ledger().unwrap();
        assert_eq!(audit.lots_checked, 7);
        assert!(audit.disagreeing.is_empty(), "{:?}", audit.disagreeing);
        // One lot's entries, through the filter: the HTTP view agrees with the lot's weight.
        let r1 = app.list_all(&w.token, "inventory.trace.listLedgerEntries", "ledgerEntries",
            json!({"lotId": w.r1}), 100).await;
        let kinds: Vec<&str> = r1.iter().rev().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["ROAST_OUTPUT", "BLEND_INPUT", "SHIPMENT"]);
        assert_eq!(r1[0]["delta"], json!({"amount": -1, "unit": "KG"}));
        assert_eq!(r1[0]["weightAfter"], json!({"amount": 2.5, "unit": "KG"}));
        assert_eq!(r1[0]["operation"], "mrp.order.shipOrder");
        assert_eq!(r1[0]["reference"], json!({"id": w.o2, "type": "ORDER"}));
        assert_eq!(r1[1]["reference"], json!({"id": w.b1, "type": "INVENTORY_BLEND"}));
        let transfer_in: Vec<&Value> = entries.iter()
            .filter(|e| e["kind"] == "TRANSFER_IN" && e["lot"]["id"] == json!(w.g1)).collect();
        assert_eq!(transfer_in.len(), 1);
        assert_eq!(transfer_in[0]["reference"], json!({"id": w.g1b, "type": "INVENTORY_GREEN"}));
        // A call that changes no weight writes nothing; a date range filters.
        let before = entries.len();
        let (s, _) = app.call(&w.token, "inventory.green.setGreenLotWeight",
            json!({"data": {"greenLotId": w.g3, "weight": kg("5")}})).await;
        assert_eq!(s, 200);
        let all = app.list_all(&w.token, "inventory.trace.listLedgerEntries", "ledgerEntries", json!({}), 100).await;
        assert_eq!(all.len(), before);
        let none = app.list_all(&w.token, "inventory.trace.listLedgerEntries", "ledgerEntries",
            json!({"createdDate": {"to": "2000-01-01T00:00:00Z"}}), 100).await;
        assert!(none.is_empty());
        // The scope guards the ledger.
        let other = app.token("inventory.green").await;
        let (s, b) = app.call(&other, "inventory.trace.listLedgerEntries", json!({})).await;
        assert_error(s, &b, 403, "access_denied");
    }

    async fn ship_order_rules_and_codes(app) {
        let w = world(&app).await;
        let t = &w.token;
        let ship = |order: &str, allocations: Value| json!({"data": {"orderId": order,
            "shippedDate": "2026-03-06T09:00:00Z", "allocations": allocations}});
        let one = |lot: &str, quantity: i64| json!([{"sku": "GUJI-1000", "lotId": lot, "quantity": quantity}]);
        let cases: Vec<(Value, u16, &str)> = vec![
            (json!({"data": {"orderId": w.o3, "allocations": one(&w.r1, 1)}}), 400, "missing_parameter"),
            (ship(&uuid::Uuid::nil().to_string(), one(&w.r1, 1)), 422, "resource_not_found"),
            (ship(&w.o3, one(&uuid::Uuid::nil().to_string(), 1)), 422, "resource_not_found"),
            (ship(&w.o3, one(&w.r1, 2)), 422, "invalid_request"),
            (ship(&w.o3, json!([{"sku": "HOUSE-250", "lotId": w.r1, "quantity": 1}])), 422, "invalid_request"),
            (ship(&w.o3, json!([])), 422, "invalid_request"),
            (ship(&w.o1, one(&w.r1, 1)), 422, "invalid_request"),
        ];
        for (body, status, code) in cases {
            let (s, b) = app.call(t, "mrp.order.shipOrder", body.clone()).await;
            assert_error(s, &b, status, code);
        }
        // Not enough weight: drain R2 to 0.5 KG first.
        ok(&app, t, "inventory.roast.setRoastedLotWeight",
            json!({"data": {"roastedLotId": w.r2, "weight": kg("0.5")}})).await;
        let (s, b) = app.call(t, "mrp.order.shipOrder", ship(&w.o3, one(&w.r2, 1))).await;
        assert_error(s, &b, 422, "invalid_weight");
        let entries_before = app.list_all(t, "inventory.trace.listLedgerEntries", "ledgerEntries", json!({}), 100).await.len();
        // Nothing of a refused call applied; then a split allocation across two lots ships.
        let (s, b) = app.call(t, "mrp.order.shipOrder", ship(&w.o3, json!([
            {"sku": "GUJI-1000", "lotId": w.g3, "quantity": 1}]))).await;
        assert_eq!(s, 200, "{b}");
        let order = &b["result"]["order"];
        assert_eq!(order["status"], "COMPLETED");
        assert_eq!(order["shippedDate"], "2026-03-06T09:00:00Z");
        assert_eq!(order["shipments"], json!([{"sku": "GUJI-1000",
            "lot": {"id": w.g3, "type": "INVENTORY_GREEN", "lotNumber": "PG-3"},
            "quantity": 1, "weight": {"amount": 1, "unit": "KG"}}]));
        let after = app.list_all(t, "inventory.trace.listLedgerEntries", "ledgerEntries", json!({}), 100).await.len();
        assert_eq!(after, entries_before + 1);
        // Orders show shipments in listings; open orders none.
        let orders = app.list_all(t, "mrp.order.listOrders", "orders", json!({}), 100).await;
        let o2 = orders.iter().find(|o| o["id"] == json!(w.o2)).unwrap();
        assert_eq!(o2["shipments"][0]["lot"]["lotNumber"], "PR-1");
        assert_eq!(o2["shippedDate"], "2026-03-04T10:00:00Z");
        // A consumed lot cannot ship.
        ok(&app, t, "mrp.order.setOrders", json!({"data": [
            {"externalId": "O-4", "orderDate": "2026-03-07T12:00:00Z", "orderItems": [{"sku": "GUJI-1000", "quantity": 1}]}]})).await;
        let o4 = app.list_all(t, "mrp.order.listOrders", "orders", json!({"status": "OPEN"}), 100).await;
        assert_eq!(o4.len(), 1);
        ok(&app, t, "inventory.green.setGreenLotWeight",
            json!({"data": {"greenLotId": w.g3, "weight": kg("0")}})).await;
        let (s, b) = app.call(t, "mrp.order.shipOrder", ship(&id(&o4[0]), one(&w.g3, 1))).await;
        assert_error(s, &b, 422, "invalid_request");
        assert!(app.roastery.audit_ledger().unwrap().disagreeing.is_empty());
    }
}
