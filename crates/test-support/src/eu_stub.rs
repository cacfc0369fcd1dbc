//! A stand-in for the EU's EUDR information system (V3 DDS and verification services), for
//! tests: an HTTPS server on `127.0.0.1:0` with its own self-signed certificate.
//!
//! It checks every request the way the real JAX-WS server would (facts sheet
//! `shared/spec/eudr-information-system.md`): the `Content-Type` (else HTTP 415), the SOAP 1.1
//! envelope, the `SOAPAction`, the WS-Security header (Timestamp; UsernameToken with the
//! configured username, a digest password recomputed here from the configured key, a nonce
//! never seen before, Created within 5 minutes), `base:WebServiceClientId`, the DDS service's
//! `body:BodyIdentity`, and the body's element names, namespaces, order, cardinality and simple
//! types (`schema.rs`). A structurally wrong request gets the XSD-violation `S:Client` fault
//! ("Unmarshalling Error: cvc-…"), bad credentials the `UnauthenticatedException` fault.
//!
//! Behaviour is scriptable: verification pairs ([`EuStub::register_declaration`]); what
//! becomes of submitted statements ([`SubmissionScript`]); faults and transport failures
//! injected per operation ([`Injection`]). Every request is logged ([`ReceivedRequest`]) with
//! its arrival time and its parsed fields, so tests can assert what was sent and how fast.
//!
//! ```no_run
//! use roastery_test_support::eu_stub::{EuStub, EuStubConfig};
//! let stub = EuStub::start(EuStubConfig::default());
//! // client settings: endpoint stub.base_url(), CA PEM stub.ca_pem(), and the config's
//! // username, auth_key and client_id.
//! ```

mod ns;
mod schema;
mod xml;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use sha1::{Digest as _, Sha1};

use ns::*;
use xml::{Node, Out, parent, text, with_attributes};

const DDS_ACTION_PREFIX: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3/";
const VERIFY_ACTION: &str =
    "http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration";
/// The DDS service's path under the base URL.
pub const DDS_SERVICE: &str = "ws/EUDRDueDiligenceStatementServiceV3";
/// The verification service's path under the base URL.
pub const VERIFY_SERVICE: &str = "ws/EUDRVerifyDeclarationServiceV3";

/// How far a request's Created may be from the stub's clock.
const CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(5);
/// Amend and withdraw are allowed this long after submission.
const CHANGE_WINDOW: chrono::Duration = chrono::Duration::hours(72);

/// Whom the stub accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EuStubConfig {
    pub username: String,
    /// The authentication key the password digest is recomputed with.
    pub auth_key: String,
    /// The only `WebServiceClientId` accepted.
    pub client_id: String,
    /// When set, DDS-service calls must carry this `BodyIdentity/OperatorAccessIdentifier`
    /// (a user serving several operators); when unset, any BodyIdentity is unknown.
    pub operator_id: Option<String>,
}

impl Default for EuStubConfig {
    fn default() -> Self {
        Self {
            username: "roastery-ws".into(),
            auth_key: "stub-Authentication-Key+/=".into(),
            client_id: "eudr-test".into(),
            operator_id: None,
        }
    }
}

/// The six operations the stub serves.
pub const OPERATIONS: [&str; 6] = [
    "verifyDeclaration",
    "submitDds",
    "amendDds",
    "withdrawDds",
    "getDds",
    "getDdsByInternalReference",
];

/// What becomes of statements submitted from now on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmissionScript {
    /// `getDds` answers `SUBMITTED` this many times, then `AVAILABLE` with generated
    /// reference and verification numbers (0: available at the first poll).
    Available { submitted_polls: u32 },
    /// `getDds` answers `SUBMITTED` this many times, then `REJECTED` with `reason`.
    Rejected {
        submitted_polls: u32,
        reason: String,
    },
    /// Always `SUBMITTED`.
    StaysSubmitted,
}

impl Default for SubmissionScript {
    fn default() -> Self {
        Self::Available { submitted_polls: 1 }
    }
}

/// One `error:Error` of an injected fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubError {
    pub id: String,
    pub field: Option<String>,
    pub message: String,
}

impl StubError {
    pub fn new(id: &str, field: Option<&str>, message: &str) -> Self {
        Self {
            id: id.into(),
            field: field.map(Into::into),
            message: message.into(),
        }
    }
}

/// Something to do instead of (or before) the normal answer to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injection {
    /// `BusinessRulesValidationException` with these errors (after the request's checks).
    BusinessRules(Vec<StubError>),
    /// `PermissionDeniedException` with these errors.
    PermissionDenied(Vec<StubError>),
    /// `NotFoundException` ("Data not found.").
    NotFound,
    /// The `UnauthenticatedException` fault, whatever the credentials.
    AuthFailure,
    /// An untyped `S:Server` fault (`InternalSystemException`).
    ServerError,
    /// This HTTP status with an HTML page, no SOAP (e.g. 503 from a gateway).
    HttpStatus(u16),
    /// Waits this long before handling the request normally.
    Delay(Duration),
    /// Starts an answer and drops the connection mid-way.
    DropConnection,
    /// Handles the request as usual (a submitted statement is kept), then drops the connection
    /// instead of answering: the IS got the call, the caller never hears of it.
    LoseAnswer,
}

