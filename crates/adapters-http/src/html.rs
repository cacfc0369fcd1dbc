//! Text written into HTML or SVG: one way to escape it, for the API's docs page and the EUDR
//! pictures of the command line.

/// Escapes text for HTML and SVG (XML) content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_quotes_are_escaped_and_other_text_kept() {
        assert_eq!(
            escape_html(r#"<a href="x">Tom's & Jerry's</a> Café"#),
            "&lt;a href=&quot;x&quot;&gt;Tom&#39;s &amp; Jerry&#39;s&lt;/a&gt; Café"
        );
    }
}
