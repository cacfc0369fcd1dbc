//! core.event: the change feed and webhooks.

use actix_web::HttpResponse;
use roastery_app::event::CreateWebhook;
use roastery_domain::webhook::Webhook;
use roastery_ports::Store;
use roastery_ports::repo::Delivery;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::outbound::webhook::ResolvingCheck;
use crate::wire::{EventDto, Instant, NoFilter, ReadRequest, WriteRequest, required};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListEventsFilter {
    /// Only events of these types (`greenLot.updated`, ...); every type when absent.
    pub types: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventsResult {
    pub events: Vec<EventDto>,
}

pub(super) async fn list_events<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListEventsFilter>>(body)?.into_parts();
    let types = filter.and_then(|f| f.types).unwrap_or_default();
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_events(&types, page)).await?;
    // Never null: on an empty page it is the cursor to poll with later.
    ctx.page(
        EventsResult {
            events: page.events.into_iter().map(Into::into).collect(),
        },
        Some(page.end),
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateWebhookData {
    /// An absolute URL with the scheme `https` (no other), at most 2,000 characters.
    #[schema(value_type = String, required = true)]
    pub url: Option<String>,
    /// Event types to send; every type when absent or empty.
    pub types: Option<Vec<String>>,
    pub description: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDto {
    pub id: Uuid,
    pub url: String,
    /// Empty: every type.
    pub types: Vec<String>,
    #[schema(required = true)]
    pub description: Option<String>,
    /// `ACTIVE` or `DISABLED` (after 5 consecutive failed events).
    pub status: &'static str,
    pub created_date: Instant,
    /// `whsec_` + base64 of 32 random bytes: the signing key. Answered only by createWebhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl WebhookDto {
    fn new(w: Webhook, with_secret: bool) -> Self {
        Self {
            id: w.id,
            url: w.url.as_str().to_owned(),
            types: w.types.iter().map(ToString::to_string).collect(),
            description: w.description,
            status: w.status.as_str(),
            created_date: Instant(w.created_date),
            secret: with_secret.then_some(w.secret),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookResult {
    pub webhook: WebhookDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhooksResult {
    pub webhooks: Vec<WebhookDto>,
}

pub(super) async fn create_webhook<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<CreateWebhookData>>(body)?.data()?;
    let cmd = CreateWebhook {
        url: required(data.url, "data.url")?,
        types: data.types.unwrap_or_default(),
        description: data.description,
    };
    let check = ResolvingCheck {
        allow_private: ctx.state.webhooks.allow_private,
    };
    let webhook = ctx.run(move |app| app.create_webhook(cmd, &check)).await?;
    ctx.ok(WebhookResult {
        webhook: WebhookDto::new(webhook, true),
    })
}

pub(super) async fn list_webhooks<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (_, pagination) = decode::<ReadRequest<NoFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_webhooks(page)).await?;
    ctx.page(
        WebhooksResult {
            webhooks: page
                .items
                .into_iter()
                .map(|w| WebhookDto::new(w, false))
                .collect(),
        },
        page.next,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteWebhookData {
    #[schema(value_type = Uuid, required = true)]
    pub id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteWebhookResult {
    /// The webhook deleted, with its deliveries.
    pub deleted_webhook_id: Uuid,
}

pub(super) async fn delete_webhook<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<DeleteWebhookData>>(body)?.data()?;
    let id = required(data.id, "data.id")?;
    ctx.run(move |app| app.delete_webhook(id)).await?;
    ctx.ok(DeleteWebhookResult {
        deleted_webhook_id: id,
    })
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDeliveriesFilter {
    #[schema(value_type = Uuid, required = true)]
    pub webhook_id: Option<Uuid>,
}

/// One event sent (or being sent) to one webhook.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryDto {
    pub id: Uuid,
    pub event_id: Uuid,
    /// Attempts made so far.
    pub attempt: u32,
    /// `PENDING` (waiting for an attempt), `DELIVERED` or `FAILED`.
    pub status: &'static str,
    /// The receiver's answer to the last attempt.
    #[schema(required = true)]
    pub http_status: Option<u16>,
    /// Why the last attempt failed.
    #[schema(required = true)]
    pub error: Option<String>,
    pub created_date: Instant,
}

impl From<Delivery> for DeliveryDto {
    fn from(d: Delivery) -> Self {
        Self {
            id: d.id,
            event_id: d.event_id,
            attempt: d.attempt,
            status: d.status.as_str(),
            http_status: d.http_status,
            error: d.error,
            created_date: Instant(d.created_date),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveriesResult {
    pub deliveries: Vec<DeliveryDto>,
}

pub(super) async fn list_deliveries<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListDeliveriesFilter>>(body)?.into_parts();
    let webhook_id = required(
        required(filter, "params.filter")?.webhook_id,
        "params.filter.webhookId",
    )?;
    let page = ctx.page_request(&pagination)?;
    let page = ctx
        .run(move |app| app.list_deliveries(webhook_id, page))
        .await?;
    ctx.page(
        DeliveriesResult {
            deliveries: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
