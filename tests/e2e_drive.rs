//! Drive mode end to end on the real control plane whose kube-controller-manager runs without
//! its StatefulSet controller (`tests/control-plane/run --without-statefulset-controller`):
//! ststui's core is the only StatefulSet controller there. Scenarios played with `ststui play
//! --drive` hold their expectations (an ordered scale-up and down, a partitioned rolling
//! update, OnDelete, claims retained and deleted on scale-down, pause and step), each controller
//! action told once; the console pauses and steps a set in a pseudo-terminal, each step's pod
//! read back through the API, and quitting stops reconciling; a status write that conflicts
//! with a second writer is read again and written; without the permission to write, drive mode
//! refuses before its first write, naming what it may not do. Needs that control plane, and
//! fails (never skips) without it:
//!
//!   tests/control-plane/run --without-statefulset-controller -- \
//!     cargo test --release --test e2e_drive -- --ignored
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]
#![cfg(unix)]

mod cp_support;
mod pty_support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cp_support::Ns;
use pty_support::*;

const DEADLINE: Duration = Duration::from_secs(90);

/// A namespace of its own on the control plane without its StatefulSet controller.
fn ns(test: &str) -> Ns {
    let how = "`tests/control-plane/run --without-statefulset-controller -- cargo test --release \
               --test e2e_drive -- --ignored`";
    let ns = Ns::create("drive", test, how);
    let controllers = std::env::var("STSTUI_CONTROLLERS").unwrap_or_default();
    assert!(
        !controllers.contains("statefulset"),
        "kube-controller-manager runs its StatefulSet controller ({controllers}): run this under {how}"
    );
    ns
}

/// `ststui play --drive FILE --format jsonl` in `ns`: (exit code, stdout, stderr).
fn play(ns: &Ns, script: &Path) -> (Option<i32>, String, String) {
    ns.play(script, &["--drive", "--format", "jsonl", "--timeout", "60s"])
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The timeline's controller lines: (action, object) in order.
fn actions(jsonl: &str) -> Vec<(String, String)> {
    jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "controller")
        .map(|v| {
            let what = ["pod", "pvc", "revision"]
                .iter()
                .find_map(|k| v[*k].as_str())
                .unwrap_or_default()
                .to_string();
            (v["action"].as_str().unwrap_or_default().to_string(), what)
        })
        .collect()
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn driven_scenarios_hold_their_expectations() {
    let scenarios: [&'static str; 5] = [
        "assets/scenarios/ordered-scale.scenario",
        "assets/scenarios/partition-canary.scenario",
        "assets/scenarios/on-delete.scenario",
        "assets/scenarios/pvc-retention.scenario",
        "tests/drive/pause-step.scenario",
    ];
    let runs: Vec<_> = scenarios
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            std::thread::spawn(move || {
                let ns = ns(&format!("play{i}"));
                let (code, out, err) = play(&ns, &root().join(s));
                (s, code, out, err)
            })
        })
        .collect();
    let mut failed = Vec::new();
    for r in runs {
        let (s, code, out, err) = r.join().unwrap();
        let expects = out.lines().filter(|l| l.contains("\"type\":\"expect\"")).count();
        println!("{s}: exit {code:?}, {expects} expectations");
        if code != Some(0) || expects == 0 {
            failed.push(format!("{s}: exit {code:?}\n{err}\n{out}"));
            continue;
        }
        let acts = actions(&out);
        assert!(!acts.is_empty(), "{s}: the controller reported no action");
        if s.ends_with("ordered-scale.scenario") {
            // Every pod created once, in order: the driver's own line, never a second one
            // inferred from the watch.
            let created: Vec<&str> =
                acts.iter().filter(|(a, _)| a == "create-pod").map(|(_, p)| p.as_str()).collect();
            assert_eq!(created, ["web-0", "web-1", "web-2", "web-3", "web-4"], "{s}");
            let deleted: Vec<&str> =
                acts.iter().filter(|(a, _)| a == "delete-pod").map(|(_, p)| p.as_str()).collect();
            assert_eq!(deleted, ["web-4", "web-3", "web-2", "web-1", "web-0"], "{s}");
        }
    }
    assert!(failed.is_empty(), "driven plays failed:\n{}", failed.join("\n"));
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn the_console_pauses_and_steps_a_driven_set_and_quitting_stops_reconciling() {
    let ns = ns("console");
    let setup = ns.dir.join("setup.scenario");
    std::fs::write(
        &setup,
        "kubelet start=200ms ready=200ms stop=200ms\ncreate web replicas=2\nsettle max=60s\n\
         expect web ready=2 pods=web-0,web-1\n",
    )
    .unwrap();
    let (code, _, err) = play(&ns, &setup);
    assert_eq!(code, Some(0), "setup: {err}");
    let log = ns.dir.join("console.log").display().to_string();
    let mut c = Console::start(&["--drive", "-n", &ns.name, "--log-file", &log, "web"]);
    c.wait_for("driving, live", |s| header(s).contains("driving, live") && s.contains("web-1"));
    c.press(" ");
    c.wait_for("driving, PAUSED", |s| header(s).contains("driving, PAUSED"));
    ns.kubectl(&["scale", "sts", "web", "--replicas=4", "-n", &ns.name]);
    c.wait_for("the new spec seen", |s| s.contains("desired 4"));
    c.pump(Duration::from_secs(2));
    assert_eq!(ns.pods(), ["web-0", "web-1"], "paused: nothing is written");
    c.press("n");
    let start = Instant::now();
    while ns.pods().len() < 3 {
        assert!(start.elapsed() < DEADLINE, "the step created nothing:\n{}", c.screen());
        c.pump(Duration::from_millis(200));
    }
    c.pump(Duration::from_secs(2));
    assert_eq!(ns.pods(), ["web-0", "web-1", "web-2"], "one step, one pod (OrderedReady)");
    c.wait_for("the step's action on the timeline", |s| s.contains("create-pod web-2"));
    c.press(" ");
    c.wait_for("driving, live again", |s| header(s).contains("driving, live"));
    let start = Instant::now();
    while ns.pods().len() < 4 {
        assert!(start.elapsed() < DEADLINE, "resumed but not reconciled:\n{}", c.screen());
        c.pump(Duration::from_millis(200));
    }
    c.press("q");
    assert!(c.wait_exit().success());
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
    // Nobody drives once the console is gone: a scale-up stays unobserved.
    ns.kubectl(&["scale", "sts", "web", "--replicas=5", "-n", &ns.name]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(ns.pods().len(), 4, "quitting stopped reconciling");
}

/// The `restricted` context may read everything and write nothing: drive mode asks before its
/// first write and refuses, naming who may not do what, in `play` and in the console (before
/// the terminal is taken), and nothing is written.
#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn drive_mode_refuses_without_the_permission_to_write_naming_what_is_missing() {
    let ns = ns("denied");
    let script = ns.dir.join("scale.scenario");
    std::fs::write(
        &script,
        "create web replicas=2
settle max=5s
expect web ready=2
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ststui"))
        .arg("play")
        .arg(&script)
        .args(["--drive", "--context", "restricted", "--timeout", "20s", "-n", &ns.name])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains(&format!("will not drive {}: restricted may not", ns.name)), "{err}");
    for denied in ["create pods (core)", "delete pods (core)", "update statefulsets/status (apps)"]
    {
        assert!(err.contains(denied), "{denied}: {err}");
    }
    // The console refuses the same way before it takes the terminal.
    let mut c = Console::start(&["--drive", "--context", "restricted", "-n", &ns.name, "web"]);
    c.wait_for("the refusal", |s| s.contains("create controllerrevisions (apps)"));
    assert!(!c.wait_exit().success());
    let screen = c.screen();
    assert!(screen.contains("will not drive"), "{screen}");
    assert!(!c.parser.screen().alternate_screen(), "the terminal was never taken");
    assert!(ns.pods().is_empty(), "nothing written");
}

