//! Webhook rows are measured as stored when created, and read back as stored: a row today's
//! rules would refuse still lists and is delivered to (api-decisions §13; a row refused on read
//! would answer 500 to every listing and stop the delivery loop).

use std::time::Duration;

use serde_json::json;

use super::*;

both_databases! {
    async fn a_url_too_long_once_percent_encoded_is_refused_at_creation(app) {
        let token = app.token(ALL_SCOPES).await;
        // 426 characters as sent, 2,423 as stored.
        let url = format!("https://93.184.216.34/{}", "é".repeat(400));
        assert!(url.chars().count() < 2_000);
        let (s, b) = app.call(&token, "core.event.createWebhook", json!({"data": {"url": url}})).await;
        assert_error(s, &b, 400, "invalid_parameter");
        assert!(b["error"]["message"].as_str().unwrap().contains("as stored"), "{b}");
        let (s, b) = app.call(&token, "core.event.listWebhooks", json!({})).await;
        assert_eq!(s, 200, "{b}");
        // Non-ASCII that fits once encoded is accepted and answered encoded.
        let url = format!("https://93.184.216.34/{}", "é".repeat(100));
        let (s, b) = app.call(&token, "core.event.createWebhook", json!({"data": {"url": url}})).await;
        assert_eq!(s, 200, "{b}");
        assert!(b["result"]["webhook"]["url"].as_str().unwrap().contains("%C3%A9"), "{b}");
    }

    async fn a_stored_url_today_s_rules_refuse_still_lists_and_delivers(app, config: trusting_receivers) {
        let receiver = Receiver::start(0, Duration::ZERO);
        let token = app.token(ALL_SCOPES).await;
        let hook = create_webhook(&app, &token, &receiver.url).await;
        let hook_id = id(&hook);
        // As an older release (or an operator) could have stored it: 2,000+ characters.
        let stored = format!("{}?{}", receiver.url, "%C3%A9".repeat(400));
        assert!(stored.len() > 2_000);
        let n = roastery_test_support::database::execute(
            &app.database_url,
            &format!("UPDATE webhooks SET url = '{stored}' WHERE id = '{hook_id}'"),
        );
        assert_eq!(n, 1);
        let listed = app.list_all(&token, "core.event.listWebhooks", "webhooks", json!({}), 10).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["url"], stored.as_str());
        ok(&app, &token, "core.location.importLocation", json!({"data": {"name": "Hamburg"}})).await;
        let got = receiver.wait_for(|r| !r.is_empty()).await;
        assert_eq!(got.len(), 1, "{got:?}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let d = deliveries(&app, &token, &hook_id).await;
            if d.first().is_some_and(|d| d["status"] == "DELIVERED") {
                break;
            }
            assert!(Instant::now() < deadline, "{d:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
