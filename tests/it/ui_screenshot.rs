//! The README screenshot: rendered from the TestBackend (never hand-drawn) and written to
//! `docs/screenshot.txt` on every run, so it always shows the console as it is.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use ui_support::*;

#[test]
fn readme_screenshot_is_generated_from_the_test_backend() {
    let term = render(&demo().state(), 120, 32);
    let text: String = screen_text(term.backend().buffer())
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    for needle in [
        "RollingUpdate partition=2",
        "partition=2 ▲ held on current",
        "waiting: web-4 not Ready",
        "Revisions (2)",
        "Timeline",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from the screenshot:\n{text}");
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshot.txt");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    insta::assert_snapshot!("readme_120x32", text);
}
