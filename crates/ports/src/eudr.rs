//! The EU's EUDR information system (IS), as the use cases see it: a port that files, amends,
//! withdraws and reads due diligence statements and verifies others' (V3 services).
//!
//! The SOAP client that implements it lives in the HTTP adapter's outbound room; nothing here
//! knows SOAP, XML or HTTP. Every call may take up to the client's timeout, so callers never hold
//! a database transaction across one.

use std::future::Future;

use chrono::{DateTime, Utc};
use roastery_domain::dds::{DdsStatement, EudrStatus, OperatorRole, VerificationResult};

/// What `verifyDeclaration` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationCheck {
    pub result: VerificationResult,
    /// The statement's status in the IS (set for existing statements).
    pub status: Option<EudrStatus>,
    /// The IS's time of the answer (`dateTime`).
    pub checked: DateTime<Utc>,
}

/// One statement as `getDds` / `getDdsByInternalReference` list it (`OverviewType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsOverview {
    pub uuid: String,
    pub internal_reference_number: String,
    /// Set once the statement is `AVAILABLE`.
    pub reference_number: Option<String>,
    pub verification_number: Option<String>,
    pub status: EudrStatus,
    pub rejection_reason: Option<String>,
    pub date: Option<DateTime<Utc>>,
}

/// What `amendDds` and `withdrawDds` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsModification {
    pub uuid: String,
    pub status: EudrStatus,
}

/// One `error:Error` of a typed fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EuError {
    /// The EU error id (`EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY`).
    pub code: String,
    pub field: Option<String>,
    pub message: String,
}

/// Why a call did not succeed. Faults are keyed on the fault's detail element (or, for
/// authentication, its faultstring), never on message text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EudrFault {
    /// A typed business-rule fault (`BusinessRulesValidationException`,
    /// `PermissionDeniedException`), or a request the IS refused as malformed (XSD): what it
    /// said, error by error.
    #[error("the EU information system refused the request: {}", describe(.0))]
    Rejected(Vec<EuError>),
    /// `UnauthenticatedException`: username, authentication key, client id or operator
    /// identifier refused.
    #[error("the EU information system refused the credentials: {0}")]
    AuthFailed(String),
    /// Timeout, connection or TLS failure, HTTP 5xx without a typed fault, an answer that is
    /// not the documented SOAP.
    #[error("the EU information system is unavailable: {0}")]
    Unavailable(String),
}

fn describe(errors: &[EuError]) -> String {
    errors
        .iter()
        .map(|e| format!("{} ({})", e.code, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The IS's V3 operations Roastery uses. Implementations respect the IS's rate limit themselves
/// (at most 5 calls/s per instance) and never log the authentication key.
pub trait EudrSystem: Send + Sync + 'static {
    /// `verifyDeclaration`: does this pair exist, and may it be used? `NON_EXISTENT` is an
    /// answer, not a fault.
    fn verify_declaration(
        &self,
        reference_number: &str,
        verification_number: &str,
    ) -> impl Future<Output = Result<DeclarationCheck, EudrFault>> + Send;

    /// `submitDds`: the new statement's uuid.
    fn submit_dds(
        &self,
        role: OperatorRole,
        statement: &DdsStatement,
    ) -> impl Future<Output = Result<String, EudrFault>> + Send;

    /// `amendDds`: replaces the statement `uuid` whole.
    fn amend_dds(
        &self,
        uuid: &str,
        statement: &DdsStatement,
    ) -> impl Future<Output = Result<DdsModification, EudrFault>> + Send;

    /// `withdrawDds`.
    fn withdraw_dds(
        &self,
        uuid: &str,
    ) -> impl Future<Output = Result<DdsModification, EudrFault>> + Send;

    /// `getDds` for 1..=100 uuids; uuids the IS does not know (yet) are left out.
    fn get_dds(
        &self,
        uuids: &[String],
    ) -> impl Future<Output = Result<Vec<DdsOverview>, EudrFault>> + Send;

    /// `getDdsByInternalReference`; an unknown reference answers an empty list.
    fn get_dds_by_internal_reference(
        &self,
        internal_reference: &str,
    ) -> impl Future<Output = Result<Vec<DdsOverview>, EudrFault>> + Send;
}
