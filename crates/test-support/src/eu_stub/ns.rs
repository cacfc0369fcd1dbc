//! The namespaces and URIs of the EU information system's messages, as its WSDL and XSDs name them.

pub(crate) const SOAPENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";
pub(crate) const WSSE: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
pub(crate) const WSU: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
pub(crate) const BASE: &str = "http://ec.europa.eu/sanco/tracesnt/base/v4";
pub(crate) const BODY: &str = "http://ec.europa.eu/tracesnt/body/v3";
pub(crate) const DDS: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3";
pub(crate) const VERIFY: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3";
pub(crate) const COMMON: &str = "http://ec.europa.eu/tracesnt/certificate/eudr/common/v3";
pub(crate) const ERROR: &str = "http://ec.europa.eu/sanco/tracesnt/error/v01";
pub(crate) const MESSAGE: &str = "http://ec.europa.eu/sanco/tracesnt/message/v1";
pub(crate) const PASSWORD_DIGEST: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest";
pub(crate) const BASE64_BINARY: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";
