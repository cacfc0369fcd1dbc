//! The EU information system's geolocation rules (api-decisions §14), stricter than what
//! Roastery stored before them: they apply to new data and to what a statement would send,
//! never to reading stored plots back.
//!
//! - polygon holes are refused (only outer rings count);
//! - positions of one feature that collide once truncated to 6 decimals are refused (the IS
//!   truncates before storing; a ring's closing position is not a collision);
//! - a point's `Area` is 0.0001–4 ha, absent read as 4.
//!
//! The rule for everything Roastery writes, RFC 7946 §3.1.6 winding, is `geojson`'s.

use crate::field::FieldPath;
use crate::geojson::{Geometry, Plot, Plots, PlotsError, Position, parse_scaled};

/// Units of 10⁻³⁰ per 10⁻⁶ degree: the IS keeps 6 decimals.
const MICRO_DEGREE: i128 = 10_i128.pow(24);
/// 0.0001 ha in units of 10⁻³⁰.
const MIN_AREA: i128 = 10_i128.pow(26);
/// 4 ha in units of 10⁻³⁰.
const MAX_AREA: i128 = 4 * 10_i128.pow(30);

/// Which EU rule a plot breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoRule {
    /// A polygon with inner rings.
    Hole,
    /// Two positions of one feature equal once truncated to 6 decimals.
    Collision,
    /// A point's `Area` outside 0.0001–4 ha (or not a number).
    Area,
}

impl GeoRule {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hole => "POLYGON_HOLE",
            Self::Collision => "POSITION_COLLISION",
            Self::Area => "AREA_OUT_OF_RANGE",
        }
    }
}

/// One broken rule of one feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeoProblem {
    /// The feature's index in its collection.
    pub feature: usize,
    /// The field under the feature (`geometry.coordinates`, `properties.Area`).
    pub field: &'static str,
    pub rule: GeoRule,
    pub message: String,
}

/// Every EU rule the features break, feature by feature.
pub fn problems(plots: &Plots) -> Vec<GeoProblem> {
    let mut found = Vec::new();
    for (i, plot) in plots.features.iter().enumerate() {
        feature_problems(i, plot, &mut found);
    }
    found
}

/// The first EU rule new plots break, as a field error under `field` (`plots`).
pub fn check_new(plots: &Plots, field: &FieldPath) -> Result<(), PlotsError> {
    match problems(plots).into_iter().next() {
        None => Ok(()),
        Some(p) => Err(PlotsError {
            field: field
                .clone()
                .key("features")
                .index(p.feature)
                .join(&FieldPath::from(p.field)),
            problem: p.message,
        }),
    }
}

fn feature_problems(index: usize, plot: &Plot, found: &mut Vec<GeoProblem>) {
    let coordinates = "geometry.coordinates";
    let holes = match &plot.geometry {
        Geometry::Polygon(rings) => rings.len() > 1,
        Geometry::MultiPolygon(polygons) => polygons.iter().any(|rings| rings.len() > 1),
        Geometry::Point(_) | Geometry::MultiPoint(_) => false,
    };
    if holes {
        found.push(GeoProblem {
            feature: index,
            field: coordinates,
            rule: GeoRule::Hole,
            message: "has a polygon with a hole (an inner ring); the EU information system \
                      refuses holes: split the plot into polygons without holes"
                .to_owned(),
        });
    }
    if let Some((a, b)) = collision(&plot.geometry) {
        found.push(GeoProblem {
            feature: index,
            field: coordinates,
            rule: GeoRule::Collision,
            message: format!(
                "positions [{}, {}] and [{}, {}] are the same once truncated to 6 decimals, \
                 as the EU information system stores them",
                a.longitude.text(),
                a.latitude.text(),
                b.longitude.text(),
                b.latitude.text()
            ),
        });
    }
    if matches!(plot.geometry, Geometry::Point(_) | Geometry::MultiPoint(_))
        && let Some(message) = area_problem(plot.property("Area"))
    {
        found.push(GeoProblem {
            feature: index,
            field: "properties.Area",
            rule: GeoRule::Area,
            message,
        });
    }
}

/// Why a point's `Area` (its JSON text, absent = 4 ha) breaks the EU's range, if it does.
fn area_problem(area: Option<&str>) -> Option<String> {
    let text = area?.trim();
    let value = text
        .starts_with(|c: char| c == '-' || c.is_ascii_digit())
        .then(|| parse_scaled(text).ok())
        .flatten();
    match value {
        Some(v) if (MIN_AREA..=MAX_AREA).contains(&v) => None,
        Some(_) => Some(format!(
            "is {text} ha; the EU information system takes a point's area from 0.0001 to 4 ha \
             (give a larger plot as a Polygon)"
        )),
        None => Some("must be a number of hectares".to_owned()),
    }
}

/// A position truncated to 6 decimals, as the IS stores it.
fn truncated(p: &Position) -> (i128, i128) {
    (
        p.longitude.scaled().checked_div(MICRO_DEGREE).unwrap_or(0),
        p.latitude.scaled().checked_div(MICRO_DEGREE).unwrap_or(0),
    )
}

