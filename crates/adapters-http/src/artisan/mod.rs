//! Artisan roast logs: the `.alog` file (a Python literal) or Artisan's JSON export, read into
//! the domain's [`RoastLog`]. Only the fields the mapping uses are read; the `computed` block and
//! everything else is ignored. What the fields mean is the domain's (`roast_log`).

pub mod literal;

use std::str::FromStr;

use roastery_domain::roast_log::{LogWeight, RoastLog};
use rust_decimal::Decimal;

use literal::Value;

/// Why a content is not a well-formed Artisan log. The message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("content: {0}")]
pub struct LogError(String);

fn invalid(field: &str, problem: impl std::fmt::Display) -> LogError {
    LogError(format!("`{field}` {problem}"))
}

/// Reads a roast log from the text of an `.alog` file or of Artisan's JSON export.
pub fn read_log(content: &str) -> Result<RoastLog, LogError> {
    let value = literal::parse(content).map_err(|e| {
        LogError(format!(
            "not an Artisan log (a Python literal or JSON object): {e}"
        ))
    })?;
    if !matches!(value, Value::Dict(_)) {
        return Err(LogError(format!(
            "not an Artisan log: expected a dict, found {}",
            value.kind()
        )));
    }
    let items = match required(&value, "weight")? {
        Value::List(items) => items.as_slice(),
        _ => &[],
    };
    let weight = match items {
        [green, roasted, unit, ..] => LogWeight {
            green: number(green, "weight[0]")?,
            roasted: number(roasted, "weight[1]")?,
            unit: match unit {
                Value::Str(unit) => unit.clone(),
                other => return Err(invalid("weight[2]", format!("is {}", other.kind()))),
            },
        },
        _ => return Err(invalid("weight", "must be a list [in, out, unit]")),
    };
    Ok(RoastLog {
        title: text(&value, "title")?,
        roast_uuid: match required(&value, "roastUUID")? {
            Value::Str(uuid) => clean("roastUUID", uuid)?,
            other => return Err(invalid("roastUUID", format!("is {}", other.kind()))),
        },
        roast_epoch: number(required(&value, "roastepoch")?, "roastepoch")?,
        timex: list(&value, "timex")?
            .iter()
            .enumerate()
            .map(|(i, v)| number(v, &format!("timex[{i}]")))
            .collect::<Result<_, _>>()?,
        temp1: samples(&value, "temp1")?,
        temp2: samples(&value, "temp2")?,
        timeindex: match value.get("timeindex") {
            None | Some(Value::None) => vec![],
            Some(_) => list(&value, "timeindex")?
                .iter()
                .enumerate()
                .map(|(i, v)| integer(v, &format!("timeindex[{i}]")))
                .collect::<Result<_, _>>()?,
        },
        weight: Some(weight),
        mode: text(&value, "mode")?,
        operator: text(&value, "operator")?,
        roaster_type: text(&value, "roastertype")?,
        roasting_notes: text(&value, "roastingnotes")?,
        whole_color: optional_number(&value, "whole_color")?,
        ground_color: optional_number(&value, "ground_color")?,
        color_system: text(&value, "color_system")?,
    })
}

fn required<'a>(log: &'a Value, field: &str) -> Result<&'a Value, LogError> {
    match log.get(field) {
        None | Some(Value::None) => Err(invalid(field, "is required in an Artisan log")),
        Some(value) => Ok(value),
    }
}

fn list<'a>(log: &'a Value, field: &str) -> Result<&'a [Value], LogError> {
    match required(log, field)? {
        Value::List(items) => Ok(items),
        other => Err(invalid(
            field,
            format!("must be a list, not {}", other.kind()),
        )),
    }
}

fn text(log: &Value, field: &str) -> Result<Option<String>, LogError> {
    match log.get(field) {
        None | Some(Value::None) => Ok(None),
        Some(Value::Str(s)) => clean(field, s).map(Some),
        Some(other) => Err(invalid(
            field,
            format!("must be a string, not {}", other.kind()),
        )),
    }
}

/// A text of the log under the rule every text of a request follows (no control characters but
/// tab, line feed and carriage return), since escapes in the log can spell any character.
fn clean(field: &str, text: &str) -> Result<String, LogError> {
    match crate::text::refused_in(text) {
        Some(c) => Err(invalid(
            field,
            format!("holds the control character {}", crate::text::describe(c)),
        )),
        None => Ok(text.to_owned()),
    }
}