/// One request as the stub received it.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    /// When it arrived (monotonic), for rate checks.
    pub at: Instant,
    pub received: DateTime<Utc>,
    /// The operation its body names (`submitDds`…), or `unknown`.
    pub operation: String,
    /// `verify` or `dds`, from the path.
    pub service: String,
    /// The `SOAPAction` header, unquoted.
    pub soap_action: Option<String>,
    pub content_type: Option<String>,
    pub username: Option<String>,
    pub client_id: Option<String>,
    /// `BodyIdentity/OperatorAccessIdentifier`, when sent.
    pub operator_id: Option<String>,
    /// The body element's leaf texts by path of local names (`statement/commodities/hsHeading`).
    pub fields: Vec<(String, String)>,
    /// The raw request.
    pub body: String,
    /// What the stub answered: the response element's name, `fault: …`, `http 503`, `dropped`.
    pub answer: String,
}

impl ReceivedRequest {
    /// The first field at `path`.
    pub fn field(&self, path: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    /// Every field at `path`, in order.
    pub fn fields_at(&self, path: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// A statement the stub holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubDds {
    pub uuid: String,
    pub internal_reference: String,
    pub activity_type: String,
    pub status: String,
    pub reference_number: Option<String>,
    pub verification_number: Option<String>,
    pub rejection_reason: Option<String>,
    pub submitted: DateTime<Utc>,
    pub updated: DateTime<Utc>,
    /// `getDds` polls that named it.
    pub polls: u32,
    /// Amendments accepted.
    pub amendments: u32,
    pub script: SubmissionScript,
    /// The `statement` element's fields as last submitted or amended.
    pub fields: Vec<(String, String)>,
}

struct State {
    config: EuStubConfig,
    declarations: HashMap<(String, String), (String, Option<String>)>,
    statements: Vec<StubDds>,
    script: SubmissionScript,
    injections: HashMap<String, VecDeque<(Injection, Option<usize>)>>,
    requests: Vec<ReceivedRequest>,
    nonces: HashSet<String>,
}

/// The running stub; stops when dropped.
pub struct EuStub {
    base_url: String,
    ca_pem: String,
    /// Holds `ca.pem`, for settings that take a file (`ROASTERY_EUDR_CA_FILE`).
    ca_dir: tempfile::TempDir,
    config: EuStubConfig,
    state: Arc<Mutex<State>>,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for EuStub {
    fn drop(&mut self) {
        // Sends the stop at once; the server's thread ends with it.
        drop(self.handle.stop(false));
    }
}

impl EuStub {
    /// Starts a stub accepting `config`'s credentials, on its own thread and runtime.
    pub fn start(config: EuStubConfig) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let generated = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .expect("stub certificate");
        let ca_pem = generated.cert.pem();
        let key =
            rustls::pki_types::PrivateKeyDer::Pkcs8(generated.signing_key.serialize_der().into());
        let tls = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![generated.cert.der().clone()], key)
            .expect("stub TLS configuration");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("stub listener");
        let port = listener.local_addr().expect("stub address").port();
        let state = Arc::new(Mutex::new(State {
            config: config.clone(),
            declarations: HashMap::new(),
            statements: Vec::new(),
            script: SubmissionScript::default(),
            injections: HashMap::new(),
            requests: Vec::new(),
            nonces: HashSet::new(),
        }));
        let data = web::Data::from(state.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let server = actix_web::HttpServer::new(move || {
                    actix_web::App::new()
                        .app_data(data.clone())
                        .app_data(web::PayloadConfig::new(64 * 1024 * 1024))
                        .route("/tracesnt/ws/{service}", web::post().to(handle))
                })
                .workers(2)
                .shutdown_timeout(1)
                .listen_rustls_0_23(listener, tls)
                .expect("stub server")
                .run();
                tx.send(server.handle()).ok();
                server.await.ok();
            });
        });
        let handle = rx.recv().expect("stub server started");
        let ca_dir = tempfile::tempdir().expect("stub certificate directory");
        std::fs::write(ca_dir.path().join("ca.pem"), &ca_pem).expect("stub certificate file");
        Self {
            base_url: format!("https://127.0.0.1:{port}/tracesnt/"),
            ca_pem,
            ca_dir,
            config,
            state,
            handle,
        }
    }

    /// `https://127.0.0.1:PORT/tracesnt/`: the services are under it, as on the EU's hosts.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The stub's self-signed certificate (PEM), to trust as an extra root.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A file holding [`EuStub::ca_pem`] (for `ROASTERY_EUDR_CA_FILE`); removed with the stub.
    pub fn ca_file(&self) -> std::path::PathBuf {
        self.ca_dir.path().join("ca.pem")
    }

    pub fn config(&self) -> &EuStubConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `verifyDeclaration` of this pair answers `result` (`EXISTING_USABLE`…) and `status`.
    /// Unregistered pairs answer from the submitted statements, else `NON_EXISTENT`.
    pub fn register_declaration(
        &self,
        reference_number: &str,
        verification_number: &str,
        result: &str,
        status: Option<&str>,
    ) {
        self.lock().declarations.insert(
            (reference_number.to_owned(), verification_number.to_owned()),
            (result.to_owned(), status.map(str::to_owned)),
        );
    }

    /// What becomes of statements submitted from now on.
    pub fn set_submission_script(&self, script: SubmissionScript) {
        self.lock().script = script;
    }

    /// The next call of `operation` gets `injection`.
    pub fn inject_once(&self, operation: &str, injection: Injection) {
        self.inject(operation, injection, Some(1));
    }

    /// The next `times` calls of `operation` (every call when `None`) get `injection`.
    pub fn inject(&self, operation: &str, injection: Injection, times: Option<usize>) {
        self.lock()
            .injections
            .entry(operation.to_owned())
            .or_default()
            .push_back((injection, times));
    }

    pub fn clear_injections(&self) {
        self.lock().injections.clear();
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.lock().requests.clone()
    }

    /// Requests of one operation.
    pub fn requests_for(&self, operation: &str) -> Vec<ReceivedRequest> {
        self.lock()
            .requests
            .iter()
            .filter(|r| r.operation == operation)
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        self.lock().requests.clear();
    }

    /// The most requests that arrived within any one second (a window starting at each
    /// arrival).
    pub fn max_requests_per_second(&self) -> usize {
        let times: Vec<Instant> = self.lock().requests.iter().map(|r| r.at).collect();
        max_in_window(&times, Duration::from_secs(1))
    }

    /// The statement `uuid`.
    pub fn statement(&self, uuid: &str) -> Option<StubDds> {
        self.lock()
            .statements
            .iter()
            .find(|s| s.uuid == uuid)
            .cloned()
    }

    /// Every statement, in submission order.
    pub fn statements(&self) -> Vec<StubDds> {
        self.lock().statements.clone()
    }

    /// Sets a statement's status (e.g. `GROUPED`, `ARCHIVED`) as if the IS had changed it.
    pub fn set_status(&self, uuid: &str, status: &str) {
        if let Some(s) = self.lock().statements.iter_mut().find(|s| s.uuid == uuid) {
            s.status = status.to_owned();
        }
    }

    /// Moves a statement's submission back by `by` (to pass the 72-hour window).
    pub fn age(&self, uuid: &str, by: chrono::Duration) {
        if let Some(s) = self.lock().statements.iter_mut().find(|s| s.uuid == uuid) {
            s.submitted -= by;
        }
    }
}

