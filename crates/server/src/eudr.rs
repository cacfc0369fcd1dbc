//! `roastery eudr`: the due diligence behind a lot or an order, printed as GeoJSON (ready to
//! upload with a statement), CSV (one row per source lot and statement), JSON (as the API answers
//! `getDueDiligence`), or a picture of the plots (SVG, or an HTML page holding it).
//!
//! The picture is for people only: it converts coordinates to binary floating point to place
//! them on screen. Every other format writes the coordinates' digits as they were sent.

use std::fmt::Write as _;
use std::io::Write;

use roastery_domain::due_diligence::DueDiligenceReport;

use crate::csv::field;
use crate::map::escape;

/// `result.plots`: a GeoJSON `FeatureCollection`.
pub fn write_geojson(report: &DueDiligenceReport, out: &mut impl Write) -> anyhow::Result<()> {
    let plots = report.plots_json().map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(out, "{plots}")?;
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
            d.plots.features().map_err(|e| anyhow::anyhow!(e))?.len()
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

/// The picture: country outlines, a marker per source lot and an inset per source lot with its
/// plots and their areas (see [`crate::map`]).
pub fn svg(report: &DueDiligenceReport) -> String {
    crate::map::svg(report)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A page holding the picture, the source lots with their statements and what is missing;
/// self-contained (no script, style sheet, font or image from elsewhere), readable offline.
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
        "<p id=\"complete\" class=\"ok\">Complete: every source lot has due diligence with a \
         statement.</p>"
            .to_owned()
    } else {
        format!("<div id=\"incomplete\" class=\"warn\"><p>Incomplete:</p><ul>{missing}</ul></div>")
    };
    let mut rows = String::new();
    for source in &report.sources {
        let lot = &source.lot;
        let (country, period, statements) = match &source.due_diligence {
            Some(d) => (
                escape(&d.country_of_production),
                format!("{} to {}", d.production_period.from, d.production_period.to),
                d.statements
                    .iter()
                    .map(|st| {
                        format!(
                            "{} {} ({} {})",
                            escape(&st.reference_number),
                            escape(st.verification_number.as_deref().unwrap_or("")),
                            st.kind.as_str(),
                            st.role.as_str()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("<br>"),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{country}</td><td>{period}</td><td>{}</td></tr>",
            escape(&lot.lot_number),
            escape(&lot.name),
            if statements.is_empty() {
                "—".to_owned()
            } else {
                statements
            }
        );
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title>\
         <style>body{{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:984px;\
         padding:0 12px;color:#222}}h1{{font-size:1.4em;word-break:break-all}}\
         table{{border-collapse:collapse;margin:1em 0}}td,th{{border-bottom:1px solid #ddd;\
         padding:4px 10px 4px 0;text-align:left;vertical-align:top}}\
         .warn{{color:#8a3b00}}td:first-child,td:nth-child(4){{white-space:nowrap}}.warn p{{margin-bottom:0}}.ok{{color:#1b5e20}}\
         svg{{max-width:100%;height:auto;display:block}}</style></head><body>\
         <h1>{t}</h1><p>{n} of {s}; {st}.</p>{status}<table><thead><tr><th>Lot</th><th>Name</th>\
         <th>Country</th><th>Production</th><th>Statements</th></tr></thead><tbody>{rows}\
         </tbody></table>{svg}</body></html>",
        t = escape(title),
        n = plural(report.plots().map_or(0, |p| p.len()), "plot", "plots"),
        s = plural(report.sources.len(), "source lot", "source lots"),
        st = plural(report.statements.len(), "statement", "statements"),
        svg = svg(report)
    )
}
