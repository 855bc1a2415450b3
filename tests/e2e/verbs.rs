//! The pipeline verbs (`ststui explain | step | freeze | resume | wait`) run as a user runs
//! them, the binary against `ststui sim --serve` (in process), with the README's exit codes:
//! step and step --to read back through the simulator, step refused while the open ordinals are
//! not Ready, freeze twice and resume, wait on a healthy rollout (0), on a broken canary (3,
//! naming the pod), on the forced-rollback case (3 at once), on a timeout (1), a denied write
//! (4, naming the permission), and a conflict between read and write.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::time::Duration;

use crate::support::objects::kubelet_breaking;
use crate::support::objects::web;
use crate::support::rig::Served;
use crate::support::runner;
use crate::support::wait;
use serve_common::set;
use ststui::backend::{ClusterOp, Fault, ObjRef, Write};

type Rig = Served;

/// `web` (3 replicas) served, with pods that start in 100 ms and never get Ready on
/// `nginx:broken`; `partition` set once it has rolled out.
fn rig(test: &str, partition: i32, deny: &[&str]) -> Rig {
    let r = Served::new(
        "verbs",
        test,
        vec![set("web", 3)],
        deny,
        kubelet_breaking(100, "nginx:broken"),
    );
    r.op(ClusterOp::SetPartition { set: web(), partition });
    r
}

/// Runs `ststui ARGS --kubeconfig K`: (exit code, stdout, stderr).
/// Until web-2 runs (started, not Ready) `nginx:broken`: the canary of a broken update.
fn broken_canary(r: &Rig) {
    let broken = || {
        r.call(|sim| {
            let p = sim.pod(&ObjRef::new("default", "web-2"))?;
            let image = p.spec.as_ref()?.containers.first()?.image.clone()?;
            let phase = p.status.as_ref()?.phase.clone()?;
            Some((image, phase))
        }) == Some(("nginx:broken".into(), "Running".into()))
    };
    wait::until("web-2 on nginx:broken", Duration::from_secs(10), broken);
}

fn ststui(r: &Rig, args: &[&str]) -> (i32, String, String) {
    runner::outcome(&mut runner::against(&r.dir, args))
}

