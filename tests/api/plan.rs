//! Production planning and costs end to end (api-decisions §15): profile planning data, product
//! recipes, net requirements, run-out dates and the cost of lots and orders, with every rule's
//! error and nothing applied when one is broken.

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

const SCOPES: &str = "core.location inventory.green inventory.roast inventory.blend \
                      inventory.trace mrp.product mrp.order mrp.plan core.event";

async fn ok(app: &TestApp, token: &str, operation: &str, body: Value) -> Value {
    let (status, body) = app.call(token, operation, body).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_owned()
}

fn kg(amount: &str) -> Value {
    json!({"amount": amount.parse::<f64>().unwrap(), "unit": "KG"})
}

/// A weight answer: `{"amount", "unit": "KG"}` with the amount as the server wrote it.
fn amount(v: &Value) -> String {
    assert_eq!(v["unit"], "KG", "{v}");
    v["amount"].to_string()
}

/// Location A; green G1 "Guji" 15 KG at 8 EUR/KG, G2 "Huila" 100 LBS at 3 USD/LB, G3 "Sidamo"
/// 3 KG without price; profiles Espresso (60 % G1 then G2, 40 % G3) and Filter (100 % G2).
struct World {
    token: String,
    location: String,
    g1: String,
    g2: String,
    g3: String,
    espresso: String,
    filter: String,
}

async fn world(app: &TestApp) -> World {
    let token = app.token(SCOPES).await;
    let t = token.as_str();
    let location = id(&ok(
        app,
        t,
        "core.location.importLocation",
        json!({"data": {"name": "Hamburg", "externalId": "HH"}}),
    )
    .await["location"]);
    let import = |name: &str, ext: &str, weight: Value, price: Value| {
        json!({"data": {"name": name, "externalId": ext, "weight": weight, "price": price,
                        "locationId": location}})
    };
    let g1 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import(
            "Guji",
            "G-1",
            kg("15"),
            json!({"amount": 8, "currency": "EUR"}),
        ),
    )
    .await["greenLot"]);
    let g2 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import(
            "Huila",
            "G-2",
            json!({"amount": 100, "unit": "LBS"}),
            json!({"amount": 3, "currency": "USD"}),
        ),
    )
    .await["greenLot"]);
    let g3 = id(&ok(
        app,
        t,
        "inventory.green.importGreenLot",
        import("Sidamo", "G-3", kg("3"), Value::Null),
    )
    .await["greenLot"]);
    let espresso = id(&ok(
        app,
        t,
        "inventory.roast.importProfile",
        json!({"data": {"name": "Espresso", "components": [
            {"percentage": 60, "greenLotIds": [g1, g2]},
            {"percentage": 40, "greenLotIds": [g3]}]}}),
    )
    .await["profile"]);
    let filter = id(&ok(
        app,
        t,
        "inventory.roast.importProfile",
        json!({"data": {"name": "Filter", "components": [{"percentage": 100, "greenLotIds": [g2]}]}}),
    )
    .await["profile"]);
    World {
        token,
        location,
        g1,
        g2,
        g3,
        espresso,
        filter,
    }
}

async fn roast(
    app: &TestApp,
    w: &World,
    green: &str,
    used: Value,
    out: &str,
    profile: &str,
) -> String {
    id(&ok(
        app,
        &w.token,
        "inventory.roast.recordRoast",
        json!({"data": {"name": "Roast", "locationId": w.location, "roastedDate": "2026-03-01T09:00:00Z",
            "weight": kg(out), "greenLots": [{"id": green, "usedWeight": used}], "profileId": profile}}),
    )
    .await["roastedLot"])
}

async fn profile(app: &TestApp, w: &World, id: &str) -> Value {
    ok(
        app,
        &w.token,
        "inventory.roast.getProfilesByIds",
        json!({"params": {"filter": {"profileIds": [id]}}}),
    )
    .await["profiles"][0]
        .clone()
}

