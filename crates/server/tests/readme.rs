//! The README's trace and roast list examples, run as written after `make demo`: the demo data seeded into
//! `demo.db` as the Makefile does, then the README's commands (with the release binary's path
//! pointing at this build), whose output must be the README's.

// Test code: a failed setup step or assertion should panic with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout
)]

use std::process::Command;

mod support;

const README: &str = include_str!("../../../README.md");
const MAKEFILE: &str = include_str!("../../../Makefile");

#[test]
fn the_trace_example_works_as_written_after_make_demo() {
    run_section("## Trace a bag back");
}

#[test]
fn the_roast_list_example_works_as_written_after_make_demo() {
    run_section("## Plan the roast");
}

/// Runs the first `sh` block of the README section under `heading` after seeding the demo as
/// `make demo` does: its `$ ` lines are the commands, the other lines their output.
fn run_section(heading: &str) {
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
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("the README's section {heading}"));
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section's example");
    let commands: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("$ ")).collect();
    let expected: Vec<&str> = block.lines().filter(|l| !l.starts_with("$ ")).collect();
    assert!(!commands.is_empty() && !expected.is_empty(), "{block}");

    let dir = tempfile::tempdir().unwrap();
    let binary = support::binary();
    let seeded = Command::new(&binary)
        .current_dir(dir.path())
        .env("ROASTERY_DATABASE_URL", "sqlite://demo.db")
        .args(["seed", "demo"])
        .output()
        .unwrap();
    assert!(
        seeded.status.success(),
        "{}",
        String::from_utf8_lossy(&seeded.stderr)
    );
    let script = commands
        .join("\n")
        .replace("./target/release/roastery", &binary.display().to_string());
    let output = Command::new("bash")
        .current_dir(dir.path())
        .env_remove("ROASTERY_DATABASE_URL")
        .args(["-euo", "pipefail", "-c", &script])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
}
