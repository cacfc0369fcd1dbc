//! The command line: `serve`, `accounts create|list|revoke`, `seed demo|bench`, `verify`, `trace`,
//! `eudr`, `plan`, `epcis`.

#![allow(
    clippy::print_stdout,
    reason = "the command line answers on standard output"
)]

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use roastery_app::Caller;
use roastery_app::due_diligence::DueDiligenceOf;
use roastery_app::epcis::EpcisOf;
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
    /// Audit the ledger (every lot's entries sum to its weight and consumed lots weigh zero)
    /// and the lots' stored listing items (each the one rendered from its lot now). Exits 1
    /// naming each lot that disagrees.
    Verify,
    /// Print the genealogy of a lot.
    Trace {
        /// A green, roasted or blended lot id.
        lot_id: uuid::Uuid,
        #[arg(long, value_enum, default_value_t = TraceDirection::Upstream)]
        direction: TraceDirection,
        /// `csv`: one row per edge, for spreadsheets; `json`: lots, edges, orders and cuppings.
        #[arg(long, value_enum, default_value_t = TraceFormat::Csv)]
        format: TraceFormat,
    },
    /// Print the EUDR due diligence behind a lot or an order.
    Eudr {
        /// A green, roasted or blended lot id.
        #[arg(long, conflicts_with = "order", required_unless_present = "order")]
        lot: Option<uuid::Uuid>,
        /// An order id (its shipments' lots).
        #[arg(long)]
        order: Option<uuid::Uuid>,
        /// `geojson`: the plots, ready to upload with a statement; `csv`: one row per source lot
        /// and statement; `json`: as `inventory.trace.getDueDiligence` answers; `svg` or `html`:
        /// a picture of the plots (equirectangular, with a scale bar).
        #[arg(long, value_enum, default_value_t = EudrFormat::Geojson)]
        format: EudrFormat,
    },
    /// Print the roast list: what to roast for the open orders, in how many batches, from which
    /// green lots (`mrp.plan.getNetRequirements`).
    Plan {
        /// Only orders dated up to this day (inclusive, UTC: `2026-12-01`) or instant (RFC 3339).
        #[arg(long)]
        until: Option<String>,
        /// `table`: for a terminal; `csv`: one row per batch, lot to fetch, shortfall or missing
        /// item; `json`: as `mrp.plan.getNetRequirements` answers.
        #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
        format: PlanFormat,
    },
    /// Print the GS1 EPCIS 2.0 document (JSON-LD) of a lot's genealogy or of an order.
    Epcis {
        /// A green, roasted or blended lot id.
        #[arg(long, conflicts_with = "order", required_unless_present = "order")]
        lot: Option<uuid::Uuid>,
        /// With `--lot`: the way to walk its genealogy.
        #[arg(long, value_enum, default_value_t = TraceDirection::Upstream, requires = "lot")]
        direction: TraceDirection,
        /// An order id (what stands upstream of its shipments).
        #[arg(long)]
        order: Option<uuid::Uuid>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    Table,
    Csv,
    Json,
}

