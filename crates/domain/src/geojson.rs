//! The plots of land of a due diligence statement: a GeoJSON (RFC 7946) `FeatureCollection` as the
//! EU information system takes it (api-decisions §12).
//!
//! Coordinates are kept as the text they were sent in and answered with the same digits; they are
//! never converted to binary floating point. Range checks and the self-crossing test work on the
//! exact decimal values, as integers of 10⁻³⁰ degrees ([`SCALE_DIGITS`]), with 256-bit products
//! in the orientation test, so no input is accepted or refused differently from what its digits
//! mean. A coordinate with more than 30 decimal places (other than trailing zeros) is refused.
//!
//! This module never rounds a number, never reorders a feature and never drops a property.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::field::FieldPath;
use crate::violation::{BrokenRule, Violation};

/// Decimal places a coordinate may carry.
pub const SCALE_DIGITS: u32 = 30;
/// Most features one collection may hold.
pub const MAX_FEATURES: usize = 10_000;
/// The largest area, in hectares, a plot may have and still be given as a point.
pub const MAX_POINT_HECTARES: i128 = 4;
/// Most positions one polygon ring may hold. A ring is checked for self-crossing in
/// O(n log n), so this bounds time only mildly; it bounds the size of one plot (a 50,000-position
/// ring is about 1 MB of GeoJSON) in the spirit of the EU information system, which takes 25 MB
/// per statement.
pub const MAX_RING_POSITIONS: usize = 50_000;
/// Most positions one collection may hold, over all its features (a 1 MiB request cannot reach
/// it; stored documents stay bounded whatever the request limit becomes).
pub const MAX_POSITIONS: usize = 100_000;
/// Longest text of any number in the plots (a coordinate, an altitude, a number in the
/// properties): 30 decimal places and a sign fit twice over.
pub const MAX_NUMBER_CHARS: usize = 64;

const SCALE: i128 = 10_i128.pow(SCALE_DIGITS);

/// A broken rule of the plots: always a malformed field, named by its path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct PlotsError {
    /// The path of the field, e.g. `plots.features[2].geometry.coordinates`.
    pub field: FieldPath,
    pub problem: String,
}

impl BrokenRule for PlotsError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        self.field.rebase(base);
    }
}

fn err(field: &FieldPath, problem: impl Into<String>) -> PlotsError {
    PlotsError {
        field: field.clone(),
        problem: problem.into(),
    }
}

/// A number as sent (its text) and its exact value in units of 10⁻³⁰.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coordinate {
    text: String,
    scaled: i128,
}

impl Coordinate {
    /// The digits as they were sent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The exact value in units of 10⁻³⁰.
    pub fn scaled(&self) -> i128 {
        self.scaled
    }
}

/// Why a number's text has no exact value at the scale of 10⁻³⁰.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberError {
    NotANumber,
    TooPrecise,
    TooLarge,
}

impl NumberError {
    fn describe(self, what: &str) -> String {
        match self {
            Self::NotANumber => format!("{what} must be a number"),
            Self::TooPrecise => {
                format!("{what} has more than {SCALE_DIGITS} decimal places")
            }
            Self::TooLarge => format!("{what} is out of range"),
        }
    }
}

/// The exact value of a JSON number's text in units of 10⁻³⁰ (`"1.5"` → 1.5 × 10³⁰).
pub fn parse_scaled(text: &str) -> Result<i128, NumberError> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty()
        || !all_digits(int)
        || !all_digits(frac)
        || (mantissa.contains('.') && frac.is_empty())
    {
        return Err(NumberError::NotANumber);
    }
    let digits: String = int.chars().chain(frac.chars()).collect();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if unsigned.is_empty() || !all_digits(unsigned) {
                return Err(NumberError::NotANumber);
            }
            match e.parse::<i64>() {
                Ok(v) if v.abs() < 1_000_000 => v,
                // A nonzero number with an exponent this large is far outside any range here.
                _ if e.starts_with('-') => return Err(NumberError::TooPrecise),
                _ => return Err(NumberError::TooLarge),
            }
        }
    };
    let frac_len = i64::try_from(frac.len()).map_err(|_| NumberError::TooPrecise)?;
    let shift = exponent
        .checked_sub(frac_len)
        .and_then(|v| v.checked_add(i64::from(SCALE_DIGITS)))
        .ok_or(NumberError::TooPrecise)?;
    let mut kept = digits;
    let mut shift = shift;
    if shift < 0 {
        let cut = usize::try_from(shift.unsigned_abs()).map_err(|_| NumberError::TooPrecise)?;
        if cut >= kept.len() {
            return Err(NumberError::TooPrecise);
        }
        let (head, tail) = kept.split_at(kept.len().saturating_sub(cut));
        if !tail.bytes().all(|b| b == b'0') {
            return Err(NumberError::TooPrecise);
        }
        kept = head;
        shift = 0;
    }
    let mut value: i128 = 0;
    for b in kept.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b.saturating_sub(b'0'))))
            .ok_or(NumberError::TooLarge)?;
    }
    let shift = u32::try_from(shift).map_err(|_| NumberError::TooLarge)?;
    let factor = 10_i128.checked_pow(shift).ok_or(NumberError::TooLarge)?;
    let value = value.checked_mul(factor).ok_or(NumberError::TooLarge)?;
    if negative {
        value.checked_neg().ok_or(NumberError::TooLarge)
    } else {
        Ok(value)
    }
}

/// `[longitude, latitude]`, and the altitude when one was sent (kept, never judged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub longitude: Coordinate,
    pub latitude: Coordinate,
    pub altitude: Option<String>,
}

impl Position {
    fn xy(&self) -> (i128, i128) {
        (self.longitude.scaled, self.latitude.scaled)
    }

    fn write(&self, out: &mut String) {
        out.push('[');
        out.push_str(&self.longitude.text);
        out.push(',');
        out.push_str(&self.latitude.text);
        if let Some(alt) = &self.altitude {
            out.push(',');
            out.push_str(alt);
        }
        out.push(']');
    }
}

/// A closed ring: the first position equals the last.
pub type Ring = Vec<Position>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Geometry {
    Point(Position),
    MultiPoint(Vec<Position>),
    /// The outer ring, then any holes.
    Polygon(Vec<Ring>),
    MultiPolygon(Vec<Vec<Ring>>),
}

