//! Rollout plans run as a user runs them: the binary's `ststui rollout | approve | abort`
//! against `ststui sim --serve` (in process), the set's partition watched from beside it.
//! A plan of 1,50%,100% on 4 replicas writes partitions 3, 2, 0 in that order and no other;
//! a failing check halts after step 1; a broken image halts at --stuck-after and undo reverts
//! and deletes exactly the stuck pod; a killed runner leaves the set held and a rerun resumes;
//! a second runner is refused; a template change halts the plan; a lost reply does not open
//! two steps; a gate waits for approve.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

mod budget;
mod connections;
mod faults;
mod fleet;
mod gates;
mod group;
mod group_console;
mod recreate;
mod stuck;
use crate::support::serve_common;

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::objects::kubelet_breaking;
use crate::support::objects::web;
use crate::support::rig::Served;
use crate::support::runner;
use crate::support::wait;
use k8s_openapi::api::apps::v1::StatefulSet;
use serve_common::set;
use ststui::backend::{ClusterOp, ObjRef};
use ststui::plan::record::{self, Phase, Record};
use ststui::sim::ApiFault;

/// The served simulator and every partition the set was seen with, in order (repeats folded).
struct Rig {
    served: Served,
    partitions: Arc<Mutex<Vec<i32>>>,
}

impl std::ops::Deref for Rig {
    type Target = Served;
    fn deref(&self) -> &Served {
        &self.served
    }
}

/// `web` (4 replicas, pods that start in 100 ms, `nginx:broken` never Ready) served, held at
/// partition 4, its template changed to `image`: an update waiting for a plan.
fn rig(test: &str, image: &str) -> Rig {
    let kubelet = kubelet_breaking(100, "nginx:broken");
    let served = Served::new("plan", test, vec![set("web", 4)], &[], kubelet);
    let r = Rig { served, partitions: Arc::new(Mutex::new(Vec::new())) };
    r.op(ClusterOp::SetPartition { set: web(), partition: 4 });
    r.op(ClusterOp::SetImage { set: web(), image: image.into() });
    watch_partitions(&r);
    r
}

/// Records every partition the served set shows, from a watch of its own.
fn watch_partitions(r: &Rig) {
    let seen = Arc::clone(&r.partitions);
    let addr = r.server.addr;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            use futures::StreamExt;
            let client = serve_common::client(addr).await;
            let api: kube::Api<StatefulSet> = kube::Api::namespaced(client, "default");
            let cfg = kube::runtime::watcher::Config::default();
            let mut stream = kube::runtime::watcher(api, cfg).boxed();
            let mut told = false;
            while let Some(ev) = stream.next().await {
                let sets = match ev {
                    Ok(kube::runtime::watcher::Event::Apply(s))
                    | Ok(kube::runtime::watcher::Event::InitApply(s)) => vec![s],
                    Ok(kube::runtime::watcher::Event::InitDone) if !told => {
                        told = true;
                        let _ = ready_tx.send(());
                        Vec::new()
                    }
                    _ => Vec::new(),
                };
                for s in sets {
                    let p = ststui::core::spec::strategy(&s).partition;
                    let mut v = seen.lock().unwrap();
                    if v.last() != Some(&p) {
                        v.push(p);
                    }
                }
            }
        });
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
}

fn the_plan(r: &Rig) -> Option<Record> {
    match record::read(&r.the_set()) {
        record::Reading::Plan(p) => Some(*p),
        record::Reading::None => None,
        record::Reading::Invalid(why) => panic!("invalid record: {why}"),
    }
}

fn command(r: &Rig, args: &[&str]) -> Command {
    runner::against(&r.dir, args)
}

/// Runs `ststui ARGS`: (exit code, stdout, stderr).
fn ststui(r: &Rig, args: &[&str]) -> (i32, String, String) {
    runner::outcome(&mut command(r, args))
}

