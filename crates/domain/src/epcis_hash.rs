//! The CBV 2.0 event hash of the EPCIS events Roastery emits (api-decisions §16): the pre-hash
//! string, canonicalised as GS1's reference implementation (`epcis-event-hash-generator`)
//! writes it for those events, and its SHA-256 as an `ni:` URI.
//!
//! The pre-hash is the event's fields in the canonical property order, each `name=value`, with
//! no separator: `eventType`, `eventTime` (UTC, milliseconds), `eventTimeZoneOffset`, the
//! quantity lists (each element `quantityElement` + `epcClass=`, `quantity=`, `uom=`; the
//! elements of one list sorted as strings), `action`, `bizStep` and `disposition` as full CBV
//! URIs, `readPoint` / `bizLocation` as `readPointid=…`, business transactions as
//! `bizTransactionListtype=<BTT URI>bizTransaction=<URI>`; then the extension fields, each as
//! `{namespace}name=value` (a nested object: its name followed by its own fields, sorted), all of
//! them sorted as strings. Every value is canonicalised as the reference does: a value that
//! Python's `float()` reads is rewritten as that number (an integral one as an integer), so
//! `"00123"` hashes as `123` and `"1e5"` as `100000`.
//!
//! Only what Roastery emits is covered: no EPC lists, no sensor data, no `certificationInfo`, no
//! JSON numbers or booleans in extensions, and identifiers that are not GS1 keys (which the
//! reference would rewrite as GS1 Digital Link URIs).

use sha2::{Digest, Sha256};

/// The CBV 2.0 hash of a pre-hash string: `ni:///sha-256;<hex>?ver=CBV2.0`.
pub fn event_id(prehash: &str) -> String {
    let digest = Sha256::digest(prehash.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("ni:///sha-256;{hex}?ver=CBV2.0")
}

/// A value as the reference writes it into the pre-hash: old CBV URNs as web vocabulary, and
/// anything Python's `float()` reads as that number.
pub fn canonical_value(text: &str) -> String {
    let text = text
        .replace(
            "urn:epcglobal:cbv:bizstep:",
            "https://ref.gs1.org/cbv/BizStep-",
        )
        .replace("urn:epcglobal:cbv:disp:", "https://ref.gs1.org/cbv/Disp-")
        .replace("urn:epcglobal:cbv:btt:", "https://ref.gs1.org/cbv/BTT-")
        .replace("urn:epcglobal:cbv:sdt:", "https://ref.gs1.org/cbv/SDT-")
        .replace("urn:epcglobal:cbv:er:", "https://ref.gs1.org/cbv/ER-");
    match python_float(&text) {
        // NaN is left as written; an infinite value is something the reference cannot hash
        // (its integer conversion fails), so it is left as written too.
        Some(x) if x.is_finite() => python_number(x),
        _ => text,
    }
}

/// What Python's `float()` makes of `text`, if it reads it: Rust's parser (which is correctly
/// rounded as Python's is), after Python's surrounding whitespace and digit-separating
/// underscores are taken away.
fn python_float(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut plain = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        if *c == '_' {
            let before = i.checked_sub(1).and_then(|j| chars.get(j));
            let after = chars.get(i.saturating_add(1));
            let digit = |c: Option<&char>| c.is_some_and(char::is_ascii_digit);
            if !(digit(before) && digit(after)) {
                return None;
            }
        } else if c.is_ascii() {
            plain.push(*c);
        } else {
            // Python reads other Unicode digits too; Roastery's values never hold them.
            return None;
        }
    }
    plain.parse::<f64>().ok()
}

/// `str(x)` in Python after the reference's rewrite: an integral value as the exact integer it
/// is, any other as Python's shortest representation (`0.5`, `1e-05`).
pub fn python_number(x: f64) -> String {
    if x.fract() == 0.0 {
        exact_integer(x)
    } else {
        python_repr(x)
    }
}

