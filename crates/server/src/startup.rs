//! Wiring: store → use cases → HTTP server.

use roastery_domain::epcis::EpcisBase;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use anyhow::Context;
use roastery_adapters_diesel::{DatabaseUrl, DieselStore, PoolOptions, redact};
use roastery_adapters_http::listing::WireListing;
use roastery_adapters_http::outbound::eudr::EudrClient;
use roastery_adapters_http::outbound::eudr_jobs::{self, EudrJobs};
use roastery_adapters_http::outbound::webhook::{DeliveryLoop, HttpsTransport, WebhookSettings};
use roastery_adapters_http::{AppState, CursorCodec, ServerLimits};
use roastery_app::Roastery;
use roastery_ports::system::{RandomIds, SystemClock};

use crate::config::Config;

/// Opens the database named by `url` (running pending migrations) and returns the use cases.
pub fn open_roastery(url: &str, pool_size: Option<u32>) -> anyhow::Result<Roastery<DieselStore>> {
    open_roastery_with(
        url,
        &PoolOptions {
            max_size: pool_size,
            ..PoolOptions::default()
        },
    )
}

/// [`open_roastery`] with every pool and session setting.
pub fn open_roastery_with(
    url: &str,
    options: &PoolOptions,
) -> anyhow::Result<Roastery<DieselStore>> {
    let store = DieselStore::open_with(url, options)
        .with_context(|| format!("opening the database {}", redact(url)))?;
    let app = use_cases(store);
    app.render_listing_items()
        .context("rendering the lots' listing items")?;
    Ok(app)
}

/// The use cases over `store`, rendering the listing items of the lots they write.
fn use_cases(store: DieselStore) -> Roastery<DieselStore> {
    Roastery::new(store, Arc::new(SystemClock), Arc::new(RandomIds))
        .rendering_listings(Arc::new(WireListing))
}

/// The same use cases, with listings, by-ids reads and traces served by the replica at `read_url`.
pub fn with_read_replica(
    app: Roastery<DieselStore>,
    read_url: &str,
    options: &PoolOptions,
) -> anyhow::Result<Roastery<DieselStore>> {
    let store = app
        .store()
        .clone()
        .with_read_replica(read_url, options)
        .with_context(|| format!("opening the read replica {}", redact(read_url)))?;
    Ok(use_cases(store))
}

/// Where a generated self-signed certificate goes: beside the SQLite file, or the working
/// directory for PostgreSQL.
fn certificate_dir(url: &str) -> PathBuf {
    DatabaseUrl::parse(url)
        .ok()
        .and_then(|u| {
            u.sqlite_path()
                .map(|p| Path::new(p).parent().map(Path::to_path_buf))
        })
        .flatten()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}

pub struct Application {
    port: u16,
    server: actix_server::Server,
    deliveries: DeliveryLoop<DieselStore, HttpsTransport>,
    /// The EUDR poller and re-verifier, when the EU information system is configured.
    eudr_jobs: Option<EudrJobs<DieselStore, EudrClient>>,
}

/// The webhook settings of a configuration, with the extra trusted roots read.
fn webhook_settings(config: &Config) -> anyhow::Result<WebhookSettings> {
    let extra_roots_pem = config
        .webhook_ca_file
        .as_ref()
        .map(|path| std::fs::read(path).with_context(|| format!("reading {}", path.display())))
        .transpose()?;
    Ok(WebhookSettings {
        allow_private: config.webhook_allow_private.is_on(),
        extra_roots_pem,
        retry_scale_millis: config.webhook_retry_scale_millis()?,
        retention: config.event_retention()?,
    })
}

/// The EU information system's client, when endpoint, username and key are all configured.
fn eudr_client(config: &Config) -> anyhow::Result<Option<Arc<EudrClient>>> {
    if let Some(missing) = config.eudr_partly_configured() {
        tracing::warn!(
            missing = %missing,
            "the EUDR information system is partly configured; not connecting to it"
        );
    }
    let Some(settings) = config.eudr_settings()? else {
        return Ok(None);
    };
    tracing::info!(
        endpoint = %settings.endpoint.base_url(),
        username = %settings.username,
        client_id = %settings.client_id,
        "connecting to the EUDR information system"
    );
    let client = EudrClient::new(settings).context("building the EUDR client")?;
    Ok(Some(Arc::new(client)))
}