/// Starts `ststui ARGS` in the background.
fn spawn(r: &Rig, args: &[&str]) -> Child {
    command(r, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Waits (bounded) until the set's plan satisfies `f`.
fn until_plan(r: &Rig, what: &str, f: impl Fn(&Record) -> bool) -> Record {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(p) = the_plan(r).filter(|p| f(p)) {
            return p;
        }
        assert!(Instant::now() < deadline, "{what}: not within 30 s: {:?}", the_plan(r));
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pod_uid(r: &Rig, name: &str) -> Option<String> {
    let pod = ObjRef::new("default", name);
    r.call(move |sim| sim.pod(&pod).and_then(|p| p.metadata.uid.clone()))
}

#[test]
fn a_plan_opens_3_2_0_in_order_and_its_check_sees_each_steps_pods() {
    let r = rig("order", "nginx:1.26");
    let seen = r.dir.join("seen");
    let check = format!(
        "echo \"$STSTUI_STEP/$STSTUI_STEPS $STSTUI_PARTITION [$STSTUI_PODS] $STSTUI_NAMESPACE/$STSTUI_SET\" >> {}; echo fine",
        seen.display()
    );
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1,50%,100%", "--check", &check, "--timeout", "60s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        *r.partitions.lock().unwrap(),
        [4, 3, 2, 0],
        "partitions 3, 2, 0 and no other\n{out}"
    );
    let lines = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        lines,
        "1/3 3 [web-3] default/web\n2/3 2 [web-2] default/web\n3/3 0 [web-0 web-1] default/web\n"
    );
    assert!(
        out.contains("step 1: 1 → 1 of 4 updated (partition 4 → 3)"),
        "the plan is printed first:\n{out}"
    );
    assert!(out.contains("  | fine"), "the check's output is shown:\n{out}");
    let done = the_plan(&r).unwrap();
    assert_eq!((done.phase, done.step, done.partition), (Phase::Done, 3, 0));
    let st = r.the_set().status.unwrap();
    assert_eq!((st.updated_replicas, st.ready_replicas), (Some(4), Some(4)));
    assert!(record::lease(&r.the_set()).is_none(), "the lease is given back");
}

#[test]
fn a_failing_check_halts_after_step_1_and_nothing_further_opens() {
    let r = rig("check", "nginx:1.26");
    let (code, out, err) = ststui(
        &r,
        &[
            "rollout",
            "web",
            "--steps",
            "1,100%",
            "--check",
            "echo replication lag 40s; exit 1",
            "-o",
            "json",
        ],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("replication lag 40s"), "{out}");
    for line in out.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    }
    let halted = the_plan(&r).unwrap();
    assert_eq!((halted.phase, halted.step), (Phase::Halted, 1));
    assert_eq!(
        halted.reason.as_deref(),
        Some("check `echo replication lag 40s; exit 1` exited 1: replication lag 40s")
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(r.partition(), 3);
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3]);
    // explain says so, with its own health word; wait says stuck (3), naming the halt.
    let (code, out, _) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0);
    assert!(out.contains("plan halted at 1/2 (1): check"), "{out}");
    assert!(out.starts_with("statefulset default/web: Halted"), "{out}");
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "10s"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("stuck: plan halted at 1/2 (1): check"), "{out}");
    // A plain rerun is refused (a halt is not resumed by accident); --continue goes on from the
    // halted step with this command's check, once the operator fixed what it found.
    let (code, _, err) = ststui(&r, &["rollout", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--continue"), "{err}");
    let (code, out, err) = ststui(
        &r,
        &[
            "rollout",
            "web",
            "--steps",
            "1,100%",
            "--continue",
            "--check",
            "echo fixed",
            "--timeout",
            "60s",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("continuing the plan halted at 1/2"), "{out}");
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0]);
    let done = the_plan(&r).unwrap();
    assert_eq!((done.phase, done.checks), (Phase::Done, vec!["echo fixed".to_string()]));
}

