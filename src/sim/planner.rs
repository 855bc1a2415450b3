//! Rollout plans run inside the simulator: a scenario's `rollout NAME steps=…` line starts one,
//! and it runs as virtual time passes, as `ststui rollout` runs beside a cluster — the same pure
//! decision (`plan::decide`), its writes through the simulated API (`ops`), its record and lease
//! the verb's annotations, so `explain`, every console and a served `ststui rollout` see it. A
//! plan rehearsed headless or at ×100 is the plan run later on production.
//!
//! Differences from the verb: no checks (a deterministic simulation runs no processes); a halt
//! needs no grace (the simulator sees every write at once); the lease is held until the plan
//! ends, not renewed (no timer keeps `settle` busy while a plan waits at its gate). A plan is
//! evaluated when the set or one of its pods changed, or when its bake or its `stuck-after`
//! comes due (the agenda wakes it); each move is a `plan` line on the timeline.
//!
//! Owns: [`Planner`] (the plans under way) and their moves. Must not: read a wall clock, or
//! write to the store except through `ops`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::clock::{Due, Ticket};
use super::engine::World;
use super::ops::{self, OpError};
use super::store::Change;
use crate::backend::{ClusterOp, EventKind, ObjKind, ObjRef, Op, Write};
use crate::core::labels;
use crate::core::pod::MinReady;
use crate::plan::decide::{self, Baseline, Facts, Next, Start};
use crate::plan::record::{self, Lease, Phase, Record, stamp};
use crate::plan::{OnFailure, Steps};

/// The host a simulator's lease names.
pub const HOST: &str = "ststui-sim";
/// How long the simulator's lease is written for (it is given back when the plan ends).
const HOLD: SignedDuration = SignedDuration::from_hours(24 * 365);
/// Evaluations at one virtual instant beyond which a plan is stopped (a plan writing in
/// circles would otherwise hold time still).
const MAX_RUNS_PER_INSTANT: u32 = 1_000;

/// A `rollout` line: what plan to run on which set.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    pub set: ObjRef,
    pub steps: Steps,
    pub bake_seconds: u64,
    pub stuck_after_ms: u64,
    pub on_failure: OnFailure,
    /// The script line (its errors name it).
    pub line: usize,
}

/// The plans under way.
#[derive(Debug, Default)]
pub struct Planner {
    runs: BTreeMap<ObjRef, Run>,
    dirty: bool,
    /// (instant, evaluations then): the guard against a plan writing in circles.
    instant: (u64, u32),
}

#[derive(Debug, Clone)]
struct Run {
    rollout: Rollout,
    /// Not begun: waits for the controller to observe the spec the plan rolls out.
    begun: bool,
    /// The set's pods when the bake under way began.
    baseline: Option<Baseline>,
    /// The agenda's wake-up for this plan (one at a time).
    wake: Option<Ticket>,
}

impl Planner {
    /// A change of a set or a pod in a namespace with a plan under way: evaluate again.
    pub fn observe(&mut self, change: &Change) {
        if self.runs.is_empty() || !matches!(change.object.kind(), ObjKind::Set | ObjKind::Pod) {
            return;
        }
        let ns = change.object.metadata().namespace.as_deref().unwrap_or_default();
        if self.runs.keys().any(|k| k.namespace == ns) {
            self.dirty = true;
        }
    }

    /// A plan's bake or `stuck-after` came due.
    pub fn wake(&mut self) {
        self.dirty = true;
    }

    /// Whether a plan is to be evaluated now.
    pub fn wants_run(&self) -> bool {
        self.dirty && !self.runs.is_empty()
    }

    /// Whether a plan runs on `set`.
    pub fn runs_on(&self, set: &ObjRef) -> bool {
        self.runs.contains_key(set)
    }
}

