//! Real-cluster mode end to end on the real control plane (kube-apiserver and
//! kube-controller-manager built from their Go modules, `tests/control-plane/run`): a set
//! rehearsed there with `ststui play`, the console in a pseudo-terminal showing it, stepping the
//! partition (read back with kubectl, and kube-controller-manager replacing the opened pod), the
//! restricted context read-only with the reason, quit restoring the terminal, and ststui's
//! evictions judged by a PodDisruptionBudget. Needs the
//! control plane, and fails (never skips) without it:
//!
//!   tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]
#![cfg(unix)]

use crate::support::cp_support;
use crate::support::pty_support;

use std::time::{Duration, Instant};

use cp_support::Ns;
use pty_support::*;

/// A namespace of its own on the control plane.
fn ns(test: &str) -> Ns {
    let how = "`tests/control-plane/run -- cargo test --release --test control_plane -- \
               --ignored e2e_control_plane::`";
    Ns::create("e2e", test, how)
}

trait Rehearsed {
    fn rehearse(&self);
    fn console(&self, extra: &[&str]) -> Console;
    fn partition(&self, c: &mut Console, want: &str);
}

impl Rehearsed for Ns {
    /// `web`, 3 replicas rolled out at nginx:1.25, then nginx:1.27 held by partition 3.
    fn rehearse(&self) {
        let script = self.dir.join("setup.scenario");
        std::fs::write(
            &script,
            "kubelet start=200ms ready=200ms stop=200ms\n\
             create web replicas=3 image=nginx:1.25 partition=3\nsettle max=60s\n\
             expect web ready=3 rolledOut=true\n\
             image web nginx:1.27\nsettle max=60s\nexpect web ready=3 updated=0\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (code, _, err) = self.play(&script, &[]);
        assert_eq!(code, Some(0), "play: {err}");
    }

    fn console(&self, extra: &[&str]) -> Console {
        let log = self.dir.join("console.log").display().to_string();
        let mut args = vec!["-n", self.name.as_str(), "--log-file", log.as_str()];
        args.extend_from_slice(extra);
        args.push("web");
        Console::start(&args)
    }

    fn partition(&self, c: &mut Console, want: &str) {
        let start = Instant::now();
        loop {
            let p = self.kubectl(&[
                "get",
                "sts",
                "web",
                "-n",
                &self.name,
                "-o",
                "jsonpath={.spec.updateStrategy.rollingUpdate.partition}",
            ]);
            if p == want {
                return;
            }
            assert!(start.elapsed() < DEADLINE, "partition stayed {p}, expected {want}");
            c.pump(Duration::from_millis(100));
        }
    }
}

#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn the_console_steps_a_set_that_kube_controller_manager_rolls_out() {
    let ns = ns("steer");
    ns.rehearse();
    let mut c = ns.console(&[]);
    c.wait_for("the grid on the control plane", |s| {
        header(s).contains("partition=3")
            && s.contains("web-2")
            && s.contains("connected to https://127.0.0.1")
    });
    c.press("[");
    c.wait_for("partition=2 on screen", |s| header(s).contains("partition=2"));
    ns.partition(&mut c, "2");
    // kube-controller-manager replaces web-2: it is gone, then created again (at the update
    // revision: the grid's row says so).
    c.wait_for("kube-controller-manager replaces web-2", |s| {
        s.contains("web-2 gone") && s.contains("create-pod web-2")
    });
    c.wait_for("web-2 at the update revision", |s| {
        s.lines().any(|l| l.contains("web-2 ●") && l.contains("update"))
    });
    c.press("q");
    assert!(c.wait_exit().success());
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
}

#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn the_restricted_context_is_read_only_with_the_reason() {
    let ns = ns("restricted");
    ns.rehearse();
    let mut c = ns.console(&["--context", "restricted"]);
    c.wait_for("the grid", |s| header(s).contains("partition=3"));
    let want = format!("read-only: you may not patch statefulsets (apps) in {}", ns.name);
    let start = Instant::now();
    loop {
        c.press("[");
        c.pump(Duration::from_millis(200));
        if c.screen().contains(&want) {
            break;
        }
        assert!(!header(&c.screen()).contains("partition=2"), "the write went through");
        assert!(start.elapsed() < DEADLINE, "no read-only refusal:\n{}", c.screen());
    }
    ns.partition(&mut c, "3");
    c.press("q");
    assert!(c.wait_exit().success());
}