/// A finite number, exactly as written.
fn decimal(text: &str) -> Option<Decimal> {
    if text.contains(['e', 'E']) {
        Decimal::from_scientific(text).ok()
    } else {
        Decimal::from_str(text.strip_prefix('+').unwrap_or(text)).ok()
    }
}

fn number(value: &Value, field: &str) -> Result<Decimal, LogError> {
    match value {
        Value::Number(text) => {
            decimal(text).ok_or_else(|| invalid(field, format!("is {text}, not a finite number")))
        }
        other => Err(invalid(
            field,
            format!("must be a number, not {}", other.kind()),
        )),
    }
}

fn optional_number(log: &Value, field: &str) -> Result<Option<Decimal>, LogError> {
    match log.get(field) {
        None | Some(Value::None) => Ok(None),
        Some(value) => number(value, field).map(Some),
    }
}

fn integer(value: &Value, field: &str) -> Result<i64, LogError> {
    use rust_decimal::prelude::ToPrimitive;
    let n = number(value, field)?;
    n.fract()
        .is_zero()
        .then(|| n.to_i64())
        .flatten()
        .ok_or_else(|| invalid(field, format!("is {n}, not a whole number")))
}

/// Temperature samples: a number, or `None`/`nan` for a sample that was not read.
fn samples(log: &Value, field: &str) -> Result<Vec<Option<Decimal>>, LogError> {
    list(log, field)?
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::None => Ok(None),
            Value::Number(text) if decimal(text).is_none() && is_non_finite(text) => Ok(None),
            v => number(v, &format!("{field}[{i}]")).map(Some),
        })
        .collect()
}