/// The events of one type: one page of 100 holds them all (the feed's cursor is never null, so
/// it is not followed).
async fn events_of(app: &TestApp, token: &str, kind: &str) -> Vec<Value> {
    let (status, body) = app
        .call(
            token,
            "core.event.listEvents",
            json!({"params": {"filter": {"types": [kind]}, "pagination": {"limit": 100}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["events"].as_array().unwrap().clone()
}

/// A call that must fail with `status`/`code` and a message naming `field` (when given).
async fn refused(
    app: &TestApp,
    t: &str,
    operation: &str,
    body: Value,
    status: u16,
    code: &str,
    field: Option<&str>,
) {
    let (s, b) = app.call(t, operation, body).await;
    assert_error(s, &b, status, code);
    if let Some(field) = field {
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{field} not named in {message}");
    }
}

both_databases! {
    async fn profile_planning_is_set_derived_from_roasts_or_absent(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        // Nothing set, no roasts: nothing known.
        let p = profile(&app, &w, &w.espresso).await;
        assert_eq!(p["planning"], json!({"expectedLoss": null, "expectedLossSource": null, "batchSize": null}));
        // Two roasts: (10 + 5 − 8.5 − 4) / 15 = 16.666… → 16.67 % derived.
        roast(&app, &w, &w.g1, kg("10"), "8.5", &w.espresso).await;
        roast(&app, &w, &w.g1, kg("5"), "4", &w.espresso).await;
        let p = profile(&app, &w, &w.espresso).await;
        assert_eq!(p["planning"]["expectedLoss"], json!(16.67));
        assert_eq!(p["planning"]["expectedLossSource"], "ROASTS");
        // Set: the set loss wins; batch sizes answer in KG.
        let set = ok(&app, t, "inventory.roast.setProfilePlanning", json!({"data": {
            "profileId": w.espresso, "expectedLoss": 14.5,
            "batchSize": {"min": kg("5"), "max": {"amount": 22.046, "unit": "LBS"}}}})).await;
        assert_eq!(set["profile"]["id"], json!(w.espresso));
        assert_eq!(set["profile"]["planning"]["expectedLoss"], json!(14.5));
        assert_eq!(set["profile"]["planning"]["expectedLossSource"], "SET");
        assert_eq!(amount(&set["profile"]["planning"]["batchSize"]["min"]), "5");
        // 22.046 LBS = 9.9998… KG
        assert_eq!(amount(&set["profile"]["planning"]["batchSize"]["max"]), "10");
        assert_eq!(profile(&app, &w, &w.espresso).await["planning"], set["profile"]["planning"]);
        // Null loss goes back to the roasts; absent batch size removes it.
        let back = ok(&app, t, "inventory.roast.setProfilePlanning", json!({"data": {
            "profileId": w.espresso, "expectedLoss": null}})).await;
        assert_eq!(back["profile"]["planning"], json!({"expectedLoss": 16.67, "expectedLossSource": "ROASTS", "batchSize": null}));
        // Each set is a profile.updated event.
        let events = events_of(&app, t, "profile.updated").await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["subject"]["id"], json!(w.espresso));
        assert_eq!(events[0]["operation"], "inventory.roast.setProfilePlanning");
    }

    async fn profile_planning_rules_answer_their_errors_and_apply_nothing(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let op = "inventory.roast.setProfilePlanning";
        let set = |data: Value| json!({"data": data});
        ok(&app, t, op, set(json!({"profileId": w.filter, "expectedLoss": 15}))).await;
        let before = profile(&app, &w, &w.filter).await;
        refused(&app, t, op, set(json!({"expectedLoss": 15})), 400, "missing_parameter", Some("data.profileId")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "expectedLoss": 100})), 400, "invalid_parameter", Some("data.expectedLoss")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "expectedLoss": -1})), 400, "invalid_parameter", Some("data.expectedLoss")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "expectedLoss": 12.345})), 400, "invalid_parameter", Some("data.expectedLoss")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "batchSize": {"min": kg("12"), "max": kg("5")}})), 400, "invalid_parameter", Some("data.batchSize")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "batchSize": {"min": kg("0"), "max": kg("5")}})), 400, "invalid_parameter", Some("data.batchSize.min")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "batchSize": {"min": kg("1")}})), 400, "missing_parameter", Some("data.batchSize.max")).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "batchSize": {"min": kg("1"), "max": {"amount": 5, "unit": "G"}}})), 400, "unsupported_unit", None).await;
        refused(&app, t, op, set(json!({"profileId": w.filter, "batchSize": {"min": kg("-1"), "max": kg("5")}})), 422, "invalid_weight", Some("data.batchSize.min")).await;
        let unknown = "0190b3a0-0000-7000-8000-000000000001";
        refused(&app, t, op, set(json!({"profileId": unknown, "expectedLoss": 10})), 422, "resource_not_found", Some(unknown)).await;
        // An unknown profile ranks before a negative weight.
        refused(&app, t, op, set(json!({"profileId": unknown, "batchSize": {"min": kg("-1"), "max": kg("5")}})), 422, "resource_not_found", None).await;
        assert_eq!(profile(&app, &w, &w.filter).await, before);
        // Only the one successful call made an event.
        assert_eq!(events_of(&app, t, "profile.updated").await.len(), 1);
        // The scope is the namespace's.
        let other = app.token("mrp.plan").await;
        refused(&app, &other, op, set(json!({"profileId": w.filter})), 403, "access_denied", None).await;
    }

    async fn recipes_are_set_replaced_removed_and_listed(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let synced = ok(&app, t, "mrp.product.syncProducts", json!({"data": [
            {"externalId": "P-1", "name": "House", "variants": [{"sku": "H-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}
        ]})).await;
        let product = id(&synced["syncedProducts"][0]);
        let listed = app.list_all(t, "mrp.product.listProducts", "products", json!({}), 10).await;
        assert_eq!(listed[0]["recipe"], Value::Null);
        let op = "mrp.product.setRecipe";
        let set = ok(&app, t, op, json!({"data": {"productId": product, "components": [
            {"profileId": w.espresso, "percentage": 66.67}, {"profileId": w.filter, "percentage": 33.33}]}})).await;
        assert_eq!(set["product"]["id"], json!(product));
        assert_eq!(set["product"]["variants"][0]["sku"], "H-250");
        assert_eq!(set["product"]["recipe"], json!({"components": [
            {"profileId": w.espresso, "percentage": 66.67}, {"profileId": w.filter, "percentage": 33.33}]}));
        let listed = app.list_all(t, "mrp.product.listProducts", "products", json!({}), 10).await;
        assert_eq!(listed[0]["recipe"], set["product"]["recipe"]);
        // Replaced whole.
        let one = ok(&app, t, op, json!({"data": {"productId": product, "components": [
            {"profileId": w.filter, "percentage": 100}]}})).await;
        assert_eq!(one["product"]["recipe"]["components"].as_array().unwrap().len(), 1);
        // Errors: nothing applied.
        let with = |components: Value| json!({"data": {"productId": product, "components": components}});
        let c = |p: &str, pct: Value| json!({"profileId": p, "percentage": pct});
        refused(&app, t, op, json!({"data": {"productId": product}}), 400, "missing_parameter", Some("data.components")).await;
        refused(&app, t, op, with(json!([c(&w.filter, json!(50)), c(&w.filter, json!(50))])), 400, "invalid_parameter", Some("data.components[1]")).await;
        refused(&app, t, op, with(json!([c(&w.filter, json!(0)), c(&w.espresso, json!(100))])), 400, "invalid_parameter", Some("data.components[0].percentage")).await;
        refused(&app, t, op, with(json!([c(&w.filter, json!(33.333)), c(&w.espresso, json!(66.667))])), 400, "invalid_parameter", Some("data.components[0].percentage")).await;
        let eleven: Vec<Value> = (0..11).map(|i| c(&format!("0190b3a0-0000-7000-8000-0000000000{i:02}"), json!(1))).collect();
        refused(&app, t, op, with(json!(eleven)), 400, "invalid_parameter", Some("data.components")).await;
        refused(&app, t, op, with(json!([c(&w.filter, json!(60)), c(&w.espresso, json!(30))])), 422, "invalid_request", Some("100")).await;
        let unknown = "0190b3a0-0000-7000-8000-000000000001";
        refused(&app, t, op, json!({"data": {"productId": unknown, "components": []}}), 422, "resource_not_found", Some(unknown)).await;
        // An unknown profile ranks before the sum.
        refused(&app, t, op, with(json!([c(unknown, json!(10)), c(&w.espresso, json!(30))])), 422, "resource_not_found", Some(unknown)).await;
        let listed = app.list_all(t, "mrp.product.listProducts", "products", json!({}), 10).await;
        assert_eq!(listed[0]["recipe"], one["product"]["recipe"]);
        // [] removes it.
        let removed = ok(&app, t, op, with(json!([]))).await;
        assert_eq!(removed["product"]["recipe"], Value::Null);
        let events = events_of(&app, t, "product.updated").await;
        assert_eq!(events.len(), 3);
        assert!(events.iter().all(|e| e["subject"]["id"] == json!(product)));
    }

    async fn net_requirements_walk_demand_profiles_lots_and_missing(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        // Espresso: a roast of 10 KG of G1 gave 8 KG: 20 % loss derived, 8 KG on hand; G1 keeps 5.
        roast(&app, &w, &w.g1, kg("10"), "8", &w.espresso).await;
        ok(&app, t, "inventory.roast.setProfilePlanning", json!({"data": {"profileId": w.espresso,
            "batchSize": {"min": kg("5"), "max": kg("10")}}})).await;
        ok(&app, t, "mrp.product.syncProducts", json!({"data": [
            {"externalId": "P-E", "name": "House Espresso", "variants": [
                {"sku": "ESP-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}},
                {"sku": "ESP-1000", "coffeeOptions": {"packageSize": "PACKAGE1000G"}}]},
            {"externalId": "P-F", "name": "Filter Blend", "variants": [
                {"sku": "FIL-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]},
            {"externalId": "P-B", "name": "Bare", "variants": [
                {"sku": "BARE-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}
        ]})).await;
        let products = app.list_all(t, "mrp.product.listProducts", "products", json!({}), 10).await;
        let product = |ext: &str| id(products.iter().find(|p| p["externalId"] == ext).unwrap());
        ok(&app, t, "mrp.product.setRecipe", json!({"data": {"productId": product("P-E"),
            "components": [{"profileId": w.espresso, "percentage": 100}]}})).await;
        ok(&app, t, "mrp.product.setRecipe", json!({"data": {"productId": product("P-F"),
            "components": [{"profileId": w.espresso, "percentage": 50}, {"profileId": w.filter, "percentage": 50}]}})).await;
        let orders = ok(&app, t, "mrp.order.setOrders", json!({"data": [
            {"externalId": "O-1", "orderDate": "2026-03-01T10:00:00Z", "orderItems": [
                {"sku": "ESP-250", "quantity": 8}, {"sku": "FIL-250", "quantity": 4}]},
            {"externalId": "O-2", "orderDate": "2026-03-05T10:00:00Z", "orderItems": [
                {"sku": "ESP-1000", "quantity": 10}, {"sku": "BARE-250", "quantity": 2}]},
            {"externalId": "O-3", "orderDate": "2026-03-05T11:00:00Z", "orderItems": [
                {"sku": "ESP-1000", "quantity": 100}]},
            {"externalId": "O-4", "orderDate": "2026-04-01T10:00:00Z", "orderItems": [
                {"sku": "ESP-1000", "quantity": 5}]}
        ]})).await;
        let [o2, o3] = [1, 2].map(|i| id(&orders["syncedOrders"][i]));
        ok(&app, t, "mrp.order.setOrderStatus", json!({"data": {"orderId": o2, "status": "IN_PROGRESS"}})).await;
        ok(&app, t, "mrp.order.setOrderStatus", json!({"data": {"orderId": o3, "status": "CANCELLED"}})).await;

        let plan = ok(&app, t, "mrp.plan.getNetRequirements", json!({})).await;
        assert_eq!(plan["until"], Value::Null);
        let demand: Vec<(String, i64, String)> = plan["demand"].as_array().unwrap().iter()
            .map(|d| (d["sku"].as_str().unwrap().to_owned(), d["bags"].as_i64().unwrap(), amount(&d["weight"])))
            .collect();
        assert_eq!(demand, vec![
            ("BARE-250".to_owned(), 2, "0.5".to_owned()),
            ("ESP-1000".to_owned(), 15, "15".to_owned()),
            ("ESP-250".to_owned(), 8, "2".to_owned()),
            ("FIL-250".to_owned(), 4, "1".to_owned()),
        ]);
        assert_eq!(plan["demand"][1]["productId"], json!(product("P-E")));
        // Espresso: 15 + 2 + 0.5 = 17.5 roasted, 8 on hand, 9.5 needed, / 0.8 = 11.875 green,
        // in ceil(11.875 / 10) = 2 batches of 5.9375.
        let esp = &plan["profiles"][0];
        assert_eq!(esp["profileId"], json!(w.espresso));
        assert_eq!(esp["name"], "Espresso");
        assert_eq!(amount(&esp["roastedDemand"]), "17.5");
        assert_eq!(amount(&esp["roastedOnHand"]), "8");
        assert_eq!(amount(&esp["roastedNeeded"]), "9.5");
        assert_eq!(esp["expectedLoss"], json!(20));
        assert_eq!(amount(&esp["greenNeeded"]), "11.875");
        let batches: Vec<String> = esp["batches"].as_array().unwrap().iter().map(|b| amount(&b["greenWeight"])).collect();
        assert_eq!(batches, vec!["5.938", "5.938"]);
        // Filter: no loss known.
        let fil = &plan["profiles"][1];
        assert_eq!(fil["name"], "Filter");
        assert_eq!(amount(&fil["roastedDemand"]), "0.5");
        assert_eq!(fil["greenNeeded"], Value::Null);
        assert_eq!(fil["batches"], json!([]));
        // Green: component 0 (60 % = 7.125) from G1 (5) then G2 (2.125); component 1
        // (40 % = 4.75) from G3 (3), 1.75 short.
        let lots: Vec<(String, String, String, String)> = plan["greenLots"].as_array().unwrap().iter()
            .map(|l| (l["greenLotId"].as_str().unwrap().to_owned(), l["lotNumber"].as_str().unwrap().to_owned(),
                      amount(&l["available"]), amount(&l["allocated"])))
            .collect();
        assert_eq!(lots, vec![
            (w.g1.clone(), "PG-1".to_owned(), "5".to_owned(), "5".to_owned()),
            (w.g2.clone(), "PG-2".to_owned(), "45.359".to_owned(), "2.125".to_owned()),
            (w.g3.clone(), "PG-3".to_owned(), "3".to_owned(), "3".to_owned()),
        ]);
        assert_eq!(plan["shortfalls"], json!([{"profileId": w.espresso, "componentIndex": 1,
            "weight": {"amount": 1.75, "unit": "KG"}}]));
        assert_eq!(plan["missing"], json!([{"sku": "BARE-250", "reason": "NO_RECIPE"},
            {"profileId": w.filter, "reason": "NO_EXPECTED_LOSS"}]));

        // Up to a date: O-4 drops out: 12.5 roasted, 4.5 needed, 5.625 green in one batch.
        let until = ok(&app, t, "mrp.plan.getNetRequirements",
            json!({"params": {"filter": {"until": "2026-03-10T01:00:00+01:00"}}})).await;
        assert_eq!(until["until"], "2026-03-10T00:00:00Z");
        let esp = &until["profiles"][0];
        assert_eq!(amount(&esp["roastedNeeded"]), "4.5");
        assert_eq!(amount(&esp["greenNeeded"]), "5.625");
        assert_eq!(esp["batches"], json!([{"greenWeight": {"amount": 5.625, "unit": "KG"}}]));
        // Nothing open before the first order.
        let none = ok(&app, t, "mrp.plan.getNetRequirements",
            json!({"params": {"filter": {"until": "2026-01-01T00:00:00Z"}}})).await;
        assert_eq!(none["demand"], json!([]));
        assert_eq!(none["profiles"], json!([]));
        // Errors.
        refused(&app, t, "mrp.plan.getNetRequirements", json!({"params": {"filter": {"until": "soon"}}}),
            400, "invalid_parameter", None).await;
        let other = app.token("mrp.order").await;
        refused(&app, &other, "mrp.plan.getNetRequirements", json!({}), 403, "access_denied", None).await;
    }

    async fn run_out_lists_the_soonest_first_and_pages(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        // G1: 10 KG roasted now, 5 KG left.
        roast(&app, &w, &w.g1, kg("10"), "8", &w.espresso).await;
        let today = chrono::Utc::now().date_naive();
        let lots = app.list_all(t, "mrp.plan.getRunOut", "greenLots", json!({}), 1).await;
        assert_eq!(lots.len(), 3);
        assert_eq!(lots[0]["greenLotId"], json!(w.g1));
        assert_eq!(lots[0]["lotNumber"], "PG-1");
        assert_eq!(amount(&lots[0]["weight"]), "5");
        // 10 KG / 28 days; 5 × 28 / 10 = 14 days.
        assert_eq!(amount(&lots[0]["usePerDay"]), "0.357");
        assert_eq!(lots[0]["runOutDate"], json!((today + chrono::Days::new(14)).format("%Y-%m-%d").to_string()));
        // Unused lots last, by lot number.
        assert_eq!(lots[1]["lotNumber"], "PG-2");
        assert_eq!(lots[1]["runOutDate"], Value::Null);
        assert_eq!(amount(&lots[1]["usePerDay"]), "0");
        assert_eq!(amount(&lots[1]["weight"]), "45.359");
        assert_eq!(lots[2]["lotNumber"], "PG-3");
        // A week's window: floor(5 × 7 / 10) = 3 days.
        let week = ok(&app, t, "mrp.plan.getRunOut", json!({"params": {"filter": {"window": 7}}})).await;
        assert_eq!(amount(&week["greenLots"][0]["usePerDay"]), "1.429");
        assert_eq!(week["greenLots"][0]["runOutDate"], json!((today + chrono::Days::new(3)).format("%Y-%m-%d").to_string()));
        // By location.
        let berlin = id(&ok(&app, t, "core.location.importLocation", json!({"data": {"name": "Berlin"}})).await["location"]);
        let there = ok(&app, t, "mrp.plan.getRunOut", json!({"params": {"filter": {"locationId": berlin}}})).await;
        assert_eq!(there["greenLots"], json!([]));
        let here = ok(&app, t, "mrp.plan.getRunOut", json!({"params": {"filter": {"locationId": w.location}}})).await;
        assert_eq!(here["greenLots"].as_array().unwrap().len(), 3);
        // A consumed lot is not listed.
        ok(&app, t, "inventory.green.setGreenLotWeight", json!({"data": {"greenLotId": w.g3, "weight": kg("0")}})).await;
        let left = app.list_all(t, "mrp.plan.getRunOut", "greenLots", json!({}), 100).await;
        assert_eq!(left.len(), 2);
        // Errors.
        for window in [0, 366] {
            refused(&app, t, "mrp.plan.getRunOut", json!({"params": {"filter": {"window": window}}}),
                400, "invalid_parameter", Some("params.filter.window")).await;
        }
        refused(&app, t, "mrp.plan.getRunOut", json!({"params": {"filter": {"locationId": "0190b3a0-0000-7000-8000-000000000001"}}}),
            422, "resource_not_found", None).await;
        refused(&app, t, "mrp.plan.getRunOut", json!({"params": {"pagination": {"limit": 0}}}),
            400, "invalid_parameter", None).await;
    }

    async fn costs_flow_through_transfers_roasts_blends_and_shipments(app) {
        let w = world(&app).await;
        let t = w.token.as_str();
        let berlin = id(&ok(&app, t, "core.location.importLocation", json!({"data": {"name": "Berlin"}})).await["location"]);
        // G1 → Berlin 12 KG (G1b keeps 8 EUR/KG); R1 = 10 KG of G1b → 8 KG: 10 EUR/KG.
        let moved = ok(&app, t, "inventory.green.transferGreenLotToLocation", json!({"data": {
            "greenLotId": w.g1, "weight": kg("12"), "destinationLocationId": berlin}})).await;
        let g1b = id(&moved["destinationGreenLot"]);
        let r1 = roast(&app, &w, &g1b, kg("10"), "8", &w.espresso).await;
        // R2 = 10 LBS of G2 (3 USD/LB: 30 USD) → 4 KG: 7.5 USD/KG.
        let r2 = roast(&app, &w, &w.g2, json!({"amount": 10, "unit": "LBS"}), "4", &w.filter).await;
        // B1 = R1 4 KG + R2 2 KG: EUR 40 / 6, USD 15 / 6.
        let b1 = id(&ok(&app, t, "inventory.blend.createBlend", json!({"data": {"name": "House",
            "locationId": w.location, "blendedDate": "2026-03-02T09:00:00Z",
            "roastedLots": [{"id": r1, "usedWeight": kg("4")}, {"id": r2, "usedWeight": kg("2")}]}})).await["blendedLot"]);
        let op = "inventory.trace.getCost";
        let cost = |filter: Value| json!({"params": {"filter": filter}});
        let g = ok(&app, t, op, cost(json!({"lotId": w.g1}))).await;
        assert_eq!(g["costPerKg"], json!([{"currency": "EUR", "amount": 8}]));
        assert_eq!(g["total"], json!([{"currency": "EUR", "amount": 24}]));
        assert_eq!(g["inputs"], json!([]));
        assert_eq!(g["complete"], json!(true));
        let gb = ok(&app, t, op, cost(json!({"lotId": g1b}))).await;
        assert_eq!(gb["costPerKg"], g["costPerKg"]);
        assert_eq!(gb["inputs"][0]["lot"], json!({"id": w.g1, "type": "INVENTORY_GREEN", "lotNumber": "PG-1"}));
        assert_eq!(amount(&gb["inputs"][0]["weight"]), "12");
        let r = ok(&app, t, op, cost(json!({"lotId": r1}))).await;
        assert_eq!(r["costPerKg"], json!([{"currency": "EUR", "amount": 10}]));
        // 4 KG left: 40 EUR.
        assert_eq!(r["total"], json!([{"currency": "EUR", "amount": 40}]));
        let r = ok(&app, t, op, cost(json!({"lotId": r2}))).await;
        assert_eq!(r["costPerKg"], json!([{"currency": "USD", "amount": 7.5}]));
        assert_eq!(amount(&r["inputs"][0]["weight"]), "4.536");
        let b = ok(&app, t, op, cost(json!({"lotId": b1}))).await;
        assert_eq!(b["costPerKg"], json!([{"currency": "EUR", "amount": 6.666667}, {"currency": "USD", "amount": 2.5}]));
        assert_eq!(b["total"], json!([{"currency": "EUR", "amount": 40}, {"currency": "USD", "amount": 15}]));
        assert_eq!(b["inputs"].as_array().unwrap().len(), 2);
        assert_eq!(b["inputs"][0]["lot"]["lotNumber"], "PR-1");
        // An order shipping 4 × 250 G of B1: 1 KG.
        ok(&app, t, "mrp.product.syncProducts", json!({"data": [{"externalId": "P-1", "name": "House",
            "variants": [{"sku": "H-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}}]}]})).await;
        let orders = ok(&app, t, "mrp.order.setOrders", json!({"data": [{"externalId": "O-1",
            "orderDate": "2026-03-03T10:00:00Z", "orderItems": [{"sku": "H-250", "quantity": 4}]}]})).await;
        let order = id(&orders["syncedOrders"][0]);
        let unshipped = ok(&app, t, op, cost(json!({"orderId": order}))).await;
        assert_eq!(unshipped["total"], json!([]));
        assert_eq!(unshipped["inputs"], json!([]));
        ok(&app, t, "mrp.order.shipOrder", json!({"data": {"orderId": order, "shippedDate": "2026-03-04T10:00:00Z",
            "allocations": [{"sku": "H-250", "lotId": b1, "quantity": 4}]}})).await;
        let o = ok(&app, t, op, cost(json!({"orderId": order}))).await;
        assert_eq!(o["total"], json!([{"currency": "EUR", "amount": 6.666667}, {"currency": "USD", "amount": 2.5}]));
        assert_eq!(o["costPerKg"], o["total"]);
        assert_eq!(o["inputs"][0]["lot"], json!({"id": b1, "type": "INVENTORY_BLEND", "lotNumber": "PB-1"}));
        assert_eq!(o["complete"], json!(true));
        // A roast of the lot without price: incomplete, the source named.
        let r3 = roast(&app, &w, &w.g3, kg("1"), "0.8", &w.espresso).await;
        let c = ok(&app, t, op, cost(json!({"lotId": r3}))).await;
        assert_eq!(c["costPerKg"], json!([]));
        assert_eq!(c["complete"], json!(false));
        assert_eq!(c["missing"], json!([{"id": w.g3, "lotNumber": "PG-3", "reason": "NO_PRICE"}]));
        // Errors.
        refused(&app, t, op, json!({}), 400, "invalid_parameter", Some("lotId")).await;
        refused(&app, t, op, cost(json!({"lotId": b1, "orderId": order})), 400, "invalid_parameter", Some("orderId")).await;
        let unknown = "0190b3a0-0000-7000-8000-000000000001";
        refused(&app, t, op, cost(json!({"lotId": unknown})), 422, "resource_not_found", Some(unknown)).await;
        refused(&app, t, op, cost(json!({"orderId": unknown})), 422, "resource_not_found", Some(unknown)).await;
        refused(&app, t, op, cost(json!({"lotId": "PG-1"})), 400, "invalid_parameter", None).await;
    }
}
