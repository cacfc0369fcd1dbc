//! The EUDR information system client against the stub EU service
//! (`roastery_test_support::eu_stub`), over HTTPS: every operation's happy path, each fault
//! class, timeouts, the rate limit, and that the key never reaches the logs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test with its message"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use roastery_adapters_http::outbound::eudr::{
    AuthKey, EudrClient, EudrEndpoint, EudrSettings, SCHEMA_VALIDATION,
};
use roastery_domain::dds::{
    ActivityType, DdsCommodity, DdsProducer, DdsStatement, EudrStatus, OperatorRole,
    VerificationResult,
};
use roastery_ports::eudr::{EudrFault, EudrSystem};
use roastery_test_support::eu_stub::{
    EuStub, EuStubConfig, Injection, StubError, SubmissionScript,
};
use rust_decimal::Decimal;

const PLOT: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"ProducerName":"Finca Ñandú & Hijos","ProducerCountry":"CO"},"geometry":{"type":"Polygon","coordinates":[[[-75.5,2.1],[-75.49,2.1],[-75.49,2.11],[-75.5,2.1]]]}}]}"#;

fn settings_for(stub: &EuStub) -> EudrSettings {
    let config = stub.config();
    EudrSettings::new(
        EudrEndpoint::parse(stub.base_url()).unwrap(),
        config.username.clone(),
        AuthKey::new(config.auth_key.clone()),
        config.client_id.clone(),
    )
    .with_operator_id(config.operator_id.clone())
    .with_extra_roots_pem(Some(stub.ca_pem().as_bytes().to_vec()))
}

fn client_for(stub: &EuStub) -> EudrClient {
    EudrClient::new(settings_for(stub)).unwrap()
}

fn statement(reference: &str) -> DdsStatement {
    DdsStatement {
        internal_reference_number: Some(reference.into()),
        activity_type: ActivityType::Import,
        country_of_activity: Some("DE".into()),
        border_cross_country: Some("NL".into()),
        comment: Some("Washed <Huila> & friends".into()),
        commodities: vec![DdsCommodity {
            position: 1,
            description_of_goods: "Lot 12 Huila washed".into(),
            net_weight_kg: Decimal::new(1_250_500, 3),
            hs_heading: "090111".into(),
            producers: vec![DdsProducer {
                position: Some(1),
                country: "CO".into(),
                name: Some("Finca Ñandú & Hijos".into()),
                geometry_geojson: PLOT.into(),
            }],
        }],
        geo_location_confidential: false,
    }
}

fn rejected_codes(fault: EudrFault) -> Vec<String> {
    match fault {
        EudrFault::Rejected(errors) => errors.into_iter().map(|e| e.code).collect(),
        other => panic!("expected Rejected, got {other:?}"),
    }
}

#[tokio::test]
async fn verification_answers_usable_non_usable_and_non_existent() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.register_declaration(
        "26BE7XTVCZAQ2S",
        "SFFCB4Y3",
        "EXISTING_USABLE",
        Some("AVAILABLE"),
    );
    stub.register_declaration(
        "25HR3TXDB21346",
        "KX9TQ2AB",
        "EXISTING_NON_USABLE",
        Some("WITHDRAWN"),
    );
    let client = client_for(&stub);

    let usable = client
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap();
    assert_eq!(usable.result, VerificationResult::ExistingUsable);
    assert_eq!(usable.status, Some(EudrStatus::Available));
    assert!((chrono::Utc::now() - usable.checked).num_seconds().abs() < 60);

    let withdrawn = client
        .verify_declaration("25HR3TXDB21346", "KX9TQ2AB")
        .await
        .unwrap();
    assert_eq!(withdrawn.result, VerificationResult::ExistingNonUsable);
    assert_eq!(withdrawn.status, Some(EudrStatus::Withdrawn));

    let unknown = client
        .verify_declaration("26BE0000000000", "NOPE1")
        .await
        .unwrap();
    assert_eq!(unknown.result, VerificationResult::NonExistent);
    assert_eq!(unknown.status, None);

    let sent = stub.requests_for("verifyDeclaration");
    assert_eq!(sent.len(), 3);
    let first = &sent[0];
    assert_eq!(first.service, "verify");
    assert_eq!(
        first.soap_action.as_deref(),
        Some("http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration")
    );
    assert_eq!(
        first.content_type.as_deref(),
        Some("text/xml; charset=utf-8")
    );
    assert_eq!(first.client_id.as_deref(), Some("eudr-test"));
    assert_eq!(first.username.as_deref(), Some("roastery-ws"));
    assert_eq!(first.operator_id, None);
    assert_eq!(first.field("referenceNumber"), Some("26BE7XTVCZAQ2S"));
    assert_eq!(first.field("verificationNumber"), Some("SFFCB4Y3"));
    assert!(
        sent.iter().all(|r| r.answer == "VerifyDeclarationResponse"),
        "{sent:?}"
    );
}

