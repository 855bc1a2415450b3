//! The `ststui` binary, headless: exit codes 0 / 1 / 2, the timeline alone on stdout (valid
//! JSONL), diagnostics on stderr, byte-identical output run to run, and the soak's summary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::runner;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ststui(args: &[&str]) -> Output {
    runner::ststui().args(args).output().unwrap_or_else(|e| panic!("cannot run ststui: {e}"))
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

/// Scripts are read as editors write them (CR-only and CRLF endings, a byte-order mark), and
/// what cannot be read is named with the file and the problem, never at a made-up line 0.
#[test]
fn scripts_and_manifests_are_read_as_editors_write_them() {
    let body = "create web replicas=2\nsettle\nexpect web ready=2\n";
    for (name, content) in [
        ("cr.scenario", body.replace('\n', "\r")),
        ("crlf.scenario", body.replace('\n', "\r\n")),
        ("bom.scenario", format!("\u{feff}{body}")),
    ] {
        let script = temp(name, &content);
        let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("expect"), "{name}: {}", text(&out.stdout));
    }
    let dir = temp("dummy", "").parent().map(Path::to_path_buf).unwrap_or_default();
    let bad = dir.join("latin1.scenario");
    std::fs::write(&bad, b"create web\n# caf\xe9\n").unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        (bad.to_string_lossy().into_owned(), "invalid byte at line 2, column 6"),
        (dir.to_string_lossy().into_owned(), "is a directory"),
        (dir.join("missing.scenario").to_string_lossy().into_owned(), "no such file"),
        ("/dev/zero".to_string(), "not a regular file"),
    ];
    for (path, says) in cases {
        let out = ststui(&["sim", "--headless", "--script", &path]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        let err = text(&out.stderr);
        assert!(err.contains(says) && err.contains(&path) && !err.contains(":0:"), "{path}: {err}");
        let out = ststui(&["sim", "--headless", "-f", &path]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(text(&out.stderr).contains(says), "{path}: {}", text(&out.stderr));
    }
}

/// A script's control characters reach the text timeline escaped, never raw.
#[test]
fn control_characters_from_a_script_are_escaped_in_the_text_timeline() {
    let script = temp("esc.scenario", "create web\nsettle\nimage web nginx:1.26\x1b[2J\n");
    let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\x1b'), "{stdout:?}");
    assert!(stdout.contains("nginx:1.26\\u{1b}[2J"), "{stdout}");
    let script = temp("esc2.scenario", "create web\x1b[31m\n");
    let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
    assert!(!text(&out.stdout).contains('\x1b') && !text(&out.stderr).contains('\x1b'));
}

/// `--log-file` is honoured without the console too; one that cannot be opened is an error.
#[test]
fn headless_writes_the_log_file_it_is_given() {
    let script = temp("log.scenario", "create web\nsettle\n");
    let log = script.with_extension("log");
    let _ = std::fs::remove_file(&log);
    let out = ststui(&[
        "sim",
        "--headless",
        "--script",
        &script.to_string_lossy(),
        "--log-file",
        &log.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("started"), "{logged}");
    let out =
        ststui(&["sim", "--headless", "--script", &script.to_string_lossy(), "--log-file", "/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot open the log file"), "{}", text(&out.stderr));
}

/// The default log is per user and private; a symlink planted in its place is refused, said
/// on stderr, and the file it points at is left as it was (the verb still runs, without a log).
#[test]
fn the_default_log_is_private_and_a_planted_symlink_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let script = temp("deflog.scenario", "create web\nsettle\n");
    let home = script.with_extension("home");
    let _ = std::fs::remove_dir_all(&home);
    let run = || {
        runner::ststui()
            .args(["sim", "--headless", "--script", &script.to_string_lossy()])
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = home.join(".local/state/ststui");
    let log = dir.join("ststui.log");
    assert!(std::fs::read_to_string(&log).unwrap().contains("started"));
    assert_eq!(std::fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    let victim = script.with_extension("victim");
    std::fs::write(&victim, "theirs\n").unwrap();
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("is a symlink: refusing to follow it"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "theirs\n");
    let _ = std::fs::remove_dir_all(&home);
}

/// What the simulator cannot hold is refused with a message, never an abort: a scale to
/// 2147483647 (script) or a manifest asking for it.
#[test]
fn replicas_beyond_the_simulators_capacity_are_refused_not_allocated() {
    let script = temp(
        "huge.scenario",
        "create web replicas=2\nsettle\nscale web 2147483647\nsettle\nexpect web replicas=2\n",
    );
    let out = ststui(&["sim", "--headless", "--script", &script.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "spec.replicas: Invalid value: 2147483647: the simulator holds at most 100000"
        ),
        "{stdout}"
    );
    let manifest = temp(
        "huge.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: 2147483647\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: nginx\n",
    );
    let out = ststui(&["sim", "--headless", "-f", &manifest.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("holds at most 100000"), "{}", text(&out.stderr));
}

#[test]
fn manifests_that_do_not_settle_say_so_on_stderr() {
    let manifest = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: slow\nspec:\n  \
        replicas: 2\n  minReadySeconds: 3600\n  serviceName: slow\n  selector:\n    matchLabels: \
        {app: slow}\n  template:\n    metadata:\n      labels: {app: slow}\n    spec:\n      \
        containers:\n      - name: c\n        image: nginx:1\n";
    let path = temp("slow.yaml", manifest);
    let out = ststui(&["sim", "--headless", "-f", &path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("had not settled after 10 minutes"), "{err}");
    assert!(text(&out.stdout).contains("slow-0 ready"), "the timeline up to there is printed");
    let quick = manifest.replace("minReadySeconds: 3600", "minReadySeconds: 1");
    let out = ststui(&["sim", "--headless", "-f", &temp("quick.yaml", &quick).to_string_lossy()]);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn an_invalid_set_in_a_manifest_is_named_by_its_document_and_line() {
    let doc = |name: &str, replicas: i32| {
        format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {name}\nspec:\n  replicas: \
             {replicas}\n  serviceName: {name}\n  selector:\n    matchLabels: {{app: {name}}}\n  \
             template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n      containers:\n\
             \x20     - name: c\n        image: nginx:1\n"
        )
    };
    let manifest = format!("{}---\n{}", doc("good", 1), doc("bad", -1));
    let path = temp("two.yaml", &manifest);
    let out = ststui(&["sim", "--headless", "-f", &path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let second = manifest.lines().position(|l| l == "---").map_or(0, |i| i + 2);
    let want = format!(
        "{}:{second} (document 2): StatefulSet.apps \"bad\" is invalid: spec.replicas",
        path.display()
    );
    assert!(err.contains(&want), "{err}\nwanted: {want}");
}
