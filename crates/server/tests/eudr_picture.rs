//! `roastery eudr --format svg|html` in a real browser (headless Chromium): the demo order whose
//! blend has a source without a statement (plots in Colombia and Brazil), and the Ethiopian lot,
//! drawn from the command line's output. A page around the SVG measures the overview (country
//! outlines, a marker per source lot) and each lot's inset (every plot's size in pixels, the area
//! labels, the scale bar) with the browser's own layout (`getBBox`), paints the SVG on a canvas to
//! read its pixels (land and sea), and writes what it found into the DOM, which the test reads
//! back with `--dump-dom`.
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

use roastery_app::order::ListOrders;
use roastery_domain::page::PageRequest;
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

/// A page around `svg` that measures the picture with the browser's own layout (`getBBox`) and
/// writes one line per finding into `<pre id="measured">`:
/// - `countries N`: the country outlines drawn in the overview;
/// - `marker LOT inside|outside`: each source lot's marker on the overview;
/// - `inset LOT`, then per drawn plot `plot LOT polygon|point WxH` (its size in pixels) and per
///   label `area LOT TEXT`, then `scale-bar LOT drawn|missing LABEL`;
/// - `land F sea F`: the share of the overview's pixels painted in the land and sea colours, and
///   `beside LOT land|sea|unclear` for most of a small block of pixels below each marker, read from a canvas the SVG
///   is painted on (so what a person sees, not the document's structure).
fn probe(svg: &str) -> String {
    format!(
        r##"<!DOCTYPE html><html><body>{svg}<pre id="measured"></pre><script>
        const root = document.getElementById("plots");
        const box = root.viewBox.baseVal;
        const lines = [];
        const out = () => document.getElementById("measured").textContent = lines.join("\n");
        lines.push("countries " + document.querySelectorAll("#overview path.country").length);
        const sea = document.getElementById("overview-sea").getBBox();
        const markers = [];
        for (const m of document.querySelectorAll("#overview .marker")) {{
          const b = m.querySelector("circle").getBBox();
          const inside = b.x >= sea.x && b.y >= sea.y && b.x + b.width <= sea.x + sea.width && b.y + b.height <= sea.y + sea.height;
          lines.push("marker " + m.dataset.lot + (inside ? " inside" : " outside"));
          markers.push([m.dataset.lot, b.x + b.width / 2, b.y + b.height / 2]);
        }}
        for (const inset of document.querySelectorAll(".inset")) {{
          const lot = inset.dataset.lot;
          lines.push("inset " + lot);
          for (const el of inset.querySelectorAll(".plot")) {{
            const b = el.getBBox();
            lines.push("plot " + lot + " " + el.classList[1] + " " + Math.round(b.width) + "x" + Math.round(b.height));
          }}
          for (const el of inset.querySelectorAll(".area")) lines.push("area " + lot + " " + el.textContent);
          const bar = inset.querySelector(".scale-bar");
          lines.push("scale-bar " + lot + " " + (bar && bar.getBBox().width > 20 ? "drawn " + bar.querySelector("text").textContent : "missing"));
        }}
        out();
        const img = new Image();
        img.onload = () => {{
          const canvas = document.createElement("canvas");
          canvas.width = box.width; canvas.height = box.height;
          const ctx = canvas.getContext("2d");
          ctx.drawImage(img, 0, 0);
          const px = (x, y) => Array.from(ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)).join(",");
          const land = "239,233,216", water = "215,231,241";
          let l = 0, w = 0, n = 0;
          for (let y = sea.y + 2; y < sea.y + sea.height - 2; y += 4)
            for (let x = sea.x + 2; x < sea.x + sea.width - 2; x += 4) {{
              const c = px(x, y); n++; if (c === land) l++; else if (c === water) w++;
            }}
          lines.push("land " + (l / n).toFixed(2) + " sea " + (w / n).toFixed(2));
          for (const [lot, x, y] of markers) {{
            // Most of a 7 x 7 block below the marker (a border line may cross it).
            let l = 0, w = 0;
            for (let dy = 11; dy <= 17; dy++)
              for (let dx = -3; dx <= 3; dx++) {{
                const c = px(x + dx, y + dy); if (c === land) l++; else if (c === water) w++;
              }}
            lines.push("beside " + lot + " " + (l > 24 ? "land" : w > 24 ? "sea" : "unclear " + l + "/" + w));
          }}
          lines.push("painted");
          out();
        }};
        img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(new XMLSerializer().serializeToString(root));
        </script></body></html>"##
    )
}

/// The area of a ring in hectares, worked out in a flat local frame (metres east and north of
/// its first corner), to check the picture's spherical areas against.
fn planar_hectares(ring: &[(f64, f64)]) -> f64 {
    let metres_per_degree = 6_371_008.8 * std::f64::consts::PI / 180.0;
    let (lon0, lat0) = ring[0];
    let xy: Vec<(f64, f64)> = ring
        .iter()
        .map(|&(lon, lat)| {
            (
                (lon - lon0) * metres_per_degree * lat0.to_radians().cos(),
                (lat - lat0) * metres_per_degree,
            )
        })
        .collect();
    let twice: f64 = xy
        .windows(2)
        .map(|w| w[0].0 * w[1].1 - w[1].0 * w[0].1)
        .sum();
    twice.abs() / 2.0 / 10_000.0
}