#[tokio::test]
async fn a_statement_is_submitted_polled_to_available_amended_and_withdrawn() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.set_submission_script(SubmissionScript::Available { submitted_polls: 1 });
    let client = client_for(&stub);
    let statement = statement("RST-0190AB12");

    let uuid = client
        .submit_dds(OperatorRole::Operator, &statement)
        .await
        .unwrap();
    let submitted = stub.requests_for("submitDds");
    assert_eq!(submitted.len(), 1);
    let sent = &submitted[0];
    assert_eq!(sent.answer, "SubmitDdsResponse");
    assert_eq!(
        sent.soap_action.as_deref(),
        Some("http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3/submitDds")
    );
    assert_eq!(sent.field("operatorRole"), Some("OPERATOR"));
    assert_eq!(
        sent.field("statement/comment"),
        Some("Washed <Huila> & friends")
    );
    assert_eq!(
        sent.field("statement/commodities/descriptors/goodsMeasure/netWeight"),
        Some("1250.5")
    );
    let geometry = sent
        .field("statement/commodities/producers/geometryGeojson")
        .unwrap();
    assert_eq!(STANDARD.decode(geometry).unwrap(), PLOT.as_bytes());

    let first = client.get_dds(std::slice::from_ref(&uuid)).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].uuid, uuid);
    assert_eq!(first[0].internal_reference_number, "RST-0190AB12");
    assert_eq!(first[0].status, EudrStatus::Submitted);
    assert_eq!(first[0].reference_number, None);

    let second = client.get_dds(std::slice::from_ref(&uuid)).await.unwrap();
    assert_eq!(second[0].status, EudrStatus::Available);
    let reference = second[0].reference_number.clone().unwrap();
    let verification = second[0].verification_number.clone().unwrap();
    assert_eq!(reference.len(), 14);
    assert!(reference.starts_with(&chrono::Utc::now().format("%y").to_string()));

    let check = client
        .verify_declaration(&reference, &verification)
        .await
        .unwrap();
    assert_eq!(check.result, VerificationResult::ExistingUsable);

    let by_reference = client
        .get_dds_by_internal_reference("RST-0190AB12")
        .await
        .unwrap();
    assert_eq!(by_reference.len(), 1);
    assert_eq!(by_reference[0].uuid, uuid);

    let mut changed = statement.clone();
    changed.comment = Some("Second thoughts".into());
    let amended = client.amend_dds(&uuid, &changed).await.unwrap();
    assert_eq!(amended.uuid, uuid);
    assert_eq!(amended.status, EudrStatus::Available);
    let held = stub.statement(&uuid).unwrap();
    assert_eq!(held.amendments, 1);
    assert!(
        held.fields
            .contains(&("comment".to_owned(), "Second thoughts".to_owned()))
    );

    let withdrawn = client.withdraw_dds(&uuid).await.unwrap();
    assert_eq!(withdrawn.status, EudrStatus::Withdrawn);
    let check = client
        .verify_declaration(&reference, &verification)
        .await
        .unwrap();
    assert_eq!(check.result, VerificationResult::ExistingNonUsable);
    assert_eq!(check.status, Some(EudrStatus::Withdrawn));
}