/// The most instants within any window of `width` that starts at one of them.
pub fn max_in_window(times: &[Instant], width: Duration) -> usize {
    let mut sorted = times.to_vec();
    sorted.sort();
    let mut most = 0;
    let mut end = 0;
    for (start, first) in sorted.iter().enumerate() {
        while end < sorted.len() && sorted[end].duration_since(*first) < width {
            end += 1;
        }
        most = most.max(end - start);
    }
    most
}

/// The operation a body element asks for.
fn operation_of(payload: &Node) -> String {
    let name = match payload.name.as_str() {
        "VerifyDeclarationRequest" => "verifyDeclaration",
        "SubmitDdsRequest" => "submitDds",
        "AmendDdsRequest" => "amendDds",
        "WithdrawDdsRequest" => "withdrawDds",
        "GetDdsRequest" => "getDds",
        "GetDdsByInternalReferenceRequest" => "getDdsByInternalReference",
        _ => "unknown",
    };
    name.to_owned()
}

fn expected_action(operation: &str) -> String {
    if operation == "verifyDeclaration" {
        VERIFY_ACTION.to_owned()
    } else {
        format!("{DDS_ACTION_PREFIX}{operation}")
    }
}

fn service_of_operation(operation: &str) -> &'static str {
    if operation == "verifyDeclaration" {
        "verify"
    } else {
        "dds"
    }
}

/// What a call ends in.
enum Answer {
    Ok(Out, String),
    Fault {
        code: &'static str,
        string: String,
        detail: Option<Out>,
    },
    Http(u16, String),
    Drop,
}

fn unauthenticated(why: &str) -> Answer {
    Answer::Fault {
        code: "S:Client",
        string: format!("UnauthenticatedException: authentication failed ({why})"),
        detail: None,
    }
}

fn schema_fault(text: String) -> Answer {
    Answer::Fault {
        code: "S:Client",
        string: format!("Unmarshalling Error: {text} "),
        detail: None,
    }
}

fn typed_fault(
    service_ns: &str,
    element: &'static str,
    string: &str,
    errors: &[StubError],
) -> Answer {
    let errors = errors
        .iter()
        .map(|e| {
            let mut out = vec![
                text("err:ID", e.id.clone()),
                message_like("err:Message", &e.message),
            ];
            if let Some(field) = &e.field {
                out.push(message_like("err:Field", field));
            }
            parent("err:Error", out)
        })
        .collect();
    let (code, detail_name) = match element {
        "BusinessRulesValidationException" => ("S:Client", "svc:BusinessRulesValidationException"),
        "PermissionDeniedException" => ("S:Client", "svc:PermissionDeniedException"),
        _ => ("S:Client", "svc:NotFoundException"),
    };
    Answer::Fault {
        code,
        string: string.to_owned(),
        detail: Some(with_attributes(
            detail_name,
            vec![
                ("xmlns:svc", service_ns.to_owned()),
                ("xmlns:err", ERROR.to_owned()),
            ],
            errors,
        )),
    }
}

