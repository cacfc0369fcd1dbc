use std::io::IsTerminal;

use clap::Parser;
use roastery_server::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    let cli = roastery_server::cli::Cli::parse();
    let config = Config::load(cli.config.as_deref())?;
    // rustls warns for every client that sends an IP address as SNI; that is the client's quirk.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let terminal = std::io::stderr().is_terminal();
    match LogFormat::resolve(config.log_format, terminal) {
        // The request's span (request id, client, operation, status, latency) goes on each line.
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
        LogFormat::Pretty => logs.with_ansi(terminal).init(),
    }
    roastery_server::cli::run_with(cli, config)
}