/// Two positions of the geometry that collide once truncated (each ring without its closing
/// position), found by sorting: O(n log n).
fn collision(geometry: &Geometry) -> Option<(&Position, &Position)> {
    fn open(r: &[Position]) -> &[Position] {
        r.split_last().map_or(r, |(_, open)| open)
    }
    let mut positions: Vec<&Position> = Vec::new();
    match geometry {
        Geometry::Point(p) => positions.push(p),
        Geometry::MultiPoint(points) => positions.extend(points.iter()),
        Geometry::Polygon(rings) => rings.iter().for_each(|r| positions.extend(open(r))),
        Geometry::MultiPolygon(polygons) => polygons
            .iter()
            .flatten()
            .for_each(|r| positions.extend(open(r))),
    }
    let mut keyed: Vec<((i128, i128), &Position)> =
        positions.into_iter().map(|p| (truncated(p), p)).collect();
    keyed.sort_by_key(|k| k.0);
    keyed.windows(2).find_map(|w| match w {
        [(ka, a), (kb, b)] if ka == kb => Some((*a, *b)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;
    use crate::geojson::{needs_reversal, winding};

    fn plots(json: &str) -> Plots {
        Plots::parse(json, "plots").unwrap()
    }

    fn feature(geometry: &str, properties: &str) -> String {
        format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{geometry},"properties":{properties}}}]}}"#
        )
    }

    const CW: &str =
        r#"{"type":"Polygon","coordinates":[[[0.1,0.1],[0.1,0.2],[0.2,0.2],[0.2,0.1],[0.1,0.1]]]}"#;
    const CCW: &str =
        r#"{"type":"Polygon","coordinates":[[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.2],[0.1,0.1]]]}"#;

    #[test]
    fn rings_are_wound_as_rfc_7946_wants_with_their_digits_kept() {
        let cw = plots(&feature(CW, "{}"));
        let Geometry::Polygon(rings) = &cw.features[0].geometry else {
            panic!()
        };
        assert_eq!(winding(&rings[0]), Ordering::Less);
        assert!(needs_reversal(&rings[0], true));
        assert!(!needs_reversal(&rings[0], false));
        let ccw = plots(&feature(CCW, "{}"));
        let Geometry::Polygon(rings) = &ccw.features[0].geometry else {
            panic!()
        };
        assert_eq!(winding(&rings[0]), Ordering::Greater);
        assert!(!needs_reversal(&rings[0], true));
        // Written reversed, each position with the digits it came with.
        let written = plots(&feature(
            r#"{"type":"Polygon","coordinates":[[[0.10,0.1],[0.1,0.20],[0.2,0.2],[0.2,0.1],[0.10,0.1]]]}"#,
            "{}",
        ))
        .to_json();
        assert!(
            written.contains("[[[0.10,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.20],[0.10,0.1]]]"),
            "{written}"
        );
        assert!(
            plots(&feature(CCW, "{}"))
                .to_json()
                .contains("[[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.2],[0.1,0.1]]]")
        );
    }

    #[test]
    fn a_tiny_ring_far_from_the_origin_is_judged_exactly() {
        // Differences of 10⁻²⁰ degrees at 179°: floating point would call it flat.
        let ring = r#"{"type":"Polygon","coordinates":[[[179.00000000000000000001,-89],[179.00000000000000000003,-89],[179.00000000000000000002,-88.99999999999999999999],[179.00000000000000000001,-89]]]}"#;
        let p = plots(&feature(ring, "{}"));
        let Geometry::Polygon(rings) = &p.features[0].geometry else {
            panic!()
        };
        assert_eq!(winding(&rings[0]), Ordering::Greater);
    }

    #[test]
    fn holes_are_refused() {
        let holed = r#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]],[[0.2,0.2],[0.2,0.4],[0.4,0.4],[0.4,0.2],[0.2,0.2]]]}"#;
        let found = problems(&plots(&feature(holed, "{}")));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, GeoRule::Hole);
        assert!(problems(&plots(&feature(CCW, "{}"))).is_empty());
    }

    #[test]
    fn positions_colliding_after_truncation_are_refused_but_not_a_closing_position() {
        let close = r#"{"type":"MultiPoint","coordinates":[[10.1234567,5.1234561],[10.1234561,5.1234569]]}"#;
        let found = problems(&plots(&feature(close, r#"{"Area":1}"#)));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, GeoRule::Collision);
        let apart = r#"{"type":"MultiPoint","coordinates":[[10.1234567,5.1234561],[10.1234551,5.1234569]]}"#;
        assert!(problems(&plots(&feature(apart, r#"{"Area":1}"#))).is_empty());
        // Two rings of a multipolygon touching at one vertex collide.
        let touching = r#"{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[1,1],[2,1],[2,2],[1,1]]]]}"#;
        let found = problems(&plots(&feature(touching, "{}")));
        assert_eq!(found[0].rule, GeoRule::Collision);
    }

    #[test]
    fn a_point_area_is_0_0001_to_4_hectares_and_absent_reads_as_4() {
        let point = r#"{"type":"Point","coordinates":[1,2]}"#;
        assert!(problems(&plots(&feature(point, "{}"))).is_empty());
        assert!(problems(&plots(&feature(point, r#"{"Area":0.0001}"#))).is_empty());
        assert!(problems(&plots(&feature(point, r#"{"Area":4}"#))).is_empty());
        let small = problems(&plots(&feature(point, r#"{"Area":0.00009}"#)));
        assert_eq!(small[0].rule, GeoRule::Area);
        let err = check_new(
            &plots(&feature(point, r#"{"Area":0.00009}"#)),
            &FieldPath::from("plots"),
        )
        .unwrap_err();
        assert_eq!(err.field.to_string(), "plots.features[0].properties.Area");
    }
}