impl Geometry {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Point(_) => "Point",
            Self::MultiPoint(_) => "MultiPoint",
            Self::Polygon(_) => "Polygon",
            Self::MultiPolygon(_) => "MultiPolygon",
        }
    }

    fn write(&self, out: &mut String) {
        fn list<T>(out: &mut String, items: &[T], each: impl Fn(&mut String, &T)) {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                each(out, item);
            }
            out.push(']');
        }
        let polygon = |out: &mut String, rings: &Vec<Ring>| {
            out.push('[');
            for (i, r) in rings.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_ring(out, r, i == 0);
            }
            out.push(']');
        };
        out.push_str("{\"type\":\"");
        out.push_str(self.type_name());
        out.push_str("\",\"coordinates\":");
        match self {
            Self::Point(p) => p.write(out),
            Self::MultiPoint(points) => list(out, points, |o, p| p.write(o)),
            Self::Polygon(rings) => polygon(out, rings),
            Self::MultiPolygon(polygons) => list(out, polygons, polygon),
        }
        out.push('}');
    }

    /// How many positions the geometry holds.
    pub fn position_count(&self) -> usize {
        match self {
            Self::Point(_) => 1,
            Self::MultiPoint(points) => points.len(),
            Self::Polygon(rings) => rings.iter().map(Vec::len).sum(),
            Self::MultiPolygon(polygons) => polygons.iter().flatten().map(Vec::len).sum(),
        }
    }

    /// Every position, for drawing.
    pub fn positions(&self) -> Vec<&Position> {
        match self {
            Self::Point(p) => vec![p],
            Self::MultiPoint(points) => points.iter().collect(),
            Self::Polygon(rings) => rings.iter().flatten().collect(),
            Self::MultiPolygon(polygons) => polygons.iter().flatten().flatten().collect(),
        }
    }
}

/// A ring as RFC 7946 §3.1.6 winds it (exterior counterclockwise, holes clockwise): a ring
/// wound the other way is written reversed, each position with the digits it was sent with.
fn write_ring(out: &mut String, ring: &Ring, exterior: bool) {
    out.push('[');
    let reverse = needs_reversal(ring, exterior);
    let mut first = true;
    let mut each = |p: &Position| {
        if !first {
            out.push(',');
        }
        first = false;
        p.write(out);
    };
    if reverse {
        ring.iter().rev().for_each(&mut each);
    } else {
        ring.iter().for_each(&mut each);
    }
    out.push(']');
}

/// One plot: its geometry and its properties, each kept as the JSON text it was sent as.
#[derive(Debug, Clone)]
pub struct Plot {
    pub geometry: Geometry,
    pub properties: BTreeMap<String, Box<RawValue>>,
}

impl PartialEq for Plot {
    fn eq(&self, other: &Self) -> bool {
        self.geometry == other.geometry
            && self.properties.len() == other.properties.len()
            && self
                .properties
                .iter()
                .zip(&other.properties)
                .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.get() == v2.get())
    }
}

impl Eq for Plot {}

impl Plot {
    /// Sets a property unless it is present already.
    pub fn property_or_insert(&mut self, name: &str, json: Box<RawValue>) {
        self.properties.entry(name.to_owned()).or_insert(json);
    }

    /// Sets a property, replacing any value.
    pub fn set_property(&mut self, name: &str, json: Box<RawValue>) {
        self.properties.insert(name.to_owned(), json);
    }

    /// A property's JSON text, if present.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties.get(name).map(|v| v.get())
    }

    fn write(&self, out: &mut String) {
        out.push_str("{\"type\":\"Feature\",\"geometry\":");
        self.geometry.write(out);
        out.push_str(",\"properties\":");
        write_properties(
            out,
            self.properties
                .iter()
                .map(|(name, value)| (name.as_str(), value.get())),
        );
        out.push('}');
    }
}

/// A feature's properties as written: `{"name":value,...}` in the order given (by name, from
/// a map), each value the JSON text it was sent as.
pub(crate) fn write_properties<'a>(
    out: &mut String,
    properties: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    out.push('{');
    for (i, (name, value)) in properties.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(name));
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
}

/// A JSON string literal of `s`.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len().saturating_add(2));
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A valid `FeatureCollection` of plots.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plots {
    pub features: Vec<Plot>,
}

#[derive(Deserialize)]
struct CollectionIn<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(borrow)]
    features: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct FeatureIn<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(borrow)]
    geometry: Option<&'a RawValue>,
    #[serde(borrow)]
    properties: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeometryIn<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(borrow)]
    coordinates: Option<&'a RawValue>,
}

/// A stored collection: syntax only.
#[derive(Deserialize)]
struct StoredCollection {
    features: Vec<StoredFeature>,
}

#[derive(Deserialize)]
struct StoredFeature {
    geometry: StoredGeometry,
    properties: Option<BTreeMap<String, Box<RawValue>>>,
}

type StoredPosition = Vec<Box<RawValue>>;

#[derive(Deserialize)]
#[serde(tag = "type", content = "coordinates")]
enum StoredGeometry {
    Point(StoredPosition),
    MultiPoint(Vec<StoredPosition>),
    Polygon(Vec<Vec<StoredPosition>>),
    MultiPolygon(Vec<Vec<Vec<StoredPosition>>>),
}

