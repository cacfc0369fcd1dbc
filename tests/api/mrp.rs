//! mrp.product and mrp.order end to end: upserts, all-or-nothing batches, limits, the status
//! machine and the listing filters.

use serde_json::Value;

use crate::both_databases;
use crate::helpers::*;

const SCOPES: &str = "mrp.product mrp.order";

fn product(ext: &str, name: &str, variants: &[(&str, &str)]) -> Value {
    let variants: Vec<Value> = variants
        .iter()
        .map(|(sku, size)| json!({"sku": sku, "coffeeOptions": {"packageSize": size}}))
        .collect();
    json!({"externalId": ext, "name": name, "variants": variants})
}

fn order(ext: &str, date: &str, items: &[(&str, i64)]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|(sku, quantity)| json!({"sku": sku, "quantity": quantity}))
        .collect();
    json!({"externalId": ext, "orderDate": date, "customer": "Café Nord",
           "customerType": "WHOLESALE", "orderItems": items})
}

async fn sync(app: &TestApp, token: &str, products: Vec<Value>) -> (StatusCode, Value) {
    app.call(
        token,
        "mrp.product.syncProducts",
        json!({ "data": products }),
    )
    .await
}

async fn set_orders(app: &TestApp, token: &str, orders: Vec<Value>) -> (StatusCode, Value) {
    app.call(token, "mrp.order.setOrders", json!({ "data": orders }))
        .await
}

async fn all_products(app: &TestApp, token: &str) -> Vec<Value> {
    app.list_all(
        token,
        "mrp.product.listProducts",
        "products",
        json!({}),
        100,
    )
    .await
}

async fn all_orders(app: &TestApp, token: &str, filter: Value) -> Vec<Value> {
    app.list_all(token, "mrp.order.listOrders", "orders", filter, 100)
        .await
}

fn externals(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| i["externalId"].as_str().unwrap().to_owned())
        .collect()
}

