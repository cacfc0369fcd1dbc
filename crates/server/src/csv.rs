//! CSV fields as the command line writes them (`roastery eudr --format csv`, `roastery trace`):
//! quoted when they must be (RFC 4180), and never read as a formula by a spreadsheet.

/// The characters a spreadsheet reads a cell as a formula (or a command) by, when it begins
/// with one: lot names and customers come from clients and must stay text.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// One CSV field: a value beginning like a formula gets a leading `'` (spreadsheets show the
/// text without it and never evaluate it), then quoting when a comma, quote or line break needs
/// it.
pub fn field(value: &str) -> String {
    let value = if value.starts_with(FORMULA_STARTS) {
        format!("'{value}")
    } else {
        value.to_owned()
    };
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_plain_text_is_kept() {
        assert_eq!(field("Huila"), "Huila");
        assert_eq!(field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field("+1"), "'+1");
        assert_eq!(field("-2+3"), "'-2+3");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("\tcmd"), "'\tcmd");
        assert_eq!(field("\rcmd"), "\"'\rcmd\"");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("Café = good"), "Café = good");
    }
}
