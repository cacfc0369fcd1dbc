//! The picture of `roastery eudr --format svg|html`: an overview map with the country outlines
//! and a marker per source lot, then one inset per source lot with its plots at a scale where
//! they can be seen, each labelled with its area in hectares.
//!
//! For people only: coordinates become binary floating point here, and areas are computed on a
//! sphere. The outlines are Natural Earth's 1:110m admin-0 countries (public domain), embedded
//! from `data/countries-110m.txt` (see `data/README.md` for where they come from).

use std::fmt::Write as _;

use roastery_domain::due_diligence::{DueDiligenceReport, SourceDueDiligence};
use roastery_domain::geojson::{Geometry, Plot, Position};

/// Natural Earth 1:110m countries: one line per country, rings of hundredths of a degree.
const COUNTRIES: &str = include_str!("../data/countries-110m.txt");

/// Radius of the sphere with the WGS84 ellipsoid's surface area (authalic radius), in metres.
const AUTHALIC_RADIUS_M: f64 = 6_371_007.2;

pub const WIDTH: f64 = 960.0;
const OVERVIEW_HEIGHT: f64 = 440.0;
const GAP: f64 = 12.0;
const INSET_HEIGHT: f64 = 380.0;
/// Room for an inset's title (two lines) above its plots and the scale bar below.
const INSET_HEAD: f64 = 46.0;
const INSET_FOOT: f64 = 36.0;
/// A polygon drawn smaller than this (both ways) also gets a marker ring, to be seen at all.
const MARKED_BELOW_PX: f64 = 6.0;

const SEA: &str = "#d7e7f1";
const LAND: &str = "#efe9d8";
const BORDER: &str = "#a39a85";
const COLOURS: [&str; 6] = [
    "#1b7837", "#2166ac", "#b2182b", "#8c510a", "#762a83", "#01665e",
];

pub use roastery_adapters_http::html::escape_html as escape;

fn degrees(c: &str) -> f64 {
    c.parse().unwrap_or(0.0)
}

fn lon_lat(p: &Position) -> (f64, f64) {
    (degrees(p.longitude.text()), degrees(p.latitude.text()))
}

/// A country of the embedded outlines: its name and rings of `(longitude, latitude)` degrees.
struct Country<'a> {
    name: &'a str,
    rings: Vec<Vec<(f64, f64)>>,
}

/// The embedded outlines, decoded (a line that does not decode is skipped: the file is ours).
fn countries() -> Vec<Country<'static>> {
    COUNTRIES
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let (_id, name, rings) = (fields.next()?, fields.next()?, fields.next()?);
            let rings = rings.split(';').filter_map(decode_ring).collect();
            Some(Country { name, rings })
        })
        .collect()
}

/// `x,y,dx,dy,...` in hundredths of a degree.
fn decode_ring(text: &str) -> Option<Vec<(f64, f64)>> {
    let numbers: Vec<i32> = text
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let (mut x, mut y) = (0, 0);
    let ring = numbers
        .chunks_exact(2)
        .filter_map(|pair| match pair {
            [dx, dy] => {
                (x, y) = (x + dx, y + dy);
                Some((f64::from(x) / 100.0, f64::from(y) / 100.0))
            }
            _ => None,
        })
        .collect();
    Some(ring)
}

/// The area of a ring on the sphere, in square metres (always positive): the spherical form of
/// the shoelace sum, ½R²·|Σ (λ₂ − λ₁)(2 + sin φ₁ + sin φ₂)|.
fn ring_area_m2(ring: &[Position]) -> f64 {
    let sum: f64 = ring
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => {
                let ((l1, p1), (l2, p2)) = (lon_lat(a), lon_lat(b));
                Some((l2 - l1).to_radians() * (2.0 + p1.to_radians().sin() + p2.to_radians().sin()))
            }
            _ => None,
        })
        .sum();
    (sum * AUTHALIC_RADIUS_M * AUTHALIC_RADIUS_M / 2.0).abs()
}

/// A polygon's area on the sphere in hectares: its outer ring less its holes.
pub fn polygon_hectares(rings: &[Vec<Position>]) -> f64 {
    let mut rings = rings.iter().map(|r| ring_area_m2(r));
    let outer = rings.next().unwrap_or(0.0);
    (outer - rings.sum::<f64>()).max(0.0) / 10_000.0
}