/// A text element with `languageID="en"`, as `error:Message` and `error:Field` are written.
fn message_like(name: &'static str, value: &str) -> Out {
    Out::Leaf(
        name,
        vec![("languageID", "en".to_owned())],
        value.to_owned(),
    )
}

fn business(service_ns: &str, errors: &[StubError]) -> Answer {
    typed_fault(
        service_ns,
        "BusinessRulesValidationException",
        "Some business rules are not met",
        errors,
    )
}

async fn handle(
    state: web::Data<Mutex<State>>,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let arrived = Instant::now();
    let now = Utc::now();
    let service = match path.as_str() {
        "EUDRDueDiligenceStatementServiceV3" => "dds",
        "EUDRVerifyDeclarationServiceV3" => "verify",
        _ => return HttpResponse::NotFound().finish(),
    };
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let soap_action = header("soapaction").map(|a| a.trim().trim_matches('"').to_owned());
    let content_type = header("content-type");
    let text_body = String::from_utf8_lossy(&body).into_owned();
    let parsed = xml::parse(&text_body);
    let envelope = parsed.as_ref().ok();
    let soap_header = envelope.and_then(|e| e.child(SOAPENV, "Header"));
    let payload = envelope
        .and_then(|e| e.child(SOAPENV, "Body"))
        .and_then(|b| b.children.first());
    let operation = payload
        .map(operation_of)
        .unwrap_or_else(|| "unknown".into());
    let mut fields = Vec::new();
    if let Some(payload) = payload {
        payload.leaves("", &mut fields);
    }
    let security = soap_header.and_then(|h| h.child(WSSE, "Security"));
    let token = security.and_then(|s| s.child(WSSE, "UsernameToken"));
    let identity = soap_header
        .and_then(|h| h.child(BODY, "BodyIdentity"))
        .and_then(|b| b.unqualified_child("OperatorAccessIdentifier"))
        .map(|n| n.text.clone());
    let index = {
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        st.requests.push(ReceivedRequest {
            at: arrived,
            received: now,
            operation: operation.clone(),
            service: service.to_owned(),
            soap_action: soap_action.clone(),
            content_type: content_type.clone(),
            username: token
                .and_then(|t| t.child(WSSE, "Username"))
                .map(|n| n.text.clone()),
            client_id: soap_header
                .and_then(|h| h.child(BASE, "WebServiceClientId"))
                .map(|n| n.text.clone()),
            operator_id: identity.clone(),
            fields: fields.clone(),
            body: text_body.clone(),
            answer: String::new(),
        });
        st.requests.len() - 1
    };
    let injection = {
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        take_injection(&mut st, &operation)
    };
    if let Some(Injection::Delay(wait)) = &injection {
        actix_rt::time::sleep(*wait).await;
    }
    let answer = match injection {
        Some(Injection::DropConnection) => Answer::Drop,
        Some(Injection::LoseAnswer) => {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            // What it would have answered is dropped with the connection.
            drop(serve(
                &mut st,
                service,
                soap_action.as_deref(),
                content_type.as_deref(),
                parsed.as_ref().map_err(String::clone),
                &operation,
                None,
                now,
            ));
            Answer::Drop
        }
        Some(Injection::HttpStatus(code)) => Answer::Http(
            code,
            "<html><body><h1>Service Unavailable</h1></body></html>".into(),
        ),
        injection => {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            serve(
                &mut st,
                service,
                soap_action.as_deref(),
                content_type.as_deref(),
                parsed.as_ref().map_err(String::clone),
                &operation,
                injection,
                now,
            )
        }
    };
    let (response, summary) = respond(answer, service, now);
    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(logged) = st.requests.get_mut(index) {
        logged.answer = summary;
    }
    response
}

fn take_injection(st: &mut State, operation: &str) -> Option<Injection> {
    let queue = st.injections.get_mut(operation)?;
    let (injection, remaining) = queue.front_mut()?;
    let taken = injection.clone();
    if let Some(n) = remaining {
        *n = n.saturating_sub(1);
        if *n == 0 {
            queue.pop_front();
        }
    }
    Some(taken)
}