#[tokio::test]
async fn a_rejected_statement_keeps_its_reason_and_unknown_ones_read_as_empty() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.set_submission_script(SubmissionScript::Rejected {
        submitted_polls: 0,
        reason: "Risk profile: plots overlap a protected area".into(),
    });
    let client = client_for(&stub);
    let uuid = client
        .submit_dds(OperatorRole::Operator, &statement("RST-REJ"))
        .await
        .unwrap();
    let list = client.get_dds(std::slice::from_ref(&uuid)).await.unwrap();
    assert_eq!(list[0].status, EudrStatus::Rejected);
    assert_eq!(
        list[0].rejection_reason.as_deref(),
        Some("Risk profile: plots overlap a protected area")
    );
    let unknown = "0190c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87".to_owned();
    assert!(client.get_dds(&[unknown]).await.unwrap().is_empty());
    assert!(
        client
            .get_dds_by_internal_reference("RST-NEVER")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_operator_identifier_goes_with_dds_calls_only() {
    let stub = EuStub::start(EuStubConfig {
        operator_id: Some("OP-42".into()),
        ..EuStubConfig::default()
    });
    let client = client_for(&stub);
    let uuid = client
        .submit_dds(OperatorRole::Operator, &statement("RST-OP"))
        .await
        .unwrap();
    client.withdraw_dds(&uuid).await.unwrap();
    client
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap();
    let requests = stub.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].operator_id.as_deref(), Some("OP-42"));
    assert_eq!(requests[1].operator_id.as_deref(), Some("OP-42"));
    assert_eq!(requests[2].operator_id, None);

    // Another operator's identifier is not this user's.
    let mut settings = settings_for(&stub);
    settings.operator_id = Some("OP-43".into());
    let other = EudrClient::new(settings).unwrap();
    let fault = other
        .submit_dds(OperatorRole::Operator, &statement("RST-OP2"))
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::AuthFailed(_)), "{fault:?}");
}

#[tokio::test]
async fn business_rule_and_permission_faults_are_rejections_with_each_error() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.inject_once(
        "submitDds",
        Injection::BusinessRules(vec![
            StubError::new(
                "EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY",
                Some("geometryGeojson"),
                "Polygon crosses itself",
            ),
            StubError::new("EUDR_OPERATOR_EORI_FOR_ACTIVITY_MISSING", None, "No EORI"),
        ]),
    );
    stub.inject_once(
        "verifyDeclaration",
        Injection::PermissionDenied(vec![StubError::new(
            "EUDR_WEBSERVICE_USER_NOT_EUDR_OPERATOR",
            None,
            "Not an operator",
        )]),
    );
    let client = client_for(&stub);
    let fault = client
        .submit_dds(OperatorRole::Operator, &statement("RST-BR"))
        .await
        .unwrap_err();
    let EudrFault::Rejected(errors) = fault else {
        panic!("{fault:?}")
    };
    assert_eq!(errors.len(), 2);
    assert_eq!(
        errors[0].code,
        "EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY"
    );
    assert_eq!(errors[0].field.as_deref(), Some("geometryGeojson"));
    assert_eq!(errors[0].message, "Polygon crosses itself");
    assert_eq!(errors[1].code, "EUDR_OPERATOR_EORI_FOR_ACTIVITY_MISSING");
    assert_eq!(errors[1].field, None);
    assert!(stub.statements().is_empty());

    let fault = client
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap_err();
    assert_eq!(
        rejected_codes(fault),
        vec!["EUDR_WEBSERVICE_USER_NOT_EUDR_OPERATOR"]
    );
}

