//! `roastery eudr`: the due diligence behind a lot or an order, printed as GeoJSON (ready to
//! upload with a statement), CSV (one row per source lot and statement), JSON (as the API answers
//! `getDueDiligence`), or a picture of the plots (SVG, or an HTML page holding it).
//!
//! The picture is for people only: it converts coordinates to binary floating point to place
//! them on screen. Every other format writes the coordinates' digits as they were sent.

use std::fmt::Write as _;
use std::io::Write;

use roastery_domain::due_diligence::DueDiligenceReport;
use roastery_domain::geojson::{Geometry, Plot, Position};

use crate::csv::field;

/// Mean radius of the Earth (IUGG), in metres: one degree of latitude is π·R/180 of it.
const EARTH_RADIUS_M: f64 = 6_371_008.8;
const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 600.0;
const MARGIN: f64 = 40.0;
/// A polygon drawn smaller than this (both ways) also gets a marker ring, to be seen at all.
const MARKED_BELOW_PX: f64 = 6.0;

/// `result.plots`: a GeoJSON `FeatureCollection`.
pub fn write_geojson(report: &DueDiligenceReport, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(out, "{}", report.plots.to_json())?;
    Ok(())
}

/// The API's `result` of `inventory.trace.getDueDiligence`.
pub fn write_json(report: DueDiligenceReport, out: &mut impl Write) -> anyhow::Result<()> {
    let json = roastery_adapters_http::due_diligence_result_json(report)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(out, "{json}")?;
    Ok(())
}

/// One row per source lot and statement; a source without statements has one row saying what
/// is missing.
pub fn write_csv(report: &DueDiligenceReport, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "lot_id,lot_number,lot_name,country_of_production,hs_code,production_from,production_to,\
         plots,reference_number,verification_number,kind,role,missing"
    )?;
    for source in &report.sources {
        let lot = &source.lot;
        let missing = report
            .missing
            .iter()
            .find(|m| m.id == lot.id)
            .map_or("", |m| m.reason.as_str());
        let head = format!("{},{},{}", lot.id, field(&lot.lot_number), field(&lot.name));
        let Some(d) = &source.due_diligence else {
            writeln!(out, "{head},,,,,,,,,,{missing}")?;
            continue;
        };
        let facts = format!(
            "{},{},{},{},{}",
            d.country_of_production,
            d.hs_code,
            d.production_period.from,
            d.production_period.to,
            d.plots.features.len()
        );
        if d.statements.is_empty() {
            writeln!(out, "{head},{facts},,,,,{missing}")?;
        }
        for s in &d.statements {
            writeln!(
                out,
                "{head},{facts},{},{},{},{},{missing}",
                s.reference_number,
                s.verification_number.as_deref().unwrap_or(""),
                s.kind.as_str(),
                s.role.as_str()
            )?;
        }
    }
    Ok(())
}

fn degrees(c: &str) -> f64 {
    c.parse().unwrap_or(0.0)
}

fn lon_lat(p: &Position) -> (f64, f64) {
    (degrees(p.longitude.text()), degrees(p.latitude.text()))
}

/// Equirectangular projection centred on the plots: x = λ·cos φ₀, y = φ, scaled to the picture.
struct Projection {
    min_x: f64,
    max_y: f64,
    cos0: f64,
    /// Pixels per degree of latitude.
    scale: f64,
    offset_x: f64,
    offset_y: f64,
}

