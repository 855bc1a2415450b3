//! The specification the source cites lives in the repository: every `spec/….md` a source file
//! names exists, and every "spec N.N" section the source cites is a heading of
//! `spec/controller.md`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir` (none when it is no folder; the house test reads the tree the
/// same way).
pub(crate) fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Section numbers after "spec " (any case): `spec 3.6.1`, `Spec 2.1–2.4, 2.7` (the first).
fn cited_sections(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    for (i, _) in lower.match_indices("spec ") {
        let rest = &lower[i + 5..];
        let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let number = number.trim_end_matches('.').to_string();
        if number.contains('.') && number.starts_with(|c: char| c.is_ascii_digit()) {
            out.push(number);
        }
    }
    out
}

#[test]
fn cited_spec_files_and_sections_resolve() {
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    sources(&root().join("crates"), &mut files);
    let controller = std::fs::read_to_string(root().join("spec/controller.md")).unwrap();
    let headings: Vec<String> = controller
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').split_whitespace().next().map(str::to_string))
        .map(|n| n.trim_end_matches('.').to_string())
        .collect();
    let mut missing = Vec::new();
    let mut cited = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for doc in ["spec/controller.md", "spec/scenario.md"] {
            if text.contains(doc) && !root().join(doc).is_file() {
                missing.push(format!("{}: {doc} does not exist", f.display()));
            }
        }
        for n in cited_sections(&text) {
            cited += 1;
            if !headings.contains(&n) {
                missing.push(format!(
                    "{}: spec {n} is not a section of spec/controller.md",
                    f.display()
                ));
            }
        }
    }
    assert!(cited > 20, "the scan found only {cited} citations");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