#[test]
fn a_broken_image_halts_at_stuck_after_and_undo_reverts_and_deletes_the_stuck_pod() {
    let r = rig("broken", "nginx:broken");
    let web2 = pod_uid(&r, "web-2").unwrap();
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1,100%", "--stuck-after", "2s", "--on-failure", "undo"],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("step 1 made no progress for 2s: web-3"), "{out}");
    assert!(out.contains("evicted web-3"), "{out}");
    let template = r.the_set().spec.template.spec.unwrap().containers[0].image.clone();
    assert_eq!(template.as_deref(), Some("nginx:1.25"), "reverted");
    assert_eq!(pod_uid(&r, "web-2").unwrap(), web2, "only the stuck pod is deleted");
    // As `ststui abort` does: the plan ends aborted, the partition back where it began.
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 4]);
    assert_eq!(the_plan(&r).map(|p| p.phase), Some(Phase::Aborted));
    // The controller brings web-3 back on the reverted template.
    let deadline = Instant::now() + Duration::from_secs(20);
    while r.the_set().status.unwrap().ready_replicas != Some(4) {
        assert!(Instant::now() < deadline, "web-3 did not come back Ready");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_runner_leaves_the_set_held_a_second_runner_is_refused_and_a_rerun_resumes() {
    let r = rig("killed", "nginx:1.26");
    let mut first = spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "3s"]);
    until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking && p.step == 1);
    // While it runs, a second runner is refused, naming the first.
    let (code, out, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    first.kill().unwrap();
    let _ = first.wait();
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(r.partition(), 3, "held at the step it was at");
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Baking, "its record stays");
    // A rerun that does not state the bake again is refused, naming it: a bake is never taken
    // from the set.
    let (code, out, err) = ststui(&r, &["rollout", "web", "--timeout", "60s"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("a resume states its steps (`--steps 1,100%`"), "{err}");
    let (code, out, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%", "--timeout", "60s"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("bake: recorded 3s, asked 0s"), "{err}");
    // The rerun (same host, the first runner's process gone) takes the lease over at once.
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "3s", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("resuming"), "{out}");
    assert!(out.contains("plan for default/web: 4 replicas, partition 3 now"), "a preview: {out}");
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0]);
}

/// SIGTERM (or SIGINT) ends a runner with a closing line — where it stopped, the set held, the
/// command that resumes — and its lease given back: explain says nobody runs it, and another
/// runner (any host: no lease to wait out) takes over at once.
#[test]
fn sigterm_ends_a_runner_with_a_closing_line_and_gives_its_lease_back() {
    for (test, signal) in [("sigterm", libc::SIGTERM), ("sigint", libc::SIGINT)] {
        let r = rig(test, "nginx:1.26");
        let mut first = spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "10s"]);
        until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking && p.step == 1);
        // SAFETY: kill(2) on the child this test started.
        unsafe {
            libc::kill(i32::try_from(first.id()).unwrap(), signal);
        }
        let status = first.wait().unwrap();
        let out = std::io::read_to_string(first.stdout.take().unwrap()).unwrap();
        let err = std::io::read_to_string(first.stderr.take().unwrap()).unwrap();
        assert_eq!(status.code(), Some(1), "{test}: {out}{err}");
        let last = out.lines().last().unwrap_or_default();
        let name = if signal == libc::SIGTERM { "SIGTERM" } else { "SIGINT" };
        assert!(last.starts_with(&format!("stopped by {name}: plan 1/2 (1): baking")), "{out}");
        let resume = "ststui rollout web --steps 1,100% --bake 10s";
        assert!(last.contains(&format!("`{resume}` resumes it, `ststui abort web`")), "{out}");
        assert!(record::lease(&r.the_set()).is_none(), "{test}: the lease given back");
        assert_eq!(the_plan(&r).unwrap().phase, Phase::Baking, "its record stays");
        let (code, out, _) = ststui(&r, &["wait", "web", "--timeout", "10s"]);
        assert_eq!(code, 3, "{out}");
        assert!(out.contains(&format!("no runner; `{resume}` resumes it")), "{out}");
        // The command it names works as printed: nothing to add, nothing forced.
        let mut words: Vec<&str> = resume.split(' ').skip(1).collect();
        words.extend(["--timeout", "60s"]);
        let (code, out, err) = ststui(&r, &words);
        assert_eq!(code, 0, "{test}: {out}{err}");
        assert!(out.contains("resuming"), "{test}: {out}");
        assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0], "{test}");
    }
}

