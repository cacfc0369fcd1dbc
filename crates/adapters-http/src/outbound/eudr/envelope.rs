//! Writing requests: one SOAP 1.1 envelope per call, with the WS-Security header, the client id
//! and (DDS service) the operator's BodyIdentity, and the body in exactly the XSD's element
//! order and namespaces (facts sheet §3–§6). Every value goes through quick-xml's writer, which
//! escapes it.

use std::io;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};
use roastery_domain::dds::{DdsCommodity, DdsProducer, DdsStatement, OperatorRole};

use super::ns;
use super::wsse::Token;

/// Which of the two services an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Dds,
    Verify,
}

impl Service {
    pub fn path(self) -> &'static str {
        match self {
            Self::Dds => ns::DDS_PATH,
            Self::Verify => ns::VERIFY_PATH,
        }
    }
}

/// One call's body.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    VerifyDeclaration {
        reference_number: &'a str,
        verification_number: &'a str,
    },
    SubmitDds {
        role: OperatorRole,
        statement: &'a DdsStatement,
    },
    AmendDds {
        uuid: &'a str,
        statement: &'a DdsStatement,
    },
    WithdrawDds {
        uuid: &'a str,
    },
    GetDds {
        uuids: &'a [String],
    },
    GetDdsByInternalReference {
        internal_reference: &'a str,
    },
}

impl Request<'_> {
    /// The WSDL operation's name.
    pub fn operation(&self) -> &'static str {
        match self {
            Self::VerifyDeclaration { .. } => "verifyDeclaration",
            Self::SubmitDds { .. } => "submitDds",
            Self::AmendDds { .. } => "amendDds",
            Self::WithdrawDds { .. } => "withdrawDds",
            Self::GetDds { .. } => "getDds",
            Self::GetDdsByInternalReference { .. } => "getDdsByInternalReference",
        }
    }

    pub fn service(&self) -> Service {
        match self {
            Self::VerifyDeclaration { .. } => Service::Verify,
            _ => Service::Dds,
        }
    }

    /// The `SOAPAction` header's value (unquoted).
    pub fn soap_action(&self) -> String {
        match self.service() {
            Service::Verify => ns::VERIFY_ACTION.to_owned(),
            Service::Dds => format!("{}{}", ns::DDS_ACTION_PREFIX, self.operation()),
        }
    }
}

/// Who calls: the header's values besides the token.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub username: &'a str,
    pub client_id: &'a str,
    /// `body:BodyIdentity/OperatorAccessIdentifier`, sent on DDS-service calls only.
    pub operator_id: Option<&'a str>,
}

/// The whole envelope of `request`.
pub fn envelope(request: &Request<'_>, caller: &Caller<'_>, token: &Token) -> io::Result<Vec<u8>> {
    let mut w = Writer::new(Vec::with_capacity(4096));
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let service = request.service();
    let mut namespaces = vec![
        ("xmlns:soapenv", ns::SOAPENV),
        ("xmlns:wsse", ns::WSSE),
        ("xmlns:wsu", ns::WSU),
        ("xmlns:base", ns::BASE),
    ];
    match service {
        Service::Dds => namespaces.extend([
            ("xmlns:body", ns::BODY),
            ("xmlns:dds", ns::DDS),
            ("xmlns:common", ns::COMMON),
        ]),
        Service::Verify => namespaces.push(("xmlns:verify", ns::VERIFY)),
    }
    w.create_element("soapenv:Envelope")
        .with_attributes(namespaces)
        .write_inner_content(|w| {
            w.create_element("soapenv:Header")
                .write_inner_content(|w| header(w, service, caller, token))?;
            w.create_element("soapenv:Body")
                .write_inner_content(|w| body(w, request))?;
            Ok(())
        })?;
    Ok(w.into_inner())
}

fn leaf(w: &mut Writer<Vec<u8>>, name: &str, text: &str) -> io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(text))?;
    Ok(())
}

