//! Text a peer chose, made safe to print: one line, no terminal controls, bounded length.
//!
//! A stranger's string reaches the server's log and its error messages (a parser's "unknown
//! variant" quotes it back). Unescaped, a newline forges a log line of the stranger's making
//! and an escape sequence drives the operator's terminal; unbounded, one frame writes 64 KiB
//! of log. Every control character (Unicode category Cc: C0, DEL, C1), the line and paragraph
//! separators and the bidirectional overrides (which reorder what a terminal shows) are
//! written as `\u{…}`; everything else is kept, so an ordinary message reads as it was.

/// How much of a peer's string an error message quotes.
pub const PEER_TEXT_BYTES: usize = 256;

/// Characters that change how the rest of a line is shown, though not controls: the line and
/// paragraph separators, and the bidirectional marks, embeddings, overrides and isolates.
fn reorders_or_breaks(c: char) -> bool {
    matches!(
        c,
        '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// `text` with every control or reordering character escaped, cut to at most `max_bytes`
/// (whole characters; the cut says how many bytes of the escaped text it left out).
pub fn escape(text: &str, max_bytes: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_bytes) + 16);
    let mut left_out_bytes = 0usize;
    for c in text.chars() {
        let start = out.len();
        if c.is_control() || reorders_or_breaks(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
        if out.len() > max_bytes || left_out_bytes > 0 {
            left_out_bytes += out.len() - start;
            out.truncate(start);
        }
    }
    if left_out_bytes > 0 {
        out.push_str(&format!("…[{left_out_bytes} more bytes]"));
    }
    out
}

/// A peer's string for an error message: escaped and cut at `PEER_TEXT_BYTES`.
pub fn peer(text: &str) -> String {
    escape(text, PEER_TEXT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_kept_as_it_was() {
        assert_eq!(
            escape("unknown variant `x`, é ok", 100),
            "unknown variant `x`, é ok"
        );
    }

    #[test]
    fn controls_separators_and_overrides_are_escaped() {
        let forged = "x\nclient 10.9.9.9:1: FORGED\u{1b}[2J\r\u{85}\u{2028}\u{202e}\u{7f}";
        let safe = escape(forged, 1000);
        assert_eq!(
            safe,
            "x\\u{a}client 10.9.9.9:1: FORGED\\u{1b}[2J\\u{d}\\u{85}\\u{2028}\\u{202e}\\u{7f}"
        );
        assert!(!safe
            .chars()
            .any(|c| c.is_control() || reorders_or_breaks(c)));
    }

    #[test]
    fn long_text_is_cut_on_a_character_and_says_how_much_is_left_out() {
        let safe = escape(&"é".repeat(100), 11);
        // Five two-byte characters fit in 11 bytes; 95 are left out.
        assert_eq!(safe, format!("{}…[190 more bytes]", "é".repeat(5)));
        let long = "y".repeat(65_000);
        assert!(peer(&long).len() < PEER_TEXT_BYTES + 32);
        // An escape is never cut in half: it is left out whole.
        assert_eq!(escape("ab\n", 4), "ab…[5 more bytes]");
    }
}
