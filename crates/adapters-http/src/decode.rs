//! Decoding request bodies into operation DTOs, with the contract's error codes: a body that is
//! not a JSON object is `invalid_json`; a field of the wrong type or format is
//! `invalid_parameter`, naming its path; so is a text holding a control character (see
//! [`crate::text`]). Bodies are decoded by shape ([`strict`]): a JSON array never fills an
//! object, and messages name the field's path and the JSON type expected, never a Rust type.

mod strict;

use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Deepest nesting of arrays and objects accepted: far beyond any operation's shape, far below
/// what could strain the parser.
pub const MAX_DEPTH: usize = 32;

pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(ApiError::invalid_json(
            "the request body must be a JSON object",
        ));
    }
    if nesting_depth(body) > MAX_DEPTH {
        return Err(ApiError::invalid_json(format!(
            "the body nests arrays or objects deeper than {MAX_DEPTH} levels"
        )));
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(strict::Strict(&mut de)).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        match inner.classify() {
            serde_json::error::Category::Data => {
                ApiError::invalid_parameter(format!("{path}: {}", json_words(&inner.to_string())))
            }
            _ => ApiError::invalid_json(format!("the body is not valid JSON: {inner}")),
        }
    })?;
    de.end()
        .map_err(|e| ApiError::invalid_json(format!("the body is not valid JSON: {e}")))?;
    if let Some((path, c)) = crate::text::find_control(body) {
        return Err(ApiError::invalid_parameter(format!(
            "{path}: {} is a control character; texts may hold no control character other than \
             tab, line feed and carriage return",
            crate::text::describe(c)
        )));
    }
    Ok(value)
}

/// serde's names of what was found, in JSON's words.
fn json_words(message: &str) -> String {
    message
        .replace("invalid type: sequence", "invalid type: array")
        .replace("invalid type: map", "invalid type: object")
        .replace("invalid type: unit value", "invalid type: null")
}

/// The deepest nesting of `[` and `{` outside strings. Unknown fields are skipped by the parser
/// without a depth limit, so the limit is checked here, in one linear pass.
fn nesting_depth(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{NoFilter, ReadRequest};

    #[derive(Debug, serde::Deserialize)]
    struct Probe {
        count: Option<u32>,
    }

    #[test]
    fn non_objects_and_broken_json_are_invalid_json() {
        for body in [&b"[1]"[..], b"42", b"", b"{\"count\": ", b"{} {}", b"nul"] {
            assert_eq!(
                decode::<Probe>(body).unwrap_err().code,
                "invalid_json",
                "{body:?}"
            );
        }
    }

    #[test]
    fn wrong_types_are_invalid_parameters_naming_the_path() {
        let err = decode::<Probe>(br#"{"count": "x"}"#).unwrap_err();
        assert_eq!(err.code, "invalid_parameter");
        assert!(err.message.starts_with("count:"), "{}", err.message);
        let err = decode::<ReadRequest<NoFilter>>(br#"{"params": {"pagination": {"limit": 1.5}}}"#)
            .unwrap_err();
        assert!(
            err.message.contains("params.pagination.limit"),
            "{}",
            err.message
        );
    }

    #[test]
    fn control_characters_in_any_text_are_invalid_parameters_naming_the_path() {
        let err =
            decode::<Probe>(br#"{"count": 1, "note": {"lines": ["ok", "a\u0000b"]}}"#).unwrap_err();
        assert_eq!(err.code, "invalid_parameter");
        assert!(
            err.message.starts_with("note.lines[1]: U+0000"),
            "{}",
            err.message
        );
        assert!(decode::<Probe>(b"{\"note\": \"tab\\there\\n\"}").is_ok());
    }

    #[derive(Debug, serde::Deserialize)]
    struct Outer {
        #[allow(dead_code)]
        inner: Option<Probe>,
        #[allow(dead_code)]
        weight: Option<crate::wire::WeightDto>,
    }

    #[test]
    fn an_array_never_fills_an_object() {
        for (body, path) in [
            (&br#"{"params": [null, null]}"#[..], "params:"),
            (br#"{"params": {"pagination": [1]}}"#, "params.pagination:"),
            (br#"{"params": {"filter": [1]}}"#, "params.filter:"),
        ] {
            let err = decode::<ReadRequest<NoFilter>>(body).unwrap_err();
            assert_eq!(err.code, "invalid_parameter", "{body:?}");
            assert!(err.message.starts_with(path), "{}", err.message);
            assert!(
                err.message
                    .contains(": invalid type: array, expected an object"),
                "{}",
                err.message
            );
        }
        let err = decode::<Outer>(br#"{"inner": [7]}"#).unwrap_err();
        assert!(
            err.message
                .starts_with("inner: invalid type: array, expected an object"),
            "{}",
            err.message
        );
        let err = decode::<Outer>(br#"{"weight": [1, "KG"]}"#).unwrap_err();
        assert!(
            err.message
                .starts_with("weight: invalid type: array, expected an object"),
            "{}",
            err.message
        );
    }

    #[test]
    fn messages_name_json_types_never_rust_types() {
        let err = decode::<Outer>(br#"{"inner": {"count": "x"}}"#).unwrap_err();
        assert!(
            err.message.starts_with(
                r#"inner.count: invalid type: string "x", expected a non-negative integer"#
            ),
            "{}",
            err.message
        );
        let err = decode::<Outer>(br#"{"inner": 5}"#).unwrap_err();
        assert!(!err.message.contains("Probe"), "{}", err.message);
        let err = decode::<Outer>(br#"{"inner": {"count": {}}}"#).unwrap_err();
        assert!(
            err.message.contains("invalid type: object"),
            "{}",
            err.message
        );
    }

    #[test]
    fn objects_and_exact_amounts_still_decode_through_the_strict_wrapper() {
        let outer = decode::<Outer>(
            br#"{"inner": {"count": 3}, "weight": {"amount": 12345678901.123456, "unit": "KG"}}"#,
        )
        .unwrap();
        assert_eq!(outer.inner.and_then(|p| p.count), Some(3));
        assert_eq!(
            outer.weight.and_then(|w| w.amount).map(|a| a.0.to_string()),
            Some("12345678901.123456".to_owned())
        );
    }

    #[test]
    fn nesting_inside_strings_does_not_count() {
        assert_eq!(nesting_depth(br#"{"a": "[[[[\"{{{", "b": [{}]}"#), 3);
    }

    #[test]
    fn deep_nesting_is_refused_as_invalid_json() {
        let body = format!("{{\"a\":{}{}}}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(
            decode::<Probe>(body.as_bytes()).unwrap_err().code,
            "invalid_json"
        );
    }
}
