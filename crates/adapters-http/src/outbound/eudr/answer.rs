//! Reading answers: the payload of a successful call, or the fault mapped onto [`EudrFault`]
//! by the fault's detail element name (or, where the IS sends no typed detail, its faultcode
//! and faultstring class) — never by its message text (facts sheet §9).

use chrono::{DateTime, NaiveDateTime, Utc};
use roastery_domain::dds::{EudrStatus, VerificationResult};
use roastery_ports::eudr::{DdsModification, DdsOverview, DeclarationCheck, EuError, EudrFault};

use super::ns;
use super::xml::{self, Element};

/// The code a request refused by the IS's XSD validation is reported with.
pub const SCHEMA_VALIDATION: &str = "SCHEMA_VALIDATION";

/// A call's useful answer.
#[derive(Debug)]
pub enum Reply {
    /// The body's element (`…Response`).
    Payload(Element),
    /// A `NotFoundException` fault (get operations answer it for unknown statements).
    NotFound(Vec<EuError>),
}

/// Reads an HTTP answer of status `status` with body `text`.
pub fn read(status: u16, text: &str) -> Result<Reply, EudrFault> {
    let not_soap = |why: &str| {
        EudrFault::Unavailable(format!(
            "HTTP {status}: the answer is not a SOAP envelope ({why})"
        ))
    };
    let root = xml::parse(text).map_err(|e| not_soap(&e))?;
    if !root.is(ns::SOAPENV, "Envelope") {
        return Err(not_soap("no soapenv:Envelope"));
    }
    let body = root
        .child(ns::SOAPENV, "Body")
        .ok_or_else(|| not_soap("no soapenv:Body"))?;
    let payload = body
        .children
        .first()
        .ok_or_else(|| not_soap("an empty soapenv:Body"))?;
    if payload.is(ns::SOAPENV, "Fault") {
        return fault(payload);
    }
    if !(200..300).contains(&status) {
        return Err(EudrFault::Unavailable(format!(
            "HTTP {status} without a SOAP fault"
        )));
    }
    Ok(Reply::Payload(payload.clone()))
}

/// Maps a SOAP 1.1 `Fault`. Its `faultcode`, `faultstring` and `detail` are unqualified.
fn fault(fault: &Element) -> Result<Reply, EudrFault> {
    let unqualified = |name: &str| {
        fault
            .children
            .iter()
            .find(|c| c.ns.is_none() && c.name == name)
    };
    let code = unqualified("faultcode")
        .map(|c| c.text.trim().to_owned())
        .unwrap_or_default();
    let text = unqualified("faultstring")
        .map(|c| c.text.trim().to_owned())
        .unwrap_or_default();
    let detail = unqualified("detail").and_then(|d| d.children.first());
    if let Some(detail) = detail {
        match detail.name.as_str() {
            "BusinessRulesValidationException" | "PermissionDeniedException" => {
                return Err(EudrFault::Rejected(errors_of(detail, &text)));
            }
            "NotFoundException" => return Ok(Reply::NotFound(errors_of(detail, &text))),
            "UnauthenticatedException" => return Err(EudrFault::AuthFailed(text)),
            _ => {}
        }
    }
    // No typed detail: the class is in the faultstring (JAX-WS writes the exception's name).
    if text.contains("UnauthenticatedException") {
        return Err(EudrFault::AuthFailed(text));
    }
    // faultcode is a QName; its prefix is the envelope's, whatever the server called it.
    let client_fault = code.rsplit(':').next() == Some("Client");
    if client_fault && text.contains("Unmarshalling Error") {
        return Err(EudrFault::Rejected(vec![EuError {
            code: SCHEMA_VALIDATION.to_owned(),
            field: None,
            message: text,
        }]));
    }
    Err(EudrFault::Unavailable(format!("SOAP fault {code}: {text}")))
}

/// The `error:Error`s of a typed fault; when it lists none, one error named after the fault.
fn errors_of(detail: &Element, faultstring: &str) -> Vec<EuError> {
    let mut found = Vec::new();
    detail.descendants(ns::ERROR, "Error", &mut found);
    let errors: Vec<EuError> = found
        .into_iter()
        .map(|e| EuError {
            code: e.child_text(ns::ERROR, "ID").unwrap_or_default().to_owned(),
            field: e
                .child_text(ns::ERROR, "Field")
                .filter(|f| !f.is_empty())
                .map(str::to_owned),
            message: e
                .child_text(ns::ERROR, "Message")
                .unwrap_or_default()
                .to_owned(),
        })
        .collect();
    if errors.is_empty() {
        vec![EuError {
            code: detail.name.clone(),
            field: None,
            message: faultstring.to_owned(),
        }]
    } else {
        errors
    }
}