/// The exact decimal digits of an integral, finite `x`.
fn exact_integer(x: f64) -> String {
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let exponent = i32::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
    let fraction = bits & ((1u64 << 52) - 1);
    if exponent == 0 {
        // Zero (or a subnormal, never integral but zero).
        return "0".to_owned();
    }
    let mantissa = fraction | (1u64 << 52);
    let shift = exponent.saturating_sub(1075);
    // Base 10^9 digits, least significant first.
    let mut limbs: Vec<u64> = Vec::new();
    let start = if shift < 0 {
        mantissa >> shift.unsigned_abs().min(63)
    } else {
        mantissa
    };
    let mut rest = start;
    while rest > 0 {
        limbs.push(rest % 1_000_000_000);
        rest /= 1_000_000_000;
    }
    for _ in 0..shift.max(0) {
        let mut carry = 0;
        for limb in &mut limbs {
            let doubled = limb.saturating_mul(2).saturating_add(carry);
            *limb = doubled % 1_000_000_000;
            carry = doubled / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut digits = String::new();
    if negative && !limbs.is_empty() {
        digits.push('-');
    }
    let mut iter = limbs.iter().rev();
    match iter.next() {
        None => return "0".to_owned(),
        Some(first) => digits.push_str(&first.to_string()),
    }
    for limb in iter {
        digits.push_str(&format!("{limb:09}"));
    }
    digits
}

/// Python's `repr` of a finite float: the shortest digits that read back as `x`, written
/// positionally when the decimal point falls within 16 digits of them, else in scientific
/// notation with a two-digit exponent at least.
fn python_repr(x: f64) -> String {
    // Rust's `{:e}` writes the same shortest digits: `d.ddde-n`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let decpt = exponent.saturating_add(1);
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let count = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let body = if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{rest}e{exp_sign}{:02}", exponent.unsigned_abs())
    } else if decpt <= 0 {
        let zeros = "0".repeat(usize::try_from(decpt.saturating_neg()).unwrap_or(0));
        format!("0.{zeros}{digits}")
    } else if decpt >= count {
        let zeros = "0".repeat(usize::try_from(decpt.saturating_sub(count)).unwrap_or(0));
        format!("{digits}{zeros}.0")
    } else {
        let (int, frac) = digits.split_at(usize::try_from(decpt).unwrap_or(0));
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// One `name=value` of the pre-hash (`name` alone when the value is empty), the value
/// canonicalised.
pub(crate) fn field(name: &str, value: &str) -> String {
    let value = value.trim();
    if value.is_empty() {
        name.to_owned()
    } else {
        format!("{name}={}", canonical_value(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_like_values_are_rewritten_as_python_writes_them() {
        for (text, written) in [
            ("60", "60"),
            ("60.000", "60"),
            ("50.40", "50.4"),
            ("00123", "123"),
            ("1e5", "100000"),
            ("12E3", "12000"),
            ("1_000", "1000"),
            ("0.001", "0.001"),
            ("0.00001", "1e-05"),
            ("12345678901234567890", "12345678901234567168"),
            (
                "99999999999999999999999999999999999999999999999999",
                "100000000000000007629769841091887003294964970946560",
            ),
            ("9007199254740993", "9007199254740992"),
            ("1234567890123.456", "1234567890123.456"),
            ("-0", "0"),
            ("nan", "nan"),
            ("inf", "inf"),
            ("1__0", "1__0"),
            ("_1", "_1"),
            ("AB12", "AB12"),
            ("DDS", "DDS"),
            ("urn:roastery:x/lot/PG-1", "urn:roastery:x/lot/PG-1"),
            (
                "urn:epcglobal:cbv:bizstep:shipping",
                "https://ref.gs1.org/cbv/BizStep-shipping",
            ),
        ] {
            assert_eq!(canonical_value(text), written, "{text}");
        }
    }

    #[test]
    fn python_repr_of_fractions() {
        assert_eq!(python_number(0.5), "0.5");
        assert_eq!(python_number(0.0001), "0.0001");
        assert_eq!(python_number(123.25), "123.25");
        assert_eq!(python_number(-2.5e-7), "-2.5e-07");
        assert_eq!(python_number(1e22), "10000000000000000000000");
    }

    #[test]
    fn the_event_id_is_the_sha_256_of_the_pre_hash_as_an_ni_uri() {
        // sha256("abc")
        assert_eq!(
            event_id("abc"),
            "ni:///sha-256;ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad?ver=CBV2.0"
        );
    }
}
