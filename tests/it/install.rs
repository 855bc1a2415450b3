//! What the install channels ship stays true: the manual pages and completion scripts the
//! release archives carry (`assets/dist/`) are what the binary makes (`ststui man`, `ststui
//! completion SHELL`); the krew manifest template (`assets/krew/ststui.yaml`) has the shape
//! krew's schema wants and names exactly the archives the release configuration
//! (`dist-workspace.toml`) builds, with the licence inside; and the package metadata crates.io
//! and krew need is there. `UPDATE_README=1 cargo test --test it install` rewrites `assets/dist/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The completion scripts the archives carry: file name, shell.
const COMPLETIONS: [(&str, clap_complete::Shell); 5] = [
    ("ststui.bash", clap_complete::Shell::Bash),
    ("_ststui", clap_complete::Shell::Zsh),
    ("ststui.fish", clap_complete::Shell::Fish),
    ("ststui.elv", clap_complete::Shell::Elvish),
    ("_ststui.ps1", clap_complete::Shell::PowerShell),
];

/// Checks (or, with `UPDATE_README`, writes) the files of `dir` against `want`: the same names,
/// the same bytes, nothing else there.
fn generated_folder(dir: &str, want: &BTreeMap<String, Vec<u8>>) {
    let path = root().join(dir);
    let update = std::env::var_os("UPDATE_README").is_some();
    if update {
        std::fs::create_dir_all(&path).unwrap();
    }
    let mut have: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for e in std::fs::read_dir(&path).unwrap_or_else(|e| panic!("{dir}: {e}")).flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        have.insert(name, std::fs::read(e.path()).unwrap());
    }
    if have == *want {
        return;
    }
    if update {
        for name in have.keys().filter(|n| !want.contains_key(*n)) {
            std::fs::remove_file(path.join(name)).unwrap();
        }
        for (name, bytes) in want {
            std::fs::write(path.join(name), bytes).unwrap();
        }
        return;
    }
    let stale: Vec<&String> = want.keys().filter(|n| have.get(*n) != want.get(*n)).collect();
    let extra: Vec<&String> = have.keys().filter(|n| !want.contains_key(*n)).collect();
    panic!(
        "{dir} is stale (differs or missing: {stale:?}; not made by ststui: {extra:?}): run \
         `UPDATE_README=1 cargo test --test it install` and commit {dir}"
    );
}

