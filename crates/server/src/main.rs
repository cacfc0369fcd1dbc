use clap::Parser;
use roastery_server::cli::{Cli, Command};
use roastery_server::config::Config;

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = Config::load(cli.config.as_deref())?;
    // The server writes its lines through a thread of its own; the guard lives until `main`
    // returns, and dropping it writes out the lines still waiting.
    let _logs =
        roastery_server::logs::init(config.log_format, matches!(cli.command, Command::Serve))?;
    roastery_server::cli::run_with(cli, config)
}
