//! An entry point for fuzzing the request decoding and validation path (see `fuzz/` and
//! docs/robustness.md).
//!
//! [`decode_wire`] decodes a body with the same decoder as every operation into the shared wire
//! types, then validates them as the handlers do. It must never panic: every input either
//! decodes and validates, or fails with an [`ApiError`] of status 400 or 422.

use serde::Deserialize;

use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, Instant, NameRef, NoFilter, PriceDto, ReadRequest, WeightDto, WriteRequest,
};

/// A write body using every shared wire type.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    name: Option<String>,
    weight: Option<WeightDto>,
    price: Option<PriceDto>,
    amount: Option<Amount>,
    date: Option<Instant>,
    projects: Option<Vec<NameRef>>,
}

/// Decodes `body` as a write (`{"data": …}`) and as a read (`{"params": …}`) of the shared
/// wire types and validates weights, prices and names as the handlers do.
pub fn decode_wire(body: &[u8]) -> Result<(), ApiError> {
    let write = decode::<WriteRequest<Probe>>(body).and_then(|request| {
        let data = request.data()?;
        if let Some(weight) = &data.weight {
            weight.parse("data.weight")?;
        }
        if let Some(price) = &data.price {
            price.parse("data.price")?;
        }
        if let Some(projects) = data.projects {
            for (i, project) in projects.into_iter().enumerate() {
                crate::wire::required(project.name, &format!("data.projects[{i}].name"))?;
            }
        }
        let _ = (data.name, data.amount, data.date);
        Ok(())
    });
    let read = decode::<ReadRequest<NoFilter>>(body).map(|request| {
        let _ = request.into_parts();
    });
    write.and(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tricky inputs: each must pass or fail cleanly, never panic, and fail with 400 or 422.
    #[test]
    fn tricky_bodies_pass_or_fail_with_400_or_422_never_a_panic() {
        let deep = format!(
            "{{\"data\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let long_number = format!("{{\"data\":{{\"amount\":1{}}}}}", "0".repeat(5000));
        let corpus: Vec<Vec<u8>> = [
            "",
            " ",
            "{",
            "}",
            "[]",
            "null",
            "\"data\"",
            "{\"data\":null}",
            "{\"data\":[]}",
            "{\"data\":{\"weight\":{\"amount\":1e400,\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"amount\":-0.0,\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"amount\":79228162514264337593543950336,\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"amount\":1.00000000000000000000000000001,\"unit\":\"LBS\"}}}",
            "{\"data\":{\"weight\":{\"amount\":\"1\",\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"amount\":1,\"unit\":\"\\u0000\"}}}",
            "{\"data\":{\"price\":{\"amount\":-1,\"currency\":\"EUR\"}}}",
            "{\"data\":{\"price\":{\"amount\":1,\"currency\":\"XXXX\"}}}",
            "{\"data\":{\"date\":\"9999-99-99T99:99:99Z\"}}",
            "{\"data\":{\"date\":\"+275760-09-13T00:00:00Z\"}}",
            "{\"data\":{\"projects\":[{}]}}",
            "{\"data\":{\"name\":\"\\ud800\"}}",
            "{\"params\":{\"pagination\":{\"limit\":-9223372036854775809}}}",
            "{\"params\":{\"pagination\":{\"after\":[]}}}",
            "{\"data\":{}} trailing",
            "\u{feff}{\"data\":{}}",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .chain([
            deep.into_bytes(),
            long_number.into_bytes(),
            vec![0xff, 0xfe, b'{'],
        ])
        .collect();
        let accepted = [
            "{\"data\":{\"weight\":{\"amount\":-0.0,\"unit\":\"KG\"}}}",
            "{\"data\":{\"weight\":{\"amount\":1.00000000000000000000000000001,\"unit\":\"LBS\"}}}",
        ];
        let mut refused = 0;
        for body in &corpus {
            let text = String::from_utf8_lossy(body);
            if accepted.contains(&text.as_ref()) {
                assert!(decode_wire(body).is_ok(), "{text}");
            } else if let Err(e) = decode_wire(body) {
                refused += 1;
                assert!(
                    matches!(e.status.as_u16(), 400 | 422),
                    "{}: {} {}",
                    String::from_utf8_lossy(body),
                    e.status,
                    e.code
                );
                assert!(!e.code.is_empty() && !e.message.is_empty());
            }
        }
        // Only the two valid bodies pass: -0 kg is a zero weight, and extra decimals are
        // rounded (api-decisions).
        assert_eq!(refused, corpus.len() - accepted.len());
    }

    #[test]
    fn a_valid_body_passes() {
        let body = br#"{"data": {"name": "Guji", "weight": {"amount": 60.5, "unit": "KG"},
            "price": {"amount": 5.2, "currency": "EUR"}, "amount": 0.000001,
            "date": "2026-01-02T03:04:05Z", "projects": [{"name": "Direct"}]}}"#;
        assert!(decode_wire(body).is_ok());
    }
}
