//! actix-web adapter: the RPC routes, envelopes, the error table, the OAuth2 token endpoint,
//! bearer authentication and the HTTPS server.
//!
//! No SQL and no business rule lives here: handlers decode a request, call one use case of
//! `roastery_ports::Roastery` and encode its answer.

mod auth;
mod body;
pub mod cursor;
mod decode;
pub mod error;
pub mod fuzzing;
pub mod openapi;
mod ops;
pub mod rate_limit;
mod rpc;
pub mod server;
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

pub use cursor::CursorCodec;
pub use error::ApiError;
pub use rate_limit::parse_setting as parse_rate_limit;
pub use server::{ServerLimits, build as build_server};
pub use state::AppState;

/// Names of every operation the API serves.
pub fn operation_names() -> Vec<&'static str> {
    ops::Operation::ALL.iter().map(|op| op.name()).collect()
}

/// Registers every route of the service.
pub fn configure<S: Store>(cfg: &mut web::ServiceConfig, state: web::Data<AppState<S>>) {
    cfg.app_data(state).service(
        web::scope("")
            .wrap_fn(|req, srv| {
                let started = Instant::now();
                let method = req.method().clone();
                let path = req.path().to_owned();
                let connections = req
                    .app_data::<web::Data<server::Connections>>()
                    .map(|c| c.clone().into_inner());
                let in_flight = connections
                    .as_ref()
                    .zip(req.peer_addr())
                    .map(|(c, peer)| c.enter(peer));
                srv.call(req).map(move |res| {
                    drop(in_flight);
                    if let Ok(res) = &res {
                        tracing::info!(
                            %method,
                            %path,
                            status = res.status().as_u16(),
                            micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
                            "request"
                        );
                    }
                    res.map(|mut res| {
                        if connections.is_some_and(|c| c.shutting_down()) {
                            res.response_mut()
                                .head_mut()
                                .set_connection_type(ConnectionType::Close);
                        }
                        res.headers_mut().insert(
                            header::STRICT_TRANSPORT_SECURITY,
                            HeaderValue::from_static("max-age=31536000"),
                        );
                        res
                    })
                })
            })
            .route("/healthz", web::get().to(health::<S>))
            .route("/oauth2/token", web::route().to(token::token::<S>))
            .route("/rpc/v1/openapi.json", web::get().to(openapi_json))
            // Any path under /rpc/v1/ (empty, or with further segments) names an operation or
            // none: unknown ones answer 405 like any unknown operation.
            .route("/rpc/v1/{operation:.*}", web::route().to(rpc::rpc::<S>))
            .default_service(web::to(not_found)),
    );
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

async fn not_found(req: HttpRequest, payload: web::Payload) -> Result<HttpResponse, ApiError> {
    // Drained only so the connection stays usable; a short wait is enough.
    let _ = body::read_body(payload, body::MAX_BODY, std::time::Duration::from_secs(5)).await;
    Err(ApiError::not_found_path(req.path()))
}
