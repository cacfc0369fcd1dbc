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
mod connections;
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
pub mod request_context;
pub mod request_id;
mod routes;
mod rpc;
pub mod server;
mod shape;
mod shared;
mod state;
pub mod text;
mod token;
pub mod wire;

pub use cursor::CursorCodec;
pub use error::ApiError;
pub use rate_limit::parse_setting as parse_rate_limit;
pub use routes::configure;
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