impl Application {
    /// Opens the store, prepares TLS and binds the listener; the server runs once awaited.
    pub fn build(config: &Config) -> anyhow::Result<Self> {
        let app = open_roastery_with(&config.database_url, &config.pool_options())?;
        let app = match &config.database_read_url {
            Some(read_url) => with_read_replica(app, read_url, &config.pool_options())?,
            None => app,
        };
        let eudr_schedule = config.eudr_schedule()?;
        let app = app
            .with_eudr_enforce(config.eudr_enforce.mode())
            .with_eudr_timing(eudr_jobs::timing(&eudr_schedule));
        let epcis_base = match config.epcis_base()? {
            Some(base) => base,
            None => EpcisBase::of_installation(
                app.installation_id()
                    .context("loading the installation id")?,
            ),
        };
        let app = app.with_epcis_base(Some(epcis_base));
        let cursor_key = app.cursor_key().context("loading the cursor signing key")?;
        let webhooks = webhook_settings(config)?;
        let transport = Arc::new(HttpsTransport::new(&webhooks)?);
        // Writes of this instance wake its delivery loop at once; others' are polled for.
        let wake = Arc::new(tokio::sync::Notify::new());
        let app = app.notifying_events({
            let wake = wake.clone();
            Arc::new(move || wake.notify_one())
        });
        let tls = crate::tls::server_config(
            config.tls_cert.as_deref(),
            config.tls_key.as_deref(),
            &certificate_dir(&config.database_url),
        )?;
        let listener = TcpListener::bind(&config.listen)
            .with_context(|| format!("binding {}", config.listen))?;
        let port = listener.local_addr()?.port();
        let rate_limit = roastery_adapters_http::parse_rate_limit(&config.rate_limit)
            .map_err(anyhow::Error::msg)?;
        // On PostgreSQL every instance takes from the same buckets, in the database.
        let shared = app.store().shared_rate_limit();
        let connections = app.store().connection_limit();
        let state = AppState::new(app, CursorCodec::new(cursor_key))
            .with_database_concurrency(connections, Duration::from_secs(config.pool_timeout));
        let state = match shared {
            Some(shared) => state.with_shared_rate_limit(rate_limit, Arc::new(shared)),
            None => state.with_rate_limit(rate_limit),
        };
        let eudr = eudr_client(config)?;
        let state = web::Data::new(
            state
                .with_body_timeout(Duration::from_secs(config.body_timeout))
                .with_metrics(config.metrics.is_on())
                .with_webhooks(webhooks.clone())
                .with_eudr(eudr.clone(), eudr_schedule),
        );
        let eudr_jobs = eudr.map(|eu| EudrJobs {
            app: state.app.clone(),
            eu,
            timing: eudr_jobs::timing(&eudr_schedule),
        });
        let deliveries = DeliveryLoop {
            app: state.app.clone(),
            transport,
            wake,
            settings: webhooks,
            metrics: state.metrics(),
        };
        let mut limits = ServerLimits {
            request_head_timeout: Duration::from_secs(config.header_timeout),
            max_connections_per_worker: config.max_connections.max(1),
            drain_timeout: Duration::from_secs(config.drain_timeout),
            ..ServerLimits::default()
        };
        if let Some(workers) = config.workers {
            limits.workers = workers.max(1);
        }
        let server = roastery_adapters_http::build_server(listener, tls, state, limits)?;
        tracing::info!(
            address = %format!("https://{}", listener_display(&config.listen, port)),
            database = %redact(&config.database_url),
            "roastery is listening"
        );
        Ok(Self {
            port,
            server,
            deliveries,
            eudr_jobs,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle that stops the server gracefully.
    pub fn handle(&self) -> actix_server::ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGTERM/SIGINT (or a stop through the handle); in-flight requests finish,
    /// idle connections close at once.
    /// Webhook deliveries (and, when configured, the EUDR poller and re-verifier) run beside
    /// the server and stop with it; work in flight then is taken up again by whichever
    /// instance claims it after its claim expires.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let stop = Arc::new(tokio::sync::Notify::new());
        let deliveries = actix_rt::spawn(self.deliveries.run(stop.clone()));
        let eudr_stop = Arc::new(tokio::sync::Notify::new());
        let eudr = self
            .eudr_jobs
            .map(|jobs| actix_rt::spawn(jobs.run(eudr_stop.clone())));
        let served = self.server.await;
        stop.notify_one();
        eudr_stop.notify_one();
        if tokio::time::timeout(Duration::from_secs(15), deliveries)
            .await
            .is_err()
        {
            tracing::warn!("webhook deliveries did not stop in time");
        }
        if let Some(eudr) = eudr
            && tokio::time::timeout(Duration::from_secs(15), eudr)
                .await
                .is_err()
        {
            tracing::warn!("the EUDR jobs did not stop in time");
        }
        served
    }
}

fn listener_display(listen: &str, port: u16) -> String {
    match listen.rsplit_once(':') {
        Some((host, _)) => format!("{host}:{port}"),
        None => format!("{listen}:{port}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_go_beside_the_sqlite_file() {
        assert_eq!(
            certificate_dir("sqlite:///var/lib/r/db.sqlite"),
            PathBuf::from("/var/lib/r")
        );
        assert_eq!(certificate_dir("sqlite://roastery.db"), PathBuf::from("."));
        assert_eq!(certificate_dir("postgres://h/db"), PathBuf::from("."));
    }

    #[test]
    fn the_eudr_client_is_built_only_when_fully_configured() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        let generated = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        std::fs::write(&ca, generated.cert.pem()).unwrap();
        let mut config = Config {
            eudr_endpoint: Some("https://127.0.0.1:9/tracesnt".into()),
            eudr_username: Some("roaster".into()),
            eudr_client_id: Some("stub-client".into()),
            eudr_ca_file: Some(ca.clone()),
            ..Config::default()
        };
        assert!(eudr_client(&config).unwrap().is_none());
        config.eudr_auth_key = Some(crate::config::Secret::new("k3y"));
        let client = eudr_client(&config).unwrap().unwrap();
        assert_eq!(
            client.settings().endpoint.base_url(),
            "https://127.0.0.1:9/tracesnt/"
        );
        assert_eq!(client.settings().client_id, "stub-client");
        std::fs::write(&ca, "not a certificate").unwrap();
        assert!(eudr_client(&config).is_err());
    }
}