/// A status write that conflicts is read again and written on the fresh object: a second
/// writer annotates the set as soon as it sees the burst's first pod, while ststui's sync is
/// still creating the rest, so the sync's status write (decided on the set before the
/// annotation) conflicts every time; the rollout completes and its status is the server's.
#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn a_conflicting_status_write_is_read_again_and_written() {
    let ns = ns("conflict");
    let script = ns.dir.join("burst.scenario");
    std::fs::write(
        &script,
        "kubelet start=200ms ready=200ms stop=200ms\ncreate burst replicas=0 policy=Parallel\n\
         settle max=30s\nwait 2s\nscale burst 200\nsettle max=60s\nexpect burst ready=200\n",
    )
    .unwrap();
    // The second writer: the first pod of the burst seen, one annotation of the set.
    let poker = {
        let (name, dir) = (ns.name.clone(), ns.dir.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < DEADLINE {
                let out = Command::new("kubectl")
                    .arg("--cache-dir")
                    .arg(dir.join("poke-cache"))
                    .args(["get", "pods", "-n", &name, "--no-headers", "-o", "name"])
                    .output()
                    .unwrap();
                if !out.stdout.is_empty() {
                    let ok = Command::new("kubectl")
                        .arg("--cache-dir")
                        .arg(dir.join("poke-cache"))
                        .args(["annotate", "sts", "burst", "-n", &name, "ststui.dev/poke=1"])
                        .output()
                        .unwrap();
                    return ok.status.success();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            false
        })
    };
    let (code, out, err) = play(&ns, &script);
    assert!(poker.join().unwrap(), "the second writer never saw a pod");
    assert_eq!(code, Some(0), "{err}\n{out}");
    let log = std::fs::read_to_string(ns.dir.join("play.log")).unwrap_or_default();
    assert!(
        log.contains("status write of") && log.contains("conflicted at resourceVersion"),
        "no status write conflicted: {log}"
    );
    let status = ns.kubectl(&[
        "get", "sts", "burst", "-n", &ns.name, "-o",
        "jsonpath={.status.replicas}/{.status.readyReplicas}/{.metadata.annotations.ststui\\.dev/poke}",
    ]);
    assert_eq!(status, "200/200/1", "the status is the server's, and the annotation stands");
}
