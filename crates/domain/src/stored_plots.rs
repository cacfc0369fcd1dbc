//! Plots as stored (api-decisions §12): the GeoJSON text [`Plots::to_json`] wrote when they were
//! set, kept as text and answered without decoding a coordinate.
//!
//! What is answered for stored plots is what [`Plots::to_json`] writes for them once
//! [`Plots::from_stored`] has read them back: every ring wound as RFC 7946 wants, properties by
//! name, no member but `type`, `geometry` and `properties`. Text that today's [`Plots::to_json`]
//! wrote is its own answer, and [`StoredPlots::from_stored`] recognises it in one pass over its
//! characters, reading each number only to tell which way its ring turns. Text written otherwise
//! (plots stored before rings were wound, say) is decoded once, and its answer kept beside it.
//! Neither is judged by today's rules of ranges, rings or areas: a stored bow tie is answered as
//! stored.
//!
//! A report's `plots` lists every source's plots again: [`features`] splits an answer into its
//! features as slices of its text, so that the combined collection is written from those slices
//! rather than from a second copy.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::geojson::needs_reversal_xy;
use crate::geojson::{Plots, parse_scaled, write_properties};

/// The plots of a due diligence as stored, and as answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPlots {
    /// The text as stored.
    stored: String,
    /// What is answered for it, when that is not `stored` itself.
    rewritten: Option<String>,
}

impl StoredPlots {
    /// Plots checked and written now: their text is their answer.
    pub fn written(plots: &Plots) -> Self {
        Self {
            stored: plots.to_json(),
            rewritten: None,
        }
    }

    /// Plots as a stored document holds them: their syntax is read (a `FeatureCollection` of
    /// features with a geometry of positions), never today's rules, which they met when they were
    /// stored.
    pub fn from_stored(stored: String) -> Result<Self, String> {
        if answered_as_stored(&stored) {
            return Ok(Self {
                stored,
                rewritten: None,
            });
        }
        let answer = Plots::from_stored(&stored)?.to_json();
        let rewritten = (answer != stored).then_some(answer);
        Ok(Self { stored, rewritten })
    }

    /// The GeoJSON text answered for these plots (and stored again when they are).
    pub fn answer(&self) -> &str {
        self.rewritten.as_deref().unwrap_or(&self.stored)
    }

    /// [`Self::answer`], kept.
    pub fn into_answer(self) -> String {
        self.rewritten.unwrap_or(self.stored)
    }

    /// The plots as values, every coordinate decoded: for what checks or draws them, never for
    /// an answer.
    pub fn decode(&self) -> Result<Plots, String> {
        Plots::from_stored(&self.stored)
    }

    /// The answer's features, as slices of its text.
    pub fn features(&self) -> Result<Vec<FeatureText<'_>>, String> {
        features(self.answer())
    }
}

/// One feature of a `FeatureCollection`, as slices of its text.
#[derive(Debug, Clone)]
pub struct FeatureText<'a> {
    /// `geometry`, as written.
    pub geometry: &'a RawValue,
    /// `properties` by name (none when null or absent), each value as written.
    pub properties: BTreeMap<String, &'a RawValue>,
}

impl FeatureText<'_> {
    /// `properties` as [`Plots::to_json`] writes them.
    pub fn properties_json(&self) -> String {
        let mut out = String::new();
        write_properties(
            &mut out,
            self.properties
                .iter()
                .map(|(name, value)| (name.as_str(), value.get())),
        );
        out
    }
}

#[derive(Deserialize)]
struct CollectionText<'a> {
    #[serde(borrow)]
    features: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct FeatureIn<'a> {
    #[serde(borrow)]
    geometry: &'a RawValue,
    #[serde(borrow, default)]
    properties: Option<BTreeMap<String, &'a RawValue>>,
}

#[derive(Deserialize)]
struct GeometryIn<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    coordinates: &'a RawValue,
}