/// (index, externalId, code) of each details entry of a bulk failure.
fn details(status: StatusCode, body: &Value) -> Vec<(u64, String, String)> {
    assert_error(status, body, 422, "bulk_operation_failed");
    body["error"]["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| {
            assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()), "{d}");
            (
                d["index"].as_u64().unwrap(),
                d["externalId"].as_str().unwrap().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn entry(index: u64, ext: &str, code: &str) -> (u64, String, String) {
    (index, ext.to_owned(), code.to_owned())
}

/// Products with SKUs GUJI-250, GUJI-1000 and HUILA-250.
async fn seed_products(app: &TestApp, token: &str) {
    let (status, body) = sync(
        app,
        token,
        vec![
            product(
                "p-guji",
                "Guji",
                &[("GUJI-250", "PACKAGE250G"), ("GUJI-1000", "PACKAGE1000G")],
            ),
            product("p-huila", "Huila", &[("HUILA-250", "PACKAGE250G")]),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

both_databases! {
    async fn products_are_created_extended_and_listed(app) {
        let token = app.token(SCOPES).await;
        let (status, body) = sync(&app, &token, vec![
            product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            product("p-2", "Huila", &[]),
        ]).await;
        assert_eq!(status, 200, "{body}");
        let synced = body["result"]["syncedProducts"].as_array().unwrap().clone();
        assert_eq!(externals(&synced), ["p-1", "p-2"]);
        let p1_id = synced[0]["id"].clone();

        // A new variant is added, the name changes, the stored variant stays.
        let (status, body) = sync(&app, &token, vec![
            product("p-2", "Huila", &[("HUILA-13", "PACKAGE13_2G")]),
            product("p-1", "Guji Natural", &[("GUJI-1000", "PACKAGE1000G")]),
        ]).await;
        assert_eq!(status, 200, "{body}");
        let synced = body["result"]["syncedProducts"].as_array().unwrap().clone();
        assert_eq!(externals(&synced), ["p-2", "p-1"]);
        assert_eq!(synced[1]["id"], p1_id);

        let products = all_products(&app, &token).await;
        assert_eq!(externals(&products), ["p-2", "p-1"], "newest first");
        assert_eq!(products[1], json!({"id": p1_id, "externalId": "p-1", "name": "Guji Natural",
            "variants": [
                {"sku": "GUJI-250", "coffeeOptions": {"packageSize": "PACKAGE250G"}},
                {"sku": "GUJI-1000", "coffeeOptions": {"packageSize": "PACKAGE1000G"}}],
            "recipe": null}));
        assert_eq!(products[0]["variants"][0]["coffeeOptions"]["packageSize"], "PACKAGE13_2G");

        // Idempotent.
        let (status, _) = sync(&app, &token, vec![
            product("p-1", "Guji Natural", &[("GUJI-1000", "PACKAGE1000G")]),
        ]).await;
        assert_eq!(status, 200);
        assert_eq!(all_products(&app, &token).await, products);
    }

    async fn a_product_batch_with_a_bad_item_stores_nothing(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let before = all_products(&app, &token).await;
        let (status, body) = sync(&app, &token, vec![
            product("p-new", "New", &[("NEW-250", "PACKAGE250G")]),
            product("p-guji", "Guji renamed", &[("GUJI-250", "PACKAGE500G")]),
            product("p-thief", "Thief", &[("HUILA-250", "PACKAGE250G")]),
            product("p-huila", "Huila renamed", &[("HUILA-500", "PACKAGE500G")]),
        ]).await;
        assert_eq!(details(status, &body), [
            entry(1, "p-guji", "resource_conflict"),
            entry(2, "p-thief", "resource_conflict"),
        ]);
        assert_eq!(all_products(&app, &token).await, before);
    }

    async fn product_shape_errors_and_limits_are_400(app) {
        let token = app.token(SCOPES).await;
        let (status, body) = sync(&app, &token, vec![
            product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            product("p-2", "Huila", &[("HUILA-250", "250G")]),
        ]).await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = sync(&app, &token, vec![json!({"externalId": "p-1"})]).await;
        assert_error(status, &body, 400, "missing_parameter");
        let (status, body) = sync(&app, &token, vec![
            json!({"externalId": "p-1", "name": "X", "variants": [{"sku": "A"}]}),
        ]).await;
        assert_error(status, &body, 400, "missing_parameter");
        let too_many: Vec<Value> = (0..51).map(|i| product(&format!("p-{i}"), "P", &[])).collect();
        let (status, body) = sync(&app, &token, too_many).await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = app.call(&token, "mrp.product.syncProducts", json!({"data": {"externalId": "p"}})).await;
        assert_error(status, &body, 400, "invalid_parameter");
        assert!(all_products(&app, &token).await.is_empty());
        let fifty: Vec<Value> = (0..50).map(|i| product(&format!("p-{i}"), "P", &[])).collect();
        let (status, body) = sync(&app, &token, fifty).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(all_products(&app, &token).await.len(), 50);
    }

    async fn orders_are_created_open_and_updated_without_their_date(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let (status, body) = set_orders(&app, &token, vec![
            order("o-1", "2026-03-01T10:00:00+02:00", &[("GUJI-250", 2)]),
        ]).await;
        assert_eq!(status, 200, "{body}");
        let id = body["result"]["syncedOrders"][0]["id"].clone();
        assert_eq!(body["result"]["syncedOrders"][0]["externalId"], "o-1");

        let mut update = order("o-1", "2030-01-01T00:00:00Z", &[("GUJI-1000", 1), ("HUILA-250", 4)]);
        update["customer"] = Value::Null;
        update["customerType"] = json!("RETAIL");
        let (status, body) = set_orders(&app, &token, vec![update.clone()]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["syncedOrders"][0]["id"], id);

        let orders = all_orders(&app, &token, json!({})).await;
        assert_eq!(orders, [json!({"id": id, "externalId": "o-1",
            "orderDate": "2026-03-01T08:00:00Z", "customer": null, "customerType": "RETAIL",
            "status": "OPEN", "orderItems": [{"sku": "GUJI-1000", "quantity": 1},
                                             {"sku": "HUILA-250", "quantity": 4}],
            "shippedDate": null, "shipments": []})]);
        // Idempotent.
        let (status, _) = set_orders(&app, &token, vec![update]).await;
        assert_eq!(status, 200);
        assert_eq!(all_orders(&app, &token, json!({})).await, orders);
    }

    async fn an_order_batch_with_bad_items_stores_nothing(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let (status, body) = set_orders(&app, &token, vec![
            order("o-open", "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]),
            order("o-busy", "2026-03-02T00:00:00Z", &[("GUJI-250", 1)]),
        ]).await;
        assert_eq!(status, 200, "{body}");
        let busy = body["result"]["syncedOrders"][1]["id"].clone();
        let (status, body) = app.call(&token, "mrp.order.setOrderStatus",
            json!({"data": {"orderId": busy, "status": "IN_PROGRESS"}})).await;
        assert_eq!(status, 200, "{body}");
        let before = all_orders(&app, &token, json!({})).await;

        let (status, body) = set_orders(&app, &token, vec![
            order("o-new", "2026-03-05T00:00:00Z", &[("GUJI-250", 1)]),
            order("o-open", "2026-03-01T00:00:00Z", &[("GUJI-250", 9)]),
            order("o-sku", "2026-03-05T00:00:00Z", &[("NOPE-1", 1)]),
            order("o-busy", "2026-03-02T00:00:00Z", &[("GUJI-250", 2)]),
            order("o-empty", "2026-03-05T00:00:00Z", &[]),
            order("o-zero", "2026-03-05T00:00:00Z", &[("GUJI-250", 0)]),
            order("o-minus", "2026-03-05T00:00:00Z", &[("GUJI-250", -3)]),
            order("o-new", "2026-03-05T00:00:00Z", &[("GUJI-250", 1)]),
        ]).await;
        assert_eq!(details(status, &body), [
            entry(2, "o-sku", "resource_not_found"),
            entry(3, "o-busy", "invalid_request"),
            entry(4, "o-empty", "invalid_request"),
            entry(5, "o-zero", "invalid_request"),
            entry(6, "o-minus", "invalid_request"),
            entry(7, "o-new", "resource_conflict"),
        ]);
        assert_eq!(all_orders(&app, &token, json!({})).await, before, "nothing of the batch is stored");
    }

    async fn order_shape_errors_and_limits_are_400(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let good = order("o-1", "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]);
        let mut cases = Vec::new();
        let mut no_date = order("o-2", "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]);
        no_date.as_object_mut().unwrap().remove("orderDate");
        cases.push((no_date, "missing_parameter"));
        let mut no_items = order("o-2", "2026-03-01T00:00:00Z", &[]);
        no_items.as_object_mut().unwrap().remove("orderItems");
        cases.push((no_items, "missing_parameter"));
        cases.push((json!({"externalId": "o-2", "orderDate": "2026-03-01T00:00:00Z",
            "orderItems": [{"sku": "GUJI-250"}]}), "missing_parameter"));
        cases.push((order("o-2", "yesterday", &[("GUJI-250", 1)]), "invalid_parameter"));
        cases.push((order("o-2", "2026-03-01T00:00:00Z", &[("GUJI-250", 1 << 31)]), "invalid_parameter"));
        let mut bad_type = order("o-2", "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]);
        bad_type["customerType"] = json!("FRIENDS");
        cases.push((bad_type, "invalid_parameter"));
        for (bad, code) in cases {
            let (status, body) = set_orders(&app, &token, vec![good.clone(), bad.clone()]).await;
            assert_error(status, &body, 400, code);
        }
        let too_many: Vec<Value> = (0..51)
            .map(|i| order(&format!("o-{i}"), "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]))
            .collect();
        let (status, body) = set_orders(&app, &token, too_many).await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = set_orders(&app, &token, vec![]).await;
        assert_error(status, &body, 400, "invalid_parameter");
        assert!(all_orders(&app, &token, json!({})).await.is_empty());

        let fifty: Vec<Value> = (0..50)
            .map(|i| order(&format!("o-{i}"), &format!("2026-03-01T00:{i:02}:00Z"), &[("GUJI-250", 1), ("HUILA-250", 2)]))
            .collect();
        let (status, body) = set_orders(&app, &token, fifty).await;
        assert_eq!(status, 200, "{body}");
        let synced = body["result"]["syncedOrders"].as_array().unwrap().clone();
        let expected: Vec<String> = (0..50).map(|i| format!("o-{i}")).collect();
        assert_eq!(externals(&synced), expected, "request order");
        let listed = all_orders(&app, &token, json!({})).await;
        let newest_first: Vec<String> = (0..50).rev().map(|i| format!("o-{i}")).collect();
        assert_eq!(externals(&listed), newest_first);
    }

    async fn order_status_follows_the_machine(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let (_, body) = set_orders(&app, &token, vec![
            order("o-1", "2026-03-01T00:00:00Z", &[("GUJI-250", 1)]),
            order("o-2", "2026-03-02T00:00:00Z", &[("GUJI-250", 1)]),
        ]).await;
        let one = body["result"]["syncedOrders"][0]["id"].clone();
        let two = body["result"]["syncedOrders"][1]["id"].clone();
        let set = |id: Value, status: &'static str| {
            app.call(&token, "mrp.order.setOrderStatus", json!({"data": {"orderId": id, "status": status}}))
        };
        let (status, body) = set(one.clone(), "COMPLETED").await;
        assert_error(status, &body, 422, "invalid_request");
        let (status, body) = set(one.clone(), "IN_PROGRESS").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["order"]["status"], "IN_PROGRESS");
        assert_eq!(body["result"]["order"]["externalId"], "o-1");
        let (status, body) = set(one.clone(), "COMPLETED").await;
        assert_eq!(body["result"]["order"]["status"], "COMPLETED", "{status} {body}");
        let (status, body) = set(one.clone(), "CANCELLED").await;
        assert_error(status, &body, 422, "invalid_request");
        let (status, body) = set(two.clone(), "CANCELLED").await;
        assert_eq!(body["result"]["order"]["status"], "CANCELLED", "{status} {body}");
        let (status, body) = set(two.clone(), "OPEN").await;
        assert_error(status, &body, 422, "invalid_request");
        let (status, body) = set(json!("0190a0b0-0000-7000-8000-000000000001"), "CANCELLED").await;
        assert_error(status, &body, 422, "resource_not_found");
        let (status, body) = set(two.clone(), "DONE").await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = set(json!("not-a-uuid"), "CANCELLED").await;
        assert_error(status, &body, 400, "invalid_parameter");
        let (status, body) = app.call(&token, "mrp.order.setOrderStatus", json!({"data": {"orderId": two}})).await;
        assert_error(status, &body, 400, "missing_parameter");
        let statuses: Vec<Value> = all_orders(&app, &token, json!({})).await
            .into_iter().map(|o| o["status"].clone()).collect();
        assert_eq!(statuses, [json!("CANCELLED"), json!("COMPLETED")]);
    }

    async fn orders_are_filtered_by_date_range_and_status(app) {
        let token = app.token(SCOPES).await;
        seed_products(&app, &token).await;
        let (_, body) = set_orders(&app, &token, (1..=5)
            .map(|d| order(&format!("o-{d}"), &format!("2026-03-0{d}T00:00:00Z"), &[("GUJI-250", 1)]))
            .collect()).await;
        let third = body["result"]["syncedOrders"][2]["id"].clone();
        let (status, _) = app.call(&token, "mrp.order.setOrderStatus",
            json!({"data": {"orderId": third, "status": "IN_PROGRESS"}})).await;
        assert_eq!(status, 200);

        let range = json!({"orderDate": {"from": "2026-03-02T00:00:00Z", "to": "2026-03-04T00:00:00Z"}});
        assert_eq!(externals(&all_orders(&app, &token, range).await), ["o-3", "o-2"]);
        let open = json!({"status": "OPEN"});
        assert_eq!(externals(&all_orders(&app, &token, open).await), ["o-5", "o-4", "o-2", "o-1"]);
        let both = json!({"status": "OPEN", "orderDate": {"from": "2026-03-02T00:00:00Z"}});
        assert_eq!(externals(&all_orders(&app, &token, both).await), ["o-5", "o-4", "o-2"]);
        let paged = app.list_all(&token, "mrp.order.listOrders", "orders", json!({}), 2).await;
        assert_eq!(externals(&paged), ["o-5", "o-4", "o-3", "o-2", "o-1"]);
        let (status, body) = app.call(&token, "mrp.order.listOrders",
            json!({"params": {"filter": {"status": "LOST"}}})).await;
        assert_error(status, &body, 400, "invalid_parameter");
    }

    async fn mrp_scopes_are_enforced(app) {
        let products_only = app.token("mrp.product").await;
        let (status, body) = set_orders(&app, &products_only, vec![]).await;
        assert_error(status, &body, 403, "access_denied");
        let orders_only = app.token("mrp.order").await;
        let (status, body) = sync(&app, &orders_only, vec![product("p", "P", &[])]).await;
        assert_error(status, &body, 403, "access_denied");
    }
}
