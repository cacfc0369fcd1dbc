//! A strict reader of the literals Artisan writes: a `.alog` file is the `repr` of a Python dict
//! (single or double quotes, `u`/`b` prefixes, tuples, `True`/`False`/`None`), and Artisan's JSON
//! export is JSON (`true`/`false`/`null`). One grammar reads both. The text is parsed, never
//! evaluated: only dicts, lists, tuples, strings, numbers and the constants are accepted.
//!
//! Numbers keep their text: a number becomes a decimal only where a field is used, so a value out
//! of range in a field Roastery ignores cannot fail an import.

use std::fmt;

/// Deepest nesting accepted; Artisan's files nest a few levels.
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    /// The number's text as written (`-1`, `203.5`, `1e-3`, `nan`, `inf`).
    Number(String),
    Str(String),
    /// A list or a tuple.
    List(Vec<Value>),
    /// Entries in file order; keys may be any literal, only string keys are looked up.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// The value of the string key `key` of a dict (the last one, like Python, if repeated).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::Dict(entries) => entries
                .iter()
                .rev()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Bool(_) => "a boolean",
            Self::Number(_) => "a number",
            Self::Str(_) => "a string",
            Self::List(_) => "a list",
            Self::Dict(_) => "a dict",
        }
    }
}

/// Where and why the text is not a literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.message, self.line, self.column
        )
    }
}