impl Projection {
    fn fit(plots: &[Plot]) -> Self {
        let all: Vec<(f64, f64)> = plots
            .iter()
            .flat_map(|p| p.geometry.positions())
            .map(lon_lat)
            .collect();
        let (mut min_lon, mut max_lon, mut min_lat, mut max_lat) = (180.0, -180.0, 90.0, -90.0);
        for &(lon, lat) in &all {
            min_lon = f64::min(min_lon, lon);
            max_lon = f64::max(max_lon, lon);
            min_lat = f64::min(min_lat, lat);
            max_lat = f64::max(max_lat, lat);
        }
        if all.is_empty() {
            (min_lon, max_lon, min_lat, max_lat) = (-1.0, 1.0, -1.0, 1.0);
        }
        let cos0 = ((min_lat + max_lat) / 2.0).to_radians().cos().max(0.01);
        // Single points still get a small window around them (about 500 m).
        let span_x = ((max_lon - min_lon) * cos0).max(0.005);
        let span_y = (max_lat - min_lat).max(0.005);
        let scale = f64::min(
            (WIDTH - 2.0 * MARGIN) / span_x,
            (HEIGHT - 2.0 * MARGIN - 40.0) / span_y,
        );
        Self {
            min_x: min_lon * cos0,
            max_y: max_lat,
            cos0,
            scale,
            offset_x: MARGIN + ((WIDTH - 2.0 * MARGIN) - (max_lon - min_lon) * cos0 * scale) / 2.0,
            offset_y: MARGIN + ((HEIGHT - 2.0 * MARGIN - 40.0) - (max_lat - min_lat) * scale) / 2.0,
        }
    }

    fn point(&self, p: &Position) -> (f64, f64) {
        let (lon, lat) = lon_lat(p);
        (
            self.offset_x + (lon * self.cos0 - self.min_x) * self.scale,
            self.offset_y + (self.max_y - lat) * self.scale,
        )
    }

    /// Metres per pixel: along a parallel, a degree of x is a degree of latitude.
    fn metres_per_pixel(&self) -> f64 {
        EARTH_RADIUS_M * std::f64::consts::PI / 180.0 / self.scale
    }
}

/// The round length (1, 2 or 5 × 10ⁿ metres) nearest below `metres`.
fn round_length(metres: f64) -> f64 {
    let power = 10f64.powf(metres.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * power)
        .find(|l| *l <= metres)
        .unwrap_or(power)
}

