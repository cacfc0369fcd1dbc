use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    let cli = roastery_server::cli::Cli::parse();
    let json = std::env::var("ROASTERY_LOG_FORMAT").is_ok_and(|f| f == "json");
    // rustls warns for every client that sends an IP address as SNI; that is the client's quirk.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        logs.json().init();
    } else {
        logs.init();
    }
    roastery_server::cli::run(cli)
}