#[allow(clippy::too_many_arguments)]
fn serve(
    st: &mut State,
    service: &str,
    soap_action: Option<&str>,
    content_type: Option<&str>,
    parsed: Result<&Node, String>,
    operation: &str,
    injection: Option<Injection>,
    now: DateTime<Utc>,
) -> Answer {
    // JAX-WS answers a SOAP 1.1 endpoint's wrong media type with 415, no envelope.
    let media_ok = content_type.is_some_and(|ct| {
        let lower = ct.to_ascii_lowercase();
        let mut parts = lower.split(';').map(str::trim);
        parts.next() == Some("text/xml")
            && parts.any(|p| {
                p.replace(' ', "") == "charset=utf-8" || p.replace(' ', "") == "charset=\"utf-8\""
            })
    });
    if !media_ok {
        return Answer::Http(415, "Unsupported Content-Type".into());
    }
    let envelope = match parsed {
        Ok(envelope) => envelope,
        Err(e) => return schema_fault(format!("Couldn't parse the request: {e}")),
    };
    if !envelope.is(SOAPENV, "Envelope") {
        return Answer::Fault {
            code: "S:VersionMismatch",
            string: format!(
                "Couldn't create SOAP message. Expected Envelope in namespace {SOAPENV}, but got {}",
                envelope.qualified()
            ),
            detail: None,
        };
    }
    let Some(body) = envelope.child(SOAPENV, "Body") else {
        return schema_fault(
            "cvc-complex-type.2.4.b: The content of element 'Envelope' is not complete.".into(),
        );
    };
    let Some(payload) = body.children.first() else {
        return schema_fault("the soapenv:Body is empty".into());
    };
    if body.children.len() > 1 {
        return schema_fault("the soapenv:Body holds more than one element".into());
    }
    if operation == "unknown" || service_of_operation(operation) != service {
        return Answer::Fault {
            code: "S:Client",
            string: format!(
                "Cannot find dispatch method for {{{}}}{}",
                payload.ns.as_deref().unwrap_or_default(),
                payload.name
            ),
            detail: None,
        };
    }
    if soap_action != Some(expected_action(operation).as_str()) {
        return Answer::Fault {
            code: "S:Client",
            string: format!(
                "Cannot find dispatch method for SOAPAction {:?} (expected {})",
                soap_action.unwrap_or_default(),
                expected_action(operation)
            ),
            detail: None,
        };
    }
    let header = envelope.child(SOAPENV, "Header");
    if let Err(why) = check_security(st, header, now) {
        return unauthenticated(&why);
    }
    let client_id = header
        .and_then(|h| h.child(BASE, "WebServiceClientId"))
        .map(|n| n.text.trim().to_owned());
    if client_id.as_deref() != Some(st.config.client_id.as_str()) {
        return unauthenticated("unknown web service client id");
    }
    let service_ns = if service == "verify" { VERIFY } else { DDS };
    if service == "dds" {
        let identity = header.and_then(|h| h.child(BODY, "BodyIdentity"));
        match (identity, &st.config.operator_id) {
            (Some(identity), expected) => {
                let children: Vec<&Node> = identity.children.iter().collect();
                let [only] = children.as_slice() else {
                    return schema_fault(
                        "cvc-complex-type.2.4.b: BodyIdentity must hold exactly one identifier"
                            .into(),
                    );
                };
                if only.ns.is_some() {
                    return schema_fault(format!(
                        "cvc-complex-type.2.4.a: Invalid content was found starting with element '{}'. One of '{{OperatorAccessIdentifier, AuthorityActivityAccessIdentifier, OrganicControlBodyAccessIdentifier, OtherBodyAccessIdentifier}}' is expected.",
                        only.qualified()
                    ));
                }
                if only.name != "OperatorAccessIdentifier"
                    || expected.as_deref() != Some(only.text.trim())
                {
                    return unauthenticated("unknown operator access identifier");
                }
            }
            (None, Some(_)) => {
                return typed_fault(
                    DDS,
                    "PermissionDeniedException",
                    "Permission denied",
                    &[StubError::new(
                        "EUDR_WEBSERVICE_USER_FROM_MANY_OPERATOR",
                        None,
                        "The user acts for several operators: name one in BodyIdentity.",
                    )],
                );
            }
            (None, None) => {}
        }
    }
    if let Err(text) = schema::check_request(operation, payload) {
        return schema_fault(text);
    }
    match injection {
        Some(Injection::BusinessRules(errors)) => return business(service_ns, &errors),
        Some(Injection::PermissionDenied(errors)) => {
            return typed_fault(
                service_ns,
                "PermissionDeniedException",
                "Permission denied",
                &errors,
            );
        }
        Some(Injection::NotFound) => {
            return typed_fault(DDS, "NotFoundException", "Data not found.", &[]);
        }
        Some(Injection::AuthFailure) => return unauthenticated("injected"),
        Some(Injection::ServerError) => {
            return Answer::Fault {
                code: "S:Server",
                string: "InternalSystemException".into(),
                detail: None,
            };
        }
        _ => {}
    }
    match operation {
        "verifyDeclaration" => verify(st, payload, now),
        "submitDds" => submit(st, payload, now),
        "amendDds" => amend(st, payload, now),
        "withdrawDds" => withdraw(st, payload, now),
        "getDds" => get_dds(st, payload),
        _ => get_by_reference(st, payload),
    }
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn check_security(st: &mut State, header: Option<&Node>, now: DateTime<Utc>) -> Result<(), String> {
    let security = header
        .and_then(|h| h.child(WSSE, "Security"))
        .ok_or("no wsse:Security header")?;
    let timestamp = security
        .child(WSU, "Timestamp")
        .ok_or("no wsu:Timestamp (the policy includes a timestamp)")?;
    let created = timestamp
        .child(WSU, "Created")
        .and_then(|n| parse_time(&n.text))
        .ok_or("no readable Timestamp/Created")?;
    let expires = timestamp
        .child(WSU, "Expires")
        .and_then(|n| parse_time(&n.text))
        .ok_or("no readable Timestamp/Expires")?;
    if expires <= created {
        return Err("the timestamp expires before it is created".into());
    }
    if (created - now).abs() > CLOCK_SKEW {
        return Err("the timestamp is more than 5 minutes off".into());
    }
    if now > expires + CLOCK_SKEW {
        return Err("the message has expired".into());
    }
    let token = security
        .child(WSSE, "UsernameToken")
        .ok_or("no wsse:UsernameToken")?;
    let username = token
        .child(WSSE, "Username")
        .map(|n| n.text.trim())
        .ok_or("no Username")?;
    let password = token.child(WSSE, "Password").ok_or("no Password")?;
    if password.attribute("Type") != Some(PASSWORD_DIGEST) {
        return Err("the password is not a PasswordDigest".into());
    }
    let nonce = token.child(WSSE, "Nonce").ok_or("no Nonce")?;
    if nonce
        .attribute("EncodingType")
        .is_some_and(|t| t != BASE64_BINARY)
    {
        return Err("the nonce is not Base64Binary".into());
    }
    let nonce_text = nonce.text.trim();
    let nonce_bytes = STANDARD
        .decode(nonce_text)
        .map_err(|_| "the nonce is not base64")?;
    let created_node = token
        .child(WSU, "Created")
        .ok_or("no UsernameToken/Created")?;
    let token_created = parse_time(&created_node.text).ok_or("unreadable UsernameToken/Created")?;
    if (token_created - now).abs() > CLOCK_SKEW {
        return Err("the token was created more than 5 minutes off".into());
    }
    let mut sha = Sha1::new();
    sha.update(&nonce_bytes);
    sha.update(created_node.text.as_bytes());
    sha.update(st.config.auth_key.as_bytes());
    let expected = STANDARD.encode(sha.finalize());
    if username != st.config.username || password.text.trim() != expected {
        return Err("username or password digest refused".into());
    }
    if !st.nonces.insert(nonce_text.to_owned()) {
        return Err("the nonce was used before".into());
    }
    Ok(())
}

fn child_text<'a>(node: &'a Node, ns: &str, name: &str) -> Option<&'a str> {
    node.child(ns, name).map(|n| n.text.trim())
}

