//! The README and the docs stay true: the key table of `docs/console.md` is generated from the
//! one keymap table and the README's screenshot is the TestBackend render
//! (`docs/screenshot.txt`, kept current by the `ui_screenshot` test); every page of `docs/` is
//! linked from the README, every relative link resolves (its `#anchor` to a heading), and every
//! file an example names under `assets/` or `benches/tools/` is shipped. A stale generated
//! section fails here; `UPDATE_README=1 cargo test --test it readme` rewrites it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::PathBuf;

use ststui::app::keymap::help_sections;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The markdown keys table, one row per binding of the console, grouped as in the help overlay.
fn keys_table() -> String {
    let mut out = String::from("| keys | what they do |\n| --- | --- |\n");
    for (group, lines) in help_sections(None) {
        out.push_str(&format!("| **{}** | |\n", group.title()));
        for line in lines {
            let keys: Vec<String> =
                line.keys.split(' ').map(|k| format!("`{}`", k.replace('|', "\\|"))).collect();
            out.push_str(&format!("| {} | {} |\n", keys.join(" "), line.help.replace('|', "\\|")));
        }
    }
    out
}

fn screenshot_block() -> String {
    let path = root().join("docs/screenshot.txt");
    let shot = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("```text\n{shot}```\n")
}

/// Replaces (or checks) the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
fn generated_section(readme: &str, name: &str, want: &str) -> Result<String, String> {
    let (begin, end) = (format!("<!-- {name}:begin -->\n"), format!("<!-- {name}:end -->"));
    let start = readme.find(&begin).ok_or(format!("README has no {begin:?} marker"))? + begin.len();
    let stop = start + readme[start..].find(&end).ok_or(format!("README has no {end:?} marker"))?;
    if &readme[start..stop] == want {
        return Ok(readme.to_string());
    }
    if std::env::var_os("UPDATE_README").is_some() {
        return Ok(format!("{}{want}{}", &readme[..start], &readme[stop..]));
    }
    Err(format!(
        "the README's generated {name} section is stale; run `UPDATE_README=1 cargo test --test \
         it readme` and commit README.md. Expected:\n{want}"
    ))
}

pub(crate) fn check(file: &str, name: &str, want: &str) {
    let path = root().join(file);
    let readme =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match generated_section(&readme, name, want) {
        Ok(new) if new != readme => {
            std::fs::write(&path, new).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        Ok(_) => {}
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn readme_keys_table_is_the_keymap() {
    let table = keys_table();
    assert!(table.contains("| `[` |") && table.contains("`space`"), "{table}");
    check("docs/console.md", "keys", &table);
}

#[test]
fn readme_screenshot_is_the_generated_one() {
    check("README.md", "screenshot", &screenshot_block());
}

#[test]
fn a_stale_section_is_reported() {
    let readme = "a\n<!-- keys:begin -->\nold\n<!-- keys:end -->\nb\n";
    if std::env::var_os("UPDATE_README").is_none() {
        let err = generated_section(readme, "keys", "new\n").err().unwrap_or_default();
        assert!(err.contains("stale"), "{err}");
    }
    assert_eq!(generated_section(readme, "keys", "old\n").ok().as_deref(), Some(readme));
    assert!(generated_section("no markers", "keys", "x").is_err());
}

/// The README, the root's guides and every page of `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The targets of a page's markdown links, `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(j) = rest.find(')') {
            out.push(rest[..j].to_string());
            rest = &rest[j..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces as dashes, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    text.lines().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

#[test]
fn every_docs_page_is_linked_from_the_readme_and_every_link_resolves() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut problems = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        if name.starts_with("docs/") && !readme.contains(&format!("]({name})")) {
            problems.push(format!("{name} is not linked from the README"));
        }
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((link.as_str(), ""));
            let target =
                if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            let Ok(target_text) = std::fs::read_to_string(&target) else {
                problems.push(format!("{name}: the link {link} names no file"));
                continue;
            };
            if !anchor.is_empty() && !anchors(&target_text).contains(&anchor.to_string()) {
                problems.push(format!("{name}: the link {link} names no heading"));
            }
        }
        // Examples name files the repository ships.
        for span in text.split('`').skip(1).step_by(2) {
            for word in span.split_whitespace() {
                let word = word.trim_end_matches([',', ';', ')']);
                let shipped = ["assets/", "benches/tools/"].iter().any(|p| word.starts_with(p));
                if shipped && !word.contains('*') && !root().join(word).exists() {
                    problems.push(format!("{name}: `{word}` is not in the repository"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_link_checker_finds_links_and_anchors() {
    assert_eq!(links("see [a](docs/a.md) and [b](#the-b)"), ["docs/a.md", "#the-b"]);
    assert_eq!(slug(" Where its test goes"), "where-its-test-goes");
    assert_eq!(slug("`explain -o json` (version 1)"), "explain--o-json-version-1");
}
