//! The HTTPS server: TLS only, with a friendly answer for plain HTTP.
//!
//! Each accepted connection's first byte is peeked: a TLS handshake starts with `0x16` and goes to
//! rustls and actix; anything else is a plain-HTTP client, which gets a 400 error envelope and a
//! closed connection instead of a hung or reset socket.
//!
//! Shutdown (SIGTERM or SIGINT): the listener stops accepting; connections idle at that moment
//! (keep-alive, or a request head not yet received) are closed at once; requests in flight finish
//! and their answers carry `Connection: close`; whatever is still open after the drain timeout
//! is dropped.

use std::future::Future;
use std::net::TcpListener;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix_rt::net::TcpStream;
use actix_service::{Service, ServiceFactory, map_config};
use actix_web::dev::AppConfig;
use actix_web::{App, web};
use roastery_ports::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::connections::Connections;
use crate::error::{ErrorBody, ErrorEnvelope};
use crate::state::AppState;

/// Timeouts and sizes of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ServerLimits {
    pub workers: usize,
    /// Time allowed for a client to send its request head.
    pub request_head_timeout: Duration,
    pub tls_handshake_timeout: Duration,
    pub keep_alive: Duration,
    /// Connections each worker serves at once.
    pub max_connections_per_worker: usize,
    /// After SIGTERM, the longest requests in flight may take before their connections are dropped.
    pub drain_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            request_head_timeout: Duration::from_secs(10),
            tls_handshake_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(60),
            max_connections_per_worker: 10_000,
            drain_timeout: Duration::from_secs(30),
        }
    }
}

/// Builds the server on `listener`; call it inside an actix system. It handles SIGINT/SIGTERM
/// itself: it stops accepting, closes idle connections, lets in-flight requests finish (up to
/// `drain_timeout`), then returns.
pub fn build<S: Store>(
    listener: TcpListener,
    tls: rustls::ServerConfig,
    state: web::Data<AppState<S>>,
    limits: ServerLimits,
) -> std::io::Result<actix_server::Server> {
    let tls = Arc::new(tls);
    let local = listener.local_addr()?;
    let connections = web::Data::new(Connections::default());
    let shutdown = connections.clone();
    let server = actix_server::Server::build()
        .workers(limits.workers)
        .max_concurrent_connections(limits.max_connections_per_worker)
        .shutdown_timeout(limits.drain_timeout.as_secs())
        .disable_signals()
        .listen("roastery-https", listener, move || {
            let state = state.clone();
            let connections = connections.clone();
            let app = App::new()
                .app_data(connections.clone())
                .configure(move |cfg| crate::routes::configure(cfg, state.clone()));
            let http = actix_http::HttpService::build()
                .keep_alive(limits.keep_alive)
                .client_request_timeout(limits.request_head_timeout)
                .client_disconnect_timeout(Duration::from_secs(5))
                .finish(map_config(app, move |_| {
                    AppConfig::__priv_test_new(true, local.to_string(), local)
                }))
                .rustls_0_23_with_config(
                    (*tls).clone(),
                    actix_http::TlsAcceptorConfig::default()
                        .handshake_timeout(limits.tls_handshake_timeout),
                );
            PlainHttpGuard {
                inner: http,
                head_timeout: limits.request_head_timeout,
                connections: connections.clone().into_inner(),
            }
        })?
        .run();
    let handle = server.handle();
    actix_rt::spawn(async move {
        let signal = termination().await;
        tracing::info!(
            "{signal} received; closing idle connections and draining requests in flight"
        );
        shutdown.begin_shutdown();
        handle.stop(true).await;
    });
    Ok(server)
}

/// Waits for SIGTERM or SIGINT and names it.
async fn termination() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => {
                tracing::warn!(
                    "signal handlers could not be installed; stop the process with SIGKILL"
                );
                std::future::pending().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

struct PlainHttpGuard<F> {
    inner: F,
    head_timeout: Duration,
    connections: Arc<Connections>,
}

type LocalFuture<T> = Pin<Box<dyn Future<Output = T>>>;

impl<F> ServiceFactory<TcpStream> for PlainHttpGuard<F>
where
    F: ServiceFactory<TcpStream, Config = (), Response = (), InitError = ()>,
    F::Service: 'static,
    F::Future: 'static,
    F::Error: 'static,
{
    type Response = ();
    type Error = F::Error;
    type Config = ();
    type Service = GuardService<F::Service>;
    type InitError = ();
    type Future = LocalFuture<Result<Self::Service, ()>>;

    fn new_service(&self, _: ()) -> Self::Future {
        let inner = self.inner.new_service(());
        let head_timeout = self.head_timeout;
        let connections = Arc::clone(&self.connections);
        Box::pin(async move {
            Ok(GuardService {
                inner: Rc::new(inner.await?),
                head_timeout,
                connections,
            })
        })
    }
}

struct GuardService<S> {
    inner: Rc<S>,
    head_timeout: Duration,
    connections: Arc<Connections>,
}

/// First byte of a TLS record carrying a handshake.
const TLS_HANDSHAKE: u8 = 0x16;

impl<S> Service<TcpStream> for GuardService<S>
where
    S: Service<TcpStream, Response = ()> + 'static,
{
    type Response = ();
    type Error = S::Error;
    type Future = LocalFuture<Result<(), S::Error>>;

    actix_service::forward_ready!(inner);

    fn call(&self, stream: TcpStream) -> Self::Future {
        let inner = Rc::clone(&self.inner);
        let head_timeout = self.head_timeout;
        let connections = Arc::clone(&self.connections);
        Box::pin(async move {
            let mut first = [0u8; 1];
            match tokio::time::timeout(head_timeout, stream.peek(&mut first)).await {
                Ok(Ok(1)) if first[0] == TLS_HANDSHAKE => match stream.peer_addr() {
                    Ok(peer) => connections
                        .serve(peer, inner.call(stream))
                        .await
                        .unwrap_or(Ok(())),
                    Err(_) => inner.call(stream).await,
                },
                Ok(Ok(1)) => {
                    answer_plain_http(stream, head_timeout).await;
                    Ok(())
                }
                // Closed, failed or silent past the timeout: nothing to answer.
                _ => Ok(()),
            }
        })
    }
}

async fn answer_plain_http(mut stream: TcpStream, head_timeout: Duration) {
    // Read what the client sent of its request head, so closing does not reset the connection
    // before it reads the answer.
    let mut head = vec![0u8; 8192];
    let _ = tokio::time::timeout(head_timeout, stream.read(&mut head)).await;
    let body = serde_json::to_string(&ErrorEnvelope {
        ok: false,
        error: ErrorBody {
            code: "invalid_request",
            message: "this port speaks HTTPS only; use https://",
            details: None,
            other_details: None,
        },
    })
    .unwrap_or_default();
    // Every response carries a request id; this one never reached the routes that log requests.
    let id = crate::request_id::of(&Default::default());
    tracing::info!(
        request_id = id.to_str().unwrap_or_default(),
        status = 400,
        "plain HTTP on the HTTPS port"
    );
    let response = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-request-id: {}\r\nconnection: close\r\n\r\n{body}",
        body.len(),
        id.to_str().unwrap_or_default(),
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