/// Starts `r` (it begins once the controller has observed the set's spec).
pub fn start(w: &mut World, r: Rollout) -> Result<(), OpError> {
    let set = w.store.sets().get(&r.set).ok_or_else(|| OpError::SetNotFound(r.set.clone()))?;
    if w.planner.runs_on(&r.set) {
        return Err(OpError::Invalid(format!(
            "a plan already runs on {}: expected it to end (or `approve`) before another starts",
            r.set
        )));
    }
    let now = w.store.clock().timestamp();
    if let Some(held) = record::lease(set).filter(|l| l.holds(now)) {
        return Err(OpError::Invalid(format!(
            "a plan runner holds {}: {}; nothing started",
            r.set,
            held.words()
        )));
    }
    let observed = decide::observed_update_revision(set).is_some();
    let key = r.set.clone();
    let run = Run { rollout: r, begun: false, baseline: None, wake: None };
    w.planner.runs.insert(key.clone(), run);
    w.planner.dirty = true;
    if observed && let Err(why) = evaluate(w, &key) {
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
    let r = match record::plan(set) {
        None => return Err(OpError::Invalid(format!("{key} has no rollout plan to approve"))),
        Some(Err(why)) => return Err(OpError::Invalid(why)),
        Some(Ok(r)) => r,
    };
    let now = w.store.clock().timestamp();
    if r.phase != Phase::Gate {
        return Err(OpError::Invalid(format!(
            "no plan of {key} waits for approval: {}",
            r.words(now)
        )));
    }
    let approved = Record { phase: Phase::Approved, since: stamp(now), ..r };
    let set = set.clone();
    write_record(w, key, None, &approved, &set)
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
        if let Err(why) = evaluate(w, &key) {
            let line = w.planner.runs.get(&key).map_or(0, |r| r.rollout.line);
            refuse(w, &key, line, why);
        }
    }
}

/// The set's pods with their ordinals, as the controller claims them, in ordinal order.
fn pods_of<'w>(w: &'w World, key: &ObjRef, set: &StatefulSet) -> Vec<(i32, &'w Pod)> {
    let uid = set.metadata.uid.as_deref();
    labels::members(&key.name, uid, w.store.pods().in_namespace(&key.namespace))
        .into_iter()
        .map(|p| (labels::ordinal_of(p.metadata.name.as_deref().unwrap_or_default()), p))
        .collect()
}

/// What a look at the plan on `key` decided, owned (so the world can be written to after).
enum Move {
    /// Nothing to do yet: the controller has not observed the spec.
    NotYet,
    /// The plan ends: the set or its record is gone (why).
    Stop(String),
    /// The plan cannot begin (why).
    Refuse(String),
    /// Take the lease, then the first move.
    Begin(Next),
    /// The move, when a wait ends by itself, and what the move needs of the pods.
    Go { next: Next, wake: Option<Timestamp>, seen: Seen },
}

/// What a move needs of the pods as they were decided on.
#[derive(Default)]
struct Seen {
    /// A bake begins: the pods as they are.
    baseline: Option<Baseline>,
    /// A halt: the pods stuck on the plan's revision (for `undo`), name and uid.
    stuck: Vec<(String, String)>,
}

/// Reads the plan on `key` and decides its next move (the world only read).
fn look(w: &World, key: &ObjRef) -> Move {
    let Some(run) = w.planner.runs.get(key) else { return Move::NotYet };
    let Some(set) = w.store.sets().get(key) else {
        return Move::Stop(format!("plan stopped: {key} no longer exists"));
    };
    let pods = pods_of(w, key, set);
    let min_ready =
        MinReady::new(set.spec.min_ready_seconds.unwrap_or(0), &w.controller.options().semantics);
    let facts = Facts {
        set,
        pods: &pods,
        now: w.store.clock().timestamp(),
        min_ready,
        stuck_after_ms: run.rollout.stuck_after_ms,
        baseline: run.baseline.as_ref(),
    };
    if !run.begun {
        if decide::observed_update_revision(set).is_none() {
            return Move::NotYet; // its status wakes us once the controller has observed it
        }
        let r = &run.rollout;
        let start = Start {
            steps: r.steps.clone(),
            bake_seconds: r.bake_seconds,
            checks: Vec::new(),
            on_failure: r.on_failure,
            by: String::new(),
        };
        return match decide::begin(&start, &facts) {
            Ok(first) => Move::Begin(first),
            Err(why) => Move::Refuse(format!("rollout {key}: {why}")),
        };
    }
    let current = match record::plan(set) {
        Some(Ok(r)) => r,
        Some(Err(why)) => return Move::Stop(format!("plan stopped: {why}")),
        None => return Move::Stop(format!("plan stopped: {key}'s plan record is gone (aborted?)")),
    };
    let mut next = decide::decide(&current, &facts);
    if next == Next::Check {
        next = decide::advance(&current, &facts); // the simulator runs no checks
    }
    // When a wait ends by itself: the bake is over, or the step is stuck.
    let wake = match current.phase {
        Phase::Baking => current.since().and_then(|t| {
            let bake = i64::try_from(current.bake_seconds).unwrap_or(i64::MAX / 2);
            t.checked_add(SignedDuration::from_secs(bake)).ok()
        }),
        Phase::Waiting => decide::stuck_deadline(&current, &facts)
            .and_then(|t| t.checked_add(SignedDuration::from_secs(1)).ok()),
        _ => None,
    };
    let seen = match &next {
        Next::Record(r) if r.phase == Phase::Baking => {
            Seen { baseline: Some(decide::baseline(&pods)), ..Seen::default() }
        }
        Next::Halt(r) => Seen { stuck: decide::stuck_on(&r.revision, &pods), ..Seen::default() },
        _ => Seen::default(),
    };
    Move::Go { next, wake, seen }
}

