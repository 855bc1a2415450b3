//! `ststui play` as a user runs it: the binary against `ststui sim --serve` (in process), which
//! stands in for a cluster here (the control plane's own run is the differential check). Lines
//! a cluster cannot play are refused before anything runs, naming the line; kubelet lines need
//! a fake kubelet; a scenario plays in real time with the simulator's timeline and exit codes;
//! the script's own writes whose replies were lost say what the server holds.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::path::{Path, PathBuf};

use crate::support::runner;
use serve_common::{kubelet, serve, set};
use ststui::sim::KubeletConfig;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(test: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("ststui-play-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    Dir(d)
}

/// Runs `ststui play SCRIPT ARGS`: (exit code, stdout, stderr).
fn play(d: &Path, script: &str, args: &[&str]) -> (i32, String, String) {
    let path = d.join("test.scenario");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
    runner::outcome(
        runner::ststui().arg("play").arg(&path).args(args).arg("--log-file").arg(d.join("log")),
    )
}

#[test]
fn lines_only_the_simulator_can_play_are_refused_before_anything_runs() {
    let d = dir("refused");
    let kubeconfig = d.0.join("none").to_string_lossy().into_owned();
    let lines = [
        ("pause", "pause"),
        ("step 2", "step 2"),
        ("api-down 5s", "api-down"),
        ("rollout web steps=1,100%", "ststui rollout NAME --steps"),
        ("approve web", "ststui approve NAME"),
    ];
    for (line, word) in lines {
        let script = format!("create web replicas=1\nsettle\n{line}\n");
        let (code, out, err) = play(&d.0, &script, &["--kubeconfig", &kubeconfig]);
        assert_eq!(code, 2, "{line}: {err}");
        assert!(out.is_empty(), "nothing ran: {out}");
        assert!(err.contains("test.scenario:3: `") && err.contains(word), "{err}");
        assert!(err.contains("needs the simulator"), "{err}");
    }
}

#[test]
fn kubelet_lines_need_a_cluster_whose_kubelet_obeys_them() {
    let (_handle, server) = serve(vec![set("web", 1)], &[], KubeletConfig::default());
    let d = dir("kubelet");
    let kc = d.0.join("kubeconfig");
    ststui::serve::write_kubeconfig(&kc, server.addr).unwrap_or_else(|e| panic!("{e}"));
    let kc = kc.to_string_lossy().into_owned();
    let (code, out, err) = play(&d.0, "# timing\n\nkubelet start=2s\n", &["--kubeconfig", &kc]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("test.scenario:3: `kubelet start=2s` needs a cluster whose kubelet"),
        "{err}"
    );
    assert!(err.contains("ststui fake-kubelet"), "{err}");
    assert!(err.contains("cannot list nodes: 404 NotFound"), "{err}");
    assert!(!err.contains("Status {") && !err.contains("ApiError"), "no Rust dump: {err}");
}

#[test]
fn an_unreachable_server_is_retried_until_the_timeout_then_named() {
    let d = dir("unreachable");
    let kc = d.0.join("kubeconfig");
    // A port nothing listens on.
    let addr: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap_or_else(|e| panic!("{e}"));
    ststui::serve::write_kubeconfig(&kc, addr).unwrap_or_else(|e| panic!("{e}"));
    let kc = kc.to_string_lossy().into_owned();
    let (code, out, err) =
        play(&d.0, "create web replicas=1\n", &["--kubeconfig", &kc, "--timeout", "2s"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("could not be reached before the timeout"), "{err}");
    assert!(err.contains("the server cannot be reached"), "{err}");
}

#[test]
fn a_scenario_plays_on_a_cluster_in_real_time_with_the_simulators_timeline() {
    let (_handle, server) = serve(Vec::new(), &[], kubelet(100));
    let d = dir("rollout");
    let kc = d.0.join("kubeconfig");
    ststui::serve::write_kubeconfig(&kc, server.addr).unwrap_or_else(|e| panic!("{e}"));
    let kc = kc.to_string_lossy().into_owned();
    let script = "create db replicas=2 image=nginx:1.25\nsettle max=30s\n\
                  expect db ready=2 pods=db-0,db-1 rolledOut=true\n\
                  image db nginx:1.27\nsettle max=30s\n\
                  expect db updated=2 ready=2 rolledOut=true blocked=false\n\
                  expect db replicas=3\n";
    let (code, out, err) = play(&d.0, script, &["--kubeconfig", &kc, "--format", "jsonl"]);
    assert_eq!(code, 1, "the last expect fails: {err}\n{out}");
    assert!(err.contains("test.scenario:7: expect failed: expect db replicas=3"), "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of = |kind: &'static str| lines.iter().filter(move |v| v["type"] == kind);
    assert_eq!(of("command").count(), 7, "every line is told");
    let creates: Vec<String> = of("controller")
        .filter(|v| v["action"] == "create-pod")
        .map(|v| {
            format!("{}@{}", v["pod"].as_str().unwrap_or(""), v["revision"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(creates.len(), 4, "two pods, each replaced once: {creates:?}");
    assert!(
        creates[0].starts_with("db-0@db-") && creates[1].starts_with("db-1@db-"),
        "{creates:?}"
    );
    assert_ne!(creates[0], creates[3], "the replacement is at the new revision: {creates:?}");
    let deletes: Vec<&serde_json::Value> =
        of("controller").filter(|v| v["action"] == "delete-pod").collect();
    assert_eq!(deletes.len(), 2);
    assert!(deletes.iter().all(|v| v["reason"] == "update"), "{deletes:?}");
    assert_eq!(deletes[0]["pod"], "db-1", "highest ordinal first");
    let expects: Vec<bool> = of("expect").map(|v| v["ok"] == true).collect();
    assert_eq!(expects, vec![true, true, false]);
    let times: Vec<f64> = lines.iter().filter_map(|v| v["t"].as_f64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "time never runs backwards: {times:?}");
}

/// The script's own writes through lost replies: the served simulator carries out each of the
/// first four writes and breaks the connection before the answer. Each line then says what the
/// server holds: the creations and the deletion are read back, the scale goes through the
/// console's write path (read back too); none is an `error`, and the expectations after them
/// hold. (The idempotent writes sent again are `cluster_faults`'s.)
#[test]
fn the_scripts_own_writes_whose_replies_were_lost_say_what_the_server_holds() {
    let (handle, server) = serve(Vec::new(), &[], kubelet(100));
    let (tx, rx) = std::sync::mpsc::channel();
    handle.caller().call(Box::new(move |sim| {
        sim.api_fault(ststui::sim::ApiFault::LoseReplies { n: 4 });
        let _ = tx.send(());
    }));
    rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
    let d = dir("lost");
    let kc = d.0.join("kubeconfig");
    ststui::serve::write_kubeconfig(&kc, server.addr).unwrap_or_else(|e| panic!("{e}"));
    let kc = kc.to_string_lossy().into_owned();
    let script = "create db replicas=2\nsettle max=30s\nexpect db ready=2\n\
                  scale db 3\nsettle max=30s\nexpect db ready=3\n\
                  delete db\nsettle max=30s\n\
                  create db replicas=1\nsettle max=30s\nexpect db replicas=1 ready=1 pods=db-0\n";
    let (code, out, err) = play(&d.0, script, &["--kubeconfig", &kc, "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(!out.contains("\"type\":\"error\""), "no line failed: {out}");
    let log = std::fs::read_to_string(d.0.join("log")).unwrap_or_default();
    for lost in ["create default/db: the reply was lost", "delete default/db: the reply was lost"] {
        assert!(log.contains(lost), "{lost:?} not in the log:\n{log}");
    }
}