fn is_non_finite(text: &str) -> bool {
    let word = text.trim_start_matches(['-', '+']).to_ascii_lowercase();
    matches!(word.as_str(), "nan" | "inf" | "infinity")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use roastery_domain::roast_log::LoggedRoast;
    use roastery_domain::violation::{BrokenRule, Violation};

    const ALOG: &str = "{'recording_version': '3.0.2', 'version': '3.0.2', 'title': u'Kenya AA',\
        'roastertype': 'Giesen W6A', 'operator': 'Ana', 'roastingnotes': 'fast \\'first\\' crack',\
        'mode': 'C', 'roastUUID': 'a1b2c3d4e5f60718293a4b5c6d7e8f90', 'roastepoch': 1763900000,\
        'timex': [0.0, 1.0, 2.0], 'temp1': [220.5, -1, 210.0], 'temp2': [200.0, nan, 180.25],\
        'timeindex': [0, 0, 0, 0, 0, 0, 2, 0], 'weight': [1000.0, 850.0, 'g'],\
        'whole_color': 65, 'ground_color': 0, 'color_system': 'Tonino',\
        'computed': {'CHARGE_BT': 999.9}, 'extratimex': [[0.0, 1.0, 2.0]]}";

    #[test]
    fn an_alog_is_read_into_the_fields_that_matter() {
        let log = read_log(ALOG).unwrap();
        assert_eq!(log.title.as_deref(), Some("Kenya AA"));
        assert_eq!(log.roast_uuid, "a1b2c3d4e5f60718293a4b5c6d7e8f90");
        assert_eq!(log.roast_epoch, Decimal::from(1_763_900_000));
        assert_eq!(log.temp1[1], Some(Decimal::NEGATIVE_ONE));
        assert_eq!(log.temp2[1], None, "nan is a sample not read");
        assert_eq!(log.temp2[2], Some(Decimal::from_str("180.25").unwrap()));
        assert_eq!(log.timeindex, vec![0, 0, 0, 0, 0, 0, 2, 0]);
        assert_eq!(log.weight.unwrap().unit, "g");
        assert_eq!(log.roasting_notes.as_deref(), Some("fast 'first' crack"));
        assert_eq!(log.whole_color, Some(Decimal::from(65)));
    }

    #[test]
    fn json_export_reads_the_same() {
        let json = r#"{"title": "Kenya AA", "roastUUID": "u-1", "roastepoch": 1763900000,
            "timex": [0.0, 1.5e0], "temp1": [200, 201], "temp2": [150, null],
            "weight": [1.0, 0.85, "Kg"], "mode": "F", "timeindex": [-1, 0, 0, 0, 0, 0, 0, 0]}"#;
        let log = read_log(json).unwrap();
        assert_eq!(log.timex[1], Decimal::from_str("1.5").unwrap());
        assert_eq!(log.temp2[1], None);
        assert_eq!(log.mode.as_deref(), Some("F"));
    }

    #[test]
    fn malformed_logs_name_what_is_wrong() {
        let cases = [
            ("[1, 2]", "expected a dict, found a list"),
            ("{'a': ", "not an Artisan log"),
            ("{'roastepoch': 1}", "`weight` is required"),
            (
                "{'weight': [1, 2, 'g'], 'roastepoch': 1, 'timex': [], 'temp1': [], 'temp2': []}",
                "`roastUUID` is required",
            ),
            (
                "{'weight': [1, 2], 'roastUUID': 'x'}",
                "`weight` must be a list [in, out, unit]",
            ),
            (
                "{'weight': [1, 2, 'g'], 'roastUUID': 'x', 'roastepoch': 1, 'timex': 'abc'}",
                "`timex` must be a list, not a string",
            ),
            (
                "{'weight': [1, 2, 'g'], 'roastUUID': 'x', 'roastepoch': 1, 'timex': [nan]}",
                "`timex[0]` is nan, not a finite number",
            ),
            (
                "{'weight': [1, 2, 'g'], 'roastUUID': 'x', 'roastepoch': 1, 'timex': [0], 'temp1': [1], 'temp2': [1], 'timeindex': [0.5]}",
                "`timeindex[0]` is 0.5, not a whole number",
            ),
            (
                "{'weight': [1, 2, 'g'], 'roastUUID': 'x', 'roastepoch': 1, 'timex': [0], 'temp1': [1], 'temp2': [1], 'operator': 'A\\x00na'}",
                "`operator` holds the control character U+0000",
            ),
        ];
        for (content, expected) in cases {
            let err = read_log(content).unwrap_err().to_string();
            assert!(err.contains(expected), "{content}: {err}");
        }
    }

    /// A number as a log may spell it: plain, huge, tiny, with exponents, or not finite.
    fn any_number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| format!("{n:?}")),
            (any::<i32>(), -400i32..400).prop_map(|(m, e)| format!("{m}e{e}")),
            "[0-9]{1,40}(\\.[0-9]{0,40})?",
            Just("1e27".to_owned()),
            Just("-1e27".to_owned()),
            Just("79228162514264337593543950336".to_owned()),
            Just("nan".to_owned()),
            Just("-1".to_owned()),
        ]
    }

    fn numbers(len: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(any_number(), len..=len).prop_map(|v| v.join(", "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn any_text_is_read_or_refused_never_a_panic(content in "\\PC{0,200}") {
            if let Ok(log) = read_log(&content) {
                let _ = LoggedRoast::from_log(&log);
            }
        }

        #[test]
        fn any_text_shaped_like_a_log_is_read_or_refused_never_a_panic(
            content in "[{}\\[\\]'\",:0-9a-zA-Z_. eE+-]{0,200}",
        ) {
            if let Ok(log) = read_log(&content) {
                let _ = LoggedRoast::from_log(&log);
            }
        }

        #[test]
        fn well_formed_logs_with_any_numbers_map_or_are_refused_as_invalid_content(
            (timex, temp1, temp2) in (1usize..6).prop_flat_map(|n| (numbers(n), numbers(n), numbers(n))),
            epoch in any_number(),
            weight in numbers(2),
            unit in prop_oneof![Just("g"), Just("Kg"), Just("lb"), Just("oz")],
            timeindex in proptest::collection::vec(-3i64..8, 0..9),
            json in any::<bool>(),
        ) {
            let timeindex = timeindex.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            let quote = if json { '"' } else { '\'' };
            let content = format!(
                "{{{quote}roastUUID{quote}: {quote}u-1{quote}, {quote}roastepoch{quote}: {epoch}, \
                 {quote}timex{quote}: [{timex}], {quote}temp1{quote}: [{temp1}], \
                 {quote}temp2{quote}: [{temp2}], {quote}timeindex{quote}: [{timeindex}], \
                 {quote}weight{quote}: [{weight}, {quote}{unit}{quote}]}}"
            );
            if let Ok(log) = read_log(&content)
                && let Err(refused) = LoggedRoast::from_log(&log)
            {
                prop_assert_eq!(refused.violation(), Violation::InvalidParameter);
            }
        }
    }
}