#[tokio::test]
async fn the_stubs_own_rules_and_lifecycle_refusals_come_back_as_rejections() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.set_submission_script(SubmissionScript::StaysSubmitted);
    let client = client_for(&stub);

    let mut not_a_collection = statement("RST-GEO");
    not_a_collection.commodities[0].producers[0].geometry_geojson =
        r#"{"type":"Point","coordinates":[1,2]}"#.into();
    let fault = client
        .submit_dds(OperatorRole::Operator, &not_a_collection)
        .await
        .unwrap_err();
    assert_eq!(
        rejected_codes(fault),
        vec!["EUDR_COMMODITIES_PRODUCER_GEO_INVALID"]
    );

    let uuid = client
        .submit_dds(OperatorRole::Operator, &statement("RST-LIFE"))
        .await
        .unwrap();
    let fault = client
        .amend_dds(&uuid, &statement("RST-LIFE"))
        .await
        .unwrap_err();
    assert_eq!(
        rejected_codes(fault),
        vec!["EUDR_API_AMEND_NOT_ALLOWED_FOR_STATUS"]
    );
    stub.age(&uuid, chrono::Duration::hours(73));
    let fault = client.withdraw_dds(&uuid).await.unwrap_err();
    assert_eq!(
        rejected_codes(fault),
        vec!["EUDR_API_AMEND_OR_WITHDRAW_DDS_NOT_POSSIBLE"]
    );
    let unknown = "0190c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87";
    let fault = client.withdraw_dds(unknown).await.unwrap_err();
    assert_eq!(rejected_codes(fault), vec!["EUDR_API_NO_DDS"]);
}

#[tokio::test]
async fn a_request_the_schema_refuses_is_a_schema_validation_rejection() {
    let stub = EuStub::start(EuStubConfig::default());
    let client = client_for(&stub);
    let mut bad = statement("RST-XSD");
    bad.commodities[0].hs_heading = "09.01".into();
    let fault = client
        .submit_dds(OperatorRole::Operator, &bad)
        .await
        .unwrap_err();
    let EudrFault::Rejected(errors) = fault else {
        panic!("{fault:?}")
    };
    assert_eq!(errors[0].code, SCHEMA_VALIDATION);
    assert!(
        errors[0].message.contains("cvc-pattern-valid"),
        "{errors:?}"
    );

    let fault = client.withdraw_dds("not-a-uuid").await.unwrap_err();
    assert_eq!(rejected_codes(fault), vec![SCHEMA_VALIDATION]);
    let fault = client
        .verify_declaration("26BE7XTVCZAQ2SX", "SFFCB4Y3")
        .await
        .unwrap_err();
    assert_eq!(rejected_codes(fault), vec![SCHEMA_VALIDATION]);
    assert!(stub.requests().iter().all(|r| {
        r.answer
            .starts_with("fault: S:Client Unmarshalling Error: cvc-")
    }));
}

#[tokio::test]
async fn refused_credentials_are_auth_failures() {
    let stub = EuStub::start(EuStubConfig::default());
    let mut wrong_key = settings_for(&stub);
    wrong_key.auth_key = AuthKey::new("not-the-key");
    let fault = EudrClient::new(wrong_key)
        .unwrap()
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::AuthFailed(_)), "{fault:?}");

    let mut wrong_user = settings_for(&stub);
    wrong_user.username = "someone-else".into();
    let fault = EudrClient::new(wrong_user)
        .unwrap()
        .get_dds_by_internal_reference("RST-1")
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::AuthFailed(_)), "{fault:?}");

    let mut wrong_client = settings_for(&stub);
    wrong_client.client_id = "eudr-repository".into();
    let fault = EudrClient::new(wrong_client)
        .unwrap()
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::AuthFailed(_)), "{fault:?}");

    stub.inject_once("getDds", Injection::AuthFailure);
    let fault = client_for(&stub)
        .get_dds(&["0190c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87".to_owned()])
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::AuthFailed(_)), "{fault:?}");

    // The right credentials pass: the refusals above were the credentials'.
    client_for(&stub)
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap();
}

#[tokio::test]
async fn not_found_on_a_read_is_an_empty_list() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.inject_once("getDds", Injection::NotFound);
    stub.inject_once("getDdsByInternalReference", Injection::NotFound);
    let client = client_for(&stub);
    let uuid = "0190c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87".to_owned();
    assert!(client.get_dds(&[uuid]).await.unwrap().is_empty());
    assert!(
        client
            .get_dds_by_internal_reference("RST-1")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        stub.requests()
            .iter()
            .all(|r| r.answer.contains("Data not found")),
        "{:?}",
        stub.requests()
    );
}

