//! Configuration: defaults, then a TOML file (`--config`), then `ROASTERY_*` environment variables.

use roastery_domain::epcis::EpcisBase;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use roastery_adapters_diesel::{PoolOptions, default_application_name};
use roastery_adapters_http::outbound::eudr::{AuthKey, EudrEndpoint, EudrSchedule, EudrSettings};
use roastery_app::eudr_settings::EudrEnforce;
use serde::Deserialize;

/// The longest event retention accepted, in days (100 years): longer ones reach past what a
/// date can hold.
pub const MAX_EVENT_RETENTION_DAYS: u64 = 36_500;

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on (`ROASTERY_LISTEN`).
    pub listen: String,
    /// `sqlite://PATH` or `postgres://…` (`ROASTERY_DATABASE_URL`).
    pub database_url: String,
    /// A PostgreSQL read replica for listings, by-ids reads and traces
    /// (`ROASTERY_DATABASE_READ_URL`).
    pub database_read_url: Option<String>,
    /// PEM certificate chain and private key (`ROASTERY_TLS_CERT`, `ROASTERY_TLS_KEY`). When
    /// unset, a self-signed certificate is created and reused.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `"5/s,burst=10"` or `"off"` (`ROASTERY_RATE_LIMIT`).
    pub rate_limit: String,
    /// Worker threads (`ROASTERY_WORKERS`); default: one per core.
    pub workers: Option<usize>,
    /// Database connections in the pool (`ROASTERY_POOL_SIZE`).
    pub pool_size: Option<u32>,
    /// PostgreSQL: MiB of listing items each instance keeps to answer pages it served before
    /// (`ROASTERY_LISTING_CACHE_MB`); 0 keeps none.
    pub listing_cache_mb: u64,
    /// `pretty` or `json` (`ROASTERY_LOG_FORMAT`; `text` is read as `pretty`); unset: `pretty`
    /// when standard error is a terminal, else `json`.
    pub log_format: Option<LogFormat>,
    /// `on` (default) or `off`: serves `GET /metrics` (`ROASTERY_METRICS`).
    pub metrics: Switch,
    /// Seconds a client may take to send its request head (`ROASTERY_HEADER_TIMEOUT`).
    pub header_timeout: u64,
    /// Seconds a client may take to send its request body (`ROASTERY_BODY_TIMEOUT`).
    pub body_timeout: u64,
    /// Connections served at once per worker (`ROASTERY_MAX_CONNECTIONS`); more wait to be accepted.
    pub max_connections: usize,
    /// Seconds a PostgreSQL write waits for a row lock before it answers 503
    /// (`ROASTERY_LOCK_TIMEOUT`).
    pub lock_timeout: u64,
    /// Seconds any one PostgreSQL statement may run (`ROASTERY_STATEMENT_TIMEOUT`).
    pub statement_timeout: u64,
    /// Seconds a PostgreSQL session may sit idle inside a transaction before the server ends it
    /// (`ROASTERY_IDLE_IN_TRANSACTION_TIMEOUT`).
    pub idle_in_transaction_timeout: u64,
    /// Seconds a request waits for a free pooled connection (`ROASTERY_POOL_TIMEOUT`).
    pub pool_timeout: u64,
    /// PostgreSQL `application_name` (`ROASTERY_APPLICATION_NAME`); default
    /// `roastery/<host>/<pid>`.
    pub application_name: Option<String>,
    /// Seconds requests in flight at SIGTERM may take to finish (`ROASTERY_DRAIN_TIMEOUT`).
    pub drain_timeout: u64,
    /// `on`: webhooks may be sent to loopback, private and link-local addresses
    /// (`ROASTERY_WEBHOOK_ALLOW_PRIVATE`; default `off`).
    pub webhook_allow_private: Switch,
    /// PEM certificates trusted for webhook TLS besides the built-in roots
    /// (`ROASTERY_WEBHOOK_CA_FILE`).
    pub webhook_ca_file: Option<PathBuf>,
    /// Multiplies the waits between webhook delivery attempts, a decimal such as `0.01`
    /// (`ROASTERY_WEBHOOK_RETRY_SCALE`; default `1`).
    pub webhook_retry_scale: String,
    /// Days events are kept at least (`ROASTERY_EVENT_RETENTION_DAYS`; default 30; 1 to
    /// [`MAX_EVENT_RETENTION_DAYS`]).
    pub event_retention_days: u64,
    /// `off` (default) or `ship`: `shipOrder` refuses lots whose EUDR due diligence is
    /// incomplete (`ROASTERY_EUDR_ENFORCE`).
    pub eudr_enforce: EudrEnforceSetting,
    /// The base URI of EPCIS identifiers (`ROASTERY_EPCIS_BASE_URI`): absolute, no trailing
    /// `/`; default `urn:roastery:{installationId}`.
    pub epcis_base_uri: Option<String>,
    /// The EU's EUDR information system: `acceptance`, `production` or an `https://` base URL
    /// (`ROASTERY_EUDR_ENDPOINT`). Without an endpoint, a username and a key, Roastery does
    /// not connect to it.
    pub eudr_endpoint: Option<String>,
    /// The EU Login username of the web-service user (`ROASTERY_EUDR_USERNAME`).
    pub eudr_username: Option<String>,
    /// A file holding the EU Login authentication key (`ROASTERY_EUDR_AUTH_KEY_FILE`);
    /// surrounding whitespace is ignored.
    pub eudr_auth_key_file: Option<PathBuf>,
    /// The authentication key itself (`ROASTERY_EUDR_AUTH_KEY`); never shown.
    pub eudr_auth_key: Option<Secret>,
    /// `WebServiceClientId` (`ROASTERY_EUDR_CLIENT_ID`): default `eudr-test` on acceptance,
    /// `eudr-repository` on production; required with an URL endpoint.
    pub eudr_client_id: Option<String>,
    /// `BodyIdentity` operator identifier, ≤ 16 characters (`ROASTERY_EUDR_OPERATOR_ID`).
    pub eudr_operator_id: Option<String>,
    /// PEM certificates trusted for the information system besides the built-in roots
    /// (`ROASTERY_EUDR_CA_FILE`).
    pub eudr_ca_file: Option<PathBuf>,
    /// Multiplies every wait of the EUDR poller, a decimal above zero such as `0.001`
    /// (`ROASTERY_EUDR_POLL_SCALE`; default `1`).
    pub eudr_poll_scale: String,
    /// Days after which upstream statements are verified again; `0`: never
    /// (`ROASTERY_EUDR_REVERIFY_DAYS`; default 7).
    pub eudr_reverify_days: u32,
    /// Seconds one call to the information system may take (`ROASTERY_EUDR_TIMEOUT`; default
    /// 30; tests shorten it).
    pub eudr_timeout: u64,
}

