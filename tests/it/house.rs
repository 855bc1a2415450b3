//! The house rules, checked on the tree (milliseconds, no build): ARCHITECTURE.md's crate table
//! against the crates' manifests and every file's `crate::`/`ststui_…::` paths, the size of a
//! file, the `Result<_, String>` ceiling, what the console's state may import, and no `use`
//! circle between the files of the folders where one crept back before. Each failure names the
//! file, the rule and what to do; CONTRIBUTING.md says how to change a rule.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// At most this many `Result<_, String>` outside tests: an error a caller decides on gets a type
/// (lower this as they do; never raise it).
const RESULT_STRING_CEILING: usize = 30;
/// No source file longer (split it where it reads best).
const MAX_FILE_LINES: usize = 600;
/// The folders where a file-level `use` circle is refused (each came back once).
const NO_CIRCLES_IN: [&str; 4] = ["app", "plan", "sim", "serve"];

use super::spec_refs::root;

/// Every `.rs` file under `dir`, as paths relative to the workspace root.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut found = Vec::new();
    super::spec_refs::sources(dir, &mut found);
    out.extend(found.into_iter().map(|p| p.strip_prefix(root()).unwrap().to_path_buf()));
}

/// The source files of the product: `src/` and every crate's `src/`.
fn product_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    for c in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        sources(&c.path().join("src"), &mut files);
    }
    files.sort();
    files
}

/// A file of unit tests (or their fixtures): the rules for the product skip it.
fn is_test_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "fixtures.rs"
        || p.components().any(|c| c.as_os_str() == "tests")
}

/// The text of a product file without its inline `#[cfg(test)] mod tests { … }` (kept last, as
/// rustfmt and the house keep it).
fn product_text(p: &Path) -> String {
    let text = std::fs::read_to_string(root().join(p)).unwrap();
    match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// One row of ARCHITECTURE.md's crate table.
#[derive(Debug)]
struct Layer {
    krate: String,
    folder: String,
    /// Its modules, in order: each may use the ones before it.
    modules: Vec<String>,
    may_use: Vec<String>,
    must_not: Vec<String>,
}

/// The names in backticks of a table cell (`—` for none).
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The crate table of ARCHITECTURE.md: the rows after the header naming `crate | folder`.
fn layers() -> Vec<Layer> {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("| crate | folder |")
        .expect("ARCHITECTURE.md has the crate table (| crate | folder | modules | …)");
    let rows: Vec<Layer> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 5, "ARCHITECTURE.md's crate table: five cells in {l}");
            Layer {
                krate: ticked(cells[0]).concat(),
                folder: ticked(cells[1]).concat(),
                modules: ticked(cells[2]),
                may_use: ticked(cells[3]),
                must_not: cells[4]
                    .split(',')
                    .map(|s| s.trim().trim_matches('`').to_string())
                    .filter(|s| !s.is_empty() && s != "—")
                    .collect(),
            }
        })
        .collect();
    assert!(rows.len() >= 7, "ARCHITECTURE.md's crate table has {} rows", rows.len());
    rows
}

/// The dependency names of a manifest's `[dependencies]` (not dev or build ones).
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut on = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            on = line == "[dependencies]";
            continue;
        }
        if on && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
            out.push(name.to_string());
        }
    }
    out
}

/// The top-level module names a file reaches through `crate::` (`use crate::{a, b::c}` too).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        if text[..i].ends_with('$')
            || text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut word = String::new();
            let mut first = true;
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => first = true,
                    c if first && (c.is_alphanumeric() || c == '_') => word.push(c),
                    _ if first && !word.is_empty() => {
                        out.insert(std::mem::take(&mut word));
                        first = false;
                    }
                    _ => {}
                }
                if ch == ',' && depth == 0 && !word.is_empty() {
                    out.insert(std::mem::take(&mut word));
                }
            }
            if !word.is_empty() {
                out.insert(word);
            }
        } else {
            let word: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !word.is_empty() {
                out.insert(word);
            }
        }
    }
    out
}