#[tokio::test]
async fn server_faults_gateway_errors_and_dropped_connections_are_unavailable() {
    let stub = EuStub::start(EuStubConfig::default());
    let client = client_for(&stub);
    for injection in [
        Injection::ServerError,
        Injection::HttpStatus(503),
        Injection::HttpStatus(502),
        Injection::DropConnection,
    ] {
        stub.inject_once("verifyDeclaration", injection.clone());
        let fault = client
            .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
            .await
            .unwrap_err();
        assert!(
            matches!(fault, EudrFault::Unavailable(_)),
            "{injection:?}: {fault:?}"
        );
    }
    // And the next call, uninjected, is answered.
    client
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap();
}

#[tokio::test]
async fn a_call_slower_than_the_timeout_is_unavailable() {
    let stub = EuStub::start(EuStubConfig::default());
    stub.inject_once("submitDds", Injection::Delay(Duration::from_secs(3)));
    let client =
        EudrClient::new(settings_for(&stub).with_timeout(Duration::from_millis(800))).unwrap();
    let started = Instant::now();
    let fault = client
        .submit_dds(OperatorRole::Operator, &statement("RST-SLOW"))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    let EudrFault::Unavailable(message) = fault else {
        panic!("{fault:?}")
    };
    assert!(message.contains("no answer within"), "{message}");
}

#[tokio::test]
async fn no_listener_and_an_untrusted_certificate_are_unavailable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let nobody = EudrClient::new(
        EudrSettings::new(
            EudrEndpoint::parse(&format!("https://127.0.0.1:{port}/tracesnt/")).unwrap(),
            "u",
            AuthKey::new("k"),
            "eudr-test",
        )
        .with_timeout(Duration::from_secs(2)),
    )
    .unwrap();
    let fault = nobody.verify_declaration("a", "bbbbb").await.unwrap_err();
    assert!(matches!(fault, EudrFault::Unavailable(_)), "{fault:?}");

    let stub = EuStub::start(EuStubConfig::default());
    let untrusted = EudrClient::new(settings_for(&stub).with_extra_roots_pem(None)).unwrap();
    let fault = untrusted
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap_err();
    assert!(matches!(fault, EudrFault::Unavailable(_)), "{fault:?}");
    assert!(stub.requests().is_empty());
}

/// Twenty calls at once take at least 19 spacings, and no one-second window at the stub sees
/// more than five of them.
#[tokio::test]
async fn calls_are_spaced_to_five_per_second() {
    let stub = EuStub::start(EuStubConfig::default());
    let client = Arc::new(client_for(&stub));
    let started = Instant::now();
    let calls = (0..20).map(|_| {
        let client = client.clone();
        async move {
            client
                .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
                .await
        }
    });
    let answers = futures_util::future::join_all(calls).await;
    let elapsed = started.elapsed();
    assert!(answers.iter().all(Result::is_ok));
    assert!(elapsed >= Duration::from_millis(3_800), "{elapsed:?}");
    assert_eq!(stub.requests().len(), 20);
    let most = stub.max_requests_per_second();
    assert!(most <= 5, "{most} calls within one second");
    assert_eq!(most, 5, "the calls should run at the limit, not below it");
}

/// A writer tracing lines are collected in.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_key_never_reaches_the_logs() {
    let stub = EuStub::start(EuStubConfig::default());
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let settings = settings_for(&stub);
    tracing::info!(?settings, "settings");
    let client = client_for(&stub);
    tracing::info!(?client, "client");
    client
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap();
    stub.inject_once("submitDds", Injection::ServerError);
    client
        .submit_dds(OperatorRole::Operator, &statement("RST-LOG"))
        .await
        .unwrap_err();
    let mut wrong = settings_for(&stub);
    wrong.auth_key = AuthKey::new("another-secret-key-value");
    EudrClient::new(wrong)
        .unwrap()
        .verify_declaration("26BE7XTVCZAQ2S", "SFFCB4Y3")
        .await
        .unwrap_err();

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The capture works: the calls were logged.
    assert!(logs.contains("verifyDeclaration"), "{logs}");
    assert!(logs.contains("submitDds"), "{logs}");
    assert!(logs.contains("redacted"), "{logs}");
    for secret in [stub.config().auth_key.as_str(), "another-secret-key-value"] {
        assert!(
            !logs.contains(secret),
            "the key {secret} was logged:\n{logs}"
        );
    }
}
