//! The same actix-web + rustls stack as `roastery serve`, answering every POST with one fixed body
//! from memory after reading the request body: what the framework serves when the service costs
//! nothing. `make bench` runs it beside each scenario.
//!
//!   bare LISTEN CERT_PEM KEY_PEM BODY_FILE

use actix_web::web::{Bytes, Data};
use actix_web::{App, HttpResponse, HttpServer, web};
use anyhow::Context;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

async fn answer(_request: Bytes, body: Data<Bytes>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body.get_ref().clone())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, cert, key, body] = args.as_slice() else {
        anyhow::bail!("usage: bare LISTEN CERT_PEM KEY_PEM BODY_FILE");
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let chain = CertificateDer::pem_file_iter(cert)
        .context("reading the certificate")?
        .collect::<Result<Vec<_>, _>>()
        .context("parsing the certificate")?;
    let key = PrivateKeyDer::from_pem_file(key).context("reading the key")?;
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    let body = Data::new(Bytes::from(
        std::fs::read(body).context("reading the body")?,
    ));
    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            App::new()
                .app_data(body.clone())
                .default_service(web::to(answer))
        })
        // As many workers as `roastery serve` starts.
        .workers(std::thread::available_parallelism().map_or(2, |n| n.get()))
        .bind_rustls_0_23(listen.as_str(), tls)?
        .run()
        .await
    })?;
    Ok(())
}