/// `12.3 ha`: four decimals below 0.1 ha, two below 10 ha, one below 100, none above.
pub fn hectares(ha: f64) -> String {
    if ha < 0.1 {
        format!("{ha:.4} ha")
    } else if ha < 10.0 {
        format!("{ha:.2} ha")
    } else if ha < 100.0 {
        format!("{ha:.1} ha")
    } else {
        format!("{ha:.0} ha")
    }
}

/// A point plot's `Area` property (hectares), when it is a number.
fn area_property(plot: &Plot) -> Option<f64> {
    plot.property("Area")
        .and_then(|v| v.trim().parse::<f64>().ok())
}

fn string_property(plot: &Plot, name: &str) -> Option<String> {
    plot.property(name)
        .and_then(|v| serde_json::from_str::<String>(v).ok())
}

/// The round length (1, 2 or 5 × 10ⁿ metres) nearest below `metres`.
pub fn round_length(metres: f64) -> f64 {
    let power = 10f64.powf(metres.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * power)
        .find(|l| *l <= metres)
        .unwrap_or(power)
}

pub fn length_label(metres: f64) -> String {
    if metres >= 1000.0 {
        format!("{} km", metres / 1000.0)
    } else {
        format!("{metres} m")
    }
}

/// Longitude and latitude bounds.
#[derive(Clone, Copy)]
struct Bounds {
    west: f64,
    east: f64,
    south: f64,
    north: f64,
}

impl Bounds {
    fn of(points: impl IntoIterator<Item = (f64, f64)>) -> Option<Self> {
        let mut bounds: Option<Self> = None;
        for (lon, lat) in points {
            let b = bounds.get_or_insert(Self {
                west: lon,
                east: lon,
                south: lat,
                north: lat,
            });
            b.west = b.west.min(lon);
            b.east = b.east.max(lon);
            b.south = b.south.min(lat);
            b.north = b.north.max(lat);
        }
        bounds
    }

    fn centre(&self) -> (f64, f64) {
        (
            (self.west + self.east) / 2.0,
            (self.south + self.north) / 2.0,
        )
    }
}

/// A frame on the page: `x`, `y`, `width`, `height` in pixels.
#[derive(Clone, Copy)]
struct Frame {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

/// Equirectangular projection centred on a latitude (x = λ·cos φ₀, y = φ), fitted into a frame:
/// shapes near φ₀ keep their proportions.
struct Projection {
    centre: (f64, f64),
    cos0: f64,
    /// Pixels per degree of latitude.
    scale: f64,
    frame: Frame,
}

impl Projection {
    /// Fits `bounds` into `frame`, keeping at least `min_span_deg` of latitude (and its
    /// equivalent in longitude) in view.
    fn fit(bounds: Bounds, frame: Frame, min_span_deg: f64) -> Self {
        let centre = bounds.centre();
        let cos0 = centre.1.to_radians().cos().max(0.05);
        let span_x = ((bounds.east - bounds.west) * cos0).max(min_span_deg);
        let span_y = (bounds.north - bounds.south).max(min_span_deg);
        let scale = f64::min(frame.width / span_x, frame.height / span_y);
        Self {
            centre,
            cos0,
            scale,
            frame,
        }
    }

    fn xy(&self, (lon, lat): (f64, f64)) -> (f64, f64) {
        (
            self.frame.x + self.frame.width / 2.0 + (lon - self.centre.0) * self.cos0 * self.scale,
            self.frame.y + self.frame.height / 2.0 - (lat - self.centre.1) * self.scale,
        )
    }

    fn point(&self, p: &Position) -> (f64, f64) {
        self.xy(lon_lat(p))
    }

    /// The longitudes and latitudes in view.
    fn view(&self) -> Bounds {
        let half_w = self.frame.width / 2.0 / self.scale / self.cos0;
        let half_h = self.frame.height / 2.0 / self.scale;
        Bounds {
            west: self.centre.0 - half_w,
            east: self.centre.0 + half_w,
            south: self.centre.1 - half_h,
            north: self.centre.1 + half_h,
        }
    }