/// `--until`: a day means its end (orders of that whole day count), or an RFC 3339 instant.
fn until(text: &str) -> anyhow::Result<chrono::DateTime<chrono::Utc>> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&chrono::Utc));
    }
    let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").with_context(|| {
        format!("--until {text}: give a day (2026-12-01) or an RFC 3339 instant")
    })?;
    day.and_hms_opt(23, 59, 59)
        .map(|at| at.and_utc())
        .context("--until: no such time")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EudrFormat {
    Geojson,
    Csv,
    Json,
    Svg,
    Html,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceDirection {
    Upstream,
    Downstream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    Csv,
    Json,
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
    /// The benchmark data set (`make bench`): many green lots, roasts and orders, written through
    /// the use cases from several threads; prints the ids the load scenarios use as JSON.
    Bench {
        #[arg(long, default_value_t = 100_000)]
        green_lots: usize,
        #[arg(long, default_value_t = 200)]
        roasts: usize,
        #[arg(long, default_value_t = 1_000)]
        orders: usize,
        /// Writers in parallel (each one transaction per use case).
        #[arg(long, default_value_t = 4)]
        threads: usize,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load(cli.config.as_deref())?;
    run_with(cli, config)
}

/// Runs `cli` with `config` already loaded (from `cli.config` and the environment).
pub fn run_with(cli: Cli, config: Config) -> anyhow::Result<()> {
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
        } => {
            // Ledger entries of the demo name the seed as their client.
            let app = open_roastery(&config.database_url, Some(2))?.acting_as(Caller {
                client_id: "seed".into(),
                operation: None,
            });
            crate::seed::demo(&app)
        }
        Command::Verify => {
            let app = open_roastery(&config.database_url, Some(2))?;
            if !crate::traceability::verify(&app, &mut std::io::stdout())? {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Trace {
            lot_id,
            direction,
            format,
        } => {
            let app = open_roastery(&config.database_url, Some(2))?;
            let direction = match direction {
                TraceDirection::Upstream => roastery_domain::ledger::Direction::Upstream,
                TraceDirection::Downstream => roastery_domain::ledger::Direction::Downstream,
            };
            let trace = app.trace_lot(lot_id, direction)?;
            let out = &mut std::io::stdout();
            match format {
                TraceFormat::Csv => crate::traceability::write_csv(&trace, out)?,
                TraceFormat::Json => crate::traceability::write_json(&trace, out)?,
            }
            Ok(())
        }
        Command::Epcis {
            lot,
            direction,
            order,
        } => {
            let app =
                open_roastery(&config.database_url, Some(2))?.with_epcis_base(config.epcis_base()?);
            let of = match (lot, order) {
                (Some(id), _) => EpcisOf::Lot(
                    id,
                    match direction {
                        TraceDirection::Upstream => roastery_domain::ledger::Direction::Upstream,
                        TraceDirection::Downstream => {
                            roastery_domain::ledger::Direction::Downstream
                        }
                    },
                ),
                (None, Some(id)) => EpcisOf::Order(id),
                (None, None) => anyhow::bail!("give --lot ID or --order ID"),
            };
            let document = app.export_epcis(of)?;
            println!("{document}");
            Ok(())
        }
        Command::Eudr { lot, order, format } => {
            let app = open_roastery(&config.database_url, Some(2))?;
            let (of, title) = match (lot, order) {
                (Some(id), _) => (
                    DueDiligenceOf::Lot(id),
                    format!("Due diligence behind lot {id}"),
                ),
                (None, Some(id)) => (
                    DueDiligenceOf::Order(id),
                    format!("Due diligence behind order {id}"),
                ),
                (None, None) => anyhow::bail!("give --lot ID or --order ID"),
            };
            let report = app.due_diligence_of_all(of)?;
            let out = &mut std::io::stdout();
            match format {
                EudrFormat::Geojson => crate::eudr::write_geojson(&report, out)?,
                EudrFormat::Csv => crate::eudr::write_csv(&report, out)?,
                EudrFormat::Json => crate::eudr::write_json(report, out)?,
                EudrFormat::Svg => println!("{}", crate::eudr::svg(&report)),
                EudrFormat::Html => println!("{}", crate::eudr::html(&report, &title)),
            }
            Ok(())
        }
        Command::Plan { until: day, format } => {
            let app = open_roastery(&config.database_url, Some(2))?;
            let until = day.as_deref().map(until).transpose()?;
            let plan = app.net_requirements(until)?;
            let out = &mut std::io::stdout();
            match format {
                PlanFormat::Table => crate::planning::write_table(&plan, out)?,
                PlanFormat::Csv => crate::planning::write_csv(&plan, out)?,
                PlanFormat::Json => println!(
                    "{}",
                    roastery_adapters_http::net_requirements_result_json(plan)
                        .map_err(|e| anyhow::anyhow!("{e:?}"))?
                ),
            }
            Ok(())
        }
        Command::Seed {
            command:
                SeedCommand::Bench {
                    green_lots,
                    roasts,
                    orders,
                    threads,
                },
        } => crate::bench_data::bench(
            &open_roastery(
                &config.database_url,
                Some(u32::try_from(threads.max(1)).unwrap_or(u32::MAX)),
            )?
            .acting_as(Caller {
                client_id: "seed".into(),
                operation: None,
            }),
            crate::bench_data::BenchSize {
                green_lots,
                roasts,
                orders,
                threads,
            },
        ),
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
