//! Headless Chromium for tests that look at what a person would see (the API reference page, the
//! EUDR picture).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium's command (`$CHROMIUM`, `chromium` or `chromium-browser`), or `None` with a message
/// naming `what` did not run where it is absent and CI is not set; under CI its absence fails.
pub fn chromium(what: &str) -> Option<PathBuf> {
    let candidates = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["chromium", "chromium-browser"].map(PathBuf::from));
    for candidate in candidates {
        let found = Command::new(&candidate)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return Some(candidate);
        }
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(
        !ci,
        "CI is set but Chromium is not installed (apt-get install chromium)"
    );
    eprintln!("skipped: Chromium is not installed, so {what} did not run");
    None
}

/// Runs headless Chromium with `args` on `url` in the profile directory `profile`; its standard
/// output. Fails the test if Chromium fails or takes more than two minutes.
pub fn browse(chromium: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            // The test servers' certificates are self-signed; pages on disk read their neighbours.
            "--ignore-certificate-errors",
            "--allow-file-access-from-files",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).ok();
        out
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().expect("reader")
}