    /// Metres per pixel (a degree of latitude is π·R/180 metres).
    fn metres_per_pixel(&self) -> f64 {
        AUTHALIC_RADIUS_M * std::f64::consts::PI / 180.0 / self.scale
    }
}

/// An SVG path of rings through `projection`, each closed.
fn ring_path<'a>(
    projection: &Projection,
    rings: impl IntoIterator<Item = &'a Vec<(f64, f64)>>,
    shift: f64,
) -> String {
    let mut d = String::new();
    for ring in rings {
        let mut last = None;
        for (i, &(lon, lat)) in ring.iter().enumerate() {
            let (x, y) = projection.xy((lon + shift, lat));
            let at = (format!("{x:.1}"), format!("{y:.1}"));
            if last.as_ref() == Some(&at) {
                continue;
            }
            let _ = write!(d, "{}{},{}", if i == 0 { "M" } else { "L" }, at.0, at.1);
            last = Some(at);
        }
        d.push('Z');
    }
    d
}

fn colour(i: usize) -> &'static str {
    COLOURS.get(i % COLOURS.len()).copied().unwrap_or("#333333")
}

/// A source's plots, decoded to be drawn: none without due diligence (nor, were its stored
/// plots unreadable, which reading them back rules out).
fn plots_of(source: &SourceDueDiligence) -> Vec<Plot> {
    source
        .due_diligence
        .as_ref()
        .and_then(|d| d.plots.decode().ok())
        .map(|plots| plots.features)
        .unwrap_or_default()
}

/// Every position of a source's plots.
fn source_positions(source: &SourceDueDiligence) -> Vec<(f64, f64)> {
    plots_of(source)
        .iter()
        .flat_map(|p| p.geometry.positions())
        .map(lon_lat)
        .collect()
}

/// The picture: the overview, then the insets two to a row.
pub fn svg(report: &DueDiligenceReport) -> String {
    let sources = &report.sources;
    let columns: usize = if sources.len() > 1 { 2 } else { 1 };
    let rows = sources.len().div_ceil(columns);
    let columns_f = f64::from(u32::try_from(columns).unwrap_or(1));
    let inset_width = (WIDTH - GAP * (columns_f + 1.0)) / columns_f;
    let height =
        OVERVIEW_HEIGHT + GAP + f64::from(u32::try_from(rows).unwrap_or(0)) * (INSET_HEIGHT + GAP);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="plots" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12"><title>Plots of land behind the lot: where the source lots grew, then each source lot's plots</title><rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    overview(&mut s, sources);
    for (i, source) in sources.iter().enumerate() {
        let (row, column) = (i / columns, i % columns);
        let frame = Frame {
            x: GAP + f64::from(u32::try_from(column).unwrap_or(0)) * (inset_width + GAP),
            y: OVERVIEW_HEIGHT
                + GAP
                + f64::from(u32::try_from(row).unwrap_or(0)) * (INSET_HEIGHT + GAP),
            width: inset_width,
            height: INSET_HEIGHT,
        };
        inset(&mut s, i, source, frame);
    }
    s.push_str(
        r##"<text x="954" y="14" text-anchor="end" font-size="9" fill="#8a8373">Outlines: Natural Earth (public domain)</text></svg>"##,
    );
    s
}

