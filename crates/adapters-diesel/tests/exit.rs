//! A process may exit while other threads open and close PostgreSQL connections (r2d2 connects
//! on threads of its own), and must exit cleanly (`src/libpq.rs`). Each run below is a child
//! process, this test binary run again, whose threads connect and disconnect in a loop until its
//! main thread exits after a few milliseconds. Before OpenSSL lost its exit handler and Kerberos
//! its probe, about one such exit in ten crashed (a segmentation fault, a failed assertion in
//! libkrb5, `free(): invalid pointer`), so 100 clean exits in a row do not happen by luck.
//! PostgreSQL only (`ROASTERY_TEST_DATABASE_URL`; skipped with a message when it is unset).

use std::process::Command;
use std::time::Duration;

use diesel::RunQueryDsl;
use roastery_adapters_diesel::libpq;

const CHILD: &str = "ROASTERY_EXIT_TEST_CHILD_MS";
const RUNS: u64 = 100;

#[test]
fn exiting_while_connections_open_and_close_on_other_threads_is_clean() {
    if let Ok(ms) = std::env::var(CHILD) {
        child::connect_on_threads_then_exit(ms.parse().expect("milliseconds"));
    }
    let Some(url) = roastery_test_support::database::postgres_server() else {
        return;
    };
    let me = std::env::current_exe().expect("this test binary");
    for run in 0..RUNS {
        let output = Command::new(&me)
            .args([
                "--exact",
                "exiting_while_connections_open_and_close_on_other_threads_is_clean",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, (5 + run % 40).to_string())
            .env("ROASTERY_TEST_DATABASE_URL", &url)
            .output()
            .expect("run the child");
        assert!(
            output.status.success(),
            "run {run} of {RUNS} exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("connected on 4 threads"),
            "run {run}: the child did not get as far as its threads: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[cfg(test)]
mod child {
    use super::*;

    /// The child: one connection on the main thread (libpq and OpenSSL set up as the store sets them
    /// up), four threads connecting, querying and disconnecting without end, then `exit` while they
    /// do, with every exit handler of the process running.
    pub fn connect_on_threads_then_exit(ms: u64) -> ! {
        let url = std::env::var("ROASTERY_TEST_DATABASE_URL").expect("the server's URL");
        let mut first = libpq::connect(&url).expect("connect");
        diesel::sql_query("SELECT 1")
            .execute(&mut first)
            .expect("a query");
        let (ready, started) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let url = url.clone();
            let ready = ready.clone();
            std::thread::spawn(move || {
                let mut told = false;
                loop {
                    if let Ok(mut conn) = libpq::connect(&url) {
                        diesel::sql_query("SELECT 1").execute(&mut conn).ok();
                        if !told {
                            ready.send(()).ok();
                            told = true;
                        }
                    }
                }
            });
        }
        for _ in 0..4 {
            started.recv().expect("a thread connected");
        }
        println!("connected on 4 threads");
        std::thread::sleep(Duration::from_millis(ms));
        std::process::exit(0)
    }
}
