//! The README stays true: its keys table is generated from the one keymap table and its
//! screenshot is the TestBackend render (`docs/screenshot.txt`, kept current by the
//! `ui_screenshot` test). A stale README fails here; `UPDATE_README=1 cargo test --test readme`
//! rewrites the generated sections.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

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
         readme` and commit README.md. Expected:\n{want}"
    ))
}

fn check(name: &str, want: &str) {
    let path = root().join("README.md");
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
    check("keys", &table);
}

#[test]
fn readme_screenshot_is_the_generated_one() {
    check("screenshot", &screenshot_block());
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