impl StoredGeometry {
    fn decode(self) -> Result<Geometry, String> {
        fn position(p: StoredPosition) -> Result<Position, String> {
            let mut numbers = p.into_iter().map(|n| n.get().trim().to_owned());
            // The scaled value serves only the checks of new plots; a stored coordinate is never
            // checked again, so one today's parser could not scale is kept by its text alone.
            let coordinate = |text: String| Coordinate {
                scaled: parse_scaled(&text).unwrap_or_default(),
                text,
            };
            match (numbers.next(), numbers.next()) {
                (Some(lon), Some(lat)) => Ok(Position {
                    longitude: coordinate(lon),
                    latitude: coordinate(lat),
                    altitude: numbers.next(),
                }),
                _ => Err("a stored position lacks a longitude or a latitude".to_owned()),
            }
        }
        fn ring(r: Vec<StoredPosition>) -> Result<Ring, String> {
            r.into_iter().map(position).collect()
        }
        fn polygon(p: Vec<Vec<StoredPosition>>) -> Result<Vec<Ring>, String> {
            p.into_iter().map(ring).collect()
        }
        Ok(match self {
            Self::Point(p) => Geometry::Point(position(p)?),
            Self::MultiPoint(points) => Geometry::MultiPoint(ring(points)?),
            Self::Polygon(rings) => Geometry::Polygon(polygon(rings)?),
            Self::MultiPolygon(polygons) => Geometry::MultiPolygon(
                polygons
                    .into_iter()
                    .map(polygon)
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

fn object<'a, T: Deserialize<'a>>(
    raw: &'a str,
    field: &FieldPath,
    what: &str,
) -> Result<T, PlotsError> {
    if !raw.trim_start().starts_with('{') {
        return Err(err(field, format!("must be {what}")));
    }
    serde_json::from_str(raw).map_err(|e| err(field, format!("must be {what}: {e}")))
}

fn array<'a>(
    raw: &'a RawValue,
    field: &FieldPath,
    what: &str,
) -> Result<Vec<&'a RawValue>, PlotsError> {
    if !raw.get().trim_start().starts_with('[') {
        return Err(err(field, format!("{what} must be an array")));
    }
    serde_json::from_str(raw.get()).map_err(|e| err(field, format!("{what}: {e}")))
}

fn number(raw: &RawValue) -> Option<&str> {
    let text = raw.get().trim();
    text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
        .then_some(text)
}

/// Whether a JSON number's text is one every decoder takes: at most [`MAX_NUMBER_CHARS`]
/// characters and within the range of a double (`1e999999` is not; decoders refuse it or make
/// it infinite).
fn number_is_sane(text: &str) -> bool {
    if text.len() > MAX_NUMBER_CHARS {
        return false;
    }
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(i64::MAX)),
        None => (unsigned, 0),
    };
    let int = mantissa.split('.').next().unwrap_or("");
    let int_digits = i64::try_from(int.trim_start_matches('0').len()).unwrap_or(i64::MAX);
    // The decimal magnitude of the number (a double reaches 1.8e308); far below zero it is
    // zero to a double, which is fine.
    int_digits.saturating_sub(1).saturating_add(exponent) <= 307
}

fn number_problem(text: &str) -> String {
    format!(
        "holds a number no decoder takes (over {MAX_NUMBER_CHARS} characters, or beyond the \
         range of a double): {}…",
        text.get(..20).unwrap_or(text)
    )
}

/// Why JSON text kept as sent could not be read back by every decoder, if it could not: a
/// number [`number_is_sane`] refuses, or a `\u` escape of half a surrogate pair (`"\ud800"`
/// names no character; serde_json and Python refuse it).
fn kept_json_problem(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let digits = raw.get(at..at.checked_add(4)?)?;
        u32::from_str_radix(digits, 16).ok()
    };
    let lone =
        "holds half a surrogate pair (a \\u escape of U+D800 to U+DFFF without its other half)";
    let mut i = 0_usize;
    let mut in_string = false;
    while let Some(&b) = bytes.get(i) {
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' if bytes.get(i.saturating_add(1)) == Some(&b'u') => {
                    let unit = hex(i.saturating_add(2)).unwrap_or(0);
                    if (0xDC00..=0xDFFF).contains(&unit) {
                        return Some(lone.to_owned());
                    }
                    if (0xD800..=0xDBFF).contains(&unit) {
                        let next = i.saturating_add(6);
                        let low = (raw.get(next..next.saturating_add(2)) == Some("\\u"))
                            .then(|| hex(next.saturating_add(2)))
                            .flatten();
                        if !low.is_some_and(|l| (0xDC00..=0xDFFF).contains(&l)) {
                            return Some(lone.to_owned());
                        }
                        i = next.saturating_add(6);
                    } else {
                        i = i.saturating_add(6);
                    }
                    continue;
                }
                b'\\' => {
                    i = i.saturating_add(2);
                    continue;
                }
                _ => {}
            }
            i = i.saturating_add(1);
        } else if b == b'"' {
            in_string = true;
            i = i.saturating_add(1);
        } else if b == b'-' || b.is_ascii_digit() {
            let rest = raw.get(i..).unwrap_or("");
            let len = rest
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
                .unwrap_or(rest.len());
            let text = rest.get(..len).unwrap_or("");
            if !number_is_sane(text) {
                return Some(number_problem(text));
            }
            i = i.saturating_add(len.max(1));
        } else {
            i = i.saturating_add(1);
        }
    }
    None
}

/// Degrees a coordinate may reach, in units of 10⁻³⁰.
fn in_range(value: i128, degrees: i128) -> bool {
    let limit = degrees.saturating_mul(SCALE);
    (limit.saturating_neg()..=limit).contains(&value)
}

fn position(raw: &RawValue, field: &FieldPath, at: &str) -> Result<Position, PlotsError> {
    let values = array(raw, field, &format!("position {at}"))?;
    if !(2..=3).contains(&values.len()) {
        return Err(err(
            field,
            format!(
                "position {at} has {} numbers; give [longitude, latitude] (and at most an altitude)",
                values.len()
            ),
        ));
    }
    let mut numbers = Vec::with_capacity(3);
    for v in &values {
        let text =
            number(v).ok_or_else(|| err(field, format!("position {at} must hold numbers only")))?;
        numbers.push(text.to_owned());
    }
    let mut numbers = numbers.into_iter();
    let (Some(lon), Some(lat)) = (numbers.next(), numbers.next()) else {
        return Err(err(
            field,
            format!("position {at} needs a longitude and a latitude"),
        ));
    };
    let altitude = numbers.next();
    for text in [Some(&lon), Some(&lat), altitude.as_ref()]
        .into_iter()
        .flatten()
    {
        if !number_is_sane(text) {
            return Err(err(
                field,
                format!("position {at} {}", number_problem(text)),
            ));
        }
    }
    let coordinate = |text: String, name: &str, degrees: i128| {
        let scaled = parse_scaled(&text)
            .map_err(|e| err(field, e.describe(&format!("the {name} of position {at}"))))?;
        if !in_range(scaled, degrees) {
            return Err(err(
                field,
                format!(
                    "the {name} of position {at} is {text}; it must lie in [-{degrees}, {degrees}] \
                     (positions are [longitude, latitude])"
                ),
            ));
        }
        Ok(Coordinate { text, scaled })
    };
    Ok(Position {
        longitude: coordinate(lon, "longitude", 180)?,
        latitude: coordinate(lat, "latitude", 90)?,
        altitude,
    })
}

fn positions(raw: &RawValue, field: &FieldPath, at: &str) -> Result<Vec<Position>, PlotsError> {
    array(raw, field, &format!("coordinates{at}"))?
        .into_iter()
        .enumerate()
        .map(|(i, p)| position(p, field, &format!("{at}[{i}]")))
        .collect()
}

fn ring(raw: &RawValue, field: &FieldPath, at: &str) -> Result<Ring, PlotsError> {
    // Counted before any position is read: a ring over the limit costs one pass of the JSON.
    let raw_positions = array(raw, field, &format!("coordinates{at}"))?;
    if raw_positions.len() > MAX_RING_POSITIONS {
        return Err(err(
            field,
            format!(
                "ring {at} has {} positions; at most {MAX_RING_POSITIONS} are accepted in one \
                 ring (give a larger plot as several polygons of a MultiPolygon or as several \
                 features)",
                raw_positions.len()
            ),
        ));
    }
    let ring = raw_positions
        .into_iter()
        .enumerate()
        .map(|(i, p)| position(p, field, &format!("{at}[{i}]")))
        .collect::<Result<Ring, _>>()?;
    if ring.len() < 4 {
        return Err(err(
            field,
            format!(
                "ring {at} has {} positions; a ring needs at least 4",
                ring.len()
            ),
        ));
    }
    if ring.first().map(Position::xy) != ring.last().map(Position::xy) {
        return Err(err(
            field,
            format!("ring {at} is not closed: its last position must equal its first"),
        ));
    }
    if let Some((a, b)) = crossing(&ring) {
        return Err(err(
            field,
            format!("ring {at} crosses itself (its segments {a} and {b} meet)"),
        ));
    }
    Ok(ring)
}

