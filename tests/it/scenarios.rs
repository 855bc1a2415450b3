//! The example scenarios in `assets/scenarios/` are tests: each runs headless and every `expect`
//! in it must hold. Also: a failing `expect` gives exit 1, a bad script exit 2, and the same
//! script gives a byte-identical timeline.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::{Path, PathBuf};

use ststui::cli::{Cli, Command, Format, SimArgs};
use ststui::sim::SimConfig;
use ststui::sim::headless::{self, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};

fn sim_args(extra: &[&str]) -> SimArgs {
    let mut argv = vec!["ststui", "sim", "--headless"];
    argv.extend_from_slice(extra);
    match Cli::try_parse_from(argv) {
        Ok(Cli { command: Some(Command::Sim(a)), .. }) => a,
        other => panic!("{other:?}"),
    }
}

use clap::Parser;

/// Runs headless; returns (exit code, stdout, stderr).
fn run(extra: &[&str]) -> (i32, String, String) {
    let args = sim_args(extra);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = headless::run_with(&args.headless(), &mut out, &mut err);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn assets() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scenario"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_scenario_holds() {
    let files = assets();
    let names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    for required in
        ["ordered-scale", "partition-canary", "on-delete", "broken-rollback", "parallel"]
    {
        assert!(names.iter().any(|n| n == required), "missing {required}.scenario in {names:?}");
    }
    for file in &files {
        let path = file.to_string_lossy().into_owned();
        let (code, out, err) = run(&["--script", &path, "--format", "jsonl"]);
        assert_eq!(code, EXIT_OK, "{path}\nstderr:\n{err}");
        let expects: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
            .filter(|v: &serde_json::Value| v["type"] == "expect")
            .collect();
        assert!(expects.len() >= 3, "{path}: only {} expect lines", expects.len());
        assert!(expects.iter().all(|e| e["ok"] == true), "{path}");
        assert!(err.is_empty(), "{path}: unexpected diagnostics:\n{err}");
    }
}

#[test]
fn on_delete_completion_depends_on_the_version() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/on-delete.scenario");
    let path = file.to_string_lossy().into_owned();
    // Before 1.37 an OnDelete rollout never completes: the last expect fails.
    let (code, out, err) = run(&["--script", &path, "--kube-version", "1.36"]);
    assert_eq!(code, EXIT_FAILED, "{out}");
    assert!(err.contains("rolledOut: expected true, got false"), "{err}");
}

/// The churn of a type-only switch to RollingUpdate is v1.37's (merged #137666): under 1.36
/// the same script rolls out, so its "still churning" check fails.
#[test]
fn nil_rolling_update_churn_depends_on_the_version() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/nil-rolling-update.scenario");
    let path = file.to_string_lossy().into_owned();
    let (code, out, _) = run(&["--script", &path, "--format", "text"]);
    assert_eq!(code, EXIT_OK, "{out}");
    let churn = out.lines().filter(|l| l.contains("controller  web delete-pod web-0")).count();
    assert!(churn >= 20, "web-0 should be deleted again and again under 1.37: {churn}");
    let (code, out, err) = run(&["--script", &path, "--kube-version", "1.36", "--format", "text"]);
    assert_eq!(code, EXIT_FAILED, "{out}");
    assert!(err.contains("rolledOut: expected false, got true"), "{err}");
    let churn = out.lines().filter(|l| l.contains("controller  web delete-pod web-0")).count();
    assert!(churn <= 2, "1.36 deletes web-0 at most for its update: {churn}");
}

fn write_script(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ststui-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn a_failing_expect_exits_1_and_names_the_line() {
    let path = write_script(
        "fail.scenario",
        "create web replicas=2\nsettle\n# wrong on purpose\nexpect web ready=3\nexpect web ready=2\n",
    );
    let (code, out, err) = run(&["--script", &path.to_string_lossy()]);
    assert_eq!(code, EXIT_FAILED);
    assert!(out.contains("expect      [4] FAILED: web: ready: expected 3, got 2"), "{out}");
    assert!(out.contains("expect      [5] ok: web: ready=2"), "{out}");
    assert!(err.contains("fail.scenario:4: expect failed: expect web ready=3"), "{err}");
    assert!(err.contains("1 of 2 expectations failed"), "{err}");
}

#[test]
fn a_bad_script_exits_2_before_running() {
    let path = write_script("bad.scenario", "create web\nwait 2 seconds\n");
    let (code, out, err) = run(&["--script", &path.to_string_lossy()]);
    assert_eq!(code, EXIT_BAD_INPUT);
    assert!(out.is_empty(), "nothing runs: {out}");
    assert!(err.contains("bad.scenario:2: wait:"), "{err}");
    let (code, _, err) = run(&["--script", "/nonexistent/x.scenario"]);
    assert_eq!(code, EXIT_BAD_INPUT);
    assert!(err.contains("cannot read the script"), "{err}");
}

#[test]
fn refused_operations_are_error_events_not_failures() {
    let path = write_script(
        "refused.scenario",
        "create Web\ncreate web replicas=1 maxUnavailable=0\ncreate web\nstep\nsettle\nexpect web ready=1\n",
    );
    let (code, out, _) = run(&["--script", &path.to_string_lossy(), "--format", "jsonl"]);
    assert_eq!(code, EXIT_OK, "{out}");
    let errors: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "error")
        .collect();
    assert_eq!(errors.len(), 3, "{out}");
    assert_eq!(errors[0]["line"], 1);
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.starts_with(
        "StatefulSet.apps \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 label"
    )));
    assert_eq!(
        errors[1]["message"],
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: \
         Invalid value: 0: cannot be 0"
    );
    assert_eq!(errors[2]["line"], 4, "step while not paused");
}

