//! The real-time driver: the initial state comes out first, ops reach the simulation, failures
//! come back as `OpFailed`, speed changes are reported, and an attached script plays. Runs at a
//! high speed with short virtual durations; waits are bounded but nothing asserts on wall time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sim_world_common::*;
use ststui::backend::{
    Backend, BackendEvent, ClusterOp, EventKind, FailureKind, Mode, ObjKind, Object, Op, SimOp,
};
use ststui::sim::driver::{self, Script};
use ststui::sim::{KubeletConfig, Sim};

type Seen = Arc<Mutex<Vec<BackendEvent>>>;

fn start(sim: Sim, speed: f64) -> (driver::SimHandle, Seen) {
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    let handle = driver::spawn(
        sim,
        speed,
        Arc::new(move |ev| {
            if let Ok(mut v) = sink.lock() {
                v.push(ev);
            }
        }),
    );
    (handle, seen)
}

/// Waits (bounded) until `pred` holds for the events seen so far.
fn wait_for(seen: &Seen, what: &str, pred: impl Fn(&[BackendEvent]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if seen.lock().map(|v| pred(&v)).unwrap_or(false) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn kubelet_event(ev: &BackendEvent, pod: &str, what: &str) -> bool {
    matches!(ev, BackendEvent::Timeline(e)
        if matches!(&e.kind, EventKind::Kubelet { pod: p, event } if p == pod && event == what))
}

#[test]
fn initial_state_then_ops_reach_the_sim_and_events_come_back() {
    let mut sim = sim_with_fake(KubeletConfig {
        start_ms: 10,
        ready_ms: 10,
        stop_ms: 10,
        broken: None,
        failure: Default::default(),
    });
    sim.create_set(set("web", 1)).unwrap();
    let (mut handle, seen) = start(sim, 100.0);
    assert!(handle.capabilities().pause_reconcile && handle.capabilities().speed);
    wait_for(&seen, "web-0 ready", |v| v.iter().any(|e| kubelet_event(e, "web-0", "ready")));
    {
        let v = seen.lock().unwrap();
        assert!(
            matches!(&v[0], BackendEvent::Listed { kind: ObjKind::Set, objects, .. }
                if matches!(&objects[..], [Object::Set(s)] if s.metadata.name.as_deref() == Some("web"))),
            "{:?}",
            v[0]
        );
        assert!(matches!(&v[3], BackendEvent::Listed { kind: ObjKind::Pod, .. }));
        assert!(matches!(&v[4], BackendEvent::Listed { kind: ObjKind::Budget, .. }));
        assert_eq!(v[5], BackendEvent::Server { version: "v1.37.0".into() });
        assert_eq!(v[6], BackendEvent::Synced);
        assert_eq!(v[7], BackendEvent::Mode(Mode::Live));
        assert!(v.iter().any(|e| matches!(e, BackendEvent::Clock { .. })));
    }
    handle.execute(Op::from(ClusterOp::Scale { set: key("web"), replicas: 2 }));
    wait_for(&seen, "web-1 ready", |v| v.iter().any(|e| kubelet_event(e, "web-1", "ready")));
    handle.execute(Op::Sim(SimOp::Pause));
    wait_for(&seen, "paused", |v| v.contains(&BackendEvent::Mode(Mode::Paused)));
    handle.execute(Op::from(ClusterOp::SetPartition { set: key("web"), partition: -1 }));
    wait_for(&seen, "OpFailed", |v| {
        v.iter().any(|e| {
            matches!(e, BackendEvent::OpFailed(f)
            if f.op == "partition default/web -1" && f.kind == FailureKind::Invalid
                && f.message.contains("partition: Invalid value: -1: must be greater than or equal to 0"))
        })
    });
    handle.execute(Op::Sim(SimOp::SetSpeed { speed: 0.0 }));
    wait_for(&seen, "bad speed refused", |v| {
        v.iter().any(|e| {
            matches!(e, BackendEvent::OpFailed(f)
            if f.message == "speed 0 is out of range: expected 0.01 to 1000")
        })
    });
    handle.execute(Op::Sim(SimOp::SetSpeed { speed: 7.0 }));
    wait_for(&seen, "speed 7", |v| {
        v.iter().any(|e| matches!(e, BackendEvent::Clock { speed, .. } if *speed == 7.0))
    });
    handle.execute(Op::from(ClusterOp::DeletePod { pod: key("web-1"), force: true, uid: None }));
    wait_for(&seen, "web-1 deleted", |v| {
        v.iter().any(|e| matches!(e, BackendEvent::Deleted(Object::Pod(p)) if p.metadata.name.as_deref() == Some("web-1")))
    });
    drop(handle);
}

/// A two-step script: scale to 3 at virtual 50 ms, then finish.
struct ScaleLater {
    done: bool,
}

impl Script for ScaleLater {
    fn poll(&mut self, sim: &mut Sim) -> Option<u64> {
        if sim.now_ms() < 50 {
            return Some(50);
        }
        if !self.done {
            self.done = true;
            sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 3 })).ok()?;
        }
        None
    }
}