/// The map of where the source lots grew: country outlines, a marker per source lot with plots.
fn overview(s: &mut String, sources: &[SourceDueDiligence]) {
    let frame = Frame {
        x: GAP,
        y: GAP + 8.0,
        width: WIDTH - 2.0 * GAP,
        height: OVERVIEW_HEIGHT - GAP - 8.0,
    };
    let centres: Vec<(usize, &SourceDueDiligence, (f64, f64))> = sources
        .iter()
        .enumerate()
        .filter_map(|(i, src)| Bounds::of(source_positions(src)).map(|b| (i, src, b.centre())))
        .collect();
    // The lots' region with room around it (at least 30° of latitude), else the whole world.
    let bounds = match Bounds::of(centres.iter().map(|c| c.2)) {
        Some(b) => {
            let pad = f64::max(12.0, 0.2 * f64::max(b.east - b.west, b.north - b.south));
            Bounds {
                west: b.west - pad,
                east: b.east + pad,
                south: (b.south - pad).max(-85.0),
                north: (b.north + pad).min(85.0),
            }
        }
        None => Bounds {
            west: -180.0,
            east: 180.0,
            south: -60.0,
            north: 85.0,
        },
    };
    let projection = Projection::fit(bounds, frame, 30.0);
    let view = projection.view();
    let _ = write!(
        s,
        r##"<g id="overview"><clipPath id="overview-clip"><rect x="{x}" y="{y}" width="{w}" height="{h}"/></clipPath><rect id="overview-sea" x="{x}" y="{y}" width="{w}" height="{h}" fill="{SEA}"/><g clip-path="url(#overview-clip)" fill="{LAND}" stroke="{BORDER}" stroke-width="0.7" stroke-linejoin="round" fill-rule="evenodd">"##,
        x = frame.x,
        y = frame.y,
        w = frame.width,
        h = frame.height
    );
    for country in countries() {
        let Some(b) = Bounds::of(country.rings.iter().flatten().copied()) else {
            continue;
        };
        // Rings that run past ±180° (across the antimeridian) are drawn again 360° over.
        for shift in [-360.0, 0.0, 360.0] {
            let seen = b.west + shift <= view.east
                && b.east + shift >= view.west
                && b.south <= view.north
                && b.north >= view.south;
            if seen {
                let _ = write!(
                    s,
                    r#"<path class="country" d="{}"><title>{}</title></path>"#,
                    ring_path(&projection, &country.rings, shift),
                    escape(country.name)
                );
            }
        }
    }
    s.push_str("</g>");
    let _ = write!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#7d8b96"/>"##,
        frame.x, frame.y, frame.width, frame.height
    );
    // Lots from one region share a spot: their labels are stacked below one another.
    let mut placed: Vec<(f64, f64)> = Vec::new();
    for (i, source, centre) in &centres {
        let (x, y) = projection.xy(*centre);
        let c = colour(*i);
        let lot = escape(&source.lot.lot_number);
        let near = placed
            .iter()
            .filter(|(px, py)| (px - x).abs() < 40.0 && (py - y).abs() < 14.0)
            .count();
        placed.push((x, y));
        let y_label = y + 4.0 + 14.0 * f64::from(u32::try_from(near).unwrap_or(0));
        let _ = write!(
            s,
            r##"<g class="marker" data-lot="{lot}"><circle cx="{x:.1}" cy="{y:.1}" r="7" fill="{c}" stroke="#ffffff" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-weight="bold" fill="{c}" stroke="#ffffff" stroke-width="3" paint-order="stroke">{lot}</text></g>"##,
            x + 11.0,
            y_label
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="13" font-weight="bold">Where the source lots grew</text></g>"##,
        frame.x,
        frame.y - 6.0
    );
}

