//! Rollout plans run inside the simulator: a scenario's `rollout NAME steps=…` line starts one,
//! and it runs as virtual time passes — the plan engine (`plan::engine`, the one `ststui
//! rollout` and the console run, through `plan::run`: a group's `rollout group=` line too)
//! adapted to the simulated world: its writes through the
//! simulated API (`ops`), answered at once with the set as stored; its record and lease the
//! verb's annotations, so `explain`, every console and a served `ststui rollout` see it. A plan
//! rehearsed headless or at ×100 is the plan run later on production.
//!
//! Differences from the verb, all in the engine's [`Config`]: no checks (a deterministic
//! simulation runs no processes); no fresh reads (the store is the truth); the lease is held
//! until the plan ends, not renewed (no timer keeps `settle` busy while a plan waits at its
//! gate); a plan waits for the controller to observe its spec as long as that takes. A plan is
//! evaluated when the set or one of its pods changed, or when its bake or its `stuck-after`
//! comes due (the agenda wakes it); each move is a `plan` line on the timeline.
//!
//! Owns: [`Planner`] (the plans under way) and the adapter. Must not: read a wall clock, or
//! write to the store except through `ops`.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::clock::Due;
use super::ops::{self, OpError};
use super::world::World;
use crate::backend::{ClusterOp, EventKind, Failure, ObjRef, Op, Write};
use crate::core::labels;
use crate::plan::ask::Ask;
use crate::plan::engine::{Act, Config};
use crate::plan::record::{self, Phase, Reading, Record, stamp};
use crate::plan::run::{Run, RunEnd, RunView, Step};
use crate::plan::{OnFailure, Steps};

mod gates;
mod group;
pub mod state;
pub use gates::set as set_gate_fault;
pub use group::{GroupRollout, start as start_group};
use state::Running;
pub use state::{Fault, Faults, Planner};

/// The host a simulator's lease names.
pub const HOST: &str = "ststui-sim";
/// How long the simulator's lease is written for (it is given back when the plan ends).
const HOLD: SignedDuration = crate::plan::overclaim::SIMULATOR_TERM;
/// Evaluations at one virtual instant beyond which a plan is stopped (a plan writing in
/// circles would otherwise hold time still).
const MAX_RUNS_PER_INSTANT: u32 = 1_000;
/// Engine turns in one evaluation (each write is answered at once, so a turn follows a turn).
const TURNS: usize = 64;

/// A `rollout` line: what plan to run on which set.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    pub set: ObjRef,
    pub steps: Steps,
    pub bake_seconds: u64,
    pub stuck_after_ms: u64,
    pub on_failure: OnFailure,
    /// The gates rehearsed (`sim:`), as the `gate` lines make them answer.
    pub gates: crate::plan::gate::Gates,
    /// Pods stuck broken on an older revision are replaced first.
    pub replace_stuck: bool,
    /// A Recreate set's image, set by the plan when its step opens (`rollout --image`).
    pub image: Option<String>,
    /// The script line (its errors name it).
    pub line: usize,
}

/// How the simulator runs `r`'s plan (see the module's doc).
fn config(r: &Rollout) -> Config {
    Config {
        set: r.set.clone(),
        host: HOST.into(),
        pid: 0,
        hold: HOLD,
        renew: HOLD,
        retry: SignedDuration::from_secs(1),
        fresh_reads: false,
        observe: SignedDuration::from_secs(10),
        runs_checks: false,
        stuck_after_ms: r.stuck_after_ms,
        dead: None,
        wait_lease: false,
        take_overclaimed: false,
        believe: HOLD,
        observe_spec: None,
        group: None,
    }
}

/// What `r` asks: the scenario says what plan to run.
fn ask(r: &Rollout) -> Ask {
    Ask {
        steps: Some(r.steps.clone()),
        bake_seconds: r.bake_seconds,
        checks: Vec::new(),
        on_failure: r.on_failure,
        // The scenario says what plan to run: it replaces what the set records.
        force: true,
        continue_halted: false,
        gates: r.gates.clone(),
        by: String::new(),
        replace_stuck: r.replace_stuck,
        max_restarts: None,
        image: r.image.clone(),
    }
}

