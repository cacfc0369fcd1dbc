//! The one rule for control characters in texts, applied at the edge to every string of every
//! request body and to every token endpoint parameter.
//!
//! A text may hold any Unicode character except a control character (Unicode category `Cc`:
//! U+0000–U+001F, U+007F, U+0080–U+009F), with three exceptions free text needs: tab (U+0009),
//! line feed (U+000A) and carriage return (U+000D). Control characters have no meaning in names,
//! identifiers or notes, they hide text from people reading logs and screens, and PostgreSQL
//! cannot store U+0000 at all; refusing them here keeps both databases alike. Format characters
//! such as U+202E (right-to-left override) are ordinary text and are kept.

use serde_json::Value;

/// Whether `c` is refused in a text.
pub fn is_refused(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// The first refused character of `text`, if any.
pub fn refused_in(text: &str) -> Option<char> {
    text.chars().find(|c| is_refused(*c))
}

/// Whether a JSON body could hold a refused character: C0 controls and DEL can only arrive
/// escaped (`\u0000`) or raw (DEL), C1 controls escaped or raw as UTF-8 `C2 80`–`C2 9F`.
/// Most bodies have none of these bytes and skip the full scan.
fn may_hold_controls(body: &[u8]) -> bool {
    body.contains(&b'\\')
        || body.contains(&0x7F)
        || body.windows(2).any(|w| matches!(w, [0xC2, 0x80..=0x9F]))
}

/// The path (as `data.items[2].name`) of the first string of `body` that holds a refused
/// character, with that character; `None` when every text is acceptable. `body` must be JSON.
pub fn find_control(body: &[u8]) -> Option<(String, char)> {
    if !may_hold_controls(body) {
        return None;
    }
    let value: Value = serde_json::from_slice(body).ok()?;
    let mut path = String::new();
    walk(&value, &mut path)
}

fn walk(value: &Value, path: &mut String) -> Option<(String, char)> {
    match value {
        Value::String(text) => refused_in(text).map(|c| (path.clone(), c)),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = walk(item, path);
            path.truncate(len);
            found
        }),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            let found = match refused_in(key) {
                Some(c) => Some((path.clone(), c)),
                None => walk(item, path),
            };
            path.truncate(len);
            found
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// How a refused character is named in messages: `U+0000`.
pub fn describe(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_refused_except_tab_line_feed_and_carriage_return() {
        for c in [
            '\0', '\u{1}', '\u{8}', '\u{b}', '\u{1b}', '\u{1f}', '\u{7f}', '\u{80}', '\u{9f}',
        ] {
            assert!(is_refused(c), "{}", describe(c));
        }
        for c in ['\t', '\n', '\r', ' ', '\u{a0}', '\u{202e}', '\u{feff}', 'é'] {
            assert!(!is_refused(c), "{}", describe(c));
        }
    }

    #[test]
    fn the_path_of_the_first_refused_text_is_named() {
        let body = br#"{"data": {"name": "ok\tfine", "items": [{"x": 1}, {"note": "a\u0000b"}]}}"#;
        assert_eq!(
            find_control(body),
            Some(("data.items[1].note".to_owned(), '\0'))
        );
        let raw_c1 = "{\"data\": {\"name\": \"a\u{85}\"}}";
        assert_eq!(
            find_control(raw_c1.as_bytes()),
            Some(("data.name".to_owned(), '\u{85}'))
        );
        let key = br#"{"params": {"\u0007": 1}}"#;
        assert_eq!(
            find_control(key),
            Some(("params.\u{7}".to_owned(), '\u{7}'))
        );
    }

    #[test]
    fn clean_bodies_and_allowed_escapes_pass() {
        assert_eq!(find_control(br#"{"data": {"name": "Guji"}}"#), None);
        assert_eq!(
            find_control(br#"{"data": {"notes": "line\nnext\r\n\tand \"quoted\" \u202e"}}"#),
            None
        );
    }
}
