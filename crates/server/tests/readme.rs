//! The README's `roastery` commands, run as written after the README's own set-up (which puts
//! the built binary first on `PATH`; here this build's binary is): the trace example after
//! `make demo`, whose output must be the README's, and every other `roastery …` command of its
//! code blocks and inline code beside the demo data.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout
)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

const README: &str = include_str!("../../../README.md");
const MAKEFILE: &str = include_str!("../../../Makefile");

#[test]
fn the_trace_example_works_as_written_after_make_demo() {
    if Command::new("sqlite3").arg("-version").output().is_err() {
        eprintln!(
            "skipped: the README's example needs the sqlite3 command, which is not installed"
        );
        return;
    }
    // What `make demo` does before it serves.
    assert!(
        MAKEFILE.contains("DEMO_DB ?= demo.db"),
        "the Makefile's demo database moved"
    );
    assert!(
        MAKEFILE.contains(
            "ROASTERY_DATABASE_URL=sqlite://$(DEMO_DB) ./target/release/roastery seed demo"
        ),
        "make demo seeds differently now"
    );
    let section = README
        .split("## Trace a bag back")
        .nth(1)
        .expect("the README's trace section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the trace example");
    let commands: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("$ ")).collect();
    let expected: Vec<&str> = block.lines().filter(|l| !l.starts_with("$ ")).collect();
    assert!(!commands.is_empty() && !expected.is_empty(), "{block}");

    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), "demo.db");
    let script = commands.join("\n");
    assert!(
        !script.contains("target/release"),
        "run as `roastery`, from PATH: {script}"
    );
    let output = bash(dir.path(), &script);
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
}

/// `PATH` with this build's binary directory first, as the README's set-up leaves it.
fn path_with_binary() -> String {
    let binary = support::binary();
    let bin_dir = binary
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    assert_eq!(
        binary.file_name().and_then(|n| n.to_str()),
        Some("roastery"),
        "the binary is found as `roastery`"
    );
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap().into_string().unwrap()
}

/// Runs `script` with bash (`-euo pipefail`) in `dir`, the binary on `PATH`, no database URL.
fn bash(dir: &Path, script: &str) -> std::process::Output {
    Command::new("bash")
        .current_dir(dir)
        .env("PATH", path_with_binary())
        .env_remove("ROASTERY_DATABASE_URL")
        .env_remove("RUST_LOG")
        .args(["-euo", "pipefail", "-c", script])
        .output()
        .unwrap()
}

/// `roastery seed demo` into `dir/db`.
fn seed(dir: &Path, db: &str) {
    let seeded = Command::new(support::binary())
        .current_dir(dir)
        .env("ROASTERY_DATABASE_URL", format!("sqlite://{db}"))
        .args(["seed", "demo"])
        .output()
        .unwrap();
    assert!(
        seeded.status.success(),
        "{}",
        String::from_utf8_lossy(&seeded.stderr)
    );
}

/// The README's shell code blocks (```sh), each as its lines.
fn shell_blocks(readme: &str) -> Vec<Vec<&str>> {
    readme
        .split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .map(|b| b.lines().collect())
        .collect()
}