#[test]
fn the_archives_man_pages_are_what_ststui_man_prints() {
    let pages = ststui::man::pages();
    let want: BTreeMap<String, Vec<u8>> =
        pages.iter().map(|p| (p.file.clone(), p.roff.clone())).collect();
    // ststui(1) and a page per verb, each a whole page.
    assert!(want.contains_key("ststui.1") && want.contains_key("ststui-rollout.1"), "{want:?}");
    for p in &pages {
        let text = String::from_utf8(p.roff.clone()).unwrap();
        for section in [".TH ", ".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH \"SEE ALSO\""] {
            assert!(text.contains(section), "{}: no {section}", p.file);
        }
    }
    // Every exit code docs/verbs.md's table lists is in ststui(1)'s EXIT STATUS.
    let top = String::from_utf8(want["ststui.1"].clone()).unwrap();
    let status = &top[top.find(".SH \"EXIT STATUS\"").unwrap()..];
    let status = &status[..status.find(".SH ENVIRONMENT").unwrap()];
    let verbs = std::fs::read_to_string(root().join("docs/verbs.md")).unwrap();
    let codes: Vec<&str> = verbs
        .lines()
        .skip_while(|l| !l.starts_with("| exit | meaning |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_start_matches('|').split('|').next().unwrap().trim())
        .collect();
    assert_eq!(codes, ["0", "1", "2", "3", "4"], "docs/verbs.md's exit table");
    for code in codes {
        assert!(status.contains(&format!(".TP\n\\fB{code}\\fR\n")), "exit {code}:\n{status}");
    }
    // A verb that has no page is refused, naming the verbs.
    let err = ststui::man::page(Some("nope")).unwrap_err().to_string();
    assert!(err.contains("\"nope\"") && err.contains("rollout"), "{err}");
    generated_folder("assets/dist/man", &want);
}

#[test]
fn the_archives_completions_are_what_ststui_completion_prints() {
    let want: BTreeMap<String, Vec<u8>> = COMPLETIONS
        .iter()
        .map(|(file, shell)| ((*file).to_string(), ststui::complete::script(*shell, "ststui")))
        .collect();
    for (file, bytes) in &want {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.contains("rollout") && text.contains("ststui"), "{file}");
    }
    generated_folder("assets/dist/completions", &want);
}

/// The release configuration, parsed.
fn dist() -> toml::Table {
    let text = std::fs::read_to_string(root().join("dist-workspace.toml")).unwrap();
    text.parse::<toml::Table>().unwrap_or_else(|e| panic!("dist-workspace.toml: {e}"))
}

/// `dist.KEY` as a list of strings.
fn strings(dist: &toml::Table, key: &str) -> Vec<String> {
    let list = dist["dist"].get(key).and_then(toml::Value::as_array);
    let list = list.unwrap_or_else(|| panic!("dist-workspace.toml: no dist.{key} list"));
    list.iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// The root manifest's `[workspace.package]`.
fn workspace_package() -> toml::Table {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    manifest["workspace"]["package"].as_table().unwrap().clone()
}

#[test]
fn the_release_configuration_builds_what_the_channels_name() {
    let dist = dist();
    let targets = strings(&dist, "targets");
    for t in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "aarch64-apple-darwin"] {
        assert!(targets.iter().any(|x| x == t), "dist.targets lacks {t}: {targets:?}");
    }
    // krew takes .tar.gz and .zip only (never cargo-dist's default .tar.xz).
    assert_eq!(dist["dist"]["unix-archive"].as_str(), Some(".tar.gz"));
    // The licence and the README go in by cargo-dist's auto-includes (files at the root).
    assert_eq!(dist["dist"]["auto-includes"].as_bool(), Some(true));
    for need in ["LICENSE", "README.md"] {
        assert!(root().join(need).is_file(), "{need} is not at the repository's root");
    }
    let include = strings(&dist, "include");
    for need in ["assets/dist/man/", "assets/dist/completions/"] {
        assert!(include.iter().any(|i| i == need), "dist.include lacks {need}: {include:?}");
        assert!(root().join(need).is_dir(), "{need} is not in the repository");
    }
    let installers = strings(&dist, "installers");
    assert!(installers.iter().any(|i| i == "shell") && installers.iter().any(|i| i == "homebrew"));
    assert_eq!(dist["dist"]["checksum"].as_str(), Some("sha256"));
    assert_eq!(dist["dist"]["github-attestations"].as_bool(), Some(true));
}

/// The krew template with krew-release-bot's expressions filled as a release of `tag` would.
fn krew_rendered(tag: &str) -> String {
    let text = std::fs::read_to_string(root().join("assets/krew/ststui.yaml")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let line = line.replace("{{ .TagName }}", tag);
        match line.trim_start().strip_prefix("{{addURIAndSha \"") {
            Some(rest) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                let uri = rest.split('"').next().unwrap();
                assert!(rest.ends_with("\" .TagName }}"), "{line}");
                out.push_str(&format!("{indent}uri: {uri}\n{indent}sha256: {}\n", "0".repeat(64)));
            }
            None => {
                assert!(
                    !line.contains("{{"),
                    "an expression krew-release-bot does not fill: {line}"
                );
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut at = v;
    for key in path {
        at = &at[*key];
    }
    at.as_str().unwrap_or_else(|| panic!("krew manifest: {path:?} is not a string"))
}

#[test]
fn the_krew_manifest_has_krews_shape_and_names_the_releases_archives() {
    let package = workspace_package();
    let version = package["version"].as_str().unwrap();
    let tag = format!("v{version}");
    let manifest: Value = serde_yaml_ng::from_str(&krew_rendered(&tag)).unwrap();
    assert_eq!(text(&manifest, &["apiVersion"]), "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(text(&manifest, &["kind"]), "Plugin");
    // The plugin's name is how kubectl runs it (`kubectl ststui`) and the manifest's file name.
    assert_eq!(text(&manifest, &["metadata", "name"]), "ststui");
    assert_eq!(text(&manifest, &["spec", "version"]), tag);
    assert_eq!(text(&manifest, &["spec", "homepage"]), package["homepage"].as_str().unwrap());
    let short = text(&manifest, &["spec", "shortDescription"]);
    assert!(!short.is_empty() && short.len() <= 70 && !short.contains('\n'), "{short:?}");
    assert!(!text(&manifest, &["spec", "description"]).trim().is_empty());
    let platforms = manifest["spec"]["platforms"].as_sequence().unwrap();
    let dist = dist();
    let mut named = Vec::new();
    let release = format!("{}/releases/download/{tag}/", package["repository"].as_str().unwrap());
    for p in platforms {
        let labels = &p["selector"]["matchLabels"];
        let (os, arch) = (text(labels, &["os"]), text(labels, &["arch"]));
        let target = match (os, arch) {
            ("linux", "amd64") => "x86_64-unknown-linux-musl",
            ("linux", "arm64") => "aarch64-unknown-linux-musl",
            ("darwin", "amd64") => "x86_64-apple-darwin",
            ("darwin", "arm64") => "aarch64-apple-darwin",
            other => panic!("a platform krew knows but the release does not build: {other:?}"),
        };
        named.push(target.to_string());
        // cargo-dist's archive: NAME-TARGET.tar.gz, its files under NAME-TARGET/.
        let archive = format!("ststui-{target}");
        assert_eq!(text(p, &["uri"]), format!("{release}{archive}.tar.gz"));
        let sha = text(p, &["sha256"]);
        assert!(sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()), "{sha}");
        assert_eq!(text(p, &["bin"]), "ststui");
        let files: Vec<(&str, &str)> = p["files"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| (text(f, &["from"]), text(f, &["to"])))
            .collect();
        for want in ["ststui", "LICENSE"] {
            let from = format!("{archive}/{want}");
            assert!(files.contains(&(from.as_str(), ".")), "{target}: {from} not installed");
        }
    }
    let mut built: Vec<String> =
        strings(&dist, "targets").into_iter().filter(|t| !t.contains("windows")).collect();
    built.sort();
    named.sort();
    assert_eq!(named, built, "krew's platforms are the release's unix targets");
}

#[test]
fn the_packages_carry_what_crates_io_and_krew_need() {
    let package = workspace_package();
    for key in ["license", "repository", "homepage", "rust-version", "keywords", "categories"] {
        assert!(package.contains_key(key), "[workspace.package] has no {key}");
    }
    assert_eq!(package["license"].as_str(), Some("Apache-2.0"));
    let licence = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    assert!(licence.contains("Apache License") && licence.contains("Version 2.0"));
    // Every crate of the workspace takes them, and says what it is.
    let mut manifests = vec![root().join("Cargo.toml")];
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        manifests.push(e.path().join("Cargo.toml"));
    }
    for m in manifests {
        let t: toml::Table = std::fs::read_to_string(&m).unwrap().parse().unwrap();
        let p = t["package"].as_table().unwrap();
        let shown = m.strip_prefix(root()).unwrap_or(Path::new("?")).display().to_string();
        assert!(p.get("description").and_then(toml::Value::as_str).is_some(), "{shown}");
        for key in ["license", "repository", "homepage", "rust-version"] {
            let inherited = p.get(key).and_then(|v| v.get("workspace")).is_some();
            assert!(inherited, "{shown}: {key} is not the workspace's");
        }
    }
}