fn stamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn verify(st: &State, payload: &Node, now: DateTime<Utc>) -> Answer {
    let reference = child_text(payload, VERIFY, "referenceNumber").unwrap_or_default();
    let verification = child_text(payload, VERIFY, "verificationNumber").unwrap_or_default();
    let found = st
        .declarations
        .get(&(reference.to_owned(), verification.to_owned()))
        .cloned()
        .or_else(|| {
            st.statements
                .iter()
                .find(|s| {
                    s.reference_number.as_deref() == Some(reference)
                        && s.verification_number.as_deref() == Some(verification)
                })
                .map(|s| {
                    let usable = matches!(s.status.as_str(), "AVAILABLE" | "ARCHIVED");
                    let result = if usable {
                        "EXISTING_USABLE"
                    } else {
                        "EXISTING_NON_USABLE"
                    };
                    (result.to_owned(), Some(s.status.clone()))
                })
        });
    let (result, status) = found.unwrap_or_else(|| ("NON_EXISTENT".to_owned(), None));
    let mut children = vec![text("svc:result", result)];
    if let Some(status) = status {
        children.push(text("svc:status", status));
    }
    children.push(text("svc:dateTime", stamp(now)));
    Answer::Ok(
        with_attributes(
            "svc:VerifyDeclarationResponse",
            vec![("xmlns:svc", VERIFY.to_owned())],
            children,
        ),
        "VerifyDeclarationResponse".into(),
    )
}

/// Business rules the stub applies to a statement: each producer's geometry must be a GeoJSON
/// FeatureCollection.
fn statement_rules(statement: &Node) -> Vec<StubError> {
    let mut errors = Vec::new();
    for commodity in statement
        .children
        .iter()
        .filter(|c| c.is(DDS, "commodities"))
    {
        for producer in commodity.children.iter().filter(|c| c.is(DDS, "producers")) {
            let encoded: String = child_text(producer, DDS, "geometryGeojson")
                .unwrap_or_default()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let collection = STANDARD
                .decode(encoded)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .filter(|v| {
                    v.get("type").and_then(|t| t.as_str()) == Some("FeatureCollection")
                        && v.get("features").is_some_and(|f| f.is_array())
                });
            if collection.is_none() {
                errors.push(StubError::new(
                    "EUDR_COMMODITIES_PRODUCER_GEO_INVALID",
                    Some("geometryGeojson"),
                    "The geolocation is not a GeoJSON FeatureCollection.",
                ));
            }
        }
    }
    errors
}

fn submit(st: &mut State, payload: &Node, now: DateTime<Utc>) -> Answer {
    let Some(statement) = payload.child(DDS, "statement") else {
        return schema_fault("no statement".into());
    };
    let errors = statement_rules(statement);
    if !errors.is_empty() {
        return business(DDS, &errors);
    }
    let uuid = uuid::Uuid::now_v7().to_string();
    let internal_reference = child_text(statement, DDS, "internalReferenceNumber")
        .map(str::to_owned)
        .unwrap_or_else(|| format!("IS-{}", &uuid[..8]));
    let mut fields = Vec::new();
    statement.leaves("", &mut fields);
    st.statements.push(StubDds {
        uuid: uuid.clone(),
        internal_reference,
        activity_type: child_text(statement, DDS, "activityType")
            .unwrap_or_default()
            .to_owned(),
        status: "SUBMITTED".into(),
        reference_number: None,
        verification_number: None,
        rejection_reason: None,
        submitted: now,
        updated: now,
        polls: 0,
        amendments: 0,
        script: st.script.clone(),
        fields,
    });
    Answer::Ok(
        with_attributes(
            "svc:SubmitDdsResponse",
            vec![("xmlns:svc", DDS.to_owned())],
            vec![text("svc:uuid", uuid)],
        ),
        "SubmitDdsResponse".into(),
    )
}

