//! The values every operation reads or writes: exact decimal numbers, instants, weights and
//! prices, required fields, raw JSON objects and the field a domain rule refuses.
//!
//! Amounts never pass through floating point: a JSON number is read from its own text into a
//! decimal and written back as text.

use std::str::FromStr;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use roastery_domain::price::{Currency, Price, PriceError};
use roastery_domain::weight::{Weight, WeightUnit};
use rust_decimal::Decimal;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, SchemaType, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use roastery_ports::Rejection;

use crate::error::ApiError;

/// An exact decimal carried as a JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amount(pub Decimal);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        let text = raw.get();
        if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            return Err(D::Error::custom(format!(
                "invalid type: {text}, expected a number"
            )));
        }
        Decimal::from_str_exact(text)
            .or_else(|_| Decimal::from_scientific(text))
            .or_else(|_| Decimal::from_str(text))
            .map(Amount)
            .map_err(|_| D::Error::custom(format!("{text} is not a decimal number in range")))
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.0.normalize().to_string())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl PartialSchema for Amount {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Number))
            .description(Some("exact decimal number, at most 6 decimal places kept"))
            .into()
    }
}

impl ToSchema for Amount {}

impl From<Decimal> for Amount {
    fn from(d: Decimal) -> Self {
        Self(d)
    }
}

/// An instant: RFC 3339 with any offset on input, UTC with second precision on output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant(pub DateTime<Utc>);

impl<'de> Deserialize<'de> for Instant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let at = DateTime::parse_from_rfc3339(&text)
            .map_err(|e| {
                D::Error::custom(format!(
                    "`{text}` is not an RFC 3339 date-time (e.g. 2026-01-01T01:11:00Z): {e}"
                ))
            })?
            .with_timezone(&Utc);
        Ok(Instant(
            at.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(at),
        ))
    }
}