fn polygon(raw: &RawValue, field: &FieldPath, at: &str) -> Result<Vec<Ring>, PlotsError> {
    let rings = array(raw, field, &format!("coordinates{at}"))?;
    if rings.is_empty() {
        return Err(err(field, format!("polygon {at} has no ring")));
    }
    rings
        .into_iter()
        .enumerate()
        .map(|(i, r)| ring(r, field, &format!("{at}[{i}]")))
        .collect()
}

fn geometry(raw: &RawValue, field: &FieldPath) -> Result<Geometry, PlotsError> {
    let g: GeometryIn = object(raw.get(), field, "a GeoJSON geometry object")?;
    let kind_field = field.clone().key("type");
    let kind = g.kind.ok_or_else(|| err(&kind_field, "is required"))?;
    let coords_field = field.clone().key("coordinates");
    let coords = g
        .coordinates
        .ok_or_else(|| err(&coords_field, "is required"))?;
    let f = &coords_field;
    Ok(match kind.as_str() {
        "Point" => Geometry::Point(position(coords, f, "")?),
        "MultiPoint" => {
            let points = positions(coords, f, "")?;
            if points.is_empty() {
                return Err(err(f, "a MultiPoint needs at least one position"));
            }
            Geometry::MultiPoint(points)
        }
        "Polygon" => Geometry::Polygon(polygon(coords, f, "")?),
        "MultiPolygon" => {
            let polygons = array(coords, f, "coordinates")?;
            if polygons.is_empty() {
                return Err(err(f, "a MultiPolygon needs at least one polygon"));
            }
            Geometry::MultiPolygon(
                polygons
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| polygon(p, f, &format!("[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        other => {
            return Err(err(
                &kind_field,
                format!(
                    "`{other}` is not accepted; a plot is a Point, MultiPoint, Polygon or \
                     MultiPolygon"
                ),
            ));
        }
    })
}

fn plot(raw: &RawValue, field: &FieldPath) -> Result<Plot, PlotsError> {
    let f: FeatureIn = object(raw.get(), field, "a GeoJSON Feature object")?;
    if f.kind.as_deref() != Some("Feature") {
        return Err(err(&field.clone().key("type"), "must be \"Feature\""));
    }
    let geometry_field = field.clone().key("geometry");
    let geometry = match f.geometry {
        Some(g) if g.get().trim() != "null" => geometry(g, &geometry_field)?,
        _ => return Err(err(&geometry_field, "is required")),
    };
    let properties_field = field.clone().key("properties");
    let properties: BTreeMap<String, Box<RawValue>> = match f.properties {
        Some(p) if p.get().trim() != "null" => object(p.get(), &properties_field, "an object")?,
        _ => BTreeMap::new(),
    };
    for (name, value) in &properties {
        if let Some(problem) = kept_json_problem(value.get()) {
            return Err(err(&properties_field.clone().key(name.clone()), problem));
        }
    }
    if matches!(geometry, Geometry::Point(_) | Geometry::MultiPoint(_)) {
        let area_field = properties_field.key("Area");
        // Absent, the EU information system reads 4 ha.
        if let Some(area) = properties.get("Area") {
            let text =
                number(area).ok_or_else(|| err(&area_field, "must be a number of hectares"))?;
            let hectares =
                parse_scaled(text).map_err(|e| err(&area_field, e.describe("the area")))?;
            if hectares <= 0 || hectares > MAX_POINT_HECTARES * SCALE {
                return Err(err(
                    &area_field,
                    format!(
                        "is {text} ha; a Point or MultiPoint plot must be over 0 and at most \
                     {MAX_POINT_HECTARES} ha (give a larger plot as a Polygon)"
                    ),
                ));
            }
        }
    }
    Ok(Plot {
        geometry,
        properties,
    })
}

impl Plots {
    /// Parses and checks a `FeatureCollection`'s JSON text; `field` names it in errors
    /// (`plots`).
    pub fn parse(json: &str, field: impl Into<FieldPath>) -> Result<Self, PlotsError> {
        let field = &field.into();
        let c: CollectionIn = object(json, field, "a GeoJSON FeatureCollection object")?;
        if c.kind.as_deref() != Some("FeatureCollection") {
            return Err(err(
                &field.clone().key("type"),
                "must be \"FeatureCollection\"",
            ));
        }
        let features_field = field.clone().key("features");
        let features = c
            .features
            .ok_or_else(|| err(&features_field, "is required"))?;
        if features.is_empty() || features.len() > MAX_FEATURES {
            return Err(err(
                &features_field,
                format!(
                    "holds {} features; give 1 to {MAX_FEATURES}",
                    features.len()
                ),
            ));
        }
        let mut positions = 0_usize;
        let features = features
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let plot = plot(f, &features_field.clone().index(i))?;
                positions = positions.saturating_add(plot.geometry.position_count());
                if positions > MAX_POSITIONS {
                    return Err(err(
                        &features_field,
                        format!(
                            "hold more than {MAX_POSITIONS} positions (counted to features[{i}]); \
                             at most {MAX_POSITIONS} are accepted in one lot's plots"
                        ),
                    ));
                }
                Ok(plot)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { features })
    }

    /// Reads plots back as stored: their syntax only (a `FeatureCollection` of features with a
    /// geometry of positions), never today's rules of ranges, rings or areas, which the plots
    /// met when they were stored. Cheap: no ring is tested for crossing.
    pub fn from_stored(json: &str) -> Result<Self, String> {
        let c: StoredCollection = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let features = c
            .features
            .into_iter()
            .map(|f| {
                Ok(Plot {
                    geometry: f.geometry.decode()?,
                    properties: f.properties.unwrap_or_default(),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { features })
    }

    /// The collection as GeoJSON text, every number with the digits it was sent with.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"type\":\"FeatureCollection\",\"features\":[");
        for (i, plot) in self.features.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            plot.write(&mut out);
        }
        out.push_str("]}");
        out
    }
}

/// A 256-bit signed product, compared exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wide {
    negative: bool,
    high: u128,
    low: u128,
}

const HALF: u128 = u64::MAX as u128;

fn product(a: i128, b: i128) -> Wide {
    let (x, y) = (a.unsigned_abs(), b.unsigned_abs());
    let (x1, x0, y1, y0) = (x >> 64, x & HALF, y >> 64, y & HALF);
    // Products of 64-bit halves fit in 128 bits, and so do these sums (at most three terms
    // below 2⁶⁴ each, or a high word below 2¹²⁸ in total): the wrapping operations never wrap.
    let (p00, p01, p10, p11) = (
        x0.wrapping_mul(y0),
        x0.wrapping_mul(y1),
        x1.wrapping_mul(y0),
        x1.wrapping_mul(y1),
    );
    let middle = (p00 >> 64)
        .wrapping_add(p01 & HALF)
        .wrapping_add(p10 & HALF);
    let low = (p00 & HALF) | (middle << 64);
    let high = p11
        .wrapping_add(p01 >> 64)
        .wrapping_add(p10 >> 64)
        .wrapping_add(middle >> 64);
    Wide {
        negative: (a < 0) != (b < 0) && (high, low) != (0, 0),
        high,
        low,
    }
}

fn compare(a: Wide, b: Wide) -> Ordering {
    match (a.negative, b.negative) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => (a.high, a.low).cmp(&(b.high, b.low)),
        (true, true) => (b.high, b.low).cmp(&(a.high, a.low)),
    }
}

type Point = (i128, i128);

/// The side of line p→q that r lies on: `Greater` left, `Less` right, `Equal` on the line.
/// Exact: coordinates are at most 1.8 × 10³² in magnitude, so differences fit in `i128` and
/// their products in 256 bits.
pub(crate) fn orientation(p: Point, q: Point, r: Point) -> Ordering {
    #[cfg(test)]
    tests::ORIENTATIONS.with(|n| n.set(n.get().saturating_add(1)));
    // Coordinates are range-checked to at most 1.8 × 10³² in magnitude: no difference saturates.
    compare(
        product(q.0.saturating_sub(p.0), r.1.saturating_sub(p.1)),
        product(q.1.saturating_sub(p.1), r.0.saturating_sub(p.0)),
    )
}

/// Whether r, known to lie on line p→q, lies within the segment's bounding box.
fn within(p: Point, q: Point, r: Point) -> bool {
    r.0 >= p.0.min(q.0) && r.0 <= p.0.max(q.0) && r.1 >= p.1.min(q.1) && r.1 <= p.1.max(q.1)
}

/// Whether the closed segments a–b and c–d share any point.
pub(crate) fn segments_meet(a: Point, b: Point, c: Point, d: Point) -> bool {
    let (o1, o2) = (orientation(a, b, c), orientation(a, b, d));
    let (o3, o4) = (orientation(c, d, a), orientation(c, d, b));
    if o1 != o2
        && o3 != o4
        && o1 != Ordering::Equal
        && o2 != Ordering::Equal
        && o3 != Ordering::Equal
        && o4 != Ordering::Equal
    {
        return true;
    }
    (o1 == Ordering::Equal && within(a, b, c))
        || (o2 == Ordering::Equal && within(a, b, d))
        || (o3 == Ordering::Equal && within(c, d, a))
        || (o4 == Ordering::Equal && within(c, d, b))
}

/// Whether segments `i < j` of a closed ring of `n` segments meet anywhere but at the vertex
/// joining neighbours.
fn pair_meets(segments: &[(Point, Point)], i: usize, j: usize) -> bool {
    let n = segments.len();
    let (Some(&(a, b)), Some(&(c, d))) = (segments.get(i), segments.get(j)) else {
        return false;
    };
    let next = i.checked_add(1) == Some(j);
    if next || (i == 0 && j.checked_add(1) == Some(n)) {
        // Neighbours share one vertex; they only cross by doubling back along each other.
        let (shared, far_a, far_b) = if next { (b, a, d) } else { (a, b, c) };
        return orientation(far_a, shared, far_b) == Ordering::Equal
            && (within(far_a, shared, far_b) || within(shared, far_b, far_a));
    }
    segments_meet(a, b, c, d)
}

/// The segments of a closed ring, repeated consecutive positions taken as one vertex.
fn segments(ring: &[Position]) -> Vec<(Point, Point)> {
    let mut vertices: Vec<Point> = Vec::with_capacity(ring.len());
    for p in ring {
        if vertices.last() != Some(&p.xy()) {
            vertices.push(p.xy());
        }
    }
    vertices
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => Some((*a, *b)),
            _ => None,
        })
        .collect()
}

