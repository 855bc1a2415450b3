//! Rehearsed gates: a plan the simulator runs with `gates=…` asks its gates as `ststui rollout`
//! would, and each answers as the scenario's `gate` lines say — at once after a second of
//! virtual time, or slowly (`slow=30s`), "not yet" a number of times (`not-yet=3`, exit 75),
//! failing (`fail`, exit 1), or naming a leader (`leader=web-0` for `last-by`; the set's pod 0
//! otherwise). Nothing is executed: a deterministic simulation runs no processes.
//!
//! Owns: the faults and the rehearsed outcomes. Must not: read a wall clock.

use k8s_openapi::jiff::Timestamp;

use super::super::world::World;
use crate::backend::ObjRef;
use crate::plan::engine::GateRun;
use crate::plan::gate::{GateKind, Outcome, Verdict};
use crate::sim::scenario::GateArgs;

/// How long a rehearsed gate takes when no `slow=` is given.
const TAKES_MS: u64 = 1_000;

/// A `gate` line: the fault of `target`'s gate (`pass` clears it).
pub fn set(w: &mut World, target: &ObjRef, g: &GateArgs) {
    let key = (target.namespace.clone(), target.name.clone(), g.kind);
    let clear = !g.fail && g.slow_ms.is_none() && g.not_yet.is_none() && g.leader.is_none();
    if clear {
        w.planner.faults.remove(&key);
        return;
    }
    let f = w.planner.faults.entry(key).or_default();
    f.fail = g.fail;
    if g.slow_ms.is_some() {
        f.slow_ms = g.slow_ms;
    }
    if let Some(n) = g.not_yet {
        f.not_yet = n;
    }
    if g.leader.is_some() {
        f.leader = g.leader.clone();
    }
}

/// Starts the rehearsed `run` of the plan `run_key` (on `key`, the set it is about): its answer
/// is due after its time.
pub(super) fn start(w: &mut World, run_key: &ObjRef, key: &ObjRef, run: &GateRun) {
    let target = run.pod.as_ref().map_or(key.name.clone(), |p| p.name.clone());
    let fkey = (key.namespace.clone(), target.clone(), run.kind);
    let f = w.planner.faults.get(&fkey).cloned().unwrap_or_default();
    let took = f.slow_ms.unwrap_or(TAKES_MS);
    let timeout = run.timeout_ms;
    let (verdict, how, tail) = if took > timeout {
        (Verdict::Fail, format!("no end within {}", crate::plan::duration_words(timeout)), vec![])
    } else if f.fail {
        let line = format!("rehearsed failure (gate {target} {} fail)", run.kind.word());
        (Verdict::Fail, "exit 1".to_string(), vec![line])
    } else if f.not_yet > 0 {
        if let Some(f) = w.planner.faults.get_mut(&fkey) {
            f.not_yet -= 1;
        }
        let line = format!("not yet ({} more)", f.not_yet - 1);
        (Verdict::NotYet, "exit 75".to_string(), vec![line])
    } else if run.kind == GateKind::LastBy {
        let leader = f.leader.clone().unwrap_or_else(|| format!("{}-0", key.name));
        (Verdict::Go, "exit 0".to_string(), vec![leader])
    } else {
        (Verdict::Go, "exit 0".to_string(), Vec::new())
    };
    let took = took.min(timeout);
    let due = w.store.clock().now_ms() + took;
    let outcome = Outcome { verdict, how, tail, took_ms: took };
    if let Some(r) = w.planner.runs.get_mut(run_key) {
        r.gate = Some((due, outcome));
    }
}

/// `until`, or sooner when the plan's rehearsed gate answers before.
pub(super) fn sooner(w: &World, key: &ObjRef, until: Option<Timestamp>) -> Option<Timestamp> {
    let Some((due, _)) = w.planner.runs.get(key).and_then(|r| r.gate.as_ref()) else {
        return until;
    };
    let epoch = w.store.clock().epoch_unix_ms();
    let at = i64::try_from(*due).ok().and_then(|d| Timestamp::from_millisecond(epoch + d).ok());
    match (until, at) {
        (Some(u), Some(a)) => Some(u.min(a)),
        (u, a) => a.or(u),
    }
}