fn header(
    w: &mut Writer<Vec<u8>>,
    service: Service,
    caller: &Caller<'_>,
    token: &Token,
) -> io::Result<()> {
    w.create_element("wsse:Security").write_inner_content(|w| {
        w.create_element("wsu:Timestamp")
            .with_attribute(("wsu:Id", "TS-1"))
            .write_inner_content(|w| {
                leaf(w, "wsu:Created", &token.created)?;
                leaf(w, "wsu:Expires", &token.expires)
            })?;
        w.create_element("wsse:UsernameToken")
            .with_attribute(("wsu:Id", "UT-1"))
            .write_inner_content(|w| {
                leaf(w, "wsse:Username", caller.username)?;
                w.create_element("wsse:Password")
                    .with_attribute(("Type", ns::PASSWORD_DIGEST))
                    .write_text_content(BytesText::new(&token.digest))?;
                w.create_element("wsse:Nonce")
                    .with_attribute(("EncodingType", ns::BASE64_BINARY))
                    .write_text_content(BytesText::new(&token.nonce))?;
                leaf(w, "wsu:Created", &token.created)
            })?;
        Ok(())
    })?;
    leaf(w, "base:WebServiceClientId", caller.client_id)?;
    if let (Service::Dds, Some(operator)) = (service, caller.operator_id) {
        // The body/v3 schema has no elementFormDefault: the child is unqualified.
        w.create_element("body:BodyIdentity")
            .write_inner_content(|w| leaf(w, "OperatorAccessIdentifier", operator))?;
    }
    Ok(())
}

fn body(w: &mut Writer<Vec<u8>>, request: &Request<'_>) -> io::Result<()> {
    match *request {
        Request::VerifyDeclaration {
            reference_number,
            verification_number,
        } => {
            w.create_element("verify:VerifyDeclarationRequest")
                .write_inner_content(|w| {
                    leaf(w, "verify:referenceNumber", reference_number)?;
                    leaf(w, "verify:verificationNumber", verification_number)
                })?;
        }
        Request::SubmitDds { role, statement } => {
            w.create_element("dds:SubmitDdsRequest")
                .write_inner_content(|w| {
                    leaf(w, "dds:operatorRole", role.as_str())?;
                    write_statement(w, statement)
                })?;
        }
        Request::AmendDds { uuid, statement } => {
            w.create_element("dds:AmendDdsRequest")
                .write_inner_content(|w| {
                    leaf(w, "dds:uuid", uuid)?;
                    write_statement(w, statement)
                })?;
        }
        Request::WithdrawDds { uuid } => {
            w.create_element("dds:WithdrawDdsRequest")
                .write_inner_content(|w| leaf(w, "dds:uuid", uuid))?;
        }
        Request::GetDds { uuids } => {
            w.create_element("dds:GetDdsRequest")
                .write_inner_content(|w| {
                    for uuid in uuids {
                        leaf(w, "dds:uuidList", uuid)?;
                    }
                    Ok(())
                })?;
        }
        Request::GetDdsByInternalReference { internal_reference } => {
            w.create_element("dds:GetDdsByInternalReferenceRequest")
                .write_inner_content(|w| leaf(w, "dds:internalReference", internal_reference))?;
        }
    }
    Ok(())
}

/// `dds:statement` (DueDiligenceStatementBaseType), in the XSD's order.
fn write_statement(w: &mut Writer<Vec<u8>>, statement: &DdsStatement) -> io::Result<()> {
    w.create_element("dds:statement").write_inner_content(|w| {
        if let Some(reference) = &statement.internal_reference_number {
            leaf(w, "dds:internalReferenceNumber", reference)?;
        }
        leaf(w, "dds:activityType", statement.activity_type.as_str())?;
        if let Some(country) = &statement.country_of_activity {
            leaf(w, "dds:countryOfActivity", country)?;
        }
        if let Some(country) = &statement.border_cross_country {
            leaf(w, "dds:borderCrossCountry", country)?;
        }
        if let Some(comment) = &statement.comment {
            leaf(w, "dds:comment", comment)?;
        }
        for commodity in &statement.commodities {
            write_commodity(w, commodity)?;
        }
        leaf(
            w,
            "dds:geoLocationConfidential",
            if statement.geo_location_confidential {
                "true"
            } else {
                "false"
            },
        )
    })?;
    Ok(())
}

