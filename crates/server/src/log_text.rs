//! The text of a JSON log line that every request writes: JSON strings and the timestamp.
//!
//! Both run for every request's line (a dozen strings and one timestamp), so both take the short
//! way for what a request line holds: strings with nothing to escape are scanned eight bytes at a
//! time, and the date and time of day, which change once a second, are formatted once a second
//! per thread and copied otherwise.

use std::cell::Cell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};

/// Appends `value` as a JSON string, quotes included.
pub fn push_json_str(out: &mut String, value: &str) {
    out.push('"');
    let _ = Escaped(out).write_str(value);
    out.push('"');
}

/// Escapes what is written for the inside of a JSON string: `"`, `\` and control characters.
pub struct Escaped<'a>(pub &'a mut String);

impl fmt::Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !must_escape(s.as_bytes()) {
            self.0.push_str(s);
            return Ok(());
        }
        // Bytes, not chars: every byte of a multi-byte character is above 0x7f and kept as is.
        let bytes = s.as_bytes();
        let mut plain = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.push_str(s.get(plain..i).unwrap_or_default());
            if escape.is_empty() {
                write!(self.0, "\\u{b:04x}")?;
            } else {
                self.0.push_str(escape);
            }
            plain = i + 1;
        }
        self.0.push_str(s.get(plain..).unwrap_or_default());
        Ok(())
    }
}

/// Whether any byte of `bytes` is escaped in a JSON string, looked at eight bytes at a time.
fn must_escape(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    let any_word = words.by_ref().any(|word| {
        <[u8; 8]>::try_from(word).map_or(true, |word| must_escape_any(u64::from_le_bytes(word)))
    });
    // The last bytes, padded with spaces (never escaped).
    let mut last = [b' '; 8];
    for (to, &from) in last.iter_mut().zip(words.remainder()) {
        *to = from;
    }
    any_word || must_escape_any(u64::from_le_bytes(last))
}

/// Whether any of the eight bytes of `word` is escaped in a JSON string: below 0x20, `"` or `\`.
/// (A byte is below `n` ≤ 0x80 exactly when subtracting `n` borrows into its high bit while the
/// byte's own high bit is clear; a byte equals `c` when `byte ^ c` is below 1.)
fn must_escape_any(word: u64) -> bool {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    control | quote | backslash != 0
}

thread_local! {
    /// The second last formatted on this thread and its text up to the fraction's dot
    /// (`2026-11-29T18:59:21.`).
    static SECOND: Cell<Option<(u64, [u8; DATE_TIME_LEN])>> = const { Cell::new(None) };
}

/// `YYYY-MM-DDTHH:MM:SS.`
const DATE_TIME_LEN: usize = 20;

/// Appends the time now in UTC as RFC 3339 with microseconds, `2026-11-29T18:59:21.179003Z`.
pub fn push_now(out: &mut String) {
    push_timestamp(out, SystemTime::now());
}

/// Appends `at` in UTC as RFC 3339 with microseconds, `2026-11-29T18:59:21.179003Z`, as
/// `tracing-subscriber`'s `SystemTime` timer writes it.
fn push_timestamp(out: &mut String, at: SystemTime) {
    let Ok(since) = at.duration_since(UNIX_EPOCH) else {
        out.push_str(&rfc3339(at));
        return;
    };
    let (secs, micros) = (since.as_secs(), since.subsec_micros());
    let cached = SECOND
        .try_with(Cell::get)
        .ok()
        .flatten()
        .filter(|&(second, _)| second == secs);
    let date_time = match cached {
        Some((_, text)) => text,
        None => {
            let full = rfc3339(at);
            // Years past 9999 do not fit the cached width: written in full, not cached.
            let Some(text) = full
                .as_bytes()
                .get(..DATE_TIME_LEN)
                .and_then(|t| <[u8; DATE_TIME_LEN]>::try_from(t).ok())
                .filter(|_| full.len() == DATE_TIME_LEN + 7)
            else {
                out.push_str(&full);
                return;
            };
            let _ = SECOND.try_with(|cell| cell.set(Some((secs, text))));
            text
        }
    };
    out.push_str(std::str::from_utf8(&date_time).unwrap_or_default());
    let mut digits = [b'0'; 6];
    let mut rest = micros;
    for digit in digits.iter_mut().rev() {
        // A remainder of 10 fits a byte.
        *digit = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        rest /= 10;
    }
    out.push_str(std::str::from_utf8(&digits).unwrap_or_default());
    out.push('Z');
}