/// The README's inline code outside code blocks, whitespace (line breaks) made single spaces.
fn inline_code(readme: &str) -> Vec<String> {
    let mut prose = String::new();
    for (i, part) in readme.split("```").enumerate() {
        if i % 2 == 0 {
            prose.push_str(part);
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// `line` with every UUID replaced by `ID` (ids differ from run to run).
fn mask_ids(line: &str) -> String {
    let is_uuid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    };
    line.split(',')
        .map(|field| if is_uuid(field) { "ID" } else { field })
        .collect::<Vec<_>>()
        .join(",")
}

/// A command written as a template (`roastery trace LOT_ID [--direction ...]`), not to run.
fn is_template(command: &str) -> bool {
    command.contains(['[', '|', '(', '…'])
        || command.contains("...")
        || command.split_whitespace().any(|word| {
            word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                || word == "N"
        })
}

#[test]
fn every_roastery_command_in_the_readme_runs_as_written_after_its_set_up() {
    if Command::new("sqlite3").arg("-version").output().is_err() {
        eprintln!(
            "skipped: the README's examples need the sqlite3 command, which is not installed"
        );
        return;
    }
    // The set-up: build the release binary, then put its directory first on PATH.
    let setup = README
        .split("## Set up")
        .nth(1)
        .and_then(|s| s.split("```sh\n").nth(1))
        .and_then(|b| b.split("```").next())
        .expect("the README's set-up block");
    let build = setup.find("make release").expect("the build step");
    let path = setup
        .find("export PATH=\"$PWD/target/release:$PATH\"")
        .expect("the PATH step");
    assert!(build < path, "{setup}");
    assert!(MAKEFILE.contains("release:\n\tcargo build --release --locked -p roastery-server"));
    assert!(
        !README.contains("./target/release/roastery"),
        "every command is `roastery`, found on PATH"
    );

    // Variables the README's commands use, set as the README sets them (from the database).
    let blocks = shell_blocks(README);
    let preamble: Vec<&str> = blocks
        .iter()
        .flatten()
        .map(|l| l.strip_prefix("$ ").unwrap_or(l))
        .filter(|l| {
            l.split_once("=$(sqlite3 roastery.db ")
                .is_some_and(|(name, _)| name.chars().all(|c| c.is_ascii_uppercase()))
        })
        .collect();
    let mut commands: Vec<String> = Vec::new();
    // Examples shown with their output: the commands, and the output (ids masked).
    let mut outputs: Vec<(String, Vec<String>)> = Vec::new();
    for block in &blocks {
        let prompted: Vec<&str> = block.iter().filter_map(|l| l.strip_prefix("$ ")).collect();
        if !prompted.is_empty() {
            // An example with its output: its commands run together, in order.
            if prompted.iter().any(|l| l.contains("roastery ")) {
                commands.push(prompted.join("\n"));
                let shown = block.iter().filter(|l| !l.starts_with("$ "));
                outputs.push((prompted.join("\n"), shown.map(|l| mask_ids(l)).collect()));
            }
            continue;
        }
        commands.extend(
            block
                .iter()
                .map(|l| l.trim())
                .filter(|l| l.starts_with("roastery "))
                .map(str::to_owned),
        );
    }
    commands.extend(
        inline_code(README)
            .into_iter()
            .filter(|c| c.starts_with("roastery ") && !is_template(c)),
    );
    commands.sort();
    commands.dedup();
    // `roastery serve` runs until stopped: the tests of tests/api and crates/server/tests start
    // it the same way.
    let serve = commands.iter().filter(|c| *c == "roastery serve").count();
    assert_eq!(serve, 1, "{commands:#?}");
    commands.retain(|c| c != "roastery serve");
    for expected in [
        "roastery seed demo",
        "roastery verify",
        "roastery openapi",
        "roastery accounts create --name eudr-filing --json > eudr-account.json",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "{expected}: {commands:#?}"
        );
    }
    assert!(
        commands.iter().any(|c| c.contains("--format html")),
        "{commands:#?}"
    );

    // The demo data, as `roastery seed demo` and `make demo` leave it, copied for each command.
    let template = tempfile::tempdir().unwrap();
    seed(template.path(), "roastery.db");
    seed(template.path(), "demo.db");
    for command in &commands {
        let dir = tempfile::tempdir().unwrap();
        let script = if command == "roastery seed demo" {
            // In a directory of its own, as the README says.
            command.clone()
        } else {
            for db in ["roastery.db", "demo.db"] {
                std::fs::copy(template.path().join(db), dir.path().join(db)).unwrap();
            }
            format!("{}\n{command}", preamble.join("\n"))
        };
        let output = bash(dir.path(), &script);
        assert!(
            output.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        if let Some((_, shown)) = outputs.iter().find(|(c, _)| c == command) {
            let stdout = String::from_utf8(output.stdout.clone()).unwrap();
            let got: Vec<String> = stdout.lines().map(mask_ids).collect();
            assert_eq!(&got, shown, "{command}");
        }
        let written: PathBuf = dir.path().join("plots.html");
        if command.contains("> plots.html") {
            let page = std::fs::read_to_string(written).unwrap();
            assert!(page.contains("class=\"country\""), "{page:.300}");
        }
    }
}