#[test]
fn apply_reads_manifests_relative_to_the_script() {
    let manifest = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n\
        apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  replicas: 2\n  \
        selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    \
        spec: {containers: [{name: nginx, image: 'nginx:1.25'}]}\n";
    write_script("web.yaml", manifest);
    let path = write_script(
        "apply.scenario",
        "apply web.yaml\nsettle\nexpect web ready=2 pods=web-0,web-1\n",
    );
    let (code, out, err) = run(&["--script", &path.to_string_lossy()]);
    assert_eq!(code, EXIT_OK, "{out}\n{err}");
    assert!(
        err.contains("document 1 (line 1) is a Service \"web\", not a StatefulSet: skipped"),
        "{err}"
    );
    let bad = write_script("bad-apply.scenario", "apply missing.yaml\n");
    let (code, _, err) = run(&["--script", &bad.to_string_lossy()]);
    assert_eq!(code, EXIT_BAD_INPUT);
    assert!(err.contains("bad-apply.scenario:1: apply: "), "{err}");
}

#[test]
fn manifests_from_the_command_line() {
    let manifest = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  \
        replicas: 2\n  podManagementPolicy: Parallel\n  selector: {matchLabels: {app: db}}\n  \
        template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: pg, image: 'postgres:16'}]}\n";
    let path = write_script("db.yaml", manifest);
    let (code, out, err) = run(&["-f", &path.to_string_lossy()]);
    assert_eq!(code, EXIT_OK, "{err}");
    assert!(out.contains("db create-pod db-0") && out.contains("db create-pod db-1"), "{out}");
    let invalid = write_script("invalid.yaml", &manifest.replace("replicas: 2", "replicas: -2"));
    let (code, out, err) = run(&["-f", &invalid.to_string_lossy()]);
    assert_eq!(code, EXIT_BAD_INPUT);
    assert!(out.is_empty());
    assert!(
        err.contains("StatefulSet.apps \"db\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0"),
        "{err}"
    );
}

#[test]
fn the_same_script_gives_a_byte_identical_timeline() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/broken-rollback.scenario"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for format in [Format::Jsonl, Format::Text] {
        let once = headless::run_text(&text, format, SimConfig { seed: 1, ..Default::default() });
        let twice = headless::run_text(&text, format, SimConfig { seed: 1, ..Default::default() });
        let other_seed =
            headless::run_text(&text, format, SimConfig { seed: 99, ..Default::default() });
        let (Ok(a), Ok(b), Ok(c)) = (once, twice, other_seed) else { panic!("script error") };
        assert!(a.0.lines().count() > 20);
        assert_eq!(a.0, b.0);
        // Scripted runs use no randomness at all.
        assert_eq!(a.0, c.0);
        assert!(a.1.passed());
    }
}

#[test]
fn ordinals_past_int32_fail_as_upstream_fails_them() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/differential/start-ordinal-overflow.scenario")
        .to_string_lossy()
        .into_owned();
    let (code, out, err) = run(&["--script", &file]);
    assert_eq!(code, EXIT_OK, "{err}\n{out}");
    let refused = "create-pod web--1 failed: Pod \"web--1\" is invalid: metadata.labels: Invalid \
                   value: \"-1\": a valid label must be an empty string";
    assert!(out.contains(refused), "{out}");
    assert!(!out.contains("create-pod web-1 "), "no wrapped or saturated ordinal: {out}");
}

/// Runs a `tests/differential` scenario headless with `gates` (the top level's --feature-gates,
/// as `main` hands them to `sim`).
fn run_differential(name: &str, gates: &str) -> (i32, String, String) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential").join(name);
    let path = file.to_string_lossy().into_owned();
    let mut args = sim_args(&["--script", &path]);
    if !gates.is_empty() {
        args.feature_gates = gates.parse().unwrap_or_else(|e| panic!("{e}"));
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = headless::run_with(&args.headless(), &mut out, &mut err);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

#[test]
fn recreate_scenarios_hold_with_the_gate_and_are_refused_without_it() {
    let on = "StatefulSetRecreateStrategy=true";
    for name in [
        "recreate-ordered.scenario",
        "recreate-parallel.scenario",
        "recreate-scale-down.scenario",
        "recreate-broken.scenario",
        "recreate-from-rolling.scenario",
    ] {
        let (code, out, err) = run_differential(name, on);
        assert_eq!(code, EXIT_OK, "{name}: {err}\n{out}");
        assert!(out.contains("delete-pod"), "{name}: {out}");
    }
    // Every old pod in one burst: the three deletions come before any creation.
    let (_, out, _) = run_differential("recreate-ordered.scenario", on);
    let after_image = out.split("image web nginx:1.27").nth(1).unwrap_or_default();
    let first_create = after_image.find("create-pod").unwrap_or(usize::MAX);
    let deletes = after_image.match_indices("delete-pod").filter(|(i, _)| *i < first_create);
    assert_eq!(deletes.count(), 3, "{after_image}");
    assert!(after_image.contains("(recreate)"), "{after_image}");
    // Gate off: the simulated API server refuses the set, in kube-apiserver's words.
    let (code, out, err) = run_differential("recreate-ordered.scenario", "");
    assert_eq!(code, EXIT_FAILED, "{out}");
    assert!(out.contains("must be 'RollingUpdate' or 'OnDelete'"), "{out}\n{err}");
}