/// Two segments of a closed ring that meet anywhere but at the vertex joining neighbours, if
/// any. A ring whose distinct vertices are fewer than three encloses nothing and counts as
/// crossing itself (segments 0 and 0).
///
/// Shamos–Hoey: a sweep over the vertices in (longitude, latitude) order keeps the segments it
/// is inside ordered from south to north, and tests a segment only against its neighbours in
/// that order when it enters or when the segment between two of them leaves. Before the sweep
/// passes the first place where two segments meet, those two are neighbours at some step and
/// are tested then (exactly, over their whole length), so the first meeting is always found:
/// O(n log n) orientation tests for a ring of n segments, never every pair.
fn crossing(ring: &[Position]) -> Option<(usize, usize)> {
    let segments = segments(ring);
    if segments.len() < 3 {
        return Some((0, 0));
    }
    sweep(&segments)
}

/// A segment in the sweep, its ends in (longitude, latitude) order.
#[derive(Debug, Clone, Copy)]
struct Active {
    west: Point,
    east: Point,
    index: usize,
}

impl Active {
    fn new(segments: &[(Point, Point)], index: usize) -> Option<Self> {
        let &(a, b) = segments.get(index)?;
        let (west, east) = if a <= b { (a, b) } else { (b, a) };
        Some(Self { west, east, index })
    }

    /// Where `self` lies against `other` (north is `Greater`), both inside the sweep at the
    /// later of their west ends. The order depends on the pair alone, not on where the sweep
    /// is: while no two segments meet, it is the south-to-north order everywhere both are.
    fn against(&self, other: &Self) -> Ordering {
        if self.west < other.west {
            return other.against(self).reverse();
        }
        // `self` enters at or after `other`: which side of `other` its west end lies on, then
        // (starting on `other`'s line) which side its east end lies on.
        let side = orientation(other.west, other.east, self.west)
            .then_with(|| orientation(other.west, other.east, self.east));
        side.then_with(|| self.index.cmp(&other.index))
    }
}

