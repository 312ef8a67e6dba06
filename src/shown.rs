//! Text that came from Redis (a key's name, a holder's host, a history entry's fields), as a
//! person may be shown it: in a terminal, a log line, a page. Anyone who can write under the
//! prefix can put any bytes there; shown raw, a newline forges a row of a table, an ESC sends
//! the terminal a command, and a bidi override makes a name read as another. Every human output
//! of dibs's passes such text through [`shown`]; JSON output escapes by its own rules.

use std::borrow::Cow;

/// `text` with every control character (C0, DEL, C1) and every character that reorders or hides
/// text (bidi marks, embeddings, overrides and isolates; zero-width characters; the line and
/// paragraph separators U+2028 and U+2029; the byte-order mark) written as an escape: `\n`,
/// `\r`, `\t`, `\e`, else `\u{202e}`. Text with none comes back as it is, without a copy.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is a control character, or one that moves, joins or hides the text around it.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn what_could_forge_a_row_or_move_text_is_escaped_and_the_rest_kept() {
        assert_eq!(
            shown("nightly-report@2026-12-01"),
            "nightly-report@2026-12-01"
        );
        assert_eq!(shown("tâche-été ✓"), "tâche-été ✓");
        assert_eq!(
            shown("x\nforged  pod-9  1 ms\u{1b}[2J"),
            "x\\nforged  pod-9  1 ms\\e[2J"
        );
        assert_eq!(shown("a\u{202e}cod.exe"), "a\\u{202e}cod.exe");
        assert_eq!(
            shown("a\u{2028}b\u{85}c\u{7f}"),
            "a\\u{2028}b\\u{85}c\\u{7f}"
        );
        assert_eq!(
            shown("\u{200b}\u{2066}\u{feff}"),
            "\\u{200b}\\u{2066}\\u{feff}"
        );
        assert!(matches!(shown("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
