//! The command line: `serve`, `accounts create|list|revoke`, `seed demo`.

#![allow(
    clippy::print_stdout,
    reason = "the command line answers on standard output"
)]

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use roastery_domain::scope::Scope;

use crate::config::Config;
use crate::startup::{Application, open_roastery};

#[derive(Debug, Parser)]
#[command(
    name = "roastery",
    version,
    about = "Inventory, quality and sales RPC service for coffee roasteries"
)]
pub struct Cli {
    /// TOML file with settings; `ROASTERY_*` environment variables override it.
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API over HTTPS.
    Serve,
    /// Manage service accounts.
    Accounts {
        #[command(subcommand)]
        command: AccountsCommand,
    },
    /// Print the OpenAPI document of the API.
    Openapi,
    /// Load data sets.
    Seed {
        #[command(subcommand)]
        command: SeedCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Create an account; prints its client id and secret once.
    Create {
        #[arg(long)]
        name: String,
        /// Space-separated scopes; default: every scope.
        #[arg(long)]
        scopes: Option<String>,
        /// Print `{"clientId", "clientSecret", "scopes"}`.
        #[arg(long)]
        json: bool,
    },
    /// List accounts.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke an account; its tokens stop working within a minute on every instance.
    Revoke { client_id: String },
}

#[derive(Debug, Subcommand)]
pub enum SeedCommand {
    /// A realistic demo data set, loaded through the same use cases as the API.
    Demo,
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load(cli.config.as_deref())?;
    match cli.command {
        Command::Serve => serve(config),
        Command::Openapi => {
            println!(
                "{}",
                roastery_adapters_http::openapi::document().to_pretty_json()?
            );
            Ok(())
        }
        Command::Accounts { command } => accounts(&config, command),
        Command::Seed {
            command: SeedCommand::Demo,
        } => crate::seed::demo(&open_roastery(&config.database_url, Some(2))?),
    }
}

fn serve(config: Config) -> anyhow::Result<()> {
    let system = actix_rt::System::new();
    system.block_on(async move {
        let app = Application::build(&config)?;
        app.run_until_stopped().await.context("serving")?;
        tracing::info!("stopped");
        Ok(())
    })
}

fn accounts(config: &Config, command: AccountsCommand) -> anyhow::Result<()> {
    let app = open_roastery(&config.database_url, Some(2))?;
    match command {
        AccountsCommand::Create { name, scopes, json } => {
            let all = Scope::ALL.map(Scope::as_str).join(" ");
            let created = app.create_account(&name, scopes.as_deref().unwrap_or(&all))?;
            let scopes: Vec<&str> = created.account.scopes.iter().map(Scope::as_str).collect();
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "clientId": created.account.client_id,
                        "clientSecret": created.client_secret,
                        "scopes": scopes,
                    })
                );
            } else {
                println!("client id:     {}", created.account.client_id);
                println!("client secret: {}", created.client_secret);
                println!("scopes:        {}", scopes.join(" "));
                println!("The secret is shown only now; store it securely.");
            }
        }
        AccountsCommand::List { json } => {
            let accounts = app.list_accounts()?;
            if json {
                let list: Vec<_> = accounts
                    .iter()
                    .map(|a| {
                        serde_json::json!({
                            "clientId": a.client_id,
                            "name": a.name,
                            "scopes": a.scopes.iter().map(Scope::as_str).collect::<Vec<_>>(),
                            "createdAt": a.created_at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                            "revoked": !a.is_active(),
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(list));
            } else {
                for a in accounts {
                    let state = if a.is_active() { "active" } else { "revoked" };
                    println!("{}\t{}\t{}\t{}", a.client_id, a.name, state, a.scopes);
                }
            }
        }
        AccountsCommand::Revoke { client_id } => {
            app.revoke_account(&client_id)?;
            println!("revoked {client_id}");
        }
    }
    Ok(())
}
