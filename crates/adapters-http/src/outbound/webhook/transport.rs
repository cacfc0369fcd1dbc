//! The HTTPS client webhooks are sent with, and the one rule for where it may connect.
//!
//! Safety (api-decisions §13): only `https://`; no redirects; no proxy; a receiver whose host is
//! or resolves to a loopback, private, link-local or unspecified address is refused at creation
//! ([`ResolvingCheck`]) and at delivery, unless private addresses are allowed. At delivery the
//! client resolves the host through [`PublicResolver`], which hands the connection only the
//! addresses [`deliverable`] kept, so a name that resolved to a public address when it was checked
//! cannot be re-pointed at an internal one for the connection (DNS rebinding); IP literals, which
//! are not resolved, are judged by the same rule before the send.

use std::future::Future;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use roastery_app::event::{ATTEMPT_TIMEOUT, ReceiverCheck, SendOutcome};
use roastery_domain::webhook::{WebhookError, WebhookUrl, is_private};

use super::settings::WebhookSettings;

/// Sends signed events over the network.
pub trait WebhookTransport: Send + Sync + 'static {
    fn send(
        &self,
        url: &WebhookUrl,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    ) -> impl Future<Output = SendOutcome> + Send;
}

/// The addresses of `host` a delivery may connect to: the public ones (all, when private ones
/// are allowed); none is an error naming the host.
pub(crate) fn deliverable(
    host: &str,
    found: impl Iterator<Item = SocketAddr>,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, WebhookError> {
    let allowed: Vec<SocketAddr> = found
        .filter(|a| allow_private || !is_private(a.ip()))
        .collect();
    if allowed.is_empty() {
        return Err(WebhookError::private_address(host));
    }
    Ok(allowed)
}

/// Checks a new webhook's host with the system resolver (blocking: it runs with the use case).
#[derive(Debug, Clone, Copy)]
pub struct ResolvingCheck {
    pub allow_private: bool,
}

impl ReceiverCheck for ResolvingCheck {
    fn check(&self, url: &WebhookUrl) -> Result<(), WebhookError> {
        if self.allow_private {
            return Ok(());
        }
        let host = url.host();
        let addresses: Vec<SocketAddr> = match url.ip_literal() {
            Some(ip) => vec![SocketAddr::new(ip, url.port())],
            None => (host.as_str(), url.port())
                .to_socket_addrs()
                .map_err(|_| WebhookError::unresolvable(host.clone()))?
                .collect(),
        };
        if addresses.is_empty() {
            return Err(WebhookError::unresolvable(host));
        }
        // At creation every address must be public; at delivery the public ones are used.
        if addresses.iter().any(|a| is_private(a.ip())) {
            return Err(WebhookError::private_address(host));
        }
        Ok(())
    }
}

/// Resolves hosts for the client, keeping only public addresses (all when private ones are
/// allowed).
#[derive(Debug, Clone, Copy)]
struct PublicResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let allowed = deliverable(&host, found, allow_private)?;
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// The reqwest client webhooks are sent with.
#[derive(Debug, Clone)]
pub struct HttpsTransport {
    client: reqwest::Client,
    allow_private: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("ROASTERY_WEBHOOK_CA_FILE holds no usable certificate: {0}")]
    Roots(String),
    #[error("the webhook client could not be built: {0}")]
    Client(String),
}

impl HttpsTransport {
    pub fn new(settings: &WebhookSettings) -> Result<Self, TransportError> {
        let mut builder = reqwest::Client::builder()
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            // HTTPS_PROXY and friends are not honoured: the address connected to must be the
            // receiver's own, the one the resolver checked.
            .no_proxy()
            .timeout(ATTEMPT_TIMEOUT)
            .connect_timeout(ATTEMPT_TIMEOUT)
            .user_agent(concat!("roastery-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(PublicResolver {
                allow_private: settings.allow_private,
            }));
        if let Some(pem) = &settings.extra_roots_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| TransportError::Roots(e.to_string()))?;
            if roots.is_empty() {
                return Err(TransportError::Roots("no certificate found".into()));
            }
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let client = builder
            .build()
            .map_err(|e| TransportError::Client(e.to_string()))?;
        Ok(Self {
            client,
            allow_private: settings.allow_private,
        })
    }
}

/// The whole chain of an error, for the delivery's `error`.
fn describe(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl WebhookTransport for HttpsTransport {
    async fn send(
        &self,
        url: &WebhookUrl,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    ) -> SendOutcome {
        // Judged before the send, by the rule the resolver applies, so a receiver with no
        // address a delivery may use is refused for good rather than retried as a connection
        // failure (and an IP literal, which is never resolved, is judged at all).
        let found: Vec<SocketAddr> = match url.ip_literal() {
            Some(ip) => vec![SocketAddr::new(ip, url.port())],
            None => match tokio::net::lookup_host((url.host().as_str(), url.port())).await {
                Ok(found) => found.collect(),
                Err(e) => return SendOutcome::Failed(format!("{}: {e}", url.host())),
            },
        };
        if let Err(refused) = deliverable(&url.host(), found.into_iter(), self.allow_private) {
            return SendOutcome::Refused(refused.to_string());
        }
        let mut request = self
            .client
            .post(url.as_str())
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        match request.body(body).send().await {
            Ok(response) => SendOutcome::Answered(response.status().as_u16()),
            Err(e) if e.is_timeout() => {
                SendOutcome::Failed(format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()))
            }
            Err(e) => SendOutcome::Failed(describe(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_hosts_are_refused_unless_allowed() {
        let strict = ResolvingCheck {
            allow_private: false,
        };
        for url in [
            "https://127.0.0.1/",
            "https://[::1]:8443/x",
            "https://10.0.0.7/",
            "https://169.254.169.254/latest",
            "https://[::ffff:192.168.0.1]/",
            "https://localhost/",
        ] {
            let url = WebhookUrl::parse(url).unwrap();
            assert!(strict.check(&url).is_err(), "{url:?}");
        }
        let open = ResolvingCheck {
            allow_private: true,
        };
        assert!(
            open.check(&WebhookUrl::parse("https://127.0.0.1/").unwrap())
                .is_ok()
        );
    }

    #[test]
    fn a_delivery_connects_only_to_the_public_addresses_of_a_host() {
        let public: SocketAddr = "93.184.216.34:443".parse().unwrap();
        let private: SocketAddr = "10.0.0.7:443".parse().unwrap();
        assert_eq!(
            deliverable("mixed.example", [private, public].into_iter(), false).unwrap(),
            [public]
        );
        assert_eq!(
            deliverable("inside.example", [private].into_iter(), false).unwrap_err(),
            WebhookError::private_address("inside.example")
        );
        assert_eq!(
            deliverable("inside.example", [private].into_iter(), true).unwrap(),
            [private]
        );
    }
}