/// One source lot: its plots fitted into `frame` with a margin, labelled, with a scale bar.
fn inset(s: &mut String, index: usize, source: &SourceDueDiligence, frame: Frame) {
    let c = colour(index);
    let lot = escape(&source.lot.lot_number);
    let plots = plots_of(source);
    let clip = format!("inset-clip-{index}");
    let _ = write!(
        s,
        r##"<g class="inset" data-lot="{lot}"><clipPath id="{clip}"><rect x="{x}" y="{y}" width="{w}" height="{h}"/></clipPath><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#fbfaf6" stroke="#b8b2a2"/><rect x="{x}" y="{y}" width="6" height="{h}" fill="{c}"/>"##,
        x = frame.x,
        y = frame.y,
        w = frame.width,
        h = frame.height
    );
    let mut total_ha = 0.0;
    let mut drawn = String::new();
    let area = Frame {
        x: frame.x + 24.0,
        y: frame.y + INSET_HEAD + 10.0,
        width: frame.width - 48.0,
        height: frame.height - INSET_HEAD - INSET_FOOT - 20.0,
    };
    let scale_bar = if let Some(bounds) = Bounds::of(
        plots
            .iter()
            .flat_map(|p| p.geometry.positions())
            .map(lon_lat),
    ) {
        // A margin of a tenth each way; at least about 300 m in view around single points.
        let projection = Projection::fit(bounds, area, 0.003);
        let projection = Projection {
            scale: projection.scale * 0.8,
            ..projection
        };
        for plot in &plots {
            total_ha += draw_plot(&mut drawn, &projection, plot, &lot, c);
        }
        let metres_per_pixel = projection.metres_per_pixel();
        let metres = round_length(frame.width / 3.0 * metres_per_pixel);
        Some((metres, metres / metres_per_pixel))
    } else {
        let _ = write!(
            drawn,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#6b665a">No plots recorded for this lot yet.</text>"##,
            frame.x + frame.width / 2.0,
            frame.y + frame.height / 2.0
        );
        None
    };
    let _ = write!(s, r#"<g clip-path="url(#{clip})">{drawn}</g>"#);
    let country = source
        .due_diligence
        .as_ref()
        .map(|d| d.country_of_production.as_str())
        .unwrap_or("");
    let count = plots.len();
    let summary = if count == 0 {
        "no due diligence".to_owned()
    } else {
        format!(
            "{country} · {count} plot{} · {}",
            if count == 1 { "" } else { "s" },
            hectares(total_ha)
        )
    };
    let _ = write!(
        s,
        r##"<text class="inset-title" x="{:.1}" y="{:.1}" font-size="14" font-weight="bold"><tspan fill="{c}">{lot}</tspan> {}</text><text x="{:.1}" y="{:.1}" fill="#5b574d">{}</text>"##,
        frame.x + 16.0,
        frame.y + 20.0,
        escape(&source.lot.name),
        frame.x + 16.0,
        frame.y + 37.0,
        escape(&summary)
    );
    if let Some((metres, pixels)) = scale_bar {
        let (x0, y0) = (frame.x + 16.0, frame.y + frame.height - 14.0);
        let x1 = x0 + pixels;
        let _ = write!(
            s,
            r##"<g class="scale-bar" stroke="#222222"><rect x="{x0}" y="{:.1}" width="{:.1}" height="4" fill="#222222" stroke="none"/><line x1="{x0}" y1="{:.1}" x2="{x0}" y2="{:.1}"/><line x1="{x1:.1}" y1="{:.1}" x2="{x1:.1}" y2="{:.1}"/><text x="{:.1}" y="{:.1}" stroke="none" fill="#222222">{}</text></g>"##,
            y0 - 2.0,
            pixels,
            y0 - 6.0,
            y0 + 4.0,
            y0 - 6.0,
            y0 + 4.0,
            x1 + 8.0,
            y0 + 4.0,
            length_label(metres)
        );
    }
    s.push_str("</g>");
}

/// Draws one plot (each polygon labelled with its area; a point plot with its `Area`) and
/// answers its area in hectares.
fn draw_plot(s: &mut String, projection: &Projection, plot: &Plot, lot: &str, c: &str) -> f64 {
    let producer = string_property(plot, "ProducerName")
        .map(|n| escape(&n))
        .unwrap_or_default();
    let halo = r##"stroke="#ffffff" stroke-width="3" paint-order="stroke" fill="#222222""##;
    let polygons: Vec<&Vec<Vec<Position>>> = match &plot.geometry {
        Geometry::Polygon(rings) => vec![rings],
        Geometry::MultiPolygon(polygons) => polygons.iter().collect(),
        Geometry::Point(_) | Geometry::MultiPoint(_) => Vec::new(),
    };
    let mut total = 0.0;
    for rings in polygons {
        let ha = polygon_hectares(rings);
        total += ha;
        let ring_degrees: Vec<Vec<(f64, f64)>> = rings
            .iter()
            .map(|r| r.iter().map(lon_lat).collect())
            .collect();
        let Some(b) = Bounds::of(ring_degrees.iter().flatten().copied()) else {
            continue;
        };
        let (left, top) = projection.xy((b.west, b.north));
        let (right, bottom) = projection.xy((b.east, b.south));
        let _ = write!(
            s,
            r#"<path class="plot polygon" data-lot="{lot}" d="{}" fill="{c}" fill-opacity="0.3" fill-rule="evenodd" stroke="{c}" stroke-width="2" stroke-linejoin="round"><title>{producer} {}</title></path>"#,
            ring_path(projection, &ring_degrees, 0.0),
            hectares(ha)
        );
        let (cx, cy) = ((left + right) / 2.0, (top + bottom) / 2.0);
        if right - left < MARKED_BELOW_PX && bottom - top < MARKED_BELOW_PX {
            let _ = write!(
                s,
                r#"<circle class="marker" data-lot="{lot}" cx="{cx:.1}" cy="{cy:.1}" r="7" fill="none" stroke="{c}" stroke-width="2"/>"#
            );
            let _ = write!(
                s,
                r#"<text class="area" data-lot="{lot}" x="{:.1}" y="{:.1}" {halo}>{}</text>"#,
                cx + 11.0,
                cy + 4.0,
                hectares(ha)
            );
        } else {
            let _ = write!(
                s,
                r#"<text class="area" data-lot="{lot}" x="{cx:.1}" y="{:.1}" text-anchor="middle" {halo}>{}</text>"#,
                cy + 4.0,
                hectares(ha)
            );
        }
    }
    let points: Vec<&Position> = match &plot.geometry {
        Geometry::Point(p) => vec![p],
        Geometry::MultiPoint(points) => points.iter().collect(),
        Geometry::Polygon(_) | Geometry::MultiPolygon(_) => Vec::new(),
    };
    let area = area_property(plot);
    for (i, p) in points.iter().enumerate() {
        let (x, y) = projection.point(p);
        // A point stands for a plot of up to 4 ha: a dashed circle of its Area (shared among
        // a MultiPoint's points) shows about how much land that is at this scale.
        let mut label_x = x + 10.0;
        if let Some(ha) = area {
            let share = ha / f64::from(u32::try_from(points.len()).unwrap_or(1));
            let radius_m = (share * 10_000.0 / std::f64::consts::PI).sqrt();
            let r = radius_m / projection.metres_per_pixel();
            if r > 8.0 {
                let _ = write!(
                    s,
                    r#"<circle class="extent" cx="{x:.1}" cy="{y:.1}" r="{r:.1}" fill="{c}" fill-opacity="0.12" stroke="{c}" stroke-width="1.2" stroke-dasharray="4 3"/>"#
                );
                label_x = x + r + 4.0;
            }
        }
        let _ = write!(
            s,
            r##"<circle class="plot point" data-lot="{lot}" cx="{x:.1}" cy="{y:.1}" r="6" fill="{c}" stroke="#ffffff" stroke-width="2"><title>{producer}</title></circle>"##
        );
        if i == 0 {
            // The Area belongs to the whole feature: said once, beside its first point.
            let text = area.map_or_else(|| "Area not given".to_owned(), hectares);
            let _ = write!(
                s,
                r#"<text class="area" data-lot="{lot}" x="{label_x:.1}" y="{:.1}" {halo}>{}</text>"#,
                y + 4.0,
                text
            );
        }
    }
    total
        + if points.is_empty() {
            0.0
        } else {
            area.unwrap_or(0.0)
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roastery_domain::geojson::Plots;
    use roastery_domain::stored_plots::StoredPlots;

    fn first_polygon(json: &str) -> Vec<Vec<Position>> {
        let plots = Plots::parse(json, "plots").unwrap();
        match &plots.features[0].geometry {
            Geometry::Polygon(rings) => rings.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scale_bars_have_round_lengths() {
        assert_eq!(length_label(round_length(730.0)), "500 m");
        assert_eq!(length_label(round_length(2_600.0)), "2 km");
        assert_eq!(length_label(round_length(1.0)), "1 m");
        assert_eq!(length_label(2_000.0), "2 km");
        assert_eq!(length_label(500.0), "500 m");
    }

    #[test]
    fn a_square_of_a_hundredth_of_a_degree_at_the_equator_is_about_123_hectares() {
        // 0.01° of arc on the authalic sphere is 1,111.95 m: the square is 123.64 ha.
        let rings = first_polygon(
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},
            "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}}]}"#,
        );
        let ha = polygon_hectares(&rings);
        assert!((ha - 123.64).abs() < 0.05, "{ha}");
        assert_eq!(hectares(ha), "124 ha");
    }

    #[test]
    fn areas_shrink_with_the_cosine_of_latitude_and_holes_are_cut_out() {
        let at_60 = first_polygon(
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},
            "geometry":{"type":"Polygon","coordinates":[[[10,60],[10.01,60],[10.01,60.01],[10,60.01],[10,60]],
              [[10.002,60.002],[10.002,60.004],[10.004,60.004],[10.004,60.002],[10.002,60.002]]]}}]}"#,
        );
        let outer = polygon_hectares(&at_60[..1]);
        assert!((outer - 123.64 * 0.5).abs() < 0.3, "{outer}");
        let with_hole = polygon_hectares(&at_60);
        assert!(
            (outer - with_hole - outer / 25.0).abs() < 0.05,
            "{with_hole}"
        );
    }

    #[test]
    fn hectares_keep_three_significant_digits_or_so() {
        assert_eq!(hectares(2.5), "2.50 ha");
        assert_eq!(hectares(28.345), "28.3 ha");
        assert_eq!(hectares(0.0123), "0.0123 ha");
    }

    #[test]
    fn every_country_outline_decodes() {
        let countries = countries();
        assert_eq!(countries.len(), 177);
        let brazil = countries.iter().find(|c| c.name == "Brazil").unwrap();
        let b = Bounds::of(brazil.rings.iter().flatten().copied()).unwrap();
        assert!(b.west < -73.0 && b.east > -35.0 && b.south < -33.0 && b.north > 5.0);
        for c in &countries {
            for ring in &c.rings {
                assert!(ring.len() >= 4, "{}", c.name);
                assert_eq!(ring.first(), ring.last(), "{} ring is closed", c.name);
            }
        }
    }

    fn source(number: i64, country: &str, plots: Option<&str>) -> SourceDueDiligence {
        use roastery_domain::due_diligence::{DueDiligence, ProductionPeriod, SourceLot};
        let date = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
        SourceDueDiligence {
            lot: SourceLot {
                id: uuid::Uuid::now_v7(),
                lot_number: format!("PG-{number}"),
                number,
                name: format!("Lot <{number}> & co"),
            },
            due_diligence: plots.map(|p| DueDiligence {
                hs_code: "090111".to_owned(),
                country_of_production: country.to_owned(),
                production_period: ProductionPeriod {
                    from: date,
                    to: date,
                },
                plots: StoredPlots::written(&Plots::parse(p, "plots").unwrap()),
                suppliers: Vec::new(),
                statements: Vec::new(),
                updated_date: chrono::Utc::now(),
            }),
        }
    }

    #[test]
    fn every_source_lot_gets_an_inset_and_text_is_escaped() {
        let report = roastery_domain::due_diligence::report(vec![
            source(
                1,
                "VN",
                Some(
                    r#"{"type":"FeatureCollection","features":[
                    {"type":"Feature","properties":{"Area":1.5},"geometry":{"type":"Point","coordinates":[108.0,12.6]}},
                    {"type":"Feature","properties":{"Area":3},"geometry":{"type":"MultiPoint","coordinates":[[108.4,12.9],[108.401,12.901]]}},
                    {"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[108.2,12.7],[108.202,12.7],[108.202,12.702],[108.2,12.7]]]}}]}"#,
                ),
            ),
            source(2, "PG", None),
            source(
                3,
                "PE",
                Some(
                    r#"{"type":"FeatureCollection","features":[
                    {"type":"Feature","properties":{"Area":0.5},"geometry":{"type":"Point","coordinates":[-78.5,-5.7]}}]}"#,
                ),
            ),
        ]);
        let svg = svg(&report);
        assert_eq!(svg.matches(r#"<g class="inset""#).count(), 3);
        assert_eq!(
            svg.matches(r#"<g class="marker""#).count(),
            2,
            "a marker per lot with plots"
        );
        assert!(svg.contains("No plots recorded"));
        assert!(svg.contains("Lot &lt;1&gt; &amp; co") && !svg.contains("<1>"));
        // The MultiPoint's Area is said once; the far-apart plots shrink to marked specks.
        assert_eq!(svg.matches(">3.00 ha<").count(), 1);
        assert!(svg.contains(r#"<circle class="marker" data-lot="PG-1""#));
        assert!(svg.contains(">0.50 ha<") && svg.contains(">1.50 ha<"));
        assert!(
            svg.contains("Viet") && svg.contains("Peru"),
            "the countries of both"
        );
        if let Some(out) = std::env::var_os("ROASTERY_MAP_TEST_SVG") {
            std::fs::write(out, &svg).unwrap();
        }
    }
}