#[test]
fn step_lowers_the_partition_by_one_or_to_n_and_waits_for_the_opened_ordinals() {
    let r = rig("step", 3, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    let (code, out, err) = ststui(&r, &["step", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("partition 3 → 2 (opens web-2)"), "{out}");
    assert_eq!(r.partition(), 2);
    // web-2 is not updated and Ready yet: the next step is refused, naming it.
    let (code, out, err) = ststui(&r, &["step", "web"]);
    if code == 1 {
        assert!(err.contains("web-2"), "{err}");
        assert_eq!(r.partition(), 2);
    } else {
        // The 100 ms kubelet may have won the race; then the step went through.
        assert_eq!(code, 0, "{out}{err}");
    }
    let (code, out, err) =
        ststui(&r, &["step", "web", "--to", "0", "--force", "--wait", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 0);
    let st = r.the_set().status.unwrap_or_default();
    assert_eq!(st.updated_replicas, Some(3), "{out}");
    assert_eq!(st.ready_replicas, Some(3), "{out}");
    // Nothing left to step.
    let (code, _, err) = ststui(&r, &["step", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("every ordinal is open"), "{err}");
}

#[test]
fn step_refuses_while_an_open_ordinal_is_not_ready_unless_forced() {
    let r = rig("refuse", 2, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    r.call(|sim| {
        sim.apply_op(
            Fault::SetPodReady { pod: ObjRef::new("default", "web-2"), ready: false }.into(),
        )
        .map_err(|e| e.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, _, err) = ststui(&r, &["step", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("web-2") && err.contains("--force"), "{err}");
    assert_eq!(r.partition(), 2);
    let (code, out, err) = ststui(&r, &["step", "web", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 1);
}

#[test]
fn freeze_twice_and_resume_are_idempotent_and_recorded_on_the_set() {
    let r = rig("freeze", 1, &[]);
    let (code, out, err) = ststui(&r, &["freeze", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 3);
    let frozen = ststui::steer::frozen(&r.the_set()).unwrap_or_else(|| panic!("not frozen"));
    assert_eq!(frozen.partition, Ok(1));
    let (code, out, err) = ststui(&r, &["freeze", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("already frozen"), "{out}");
    assert_eq!(ststui::steer::frozen(&r.the_set()).map(|f| f.partition), Some(Ok(1)));
    // A frozen set is not stepped behind the freeze's back.
    let (code, _, err) = ststui(&r, &["step", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("frozen") && err.contains("ststui resume web"), "{err}");
    let (code, out, err) = ststui(&r, &["resume", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 1);
    assert!(ststui::steer::frozen(&r.the_set()).is_none());
    let (code, out, _) = ststui(&r, &["resume", "web"]);
    assert_eq!(code, 0);
    assert!(out.contains("not frozen"), "{out}");
}

/// What Argo CD leaves on a set it applies (server-side, its manifest setting the partition):
/// its tracking label, and the partition owned by its field manager.
fn applied_by_argo_cd(r: &Rig) {
    let addr = r.server.addr;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let client = serve_common::client(addr).await;
        let sets: kube::Api<k8s_openapi::api::apps::v1::StatefulSet> =
            kube::Api::namespaced(client, "default");
        let patch = serde_json::json!({
            "metadata": {"labels": {"argocd.argoproj.io/instance": "shop"}},
            "spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}},
        });
        let pp = kube::api::PatchParams {
            field_manager: Some("argocd-controller".into()),
            ..Default::default()
        };
        sets.patch("web", &pp, &kube::api::Patch::Merge(&patch)).await.unwrap();
    });
}

#[test]
fn freeze_on_a_set_whose_partition_argo_cd_applies_prints_the_rule_that_leaves_it_alone() {
    let r = rig("gitops", 1, &[]);
    applied_by_argo_cd(&r);
    let (code, out, err) = ststui(&r, &["freeze", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("ststui freeze: warning: default/web: Argo CD app shop manages this set and its manifest sets the partition (field manager argocd-controller)"),
        "{err}"
    );
    // The entry to paste into the Application, as YAML under its first line.
    let head = "add to the Application's spec:\n";
    let from = err.find(head).unwrap_or_else(|| panic!("no rule: {err}")) + head.len();
    let rule: serde_json::Value = serde_yaml_ng::from_str(&err[from..]).unwrap();
    assert_eq!(rule["ignoreDifferences"][0]["name"], "web");
    assert_eq!(
        rule["ignoreDifferences"][0]["jsonPointers"][0],
        "/spec/updateStrategy/rollingUpdate/partition"
    );
    assert_eq!(r.partition(), 3, "the warning does not stop the write");
    // Resuming hands the partition back: no warning then.
    let (code, out, err) = ststui(&r, &["resume", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("Argo CD"), "{err}");
}

#[test]
fn wait_exits_0_on_a_healthy_rollout_and_1_on_its_timeout() {
    let r = rig("healthy", 0, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines().last().is_some_and(|l| l.starts_with("default/web: 3/3 Ready on web-")),
        "{out}"
    );
    let st = r.the_set().status.unwrap_or_default();
    assert_eq!((st.updated_replicas, st.ready_replicas), (Some(3), Some(3)));
    // Never Ready, and stuck only after an hour: the timeout ends it with 1.
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:broken".into() });
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "2s", "--stuck-after", "1h"]);
    assert_eq!(code, 1, "{out}{err}");
    // Said as given: the timeout counts from the verb's start, its first view included.
    assert!(out.contains("timed out after 2s: "), "{out}");
}

#[test]
fn wait_on_a_broken_canary_is_stuck_naming_the_pod() {
    let r = rig("canary", 2, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:broken".into() });
    let (code, out, err) = ststui(&r, &["wait", "web", "--stuck-after", "2s", "--timeout", "60s"]);
    assert_eq!(code, 3, "{out}{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.starts_with("stuck: web-2: no progress for 2s"), "{out}");
    assert!(last.contains("revert the template and then delete web-2"), "{out}");
}

#[test]
fn wait_on_the_forced_rollback_case_is_stuck_at_once() {
    let r = rig("forced", 0, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:broken".into() });
    // web-2 runs the broken image; the template goes back, OrderedReady still waits on web-2.
    broken_canary(&r);
    r.op(ClusterOp::Undo { set: web(), revision: None });
    let (code, out, err) = ststui(&r, &["wait", "web", "--stuck-after", "1h", "--timeout", "60s"]);
    assert_eq!(code, 3, "{out}{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.starts_with("stuck: web-2: web-2 is on"), "{out}");
    assert!(last.contains("kubernetes#67250"), "{out}");
    // explain's text says the same as its JSON: the forced-rollback line, and its columns line
    // up (each row's REVISION starts where the heading's does).
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("stuck") && l.contains("kubernetes#67250")),
        "{out}"
    );
    let heading = out.lines().find(|l| l.starts_with("ORDINAL")).unwrap_or_default();
    let col = heading.find("REVISION").unwrap_or_else(|| panic!("{out}"));
    let state_col = heading.find("STATE").unwrap_or_else(|| panic!("{out}"));
    for row in out.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())) {
        let at = |c: usize| row.get(c..).unwrap_or_default();
        assert!(!row[..col].ends_with(|c: char| c != ' '), "REVISION misaligned: {row:?}\n{out}");
        assert!(at(col).starts_with(|c: char| c != ' '), "REVISION misaligned: {row:?}\n{out}");
        assert!(at(state_col).starts_with(|c: char| c != ' '), "STATE misaligned: {row:?}\n{out}");
    }
}

/// A step whose outcome its run never learnt (the reply lost, the server gone before it could
/// be read back) left its record on the set; the rerun finds the step landed and does not open a
/// second ordinal.
#[test]
fn a_rerun_after_an_unknown_outcome_does_not_step_twice() {
    let r = rig("rerun", 2, &[]);
    // What the lost run wrote: partition 3 → 2 and its record, then no settle.
    r.call(|sim| {
        let mut s = sim.set(&web()).cloned().unwrap();
        let record = r#"{"from":3,"to":2,"by":"ci","at":"2026-11-25T10:00:00Z"}"#;
        s.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(ststui::steer::STEP_PENDING.into(), record.into());
        s.metadata.resource_version = None;
        sim.apply_set(s).map(drop).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = ststui(&r, &["step", "web", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("partition 3 → 2 was written at 2026-11-25T10:00:00Z by ci"), "{out}");
    assert!(out.contains("not stepping again"), "{out}");
    assert_eq!(r.partition(), 2, "no second ordinal opened");
    assert!(ststui::steer::pending(&r.the_set()).is_none(), "the record is settled");
    // The next run is a new step.
    let (code, out, err) = ststui(&r, &["step", "web", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 1);
    assert!(ststui::steer::pending(&r.the_set()).is_none(), "settled after a known outcome");
}

#[test]
fn a_denied_write_names_the_permission() {
    let r = rig("deny", 2, &["patch:statefulsets"]);
    let (code, _, err) = ststui(&r, &["freeze", "web"]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("permission denied") && err.contains("patch statefulsets (apps)"),
        "{err}"
    );
    assert_eq!(r.partition(), 2);
    // Reading is allowed.
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn usage_and_unreachable_servers_have_their_codes() {
    let r = rig("usage", 0, &[]);
    let (code, _, err) = ststui(&r, &["wait", "web", "--timeout", "0s"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ststui(&r, &["wait", "web", "--context", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no context \"nope\""), "{err}");
    // A kubeconfig that is not there is named once, with why.
    let out = runner::ststui()
        .args(["explain", "web", "--kubeconfig", "/nonexistent/kc"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("/nonexistent/kc").count(), 1, "{err}");
    assert!(err.contains("No such file or directory"), "{err}");
    let (code, _, err) = ststui(&r, &["explain", "db"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("statefulset db not found"), "{err}");
    let kc = std::fs::read_to_string(r.dir.join("kubeconfig")).unwrap_or_default();
    let dead = regex_lite_replace_server(&kc);
    std::fs::write(r.dir.join("kubeconfig"), dead).unwrap_or_else(|e| panic!("{e}"));
    // Retried until the timeout, then 4, saying it was never reached.
    let (code, _, err) = ststui(&r, &["wait", "web", "--timeout", "2s"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("could not be reached until the timeout"), "{err}");
    assert!(err.contains("the server cannot be reached"), "{err}");
}

#[test]
fn a_kubeconfig_list_skips_missing_files_as_kubectl_does() {
    let r = rig("kubeconfig-list", 0, &[]);
    let run = |list: String| {
        let out = runner::ststui()
            .args(["explain", "web", "--log-file"])
            .arg(r.dir.join("log"))
            .env("KUBECONFIG", list)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        runner::said(&out)
    };
    let kc = r.dir.join("kubeconfig").display().to_string();
    let (code, out, err) = run(format!("/nonexistent/first:{kc}:/nonexistent/last"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("web"), "{out}");
    let (code, _, err) = run("/nonexistent/a:/nonexistent/b".into());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("KUBECONFIG=/nonexistent/a:/nonexistent/b"), "{err}");
    assert!(err.contains("none of the files it names exists"), "{err}");
}

#[test]
fn a_closed_stdout_and_stderr_end_a_verb_quietly_with_its_own_code() {
    let r = rig("closed", 0, &[]);
    let closed = |args: &[&str]| {
        // A pipe whose reader is gone: every write fails with EPIPE (`… | head -0`).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = runner::against(&r.dir, args)
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        out.status.code()
    };
    // 101 is Rust's exit code for a panic.
    assert_eq!(closed(&["explain", "web"]), Some(0));
    assert_eq!(closed(&["explain", "web", "-o", "json"]), Some(0));
    assert_eq!(closed(&["explain", "db"]), Some(4), "its error line went nowhere");
    assert_eq!(closed(&["wait", "web", "--timeout", "5s"]), Some(0));
    assert_eq!(closed(&["step", "web", "--to", "-1"]), Some(2));
    // A rollout plan (nothing to roll out: it says so) ends as it does on a terminal.
    let plan = ["rollout", "web", "--steps", "1,100%", "--timeout", "20s"];
    let (code, out, err) = ststui(&r, &plan);
    assert_ne!(code, 101, "{out}{err}");
    assert_eq!(closed(&plan), Some(code), "{out}{err}");
}

/// The kubeconfig with its server on a port nothing listens on.
fn regex_lite_replace_server(kc: &str) -> String {
    kc.lines()
        .map(|l| match l.trim_start().strip_prefix("server: ") {
            Some(_) => {
                format!("{}server: http://127.0.0.1:9", &l[..l.len() - l.trim_start().len()])
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_conflict_between_read_and_write_is_re_decided_or_refused() {
    use ststui::verbs::{Exit, session::Session, step};
    let r = rig("conflict", 3, &[]);
    let target = ststui::cluster::Target {
        kubeconfig: Some(r.dir.join("kubeconfig")),
        name: Some("web".into()),
        ..Default::default()
    };
    let mut s = Session::open(target.clone()).unwrap_or_else(|e| panic!("{e:?}"));
    let soon = || std::time::Instant::now() + Duration::from_secs(30);
    let read = s.sync(soon()).unwrap_or_else(|e| panic!("{e:?}")).clone();
    let write = |p| {
        Write::on(
            ClusterOp::SetPartition { set: web(), partition: p },
            Some(Box::new(read.clone())),
        )
    };
    // Only the status moved since the read: the 409 is re-read, re-decided, and goes through.
    r.call(|sim| {
        sim.apply_op(
            Fault::SetPodReady { pod: ObjRef::new("default", "web-0"), ready: false }.into(),
        )
        .map_err(|e| e.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let moved = || r.the_set().metadata.resource_version != read.metadata.resource_version;
    wait::until("the status written after web-0 went unready", Duration::from_secs(10), moved);
    step::write_partition(&target, write(2), soon()).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(r.partition(), 2);
    // Now the spec moved under us (someone else stepped): refused, naming the change.
    let e =
        step::write_partition(&target, write(1), soon()).err().unwrap_or_else(|| panic!("written"));
    assert_eq!(e.exit, Exit::Expectation, "{e:?}");
    assert!(e.message.contains("partition"), "{}", e.message);
    assert_eq!(r.partition(), 2);
}

/// The field table of `explain -o json` in `docs/verbs.md`: (path, nullable).
fn documented() -> Vec<(String, bool)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/verbs.md"))
        .unwrap_or_else(|e| panic!("docs/verbs.md: {e}"));
    let section = readme
        .split("## `explain -o json` (version 1)")
        .nth(1)
        .unwrap_or_else(|| panic!("no explain JSON section in docs/verbs.md"));
    let section = section.split("\n#").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let path = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((path.to_string(), cells.get(2)?.contains("null")))
        })
        .collect()
}

/// Every path in `v` (arrays as `[]`), each with whether its value was null.
fn paths(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeMap<String, bool>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                out.entry(p.clone()).or_insert(x.is_null());
                paths(x, &p, out);
            }
        }
        serde_json::Value::Array(items) => {
            for x in items {
                paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn explain_json_is_what_the_readme_documents() {
    let r = rig("json", 2, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:broken".into() });
    broken_canary(&r);
    r.op(ClusterOp::Undo { set: web(), revision: None });
    r.op(ClusterOp::Freeze { set: web() });
    // A halted plan and a runner's lease on the set (as `ststui rollout` records them).
    let record = serde_json::json!({"steps": "1,100%", "bakeSeconds": 60, "checks": ["./c"],
        "onFailure": "hold", "revision": "web-x", "template": "0", "step": 1, "of": 2,
        "phase": "halted", "since": "2026-01-01T00:00:00Z", "partition": 2, "by": "ana",
        "started": "2026-01-01T00:00:00Z", "reason": "check `./c` exited 1", "beganAt": 2,
        "from": "web-w",
        "gates": {"preDelete": "cmd:./drain.sh", "postReady": "http::8080/ready",
            "beforeStep": "cmd:./green.sh", "lastBy": "cmd:./primary.sh", "last": "web-0",
            "intervalSeconds": 10, "timeoutSeconds": 120, "tries": 180, "recheckSeconds": 0},
        "target": 1,
        "gate": {"gate": "pre-delete", "pod": "web-1", "status": "failed",
            "since": "2026-01-01T00:00:00Z", "tries": 0, "output": ["drain refused"]}});
    r.op(ClusterOp::Plan { set: web(), partition: None, record: record.to_string() });
    let lease = serde_json::json!({"holder": "ana", "host": "h", "pid": 7,
        "expires": "2999-01-01T00:00:00Z"});
    r.op(ClusterOp::PlanLease { set: web(), lease: Some(lease.to_string()), seen: None });
    // web in a rollout group of two, the other set unknown to the server.
    let part = serde_json::json!({"group": "g", "sets": ["web", "gone"], "place": 0,
        "state": "halted", "since": "2026-01-01T00:00:00Z", "by": "ana",
        "started": "2026-01-01T00:00:00Z", "steps": "1,100%", "zoneBakeSeconds": 0});
    r.op(ClusterOp::GroupPart { set: web(), part: Some(part.to_string()) });
    let (code, out, err) = ststui(&r, &["explain", "web", "-o", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["version"], 1);
    let mut seen = std::collections::BTreeMap::new();
    paths(&v, "", &mut seen);
    let doc = documented();
    assert!(doc.len() > 40, "docs/verbs.md's table: {doc:?}");
    for (path, null) in &seen {
        let d = doc.iter().find(|(p, _)| p == path);
        assert!(d.is_some(), "{path} is not documented in docs/verbs.md");
        if *null {
            assert!(
                d.is_some_and(|(_, n)| *n),
                "{path} was null; docs/verbs.md does not say it may be"
            );
        }
    }
    for (path, _) in &doc {
        assert!(
            seen.contains_key(path),
            "docs/verbs.md documents {path}; explain did not print it"
        );
    }
    // What the set shows: frozen over a forced rollback, and kubectl's verdict differing.
    assert_eq!(v["health"], "Frozen");
    assert_eq!(v["frozen"]["partition"], 2);
    assert_eq!(v["forcedRollback"]["pod"], "web-2", "{out}");
    assert_eq!(v["ordinals"][2]["state"], "Running", "{out}");
    assert_eq!(v["verdict"]["done"], false);
    assert_eq!(v["plan"]["words"], "plan halted at 1/2 (1): check `./c` exited 1");
    let text = ststui(&r, &["explain", "web"]).1;
    assert!(
        text.contains(
            "plan:       plan halted at 1/2 (1): check `./c` exited 1 (runner ana on h (pid 7) until"
        ),
        "{text}"
    );
    assert!(text.contains("frozen:     by"), "{text}");
    assert!(text.contains("web-2 is on"), "{text}");
}

#[test]
fn a_freeze_holding_an_update_is_stuck_for_wait_and_a_moved_one_is_not_resumed_over() {
    let r = rig("frozen-wait", 3, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    let (code, out, err) = ststui(&r, &["freeze", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    // kubectl's verdict would be "partitioned roll out complete: 0 new pods"; the freeze holds
    // the update, so waiting cannot finish it.
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "20s"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("the update is held until it is resumed"), "{out}");
    assert!(out.contains("`ststui resume web` lets it roll"), "{out}");
    // Another writer lowers the partition under the freeze: resume refuses to write over it.
    r.op(ClusterOp::Unfreeze { set: web(), force: true });
    r.op(ClusterOp::Freeze { set: web() });
    // (kubectl patch would do the same: a plain write of the partition.)
    r.call(|sim| {
        let mut s = sim.set(&web()).cloned().unwrap();
        s.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition =
            Some(0);
        s.metadata.resource_version = None;
        sim.apply_set(s).map(drop).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("broken: the partition was moved to 0"), "{out}");
    let (code, _, err) = ststui(&r, &["resume", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("freeze broken: partition moved to 0"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(r.partition(), 0, "nothing written over the other writer's partition");
    let (code, out, err) = ststui(&r, &["resume", "web", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 3);
}

#[test]
fn step_to_above_the_partition_needs_force_and_a_negative_to_is_named() {
    let r = rig("raise", 0, &[]);
    let (code, out, err) = ststui(&r, &["step", "web", "--to", "9"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("raises the partition from 0"), "{err}");
    assert!(err.contains("web-0, web-1, web-2"), "{err}");
    assert_eq!(r.partition(), 0);
    let (code, out, err) = ststui(&r, &["step", "web", "--to", "9", "--force"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(r.partition(), 9);
    let (code, _, err) = ststui(&r, &["step", "web", "--to", "-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("-- -1"), "no tip to pass it as a positional: {err}");
    assert!(err.contains("-1") && err.contains("0.."), "{err}");
}

/// A short outage during `wait` on a quiet set: the watches reconnect without any object
/// changing, so the timeout is a timeout (1), not "the server could not be reached" (4).
#[test]
fn wait_through_a_short_outage_on_a_quiet_set_ends_as_a_timeout() {
    let r = rig("blip", 2, &[]);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:broken".into() });
    let child = runner::ststui()
        .args(["wait", "web", "--timeout", "9s", "--stuck-after", "1h", "--kubeconfig"])
        .arg(r.dir.join("kubeconfig"))
        .arg("--log-file")
        .arg(r.dir.join("blip.log"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_secs(2));
    r.call(|sim| sim.api_fault(ststui::sim::ApiFault::Down { ms: 2_000 }));
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("timed out after"), "{stdout}");
    assert!(!stderr.contains("could not be reached"), "{stderr}");
}

/// Events are optional; pods are not: without `list events` explain works (exit 0), without
/// `list pods` it exits 4 at once naming the permission, never a grid of "not created".
#[test]
fn events_are_optional_and_unreadable_pods_are_named() {
    let r = rig("no-events", 1, &["list:events", "watch:events"]);
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("web-2"), "{out}");
    let r = rig("no-pods", 1, &["list:pods", "watch:pods"]);
    let (code, out, err) = ststui(&r, &["explain", "web", "--timeout", "20s"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("permission denied: you may not list pods in default"), "{err}");
    assert!(!out.contains("not created"), "{out}");
}