/// A configured secret: read like a string, never shown by `Debug`.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret's text, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `eudr_enforce`: `off`, `ship` or `ship-verified`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum EudrEnforceSetting {
    #[default]
    Off,
    Ship,
    ShipVerified,
}

impl EudrEnforceSetting {
    pub fn mode(self) -> EudrEnforce {
        match self {
            Self::Off => EudrEnforce::Off,
            Self::Ship => EudrEnforce::Ship,
            Self::ShipVerified => EudrEnforce::ShipVerified,
        }
    }
}

impl Config {
    /// The configured EPCIS base URI, checked; `None` when the installation's default applies.
    pub fn epcis_base(&self) -> anyhow::Result<Option<EpcisBase>> {
        self.epcis_base_uri
            .as_deref()
            .map(|uri| {
                EpcisBase::parse(uri).map_err(|e| anyhow::anyhow!("ROASTERY_EPCIS_BASE_URI: {e}"))
            })
            .transpose()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8443".into(),
            database_url: "sqlite://roastery.db".into(),
            database_read_url: None,
            tls_cert: None,
            tls_key: None,
            rate_limit: "5/s,burst=10".into(),
            workers: None,
            pool_size: None,
            listing_cache_mb: 32,
            log_format: None,
            metrics: Switch::On,
            header_timeout: 10,
            body_timeout: 30,
            max_connections: 10_000,
            lock_timeout: 10,
            statement_timeout: 30,
            idle_in_transaction_timeout: 60,
            pool_timeout: 5,
            application_name: None,
            drain_timeout: 30,
            webhook_allow_private: Switch::Off,
            webhook_ca_file: None,
            webhook_retry_scale: "1".into(),
            event_retention_days: 30,
            eudr_enforce: EudrEnforceSetting::Off,
            epcis_base_uri: None,
            eudr_endpoint: None,
            eudr_username: None,
            eudr_auth_key_file: None,
            eudr_auth_key: None,
            eudr_client_id: None,
            eudr_operator_id: None,
            eudr_ca_file: None,
            eudr_poll_scale: "1".into(),
            eudr_reverify_days: 7,
            eudr_timeout: 30,
        }
    }
}

impl Config {
    /// The pool and PostgreSQL session settings of this configuration.
    pub fn pool_options(&self) -> PoolOptions {
        PoolOptions {
            max_size: self.pool_size,
            lock_timeout: Duration::from_secs(self.lock_timeout),
            statement_timeout: Duration::from_secs(self.statement_timeout),
            idle_in_transaction_timeout: Duration::from_secs(self.idle_in_transaction_timeout),
            application_name: self
                .application_name
                .clone()
                .unwrap_or_else(default_application_name),
            connection_timeout: Duration::from_secs(self.pool_timeout),
            listing_cache_bytes: self.listing_cache_mb.saturating_mul(1024 * 1024),
        }
    }

