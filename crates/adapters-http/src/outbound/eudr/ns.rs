//! Namespaces, paths and SOAPAction values of the IS's V3 services (facts sheet §1–§3).

pub const SOAPENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";
pub const WSSE: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
pub const WSU: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
pub const BASE: &str = "http://ec.europa.eu/sanco/tracesnt/base/v4";
pub const BODY: &str = "http://ec.europa.eu/tracesnt/body/v3";
pub const DDS: &str = "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3";
pub const VERIFY: &str = "http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3";
pub const COMMON: &str = "http://ec.europa.eu/tracesnt/certificate/eudr/common/v3";
pub const ERROR: &str = "http://ec.europa.eu/sanco/tracesnt/error/v01";

/// `wsse:Password/@Type` of a digest password.
pub const PASSWORD_DIGEST: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest";
/// `wsse:Nonce/@EncodingType`.
pub const BASE64_BINARY: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";

/// The DDS service, under the environment's base URL.
pub const DDS_PATH: &str = "ws/EUDRDueDiligenceStatementServiceV3";
/// The verification service, under the environment's base URL.
pub const VERIFY_PATH: &str = "ws/EUDRVerifyDeclarationServiceV3";

/// The SOAPAction of a DDS-service operation is this prefix and the operation's name.
pub const DDS_ACTION_PREFIX: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3/";
/// `verifyDeclaration`'s SOAPAction (not under the verify namespace).
pub const VERIFY_ACTION: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration";