/// Starts `r`; refused at once (the line's error) when it cannot begin.
pub fn start(w: &mut World, r: Rollout) -> Result<(), OpError> {
    let Some(set) = w.store.sets().get(&r.set) else {
        return Err(OpError::SetNotFound(r.set.clone()));
    };
    if r.image.is_some() && !crate::plan::recreate::applies(set) {
        return Err(OpError::Invalid(format!(
            "image= is set by a Recreate set's plan as its step opens; {} uses {}: set the \
             image with an `image` line while the set is frozen, then start the plan",
            r.set,
            crate::core::spec::UpdateType::of(set)
        )));
    }
    if w.planner.runs_on(&r.set) {
        return Err(OpError::Invalid(format!(
            "a plan already runs on {}: expected it to end (or `approve`) before another starts",
            r.set
        )));
    }
    let key = r.set.clone();
    let run = Box::new(Run::one(config(&r), ask(&r)));
    let run = Running { line: r.line, run, wake: None, gate: None };
    w.planner.runs.insert(key.clone(), run);
    w.planner.dirty = true;
    if let Some(why) = evaluate(w, &key) {
        // It cannot begin: the line itself is refused.
        cancel_wake(w, &key);
        w.planner.runs.remove(&key);
        return Err(OpError::Invalid(why));
    }
    Ok(())
}

/// `approve NAME`: the plan waiting at its gate goes on (whoever runs it).
pub fn approve(w: &mut World, key: &ObjRef) -> Result<(), OpError> {
    let set = w.store.sets().get(key).ok_or_else(|| OpError::SetNotFound(key.clone()))?;
    let r = match record::read(set) {
        Reading::None => {
            return Err(OpError::Invalid(format!("{key} has no rollout plan to approve")));
        }
        Reading::Invalid(why) => {
            return Err(OpError::Invalid(Reading::invalid_words(&why, &key.name)));
        }
        Reading::Plan(r) => r,
    };
    let now = w.store.clock().timestamp();
    if r.phase != Phase::Gate {
        return Err(OpError::Invalid(format!(
            "no plan of {key} waits for approval: {}",
            r.words(now)
        )));
    }
    let approved = Record { phase: Phase::Approved, since: stamp(now), ..*r };
    let op = ClusterOp::Plan {
        set: key.clone(),
        partition: None,
        record: serde_json::to_string(&approved).unwrap_or_default(),
    };
    let basis = Some(Box::new(set.clone()));
    ops::apply(w, Op::Cluster(Write::on(op, basis)))
}

/// Evaluates every plan under way once (the engine calls it while [`Planner::wants_run`]).
pub fn run(w: &mut World) {
    w.planner.dirty = false;
    let now_ms = w.store.clock().now_ms();
    let (at, n) = w.planner.instant;
    w.planner.instant = if at == now_ms { (at, n + 1) } else { (now_ms, 1) };
    let keys: Vec<ObjRef> = w.planner.runs.keys().cloned().collect();
    for key in keys {
        if w.planner.instant.1 > MAX_RUNS_PER_INSTANT {
            let why = format!(
                "plan stopped: more than {MAX_RUNS_PER_INSTANT} moves at one instant (a plan \
                 writing in circles)"
            );
            end(w, &key, Some(why));
            continue;
        }
        if let Some(why) = evaluate(w, &key) {
            let line = w.planner.runs.get(&key).map_or(0, |r| r.line);
            refuse(w, &key, line, why);
        }
    }
}