/// The features of a `FeatureCollection`'s JSON text, as slices of it: nothing in a geometry is
/// decoded.
pub fn features(json: &str) -> Result<Vec<FeatureText<'_>>, String> {
    let collection: CollectionText = serde_json::from_str(json).map_err(|e| e.to_string())?;
    collection
        .features
        .into_iter()
        .map(|feature| {
            let f: FeatureIn = serde_json::from_str(feature.get()).map_err(|e| e.to_string())?;
            Ok(FeatureText {
                geometry: f.geometry,
                properties: f.properties.unwrap_or_default(),
            })
        })
        .collect()
}

/// Where `inner`, a slice of `outer`, lies in it; `None` when it is no slice of it.
pub fn range_within(outer: &str, inner: &str) -> Option<Range<usize>> {
    let start = inner.as_ptr().addr().checked_sub(outer.as_ptr().addr())?;
    let end = start.checked_add(inner.len())?;
    (end <= outer.len()).then_some(start..end)
}

/// Reads `expected` at `*at` in `text`, moving past it.
fn expect(text: &str, at: &mut usize, expected: &str) -> bool {
    let found = text
        .get(*at..)
        .is_some_and(|rest| rest.starts_with(expected));
    if found {
        *at = at.saturating_add(expected.len());
    }
    found
}

/// Reads `part`, a slice of `text`, at `*at`, moving past it.
fn expect_part(text: &str, at: &mut usize, part: &str) -> bool {
    match range_within(text, part) {
        Some(range) if range.start == *at => {
            *at = range.end;
            true
        }
        _ => false,
    }
}

/// Whether [`Plots::to_json`] writes `json` read back by [`Plots::from_stored`] exactly as it
/// is. Sure when true; false may also mean only that it is written otherwise than this looks
/// for (a number as a string, an escaped name), which decoding settles.
fn answered_as_stored(json: &str) -> bool {
    let Ok(collection) = serde_json::from_str::<CollectionText>(json) else {
        return false;
    };
    let mut at = 0;
    if !expect(json, &mut at, r#"{"type":"FeatureCollection","features":["#) {
        return false;
    }
    let mut ring = Vec::new();
    for (i, feature) in collection.features.iter().enumerate() {
        let as_stored = (i == 0 || expect(json, &mut at, ","))
            && expect_part(json, &mut at, feature.get())
            && feature_as_stored(feature.get(), &mut ring);
        if !as_stored {
            return false;
        }
    }
    expect(json, &mut at, "]}") && at == json.len()
}