fn unexpected(what: &str) -> EudrFault {
    EudrFault::Unavailable(format!("the answer is not the documented one: {what}"))
}

/// Checks that the payload is `{ns}name`.
fn expect<'a>(payload: &'a Element, ns: &str, name: &str) -> Result<&'a Element, EudrFault> {
    if payload.is(ns, name) {
        Ok(payload)
    } else {
        Err(unexpected(&format!(
            "expected {name}, got {}",
            payload.name
        )))
    }
}

fn required<'a>(parent: &'a Element, ns: &str, name: &str) -> Result<&'a str, EudrFault> {
    parent
        .child_text(ns, name)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| unexpected(&format!("{} has no {name}", parent.name)))
}

/// xs:dateTime: with an offset, or without one (read as UTC).
pub fn parse_date_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|at| at.and_utc())
}

/// `VerifyDeclarationResponse`.
pub fn declaration_check(payload: &Element) -> Result<DeclarationCheck, EudrFault> {
    let answer = expect(payload, ns::VERIFY, "VerifyDeclarationResponse")?;
    let result_text = required(answer, ns::VERIFY, "result")?;
    let result = VerificationResult::parse(result_text)
        .ok_or_else(|| unexpected(&format!("unknown result `{result_text}`")))?;
    let status = answer
        .child_text(ns::VERIFY, "status")
        .filter(|s| !s.is_empty())
        .map(EudrStatus::parse);
    let date_text = required(answer, ns::VERIFY, "dateTime")?;
    let checked = parse_date_time(date_text)
        .ok_or_else(|| unexpected(&format!("unreadable dateTime `{date_text}`")))?;
    Ok(DeclarationCheck {
        result,
        status,
        checked,
    })
}

/// `SubmitDdsResponse`: the uuid.
pub fn submitted_uuid(payload: &Element) -> Result<String, EudrFault> {
    let answer = expect(payload, ns::DDS, "SubmitDdsResponse")?;
    Ok(required(answer, ns::DDS, "uuid")?.to_owned())
}

/// `AmendDdsResponse` / `WithdrawDdsResponse`.
pub fn modification(payload: &Element, name: &str) -> Result<DdsModification, EudrFault> {
    let answer = expect(payload, ns::DDS, name)?;
    Ok(DdsModification {
        uuid: required(answer, ns::DDS, "uuid")?.to_owned(),
        status: EudrStatus::parse(required(answer, ns::DDS, "status")?),
    })
}