/// The run's turns on `key` until it waits or ends; `Some(why)` when the plan could not begin
/// (nothing was written).
fn evaluate(w: &mut World, key: &ObjRef) -> Option<String> {
    for _ in 0..TURNS {
        let mut running = w.planner.runs.remove(key)?;
        let now = w.store.clock().timestamp();
        if let Some((due, _)) = &running.gate
            && w.store.clock().now_ms() >= *due
            && let Some((_, outcome)) = running.gate.take()
        {
            running.run.gated(outcome);
        }
        let step = turn(w, &mut running.run, now);
        let group = running.run.group_name().map(str::to_string);
        for (i, said) in running.run.said() {
            let set = running.run.sets()[i].clone();
            match (said.record.is_some(), &group) {
                (false, Some(group)) => {
                    let kind =
                        EventKind::Group { group: group.clone(), set: set.name, text: said.text };
                    w.store.note_in(&set.namespace, kind);
                }
                _ => tell_said(w, &set, said),
            }
        }
        let about = running.run.about().clone();
        w.planner.runs.insert(key.clone(), running);
        let act = match step {
            Step::Do(act) => act,
            Step::End(end) => return ended(w, key, end, group.as_deref()),
        };
        match act {
            Act::Write(write) => {
                let target = write.op.target().clone();
                let result = ops::apply(w, Op::Cluster(write.clone()));
                let result = match result {
                    Ok(()) => Ok(w.store.sets().get(&target).cloned()),
                    Err(e) => {
                        Err(Box::new(Failure::new(write.op.describe(), e.kind(), e.to_string())))
                    }
                };
                if let Some(running) = w.planner.runs.get_mut(key) {
                    running.run.wrote(now, result);
                }
            }
            Act::Revert { revision, stuck, .. } => {
                let outcome = revert(w, &about, &revision, &stuck);
                if let Some(running) = w.planner.runs.get_mut(key) {
                    running.run.reverted(outcome);
                }
            }
            Act::Wait { until, .. } => {
                let until = gates::sooner(w, key, until);
                schedule(w, key, until);
                return None;
            }
            Act::Gate(g) => {
                gates::start(w, key, &about, &g);
                let until = gates::sooner(w, key, None);
                schedule(w, key, until);
                return None;
            }
            // Never asked of the simulator (no fresh reads, no checks).
            Act::Read | Act::Check { .. } | Act::End(_) => return None,
        }
    }
    end(w, key, Some(format!("plan stopped: more than {TURNS} moves in one evaluation")));
    None
}

/// A line a plan said, on the timeline of the set it is about.
fn tell_said(w: &mut World, key: &ObjRef, said: crate::plan::engine::Said) {
    match &said.record {
        Some(r) => w.store.note_in(&key.namespace, r.event(&key.name, said.text)),
        None => {
            let text = format!("plan {}: {}", key.name, said.text);
            w.store.note_in(&key.namespace, EventKind::Command { line: 0, text });
        }
    }
}

/// One turn of the run on the store as it is (borrowed: nothing cloned per evaluation).
fn turn(w: &World, run: &mut Run, now: Timestamp) -> Step {
    let sets: Vec<Option<&StatefulSet>> =
        run.sets().iter().map(|k| w.store.sets().get(k)).collect();
    let pods: Vec<Vec<(i32, &Pod)>> = run
        .sets()
        .iter()
        .zip(&sets)
        .map(|(k, s)| s.map(|s| pods_of(w, k, s)).unwrap_or_default())
        .collect();
    let frozen: Vec<Option<String>> =
        sets.iter().map(|s| s.and_then(crate::steer::holding).map(|f| f.words())).collect();
    let members =
        crate::plan::member::members(&sets, &pods, &frozen, |_| w.controller.options().semantics);
    let ns = run.sets().first().map(|k| k.namespace.clone()).unwrap_or_default();
    let budgets: Vec<_> = w.store.budgets().in_namespace(&ns).collect();
    run.next(&RunView { members: &members, now, fresh: true, budgets: &budgets })
}

/// The set's pods with their ordinals, as the controller claims them, in ordinal order.
fn pods_of<'w>(w: &'w World, key: &ObjRef, set: &StatefulSet) -> Vec<(i32, &'w Pod)> {
    let uid = set.metadata.uid.as_deref();
    labels::members(&key.name, uid, w.store.pods().in_namespace(&key.namespace))
        .into_iter()
        .map(|p| (labels::ordinal_of(p.metadata.name.as_deref().unwrap_or_default()), p))
        .collect()
}

