//! Configuration: defaults, then a TOML file (`--config`), then `ROASTERY_*` environment variables.

use roastery_domain::epcis::EpcisBase;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use roastery_adapters_diesel::{PoolOptions, default_application_name};
use roastery_ports::due_diligence::EudrEnforce;
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
}

/// `eudr_enforce`: `off` or `ship`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EudrEnforceSetting {
    #[default]
    Off,
    Ship,
}

impl EudrEnforceSetting {
    pub fn mode(self) -> EudrEnforce {
        match self {
            Self::Off => EudrEnforce::Off,
            Self::Ship => EudrEnforce::Ship,
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
        if let Some(v) = var("ROASTERY_LOG_FORMAT") {
            self.log_format = Some(LogFormat::parse(&v).map_err(anyhow::Error::msg)?);
        }
        if let Some(v) = var("ROASTERY_EUDR_ENFORCE") {
            self.eudr_enforce = match EudrEnforce::parse(v.trim()) {
                Some(EudrEnforce::Ship) => EudrEnforceSetting::Ship,
                Some(EudrEnforce::Off) => EudrEnforceSetting::Off,
                None => anyhow::bail!("ROASTERY_EUDR_ENFORCE must be `off` or `ship`, not `{v}`"),
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

#[cfg(test)]
mod tests {
    use super::*;

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