fn modification(name: &'static str, uuid: &str, status: &str) -> Answer {
    let element = if name == "AmendDdsResponse" {
        "svc:AmendDdsResponse"
    } else {
        "svc:WithdrawDdsResponse"
    };
    Answer::Ok(
        with_attributes(
            element,
            vec![("xmlns:svc", DDS.to_owned())],
            vec![text("svc:uuid", uuid), text("svc:status", status)],
        ),
        name.into(),
    )
}

fn lifecycle_error(id: &str, message: &str) -> Answer {
    business(DDS, &[StubError::new(id, None, message)])
}

fn amend(st: &mut State, payload: &Node, now: DateTime<Utc>) -> Answer {
    let uuid = child_text(payload, DDS, "uuid")
        .unwrap_or_default()
        .to_owned();
    let Some(statement) = payload.child(DDS, "statement") else {
        return schema_fault("no statement".into());
    };
    let errors = statement_rules(statement);
    let Some(dds) = st.statements.iter_mut().find(|s| s.uuid == uuid) else {
        return lifecycle_error("EUDR_API_NO_DDS", "No DDS with this uuid.");
    };
    if now - dds.submitted > CHANGE_WINDOW {
        return lifecycle_error(
            "EUDR_API_AMEND_OR_WITHDRAW_DDS_NOT_POSSIBLE",
            "The 72 hours for changes have passed.",
        );
    }
    if dds.status != "AVAILABLE" {
        return lifecycle_error(
            "EUDR_API_AMEND_NOT_ALLOWED_FOR_STATUS",
            "Only an AVAILABLE DDS can be amended.",
        );
    }
    if child_text(statement, DDS, "activityType") != Some(dds.activity_type.as_str()) {
        return lifecycle_error(
            "EUDR_API_AMEND_ACTIVITY_TYPE_CHANGE_NOT_ALLOWED",
            "The activity type cannot change.",
        );
    }
    if !errors.is_empty() {
        return business(DDS, &errors);
    }
    if let Some(reference) = child_text(statement, DDS, "internalReferenceNumber") {
        dds.internal_reference = reference.to_owned();
    }
    let mut fields = Vec::new();
    statement.leaves("", &mut fields);
    dds.fields = fields;
    dds.amendments += 1;
    dds.updated = now;
    let status = dds.status.clone();
    modification("AmendDdsResponse", &uuid, &status)
}

fn withdraw(st: &mut State, payload: &Node, now: DateTime<Utc>) -> Answer {
    let uuid = child_text(payload, DDS, "uuid")
        .unwrap_or_default()
        .to_owned();
    let Some(dds) = st.statements.iter_mut().find(|s| s.uuid == uuid) else {
        return lifecycle_error("EUDR_API_NO_DDS", "No DDS with this uuid.");
    };
    if now - dds.submitted > CHANGE_WINDOW {
        return lifecycle_error(
            "EUDR_API_AMEND_OR_WITHDRAW_DDS_NOT_POSSIBLE",
            "The 72 hours for changes have passed.",
        );
    }
    if !matches!(dds.status.as_str(), "SUBMITTED" | "AVAILABLE") {
        return lifecycle_error(
            "EUDR_API_AMEND_OR_WITHDRAW_NOT_ALLOWED_FOR_STATUS",
            "Only a SUBMITTED or AVAILABLE DDS can be withdrawn.",
        );
    }
    dds.status = "WITHDRAWN".into();
    dds.updated = now;
    modification("WithdrawDdsResponse", &uuid, "WITHDRAWN")
}

/// A short random code of upper-case hex digits.
fn code(length: usize) -> String {
    // The last hex digits of a v7 uuid are random.
    let hex = uuid::Uuid::now_v7()
        .simple()
        .to_string()
        .to_ascii_uppercase();
    hex.chars().skip(hex.len().saturating_sub(length)).collect()
}

/// One poll of a statement: advances its script.
fn poll(dds: &mut StubDds, country: &str) {
    if dds.status != "SUBMITTED" {
        return;
    }
    dds.polls += 1;
    match &dds.script {
        SubmissionScript::Available { submitted_polls } if dds.polls > *submitted_polls => {
            dds.status = "AVAILABLE".into();
            dds.reference_number = Some(format!(
                "{}{}{}",
                dds.submitted.format("%y"),
                country,
                code(10)
            ));
            dds.verification_number = Some(code(8));
        }
        SubmissionScript::Rejected {
            submitted_polls,
            reason,
        } if dds.polls > *submitted_polls => {
            dds.status = "REJECTED".into();
            dds.rejection_reason = Some(reason.clone());
        }
        _ => {}
    }
}