    /// How long events are kept: `event_retention_days` (from the file or the environment),
    /// checked to lie in 1..=[`MAX_EVENT_RETENTION_DAYS`].
    pub fn event_retention(&self) -> anyhow::Result<Duration> {
        let days = self.event_retention_days;
        if !(1..=MAX_EVENT_RETENTION_DAYS).contains(&days) {
            bail!(
                "ROASTERY_EVENT_RETENTION_DAYS (event_retention_days) must be from 1 to \
                 {MAX_EVENT_RETENTION_DAYS} days, not {days}"
            );
        }
        Ok(Duration::from_secs(days.saturating_mul(86_400)))
    }

    /// `webhook_retry_scale` in thousandths (exact: read as a decimal, never as a float).
    pub fn webhook_retry_scale_millis(&self) -> anyhow::Result<u64> {
        let scale: rust_decimal::Decimal =
            self.webhook_retry_scale.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "ROASTERY_WEBHOOK_RETRY_SCALE must be a decimal number, not `{}`",
                    self.webhook_retry_scale
                )
            })?;
        let millis = (scale * rust_decimal::Decimal::ONE_THOUSAND).round();
        match u64::try_from(millis) {
            Ok(m) if m > 0 => Ok(m),
            _ => bail!("ROASTERY_WEBHOOK_RETRY_SCALE must be at least 0.001"),
        }
    }

    /// When the EUDR jobs act: `eudr_poll_scale` (a decimal above zero, read exactly) and
    /// `eudr_reverify_days`.
    pub fn eudr_schedule(&self) -> anyhow::Result<EudrSchedule> {
        let poll_scale: rust_decimal::Decimal = self
            .eudr_poll_scale
            .trim()
            .parse()
            .ok()
            .filter(|scale: &rust_decimal::Decimal| scale.is_sign_positive() && !scale.is_zero())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "ROASTERY_EUDR_POLL_SCALE must be a decimal number above zero, not `{}`",
                    self.eudr_poll_scale
                )
            })?;
        Ok(EudrSchedule {
            poll_scale,
            reverify_days: self.eudr_reverify_days,
        })
    }

    /// The EUDR endpoint, checked; `None` when unset.
    fn eudr_endpoint(&self) -> anyhow::Result<Option<EudrEndpoint>> {
        self.eudr_endpoint
            .as_deref()
            .map(|text| {
                EudrEndpoint::parse(text).map_err(|_| {
                    anyhow::anyhow!(
                        "ROASTERY_EUDR_ENDPOINT must be `acceptance`, `production` or an https:// URL, not `{text}`"
                    )
                })
            })
            .transpose()
    }

    /// The EUDR settings that need no file: endpoint, client id, operator id, key source.
    fn check_eudr(&self) -> anyhow::Result<()> {
        let endpoint = self.eudr_endpoint()?;
        self.eudr_schedule()?;
        if self.eudr_auth_key.is_some() && self.eudr_auth_key_file.is_some() {
            bail!("set ROASTERY_EUDR_AUTH_KEY_FILE or ROASTERY_EUDR_AUTH_KEY, not both");
        }
        if let Some(client_id) = &self.eudr_client_id
            && client_id.trim().is_empty()
        {
            bail!("ROASTERY_EUDR_CLIENT_ID must not be empty");
        }
        if let Some(EudrEndpoint::Url(url)) = &endpoint
            && self.eudr_client_id.is_none()
        {
            bail!(
                "ROASTERY_EUDR_CLIENT_ID is required when ROASTERY_EUDR_ENDPOINT is a URL ({url}): \
                 the EU profile's \"Web Services Access\" section shows the value"
            );
        }
        if let Some(operator) = &self.eudr_operator_id {
            let length = operator.chars().count();
            if length == 0 || length > 16 || operator.contains(char::is_whitespace) {
                bail!(
                    "ROASTERY_EUDR_OPERATOR_ID must be 1 to 16 characters without spaces, not `{operator}`"
                );
            }
        }
        Ok(())
    }

    /// The EU information system's settings, with the key and extra roots read from their
    /// files; `None` unless an endpoint, a username and a key are all configured.
    pub fn eudr_settings(&self) -> anyhow::Result<Option<EudrSettings>> {
        self.check_eudr()?;
        let key = match (&self.eudr_auth_key, &self.eudr_auth_key_file) {
            (Some(key), _) => Some(key.expose().trim().to_owned()),
            (None, Some(path)) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| {
                        format!("reading ROASTERY_EUDR_AUTH_KEY_FILE {}", path.display())
                    })?
                    .trim()
                    .to_owned(),
            ),
            (None, None) => None,
        };
        if key.as_deref() == Some("") {
            bail!("the EUDR authentication key is empty");
        }
        let (Some(endpoint), Some(username), Some(key)) =
            (self.eudr_endpoint()?, self.eudr_username.clone(), key)
        else {
            return Ok(None);
        };
        let client_id = match (&self.eudr_client_id, endpoint.default_client_id()) {
            (Some(id), _) => id.trim().to_owned(),
            (None, Some(id)) => id.to_owned(),
            (None, None) => bail!("ROASTERY_EUDR_CLIENT_ID is required with a URL endpoint"),
        };
        let extra_roots_pem = self
            .eudr_ca_file
            .as_ref()
            .map(|path| {
                std::fs::read(path)
                    .with_context(|| format!("reading ROASTERY_EUDR_CA_FILE {}", path.display()))
            })
            .transpose()?;
        Ok(Some(
            EudrSettings::new(endpoint, username, AuthKey::new(key), client_id)
                .with_operator_id(self.eudr_operator_id.clone())
                .with_extra_roots_pem(extra_roots_pem)
                .with_timeout(Duration::from_secs(self.eudr_timeout)),
        ))
    }

    /// What of the EUDR connection is configured when not all of it is (for a warning at
    /// start); `None` when all or none of endpoint, username and key are set.
    pub fn eudr_partly_configured(&self) -> Option<String> {
        let parts = [
            ("endpoint", self.eudr_endpoint.is_some()),
            ("username", self.eudr_username.is_some()),
            (
                "authentication key",
                self.eudr_auth_key.is_some() || self.eudr_auth_key_file.is_some(),
            ),
        ];
        let set = parts.iter().filter(|(_, on)| *on).count();
        if set == 0 || set == parts.len() {
            return None;
        }
        let missing: Vec<&str> = parts
            .iter()
            .filter(|(_, on)| !on)
            .map(|(name, _)| *name)
            .collect();
        Some(missing.join(", "))
    }

    /// Loads the configuration: `file` (if given) over the defaults, the environment over both.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let mut config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
            }
            None => Config::default(),
        };
        config.apply_env(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        if let Some(v) = var("ROASTERY_LISTEN") {
            self.listen = v;
        }
        if let Some(v) = var("ROASTERY_DATABASE_URL") {
            self.database_url = v;
        }
        if let Some(v) = var("ROASTERY_TLS_CERT") {
            self.tls_cert = Some(v.into());
        }
        if let Some(v) = var("ROASTERY_TLS_KEY") {
            self.tls_key = Some(v.into());
        }
        if let Some(v) = var("ROASTERY_RATE_LIMIT") {
            self.rate_limit = v;
        }
        if let Some(v) = var("ROASTERY_WORKERS") {
            self.workers = Some(v.parse().context("ROASTERY_WORKERS must be a number")?);
        }
        if let Some(v) = var("ROASTERY_POOL_SIZE") {
            self.pool_size = Some(v.parse().context("ROASTERY_POOL_SIZE must be a number")?);
        }
        if let Some(v) = var("ROASTERY_LISTING_CACHE_MB") {
            self.listing_cache_mb = v
                .parse()
                .context("ROASTERY_LISTING_CACHE_MB must be a whole number of MiB")?;
        }
        if self.listing_cache_mb > MAX_LISTING_CACHE_MB {
            anyhow::bail!(
                "ROASTERY_LISTING_CACHE_MB (listing_cache_mb) must be at most {MAX_LISTING_CACHE_MB}, not {}",
                self.listing_cache_mb
            );
        }
        if let Some(v) = var("ROASTERY_LOG_FORMAT") {
            self.log_format = Some(LogFormat::parse(&v).map_err(anyhow::Error::msg)?);
        }
        if let Some(v) = var("ROASTERY_EUDR_ENFORCE") {
            self.eudr_enforce = match EudrEnforce::parse(v.trim()) {
                Some(EudrEnforce::Ship) => EudrEnforceSetting::Ship,
                Some(EudrEnforce::ShipVerified) => EudrEnforceSetting::ShipVerified,
                Some(EudrEnforce::Off) => EudrEnforceSetting::Off,
                None => anyhow::bail!(
                    "ROASTERY_EUDR_ENFORCE must be `off`, `ship` or `ship-verified`, not `{v}`"
                ),
            };
        }
        if let Some(v) = var("ROASTERY_EPCIS_BASE_URI") {
            self.epcis_base_uri = Some(v);
        }
        if let Some(v) = var("ROASTERY_METRICS") {
            self.metrics = Switch::parse(&v).ok_or_else(|| {
                anyhow::anyhow!("ROASTERY_METRICS must be `on` or `off`, not `{v}`")
            })?;
        }
        let seconds = |name: &str, v: String| -> anyhow::Result<u64> {
            match v.parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => anyhow::bail!("{name} must be a whole number of seconds above zero"),
            }
        };
        if let Some(v) = var("ROASTERY_HEADER_TIMEOUT") {
            self.header_timeout = seconds("ROASTERY_HEADER_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_BODY_TIMEOUT") {
            self.body_timeout = seconds("ROASTERY_BODY_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_DRAIN_TIMEOUT") {
            self.drain_timeout = seconds("ROASTERY_DRAIN_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_MAX_CONNECTIONS") {
            self.max_connections = v
                .parse()
                .context("ROASTERY_MAX_CONNECTIONS must be a number")?;
        }
        if let Some(v) = var("ROASTERY_DATABASE_READ_URL").filter(|v| !v.is_empty()) {
            self.database_read_url = Some(v);
        }
        if let Some(v) = var("ROASTERY_LOCK_TIMEOUT") {
            self.lock_timeout = seconds("ROASTERY_LOCK_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_STATEMENT_TIMEOUT") {
            self.statement_timeout = seconds("ROASTERY_STATEMENT_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_IDLE_IN_TRANSACTION_TIMEOUT") {
            self.idle_in_transaction_timeout = seconds("ROASTERY_IDLE_IN_TRANSACTION_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_POOL_TIMEOUT") {
            self.pool_timeout = seconds("ROASTERY_POOL_TIMEOUT", v)?;
        }
        if let Some(v) = var("ROASTERY_APPLICATION_NAME") {
            self.application_name = Some(v);
        }
        if let Some(v) = var("ROASTERY_WEBHOOK_ALLOW_PRIVATE") {
            self.webhook_allow_private = Switch::parse(&v).ok_or_else(|| {
                anyhow::anyhow!("ROASTERY_WEBHOOK_ALLOW_PRIVATE must be `on` or `off`, not `{v}`")
            })?;
        }
        if let Some(v) = var("ROASTERY_WEBHOOK_CA_FILE").filter(|v| !v.is_empty()) {
            self.webhook_ca_file = Some(v.into());
        }
        if let Some(v) = var("ROASTERY_WEBHOOK_RETRY_SCALE") {
            self.webhook_retry_scale = v;
        }
        if let Some(v) = var("ROASTERY_EVENT_RETENTION_DAYS") {
            self.event_retention_days = v.trim().parse::<u64>().map_err(|_| {
                anyhow::anyhow!(
                    "ROASTERY_EVENT_RETENTION_DAYS must be a whole number of days from 1 to \
                     {MAX_EVENT_RETENTION_DAYS}, not `{v}`"
                )
            })?;
        }
        self.event_retention()?;
        let text = |v: String| Some(v.trim().to_owned()).filter(|v| !v.is_empty());
        if let Some(v) = var("ROASTERY_EUDR_ENDPOINT") {
            self.eudr_endpoint = text(v);
        }
        if let Some(v) = var("ROASTERY_EUDR_USERNAME") {
            self.eudr_username = text(v);
        }
        if let Some(v) = var("ROASTERY_EUDR_AUTH_KEY_FILE") {
            self.eudr_auth_key_file = text(v).map(PathBuf::from);
        }
        if let Some(v) = var("ROASTERY_EUDR_AUTH_KEY") {
            self.eudr_auth_key = text(v).map(Secret);
        }
        if let Some(v) = var("ROASTERY_EUDR_CLIENT_ID") {
            self.eudr_client_id = text(v);
        }
        if let Some(v) = var("ROASTERY_EUDR_OPERATOR_ID") {
            self.eudr_operator_id = text(v);
        }
        if let Some(v) = var("ROASTERY_EUDR_CA_FILE") {
            self.eudr_ca_file = text(v).map(PathBuf::from);
        }
        if let Some(v) = var("ROASTERY_EUDR_POLL_SCALE") {
            self.eudr_poll_scale = v;
        }
        if let Some(v) = var("ROASTERY_EUDR_REVERIFY_DAYS") {
            self.eudr_reverify_days = v.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "ROASTERY_EUDR_REVERIFY_DAYS must be a whole number of days (0: never), not `{v}`"
                )
            })?;
        }
        if let Some(v) = var("ROASTERY_EUDR_TIMEOUT") {
            self.eudr_timeout = seconds("ROASTERY_EUDR_TIMEOUT", v)?;
        }
        if self.eudr_timeout == 0 {
            bail!("ROASTERY_EUDR_TIMEOUT must be a whole number of seconds above zero");
        }
        self.check_eudr()?;
        self.webhook_retry_scale_millis()?;
        roastery_adapters_http::parse_rate_limit(&self.rate_limit).map_err(anyhow::Error::msg)?;
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            bail!("ROASTERY_TLS_CERT and ROASTERY_TLS_KEY go together");
        }
        Ok(())
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For people: one coloured line per event, with its span's fields.
    #[serde(alias = "text")]
    Pretty,
    /// For log collectors: one JSON object per line.
    Json,
}

impl LogFormat {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pretty" | "text" => Ok(Self::Pretty),
            "json" => Ok(Self::Json),
            _ => Err(format!(
                "ROASTERY_LOG_FORMAT must be `pretty` or `json`, not `{text}`"
            )),
        }
    }

    /// The setting, or when unset: `pretty` for a person at a terminal, `json` for a collector.
    pub fn resolve(setting: Option<Self>, terminal: bool) -> Self {
        setting.unwrap_or(if terminal { Self::Pretty } else { Self::Json })
    }
}