/// ARCHITECTURE.md's crate table is the compiler's: every crate of the workspace is a row, its
/// manifest depends only on the crates the row allows and on none of the libraries it forbids,
/// and every file reaches only its own crate's earlier modules and the allowed crates' modules.
#[test]
fn the_crate_table_of_architecture_is_what_the_crates_do() {
    let layers = layers();
    let mut problems = Vec::new();
    let on_disk: BTreeSet<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
        .collect();
    let listed: BTreeSet<String> = layers.iter().map(|l| l.folder.clone()).collect();
    for missing in on_disk.difference(&listed) {
        problems.push(format!(
            "{missing}: a crate ARCHITECTURE.md's crate table does not list (add its row: what it \
             holds and what it may use)"
        ));
    }
    let module_of: BTreeMap<&str, &Layer> =
        layers.iter().flat_map(|l| l.modules.iter().map(move |m| (m.as_str(), l))).collect();
    for layer in &layers {
        let manifest = root().join(&layer.folder).join("Cargo.toml");
        assert!(
            manifest.is_file(),
            "ARCHITECTURE.md names {} at {}: no Cargo.toml",
            layer.krate,
            layer.folder
        );
        for dep in dependencies(&manifest) {
            let ours = dep.starts_with("ststui");
            if (ours && !layer.may_use.contains(&dep)) || layer.must_not.contains(&dep) {
                problems.push(format!(
                    "{}/Cargo.toml: {} depends on {dep}, which ARCHITECTURE.md's crate table \
                     does not allow (an arrow up: move the code down, or pass it in)",
                    layer.folder, layer.krate
                ));
            }
        }
        for m in &layer.modules {
            let src = root().join(&layer.folder).join("src");
            if !src.join(m).is_dir() && !src.join(format!("{m}.rs")).is_file() {
                problems.push(format!(
                    "ARCHITECTURE.md: module {m} of {} is neither {}/src/{m}/ nor {m}.rs",
                    layer.krate, layer.folder
                ));
            }
        }
    }
    for file in product_files() {
        if is_test_file(&file) {
            continue;
        }
        let text = product_text(&file);
        let s = file.to_string_lossy();
        let Some(layer) = layers.iter().find(|l| {
            let prefix =
                if l.folder == "." { "src/".to_string() } else { format!("{}/src/", l.folder) };
            s.starts_with(&prefix)
        }) else {
            continue;
        };
        let prefix =
            if layer.folder == "." { "src/".into() } else { format!("{}/src/", layer.folder) };
        let own = s[prefix.len()..].split(['/', '.']).next().unwrap_or("").to_string();
        let Some(pos) = layer.modules.iter().position(|m| *m == own) else {
            if !matches!(own.as_str(), "lib" | "main" | "console" | "launch" | "tui") {
                problems.push(format!(
                    "{s}: module {own} is in no row of ARCHITECTURE.md's crate table"
                ));
            }
            continue;
        };
        for used in crate_paths(&text) {
            let earlier = layer.modules[..=pos].contains(&used);
            let below =
                module_of.get(used.as_str()).is_some_and(|l| layer.may_use.contains(&l.krate));
            let known = module_of.contains_key(used.as_str());
            if known && !earlier && !below {
                problems.push(format!(
                    "{s}: uses crate::{used}, which ARCHITECTURE.md's crate table puts above \
                     {own} (an arrow up: move what it needs down, or pass it in)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No source file over the limit.
#[test]
fn no_source_file_is_over_600_lines() {
    let long: Vec<String> = product_files()
        .into_iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(root().join(&f)).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| {
                format!(
                    "{}: {n} lines, over {MAX_FILE_LINES} (split it where it reads best: a \
                     submodule per concern, its tests in a tests.rs beside it)",
                    f.display()
                )
            })
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// `Result<_, String>` outside tests stays under the ceiling.
#[test]
fn result_string_stays_under_its_ceiling() {
    let mut found = Vec::new();
    for f in product_files().into_iter().filter(|f| !is_test_file(f)) {
        let text = product_text(&f);
        for (i, _) in text.match_indices("Result<") {
            let rest = &text[i..];
            let end = rest.find(['{', ';', '\n']).unwrap_or(rest.len());
            let sig = &rest[..end];
            if sig.contains(", String>") || sig.contains(",String>") {
                let line = text[..i].lines().count();
                found.push(format!("{}:{line}", f.display()));
            }
        }
    }
    assert!(
        found.len() <= RESULT_STRING_CEILING,
        "{} Result<_, String> outside tests, over the ceiling of {RESULT_STRING_CEILING}: give \
         the new error a type (thiserror) where a caller decides on it. Found:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The console modules the state may import: leaves that import nothing of the console but each
/// other — not the state, so no circle runs through them (the reducer's vocabulary, the object
/// mirror, the grid's view model). Anything else the state needs moves under `state/`.
const STATE_LEAVES: [&str; 7] =
    ["action", "events", "facts", "keymap", "mirror", "refusal", "view::grid"];

/// The `crate::app::…` modules a file names (`a` or `a::b` for the leaves that are a child).
fn app_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::app::") {
        let rest = &text[i + "crate::app::".len()..];
        let path: String =
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let mut parts = path.split("::").filter(|p| !p.is_empty());
        let first = parts.next().unwrap_or("").to_string();
        let second = parts.next().unwrap_or("");
        let name =
            if first == "view" && !second.is_empty() { format!("view::{second}") } else { first };
        if !name.is_empty() && name.chars().next().is_some_and(char::is_lowercase) {
            out.insert(name);
        }
    }
    out
}

/// The console's state is data: `app/state/` imports only itself and its allowed leaves, and
/// each leaf imports only the state and the other leaves — so no logic of the console is
/// reached from the state, and a pane's memoized view data has one home.
#[test]
fn the_console_state_imports_only_its_leaves() {
    let app = Path::new("crates/console/src/app");
    let mut state_files = Vec::new();
    sources(&root().join(app.join("state")), &mut state_files);
    assert!(!state_files.is_empty(), "{} holds no file", app.join("state").display());
    let mut leaf_files: Vec<(String, PathBuf)> = Vec::new();
    for leaf in STATE_LEAVES {
        let rel = leaf.replace("::", "/");
        let file = app.join(format!("{rel}.rs"));
        assert!(root().join(&file).is_file(), "STATE_LEAVES names {leaf}: no {}", file.display());
        leaf_files.push((leaf.to_string(), file));
        let mut children = Vec::new();
        sources(&root().join(app.join(&rel)), &mut children);
        leaf_files.extend(children.into_iter().map(|c| (leaf.to_string(), c)));
    }
    let leaves: BTreeSet<String> = STATE_LEAVES.iter().map(|l| l.to_string()).collect();
    let mut problems = Vec::new();
    let files = state_files.iter().map(|f| ("state".to_string(), f.clone())).chain(leaf_files);
    for (what, f) in files.filter(|(_, f)| !is_test_file(f)) {
        let text = product_text(&f);
        let who =
            if what == "state" { "the console's state".into() } else { format!("the leaf {what}") };
        // The state may use itself and the leaves; a leaf only the leaves.
        let mut allowed = leaves.clone();
        if what == "state" {
            allowed.insert("state".into());
        }
        for used in app_modules(&text).difference(&allowed) {
            problems.push(format!(
                "{}: uses crate::app::{used}; {who} imports only the state and its leaves ({}): \
                 move the type it needs under state/",
                f.display(),
                STATE_LEAVES.join(", ")
            ));
        }
        // `super::` paths, made app-relative from the file's own module.
        let rel = f.strip_prefix(app).unwrap_or(&f).to_path_buf();
        let mut here: Vec<String> =
            rel.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if here.last().is_some_and(|l| l == "mod") {
            here.pop();
        }
        for (i, _) in text.match_indices("super::") {
            if text[..i].ends_with("super::") || text[..i].ends_with(|c: char| c.is_alphanumeric())
            {
                continue;
            }
            let mut base = here.clone();
            let mut rest = &text[i..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            // The module path it names: its lowercase segments (`view::grid` of
            // `super::view::grid::GridMemo`).
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<&str> = path
                .split("::")
                .take_while(|w| w.chars().next().is_some_and(char::is_lowercase))
                .collect();
            if segments.is_empty() {
                continue;
            }
            base.extend(segments.iter().map(|w| (*w).to_string()));
            let name = base.join("::");
            let inside = (what == "state" && base.first().is_some_and(|b| b == "state"))
                || STATE_LEAVES.iter().any(|l| name == *l || name.starts_with(&format!("{l}::")));
            if !inside {
                problems.push(format!(
                    "{}: reaches crate::app::{name}; {who} imports only the state and its leaves \
                     ({}): move the type it needs under state/",
                    f.display(),
                    STATE_LEAVES.join(", ")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The files of a folder as module paths (`a::b` for `a/b.rs` or `a/b/mod.rs`), relative to the
/// crate's `src/`.
fn module_of_file(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> =
        rel.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib" || p == "main") {
        parts.pop();
    }
    parts
}

/// Where a `use` path leads: the longest prefix of it that is a file's module.
fn resolve(path: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]).cloned())
}

/// The paths a file's `use` lines name, made absolute (`crate::`, `super::`, `self::`), one per
/// leaf of a `{…}` group.
fn use_paths(text: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        rest = &rest[i + 4..];
        let line_start = before.rsplit('\n').next().unwrap_or("");
        let head = line_start.trim_start();
        let head = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .fold(head, |h, p| h.strip_prefix(p).unwrap_or(h));
        if !head.trim().is_empty() {
            continue;
        }
        let end = rest.find(';').unwrap_or(rest.len());
        let stmt: String =
            rest[..end].replace(" as ", "@").chars().filter(|c| !c.is_whitespace()).collect();
        let mut leaves = Vec::new();
        expand("", &stmt, &mut leaves);
        for leaf in leaves {
            let segs: Vec<String> = leaf.split("::").map(str::to_string).collect();
            let abs = match segs.first().map(String::as_str) {
                Some("crate") => segs[1..].to_vec(),
                Some("self") => here.iter().chain(&segs[1..]).cloned().collect(),
                Some("super") => {
                    let mut base = here.to_vec();
                    let mut s = &segs[..];
                    while s.first().is_some_and(|x| x == "super") {
                        base.pop();
                        s = &s[1..];
                    }
                    base.extend(s.iter().cloned());
                    base
                }
                _ => continue,
            };
            out.push(abs);
        }
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(prefix: &str, s: &str, out: &mut Vec<String>) {
    if let Some(open) = s.find('{') {
        let head = &s[..open];
        let inner = &s[open + 1..s.rfind('}').unwrap_or(s.len())];
        let mut depth = 0;
        let mut start = 0;
        let mut parts = Vec::new();
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        for p in parts.into_iter().filter(|p| !p.is_empty()) {
            expand(&format!("{prefix}{head}"), p, out);
        }
    } else {
        let s = s.split('@').next().unwrap_or(s);
        let full = format!("{prefix}{s}");
        out.push(full.trim_end_matches("::self").to_string());
    }
}

/// The strongly connected groups of more than one file (Tarjan's algorithm).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct T<'e> {
        edges: &'e BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<PathBuf, usize>,
        low: BTreeMap<PathBuf, usize>,
        stack: Vec<PathBuf>,
        on: BTreeSet<PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit(t: &mut T<'_>, v: &PathBuf) {
        let n = t.index.len();
        t.index.insert(v.clone(), n);
        t.low.insert(v.clone(), n);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        for w in t.edges.get(v).cloned().unwrap_or_default() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[v].min(t.low[&w]);
                t.low.insert(v.clone(), l);
            } else if t.on.contains(&w) {
                let l = t.low[v].min(t.index[&w]);
                t.low.insert(v.clone(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = &w == v;
                group.push(w);
                if done {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The file-level `use` graph of a crate (its product files), and its circles.
fn crate_circles(src: &Path) -> Vec<Vec<PathBuf>> {
    let mut files = Vec::new();
    sources(&root().join(src), &mut files);
    let files: Vec<PathBuf> = files.into_iter().filter(|f| !is_test_file(f)).collect();
    let modules: BTreeMap<Vec<String>, PathBuf> =
        files.iter().map(|f| (module_of_file(src, f), f.clone())).collect();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for f in &files {
        // `self::` and `super::` are relative to the file's module (a folder's mod.rs is the
        // folder's module).
        let here = module_of_file(src, f);
        for path in use_paths(&product_text(f), &here) {
            if let Some(to) = resolve(&path, &modules).filter(|to| to != f) {
                edges.entry(f.clone()).or_default().insert(to);
            }
        }
        edges.entry(f.clone()).or_default();
    }
    circles(&edges)
}

/// No file-level `use` circle in the folders where one came back before, and none over two
/// files anywhere.
#[test]
fn no_use_circles() {
    let mut problems = Vec::new();
    let mut srcs = vec![PathBuf::from("src")];
    for c in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        srcs.push(c.path().join("src").strip_prefix(root()).unwrap().to_path_buf());
    }
    for src in &srcs {
        for group in crate_circles(src) {
            let folder = group[0]
                .strip_prefix(src)
                .unwrap()
                .iter()
                .next()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let folder = folder.trim_end_matches(".rs").to_string();
            if group.len() > 2 || NO_CIRCLES_IN.contains(&folder.as_str()) {
                let names: Vec<String> = group.iter().map(|p| p.display().to_string()).collect();
                problems.push(format!(
                    "a use circle of {} files: {} (move what they share into a leaf file both \
                     use, or make one the other's child)",
                    group.len(),
                    names.join(", ")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
