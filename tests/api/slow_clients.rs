//! Clients too slow to send their request head or body are cut off, and their half-sent
//! requests change nothing. The server here gives them one second for each.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use crate::both_databases;
use crate::helpers::*;

pub(crate) type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// A TLS connection to the test server, trusting the test certificate.
pub(crate) fn connect(port: u16) -> Tls {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            certificate().der.clone(),
        ))
        .expect("test certificate");
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("server name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("TLS client");
    let tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    // Far beyond the server's one second: if the server never gives up, the read fails here.
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    rustls::StreamOwned::new(conn, tcp)
}

/// Everything the server sends until it closes the connection.
pub(crate) fn read_until_closed(tls: &mut Tls) -> String {
    let mut answer = Vec::new();
    match tls.read_to_end(&mut answer) {
        Ok(_) => {}
        // A close without TLS close_notify still is a close.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {}
        Err(e) => panic!("the server kept a slow client's connection open: {e}"),
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn one_second(config: &mut roastery_server::Config) {
    config.header_timeout = 1;
    config.body_timeout = 1;
}

both_databases! {
    async fn a_client_that_never_finishes_its_request_head_is_disconnected(app, config: one_second) {
        let port = app.port;
        let answer = tokio::task::spawn_blocking(move || {
            let mut tls = connect(port);
            tls.write_all(b"POST /rpc/v1/core.location.listLocations HTTP/1.1\r\nHost: localhost\r\n")
                .expect("send part of the head");
            tls.flush().expect("flush");
            read_until_closed(&mut tls)
        })
        .await
        .expect("client thread");
        assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    async fn a_client_that_never_finishes_its_body_gets_400_and_changes_nothing(app, config: one_second) {
        let token = app.token(ALL_SCOPES).await;
        let port = app.port;
        let head_token = token.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let mut tls = connect(port);
            let body = br#"{"data": {"name": "Half-sent warehouse"}}"#;
            let head = format!(
                "POST /rpc/v1/core.location.importLocation HTTP/1.1\r\nHost: localhost\r\n\
                 Authorization: Bearer {head_token}\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len() + 10
            );
            tls.write_all(head.as_bytes()).expect("send the head");
            tls.write_all(body).expect("send most of the body");
            tls.flush().expect("flush");
            read_until_closed(&mut tls)
        })
        .await
        .expect("client thread");
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(answer.contains("\"invalid_request\""), "{answer}");
        let (status, body) = app.call(&token, "core.location.listLocations", json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(body["result"]["locations"], json!([]));
    }
}