/// `dds:commodities` (DdsCommodityType); `descriptors`' children are in `common`.
fn write_commodity(w: &mut Writer<Vec<u8>>, commodity: &DdsCommodity) -> io::Result<()> {
    w.create_element("dds:commodities")
        .write_inner_content(|w| {
            leaf(w, "dds:position", &commodity.position.to_string())?;
            w.create_element("dds:descriptors")
                .write_inner_content(|w| {
                    leaf(
                        w,
                        "common:descriptionOfGoods",
                        &commodity.description_of_goods,
                    )?;
                    w.create_element("common:goodsMeasure")
                        .write_inner_content(|w| {
                            leaf(
                                w,
                                "common:netWeight",
                                &commodity.net_weight_kg.normalize().to_string(),
                            )
                        })?;
                    Ok(())
                })?;
            leaf(w, "dds:hsHeading", &commodity.hs_heading)?;
            for producer in &commodity.producers {
                write_producer(w, producer)?;
            }
            Ok(())
        })?;
    Ok(())
}

/// `dds:producers` (DdsProducerType): `geometryGeojson` is the GeoJSON text in base64.
fn write_producer(w: &mut Writer<Vec<u8>>, producer: &DdsProducer) -> io::Result<()> {
    w.create_element("dds:producers").write_inner_content(|w| {
        if let Some(position) = producer.position {
            leaf(w, "dds:position", &position.to_string())?;
        }
        leaf(w, "dds:country", &producer.country)?;
        if let Some(name) = &producer.name {
            leaf(w, "dds:name", name)?;
        }
        leaf(
            w,
            "dds:geometryGeojson",
            &STANDARD.encode(producer.geometry_geojson.as_bytes()),
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone as _, Utc};
    use roastery_domain::dds::ActivityType;
    use rust_decimal::Decimal;

    use super::super::xml::{self, Element};
    use super::*;

    fn token() -> Token {
        let now = Utc.with_ymd_and_hms(2026, 1, 15, 10, 0, 0).unwrap();
        Token::with_nonce(now, &[7; 16], b"key")
    }

    const CALLER: Caller<'static> = Caller {
        username: "roaster <&> co",
        client_id: "eudr-test",
        operator_id: Some("OP-1"),
    };

    fn statement() -> DdsStatement {
        DdsStatement {
            internal_reference_number: Some("RST-0001".into()),
            activity_type: ActivityType::Import,
            country_of_activity: Some("DE".into()),
            border_cross_country: Some("NL".into()),
            comment: Some("beans & <more>".into()),
            commodities: vec![DdsCommodity {
                position: 1,
                description_of_goods: "Lot 12 Huila washed".into(),
                net_weight_kg: Decimal::new(1_250_000, 3),
                hs_heading: "090111".into(),
                producers: vec![
                    DdsProducer {
                        position: Some(1),
                        country: "CO".into(),
                        name: Some("Finca Ñandú".into()),
                        geometry_geojson: r#"{"type":"FeatureCollection","features":[]}"#.into(),
                    },
                    DdsProducer {
                        position: None,
                        country: "CO".into(),
                        name: None,
                        geometry_geojson: r#"{"type":"FeatureCollection","features":[]}"#.into(),
                    },
                ],
            }],
            geo_location_confidential: false,
        }
    }

    fn written(request: &Request<'_>) -> Element {
        let bytes = envelope(request, &CALLER, &token()).unwrap();
        xml::parse(std::str::from_utf8(&bytes).unwrap()).unwrap()
    }

    /// The names (namespace, local name) of an element's children, in order.
    fn names(element: &Element) -> Vec<(String, String)> {
        element
            .children
            .iter()
            .map(|c| (c.ns.clone().unwrap_or_default(), c.name.clone()))
            .collect()
    }

    fn n(ns: &str, name: &str) -> (String, String) {
        (ns.to_owned(), name.to_owned())
    }

    fn body_of(root: &Element) -> &Element {
        &root.child(ns::SOAPENV, "Body").unwrap().children[0]
    }

    #[test]
    fn the_header_has_timestamp_username_token_client_id_and_body_identity() {
        let root = written(&Request::WithdrawDds { uuid: "u" });
        assert!(root.is(ns::SOAPENV, "Envelope"));
        assert_eq!(
            names(&root),
            vec![n(ns::SOAPENV, "Header"), n(ns::SOAPENV, "Body")]
        );
        let header = root.child(ns::SOAPENV, "Header").unwrap();
        assert_eq!(
            names(header),
            vec![
                n(ns::WSSE, "Security"),
                n(ns::BASE, "WebServiceClientId"),
                n(ns::BODY, "BodyIdentity"),
            ]
        );
        let security = header.child(ns::WSSE, "Security").unwrap();
        assert_eq!(
            names(security),
            vec![n(ns::WSU, "Timestamp"), n(ns::WSSE, "UsernameToken")]
        );
        let timestamp = security.child(ns::WSU, "Timestamp").unwrap();
        assert_eq!(
            names(timestamp),
            vec![n(ns::WSU, "Created"), n(ns::WSU, "Expires")]
        );
        assert_eq!(
            timestamp.child_text(ns::WSU, "Created"),
            Some("2026-01-15T10:00:00.000Z")
        );
        assert_eq!(
            timestamp.child_text(ns::WSU, "Expires"),
            Some("2026-01-15T10:01:00.000Z")
        );
        let user = security.child(ns::WSSE, "UsernameToken").unwrap();
        assert_eq!(
            names(user),
            vec![
                n(ns::WSSE, "Username"),
                n(ns::WSSE, "Password"),
                n(ns::WSSE, "Nonce"),
                n(ns::WSU, "Created"),
            ]
        );
        assert_eq!(
            user.child_text(ns::WSSE, "Username"),
            Some("roaster <&> co")
        );
        let password = user.child(ns::WSSE, "Password").unwrap();
        assert_eq!(
            password.attributes,
            vec![("Type".to_owned(), ns::PASSWORD_DIGEST.to_owned())]
        );
        assert_eq!(password.text, token().digest);
        let nonce = user.child(ns::WSSE, "Nonce").unwrap();
        assert_eq!(
            nonce.attributes,
            vec![("EncodingType".to_owned(), ns::BASE64_BINARY.to_owned())]
        );
        assert_eq!(nonce.text, STANDARD.encode([7u8; 16]));
        assert_eq!(
            header.child_text(ns::BASE, "WebServiceClientId"),
            Some("eudr-test")
        );
        let identity = header.child(ns::BODY, "BodyIdentity").unwrap();
        assert_eq!(names(identity), vec![n("", "OperatorAccessIdentifier")]);
        assert_eq!(identity.children[0].text, "OP-1");
    }

    #[test]
    fn verify_calls_carry_no_body_identity() {
        let root = written(&Request::VerifyDeclaration {
            reference_number: "26BE7XTVCZAQ2S",
            verification_number: "SFFCB4Y3",
        });
        let header = root.child(ns::SOAPENV, "Header").unwrap();
        assert!(header.child(ns::BODY, "BodyIdentity").is_none());
        let body = body_of(&root);
        assert!(body.is(ns::VERIFY, "VerifyDeclarationRequest"));
        assert_eq!(
            names(body),
            vec![
                n(ns::VERIFY, "referenceNumber"),
                n(ns::VERIFY, "verificationNumber")
            ]
        );
        assert_eq!(
            body.child_text(ns::VERIFY, "referenceNumber"),
            Some("26BE7XTVCZAQ2S")
        );
    }

    #[test]
    fn a_submitted_statement_follows_the_xsd_order_and_namespaces() {
        let statement = statement();
        let root = written(&Request::SubmitDds {
            role: OperatorRole::Operator,
            statement: &statement,
        });
        let body = body_of(&root);
        assert!(body.is(ns::DDS, "SubmitDdsRequest"));
        assert_eq!(
            names(body),
            vec![n(ns::DDS, "operatorRole"), n(ns::DDS, "statement")]
        );
        assert_eq!(body.child_text(ns::DDS, "operatorRole"), Some("OPERATOR"));
        let st = body.child(ns::DDS, "statement").unwrap();
        assert_eq!(
            names(st),
            vec![
                n(ns::DDS, "internalReferenceNumber"),
                n(ns::DDS, "activityType"),
                n(ns::DDS, "countryOfActivity"),
                n(ns::DDS, "borderCrossCountry"),
                n(ns::DDS, "comment"),
                n(ns::DDS, "commodities"),
                n(ns::DDS, "geoLocationConfidential"),
            ]
        );
        assert_eq!(st.child_text(ns::DDS, "comment"), Some("beans & <more>"));
        assert_eq!(
            st.child_text(ns::DDS, "geoLocationConfidential"),
            Some("false")
        );
        let commodity = st.child(ns::DDS, "commodities").unwrap();
        assert_eq!(
            names(commodity),
            vec![
                n(ns::DDS, "position"),
                n(ns::DDS, "descriptors"),
                n(ns::DDS, "hsHeading"),
                n(ns::DDS, "producers"),
                n(ns::DDS, "producers"),
            ]
        );
        let descriptors = commodity.child(ns::DDS, "descriptors").unwrap();
        assert_eq!(
            names(descriptors),
            vec![
                n(ns::COMMON, "descriptionOfGoods"),
                n(ns::COMMON, "goodsMeasure")
            ]
        );
        let measure = descriptors.child(ns::COMMON, "goodsMeasure").unwrap();
        assert_eq!(names(measure), vec![n(ns::COMMON, "netWeight")]);
        assert_eq!(measure.child_text(ns::COMMON, "netWeight"), Some("1250"));
        let producers: Vec<_> = commodity.children_named(ns::DDS, "producers").collect();
        assert_eq!(
            names(producers[0]),
            vec![
                n(ns::DDS, "position"),
                n(ns::DDS, "country"),
                n(ns::DDS, "name"),
                n(ns::DDS, "geometryGeojson"),
            ]
        );
        assert_eq!(
            producers[0].child_text(ns::DDS, "name"),
            Some("Finca Ñandú")
        );
        assert_eq!(
            names(producers[1]),
            vec![n(ns::DDS, "country"), n(ns::DDS, "geometryGeojson")]
        );
        let geometry = producers[0].child_text(ns::DDS, "geometryGeojson").unwrap();
        assert_eq!(
            STANDARD.decode(geometry).unwrap(),
            br#"{"type":"FeatureCollection","features":[]}"#
        );
    }

    #[test]
    fn optional_statement_fields_are_left_out_when_absent() {
        let mut statement = statement();
        statement.internal_reference_number = None;
        statement.country_of_activity = None;
        statement.border_cross_country = None;
        statement.comment = None;
        statement.geo_location_confidential = true;
        let root = written(&Request::AmendDds {
            uuid: "9f0b6d8e-0000-4000-8000-000000000001",
            statement: &statement,
        });
        let body = body_of(&root);
        assert!(body.is(ns::DDS, "AmendDdsRequest"));
        assert_eq!(
            names(body),
            vec![n(ns::DDS, "uuid"), n(ns::DDS, "statement")]
        );
        let st = body.child(ns::DDS, "statement").unwrap();
        assert_eq!(
            names(st),
            vec![
                n(ns::DDS, "activityType"),
                n(ns::DDS, "commodities"),
                n(ns::DDS, "geoLocationConfidential"),
            ]
        );
        assert_eq!(
            st.child_text(ns::DDS, "geoLocationConfidential"),
            Some("true")
        );
    }

    #[test]
    fn withdraw_and_reads_have_their_single_elements() {
        let root = written(&Request::WithdrawDds { uuid: "u-1" });
        let body = body_of(&root);
        assert!(body.is(ns::DDS, "WithdrawDdsRequest"));
        assert_eq!(names(body), vec![n(ns::DDS, "uuid")]);

        let uuids = vec!["a".to_owned(), "b".to_owned()];
        let root = written(&Request::GetDds { uuids: &uuids });
        let body = body_of(&root);
        assert!(body.is(ns::DDS, "GetDdsRequest"));
        assert_eq!(
            names(body),
            vec![n(ns::DDS, "uuidList"), n(ns::DDS, "uuidList")]
        );

        let root = written(&Request::GetDdsByInternalReference {
            internal_reference: "RST-1",
        });
        let body = body_of(&root);
        assert!(body.is(ns::DDS, "GetDdsByInternalReferenceRequest"));
        assert_eq!(names(body), vec![n(ns::DDS, "internalReference")]);
        assert_eq!(body.child_text(ns::DDS, "internalReference"), Some("RST-1"));
    }

    #[test]
    fn soap_actions_follow_the_wsdl() {
        assert_eq!(
            Request::GetDds { uuids: &[] }.soap_action(),
            "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3/getDds"
        );
        assert_eq!(
            Request::VerifyDeclaration {
                reference_number: "a",
                verification_number: "b"
            }
            .soap_action(),
            "http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration"
        );
        assert_eq!(
            Request::WithdrawDds { uuid: "u" }.service().path(),
            "ws/EUDRDueDiligenceStatementServiceV3"
        );
    }
}