/// A plan baking step 1 of `1,100%`; the template changes: the runner
/// halts (exit 3) on the template change and holds the partition. The halt's record.
fn halted_on_a_template_change(test: &str) -> Record {
    let r = rig(test, "nginx:1.26");
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "30s"]);
    until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking);
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.27".into() });
    let status = runner.wait().unwrap();
    let out = std::io::read_to_string(runner.stdout.take().unwrap()).unwrap();
    let err = std::io::read_to_string(runner.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(3), "{out}{err}");
    assert!(out.contains("the template changed under the plan"), "{out}");
    assert_eq!(r.partition(), 3);
    let plan = the_plan(&r).unwrap();
    assert_eq!(plan.phase, Phase::Halted);
    plan
}

#[test]
fn a_template_change_under_the_plan_halts_it() {
    let plan = halted_on_a_template_change("template");
    assert!(plan.reason.unwrap_or_default().contains("template changed"));
}

#[test]
fn a_lost_reply_during_a_step_does_not_open_two_steps() {
    let r = rig("lost", "nginx:1.26");
    // The first write (the lease) and the second (step 1's partition) lose their replies.
    r.call(|sim| sim.api_fault(ApiFault::LoseReplies { n: 2 }));
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,50%,100%", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("plan default/web partition 3: written (the reply was lost"), "{out}");
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 2, 0]);
}