/// One move of the plan on `key`; `Err` says why a plan that has not begun cannot.
fn evaluate(w: &mut World, key: &ObjRef) -> Result<(), String> {
    match look(w, key) {
        Move::NotYet => Ok(()),
        Move::Stop(why) => {
            end(w, key, Some(why));
            Ok(())
        }
        Move::Refuse(why) => Err(why),
        Move::Begin(first) => {
            let set = w.store.sets().get(key).cloned().ok_or(format!("{key} is gone"))?;
            let now = w.store.clock().timestamp();
            let lease = ClusterOp::PlanLease {
                set: key.clone(),
                lease: Some(lease_text(now)),
                seen: set.metadata.annotations.as_ref().and_then(|a| a.get(record::LEASE)).cloned(),
            };
            ops::apply(w, Op::Cluster(Write { op: lease, basis: None }))
                .map_err(|e| format!("rollout {key}: the lease: {e}"))?;
            if let Some(run) = w.planner.runs.get_mut(key) {
                run.begun = true;
            }
            // The lease changed the set: the first move is written on the new one.
            let set = w.store.sets().get(key).cloned().unwrap_or(set);
            carry_out(w, key, first, &set, Seen::default(), None);
            Ok(())
        }
        Move::Go { next, wake, seen } => {
            let Some(set) = w.store.sets().get(key).cloned() else { return Ok(()) };
            carry_out(w, key, next, &set, seen, wake);
            Ok(())
        }
    }
}

fn lease_text(now: Timestamp) -> String {
    let expires = now.checked_add(HOLD).unwrap_or(Timestamp::MAX);
    let l = Lease { holder: String::new(), host: HOST.into(), pid: 0, expires: stamp(expires) };
    serde_json::to_string(&l).unwrap_or_default()
}