fn overview(dds: &StubDds) -> Out {
    let mut children = vec![
        text("com:uuid", dds.uuid.clone()),
        text(
            "com:internalReferenceNumber",
            dds.internal_reference.clone(),
        ),
    ];
    if let Some(r) = &dds.reference_number {
        children.push(text("com:referenceNumber", r.clone()));
    }
    if let Some(v) = &dds.verification_number {
        children.push(text("com:verificationNumber", v.clone()));
    }
    children.push(text("com:status", dds.status.clone()));
    if let Some(reason) = &dds.rejection_reason {
        children.push(text("com:rejectionReason", reason.clone()));
    }
    children.push(text("com:date", stamp(dds.updated)));
    parent("svc:ddsOverviewList", children)
}

fn overview_response(name: &'static str, list: Vec<Out>) -> Answer {
    let element = if name == "GetDdsResponse" {
        "svc:GetDdsResponse"
    } else {
        "svc:GetDdsByInternalReferenceResponse"
    };
    Answer::Ok(
        with_attributes(
            element,
            vec![
                ("xmlns:svc", DDS.to_owned()),
                ("xmlns:com", COMMON.to_owned()),
            ],
            list,
        ),
        name.into(),
    )
}

fn get_dds(st: &mut State, payload: &Node) -> Answer {
    let wanted: Vec<String> = payload
        .children
        .iter()
        .filter(|c| c.is(DDS, "uuidList"))
        .map(|c| c.text.trim().to_owned())
        .collect();
    let mut list = Vec::new();
    for uuid in wanted {
        if let Some(dds) = st.statements.iter_mut().find(|s| s.uuid == uuid) {
            let country = dds
                .fields
                .iter()
                .find(|(p, _)| p == "countryOfActivity")
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| "BE".into());
            poll(dds, &country);
            list.push(overview(dds));
        }
    }
    overview_response("GetDdsResponse", list)
}

fn get_by_reference(st: &State, payload: &Node) -> Answer {
    let reference = child_text(payload, DDS, "internalReference").unwrap_or_default();
    let list = st
        .statements
        .iter()
        .filter(|s| s.internal_reference == reference)
        .map(overview)
        .collect();
    overview_response("GetDdsByInternalReferenceResponse", list)
}

/// The HTTP response of an answer, and how the log sums it up.
fn respond(answer: Answer, _service: &str, now: DateTime<Utc>) -> (HttpResponse, String) {
    match answer {
        Answer::Ok(payload, name) => {
            let security = with_attributes(
                "wsse:Security",
                vec![
                    ("xmlns:wsse", WSSE.to_owned()),
                    ("xmlns:wsu", WSU.to_owned()),
                ],
                vec![parent(
                    "wsu:Timestamp",
                    vec![
                        text("wsu:Created", stamp(now)),
                        text("wsu:Expires", stamp(now + chrono::Duration::seconds(5))),
                    ],
                )],
            );
            let doc = xml::document(&with_attributes(
                "S:Envelope",
                vec![("xmlns:S", SOAPENV.to_owned())],
                vec![
                    parent("S:Header", vec![security]),
                    parent("S:Body", vec![payload]),
                ],
            ));
            (
                HttpResponse::Ok()
                    .content_type("text/xml; charset=utf-8")
                    .body(doc),
                name,
            )
        }
        Answer::Fault {
            code,
            string,
            detail,
        } => {
            let mut fault = vec![text("faultcode", code), text("faultstring", string.clone())];
            if let Some(detail) = detail {
                fault.push(parent("detail", vec![detail]));
            }
            let message = with_attributes(
                "msg:Message",
                vec![
                    ("xmlns:msg", MESSAGE.to_owned()),
                    ("severity", "debugging".to_owned()),
                ],
                vec![
                    text("msg:ID", "WS_REQUEST_ID"),
                    text("msg:Message", uuid::Uuid::now_v7().to_string()),
                ],
            );
            let doc = xml::document(&with_attributes(
                "S:Envelope",
                vec![("xmlns:S", SOAPENV.to_owned())],
                vec![
                    parent("S:Header", vec![message]),
                    parent("S:Body", vec![parent("S:Fault", fault)]),
                ],
            ));
            (
                HttpResponse::InternalServerError()
                    .content_type("text/xml; charset=utf-8")
                    .body(doc),
                format!("fault: {code} {string}"),
            )
        }
        Answer::Http(status, body) => (
            HttpResponse::build(
                actix_web::http::StatusCode::from_u16(status)
                    .unwrap_or(actix_web::http::StatusCode::SERVICE_UNAVAILABLE),
            )
            .content_type("text/html")
            .body(body),
            format!("http {status}"),
        ),
        Answer::Drop => {
            let chunks: Vec<Result<web::Bytes, std::io::Error>> = vec![
                Ok(web::Bytes::from_static(
                    b"<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S=",
                )),
                Err(std::io::Error::other("connection dropped by the stub")),
            ];
            (
                HttpResponse::Ok()
                    .content_type("text/xml; charset=utf-8")
                    .streaming(futures_util::stream::iter(chunks)),
                "dropped".into(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_count_arrivals_within_one_second() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let times = [
            at(0),
            at(200),
            at(400),
            at(600),
            at(800),
            at(1000),
            at(1200),
        ];
        assert_eq!(max_in_window(&times, Duration::from_secs(1)), 5);
        let burst = [at(0), at(10), at(20), at(990), at(1500)];
        assert_eq!(max_in_window(&burst, Duration::from_secs(1)), 4);
    }
}