impl Serialize for Instant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match utc_seconds(&self.0) {
            Some(text) => serializer.serialize_str(text.as_str()),
            // Years chrono writes with a sign (before 0 or after 9999).
            None => serializer.collect_str(&self.0.format("%Y-%m-%dT%H:%M:%SZ")),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` written digit by digit: what `format("%Y-%m-%dT%H:%M:%SZ")` writes
/// for years 0 to 9999, without interpreting a format string for every instant of a page.
fn utc_seconds(at: &DateTime<Utc>) -> Option<Rfc3339Seconds> {
    use chrono::{Datelike, Timelike};
    let year = u32::try_from(at.year()).ok().filter(|y| *y <= 9999)?;
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, value: u32, width: usize| {
        let mut value = value;
        for digit in out.iter_mut().skip(at).take(width).rev() {
            *digit = b"0123456789"
                .get((value % 10) as usize)
                .copied()
                .unwrap_or(b'0');
            value /= 10;
        }
    };
    put(0, year, 4);
    put(5, at.month(), 2);
    put(8, at.day(), 2);
    put(11, at.hour(), 2);
    put(14, at.minute(), 2);
    // A leap second (nanosecond >= 1e9) is written as second 60, as chrono's `%S` writes it.
    put(
        17,
        at.second() + u32::from(at.nanosecond() >= 1_000_000_000),
        2,
    );
    Some(Rfc3339Seconds(out))
}

struct Rfc3339Seconds([u8; 20]);

impl Rfc3339Seconds {
    fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl PartialSchema for Instant {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .examples(["2026-01-01T01:11:00Z"])
            .into()
    }
}

impl ToSchema for Instant {}

impl From<DateTime<Utc>> for Instant {
    fn from(at: DateTime<Utc>) -> Self {
        Self(at)
    }
}

/// A weight on the wire: `{"amount": 60.5, "unit": "KG"}`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
pub struct WeightDto {
    #[schema(value_type = Amount, required = true)]
    pub amount: Option<Amount>,
    /// `KG` or `LBS`.
    #[schema(value_type = String, required = true)]
    pub unit: Option<String>,
}

impl WeightDto {
    /// Checks the shape and builds a non-negative weight; `field` names it in messages.
    pub fn parse(&self, field: &str) -> Result<Weight, ApiError> {
        let amount = self
            .amount
            .ok_or_else(|| ApiError::missing_parameter(&format!("{field}.amount")))?;
        let unit = self
            .unit
            .as_deref()
            .ok_or_else(|| ApiError::missing_parameter(&format!("{field}.unit")))?;
        let unit = WeightUnit::parse(unit).map_err(|e| rule(field, e))?;
        Weight::new(amount.0, unit).map_err(|e| rule(field, e))
    }
}

impl WeightDto {
    /// A planning or cost figure in kilograms, rounded half-even to grams (api-decisions §15).
    pub fn kg(amount: Decimal) -> Self {
        Self {
            amount: Some(Amount(roastery_domain::planning::kg3(amount))),
            unit: Some(WeightUnit::Kg.as_str().to_owned()),
        }
    }
}

impl From<Weight> for WeightDto {
    fn from(w: Weight) -> Self {
        Self {
            amount: Some(Amount(w.amount())),
            unit: Some(w.unit().as_str().to_owned()),
        }
    }
}

/// A price on the wire: `{"amount": 5.2, "currency": "EUR"}`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
pub struct PriceDto {
    #[schema(value_type = Amount, required = true)]
    pub amount: Option<Amount>,
    /// ISO 4217 code.
    #[schema(value_type = String, required = true)]
    pub currency: Option<String>,
}

impl PriceDto {
    pub fn parse(&self, field: &str) -> Result<Price, ApiError> {
        let amount = self
            .amount
            .ok_or_else(|| ApiError::missing_parameter(&format!("{field}.amount")))?;
        let currency = self
            .currency
            .as_deref()
            .ok_or_else(|| ApiError::missing_parameter(&format!("{field}.currency")))?;
        let currency = Currency::parse(currency).map_err(|e| rule(field, e))?;
        Price::new(amount.0, currency).map_err(|e: PriceError| rule(field, e))
    }
}

impl From<Price> for PriceDto {
    fn from(p: Price) -> Self {
        Self {
            amount: Some(Amount(p.amount())),
            currency: Some(p.currency().code().to_owned()),
        }
    }
}

/// A value of `field` the domain refuses (an unknown unit or enum name, a negative weight),
/// answered with the rule's category and the field it concerns.
pub fn rule(field: &str, err: impl roastery_domain::BrokenRule) -> ApiError {
    ApiError::rejected(Rejection::new(err), Some(field))
}

/// A JSON object kept as sent (e.g. GeoJSON, checked by the domain): anything else is a
/// wrong type, as for every object of a request.
pub fn raw_object<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Box<RawValue>>, D::Error> {
    let raw: Option<Box<RawValue>> = Option::deserialize(deserializer)?;
    match raw {
        Some(raw) if !raw.get().starts_with('{') => {
            let found = match raw.get().as_bytes().first() {
                Some(b'[') => "array",
                Some(b'"') => "string",
                Some(b't' | b'f') => "boolean",
                _ => "number",
            };
            Err(D::Error::custom(format!(
                "invalid type: {found}, expected an object"
            )))
        }
        raw => Ok(raw),
    }
}

/// A required field of a request.
pub fn required<T>(value: Option<T>, field: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::missing_parameter(field))
}

/// `{"name": "..."}`
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
pub struct NameRef {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_and_write_their_exact_text() {
        let w: WeightDto = serde_json::from_str(r#"{"amount": 0.1000005, "unit": "KG"}"#).unwrap();
        assert_eq!(w.amount.unwrap().0.to_string(), "0.1000005");
        let weight = w.parse("weight").unwrap();
        assert_eq!(weight.amount().to_string(), "0.1");
        let out = serde_json::to_string(&WeightDto::from(weight)).unwrap();
        assert_eq!(out, r#"{"amount":0.1,"unit":"KG"}"#);
    }

    #[test]
    fn amounts_survive_the_path_tracking_decoder() {
        let body = br#"{"amount": 12345678901.123456, "unit": "LBS"}"#;
        let de = &mut serde_json::Deserializer::from_slice(body);
        let w: WeightDto = serde_path_to_error::deserialize(de).unwrap();
        assert_eq!(w.amount.unwrap().0.to_string(), "12345678901.123456");
    }

    #[test]
    fn strings_are_not_amounts() {
        assert!(serde_json::from_str::<WeightDto>(r#"{"amount": "1", "unit": "KG"}"#).is_err());
        assert!(serde_json::from_str::<Amount>("1e2").is_ok());
    }

    #[test]
    fn bad_units_and_currencies_have_their_own_codes() {
        let w: WeightDto = serde_json::from_str(r#"{"amount": 1, "unit": "G"}"#).unwrap();
        assert_eq!(w.parse("weight").unwrap_err().code, "unsupported_unit");
        let w: WeightDto = serde_json::from_str(r#"{"amount": -1, "unit": "KG"}"#).unwrap();
        assert_eq!(w.parse("weight").unwrap_err().code, "invalid_weight");
        let p: PriceDto = serde_json::from_str(r#"{"amount": 1, "currency": "XXY"}"#).unwrap();
        assert_eq!(p.parse("price").unwrap_err().code, "unsupported_currency");
        let p: PriceDto = serde_json::from_str(r#"{"amount": -1, "currency": "EUR"}"#).unwrap();
        assert_eq!(p.parse("price").unwrap_err().code, "invalid_price");
    }

    #[test]
    fn instants_print_exactly_what_the_strftime_format_prints() {
        let samples = [
            "0000-01-01T00:00:00Z",
            "0001-02-03T04:05:06.999999Z",
            "0999-12-31T23:59:59Z",
            "1970-01-01T00:00:00Z",
            "2026-11-23T09:05:07.123456Z",
            "2028-02-29T12:00:00Z",
            "9999-12-31T23:59:59.999999Z",
        ];
        for text in samples {
            let at = DateTime::parse_from_rfc3339(text).unwrap().to_utc();
            assert_eq!(
                serde_json::to_string(&Instant(at)).unwrap(),
                format!("\"{}\"", at.format("%Y-%m-%dT%H:%M:%SZ")),
                "{text}"
            );
        }
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 1_500))
            .unwrap()
            .and_utc();
        let far = [
            leap,
            chrono::NaiveDate::from_ymd_opt(10_000, 1, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .unwrap()
                .and_utc(),
            chrono::NaiveDate::from_ymd_opt(-1, 6, 15)
                .and_then(|d| d.and_hms_opt(1, 2, 3))
                .unwrap()
                .and_utc(),
        ];
        for at in far {
            assert_eq!(
                serde_json::to_string(&Instant(at)).unwrap(),
                format!("\"{}\"", at.format("%Y-%m-%dT%H:%M:%SZ"))
            );
        }
    }

    #[test]
    fn instants_accept_offsets_and_print_utc_seconds() {
        let at: Instant = serde_json::from_str(r#""2026-01-01T02:11:00.5+01:00""#).unwrap();
        assert_eq!(
            serde_json::to_string(&at).unwrap(),
            r#""2026-01-01T01:11:00Z""#
        );
        assert!(serde_json::from_str::<Instant>(r#""2026-01-01""#).is_err());
    }
}
