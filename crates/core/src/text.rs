//! Text from others made safe to print: the one function every text output goes through
//! ([`escape_controls`]), so a value written by whoever may patch an object (an image name, an
//! annotation, an Event's message, a plan's halt reason) cannot drive the terminal it is printed
//! on — move the cursor, clear the screen, set the window title, write to the clipboard.
//!
//! The console's renderer drops control characters itself (ratatui), the JSON outputs escape
//! them (serde_json); the plain-text outputs (the verbs' lines, the headless timeline, errors
//! on stderr) call this. Hand-written: it is a dozen lines, and no crate escapes exactly the
//! set a terminal obeys while keeping tab and newline.
//!
//! Owns: that rule. Pure.

use std::borrow::Cow;

/// `s` with every control character but tab escaped (`\u{1b}` for ESC): for one line.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\t')
}

/// `s` with every control character but tab and newline escaped: for text of several lines.
pub fn escape_lines(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\t' || c == '\n')
}

/// At most `n` characters of `s`, a `…` marking the cut: a value anyone may write (a record's
/// reason, a pod name in a record) is never shown whole.
pub fn clip(s: &str, n: usize) -> Cow<'_, str> {
    match s.char_indices().nth(n) {
        Some((i, _)) => Cow::Owned(format!("{}…", &s[..i])),
        None => Cow::Borrowed(s),
    }
}

/// `s` clipped to `n` characters, then escaped: a value from a record as one line shows it.
pub fn shown(s: &str, n: usize) -> String {
    escape_controls(&clip(s, n)).into_owned()
}

/// Prints `text` (a line, or several) on stdout, escaped: a closed pipe is not an error worth
/// more than the exit code.
pub fn out_line(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{}", escape_lines(text));
}

/// Prints `text` on stderr, escaped (a closed stream is ignored).
pub fn err_line(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{}", escape_lines(text));
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    // C1 controls (U+0080–U+009F) are controls too: some terminals obey 8-bit CSI (U+009B).
    let bad = |c: char| c.is_control() && !keep(c);
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_obeys_and_keeps_tab_and_newlines_where_asked() {
        assert_eq!(escape_controls("web\x1b[2J"), "web\\u{1b}[2J");
        assert_eq!(escape_controls("a\tb"), "a\tb");
        assert_eq!(escape_controls("a\nb"), "a\\u{a}b");
        assert_eq!(escape_lines("a\nb\x07"), "a\nb\\u{7}");
        assert_eq!(escape_controls("\u{9b}31m"), "\\u{9b}31m", "8-bit CSI");
        assert!(matches!(escape_controls("nginx:1.26"), Cow::Borrowed(_)));
    }

    #[test]
    fn clips_at_a_character_count_and_marks_the_cut() {
        assert_eq!(clip("web-3", 5), "web-3");
        assert_eq!(clip("web-33", 5), "web-3…");
        assert_eq!(clip("ééééé", 2), "éé…", "characters, not bytes");
        assert_eq!(shown("a\x1bbc", 2), "a\\u{1b}…");
        assert_eq!(shown(&"x".repeat(50_000), 120).chars().count(), 121);
    }
}
