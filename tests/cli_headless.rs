//! The `ststui` binary, headless: exit codes 0 / 1 / 2, the timeline alone on stdout (valid
//! JSONL), diagnostics on stderr, byte-identical output run to run, and the soak's summary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ststui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ststui"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run ststui: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn asset(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn temp(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ststui-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn exit_0_with_a_jsonl_timeline_on_stdout() {
    let out = ststui(&[
        "sim",
        "--headless",
        "--script",
        &asset("ordered-scale.scenario"),
        "--format",
        "jsonl",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut last_t = 0.0;
    let mut types = std::collections::BTreeSet::new();
    for line in stdout.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        let t = v["t"].as_f64().unwrap_or_else(|| panic!("no t: {line}"));
        assert!(t >= last_t, "time went backwards: {line}");
        last_t = t;
        types.insert(v["type"].as_str().unwrap_or_default().to_string());
    }
    for ty in ["command", "controller", "kubelet", "status", "blocked", "expect"] {
        assert!(types.contains(ty), "no {ty} event in:\n{stdout}");
    }
}

#[test]
fn exit_1_when_an_expect_fails() {
    let script = temp("failing.scenario", "create web replicas=2\nsettle\nexpect web ready=5\n");
    let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("[3] FAILED: web: ready: expected 5, got 2"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("failing.scenario:3: expect failed: expect web ready=5"), "{stderr}");
}

#[test]
fn exit_2_for_a_bad_script_or_manifest() {
    let script = temp("typo.scenario", "create web\n\nscael web 3\n");
    let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("typo.scenario:3: unknown command \"scael\""), "{stderr}");

    let manifest =
        temp("broken.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: [\n");
    let out = ststui(&["sim", "--headless", "-f", &manifest.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("broken.yaml:"), "{}", text(&out.stderr));
}

#[test]
fn the_timeline_is_byte_identical_run_to_run() {
    let args = ["sim", "--headless", "--script", &asset("parallel.scenario"), "--seed", "7"];
    let a = ststui(&args);
    let b = ststui(&args);
    assert_eq!(a.status.code(), Some(0));
    assert!(!a.stdout.is_empty());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn text_format_is_aligned_with_virtual_time() {
    let out = ststui(&["sim", "--headless", "--script", &asset("on-delete.scenario")]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    assert_eq!(first, "   0.000s  command     [6] kubelet start=1s ready=1s stop=1s");
    // The type column starts at the same place on every line.
    assert!(stdout.lines().all(|l| l.len() > 21 && &l[9..11] == "  "), "{stdout}");
}

#[test]
fn soak_prints_its_summary() {
    let out = ststui(&["sim", "--soak", "25", "--seed", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    let summary = stdout.lines().next().unwrap_or_default();
    let words: Vec<&str> = summary.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"25"), "{summary}");
    assert_eq!(&words[1..], ["runs,", words[2], "events,", "0", "violations"], "{summary}");
}

/// The console without a terminal (piped, as in CI or `| less`) says what to run instead, exits
/// 2, and writes nothing on stdout (no stray escape sequences).
#[test]
fn the_console_without_a_terminal_points_to_headless() {
    let out = ststui(&["sim"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{:?}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("the console needs a terminal"), "{err}");
    assert!(err.contains("ststui sim --headless --script FILE"), "{err}");
}

/// Flags that do not apply together are refused with a usage error, not ignored.
#[test]
fn conflicting_flags_exit_2_naming_them() {
    let out = ststui(&["sim", "--soak", "3", "--script", "x.scenario"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("'--soak <N>' cannot be used with '--script <FILE>'"), "{err}");
    let out = ststui(&["--context", "prod", "sim"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--context is for real-cluster mode"));
}