/// `at` as RFC 3339 with microseconds; a clock beyond chrono's range (±262,000 years) is written
/// as its end rather than panicking in the log line.
fn rfc3339(at: SystemTime) -> String {
    let (secs, nanos) = match at.duration_since(UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            after.subsec_nanos(),
        ),
        Err(before) => {
            let before = before.duration();
            let secs = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            match before.subsec_nanos() {
                0 => (-secs, 0),
                nanos => (-secs - 1, 1_000_000_000 - nanos),
            }
        }
    };
    let at = DateTime::<Utc>::from_timestamp(secs, nanos).unwrap_or(if secs < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;
    use tracing_subscriber::fmt::format::Writer;
    use tracing_subscriber::fmt::time::FormatTime;

    use super::*;

    /// The byte-by-byte escaping the fast scan must agree with: the domain's JSON string.
    fn escaped_bytewise(s: &str) -> String {
        roastery_domain::geojson::json_string(s)
    }

    /// chrono's own RFC 3339 text of `at` (in its range), the reference for timestamps.
    fn chrono_text(at: SystemTime) -> String {
        DateTime::<Utc>::from(at).to_rfc3339_opts(SecondsFormat::Micros, true)
    }

    fn json(s: &str) -> String {
        let mut out = String::new();
        push_json_str(&mut out, s);
        out
    }

    #[test]
    fn every_ascii_byte_at_every_place_of_a_word_is_escaped_as_byte_by_byte() {
        for len in 0..=24 {
            for at in 0..len.max(1) {
                for b in 0u8..0x80 {
                    let mut bytes = vec![b'a'; len];
                    if let Some(place) = bytes.get_mut(at) {
                        *place = b;
                    }
                    let s = String::from_utf8(bytes).unwrap();
                    let out = json(&s);
                    assert_eq!(out, escaped_bytewise(&s), "{s:?}");
                    assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
                }
            }
        }
    }

    #[test]
    fn a_word_is_flagged_exactly_when_one_of_its_bytes_is_escaped() {
        let escaped = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        // Every byte beside every other (borrows run from low bytes to high ones).
        for low in 0..=u8::MAX {
            for high in 0..=u8::MAX {
                let word = u64::from_le_bytes([b'x', low, high, b'y', b'z', 0x7f, 0x80, 0xff]);
                assert_eq!(
                    must_escape_any(word),
                    escaped(low) || escaped(high),
                    "{low:#x} {high:#x}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_is_escaped_as_byte_by_byte_and_reads_back(s in any::<String>()) {
            let out = json(&s);
            prop_assert_eq!(&out, &escaped_bytewise(&s));
            prop_assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }

        #[test]
        fn a_timestamp_is_written_as_rfc3339_with_microseconds(
            secs in 0u64..253_402_300_799,
            nanos in 0u32..1_000_000_000,
        ) {
            let at = UNIX_EPOCH + Duration::new(secs, nanos);
            let mut out = String::new();
            push_timestamp(&mut out, at);
            prop_assert_eq!(&out, &chrono_text(at));
            // A second time: from the cached second.
            let mut again = String::new();
            push_timestamp(&mut again, at);
            prop_assert_eq!(again, out);
        }
    }

    #[test]
    fn the_cached_second_is_left_when_the_second_changes() {
        let at = UNIX_EPOCH + Duration::new(1_795_000_000, 999_999_000);
        let mut out = String::new();
        push_timestamp(&mut out, at);
        push_timestamp(&mut out, at + Duration::from_micros(1));
        push_timestamp(&mut out, at - Duration::from_secs(86_400));
        assert_eq!(
            out,
            "2026-11-18T11:06:40.999999Z2026-11-18T11:06:41.000000Z2026-11-17T11:06:40.999999Z"
        );
    }

    #[test]
    fn times_outside_the_cached_width_are_written_in_full() {
        let early = UNIX_EPOCH - Duration::from_micros(1);
        let late = UNIX_EPOCH + Duration::from_secs(253_402_300_800);
        for at in [early, late] {
            let mut out = String::new();
            push_timestamp(&mut out, at);
            assert_eq!(out, chrono_text(at));
        }
        let mut out = String::new();
        push_timestamp(&mut out, early);
        assert_eq!(out, "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn a_clock_beyond_chronos_range_is_written_as_its_end() {
        let far = UNIX_EPOCH + Duration::from_secs(10_000_000_000_000);
        let mut out = String::new();
        push_timestamp(&mut out, far);
        assert_eq!(
            out,
            DateTime::<Utc>::MAX_UTC.to_rfc3339_opts(SecondsFormat::Micros, true)
        );
        let before = UNIX_EPOCH - Duration::from_secs(10_000_000_000_000);
        let mut out = String::new();
        push_timestamp(&mut out, before);
        assert_eq!(
            out,
            DateTime::<Utc>::MIN_UTC.to_rfc3339_opts(SecondsFormat::Micros, true)
        );
    }

    #[test]
    fn now_is_written_as_tracing_subscribers_timer_writes_it() {
        // The two read the clock apart: compared up to the second, taken twice when a second
        // turned between them.
        for _ in 0..3 {
            let mut ours = String::new();
            push_now(&mut ours);
            let mut theirs = String::new();
            tracing_subscriber::fmt::time::SystemTime
                .format_time(&mut Writer::new(&mut theirs))
                .unwrap();
            assert_eq!(ours.len(), theirs.len(), "{ours} {theirs}");
            if ours.get(..19) == theirs.get(..19) {
                assert!(ours.ends_with('Z') && theirs.ends_with('Z'));
                return;
            }
        }
        panic!("the seconds never agreed");
    }
}
