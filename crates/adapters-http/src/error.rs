//! The one table from errors to HTTP status and `error.code`.
//!
//! Domain rules reach this adapter whole, as a [`Rejection`] holding the domain error: its
//! [`Violation`] category picks the status and code in [`violation_status`], its message is shown,
//! and the error itself stays on the [`ApiError`] so tests can name the exact rule. Transport
//! failures (content type, JSON, method, auth, limits) are raised here. Internal failures are
//! logged with their cause and answered without it.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use roastery_domain::Violation;
use roastery_domain::submission::SubmissionError;
use roastery_ports::eudr::EudrFault;
use roastery_ports::{AppError, Rejection, StoreError};
use serde::Serialize;
use utoipa::ToSchema;

/// An error answer: status, stable code, message and, for bulk calls, one entry per failing item.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Option<Vec<ErrorDetail>>,
    /// Details of another shape: the problems of an EUDR statement, the errors the EU
    /// information system answered.
    pub other_details: Option<Box<serde_json::Value>>,
    pub retry_after: Option<u64>,
    /// The domain error answered, when the answer is a broken rule; never serialised.
    pub rejection: Option<Rejection>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetail {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    pub code: &'static str,
    pub message: String,
}

/// `{"ok": false, "error": {...}}`
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorEnvelope<'a> {
    pub ok: bool,
    pub error: ErrorBody<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody<'a> {
    pub code: &'a str,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<&'a [ErrorDetail]>,
    /// Details of another shape (EUDR problems and the EU information system's errors).
    #[serde(rename = "details", skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub other_details: Option<&'a serde_json::Value>,
}

/// Status and code of each category of broken rule.
pub fn violation_status(violation: Violation) -> (StatusCode, &'static str) {
    match violation {
        Violation::MissingParameter => (StatusCode::BAD_REQUEST, "missing_parameter"),
        Violation::InvalidParameter => (StatusCode::BAD_REQUEST, "invalid_parameter"),
        Violation::UnsupportedUnit => (StatusCode::BAD_REQUEST, "unsupported_unit"),
        Violation::UnsupportedCurrency => (StatusCode::BAD_REQUEST, "unsupported_currency"),
        Violation::NotFound => (StatusCode::UNPROCESSABLE_ENTITY, "resource_not_found"),
        Violation::BusinessRule => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
        Violation::Conflict => (StatusCode::UNPROCESSABLE_ENTITY, "resource_conflict"),
        Violation::InvalidWeight => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_weight"),
        Violation::InvalidPrice => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_price"),
    }
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            other_details: None,
            retry_after: None,
            rejection: None,
        }
    }

    /// The EU information system is not configured (no endpoint, username and key).
    pub fn eudr_not_configured() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "eudr_not_configured",
            "the EU information system is not configured (set ROASTERY_EUDR_ENDPOINT, \
             ROASTERY_EUDR_USERNAME and ROASTERY_EUDR_AUTH_KEY_FILE)",
        )
    }

    /// What the EU information system refused or failed to answer.
    pub fn eudr(fault: EudrFault) -> Self {
        match fault {
            EudrFault::Rejected(errors) => {
                let details: Vec<serde_json::Value> = errors
                    .iter()
                    .map(|e| {
                        serde_json::json!({"code": e.code, "field": e.field, "message": e.message})
                    })
                    .collect();
                Self {
                    other_details: Some(Box::new(serde_json::Value::Array(details))),
                    ..Self::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "eudr_rejected",
                        "the EU information system refused the request (see details)",
                    )
                }
            }
            EudrFault::AuthFailed(why) => Self::new(
                StatusCode::BAD_GATEWAY,
                "eudr_auth_failed",
                format!("the EU information system refused Roastery's credentials: {why}"),
            ),
            EudrFault::Unavailable(why) => Self::new(
                StatusCode::BAD_GATEWAY,
                "eudr_unavailable",
                format!("the EU information system could not be reached: {why}"),
            ),
        }
    }

    /// A broken domain rule; `field`, when given, is the request field it concerns and leads
    /// the message.
    pub fn rejected(rejection: Rejection, field: Option<&str>) -> Self {
        let message = match field {
            Some(field) => format!("{field}: {rejection}"),
            None => rejection.message(),
        };
        Self {
            rejection: Some(rejection.clone()),
            ..Self::violation(rejection.violation(), message)
        }
    }

    pub fn violation(violation: Violation, message: impl Into<String>) -> Self {
        let (status, code) = violation_status(violation);
        Self::new(status, code, message)
    }

    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_json", message)
    }

    /// A request the transport refuses: content type, size, plain HTTP.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    pub fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::violation(Violation::InvalidParameter, message)
    }

    pub fn missing_parameter(field: &str) -> Self {
        Self::violation(Violation::MissingParameter, format!("{field} is required"))
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "invalid_request", message)
    }

    pub fn not_found_path(path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "resource_not_found",
            format!("no such path: {path}; operations live under /rpc/v1/"),
        )
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_authentication", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "access_denied", message)
    }

    pub fn too_many_requests(retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after.max(1)),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_requests",
                "rate limit exceeded; retry after the time in the Retry-After header",
            )
        }
    }

    /// An unexpected failure: logged with its cause, answered without it.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "an internal error occurred; it was logged",
        )
    }
}