#[test]
fn a_gate_waits_for_approve() {
    let r = rig("gate", "nginx:1.26");
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,pause,100%"]);
    until_plan(&r, "at the gate", |p| p.phase == Phase::Gate);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(r.partition(), 3, "nothing opens past the gate");
    // The partition's pods are done, the plan is not: Waiting (for approval, said with the
    // command), and wait waits for the plan.
    let (_, out, _) = ststui(&r, &["explain", "web"]);
    assert!(out.starts_with("statefulset default/web: Waiting"), "{out}");
    assert!(out.contains("next:       `ststui approve web` passes the gate"), "{out}");
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "2s"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("plan 2/3 (pause): waiting for approval"), "{out}");
    // Its runner gone (killed, its lease removed): wait says stuck and how to go on.
    runner.kill().unwrap();
    let _ = runner.wait();
    r.call(|sim| {
        let mut set = sim.set(&web()).cloned().unwrap();
        set.metadata.annotations.as_mut().unwrap().remove(record::LEASE);
        sim.apply_set(set).map(|_| ()).map_err(|e| e.to_string())
    })
    .unwrap();
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "10s"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("no runner; `ststui rollout web --steps 1,pause,100%` resumes it"),
        "{out}"
    );
    // A rerun resumes at the gate; the approval takes it to the end.
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,pause,100%", "--timeout", "60s"]);
    let pid = runner.id();
    let leased = || {
        let set = r.the_set();
        let lease = set.metadata.annotations.as_ref().and_then(|a| a.get(record::LEASE).cloned());
        let lease: Option<serde_json::Value> = lease.and_then(|l| serde_json::from_str(&l).ok());
        lease.and_then(|l| l["pid"].as_u64()) == Some(u64::from(pid))
    };
    wait::until("the rerun holds the lease", Duration::from_secs(10), leased);
    let (code, out, err) = ststui(&r, &["approve", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runner.wait().unwrap().code(), Some(0));
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0]);
    // Approving without a gate is refused.
    let (code, _, err) = ststui(&r, &["approve", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no plan waits for approval"), "{err}");
}

#[test]
fn abort_shows_what_it_will_do_and_needs_yes_without_a_terminal() {
    let r = rig("abort", "nginx:broken");
    r.op(ClusterOp::SetPartition { set: web(), partition: 3 });
    let deadline = Instant::now() + Duration::from_secs(10);
    while pod_uid(&r, "web-3").is_none() || r.the_set().status.unwrap().updated_replicas != Some(1)
    {
        assert!(Instant::now() < deadline, "web-3 was not replaced");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out, err) = ststui(&r, &["abort", "web"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("will revert the template to revision 1 (nginx:1.25)"), "{out}");
    assert!(out.contains("will delete, as stuck on") && out.contains("web-3"), "{out}");
    assert!(err.contains("pass --yes"), "{err}");
    assert_eq!(
        r.the_set().spec.template.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx:broken"),
        "nothing written"
    );
    let (code, out, err) = ststui(&r, &["abort", "web", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        r.the_set().spec.template.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx:1.25")
    );
}

/// Abort of a set whose plan halted: the record says aborted (no longer halted), the partition
/// goes back to where the plan began, the stuck pod comes back on the reverted template.
#[test]
fn abort_ends_a_halted_plan_as_aborted_and_puts_the_partition_back() {
    let r = rig("abort-plan", "nginx:broken");
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--stuck-after", "2s"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("web-3 Running, not Ready") || out.contains("web-3 not running"), "{out}");
    assert_eq!(r.partition(), 3);
    let (code, out, err) = ststui(&r, &["abort", "web", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("will put the partition back from 3 to 4, where the plan began"), "{out}");
    assert!(out.contains("partition 3 → 4"), "{out}");
    let aborted = the_plan(&r).unwrap();
    assert_eq!(aborted.phase, Phase::Aborted);
    assert!(aborted.reason.unwrap_or_default().starts_with("aborted by"));
    assert_eq!(r.partition(), 4);
    let (_, out, _) = ststui(&r, &["explain", "web"]);
    assert!(!out.contains(": Halted"), "{out}");
}

/// One reading of a bad record everywhere: explain names it invalid, rollout refuses to resume
/// it and refuses a new plan over it without --force.
#[test]
fn an_invalid_record_is_named_invalid_everywhere_and_never_silently_replaced() {
    let r = rig("invalid", "nginx:1.26");
    let bad = serde_json::json!({"steps": "1,100%", "bakeSeconds": 5, "checks": [],
        "onFailure": "hold", "revision": "web-x", "template": "", "step": 99, "of": 2,
        "phase": "waiting", "since": "2026-01-01T00:00:00Z", "partition": 4, "by": "ana",
        "started": "2026-01-01T00:00:00Z"});
    r.op(ClusterOp::Plan { set: web(), partition: None, record: bad.to_string() });
    let (_, out, _) = ststui(&r, &["explain", "web"]);
    assert!(out.contains("is invalid: it is at step 99 of 2"), "{out}");
    let (code, _, err) = ststui(&r, &["rollout", "web"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is invalid: it is at step 99 of 2"), "{err}");
    let (code, _, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is invalid"), "{err}");
    assert_eq!(r.partition(), 4, "nothing written");
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--force", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Done);
}

/// `--image` holds the set and sets the image in one command: nothing rolls before the plan's
/// first step, then the plan rolls it.
#[test]
fn rollout_image_freezes_sets_the_image_and_runs_the_plan() {
    let r = rig("image", "nginx:1.25");
    r.op(ClusterOp::SetPartition { set: web(), partition: 0 });
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--image", "nginx=nginx:1.27", "--steps", "1,100%", "--timeout", "60s"],
    );
    assert_eq!(code, 2, "the first container is app: {out}{err}");
    assert!(err.contains("first container is app"), "{err}");
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--image", "app=nginx:1.27", "--steps", "1,100%", "--timeout", "60s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("frozen first (partition 0 → 4)"), "{out}");
    // Held at 4 before the first step: no pod rolled before the plan opened web-3.
    assert_eq!(*r.partitions.lock().unwrap(), [4, 0, 4, 3, 0], "{out}");
    let image = r.the_set().spec.template.spec.unwrap().containers[0].image.clone();
    assert_eq!(image.as_deref(), Some("nginx:1.27"));
}

/// A plan begun on a frozen set takes the freeze over: `rollout --image` on a broken image,
/// then `abort`, puts back the partition from before the freeze (0, not the replicas), lifts
/// the freeze, records the plan aborted and leaves no lease; the next image then rolls.
#[test]
fn abort_after_rollout_image_puts_back_the_partition_from_before_the_freeze() {
    let (r, code, out, err) = broken_image_over_partition_0("image-abort", &[]);
    assert_eq!(code, 3, "{out}{err}");
    assert_eq!(the_plan(&r).map(|p| (p.phase, p.began_at)), Some((Phase::Halted, Some(0))));
    let (code, out, err) = ststui(&r, &["abort", "web", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("will put the partition back from 3 to 0, where the plan began"), "{out}");
    let set =
        until_set(&r, "the partition back", |s| ststui::core::spec::strategy(s).partition == 0);
    assert!(ststui::steer::frozen(&set).is_none(), "no freeze left");
    assert!(record::lease(&set).is_none(), "no lease left");
    assert_eq!(the_plan(&r).map(|p| p.phase), Some(Phase::Aborted));
    let (code, out, _) = ststui(&r, &["resume", "web"]);
    assert_eq!((code, out.contains("not frozen")), (0, true), "{out}");
    // The next image rolls: nothing holds it.
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.27".into() });
    let (code, out, err) = ststui(&r, &["wait", "web", "--full", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `--on-failure undo` does what `ststui abort` does: the template reverted, the stuck pod
/// evicted, the plan recorded aborted with the partition from before it back.
#[test]
fn on_failure_undo_ends_the_plan_aborted_with_the_partition_back() {
    let (r, code, out, err) =
        broken_image_over_partition_0("undo-abort", &["--on-failure", "undo"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("the plan is aborted; partition 3 → 0, where the plan began"), "{out}");
    let set =
        until_set(&r, "the partition back", |s| ststui::core::spec::strategy(s).partition == 0);
    assert!(ststui::steer::frozen(&set).is_none(), "no freeze left");
    assert_eq!(the_plan(&r).map(|p| p.phase), Some(Phase::Aborted));
    let image = set.spec.template.spec.unwrap().containers[0].image.clone();
    assert_eq!(image.as_deref(), Some("nginx:1.25"), "the template reverted");
    let (code, out, err) = ststui(&r, &["wait", "web", "--full", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `web` rolled to nginx:1.25 at partition 0, then `rollout --image app=nginx:broken --steps
/// 1,100% --stuck-after 2s` with `extra`: the rig and how the rollout ended.
fn broken_image_over_partition_0(test: &str, extra: &[&str]) -> (Rig, i32, String, String) {
    let r = rig(test, "nginx:1.25");
    r.op(ClusterOp::SetPartition { set: web(), partition: 0 });
    until_set(&r, "rolled to nginx:1.25", |s| {
        s.status
            .as_ref()
            .is_some_and(|st| st.updated_replicas == Some(4) && st.ready_replicas == Some(4))
    });
    let mut args = vec![
        "rollout",
        "web",
        "--image",
        "app=nginx:broken",
        "--steps",
        "1,100%",
        "--stuck-after",
        "2s",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = ststui(&r, &args);
    (r, code, out, err)
}

/// Waits (bounded) until the served set satisfies `f`.
fn until_set(r: &Rig, what: &str, f: impl Fn(&StatefulSet) -> bool) -> StatefulSet {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = r.the_set();
        if f(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "{what}: not within 30 s: {:?}", s.status);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Another runner's plan lease: `holder` on host `elsewhere`, pid 1, until `expires`.
fn lease_of(holder: &str, expires: &str) -> String {
    let lease = record::Lease {
        holder: holder.into(),
        host: "elsewhere".into(),
        pid: 1,
        expires: expires.into(),
    };
    serde_json::to_string(&lease).unwrap()
}

/// `--wait-lease` waits for another runner's lease instead of refusing.
#[test]
fn wait_lease_waits_out_another_runners_lease() {
    let r = rig("wait-lease", "nginx:1.26");
    // Each command meets a lease written just before it with seconds to run, so a slow machine
    // (CI's two cores under the whole suite) cannot see it run out before the runner reads it.
    let bo_for = |secs: i64| {
        let expires = k8s_openapi::jiff::Timestamp::now()
            .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(secs))
            .unwrap();
        lease_of("bo", &record::stamp(expires))
    };
    let first = bo_for(60);
    r.op(ClusterOp::PlanLease { set: web(), lease: Some(first.clone()), seen: None });
    let (code, _, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bo on elsewhere (pid 1)") && err.contains("--wait-lease"), "{err}");
    r.op(ClusterOp::PlanLease { set: web(), lease: Some(bo_for(5)), seen: Some(first) });
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--wait-lease", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("waiting for the lease of bo on elsewhere"), "{out}");
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Done);
}

/// A plan lease claiming more than any runner writes (`"expires":"never"`, a year far ahead, a
/// lease that does not read) holds the set against a plain rollout, which names the ways past;
/// `--force` takes it over (said) and the plan runs.
#[test]
fn a_forged_plan_lease_is_refused_naming_force_and_taken_over_with_it() {
    let r = rig("forged-lease", "nginx:1.26");
    let mut seen: Option<String> = None;
    for expires in ["never", "9999-12-31T23:59:59Z", "2099-01-01T00:00:00Z"] {
        let text = lease_of("mallory", expires);
        r.op(ClusterOp::PlanLease { set: web(), lease: Some(text.clone()), seen: seen.take() });
        seen = Some(text);
        let (code, out, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%"]);
        assert_eq!(code, 1, "{expires}: {out}{err}");
        assert!(err.contains("more than any runner writes"), "{expires}: {err}");
        assert!(err.contains("--force takes it over"), "{expires}: {err}");
        assert!(!err.contains("then runs out"), "never said of a lease that never does: {err}");
    }
    r.op(ClusterOp::PlanLease { set: web(), lease: Some("{not json".into()), seen });
    let (code, _, err) = ststui(&r, &["rollout", "web", "--steps", "1,100%"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("does not read") && err.contains("--force takes it over"), "{err}");
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--force", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("taken over (--force)"), "{out}");
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Done);
    assert!(record::lease(&r.the_set()).is_none(), "our lease given back");
}

/// The record on the set is shared, writable state: a command stored in it is never run, a bake
/// stored in it never shortens the one asked for. Another writer (anyone who may patch the set)
/// rewrites the record of a plan whose runner was killed: its checks to one that would create a
/// file, its bake to nothing. The rerun with the operator's own flags refuses and names both;
/// `--force` goes on with the operator's check and bake (recorded), and the file never appears.
#[test]
fn a_command_stored_on_the_set_is_never_run_and_a_stored_bake_never_shortens_ours() {
    let r = rig("stored", "nginx:1.26");
    let ours = r.dir.join("ours");
    let pwned = r.dir.join("PWNED");
    let check = format!("echo ok >> {}", ours.display());
    let mut first =
        spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "4s", "--check", &check]);
    until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking && p.step == 1);
    first.kill().unwrap();
    let _ = first.wait();
    let mut evil = the_plan(&r).unwrap();
    evil.checks = vec![format!("{check}; touch {}", pwned.display())];
    evil.bake_seconds = 0;
    let text = serde_json::to_string(&evil).unwrap();
    r.op(ClusterOp::Plan { set: web(), partition: None, record: text });
    let args = [
        "rollout",
        "web",
        "--steps",
        "1,100%",
        "--bake",
        "4s",
        "--check",
        check.as_str(),
        "--timeout",
        "60s",
    ];
    let (code, out, err) = ststui(&r, &args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("bake: recorded 0s, asked 4s"), "{err}");
    assert!(err.contains("touch"), "the stored command is named: {err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(r.partition(), 3, "nothing written");
    // A rerun that states no check does not inherit the stored one either.
    let (code, _, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "4s", "--timeout", "60s"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("asked none"), "{err}");
    // --force: the operator's check and bake, recorded; the stored command is gone.
    let mut forced = args.to_vec();
    forced.push("--force");
    let started = Instant::now();
    let (code, out, err) = ststui(&r, &forced);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!pwned.exists(), "the stored command ran:\n{out}");
    assert_eq!(std::fs::read_to_string(&ours).unwrap().lines().count(), 2, "{out}");
    assert!(started.elapsed() >= Duration::from_secs(8), "two bakes of 4s:\n{out}");
    let done = the_plan(&r).unwrap();
    assert_eq!((done.phase, done.bake_seconds, done.checks), (Phase::Done, 4, vec![check]));
}

/// Text from the cluster never drives the terminal: a halt reason and an image carrying escape
/// sequences (clear the screen, set the window title) are printed escaped by `explain` and
/// `abort`.
#[test]
fn explain_and_abort_print_cluster_text_escaped() {
    let r = rig("escapes", "nginx:1.26\u{1b}]0;pwned\u{7}");
    let mut halted = Record {
        steps: "1,100%".into(),
        bake_seconds: 0,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "web-x".into(),
        template: String::new(),
        step: 1,
        of: 2,
        phase: Phase::Halted,
        since: "2026-01-01T00:00:00Z".into(),
        partition: 3,
        by: "ana".into(),
        started: "2026-01-01T00:00:00Z".into(),
        reason: Some("boom\u{1b}[2J\u{1b}]0;title\u{7}".into()),
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    };
    halted.by = "ana\u{1b}[31m".into();
    let text = serde_json::to_string(&halted).unwrap();
    r.op(ClusterOp::Plan { set: web(), partition: None, record: text });
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "raw escapes: {out:?}");
    assert!(out.contains("boom\\u{1b}[2J"), "shown escaped: {out}");
    let (code, out, err) = ststui(&r, &["abort", "web"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'), "raw escapes: {out:?} {err:?}");
}

/// Every duration flag past the one cap (24h), at values that overflowed before (a panic after
/// the group lease was written; a recheck at once): refused as bad usage (exit 2), naming the
/// flag, before anything is written.
#[test]
fn a_duration_past_the_cap_is_refused_before_anything_is_written() {
    let r = rig("durations", "nginx:1.26");
    let before = r.the_set().metadata.annotations.unwrap_or_default();
    let flags = [
        "--bake",
        "--zone-bake",
        "--check-timeout",
        "--stuck-after",
        "--timeout",
        "--recheck",
        "--gate-interval",
        "--gate-timeout",
    ];
    for flag in flags {
        for value in ["25h", "99999999999h"] {
            let (code, out, err) =
                ststui(&r, &["rollout", "web", "--steps", "1,100%", flag, value]);
            assert_eq!(code, 2, "{flag} {value}: {out}{err}");
            assert!(err.contains(flag) && err.contains("is longer than 24h"), "{flag}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    let (code, _, err) = ststui(&r, &["wait", "web", "--timeout", "18446744073709551615ms"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(r.the_set().metadata.annotations.unwrap_or_default(), before, "nothing written");
    assert_eq!(*r.partitions.lock().unwrap(), [4], "the partition never moved");
}
