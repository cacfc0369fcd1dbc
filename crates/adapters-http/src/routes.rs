//! The routes of the service and what wraps every call: request id, context and log line, metrics,
//! the connection count while shutting down and HSTS; health, metrics, the token endpoint, the
//! docs page, the OpenAPI document and the operations under `/rpc/v1/`.

use std::time::Instant;

use actix_web::dev::Service;
use actix_web::http::ConnectionType;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, web};
use futures_util::FutureExt;
use roastery_ports::Store;

use crate::connections::Connections;
use crate::error;
use crate::request_context::{Answer, InRequest, RequestContext};
use crate::state::AppState;
use crate::{docs_page, metrics, openapi, request_id, rpc, token, wire};

/// Registers every route of the service.
pub fn configure<S: Store>(cfg: &mut web::ServiceConfig, state: web::Data<AppState<S>>) {
    let metrics = state.metrics.clone();
    let mut scope = web::scope("")
        .wrap_fn(move |req, srv| {
            let started = Instant::now();
            let id = request_id::of(req.headers());
            let operation = metrics::operation_label(req.path());
            let request =
                RequestContext::new(id.clone(), operation, req.method().clone(), req.path());
            let metrics = metrics.clone();
            let connections = req
                .app_data::<web::Data<Connections>>()
                .map(|c| c.clone().into_inner());
            let in_flight = connections
                .as_ref()
                .zip(req.peer_addr())
                .map(|(c, peer)| c.enter(peer));
            InRequest::new(request.clone(), srv.call(req)).map(move |res| {
                drop(in_flight);
                let elapsed = started.elapsed();
                res.map(|mut res| {
                    let status = res.status();
                    if let Some(metrics) = &metrics {
                        metrics.record(operation, status, elapsed);
                    }
                    request.answered(Answer {
                        status: status.as_u16(),
                        latency_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                    });
                    {
                        let _in = request.enter();
                        tracing::info!("request");
                    }
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
    let scope = scope.service(rpc).default_service(web::to(rpc::not_found));
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