fn feature_as_stored(json: &str, ring: &mut Vec<(i128, i128)>) -> bool {
    let Ok(feature) = serde_json::from_str::<FeatureIn>(json) else {
        return false;
    };
    let Some(properties) = &feature.properties else {
        return false;
    };
    let mut written = String::new();
    write_properties(
        &mut written,
        properties
            .iter()
            .map(|(name, value)| (name.as_str(), value.get())),
    );
    let mut at = 0;
    expect(json, &mut at, r#"{"type":"Feature","geometry":"#)
        && expect_part(json, &mut at, feature.geometry.get())
        && expect(json, &mut at, r#","properties":"#)
        && expect(json, &mut at, &written)
        && expect(json, &mut at, "}")
        && at == json.len()
        && geometry_as_stored(feature.geometry.get(), ring)
}

fn geometry_as_stored(json: &str, ring: &mut Vec<(i128, i128)>) -> bool {
    let Ok(geometry) = serde_json::from_str::<GeometryIn>(json) else {
        return false;
    };
    let depth = match geometry.kind.as_str() {
        "Point" => 0,
        "MultiPoint" => 1,
        "Polygon" => 2,
        "MultiPolygon" => 3,
        _ => return false,
    };
    let coordinates = geometry.coordinates.get();
    let mut at = 0;
    let mut scan = Scan {
        text: coordinates.as_bytes(),
        at: 0,
        ring,
    };
    expect(json, &mut at, r#"{"type":""#)
        && expect(json, &mut at, &geometry.kind)
        && expect(json, &mut at, r#"","coordinates":"#)
        && expect_part(json, &mut at, coordinates)
        && expect(json, &mut at, "}")
        && at == json.len()
        && scan.coordinates(depth)
        && scan.at == scan.text.len()
}

/// A pass over coordinates as [`Plots::to_json`] writes them: arrays and numbers, no space.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    /// The positions of the ring being read.
    ring: &'a mut Vec<(i128, i128)>,
}

impl Scan<'_> {
    fn byte(&mut self, b: u8) -> bool {
        let found = self.text.get(self.at) == Some(&b);
        if found {
            self.at = self.at.saturating_add(1);
        }
        found
    }

    fn digits(&mut self) -> bool {
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at = self.at.saturating_add(1);
        }
        self.at > start
    }

    /// `[item,item,...]`, each read by `item` with its index.
    fn list(&mut self, mut item: impl FnMut(&mut Self, usize) -> bool) -> bool {
        if !self.byte(b'[') {
            return false;
        }
        if self.byte(b']') {
            return true;
        }
        let mut i = 0_usize;
        loop {
            if !item(self, i) {
                return false;
            }
            if self.byte(b']') {
                return true;
            }
            if !self.byte(b',') {
                return false;
            }
            i = i.saturating_add(1);
        }
    }

    /// A JSON number, and its value as [`Plots::from_stored`] reads it (zero when it has none
    /// at the scale of 10⁻³⁰: only new plots are judged by it).
    fn number(&mut self) -> Option<i128> {
        let start = self.at;
        self.byte(b'-');
        if !self.byte(b'0') && !self.digits() {
            return None;
        }
        if self.byte(b'.') && !self.digits() {
            return None;
        }
        if self.byte(b'e') || self.byte(b'E') {
            let _sign = self.byte(b'+') || self.byte(b'-');
            if !self.digits() {
                return None;
            }
        }
        let text = std::str::from_utf8(self.text.get(start..self.at)?).ok()?;
        Some(parse_scaled(text).unwrap_or_default())
    }

    /// `[longitude,latitude]` or `[longitude,latitude,altitude]`.
    fn position(&mut self) -> Option<(i128, i128)> {
        if !self.byte(b'[') {
            return None;
        }
        let longitude = self.number()?;
        if !self.byte(b',') {
            return None;
        }
        let latitude = self.number()?;
        if self.byte(b',') {
            self.number()?;
        }
        self.byte(b']').then_some((longitude, latitude))
    }

    /// A ring wound as RFC 7946 wants it: [`Plots::to_json`] would write it as it is.
    fn ring(&mut self, exterior: bool) -> bool {
        let mut ring = std::mem::take(self.ring);
        ring.clear();
        let read = self.list(|scan, _| scan.position().map(|p| ring.push(p)).is_some());
        let as_written = read && !needs_reversal_xy(&ring, exterior);
        *self.ring = ring;
        as_written
    }

    fn polygon(&mut self) -> bool {
        self.list(|scan, i| scan.ring(i == 0))
    }

    /// The coordinates of a Point (depth 0), MultiPoint, Polygon or MultiPolygon (depth 3).
    fn coordinates(&mut self, depth: u8) -> bool {
        match depth {
            0 => self.position().is_some(),
            1 => self.list(|scan, _| scan.position().is_some()),
            2 => self.polygon(),
            _ => self.list(|scan, _| scan.polygon()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn collection(features: &[&str]) -> String {
        format!(
            r#"{{"type":"FeatureCollection","features":[{}]}}"#,
            features.join(",")
        )
    }

    fn feature(geometry: &str, properties: &str) -> String {
        format!(r#"{{"type":"Feature","geometry":{geometry},"properties":{properties}}}"#)
    }

    fn polygon(rings: &str) -> String {
        format!(r#"{{"type":"Polygon","coordinates":{rings}}}"#)
    }

    /// What was answered before plots were kept as text: every coordinate decoded, then
    /// written again.
    fn decoded_answer(stored: &str) -> String {
        Plots::from_stored(stored).unwrap().to_json()
    }

    fn answer(stored: &str) -> StoredPlots {
        let plots = StoredPlots::from_stored(stored.to_owned()).unwrap();
        assert_eq!(plots.answer(), decoded_answer(stored), "{stored}");
        plots
    }

    const CCW: &str = "[[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.2],[0.1,0.1]]]";
    const CW: &str = "[[[0.1,0.1],[0.1,0.2],[0.2,0.2],[0.2,0.1],[0.1,0.1]]]";

    #[test]
    fn plots_written_today_are_answered_as_stored_without_decoding() {
        let input = collection(&[
            &feature(
                &polygon(CW),
                r#"{"ProducerName":"Finca A","Area":2, "Note" : [1, {"a": "]}"}]}"#,
            ),
            &feature(
                r#"{"type":"MultiPoint","coordinates":[[-75.59,6.2518,1850.5],[1e2,-0.0]]}"#,
                "null",
            ),
        ]);
        let parsed = Plots::parse(&input, "plots").unwrap();
        let written = StoredPlots::written(&parsed);
        assert!(
            written.answer().contains("[[[0.1,0.1],[0.2,0.1],[0.2,0.2]"),
            "wound counterclockwise: {}",
            written.answer()
        );
        assert!(answered_as_stored(written.answer()));
        let read = answer(written.answer());
        assert_eq!(read, written, "nothing kept beside the stored text");
    }

    #[test]
    fn a_stored_invalid_polygon_is_answered_as_stored() {
        // A bow tie, a ring that is not closed, a latitude of 100: all refused as input.
        let stored = collection(&[
            &feature(&polygon("[[[0,0],[1,1],[1,0],[0,1],[0,0]]]"), "{}"),
            &feature(&polygon("[[[0,0],[1,0],[1,1]]]"), "{}"),
            &feature(r#"{"type":"Point","coordinates":[1,100,7]}"#, "{}"),
        ]);
        assert!(Plots::parse(&stored, "plots").is_err());
        assert!(answered_as_stored(&stored));
        let plots = answer(&stored);
        assert_eq!(plots.answer(), stored);
        assert_eq!(plots.decode().unwrap().features.len(), 3);
    }

    #[test]
    fn plots_stored_otherwise_are_answered_as_they_were_before() {
        let cases = [
            // Wound clockwise (stored before rings were wound), a hole wound the other way.
            collection(&[&feature(&polygon(CW), "{}")]),
            collection(&[&feature(
                &polygon(&format!(
                    "[{},{}]",
                    &CCW[1..CCW.len() - 1],
                    "[[0.12,0.12],[0.14,0.12],[0.14,0.14],[0.12,0.12]]"
                )),
                "{}",
            )]),
            // Spaces, members in another order, extra members, properties unsorted or null.
            r#"{ "type": "FeatureCollection", "features": [ {"type":"Feature","geometry":{"type":"Point","coordinates":[ 1, 2 ]},"properties":{}} ] }"#.to_owned(),
            r#"{"features":[{"geometry":{"type":"Point","coordinates":[1,2]},"type":"Feature","properties":{}}],"type":"FeatureCollection"}"#.to_owned(),
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2],"bbox":[1,2,1,2]}"#, "{}")]),
            collection(&[r#"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#]),
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2]}"#, r#"{"b":1,"a":2}"#)]),
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2]}"#, "null")]),
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2]}"#, r#"{"a":1,"a":2}"#)]),
            // A name escaped otherwise than it is written, a position of four numbers.
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2]}"#, r#"{"\u0041":1}"#)]),
            collection(&[&feature(r#"{"type":"Point","coordinates":[1,2,3,4]}"#, "{}")]),
        ];
        for stored in cases {
            assert!(!answered_as_stored(&stored), "{stored}");
            let plots = answer(&stored);
            assert_ne!(plots.answer(), stored);
            assert_eq!(
                plots.decode().unwrap(),
                Plots::from_stored(&stored).unwrap()
            );
        }
        let unreadable = r#"{"features":[{"geometry":{"type":"Point"}}]}"#;
        assert!(StoredPlots::from_stored(unreadable.to_owned()).is_err());
        assert!(StoredPlots::from_stored("[]".to_owned()).is_err());
    }

    #[test]
    fn features_are_split_as_slices_of_the_text() {
        let tricky = r#"{"Name":"a \"]},{\" [[b","Nested":[[1,[2]],{"x":"}"}],"Empty":{}}"#;
        let first = feature(&polygon(CCW), tricky);
        let second = feature(r#"{"type":"Point","coordinates":[3,4]}"#, "{}");
        let text = collection(&[&first, &second]);
        let split = features(&text).unwrap();
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].geometry.get(), polygon(CCW));
        assert_eq!(
            range_within(&text, split[0].geometry.get()),
            text.find(&polygon(CCW))
                .map(|at| at..at + polygon(CCW).len())
        );
        let names: Vec<&str> = split[0].properties.keys().map(String::as_str).collect();
        assert_eq!(names, ["Empty", "Name", "Nested"]);
        assert_eq!(split[0].properties["Name"].get(), r#""a \"]},{\" [[b""#);
        assert_eq!(
            split[0].properties["Nested"].get(),
            r#"[[1,[2]],{"x":"}"}]"#
        );
        assert_eq!(
            split[1].geometry.get(),
            r#"{"type":"Point","coordinates":[3,4]}"#
        );
        assert_eq!(split[1].properties_json(), "{}");
        // Written back, properties by name: the feature as `Plots::to_json` writes it.
        let rewritten = format!(
            r#"{{"type":"Feature","geometry":{},"properties":{}}}"#,
            split[0].geometry.get(),
            split[0].properties_json()
        );
        assert_eq!(collection(&[&rewritten, &second]), decoded_answer(&text));
        assert!(answered_as_stored(&collection(&[&rewritten, &second])));
        assert_eq!(range_within(&text, "elsewhere"), None);
    }

    proptest! {
        #[test]
        fn the_answer_is_what_decoding_answered(
            rings in proptest::collection::vec(
                proptest::collection::vec((-5i64..5, -5i64..5), 0..6), 1..4),
            closed in any::<bool>(),
            spaced in any::<bool>(),
            altitude in any::<bool>(),
            multi in any::<bool>(),
        ) {
            let position = |&(x, y): &(i64, i64)| {
                let sep = if spaced { ", " } else { "," };
                if altitude { format!("[{x}{sep}{y}{sep}1.50]") } else { format!("[{x}.0{sep}{y}]") }
            };
            let rings: Vec<String> = rings.iter().map(|ring| {
                let mut positions: Vec<String> = ring.iter().map(position).collect();
                if closed && let Some(first) = ring.first() {
                    positions.push(position(first));
                }
                format!("[{}]", positions.join(","))
            }).collect();
            let rings = format!("[{}]", rings.join(","));
            let geometry = if multi {
                format!(r#"{{"type":"MultiPolygon","coordinates":[{rings},{rings}]}}"#)
            } else {
                polygon(&rings)
            };
            let stored = collection(&[&feature(&geometry, r#"{"b":[1,"]"],"a":null}"#)]);
            let plots = StoredPlots::from_stored(stored.clone()).unwrap();
            prop_assert_eq!(plots.answer(), decoded_answer(&stored));
            // Recognised only where decoding would write the text as it is (not always there:
            // a ring that reads the same reversed and is wound the wrong way is decoded).
            prop_assert!(!answered_as_stored(&stored) || decoded_answer(&stored) == stored);
            let again = plots.answer();
            prop_assert!(!answered_as_stored(again) || decoded_answer(again) == again);
        }
    }
}
