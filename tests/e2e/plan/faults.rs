//! Plans through what a network and a server do: a stalled watch (headers sent, then nothing)
//! during a bake and during a step, 500s and a server away within the lease's slack. Every
//! verdict that ends a bake, calls a step stuck or opens the next rests on a fresh read.

use std::time::Duration;

use ststui::backend::{Fault, ObjRef, Op, SimOp};
use ststui::plan::record::Phase;

use super::*;

/// The server marks `pod` unready (its watch may not say so).
fn unready(r: &Rig, pod: &str) {
    let pod = ObjRef::new("default", pod);
    let op = Op::Sim(SimOp::Fault(Fault::SetPodReady { pod, ready: false }));
    r.call(move |sim| sim.apply_op(op).map_err(|e| e.to_string())).unwrap();
}

/// Every watch stalls for 60 s while step 1 bakes for 20 s, and web-3 goes unready on the
/// server: the bake does not pass on what the stalled watch still shows (before: it passed, ran
/// the checks and opened step 2). The fresh read before the verdict sees web-3 and halts.
#[test]
fn a_bake_never_passes_on_a_stalled_watch() {
    let r = rig("stall-bake", "nginx:1.26");
    let mut runner =
        spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "20s", "--timeout", "90s"]);
    until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking && p.step == 1);
    r.call(|sim| sim.api_fault(ApiFault::StallWatches { ms: 60_000, resource: None }));
    std::thread::sleep(Duration::from_millis(300));
    unready(&r, "web-3");
    let status = runner.wait().unwrap();
    let out = std::io::read_to_string(runner.stdout.take().unwrap()).unwrap();
    let err = std::io::read_to_string(runner.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(3), "halted\n{out}{err}");
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3], "step 2 never opened\n{out}");
    let halted = the_plan(&r).unwrap();
    assert_eq!((halted.phase, halted.step), (Phase::Halted, 1));
    assert!(halted.reason.as_deref().unwrap_or_default().contains("web-3"), "{halted:?}");
}

/// Every watch stalls for 15 s as step 1 opens, with --stuck-after 5s: web-3 comes up on the
/// server while the watch still shows it old. No false "stuck" (before: halted while every pod
/// was updated and Ready); the plan goes on to the end.
#[test]
fn a_stalled_watch_never_makes_a_step_stuck() {
    let r = rig("stall-stuck", "nginx:1.26");
    r.call(|sim| sim.api_fault(ApiFault::StallWatches { ms: 15_000, resource: None }));
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1,100%", "--stuck-after", "5s", "--timeout", "60s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("no progress"), "no false stuck:\n{out}");
    // The test's own watch is stalled too: what it held arrives when the stall ends.
    let deadline = Instant::now() + Duration::from_secs(20);
    while r.partitions.lock().unwrap().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0]);
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Done);
}

/// 500s, then the API server away for 12 s (every request refused) while a plan waits at its gate: the
/// lease's renewal fails and is tried again within its 20 s of slack, the run goes on, and the
/// approval after takes it to the end (before: exit 4 at the first refused renewal, the lease
/// held and the phase left as it was).
#[test]
fn a_server_away_within_the_leases_slack_does_not_end_the_run() {
    let r = rig("down", "nginx:1.26");
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,pause,100%", "--timeout", "90s"]);
    until_plan(&r, "at the gate", |p| p.phase == Phase::Gate);
    // Six requests answered 500 (the lease's renewal among them), then the server away 12 s.
    r.call(|sim| sim.api_fault(ApiFault::Errors { n: 6 }));
    std::thread::sleep(Duration::from_secs(11));
    r.call(|sim| sim.api_fault(ApiFault::Down { ms: 12_000 }));
    std::thread::sleep(Duration::from_secs(13));
    let (code, out, err) = ststui(&r, &["approve", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    let status = runner.wait().unwrap();
    let out = std::io::read_to_string(runner.stdout.take().unwrap()).unwrap();
    let err = std::io::read_to_string(runner.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(0), "{out}{err}");
    assert_eq!(*r.partitions.lock().unwrap(), [4, 3, 0]);
    assert!(record::lease(&r.the_set()).is_none(), "the lease is given back");
    let log = std::fs::read_to_string(r.dir.join("log")).unwrap_or_default();
    assert!(log.contains("500 Internal Server Error"), "the runner met the 500s:\n{log}");
}

/// The sets' watch stalls as step 1 opens, so the runner's copy of the set still shows the plan
/// waiting when its bake has begun on the server; SIGTERM then. The closing line tells where the
/// plan is from the record the runner wrote, not from the stalled copy (before: "waiting, 0s so
/// far" while the server's record said baking).
#[test]
fn a_runner_stopped_behind_a_stalled_watch_says_where_its_plan_is() {
    let r = rig("stall-stop", "nginx:1.26");
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,100%", "--bake", "30s"]);
    until_plan(&r, "step 1 opened", |p| p.step == 1 && p.phase == Phase::Waiting);
    let stall = ApiFault::StallWatches { ms: 60_000, resource: Some("statefulsets") };
    r.call(move |sim| sim.api_fault(stall));
    until_plan(&r, "baking step 1", |p| p.phase == Phase::Baking && p.step == 1);
    // SAFETY: kill(2) on the child this test started.
    unsafe {
        libc::kill(i32::try_from(runner.id()).unwrap(), libc::SIGTERM);
    }
    let status = runner.wait().unwrap();
    let out = std::io::read_to_string(runner.stdout.take().unwrap()).unwrap();
    let err = std::io::read_to_string(runner.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(1), "{out}{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.starts_with("stopped by SIGTERM: plan 1/2 (1): baking"), "{out}");
    assert!(last.contains("`ststui rollout web --steps 1,100% --bake 30s` resumes it"), "{out}");
}