fn carry_out(
    w: &mut World,
    key: &ObjRef,
    next: Next,
    set: &StatefulSet,
    seen: Seen,
    wake: Option<Timestamp>,
) {
    match next {
        Next::Open { from, to, record } => {
            let text = format!(
                "step {}/{}: partition {from} → {to}{}",
                record.step,
                record.of,
                decide::opens(set, to, from)
            );
            if write_record(w, key, Some((from, to)), &record, set).is_ok() {
                tell(w, key, &record, text);
            }
        }
        Next::Record(record) => {
            if let Some(run) = w.planner.runs.get_mut(key) {
                run.baseline = seen.baseline;
            }
            if write_record(w, key, None, &record, set).is_ok() {
                tell(w, key, &record, record.phase_words());
            }
        }
        Next::Delete { pod, uid, record } => {
            let at = ObjRef::new(key.namespace.clone(), pod.clone());
            let op = ClusterOp::DeletePod { pod: at, force: false, uid: Some(uid) };
            match ops::apply(w, Op::Cluster(Write { op, basis: None })) {
                Ok(()) => {
                    let text = format!(
                        "step {}/{}: deleted {pod} (OnDelete: it comes back on the update revision)",
                        record.step, record.of
                    );
                    tell(w, key, &record, text);
                }
                Err(e) => fail(w, key, &record, set, format!("deleting {pod}: {e}")),
            }
        }
        Next::Halt(record) => halt(w, key, record, set, &seen.stuck),
        Next::Done => end(w, key, None),
        Next::Wait(_) | Next::Check => schedule(w, key, wake),
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

/// Writes the plan's record (and, with `partition`, moves the partition in the same patch).
fn write_record(
    w: &mut World,
    key: &ObjRef,
    partition: Option<(i32, i32)>,
    r: &Record,
    basis: &StatefulSet,
) -> Result<(), OpError> {
    let op = ClusterOp::Plan {
        set: key.clone(),
        partition,
        record: serde_json::to_string(r).unwrap_or_default(),
    };
    let result = ops::apply(w, Op::Cluster(Write { op, basis: Some(Box::new(basis.clone())) }));
    if let Err(e) = &result
        && w.planner.runs_on(key)
    {
        let why = format!("plan stopped: writing {key}'s plan: {e}");
        w.store.note(EventKind::Error { line: None, message: why });
        end(w, key, None);
    }
    result
}

/// A write the plan needed failed: it halts.
fn fail(w: &mut World, key: &ObjRef, r: &Record, set: &StatefulSet, why: String) {
    let now = w.store.clock().timestamp();
    halt(w, key, decide::halted(r, now, why), set, &[]);
}

fn halt(
    w: &mut World,
    key: &ObjRef,
    record: Record,
    set: &StatefulSet,
    stuck: &[(String, String)],
) {
    // A freeze is the operator's hold, not a failure: it is never undone.
    let frozen = crate::steer::holding(set).is_some();
    let undo =
        !frozen && w.planner.runs.get(key).is_some_and(|r| r.rollout.on_failure == OnFailure::Undo);
    let recorded = record::plan(set).and_then(Result::ok).is_some_and(|r| r.phase == Phase::Halted);
    if !recorded && write_record(w, key, None, &record, set).is_err() {
        return;
    }
    let now = w.store.clock().timestamp();
    let words = record.words(now);
    let holds = match frozen {
        true => "the set is frozen: nothing further opens".to_string(),
        false => format!("the partition holds at {}", record.partition),
    };
    tell(w, key, &record, format!("{words}; {holds}"));
    if undo {
        revert(w, key, &record, stuck);
    }
    end(w, key, None);
}

/// `on-failure=undo`: the template back to the previous revision, the pods stuck on the plan's
/// revision deleted (the forced rollback of kubernetes#67250), each told.
fn revert(w: &mut World, key: &ObjRef, record: &Record, stuck: &[(String, String)]) {
    let undo = ClusterOp::Undo { set: key.clone(), revision: None };
    if let Err(e) = ops::apply(w, Op::Cluster(Write { op: undo, basis: None })) {
        let message = format!("plan {key}: undo: {e}");
        w.store.note(EventKind::Error { line: None, message });
        return;
    }
    tell(w, key, record, "undo: template reverted to the previous revision".into());
    for (name, uid) in stuck {
        let pod = ObjRef::new(key.namespace.clone(), name.clone());
        let op = ClusterOp::DeletePod { pod, force: false, uid: Some(uid.clone()) };
        match ops::apply(w, Op::Cluster(Write { op, basis: None })) {
            Ok(()) => {
                let text = format!("undo: deleted {name} (stuck on {})", record.revision);
                tell(w, key, record, text);
            }
            Err(e) => {
                let message = format!("plan {key}: undo: deleting {name}: {e}");
                w.store.note(EventKind::Error { line: None, message });
            }
        }
    }
}

/// The plan ends (done, halted, stopped: `why`): its lease is given back.
fn end(w: &mut World, key: &ObjRef, why: Option<String>) {
    cancel_wake(w, key);
    w.planner.runs.remove(key);
    if let Some(message) = why {
        w.store.note(EventKind::Error { line: None, message });
    }
    let Some(set) = w.store.sets().get(key) else { return };
    let ours = record::lease(set).is_some_and(|l| l.host == HOST);
    if ours {
        let seen = set.metadata.annotations.as_ref().and_then(|a| a.get(record::LEASE)).cloned();
        let op = ClusterOp::PlanLease { set: key.clone(), lease: None, seen };
        let _ = ops::apply(w, Op::Cluster(Write { op, basis: None }));
    }
}

/// A plan that cannot begin: an `error` line naming the script line.
fn refuse(w: &mut World, key: &ObjRef, line: usize, message: String) {
    cancel_wake(w, key);
    w.planner.runs.remove(key);
    let line = (line > 0).then_some(line);
    w.store.note(EventKind::Error { line, message });
}

/// A `plan` line on the timeline.
fn tell(w: &mut World, key: &ObjRef, r: &Record, text: String) {
    w.store.note_in(&key.namespace, r.event(&key.name, text));
}