/// The run ended: a refusal is returned (the line's error), anything else ends it (a stop with
/// an error line).
fn ended(w: &mut World, key: &ObjRef, end: RunEnd, group: Option<&str>) -> Option<String> {
    match (end, group) {
        (RunEnd::Refused { why, .. }, None) => Some(format!("rollout {key}: {why}")),
        (RunEnd::Refused { why, .. }, Some(_)) => {
            Some(format!("rollout {}: {why}", key.name.replacen("group/", "group=", 1)))
        }
        (RunEnd::Stopped { why, .. }, group) => {
            let what = if group.is_some() { "group plan" } else { "plan" };
            self::end(w, key, Some(format!("{what} stopped: {why}")));
            None
        }
        (RunEnd::Done | RunEnd::Halted { .. }, _) => {
            self::end(w, key, None);
            None
        }
    }
}

/// Wakes the plan at `wake`: its bake or its `stuck-after` comes due (a gate waits for a
/// change).
fn schedule(w: &mut World, key: &ObjRef, wake: Option<Timestamp>) {
    let Some(run) = w.planner.runs.get(key) else { return };
    let Some(wake) = wake else { return cancel_wake(w, key) };
    let epoch = w.store.clock().epoch_unix_ms();
    let wake_ms = u64::try_from(wake.as_millisecond().saturating_sub(epoch)).unwrap_or(0);
    let now_ms = w.store.clock().now_ms();
    let at = wake_ms.max(now_ms + 1);
    if run.wake.is_some_and(|t| t.at_ms == at) {
        return;
    }
    cancel_wake(w, key);
    let ticket = w.agenda.schedule(at, Due::Plan(key.clone()));
    if let Some(run) = w.planner.runs.get_mut(key) {
        run.wake = Some(ticket);
    }
}

fn cancel_wake(w: &mut World, key: &ObjRef) {
    if let Some(t) = w.planner.runs.get_mut(key).and_then(|r| r.wake.take()) {
        w.agenda.cancel(t);
    }
}

/// `on-failure=undo`: the template back to the previous revision, the pods stuck on the plan's
/// revision deleted (the forced rollback of kubernetes#67250), each told.
fn revert(
    w: &mut World,
    key: &ObjRef,
    revision: &str,
    stuck: &[(String, String)],
) -> Result<(), String> {
    let undo = ClusterOp::Undo { set: key.clone(), revision: None };
    ops::apply(w, Op::Cluster(Write::new(undo))).map_err(|e| format!("undo: {e}"))?;
    tell(w, key, "undo: template reverted to the previous revision".into());
    for (name, uid) in stuck {
        let pod = ObjRef::new(key.namespace.clone(), name.clone());
        let op = ClusterOp::EvictPod { pod, uid: Some(uid.clone()) };
        match ops::apply(w, Op::Cluster(Write::new(op))) {
            Ok(()) => tell(w, key, format!("undo: evicted {name} (stuck on {revision})")),
            Err(e) => {
                let message = format!("plan {key}: undo: evicting {name}: {e}");
                w.store.note(EventKind::Error { line: None, message });
            }
        }
    }
    Ok(())
}

/// A `plan` line about the set's recorded plan (the undo's moves).
fn tell(w: &mut World, key: &ObjRef, text: String) {
    let Some(r) = w.store.sets().get(key).and_then(|s| record::read(s).plan().cloned()) else {
        return;
    };
    w.store.note_in(&key.namespace, r.event(&key.name, text));
}

/// The plan ends (done, halted, stopped: `why`); the engine gave its lease back.
fn end(w: &mut World, key: &ObjRef, why: Option<String>) {
    cancel_wake(w, key);
    w.planner.runs.remove(key);
    if let Some(message) = why {
        w.store.note(EventKind::Error { line: None, message });
    }
}

/// A plan that cannot begin: an `error` line naming the script line.
fn refuse(w: &mut World, key: &ObjRef, line: usize, message: String) {
    cancel_wake(w, key);
    w.planner.runs.remove(key);
    let line = (line > 0).then_some(line);
    w.store.note(EventKind::Error { line, message });
}