fn label(metres: f64) -> String {
    if metres >= 1000.0 {
        format!("{} km", metres / 1000.0)
    } else {
        format!("{metres} m")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const COLOURS: [&str; 6] = [
    "#1b7837", "#2166ac", "#b2182b", "#8c510a", "#762a83", "#01665e",
];

/// The plots drawn: polygons (holes cut out) and points, equirectangular, with a scale bar.
pub fn svg(report: &DueDiligenceReport) -> String {
    let plots = &report.plots.features;
    let projection = Projection::fit(plots);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="plots" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="#f7f4ea"/><title>Plots of land behind the lot (equirectangular projection)</title>"##
    );
    let lots: Vec<String> = report
        .sources
        .iter()
        .map(|s| s.lot.lot_number.clone())
        .collect();
    for plot in plots {
        let lot = plot
            .property("lotNumber")
            .and_then(|v| serde_json::from_str::<String>(v).ok())
            .unwrap_or_default();
        let colour = lots
            .iter()
            .position(|l| *l == lot)
            .and_then(|i| COLOURS.get(i % COLOURS.len()))
            .copied()
            .unwrap_or("#333333");
        let polygons: Vec<&Vec<Vec<Position>>> = match &plot.geometry {
            Geometry::Polygon(rings) => vec![rings],
            Geometry::MultiPolygon(polygons) => polygons.iter().collect(),
            Geometry::Point(_) | Geometry::MultiPoint(_) => Vec::new(),
        };
        for rings in polygons {
            let mut d = String::new();
            let (mut left, mut right, mut top, mut bottom) = (WIDTH, 0.0, HEIGHT, 0.0);
            for ring in rings {
                for (i, p) in ring.iter().enumerate() {
                    let (x, y) = projection.point(p);
                    (left, right) = (f64::min(left, x), f64::max(right, x));
                    (top, bottom) = (f64::min(top, y), f64::max(bottom, y));
                    let _ = write!(d, "{}{x:.1},{y:.1} ", if i == 0 { "M" } else { "L" });
                }
                d.push_str("Z ");
            }
            let _ = write!(
                s,
                r#"<path class="plot polygon" data-lot="{}" d="{}" fill="{colour}" fill-opacity="0.35" fill-rule="evenodd" stroke="{colour}" stroke-width="1.5"/>"#,
                escape(&lot),
                d.trim_end()
            );
            // Plots far apart shrink below a few pixels: a ring marks where they are.
            if right - left < MARKED_BELOW_PX && bottom - top < MARKED_BELOW_PX {
                let _ = write!(
                    s,
                    r#"<circle class="marker" data-lot="{}" cx="{:.1}" cy="{:.1}" r="7" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                    escape(&lot),
                    (left + right) / 2.0,
                    (top + bottom) / 2.0
                );
            }
        }
        let points: Vec<&Position> = match &plot.geometry {
            Geometry::Point(p) => vec![p],
            Geometry::MultiPoint(points) => points.iter().collect(),
            Geometry::Polygon(_) | Geometry::MultiPolygon(_) => Vec::new(),
        };
        for p in points {
            let (x, y) = projection.point(p);
            let _ = write!(
                s,
                r#"<circle class="plot point" data-lot="{}" cx="{x:.1}" cy="{y:.1}" r="5" fill="{colour}" stroke="white" stroke-width="1.5"/>"#,
                escape(&lot)
            );
        }
    }
    // Scale bar: about a quarter of the width, rounded to 1, 2 or 5 × 10ⁿ metres.
    let metres = round_length(WIDTH / 4.0 * projection.metres_per_pixel());
    let pixels = metres / projection.metres_per_pixel();
    let (x0, y0) = (MARGIN, HEIGHT - MARGIN / 2.0);
    let _ = write!(
        s,
        r##"<g id="scale-bar"><line x1="{x0}" y1="{y0}" x2="{:.1}" y2="{y0}" stroke="#000" stroke-width="3"/><line x1="{x0}" y1="{:.1}" x2="{x0}" y2="{:.1}" stroke="#000"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#000"/><text x="{x0}" y="{:.1}">{}</text></g>"##,
        x0 + pixels,
        y0 - 5.0,
        y0 + 5.0,
        x0 + pixels,
        y0 - 5.0,
        x0 + pixels,
        y0 + 5.0,
        y0 - 8.0,
        label(metres)
    );
    let legend_x = WIDTH - MARGIN - 160.0;
    for (i, lot) in lots.iter().enumerate() {
        let colour = COLOURS.get(i % COLOURS.len()).copied().unwrap_or("#333333");
        let y = MARGIN / 2.0 + 16.0 * f64::from(u32::try_from(i).unwrap_or(0));
        let _ = write!(
            s,
            r#"<rect x="{legend_x}" y="{:.1}" width="10" height="10" fill="{colour}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 9.0,
            legend_x + 14.0,
            y,
            escape(lot)
        );
    }
    s.push_str("</svg>");
    s
}

/// A page holding the picture and what is missing, readable offline.
pub fn html(report: &DueDiligenceReport, title: &str) -> String {
    let mut missing = String::new();
    for m in &report.missing {
        let _ = write!(
            missing,
            "<li>{} ({}): {}</li>",
            escape(&m.lot_number),
            m.id,
            m.reason.as_str()
        );
    }
    let status = if report.complete {
        "<p id=\"complete\">Complete: every source lot has due diligence with a statement.</p>"
            .to_owned()
    } else {
        format!("<p id=\"incomplete\">Incomplete:</p><ul>{missing}</ul>")
    };
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}</style></head><body>\
         <h1>{t}</h1><p>{n} plots of {s} source lots, {st} statements.</p>{status}{svg}</body></html>",
        t = escape(title),
        n = report.plots.features.len(),
        s = report.sources.len(),
        st = report.statements.len(),
        svg = svg(report)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_bars_have_round_lengths() {
        assert_eq!(label(round_length(730.0)), "500 m");
        assert_eq!(label(round_length(2_600.0)), "2 km");
        assert_eq!(label(round_length(1.0)), "1 m");
        assert_eq!(label(2_000.0), "2 km");
        assert_eq!(label(500.0), "500 m");
    }
}