#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn drive_mode_refuses_while_kube_controller_managers_statefulset_controller_runs() {
    let ns = ns("refuse");
    ns.rehearse();
    let quiet_from = Instant::now();
    let script = ns.dir.join("drive.scenario");
    std::fs::write(&script, "expect web ready=3\n").unwrap_or_else(|e| panic!("{e}"));
    // `ststui play --drive`: its exit code and stderr.
    let drive = || {
        let out = crate::support::runner::ststui()
            .arg("play")
            .arg(&script)
            .args(["--drive", "-n", &ns.name, "--log-file"])
            .arg(ns.dir.join("play.log"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = drive();
    assert_eq!(code, Some(4), "refused with exit 4: {err}");
    assert!(
        err.contains(
            "will not drive: another StatefulSet controller is at work (kube-controller-manager"
        ),
        "names the other controller: {err}"
    );
    // The console refuses the same way, before it takes the terminal, and exits non-zero: it
    // never opens as "live" after a refused --drive.
    let mut c = ns.console(&["--drive"]);
    c.wait_for("the refusal", |s| s.contains("will not drive"));
    let status = c.wait_exit();
    assert!(!status.success(), "{status:?}");
    assert!(!c.parser.screen().alternate_screen(), "the terminal was never taken");
    assert!(c.screen().contains("kube-controller-manager"), "{}", c.screen());
    // A quiet set (nothing written for over a minute): still refused, as its status was written
    // by kube-controller-manager after its last change.
    let quiet = Duration::from_secs(62);
    std::thread::sleep(quiet.saturating_sub(quiet_from.elapsed()));
    let (code, err) = drive();
    assert_eq!(code, Some(4), "a quiet set refused too: {err}");
    assert!(
        err.contains(
            "another StatefulSet controller is configured (kube-controller-manager wrote \
                      the status of StatefulSet"
        ) && err.contains("after its last change"),
        "{err}"
    );
}

/// ststui's evictions judged by the real kube-apiserver and disruption controller: `pdb` and
/// `evict` lines played there, a refusal named with the budget's counts as kube-controller-
/// manager wrote them, an allowed eviction carried out (and told as the script's, not the
/// controller's), the next refused while the evicted pod is away.
#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn a_disruption_budget_judges_ststuis_evictions() {
    let ns = ns("evict");
    let script = ns.dir.join("evict.scenario");
    std::fs::write(
        &script,
        "kubelet start=200ms ready=200ms stop=2s\n\
         create web replicas=3\nsettle max=60s\nexpect web ready=3\n\
         pdb web min-available=3\nwait 3s\nevict web-2\nexpect web ready=3\n\
         pdb web min-available=2\nwait 3s\nevict web-2\nwait 500ms\nevict web-1\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = ns.play(&script, &[]);
    assert_eq!(code, Some(0), "play: {out}{err}");
    let errors: Vec<&str> = out.lines().filter(|l| l.contains(" error ")).collect();
    assert_eq!(
        errors.len(),
        2,
        "the first and the last eviction refused, the middle one carried out: {out}"
    );
    assert!(
        errors[0].ends_with(
            "refused by pdb/web: 3 healthy, needs 3, 0 disruptions allowed: nothing deleted"
        ),
        "{out}"
    );
    assert!(
        errors[1].ends_with(
            "refused by pdb/web: 2 healthy, needs 2, 0 disruptions allowed: nothing deleted"
        ),
        "{out}"
    );
    assert!(
        !out.contains("delete-pod web-2 (update)"),
        "the script's eviction told as the controller's: {out}"
    );
    let deleting = ns.kubectl(&[
        "-n",
        &ns.name,
        "get",
        "pod",
        "web-1",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert_eq!(deleting.trim(), "", "web-1 is not being deleted");
}

/// Per-pod gates on the real control plane: an OnDelete plan whose pre-delete and post-ready
/// gates are local commands reading the pod with kubectl. The trace shows pre-delete → eviction
/// → post-ready pod by pod, and each post-ready gate saw its pod on the new revision (the
/// controller had replaced it). The same plan without gates runs beside it: their times, per
/// pod, are printed (the time gates add).
#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn an_on_delete_plan_runs_its_gates_pod_by_pod_on_the_control_plane() {
    let ns = ns("gates");
    let script = ns.dir.join("setup.scenario");
    std::fs::write(
        &script,
        "kubelet start=200ms ready=200ms stop=200ms\n\
         create web replicas=3 strategy=OnDelete\ncreate plain replicas=3 strategy=OnDelete\n\
         settle max=60s\nexpect web ready=3\nexpect plain ready=3\n\
         image web nginx:1.27\nimage plain nginx:1.27\nwait 2s\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = ns.play(&script, &[]);
    assert_eq!(code, Some(0), "play: {out}{err}");
    let trace = ns.dir.join("trace");
    let cache = ns.dir.join("gate-cache");
    let revision = "jsonpath={.metadata.labels.controller-revision-hash}";
    let pre = format!("cmd:echo pre $STSTUI_POD >> {}", trace.display());
    let post = format!(
        "cmd:r=$(kubectl --cache-dir {} get pod {{pod}} -n {{namespace}} -o '{revision}'); \
         if [ \"$r\" = \"$STSTUI_NEW_REVISION\" ]; then echo post $STSTUI_POD new >> {t}; \
         else echo post $STSTUI_POD old $r >> {t}; exit 1; fi",
        cache.display(),
        t = trace.display()
    );
    let rollout = |set: &str, gates: &[&str]| {
        let started = Instant::now();
        let mut args = vec!["rollout", set, "-n", ns.name.as_str(), "--steps", "100%"];
        args.extend_from_slice(gates);
        let out = crate::support::runner::ststui()
            .args(&args)
            .arg("--log-file")
            .arg(ns.dir.join(format!("{set}.log")))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), s(&out.stdout), s(&out.stderr), started.elapsed())
    };
    let (code, out, err, gated) = rollout("web", &["--pre-delete", &pre, "--post-ready", &post]);
    assert_eq!(code, Some(0), "{out}{err}");
    let lines = std::fs::read_to_string(&trace).unwrap_or_default();
    let want = "pre web-2\npost web-2 new\npre web-1\npost web-1 new\npre web-0\npost web-0 new\n";
    assert_eq!(lines, want, "{out}");
    for p in ["web-2", "web-1", "web-0"] {
        let pre_at = out.find(&format!("on {p}: passed")).unwrap_or_else(|| panic!("{out}"));
        let evicted = out.find(&format!("evicted {p} ")).unwrap_or_else(|| panic!("{out}"));
        assert!(pre_at < evicted, "{p}: {out}");
    }
    let (code, out, err, plain) = rollout("plain", &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    println!(
        "figure: OnDelete plan of 3 pods on the control plane: {:.2} s with pre-delete and \
         post-ready gates, {:.2} s without: {:.2} s per pod for the gates",
        gated.as_secs_f64(),
        plain.as_secs_f64(),
        (gated.as_secs_f64() - plain.as_secs_f64()) / 3.0
    );
}

/// An `exec:` gate runs in the pod through the real API server's exec: kube-apiserver proxies
/// the WebSocket to the node's kubelet (the fake kubelet declares `ExtendWebSocketsToKubelet`
/// and serves `/exec` over HTTPS), pod by pod — pre-delete before each eviction, post-ready on
/// the replacement — and a container the pod does not have is refused by the API server.
#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored e2e_control_plane::"]
fn an_exec_gate_runs_in_the_pod_through_the_api_server_on_the_control_plane() {
    let ns = ns("execgate");
    let script = ns.dir.join("setup.scenario");
    std::fs::write(
        &script,
        "kubelet start=200ms ready=200ms stop=200ms\n\
         create web replicas=3 strategy=OnDelete\n\
         settle max=60s\nexpect web ready=3\nimage web nginx:1.27\nwait 2s\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = ns.play(&script, &[]);
    assert_eq!(code, Some(0), "play: {out}{err}");
    let rollout = |extra: &[&str]| {
        let mut args = vec!["rollout", "web", "-n", ns.name.as_str(), "--steps", "100%"];
        args.extend_from_slice(extra);
        let out = crate::support::runner::ststui()
            .args(&args)
            .arg("--log-file")
            .arg(ns.dir.join("rollout.log"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), s(&out.stdout), s(&out.stderr))
    };
    let (code, out, err) = rollout(&[
        "--pre-delete",
        "exec:app -- drain {pod}",
        "--post-ready",
        "exec:app -- check {pod}",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let mut at = 0;
    for p in ["web-2", "web-1", "web-0"] {
        for said in [
            format!("fake kubelet exec in {p}/app: drain {p}"),
            format!("evicted {p} "),
            format!("fake kubelet exec in {p}/app: check {p}"),
        ] {
            let found = out[at..].find(&said).unwrap_or_else(|| panic!("{said} after {at}: {out}"));
            at += found + said.len();
        }
    }
    // A container the pods do not have: the API server refuses the exec, the gate fails, the
    // plan halts naming it, and nothing is evicted.
    ns.kubectl(&["set", "image", "sts/web", "app=nginx:1.28", "-n", &ns.name]);
    let (code, out, err) = rollout(&["--pre-delete", "exec:db -- drain {pod}", "--force"]);
    assert_ne!(code, Some(0), "{out}{err}");
    let why = format!("{out}{err}");
    assert!(
        why.contains("failed (exec refused): 400 BadRequest: container db is not valid"),
        "{why}"
    );
    assert!(!out.contains("evicted web-"), "{out}");
}