impl PartialEq for Active {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl Eq for Active {}

impl PartialOrd for Active {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Active {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.index == other.index {
            Ordering::Equal
        } else {
            self.against(other)
        }
    }
}

/// The sweep of [`crossing`] over at least three segments.
fn sweep(segments: &[(Point, Point)]) -> Option<(usize, usize)> {
    let n = segments.len();
    // Each segment enters (0) at its west end and leaves (1) at its east end.
    let mut events: Vec<(Point, u8, usize)> = Vec::with_capacity(n.saturating_mul(2));
    for index in 0..n {
        let segment = Active::new(segments, index)?;
        events.push((segment.west, 0, index));
        events.push((segment.east, 1, index));
    }
    events.sort_unstable();
    let meets = |i: usize, j: usize| {
        let (low, high) = (i.min(j), i.max(j));
        pair_meets(segments, low, high).then_some((low, high))
    };
    // A vertex the ring passes twice is the end of more than two segments there: two of any
    // three such segments are not neighbours in the ring, and meet.
    for group in events.chunk_by(|a, b| a.0 == b.0) {
        if let [(_, _, a), (_, _, b), (_, _, c), ..] = group {
            let found = meets(*a, *b)
                .or_else(|| meets(*a, *c))
                .or_else(|| meets(*b, *c));
            if found.is_some() {
                return found;
            }
        }
    }
    let mut active: BTreeSet<Active> = BTreeSet::new();
    for &(_, leaves, index) in &events {
        let segment = Active::new(segments, index)?;
        let below = active.range(..segment).next_back().copied();
        let above = active
            .range((Bound::Excluded(segment), Bound::Unbounded))
            .next()
            .copied();
        if leaves == 0 {
            for neighbour in [below, above].into_iter().flatten() {
                if let Some(found) = meets(index, neighbour.index) {
                    return Some(found);
                }
            }
            active.insert(segment);
        } else {
            active.remove(&segment);
            if let (Some(below), Some(above)) = (below, above)
                && let Some(found) = meets(below.index, above.index)
            {
                return Some(found);
            }
        }
    }
    None
}

/// RFC 7946 §3.1.6 winding, the rule for everything Roastery writes (exterior rings
/// counterclockwise, holes clockwise), decided exactly on the positions' scaled values.
///
/// Whether a closed ring turns counterclockwise (`Greater`), clockwise (`Less`), or cannot be
/// told (`Equal`: fewer than three distinct positions). Exact: the turn at the ring's
/// lowest-leftmost position, a convex corner of any simple ring.
pub fn winding(ring: &[Position]) -> Ordering {
    winding_by(ring, |p| (p.longitude.scaled(), p.latitude.scaled()))
}

/// [`winding`] of a ring whose positions `xy` gives as scaled `(longitude, latitude)`.
fn winding_by<T>(ring: &[T], xy: impl Fn(&T) -> (i128, i128)) -> Ordering {
    let open = match ring.split_last() {
        Some((_, open)) if open.len() >= 3 => open,
        _ => return Ordering::Equal,
    };
    let Some((m, corner)) = open
        .iter()
        .map(&xy)
        .enumerate()
        .min_by(|a, b| a.1.cmp(&b.1))
    else {
        return Ordering::Equal;
    };
    let n = open.len();
    let distinct = |step: &dyn Fn(usize) -> usize| {
        let mut i = m;
        for _ in 0..n {
            i = step(i);
            let p = open.get(i).map(&xy)?;
            if p != corner {
                return Some(p);
            }
        }
        None
    };
    let before = distinct(&|i| i.checked_sub(1).unwrap_or(n.saturating_sub(1)));
    let after = distinct(&|i| {
        let next = i.saturating_add(1);
        if next >= n { 0 } else { next }
    });
    match (before, after) {
        (Some(p), Some(r)) => orientation(p, corner, r),
        _ => Ordering::Equal,
    }
}

/// Whether RFC 7946 wants the ring written with its positions reversed: an exterior ring
/// wound clockwise, or a hole wound counterclockwise.
pub fn needs_reversal(ring: &[Position], exterior: bool) -> bool {
    reversal(winding(ring), exterior)
}

/// [`needs_reversal`] of a ring given as each position's scaled `(longitude, latitude)`.
pub(crate) fn needs_reversal_xy(ring: &[(i128, i128)], exterior: bool) -> bool {
    reversal(winding_by(ring, |p| *p), exterior)
}

fn reversal(winding: Ordering, exterior: bool) -> bool {
    match winding {
        Ordering::Greater => !exterior,
        Ordering::Less => exterior,
        Ordering::Equal => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::Cell;

    thread_local! {
        /// Orientation tests made on this thread: the work of a self-crossing check.
        pub(super) static ORIENTATIONS: Cell<u64> = const { Cell::new(0) };
    }

    fn vertex(x: i64, y: i64) -> Position {
        Position {
            longitude: Coordinate {
                text: format!("{x}e-3"),
                scaled: i128::from(x) * SCALE / 1000,
            },
            latitude: Coordinate {
                text: format!("{y}e-3"),
                scaled: i128::from(y) * SCALE / 1000,
            },
            altitude: None,
        }
    }

    /// Orientation tests `crossing` makes for this ring.
    fn work(ring: &[Position]) -> (Option<(usize, usize)>, u64) {
        ORIENTATIONS.with(|n| n.set(0));
        let found = crossing(ring);
        (found, ORIENTATIONS.with(Cell::get))
    }

    /// A simple ring of `n` zigzag vertices along x, closed under them.
    fn zigzag(n: i64, amplitude: i64) -> Vec<Position> {
        let mut ring: Vec<Position> = (0..n).map(|i| vertex(i, (i % 2) * amplitude)).collect();
        ring.push(vertex(n - 1, -amplitude));
        ring.push(vertex(0, -amplitude));
        ring.push(vertex(0, 0));
        ring
    }

    /// A simple ring of `n` vertices alternating between x = 0 and x = 100 while climbing:
    /// every segment spans the whole width, so all of them are in the sweep at once.
    fn comb(n: i64) -> Vec<Position> {
        let mut ring: Vec<Position> = (0..n).map(|i| vertex((i % 2) * 100_000, i)).collect();
        ring.push(vertex(-1, n - 1));
        ring.push(vertex(-1, 0));
        ring.push(vertex(0, 0));
        ring
    }

    fn ring_json(ring: &[Position]) -> String {
        let positions: Vec<String> = ring
            .iter()
            .map(|p| format!("[{},{}]", p.longitude.text, p.latitude.text))
            .collect();
        format!("[{}]", positions.join(","))
    }

    #[test]
    fn a_long_zigzag_costs_n_log_n_orientation_tests_not_n_squared() {
        for ring in [zigzag(50_000, 1), zigzag(50_000, 1_000_000), comb(50_000)] {
            let n = ring.len() as u64;
            let (found, tests) = work(&ring);
            assert_eq!(found, None);
            let log = u64::from(n.ilog2()) + 1;
            // Checking every pair would make n²/2 ≈ 1.25 × 10⁹ of them.
            assert!(tests <= 40 * n * log, "{tests} tests for {n} segments");
        }
    }

    #[test]
    fn a_ring_over_the_limit_is_refused_naming_the_limit() {
        let n = MAX_RING_POSITIONS as i64;
        let e = Plots::parse(&polygon_json(&ring_json(&zigzag(n, 1))), "plots").unwrap_err();
        assert_eq!(
            e.field.to_string(),
            "plots.features[0].geometry.coordinates"
        );
        assert!(e.problem.contains(&MAX_RING_POSITIONS.to_string()), "{e}");
        let fits = zigzag(n - 3, 1);
        assert_eq!(fits.len(), MAX_RING_POSITIONS);
        assert!(Plots::parse(&polygon_json(&ring_json(&fits)), "plots").is_ok());
    }

    #[test]
    fn numbers_no_decoder_takes_and_lone_surrogates_are_refused() {
        let with_altitude = |alt: &str| {
            format!(
                r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Point","coordinates":[38.5,6.25,{alt}]}},"properties":{{"Area":1}}}}]}}"#
            )
        };
        assert!(Plots::parse(&with_altitude("1850.5"), "plots").is_ok());
        assert!(Plots::parse(&with_altitude("1e300"), "plots").is_ok());
        for bad in ["1e999999".to_owned(), "9".repeat(5_000), "1e309".to_owned()] {
            let e = Plots::parse(&with_altitude(&bad), "plots").unwrap_err();
            assert_eq!(
                e.field.to_string(),
                "plots.features[0].geometry.coordinates",
                "{bad}"
            );
        }
        let with_property = |value: &str| {
            format!(
                r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Point","coordinates":[38.5,6.25]}},"properties":{{"Area":1,"ProducerName":{value}}}}}]}}"#
            )
        };
        for good in [
            r#""Finca \ud83d\ude00""#,
            r#""\u00e9\"\\ud800""#,
            r#"[1.5e10, {"a": -2}]"#,
        ] {
            assert!(
                Plots::parse(&with_property(good), "plots").is_ok(),
                "{good}"
            );
        }
        for bad in [
            r#""\ud800""#,
            r#""x\udc00y""#,
            r#""\ud800\u0041""#,
            r#"{"a": 1e999999}"#,
        ] {
            let e = Plots::parse(&with_property(bad), "plots").unwrap_err();
            assert_eq!(
                e.field.to_string(),
                "plots.features[0].properties.ProducerName",
                "{bad}"
            );
        }
    }

    #[test]
    fn stored_plots_are_read_back_without_today_s_rules() {
        // A bow tie, and a point with a latitude of 100 and no area: both refused as input.
        let stored = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]},"properties":{}},{"type":"Feature","geometry":{"type":"Point","coordinates":[1,100,7]},"properties":null}]}"#;
        assert!(Plots::parse(stored, "plots").is_err());
        let plots = Plots::from_stored(stored).unwrap();
        assert_eq!(plots.features.len(), 2);
        assert!(plots.to_json().contains("[1,100,7]"));
        assert!(Plots::from_stored(r#"{"features":[{"geometry":{"type":"Point"}}]}"#).is_err());
    }

    fn square() -> &'static str {
        r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-75.1,4.1],[-75.0,4.1],[-75.0,4.2],[-75.1,4.2],[-75.1,4.1]]]},"properties":{"ProducerName":"Finca A"}}]}"#
    }

    fn polygon_json(ring: &str) -> String {
        format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Polygon","coordinates":[{ring}]}},"properties":{{}}}}]}}"#
        )
    }

    fn point_json(area: &str) -> String {
        format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Point","coordinates":[38.5,6.25]}},"properties":{{"Area":{area}}}}}]}}"#
        )
    }

    fn scaled(s: &str) -> i128 {
        parse_scaled(s).unwrap()
    }

    #[test]
    fn numbers_keep_their_exact_value() {
        assert_eq!(scaled("1.5"), 15 * 10_i128.pow(29));
        assert_eq!(scaled("-0.000000000000000000000000000001"), -1);
        assert_eq!(scaled("15e-1"), scaled("1.5"));
        assert_eq!(
            scaled("1.50000000000000000000000000000000000"),
            scaled("1.5")
        );
        assert_eq!(scaled("0"), 0);
        assert_eq!(scaled("-0.0"), 0);
        assert_eq!(
            parse_scaled("0.0000000000000000000000000000001"),
            Err(NumberError::TooPrecise)
        );
        assert_eq!(parse_scaled("1e400"), Err(NumberError::TooLarge));
        assert_eq!(
            parse_scaled("1e-9999999999999"),
            Err(NumberError::TooPrecise)
        );
        assert_eq!(parse_scaled("\"1\""), Err(NumberError::NotANumber));
    }

    #[test]
    fn a_square_plot_is_answered_with_its_digits() {
        let plots = Plots::parse(square(), "plots").unwrap();
        assert_eq!(plots.features.len(), 1);
        let json = plots.to_json();
        assert!(json.contains("[-75.0,4.1]"), "{json}");
        assert!(json.contains(r#""ProducerName":"Finca A""#), "{json}");
        let again = Plots::parse(&json, "plots").unwrap();
        assert_eq!(again, plots);
    }

    #[test]
    fn a_bow_tie_ring_crosses_itself() {
        let e =
            Plots::parse(&polygon_json("[[0,0],[1,1],[1,0],[0,1],[0,0]]"), "plots").unwrap_err();
        assert_eq!(
            e.field.to_string(),
            "plots.features[0].geometry.coordinates"
        );
        assert!(e.problem.contains("crosses itself"), "{e}");
    }

    #[test]
    fn an_open_ring_is_refused() {
        let e = Plots::parse(&polygon_json("[[0,0],[1,0],[1,1],[0,1]]"), "plots").unwrap_err();
        assert!(e.problem.contains("not closed"), "{e}");
        let e = Plots::parse(&polygon_json("[[0,0],[1,0],[0,0]]"), "plots").unwrap_err();
        assert!(e.problem.contains("at least 4"), "{e}");
    }

    #[test]
    fn a_ring_touching_itself_at_a_vertex_crosses_itself() {
        // A figure eight through (1,1).
        let ring = "[[0,0],[1,1],[2,0],[2,2],[1,1],[0,2],[0,0]]";
        assert!(Plots::parse(&polygon_json(ring), "plots").is_err());
    }

    #[test]
    fn a_ring_doubling_back_crosses_itself() {
        let ring = "[[0,0],[2,0],[1,0],[1,1],[0,0]]";
        assert!(Plots::parse(&polygon_json(ring), "plots").is_err());
    }

    #[test]
    fn a_point_needs_an_area_of_at_most_four_hectares() {
        assert!(Plots::parse(&point_json("4"), "plots").is_ok());
        assert!(Plots::parse(&point_json("0.25"), "plots").is_ok());
        for area in ["5", "4.000000000000000000000000000001", "0", "-1", "\"2\""] {
            let e = Plots::parse(&point_json(area), "plots").unwrap_err();
            assert_eq!(
                e.field.to_string(),
                "plots.features[0].properties.Area",
                "{area}"
            );
        }
    }

    #[test]
    fn coordinates_out_of_range_name_the_field() {
        let json = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[6.25,180.5]},"properties":{"Area":1}}]}"#;
        let e = Plots::parse(json, "plots").unwrap_err();
        assert_eq!(
            e.field.to_string(),
            "plots.features[0].geometry.coordinates"
        );
        assert!(e.problem.contains("latitude"), "{e}");
    }

    #[test]
    fn other_geometries_and_shapes_are_refused() {
        let line = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{}}]}"#;
        let e = Plots::parse(line, "plots").unwrap_err();
        assert_eq!(e.field.to_string(), "plots.features[0].geometry.type");
        let empty = r#"{"type":"FeatureCollection","features":[]}"#;
        assert_eq!(
            Plots::parse(empty, "plots").unwrap_err().field.to_string(),
            "plots.features"
        );
        assert_eq!(
            Plots::parse("[]", "plots").unwrap_err().field.to_string(),
            "plots"
        );
    }

    /// The orientation of three points with small integer coordinates, computed plainly.
    fn naive_orientation(p: (i64, i64), q: (i64, i64), r: (i64, i64)) -> Ordering {
        ((q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0)).cmp(&0)
    }

    fn big(p: (i64, i64)) -> Point {
        (
            i128::from(p.0) * SCALE / 1000,
            i128::from(p.1) * SCALE / 1000,
        )
    }

    proptest! {
        #[test]
        fn wide_products_compare_like_exact_ones(a in any::<i64>(), b in any::<i64>(), c in any::<i64>(), d in any::<i64>()) {
            let exact = (i128::from(a) * i128::from(b)).cmp(&(i128::from(c) * i128::from(d)));
            let wide = compare(product(i128::from(a), i128::from(b)), product(i128::from(c), i128::from(d)));
            prop_assert_eq!(wide, exact);
        }

        #[test]
        fn orientation_at_full_scale_agrees_with_small_integers(
            p in (-180_000i64..180_000, -90_000i64..90_000),
            q in (-180_000i64..180_000, -90_000i64..90_000),
            r in (-180_000i64..180_000, -90_000i64..90_000),
        ) {
            prop_assert_eq!(orientation(big(p), big(q), big(r)), naive_orientation(p, q, r));
        }

        #[test]
        fn a_convex_ring_never_crosses_itself(n in 3i64..20, step in 1i64..50) {
            // Vertices on the convex arc y = x², closed back to the first: a simple polygon.
            let milli = |v: i64| format!("{}.{:03}", v / 1000, v % 1000);
            let mut positions: Vec<String> = (0..n)
                .map(|i| format!("[{},{}]", milli(i * step), milli(i * i * step)))
                .collect();
            positions.push("[0.000,0.000]".to_owned());
            let json = polygon_json(&format!("[{}]", positions.join(",")));
            let parsed = Plots::parse(&json, "plots");
            prop_assert!(parsed.is_ok(), "{:?} {}", parsed, json);
        }

        #[test]
        fn swapping_two_vertices_of_a_square_makes_a_bow_tie(x in -170i64..170, y in -80i64..80, side in 1i64..9) {
            let (x1, y1) = (x + side, y + side);
            let bow_tie = format!("[[{x},{y}],[{x1},{y1}],[{x1},{y}],[{x},{y1}],[{x},{y}]]");
            let square = format!("[[{x},{y}],[{x1},{y}],[{x1},{y1}],[{x},{y1}],[{x},{y}]]");
            prop_assert!(Plots::parse(&polygon_json(&bow_tie), "plots").is_err());
            prop_assert!(Plots::parse(&polygon_json(&square), "plots").is_ok());
        }

        #[test]
        fn the_sweep_finds_a_crossing_exactly_when_some_pair_meets(
            vertices in proptest::collection::vec((-6i64..6, -6i64..6), 3..9),
        ) {
            let mut ring: Vec<Position> = vertices
                .iter()
                .map(|&(x, y)| Position {
                    longitude: Coordinate { text: x.to_string(), scaled: i128::from(x) * SCALE },
                    latitude: Coordinate { text: y.to_string(), scaled: i128::from(y) * SCALE },
                    altitude: None,
                })
                .collect();
            ring.push(ring[0].clone());
            let segs = segments(&ring);
            let every_pair = segs.len() < 3
                || (0..segs.len()).any(|i| (i + 1..segs.len()).any(|j| pair_meets(&segs, i, j)));
            prop_assert_eq!(crossing(&ring).is_some(), every_pair);
        }

        #[test]
        fn the_sweep_agrees_with_every_pair_on_dense_rings(
            vertices in proptest::collection::vec((-3i64..3, -3i64..3), 3..30),
        ) {
            let mut ring: Vec<Position> = vertices.iter().map(|&(x, y)| vertex(x, y)).collect();
            ring.push(ring[0].clone());
            let segs = segments(&ring);
            let every_pair = segs.len() < 3
                || (0..segs.len()).any(|i| (i + 1..segs.len()).any(|j| pair_meets(&segs, i, j)));
            prop_assert_eq!(crossing(&ring).is_some(), every_pair);
        }

        #[test]
        fn the_sweep_accepts_simple_rings_as_every_pair_does(
            upper in proptest::collection::btree_map(-99i64..99, 1i64..20, 1..40),
            lower in proptest::collection::btree_map(-99i64..99, -20i64..0, 1..40),
        ) {
            // An x-monotone polygon: the west end, the upper chain east, the east end, the lower
            // chain back west. Simple, with many vertical and collinear coincidences.
            let mut ring = vec![vertex(-100, 0)];
            ring.extend(upper.iter().map(|(&x, &y)| vertex(x, y)));
            ring.push(vertex(100, 0));
            ring.extend(lower.iter().rev().map(|(&x, &y)| vertex(x, y)));
            ring.push(vertex(-100, 0));
            let segs = segments(&ring);
            let every_pair = (0..segs.len()).any(|i| (i + 1..segs.len()).any(|j| pair_meets(&segs, i, j)));
            prop_assert!(!every_pair);
            prop_assert_eq!(crossing(&ring), None);
        }

        #[test]
        fn segments_meet_is_symmetric(
            a in (-50i64..50, -50i64..50), b in (-50i64..50, -50i64..50),
            c in (-50i64..50, -50i64..50), d in (-50i64..50, -50i64..50),
        ) {
            let (a, b, c, d) = (big(a), big(b), big(c), big(d));
            prop_assert_eq!(segments_meet(a, b, c, d), segments_meet(c, d, a, b));
            prop_assert_eq!(segments_meet(a, b, c, d), segments_meet(b, a, d, c));
        }

        #[test]
        fn coordinates_are_answered_with_their_digits(
            lon in -179_999_999i64..179_999_999, lat in -89_999_999i64..89_999_999, zeros in 0usize..4,
        ) {
            let text = |v: i64| format!("{}{}.{:06}{}", if v < 0 { "-" } else { "" }, v.abs() / 1_000_000, v.abs() % 1_000_000, "0".repeat(zeros));
            let json = format!(
                r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":{{"type":"Point","coordinates":[{},{}]}},"properties":{{"Area":1}}}}]}}"#,
                text(lon), text(lat)
            );
            let plots = Plots::parse(&json, "plots").unwrap();
            let expected = format!("[{},{}]", text(lon), text(lat));
            prop_assert!(plots.to_json().contains(&expected));
        }
    }
}
