//! actix-web adapter: the RPC routes, envelopes, the error table, the OAuth2 token endpoint,
//! bearer authentication and the HTTPS server.
//!
//! No SQL and no business rule lives here: handlers decode a request, call one use case of
//! `roastery_app::Roastery` and encode its answer.

pub mod artisan;
mod auth;
#[doc(hidden)]
pub mod bench_support;
mod body;
mod call;
mod client_secret;
pub mod cursor;
mod decode;
pub mod docs_page;
pub mod error;
pub mod fuzzing;
pub mod html;
pub mod listing;
pub mod metrics;
pub mod openapi;
mod ops;
pub mod outbound;
pub mod rate_limit;
pub mod request_id;
mod rpc;
pub mod server;
mod shared;
mod state;
pub mod text;
mod token;
pub mod wire;

use std::time::Instant;

use actix_web::dev::Service;
use actix_web::http::ConnectionType;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::FutureExt;
use roastery_ports::Store;
use tracing::Instrument;

pub use cursor::CursorCodec;
pub use error::ApiError;
pub use rate_limit::parse_setting as parse_rate_limit;
pub use server::{ServerLimits, build as build_server};
pub use state::AppState;

/// The `result` of `inventory.trace.getDueDiligence` for `report`, as the API encodes it (for
/// the command line), coordinates with the digits they were sent with.
pub fn due_diligence_result_json(
    report: roastery_domain::due_diligence::DueDiligenceReport,
) -> Result<String, ApiError> {
    let result = ops::due_diligence_result(report)?;
    serde_json::to_string_pretty(&result).map_err(ApiError::internal)
}

/// The `result` of `mrp.plan.getNetRequirements` for `plan`, as the API encodes it (for the
/// command line).
pub fn net_requirements_result_json(plan: roastery_app::plan::Plan) -> Result<String, ApiError> {
    let result = ops::net_requirements_result(plan);
    serde_json::to_string_pretty(&result).map_err(ApiError::internal)
}

/// Names of every operation the API serves.
pub fn operation_names() -> Vec<&'static str> {
    ops::Operation::ALL.iter().map(|op| op.name()).collect()
}

/// Registers every route of the service.
pub fn configure<S: Store>(cfg: &mut web::ServiceConfig, state: web::Data<AppState<S>>) {
    let metrics = state.metrics.clone();
    let mut scope = web::scope("")
        .wrap_fn(move |req, srv| {
            let started = Instant::now();
            let id = request_id::of(req.headers());
            let operation = metrics::operation_label(req.path());
            let span = request_id::span(&id, operation, req.method().as_str(), req.path());
            let metrics = metrics.clone();
            let connections = req
                .app_data::<web::Data<server::Connections>>()
                .map(|c| c.clone().into_inner());
            let in_flight = connections
                .as_ref()
                .zip(req.peer_addr())
                .map(|(c, peer)| c.enter(peer));
            srv.call(req).instrument(span.clone()).map(move |res| {
                drop(in_flight);
                let elapsed = started.elapsed();
                res.map(|mut res| {
                    let status = res.status();
                    if let Some(metrics) = &metrics {
                        metrics.record(operation, status, elapsed);
                    }
                    span.record("status", status.as_u16());
                    span.record(
                        "latency_us",
                        u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                    );
                    span.in_scope(|| tracing::info!("request"));
                    if connections.is_some_and(|c| c.shutting_down()) {
                        res.response_mut()
                            .head_mut()
                            .set_connection_type(ConnectionType::Close);
                    }
                    let headers = res.headers_mut();
                    headers.insert(
                        header::STRICT_TRANSPORT_SECURITY,
                        HeaderValue::from_static("max-age=31536000"),
                    );
                    headers.insert(request_id::HEADER, id);
                    res
                })
            })
        })
        .route("/healthz", web::get().to(health::<S>))
        .route("/oauth2/token", web::route().to(token::token::<S>))
        .route("/docs", web::get().to(docs_page::page));
    if state.metrics.is_some() {
        scope = scope.route("/metrics", web::get().to(metrics_page::<S>));
    }
    // Any path under /rpc/v1/ (empty, or with further segments) names an operation or none:
    // unknown ones answer 405 like any unknown operation. A static prefix, not a path pattern:
    // a pattern is a regular expression run on every call.
    let rpc = web::scope(rpc::PREFIX)
        .route("/openapi.json", web::get().to(openapi_json))
        .default_service(web::to(rpc::rpc::<S>));
    let scope = scope.service(rpc).default_service(web::to(not_found));
    cfg.app_data(state).service(scope);
}

async fn metrics_page<S: Store>(state: web::Data<AppState<S>>) -> HttpResponse {
    match &state.metrics {
        Some(metrics) => metrics::response(metrics, state.app.store().pool_state()),
        None => HttpResponse::NotFound().finish(),
    }
}

async fn health<S: Store>(state: web::Data<AppState<S>>) -> HttpResponse {
    match state.run(|app| app.ping()).await {
        Ok(()) => HttpResponse::Ok().json(wire::Envelope {
            ok: true,
            result: HealthDto { status: "ok" },
            meta: wire::NoMeta {},
        }),
        Err(err) => {
            tracing::warn!(error = %err, "health check failed");
            HttpResponse::ServiceUnavailable().json(error::ErrorEnvelope {
                ok: false,
                error: error::ErrorBody {
                    code: "server_error",
                    message: "the database is not reachable",
                    details: None,
                    other_details: None,
                },
            })
        }
    }
}

#[derive(serde::Serialize)]
struct HealthDto {
    status: &'static str,
}

/// The OpenAPI document, built once.
async fn openapi_json() -> HttpResponse {
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let json = DOCUMENT.get_or_init(|| {
        openapi::document()
            .to_pretty_json()
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    });
    HttpResponse::Ok()
        .content_type("application/json")
        .body(json.clone())
}

pub(crate) async fn not_found(
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    // Drained only so the connection stays usable; a short wait is enough.
    let _ = body::read_body(payload, body::MAX_BODY, std::time::Duration::from_secs(5)).await;
    Err(ApiError::not_found_path(req.path()))
}