/// `GetDdsResponse` / `GetDdsByInternalReferenceResponse`: each `ddsOverviewList` (children
/// in `common`).
pub fn overviews(payload: &Element, name: &str) -> Result<Vec<DdsOverview>, EudrFault> {
    let answer = expect(payload, ns::DDS, name)?;
    answer
        .children_named(ns::DDS, "ddsOverviewList")
        .map(|item| {
            let optional = |field: &str| {
                item.child_text(ns::COMMON, field)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
            };
            Ok(DdsOverview {
                uuid: required(item, ns::COMMON, "uuid")?.to_owned(),
                internal_reference_number: optional("internalReferenceNumber").unwrap_or_default(),
                reference_number: optional("referenceNumber"),
                verification_number: optional("verificationNumber"),
                status: EudrStatus::parse(required(item, ns::COMMON, "status")?),
                rejection_reason: optional("rejectionReason"),
                date: optional("date").as_deref().and_then(parse_date_time),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(body: &str) -> String {
        format!(
            r#"<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Header><ns3:Message xmlns:ns3="http://ec.europa.eu/sanco/tracesnt/message/v1" severity="debugging"><ns3:ID>WS_REQUEST_ID</ns3:ID><ns3:Message>557060f5</ns3:Message></ns3:Message></S:Header><S:Body>{body}</S:Body></S:Envelope>"#
        )
    }

    /// The EC's own fault sample (ERRX `error4.xml`, V1 namespace of the exception).
    const BUSINESS_FAULT: &str = r#"<S:Fault xmlns:ns3="http://www.w3.org/2003/05/soap-envelope" xmlns=""><faultcode>S:Client</faultcode><faultstring>Some business rules are not met</faultstring><detail><ns5:BusinessRulesValidationException xmlns:ns4="http://ec.europa.eu/sanco/tracesnt/error/v01" xmlns="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:21" xmlns:ns5="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"><ns4:Error><ns4:ID>EUDR-REFERENCE-NUMBER-INVALID</ns4:ID><ns4:Message languageID="en">Has not allowed characters</ns4:Message><ns4:Field languageID="en">Reference number</ns4:Field></ns4:Error><ns4:Error><ns4:ID>EUDR-VERIFICATION-NUMBER-TOO-LONG</ns4:ID><ns4:Message languageID="en">Too long.</ns4:Message><ns4:Field languageID="en">Verification number</ns4:Field></ns4:Error></ns5:BusinessRulesValidationException></detail></S:Fault>"#;

    fn rejected(text: &str) -> Vec<EuError> {
        match read(500, text) {
            Err(EudrFault::Rejected(errors)) => errors,
            other => panic!("expected Rejected, got {other:?}"),
        }
    }

    #[test]
    fn a_business_rules_fault_is_rejected_with_each_error() {
        let errors = rejected(&envelope(BUSINESS_FAULT));
        assert_eq!(
            errors,
            vec![
                EuError {
                    code: "EUDR-REFERENCE-NUMBER-INVALID".into(),
                    field: Some("Reference number".into()),
                    message: "Has not allowed characters".into(),
                },
                EuError {
                    code: "EUDR-VERIFICATION-NUMBER-TOO-LONG".into(),
                    field: Some("Verification number".into()),
                    message: "Too long.".into(),
                },
            ]
        );
    }

    #[test]
    fn a_permission_fault_is_rejected_too_and_a_bare_one_is_named_after_itself() {
        let body = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>Permission denied</faultstring><detail><ns2:PermissionDeniedException xmlns:ns2="http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3" xmlns:e="http://ec.europa.eu/sanco/tracesnt/error/v01"><e:Error><e:ID>EUDR_WEBSERVICE_USER_NOT_EUDR_OPERATOR</e:ID><e:Message>Not an operator</e:Message></e:Error></ns2:PermissionDeniedException></detail></S:Fault>"#;
        let errors = rejected(&envelope(body));
        assert_eq!(errors[0].code, "EUDR_WEBSERVICE_USER_NOT_EUDR_OPERATOR");
        assert_eq!(errors[0].field, None);
        let bare = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>No</faultstring><detail><ns2:PermissionDeniedException xmlns:ns2="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"/></detail></S:Fault>"#;
        let errors = rejected(&envelope(bare));
        assert_eq!(errors[0].code, "PermissionDeniedException");
        assert_eq!(errors[0].message, "No");
    }

    #[test]
    fn an_xsd_violation_is_rejected_as_schema_validation() {
        let body = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>Unmarshalling Error: cvc-complex-type.2.4.a: Invalid content was found starting with element 'dds:comment'. </faultstring></S:Fault>"#;
        let errors = rejected(&envelope(body));
        assert_eq!(errors[0].code, SCHEMA_VALIDATION);
        assert!(errors[0].message.contains("cvc-complex-type"));
    }

    #[test]
    fn unauthenticated_faults_are_auth_failures() {
        let body = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>eu.europa.ec.sanco.tracesnt.ws.UnauthenticatedException: Authentication failed</faultstring></S:Fault>"#;
        assert!(matches!(
            read(500, &envelope(body)),
            Err(EudrFault::AuthFailed(_))
        ));
        let typed = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>x</faultstring><detail><u:UnauthenticatedException xmlns:u="urn:x"/></detail></S:Fault>"#;
        assert!(matches!(
            read(500, &envelope(typed)),
            Err(EudrFault::AuthFailed(_))
        ));
    }

    #[test]
    fn not_found_is_its_own_reply() {
        let body = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>Data not found.</faultstring><detail><d:NotFoundException xmlns:d="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"/></detail></S:Fault>"#;
        assert!(matches!(read(500, &envelope(body)), Ok(Reply::NotFound(_))));
    }

    #[test]
    fn server_faults_and_non_soap_answers_are_unavailable() {
        let body = r#"<S:Fault><faultcode>env:Server</faultcode><faultstring>InternalSystemException</faultstring></S:Fault>"#;
        assert!(matches!(
            read(500, &envelope(body)),
            Err(EudrFault::Unavailable(_))
        ));
        let client_other = r#"<S:Fault><faultcode>S:Client</faultcode><faultstring>Something else</faultstring></S:Fault>"#;
        assert!(matches!(
            read(500, &envelope(client_other)),
            Err(EudrFault::Unavailable(_))
        ));
        assert!(matches!(
            read(503, "<html><body>Service Unavailable</body></html>"),
            Err(EudrFault::Unavailable(_))
        ));
        assert!(matches!(read(502, ""), Err(EudrFault::Unavailable(_))));
        let ok_body = r#"<d:SubmitDdsResponse xmlns:d="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"><d:uuid>x</d:uuid></d:SubmitDdsResponse>"#;
        assert!(matches!(
            read(503, &envelope(ok_body)),
            Err(EudrFault::Unavailable(_))
        ));
    }

    fn payload(body: &str) -> Element {
        match read(200, &envelope(body)) {
            Ok(Reply::Payload(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_verification_answer_is_read_with_unknown_statuses_kept() {
        let check = declaration_check(&payload(
            r#"<v:VerifyDeclarationResponse xmlns:v="http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3"><v:result>EXISTING_NON_USABLE</v:result><v:status>UNDER_REVIEW</v:status><v:dateTime>2026-11-25T10:00:00.123+01:00</v:dateTime></v:VerifyDeclarationResponse>"#,
        ))
        .unwrap();
        assert_eq!(check.result, VerificationResult::ExistingNonUsable);
        assert_eq!(check.status, Some(EudrStatus::Other("UNDER_REVIEW".into())));
        assert_eq!(check.checked.to_rfc3339(), "2026-11-25T09:00:00.123+00:00");
        let none = declaration_check(&payload(
            r#"<v:VerifyDeclarationResponse xmlns:v="http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3"><v:result>NON_EXISTENT</v:result><v:dateTime>2026-11-25T10:00:00</v:dateTime></v:VerifyDeclarationResponse>"#,
        ))
        .unwrap();
        assert_eq!(none.result, VerificationResult::NonExistent);
        assert_eq!(none.status, None);
    }

    #[test]
    fn overviews_read_their_common_children() {
        let list = overviews(
            &payload(
                r#"<d:GetDdsResponse xmlns:d="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3" xmlns:c="http://ec.europa.eu/tracesnt/certificate/eudr/common/v3"><d:ddsOverviewList><c:uuid>u1</c:uuid><c:internalReferenceNumber>RST-1</c:internalReferenceNumber><c:referenceNumber>26BE7XTVCZAQ2S</c:referenceNumber><c:verificationNumber>SFFCB4Y3</c:verificationNumber><c:status>AVAILABLE</c:status><c:date>2026-11-25T10:00:00Z</c:date></d:ddsOverviewList><d:ddsOverviewList><c:uuid>u2</c:uuid><c:internalReferenceNumber>RST-2</c:internalReferenceNumber><c:status>REJECTED</c:status><c:rejectionReason>Risk</c:rejectionReason></d:ddsOverviewList></d:GetDdsResponse>"#,
            ),
            "GetDdsResponse",
        )
        .unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].reference_number.as_deref(), Some("26BE7XTVCZAQ2S"));
        assert_eq!(list[0].status, EudrStatus::Available);
        assert!(list[0].date.is_some());
        assert_eq!(list[1].status, EudrStatus::Rejected);
        assert_eq!(list[1].rejection_reason.as_deref(), Some("Risk"));
        assert_eq!(list[1].verification_number, None);
    }

    #[test]
    fn the_wrong_response_element_is_unavailable() {
        let wrong = payload(
            r#"<d:WithdrawDdsResponse xmlns:d="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"><d:uuid>u</d:uuid><d:status>WITHDRAWN</d:status></d:WithdrawDdsResponse>"#,
        );
        assert!(matches!(
            modification(&wrong, "AmendDdsResponse"),
            Err(EudrFault::Unavailable(_))
        ));
        let ok = modification(&wrong, "WithdrawDdsResponse").unwrap();
        assert_eq!(ok.status, EudrStatus::Withdrawn);
    }
}
