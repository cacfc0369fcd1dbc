//! `roastery eudr --format svg|html` in a real browser (headless Chromium): the demo order whose
//! blend has a source without a statement, drawn from the command line's output. A page around
//! the SVG measures every drawn plot with the browser's own layout (`getBBox`) and writes what it
//! found into the DOM, which the test reads back with `--dump-dom`.
//!
//! Needs Chromium (`chromium`, or the path in `CHROMIUM`); without it the test says it is
//! skipped, unless `CI` is set, where it fails. The screenshot goes to
//! `target/ci-artifacts/eudr.png` (or `$ROASTERY_ARTIFACTS_DIR/eudr.png`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use roastery_domain::page::PageRequest;
use roastery_ports::order::ListOrders;
use roastery_test_support::browser::{browse, chromium};

fn roastery(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_roastery"))
        .current_dir(dir)
        .env(
            "ROASTERY_DATABASE_URL",
            format!("sqlite://{}", dir.join("roastery.db").display()),
        )
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .expect("run roastery");
    assert!(
        output.status.success(),
        "roastery {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// A page around `svg` that measures each drawn plot and marker with the browser's layout and
/// writes one line each into `<pre id="measured">`: tag, class, lot, whether it has a size (more
/// than a pixel both ways; polygons say nothing of size, specks are expected) and whether it lies
/// inside the picture; then the scale bar and its label.
fn probe(svg: &str) -> String {
    format!(
        r##"<!DOCTYPE html><html><body>{svg}<pre id="measured"></pre><script>
        const box = document.getElementById("plots").viewBox.baseVal;
        const lines = [];
        for (const el of document.querySelectorAll(".plot, .marker")) {{
          const b = el.getBBox();
          const inside = b.x >= 0 && b.y >= 0 && b.x + b.width <= box.width && b.y + b.height <= box.height;
          const sized = b.width > 1 && b.height > 1;
          const kind = el.classList.contains("marker") ? "marker" : "plot " + el.classList[1];
          const size = el.tagName === "path" && !sized ? "" : (sized ? " sized" : " empty");
          lines.push(el.tagName + " " + kind + " " + el.dataset.lot + size + (inside ? " inside" : " outside"));
        }}
        const bar = document.getElementById("scale-bar").getBBox();
        lines.push("scale-bar " + (bar.width > 20 ? "drawn" : "missing") + " " + document.querySelector("#scale-bar text").textContent);
        document.getElementById("measured").textContent = lines.join("\n");
        </script></body></html>"##
    )
}

#[test]
fn the_plots_behind_an_order_render_in_a_browser() {
    let Some(chromium) = chromium("the browser test of the EUDR picture") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    roastery(dir.path(), &["seed", "demo"]);
    let url = format!("sqlite://{}", dir.path().join("roastery.db").display());
    let app = roastery_server::open_roastery(&url, Some(1)).unwrap();
    let orders = app
        .list_orders(ListOrders::default(), PageRequest::default())
        .unwrap();
    // The demo's order shipped from the house blend: Colombia (a farm of two fields) and Brazil
    // (one polygon, no statement yet).
    let order = orders
        .items
        .iter()
        .find(|o| o.external_id == "WEB-1005")
        .expect("the demo's blend order");
    let id = order.id.to_string();

    let profile = tempfile::tempdir().unwrap();
    let measure = |args: &[&str], name: &str| -> Vec<String> {
        let svg = roastery(dir.path(), args);
        assert!(svg.trim_start().starts_with("<svg"), "{svg:.200}");
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, probe(&svg)).unwrap();
        let dom = browse(
            &chromium,
            profile.path(),
            &["--dump-dom"],
            &format!("file://{}", page.display()),
        );
        dom.split("<pre id=\"measured\">")
            .nth(1)
            .and_then(|rest| rest.split("</pre>").next())
            .expect("the probe ran")
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let count = |lines: &[String], line: &str| lines.iter().filter(|l| *l == line).count();

    // Colombia and Brazil are thousands of kilometres apart: each plot is a speck, so each is
    // marked.
    let order_lines = measure(&["eudr", "--order", &id, "--format", "svg"], "order");
    assert_eq!(
        count(&order_lines, "path plot polygon PG-2 inside"),
        2,
        "both fields of the Colombian farm: {order_lines:?}"
    );
    assert_eq!(
        count(&order_lines, "path plot polygon PG-3 inside"),
        1,
        "{order_lines:?}"
    );
    assert_eq!(
        count(&order_lines, "circle marker PG-2 sized inside"),
        2,
        "{order_lines:?}"
    );
    assert_eq!(
        count(&order_lines, "circle marker PG-3 sized inside"),
        1,
        "{order_lines:?}"
    );
    assert_eq!(order_lines.len(), 7, "{order_lines:?}");
    let bar = order_lines.last().unwrap();
    assert!(
        bar.starts_with("scale-bar drawn ") && bar.ends_with(" km"),
        "{bar}"
    );

    // The Ethiopian lot moved to the roastery floor (made by a transfer): its source's point and
    // polygon, near each other, both drawn at a size one can see.
    let moved = app
        .list_green_lots(None, PageRequest::default())
        .unwrap()
        .items
        .into_iter()
        .find(|v| v.lot.id != v.lot.origin_id)
        .expect("the demo's transferred lot");
    let lot_id = moved.lot.id.to_string();
    let lot_lines = measure(&["eudr", "--lot", &lot_id, "--format", "svg"], "lot");
    assert_eq!(
        lot_lines[..2],
        [
            "circle plot point PG-1 sized inside".to_owned(),
            "path plot polygon PG-1 sized inside".to_owned()
        ],
        "{lot_lines:?}"
    );
    assert!(
        lot_lines[2].starts_with("scale-bar drawn ") && lot_lines[2].ends_with(" m"),
        "{lot_lines:?}"
    );

    // The HTML page names what is missing and holds the same picture.
    let html = roastery(dir.path(), &["eudr", "--order", &id, "--format", "html"]);
    let page = dir.path().join("eudr.html");
    std::fs::write(&page, html).unwrap();
    let url = format!("file://{}", page.display());
    let dom = browse(&chromium, profile.path(), &["--dump-dom"], &url);
    assert!(dom.contains("id=\"incomplete\""), "{dom:.500}");
    assert!(
        dom.contains("PG-3") && dom.contains("NO_STATEMENT"),
        "{dom:.2000}"
    );

    let artifacts = std::env::var_os("ROASTERY_ARTIFACTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-artifacts"));
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join("eudr.png");
    std::fs::remove_file(&screenshot).ok();
    browse(
        &chromium,
        profile.path(),
        &[
            "--window-size=900,900",
            &format!("--screenshot={}", screenshot.display()),
        ],
        &url,
    );
    let png = std::fs::read(&screenshot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000);
    eprintln!("screenshot of the EUDR picture: {}", screenshot.display());
}