impl From<AppError> for ApiError {
    fn from(err: AppError) -> Self {
        match err {
            AppError::Rejected(r) => {
                let problems = match r.rule::<SubmissionError>() {
                    Some(SubmissionError::Problems(problems)) => {
                        serde_json::to_value(problems).ok().map(Box::new)
                    }
                    _ => None,
                };
                Self {
                    other_details: problems,
                    ..Self::rejected(r, None)
                }
            }
            AppError::Bulk(items) => {
                let details: Vec<ErrorDetail> = items
                    .into_iter()
                    .map(|item| ErrorDetail {
                        index: item.index,
                        external_id: item.external_id,
                        code: violation_status(item.rejection.violation()).1,
                        message: item.rejection.message(),
                    })
                    .collect();
                Self {
                    details: Some(details),
                    ..Self::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "bulk_operation_failed",
                        err_count_message(),
                    )
                }
            }
            AppError::Eudr(fault) => Self::eudr(fault),
            AppError::Unauthenticated(m) => Self::unauthenticated(m),
            AppError::Forbidden(m) => Self::forbidden(m),
            AppError::Store(StoreError::Duplicate(cause)) => {
                // A unique index caught a concurrent duplicate that the use case's own check
                // could not yet see.
                tracing::info!(%cause, "unique constraint refused a concurrent duplicate");
                Self::violation(
                    Violation::Conflict,
                    "a record with the same unique key was stored concurrently",
                )
            }
            AppError::Store(e @ (StoreError::Unavailable(_) | StoreError::Contention)) => {
                tracing::warn!(error = %e, "store unavailable");
                Self {
                    retry_after: Some(1),
                    ..Self::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "server_error",
                        "the service is busy or its database unavailable; retry shortly",
                    )
                }
            }
            AppError::Store(e @ StoreError::Internal(_)) => Self::internal(e),
        }
    }
}

fn err_count_message() -> &'static str {
    "one or more items of the batch failed; nothing was applied (see details)"
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let envelope = ErrorEnvelope {
            ok: false,
            error: ErrorBody {
                code: self.code,
                message: &self.message,
                details: self.details.as_deref(),
                other_details: self.other_details.as_deref(),
            },
        };
        let mut response = HttpResponse::build(self.status);
        if let Some(seconds) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"roastery\""),
            ));
        }
        response.json(envelope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roastery_domain::order::OrderError;
    use roastery_domain::project::ProjectError;
    use roastery_ports::ItemFailure;

    #[test]
    fn every_violation_has_its_status_and_code() {
        let table = [
            (Violation::MissingParameter, 400, "missing_parameter"),
            (Violation::InvalidParameter, 400, "invalid_parameter"),
            (Violation::UnsupportedUnit, 400, "unsupported_unit"),
            (Violation::UnsupportedCurrency, 400, "unsupported_currency"),
            (Violation::NotFound, 422, "resource_not_found"),
            (Violation::BusinessRule, 422, "invalid_request"),
            (Violation::Conflict, 422, "resource_conflict"),
            (Violation::InvalidWeight, 422, "invalid_weight"),
            (Violation::InvalidPrice, 422, "invalid_price"),
        ];
        for (violation, status, code) in table {
            let (s, c) = violation_status(violation);
            assert_eq!((s.as_u16(), c), (status, code), "{violation:?}");
        }
    }

    #[test]
    fn bulk_failures_carry_one_detail_per_item_with_its_own_code() {
        let err = ApiError::from(AppError::Bulk(vec![ItemFailure {
            index: 3,
            external_id: Some("o-3".into()),
            rejection: Rejection::new(OrderError::UnknownSkus {
                external_id: "o-3".into(),
                skus: vec!["X".into()],
            }),
        }]));
        assert_eq!(
            (err.status.as_u16(), err.code),
            (422, "bulk_operation_failed")
        );
        let details = err.details.unwrap();
        assert_eq!(
            (details[0].index, details[0].code),
            (3, "resource_not_found")
        );
    }

    #[test]
    fn internal_errors_hide_their_cause() {
        let err = ApiError::from(AppError::Store(StoreError::Internal("secret sql".into())));
        assert_eq!((err.status.as_u16(), err.code), (500, "server_error"));
        assert!(!err.message.contains("secret"));
    }

    #[test]
    fn a_rejected_request_keeps_its_domain_error() {
        let broken = ProjectError::DuplicateName("Q3".into());
        let err = ApiError::from(AppError::from(broken.clone()));
        assert_eq!((err.status.as_u16(), err.code), (422, "resource_conflict"));
        assert_eq!(err.message, broken.to_string());
        assert_eq!(
            err.rejection.as_ref().and_then(Rejection::rule),
            Some(&broken)
        );
    }
}