/// `"104 ha"` → 104.0.
fn label_hectares(line: &str) -> f64 {
    line.rsplit_once(' ')
        .and_then(|(rest, unit)| (unit == "ha").then_some(rest))
        .and_then(|rest| rest.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not an area label: {line}"))
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
        // Self-contained: nothing to load (the browser painting it as an image below, which
        // it only does for well-formed XML, is the check that it is valid).
        assert!(
            !svg.contains("href") && !svg.contains("url(http"),
            "{svg:.200}"
        );
        assert_eq!(svg.matches("http").count(), 1, "only the SVG namespace");
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, probe(&svg)).unwrap();
        let dom = browse(
            &chromium,
            profile.path(),
            // Time for the SVG to load as an image and be painted on the canvas.
            &["--dump-dom", "--virtual-time-budget=10000"],
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

    // Colombia and Brazil are thousands of kilometres apart: the overview shows the continent
    // (many country outlines, land and sea) with a marker on land for each source lot, and each
    // lot's plots get an inset of their own where a field is tens of pixels across.
    let order_lines = measure(&["eudr", "--order", &id, "--format", "svg"], "order");
    let has = |lines: &[String], line: &str| lines.iter().any(|l| l == line);
    let countries: usize = order_lines[0]
        .strip_prefix("countries ")
        .and_then(|n| n.parse().ok())
        .expect("countries line");
    assert!(countries >= 20, "{order_lines:?}");
    for line in [
        "marker PG-2 inside",
        "marker PG-3 inside",
        "inset PG-2",
        "inset PG-3",
        "beside PG-2 land",
        "beside PG-3 land",
        "painted",
    ] {
        assert!(has(&order_lines, line), "{line}: {order_lines:?}");
    }
    let land_sea = order_lines
        .iter()
        .find_map(|l| l.strip_prefix("land "))
        .expect("the pixels were read");
    let shares: Vec<f64> = land_sea
        .split(" sea ")
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        (0.2..0.8).contains(&shares[0]) && (0.2..0.8).contains(&shares[1]),
        "South America and the oceans around it: {land_sea}"
    );
    let sizes = |lines: &[String], lot: &str, kind: &str| -> Vec<(u32, u32)> {
        let prefix = format!("plot {lot} {kind} ");
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|wh| {
                let (w, h) = wh.split_once('x').unwrap();
                (w.parse().unwrap(), h.parse().unwrap())
            })
            .collect()
    };
    let colombia = sizes(&order_lines, "PG-2", "polygon");
    let brazil = sizes(&order_lines, "PG-3", "polygon");
    assert_eq!((colombia.len(), brazil.len()), (2, 1), "{order_lines:?}");
    for (w, h) in colombia.iter().chain(&brazil) {
        assert!(*w >= 40 && *h >= 40, "a readable field: {order_lines:?}");
    }
    let areas = |lines: &[String], lot: &str| -> Vec<f64> {
        let prefix = format!("area {lot} ");
        lines
            .iter()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| label_hectares(l))
            .collect()
    };
    // The demo's Brazilian field, as the seed gives it.
    let fazenda = [
        (-47.1012, -18.9521),
        (-47.0903, -18.9519),
        (-47.0905, -18.9602),
        (-47.1010, -18.9604),
        (-47.1012, -18.9521),
    ];
    let expected = planar_hectares(&fazenda);
    let brazil_areas = areas(&order_lines, "PG-3");
    assert_eq!(brazil_areas.len(), 1, "{order_lines:?}");
    assert!(
        (brazil_areas[0] - expected).abs() < expected * 0.01,
        "{} ha labelled, {expected} ha expected",
        brazil_areas[0]
    );
    let colombia_areas = areas(&order_lines, "PG-2");
    assert_eq!(colombia_areas.len(), 2, "each field: {order_lines:?}");
    for lot in ["PG-2", "PG-3"] {
        let bar = order_lines
            .iter()
            .find(|l| l.starts_with(&format!("scale-bar {lot} ")))
            .unwrap();
        assert!(
            bar.starts_with(&format!("scale-bar {lot} drawn ")) && bar.ends_with(" m"),
            "fields of a few hundred metres: {bar}"
        );
    }

    // The Ethiopian lot moved to the roastery floor (made by a transfer): its source's point
    // (labelled with its Area) and polygon, near each other, both drawn at a size one can see.
    let moved = app
        .list_green_lots(None, PageRequest::default())
        .unwrap()
        .items
        .into_iter()
        .find(|v| v.lot.id != v.lot.origin_id)
        .expect("the demo's transferred lot");
    let lot_id = moved.lot.id.to_string();
    let lot_lines = measure(&["eudr", "--lot", &lot_id, "--format", "svg"], "lot");
    for line in [
        "marker PG-1 inside",
        "inset PG-1",
        "beside PG-1 land",
        "area PG-1 2.50 ha",
    ] {
        assert!(has(&lot_lines, line), "{line}: {lot_lines:?}");
    }
    let point = sizes(&lot_lines, "PG-1", "point");
    let polygon = sizes(&lot_lines, "PG-1", "polygon");
    assert!(point.len() == 1 && point[0].0 >= 8, "{lot_lines:?}");
    assert!(
        polygon.len() == 1 && polygon[0].0 >= 40 && polygon[0].1 >= 40,
        "{lot_lines:?}"
    );
    assert_eq!(areas(&lot_lines, "PG-1").len(), 2, "{lot_lines:?}");

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
            "--window-size=1000,1200",
            &format!("--screenshot={}", screenshot.display()),
        ],
        &url,
    );
    let png = std::fs::read(&screenshot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000);
    eprintln!("screenshot of the EUDR picture: {}", screenshot.display());
}