/// Parses one literal; only whitespace may follow it.
pub fn parse(text: &str) -> Result<Value, SyntaxError> {
    let mut parser = Parser {
        text: text.as_bytes(),
        source: text,
        pos: 0,
    };
    parser.skip_space();
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.pos < parser.text.len() {
        return Err(parser.error("unexpected text after the literal"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a [u8],
    source: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        let before = &self.source[..self.pos.min(self.source.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SyntaxError {
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        match self.peek() {
            None => Err(self.error("unexpected end of text")),
            Some(b'{') => self.dict(depth),
            Some(b'[') => self.sequence(b']', depth),
            Some(b'(') => self.sequence(b')', depth),
            Some(b'\'' | b'"') => self.string(false).map(Value::Str),
            Some(b'-' | b'+' | b'.' | b'0'..=b'9') => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Value::Dict(entries));
            }
            let key = self.value(depth + 1)?;
            if matches!(key, Value::List(_) | Value::Dict(_)) {
                return Err(self.error("a dict key must be a string, number or constant"));
            }
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after a dict key"));
            }
            self.pos += 1;
            self.skip_space();
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.error("expected `,` or `}` in a dict")),
            }
        }
    }

    fn sequence(&mut self, close: u8, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(Value::List(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => {
                    return Err(
                        self.error(format!("expected `,` or `{}` in a list", char::from(close)))
                    );
                }
            }
        }
    }

    /// A name: a constant, a string prefix (`u'…'`, `b"…"`, `r'…'`) or a non-finite number.
    fn word(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        let word = &self.source[start..self.pos];
        if matches!(self.peek(), Some(b'\'' | b'"')) {
            let lower = word.to_ascii_lowercase();
            if matches!(lower.as_str(), "u" | "b" | "r" | "br" | "rb") {
                return self.string(lower.contains('r')).map(Value::Str);
            }
        }
        match word {
            "True" | "true" => Ok(Value::Bool(true)),
            "False" | "false" => Ok(Value::Bool(false)),
            "None" | "null" => Ok(Value::None),
            "nan" | "NaN" | "inf" | "Infinity" => Ok(Value::Number(word.to_owned())),
            _ => {
                self.pos = start;
                Err(self.error(format!(
                    "`{word}` is not a literal (names and calls are not evaluated)"
                )))
            }
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        if let Some(b'-' | b'+') = self.peek() {
            self.pos += 1;
            if self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                // -inf, -Infinity, -nan
                let Value::Number(word) = self.word()? else {
                    self.pos = start;
                    return Err(self.error("a sign must be followed by a number"));
                };
                let sign = &self.source[start..start + 1];
                return Ok(Value::Number(format!("{sign}{word}")));
            }
        }
        let digits = |p: &mut Self| {
            let from = p.pos;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.pos += 1;
            }
            p.pos - from
        };
        let mut count = digits(self);
        if self.peek() == Some(b'.') {
            self.pos += 1;
            count += digits(self);
        }
        if count == 0 {
            return Err(self.error("malformed number"));
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'-' | b'+') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("malformed exponent"));
            }
        }
        if self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            return Err(self.error("malformed number"));
        }
        Ok(Value::Number(self.source[start..self.pos].to_owned()))
    }

    /// A quoted string; the quote it opens with closes it.
    fn string(&mut self, raw: bool) -> Result<String, SyntaxError> {
        let Some(quote) = self.peek() else {
            return Err(self.error("expected a string"));
        };
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match c {
                _ if c == quote => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\n' => return Err(self.error("line break inside a string")),
                b'\\' if raw => {
                    // A raw string keeps the backslash and the character after it.
                    out.push('\\');
                    self.pos += 1;
                    if let Some(next) = self.next_char() {
                        out.push(next);
                    }
                }
                b'\\' => {
                    self.pos += 1;
                    self.escape(&mut out)?;
                }
                _ => {
                    if let Some(ch) = self.next_char() {
                        out.push(ch);
                    }
                }
            }
        }
    }

    fn next_char(&mut self) -> Option<char> {
        let ch = self.source[self.pos..].chars().next()?;
        self.pos += ch.len_utf8();
        Some(ch)
    }

    fn hex(&mut self, len: usize) -> Result<u32, SyntaxError> {
        let digits = self
            .source
            .get(self.pos..self.pos + len)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error(format!("expected {len} hex digits in an escape")))?;
        self.pos += len;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("bad hex escape"))
    }

    fn escape(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        let Some(c) = self.peek() else {
            return Err(self.error("unterminated string"));
        };
        self.pos += 1;
        let ch = match c {
            b'\n' => return Ok(()),
            b'\\' => '\\',
            b'\'' => '\'',
            b'"' => '"',
            b'/' => '/',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'v' => '\u{b}',
            b'a' => '\u{7}',
            b'0'..=b'7' => {
                let mut code = u32::from(c - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            code = code * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                char::from_u32(code).ok_or_else(|| self.error("bad octal escape"))?
            }
            b'x' => {
                let code = self.hex(2)?;
                char::from_u32(code).ok_or_else(|| self.error("bad \\x escape"))?
            }
            b'u' => {
                let code = self.hex(4)?;
                if (0xD800..0xDC00).contains(&code) && self.source[self.pos..].starts_with("\\u") {
                    // A UTF-16 surrogate pair, as JSON writes characters beyond the BMP.
                    self.pos += 2;
                    let low = self.hex(4)?;
                    let combined = 0x10000 + ((code - 0xD800) << 10) + (low.wrapping_sub(0xDC00));
                    char::from_u32(combined)
                        .filter(|_| (0xDC00..0xE000).contains(&low))
                        .ok_or_else(|| self.error("bad surrogate pair"))?
                } else {
                    char::from_u32(code).ok_or_else(|| self.error("bad \\u escape"))?
                }
            }
            b'U' => {
                let code = self.hex(8)?;
                char::from_u32(code).ok_or_else(|| self.error("bad \\U escape"))?
            }
            _ => {
                // Python keeps an unknown escape as written.
                self.pos -= 1;
                out.push('\\');
                return Ok(());
            }
        };
        out.push(ch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Value {
        Value::Number(s.into())
    }

    fn s(text: &str) -> Value {
        Value::Str(text.into())
    }

    #[test]
    fn python_repr_of_a_dict_with_tuples_constants_and_prefixes() {
        let v = parse(
            "{'a': (1, -2.5, 3e-2,), u'b': [True, False, None], \"c\": {'d': b'x'}, 'e': ()}",
        )
        .unwrap();
        assert_eq!(
            v.get("a"),
            Some(&Value::List(vec![num("1"), num("-2.5"), num("3e-2")]))
        );
        assert_eq!(
            v.get("b"),
            Some(&Value::List(vec![
                Value::Bool(true),
                Value::Bool(false),
                Value::None
            ]))
        );
        assert_eq!(v.get("c").and_then(|c| c.get("d")), Some(&s("x")));
        assert_eq!(v.get("e"), Some(&Value::List(vec![])));
    }

    #[test]
    fn json_export_reads_with_the_same_grammar() {
        let v = parse(r#"{"a": true, "b": null, "c": [1.5E+2, "x\u00e9\ud83d\ude00\/"]}"#).unwrap();
        assert_eq!(v.get("a"), Some(&Value::Bool(true)));
        assert_eq!(v.get("b"), Some(&Value::None));
        assert_eq!(
            v.get("c"),
            Some(&Value::List(vec![num("1.5E+2"), s("xé😀/")]))
        );
    }

    #[test]
    fn escapes_follow_python() {
        let v =
            parse(r"['it\'s', 'tab\there', 'nl\n', '\x41\101\u00e9', 'keep\d', r'raw\n']").unwrap();
        assert_eq!(
            v,
            Value::List(vec![
                s("it's"),
                s("tab\there"),
                s("nl\n"),
                s("AAé"),
                s("keep\\d"),
                s("raw\\n"),
            ])
        );
    }

    #[test]
    fn non_finite_numbers_are_kept_as_text() {
        let v = parse("[nan, -inf, NaN, -Infinity, +1]").unwrap();
        assert_eq!(
            v,
            Value::List(vec![
                num("nan"),
                num("-inf"),
                num("NaN"),
                num("-Infinity"),
                num("+1")
            ])
        );
    }

    #[test]
    fn code_is_never_evaluated_and_malformed_text_is_refused_with_a_position() {
        for bad in [
            "__import__('os').system('x')",
            "{'a': open('f')}",
            "{'a': 1",
            "{'a' 1}",
            "[1 2]",
            "'unterminated",
            "{'a': 1} trailing",
            "1.2.3",
            "0x10",
            "1_000",
            "{[1]: 2}",
            "",
            "- 1",
            "{'a': {1, 2}}",
            "'\\x4'",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be refused");
        }
        let err = parse("{'a': 1,\n 'b': ?}").unwrap_err();
        assert_eq!((err.line, err.column), (2, 7));
        assert_eq!(err.to_string(), "unexpected character at line 2, column 7");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        assert!(parse(&deep).unwrap_err().message.contains("nesting"));
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
    }

    #[test]
    fn repeated_keys_take_the_last_value() {
        assert_eq!(parse("{'a': 1, 'a': 2}").unwrap().get("a"), Some(&num("2")));
    }
}