#[test]
fn an_attached_script_plays_on_virtual_time() {
    let mut sim = sim_with_fake(KubeletConfig::instant());
    sim.create_set(set("web", 1)).unwrap();
    let (handle, seen) = start(sim, 50.0);
    handle.attach_script(Box::new(ScaleLater { done: false }));
    wait_for(&seen, "web-2 created", |v| {
        v.iter().any(|e| matches!(e, BackendEvent::Applied(Object::Pod(p)) if p.metadata.name.as_deref() == Some("web-2")))
    });
    // The end of the script is told once, after its own events.
    wait_for(&seen, "the script's end", |v| {
        v.iter().any(|e| matches!(e, BackendEvent::Notice(t) if t == "script finished"))
    });
    drop(handle);
    let v = seen.lock().unwrap();
    assert_eq!(v.iter().filter(|e| matches!(e, BackendEvent::Notice(_))).count(), 1);
}

/// With nothing due (the set is steady), the shown clock keeps running: clock events arrive for
/// later whole virtual seconds, at most one per second shown (never a burst of identical ones).
#[test]
fn the_clock_keeps_running_while_nothing_is_due() {
    let mut sim = sim_with_fake(KubeletConfig::instant());
    sim.create_set(set("web", 1)).unwrap();
    let (handle, seen) = start(sim, 200.0);
    let seconds = |v: &[BackendEvent]| -> Vec<i64> {
        v.iter()
            .filter_map(|e| match e {
                BackendEvent::Clock { now, .. } => Some(now.as_second()),
                _ => None,
            })
            .collect()
    };
    wait_for(&seen, "a clock event 3 virtual seconds in", |v| {
        let s = seconds(v);
        s.last().is_some_and(|last| s.first().is_some_and(|first| last - first >= 3))
    });
    drop(handle);
    let s = seconds(&seen.lock().unwrap());
    assert!(s.windows(2).all(|w| w[0] <= w[1]), "clock went backwards: {s:?}");
    let repeats = s.windows(2).filter(|w| w[0] == w[1]).count();
    assert!(repeats <= 2, "clock events repeat the same second while idle: {s:?}");
}

/// Syncs run by [`slow_reconcile`] so far.
static SLOW_SYNCS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A stand-in core that takes 20 ms a sync (a huge set on a slow machine).
fn slow_reconcile(
    o: &ststui::core::Observed<'_>,
    opts: &ststui::core::Options,
    now: ststui::core::Now,
) -> ststui::core::Plan {
    SLOW_SYNCS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(20));
    let mut plan = fake_reconcile(o, opts, now);
    plan.effects.clear();
    plan
}

/// However much work is due, the driver reads its messages between bounded slices: a pause sent
/// while 40 syncs are queued at one instant lands before they have all run, and dropping the
/// handle stops the thread mid-backlog.
#[test]
fn pause_and_quit_answer_while_a_backlog_runs() {
    let mut sim = Sim::new(ststui::sim::SimConfig::default()).with_reconciler(slow_reconcile);
    for i in 0..40 {
        sim.create_set(set(&format!("s{i}"), 1)).unwrap();
    }
    let (mut handle, seen) = start(sim, 1.0);
    handle.execute(Op::Sim(SimOp::Pause));
    wait_for(&seen, "paused", |v| v.contains(&BackendEvent::Mode(Mode::Paused)));
    let at_pause = SLOW_SYNCS.load(std::sync::atomic::Ordering::SeqCst);
    assert!(at_pause < 40, "the pause waited for the whole backlog ({at_pause} syncs)");
    handle.execute(Op::Sim(SimOp::Resume));
    wait_for(&seen, "live", |v| {
        v.iter().filter(|e| **e == BackendEvent::Mode(Mode::Live)).count() >= 2
    });
    drop(handle);
    let at_drop = SLOW_SYNCS.load(std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(300));
    let after = SLOW_SYNCS.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after <= at_drop + 1, "the thread went on after the drop: {at_drop} → {after}");
    assert!(after < 80, "every sync ran: the drop did not stop the backlog ({after})");
}