/// An `on`/`off` setting.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    On,
    Off,
}

impl Switch {
    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "on" => Some(Self::On),
            "off" => Some(Self::Off),
            _ => None,
        }
    }

    pub fn is_on(self) -> bool {
        self == Self::On
    }
}

/// The most MiB of listing items an instance may be told to keep (64 GiB).
const MAX_LISTING_CACHE_MB: u64 = 65_536;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_cache_is_read_in_mib_and_bounded() {
        assert_eq!(
            Config::default().pool_options().listing_cache_bytes,
            32 << 20
        );
        let mut config = Config::default();
        config
            .apply_env(|name| (name == "ROASTERY_LISTING_CACHE_MB").then(|| "0".to_owned()))
            .unwrap();
        assert_eq!(config.pool_options().listing_cache_bytes, 0);
        for bad in ["-1", "lots", "65537", "18446744073709551615"] {
            let mut config = Config::default();
            let e = config
                .apply_env(|name| (name == "ROASTERY_LISTING_CACHE_MB").then(|| bad.to_owned()))
                .unwrap_err();
            assert!(
                e.to_string().contains("ROASTERY_LISTING_CACHE_MB"),
                "{bad}: {e}"
            );
        }
        let mut file: Config = toml::from_str("listing_cache_mb = 100000").unwrap();
        assert!(file.apply_env(|_| None).is_err(), "checked on load");
        let mut file: Config = toml::from_str("listing_cache_mb = 128").unwrap();
        file.apply_env(|_| None).unwrap();
        assert_eq!(file.pool_options().listing_cache_bytes, 128 << 20);
    }

    #[test]
    fn environment_overrides_file_and_defaults() {
        let mut config: Config = toml::from_str("listen = \"0.0.0.0:9443\"\nworkers = 3").unwrap();
        config
            .apply_env(|name| (name == "ROASTERY_DATABASE_URL").then(|| "postgres://x/y".into()))
            .unwrap();
        assert_eq!(config.listen, "0.0.0.0:9443");
        assert_eq!(config.workers, Some(3));
        assert_eq!(config.database_url, "postgres://x/y");
        assert_eq!(config.rate_limit, "5/s,burst=10");
    }

    #[test]
    fn certificate_and_key_go_together() {
        let mut config = Config::default();
        let err = config
            .apply_env(|name| (name == "ROASTERY_TLS_CERT").then(|| "cert.pem".into()))
            .unwrap_err();
        assert!(err.to_string().contains("go together"));
    }

    #[test]
    fn the_rate_limit_is_checked_when_loaded() {
        let mut config = Config::default();
        config
            .apply_env(|name| (name == "ROASTERY_RATE_LIMIT").then(|| "off".into()))
            .unwrap();
        assert_eq!(config.rate_limit, "off");
        let err = config
            .apply_env(|name| (name == "ROASTERY_RATE_LIMIT").then(|| "5 per second".into()))
            .unwrap_err();
        assert!(err.to_string().contains("5 per second"), "{err}");
    }

    #[test]
    fn the_log_format_is_read_from_the_file_and_the_environment() {
        let config: Config = toml::from_str("log_format = \"json\"").unwrap();
        assert_eq!(config.log_format, Some(LogFormat::Json));
        let config: Config = toml::from_str("log_format = \"text\"").unwrap();
        assert_eq!(config.log_format, Some(LogFormat::Pretty));
        assert!(toml::from_str::<Config>("log_format = \"xml\"").is_err());
        let mut config = Config::default();
        assert_eq!(config.log_format, None);
        config
            .apply_env(|name| (name == "ROASTERY_LOG_FORMAT").then(|| "JSON".into()))
            .unwrap();
        assert_eq!(config.log_format, Some(LogFormat::Json));
        let err = config
            .apply_env(|name| (name == "ROASTERY_LOG_FORMAT").then(|| "xml".into()))
            .unwrap_err();
        assert!(err.to_string().contains("pretty` or `json"), "{err}");
    }

    #[test]
    fn an_unset_log_format_follows_the_terminal() {
        assert_eq!(LogFormat::resolve(None, true), LogFormat::Pretty);
        assert_eq!(LogFormat::resolve(None, false), LogFormat::Json);
        assert_eq!(
            LogFormat::resolve(Some(LogFormat::Pretty), false),
            LogFormat::Pretty
        );
        assert_eq!(
            LogFormat::resolve(Some(LogFormat::Json), true),
            LogFormat::Json
        );
    }

    #[test]
    fn metrics_can_be_switched_off() {
        let config: Config = toml::from_str("metrics = \"off\"").unwrap();
        assert_eq!(config.metrics, Switch::Off);
        let mut config = Config::default();
        assert!(config.metrics.is_on());
        config
            .apply_env(|name| (name == "ROASTERY_METRICS").then(|| "off".into()))
            .unwrap();
        assert!(!config.metrics.is_on());
        assert!(
            config
                .apply_env(|name| (name == "ROASTERY_METRICS").then(|| "maybe".into()))
                .is_err()
        );
    }

    fn eudr_env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn eudr_is_off_until_endpoint_username_and_key_are_all_set() {
        let mut config = Config::default();
        config.apply_env(|_| None).unwrap();
        assert!(config.eudr_settings().unwrap().is_none());
        assert_eq!(config.eudr_partly_configured(), None);
        config
            .apply_env(eudr_env(&[
                ("ROASTERY_EUDR_ENDPOINT", "acceptance"),
                ("ROASTERY_EUDR_USERNAME", "roaster"),
            ]))
            .unwrap();
        assert!(config.eudr_settings().unwrap().is_none());
        assert_eq!(
            config.eudr_partly_configured().as_deref(),
            Some("authentication key")
        );
        config
            .apply_env(eudr_env(&[("ROASTERY_EUDR_AUTH_KEY", "k3y-value")]))
            .unwrap();
        let settings = config.eudr_settings().unwrap().unwrap();
        assert_eq!(settings.endpoint, EudrEndpoint::Acceptance);
        assert_eq!(settings.username, "roaster");
        assert_eq!(settings.client_id, "eudr-test");
        assert_eq!(settings.operator_id, None);
        assert_eq!(settings.auth_key, AuthKey::new("k3y-value"));
    }

    #[test]
    fn the_client_id_defaults_by_environment_and_is_required_for_a_url() {
        let mut config: Config = toml::from_str(
            "eudr_endpoint = \"production\"\neudr_username = \"u\"\neudr_auth_key = \"k\"",
        )
        .unwrap();
        config.apply_env(|_| None).unwrap();
        assert_eq!(
            config.eudr_settings().unwrap().unwrap().client_id,
            "eudr-repository"
        );
        let err = config
            .apply_env(eudr_env(&[(
                "ROASTERY_EUDR_ENDPOINT",
                "https://127.0.0.1:9999/tracesnt/",
            )]))
            .unwrap_err();
        assert!(err.to_string().contains("ROASTERY_EUDR_CLIENT_ID"), "{err}");
        config
            .apply_env(eudr_env(&[("ROASTERY_EUDR_CLIENT_ID", "stub-client")]))
            .unwrap();
        let settings = config.eudr_settings().unwrap().unwrap();
        assert_eq!(settings.client_id, "stub-client");
        assert_eq!(
            settings.endpoint.base_url(),
            "https://127.0.0.1:9999/tracesnt/"
        );
    }

    #[test]
    fn bad_eudr_values_are_start_up_errors() {
        for (name, value, says) in [
            (
                "ROASTERY_EUDR_ENDPOINT",
                "http://example.org/",
                "ROASTERY_EUDR_ENDPOINT",
            ),
            (
                "ROASTERY_EUDR_ENDPOINT",
                "staging",
                "ROASTERY_EUDR_ENDPOINT",
            ),
            ("ROASTERY_EUDR_POLL_SCALE", "0", "ROASTERY_EUDR_POLL_SCALE"),
            ("ROASTERY_EUDR_POLL_SCALE", "-1", "ROASTERY_EUDR_POLL_SCALE"),
            (
                "ROASTERY_EUDR_POLL_SCALE",
                "fast",
                "ROASTERY_EUDR_POLL_SCALE",
            ),
            (
                "ROASTERY_EUDR_REVERIFY_DAYS",
                "-1",
                "ROASTERY_EUDR_REVERIFY_DAYS",
            ),
            (
                "ROASTERY_EUDR_REVERIFY_DAYS",
                "weekly",
                "ROASTERY_EUDR_REVERIFY_DAYS",
            ),
            (
                "ROASTERY_EUDR_OPERATOR_ID",
                "an-identifier-far-too-long",
                "ROASTERY_EUDR_OPERATOR_ID",
            ),
        ] {
            let mut config = Config::default();
            let err = config
                .apply_env(|n| (n == name).then(|| value.to_owned()))
                .unwrap_err();
            assert!(err.to_string().contains(says), "{name}={value}: {err}");
        }
        let mut config = Config::default();
        let err = config
            .apply_env(eudr_env(&[
                ("ROASTERY_EUDR_AUTH_KEY", "k"),
                ("ROASTERY_EUDR_AUTH_KEY_FILE", "/nonexistent"),
            ]))
            .unwrap_err();
        assert!(err.to_string().contains("not both"), "{err}");
        assert!(toml::from_str::<Config>("eudr_reverify_days = -1").is_err());
    }

    #[test]
    fn the_schedule_reads_scale_and_days() {
        let mut config = Config::default();
        assert_eq!(config.eudr_schedule().unwrap(), EudrSchedule::default());
        config
            .apply_env(eudr_env(&[
                ("ROASTERY_EUDR_POLL_SCALE", "0.001"),
                ("ROASTERY_EUDR_REVERIFY_DAYS", "0"),
            ]))
            .unwrap();
        let schedule = config.eudr_schedule().unwrap();
        assert_eq!(schedule.poll_scale, rust_decimal::Decimal::new(1, 3));
        assert_eq!(schedule.reverify_after(), None);
        assert_eq!(config.eudr_timeout, 30);
        config
            .apply_env(eudr_env(&[("ROASTERY_EUDR_TIMEOUT", "2")]))
            .unwrap();
        assert_eq!(config.eudr_timeout, 2);
        assert!(
            config
                .apply_env(eudr_env(&[("ROASTERY_EUDR_TIMEOUT", "0")]))
                .is_err()
        );
    }

    #[test]
    fn the_key_is_read_from_its_file_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("eudr.key");
        std::fs::write(&key_file, "file-k3y-secret\n").unwrap();
        let mut config = Config::default();
        config
            .apply_env(|name| match name {
                "ROASTERY_EUDR_ENDPOINT" => Some("acceptance".into()),
                "ROASTERY_EUDR_USERNAME" => Some("roaster".into()),
                "ROASTERY_EUDR_AUTH_KEY_FILE" => Some(key_file.display().to_string()),
                "ROASTERY_EUDR_OPERATOR_ID" => Some("OP-7".into()),
                _ => None,
            })
            .unwrap();
        let settings = config.eudr_settings().unwrap().unwrap();
        assert_eq!(settings.auth_key, AuthKey::new("file-k3y-secret"));
        assert_eq!(settings.operator_id.as_deref(), Some("OP-7"));
        assert!(!format!("{settings:?}").contains("file-k3y-secret"));

        let mut config = Config::default();
        config
            .apply_env(eudr_env(&[("ROASTERY_EUDR_AUTH_KEY", "env-k3y-secret")]))
            .unwrap();
        let shown = format!("{config:?}");
        assert!(!shown.contains("env-k3y-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn event_retention_is_checked_from_the_environment_and_the_file() {
        for bad in ["100000000", "0", "-1", "thirty"] {
            let mut config = Config::default();
            let e = config
                .apply_env(|name| (name == "ROASTERY_EVENT_RETENTION_DAYS").then(|| bad.to_owned()))
                .unwrap_err();
            assert!(
                e.to_string().contains("ROASTERY_EVENT_RETENTION_DAYS"),
                "{bad}: {e}"
            );
        }
        let mut config = Config::default();
        config
            .apply_env(|name| (name == "ROASTERY_EVENT_RETENTION_DAYS").then(|| "36500".to_owned()))
            .unwrap();
        assert_eq!(config.event_retention().unwrap().as_secs(), 36_500 * 86_400);
        let file: Config = toml::from_str("event_retention_days = 0").unwrap();
        assert!(file.event_retention().is_err());
        let mut file = file;
        assert!(
            file.apply_env(|_| None).is_err(),
            "the file's value is checked on load"
        );
    }

    #[test]
    fn unknown_keys_in_the_file_are_refused() {
        assert!(toml::from_str::<Config>("lisen = \"x\"").is_err());
    }
}
