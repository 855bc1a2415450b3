//! A rollout plan run by the console itself (`P`): the same pure decision as `ststui rollout`
//! (`plan::decide`), taken at the end of every batch on what the mirror shows, its writes sent
//! as [`Command`]s through the backend like any key's. It works on a cluster and in the
//! simulator alike (a plan rehearsed at ×100 is the plan run later on production).
//!
//! Differences from the verb: no `--check` commands (a console runs no processes; a pipeline
//! runs checks), failures hold (`ststui abort` or `u` then reverts), and a step is not done
//! until the mirror shows what the console wrote. The lease is the verb's: a console refuses to
//! start while a live runner holds it, takes it, renews it every 10 s of the backend's clock
//! and gives it back when the plan ends.
//!
//! Owns: [`PlanRun`] and when it writes. Must not: read a clock (the backend's `now` is the
//! time), or touch the terminal.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::msg::Command;
use super::notify::{error, info, push_now};
use super::state::{AppState, Origin};
use crate::backend::{ClusterOp, EventKind, ObjRef, Op, Write};
use crate::core::pod::MinReady;
use crate::plan::decide::{self, Baseline, Facts, Next, Start};
use crate::plan::record::{self, Lease, Phase, Record, stamp};
use crate::plan::{OnFailure, Steps};

/// The host a console's lease names (a console's lease is taken over only when it runs out).
const HOST: &str = "ststui-console";
/// How long a step's pods may take before the plan halts.
pub const STUCK_AFTER_MS: u64 = 600_000;
/// The lease's hold and renewal period (backend time).
const HOLD_S: i64 = 30;
const RENEW_S: i64 = 10;
/// How long a write is awaited on the watch, and a halt's grace for an explaining change.
const OBSERVE_S: i64 = 10;
const GRACE_S: i64 = 2;

/// A plan this console runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRun {
    pub set: ObjRef,
    /// The record last written, until the mirror shows it (and when it was written).
    written: Option<(Record, Timestamp)>,
    /// The set's pods when the bake under way began.
    baseline: Option<Baseline>,
    /// When the lease is renewed next.
    renew_at: Timestamp,
    /// A halt first seen then (decided again after the grace).
    halt_seen: Option<Timestamp>,
}

/// This console's lease (its holder is filled in by the write path with who we are).
fn lease(now: Timestamp) -> String {
    let expires = now.checked_add(SignedDuration::from_secs(HOLD_S)).unwrap_or(now);
    let l = Lease {
        holder: String::new(),
        host: HOST.into(),
        pid: std::process::id(),
        expires: stamp(expires),
    };
    serde_json::to_string(&l).unwrap_or_default()
}

fn lease_text(set: &StatefulSet) -> Option<String> {
    set.metadata.annotations.as_ref()?.get(record::LEASE).cloned()
}

fn cluster(op: ClusterOp, basis: Option<&StatefulSet>) -> Command {
    Command::Backend(Op::Cluster(Write { op, basis: basis.cloned().map(Box::new) }))
}

fn note(state: &mut AppState, text: String) {
    push_now(state, EventKind::Command { line: 0, text }, Origin::Notice);
}

/// A `plan` line on the timeline, as the simulator's planner and the verb word it.
fn tell(state: &mut AppState, set: &ObjRef, r: &Record, text: String) {
    push_now(state, r.event(&set.name, text), Origin::Notice);
}

/// Starts a plan of `steps` with `bake_seconds` on `set`: refused (the status line's words)
/// while another runner holds the set or the plan cannot start.
pub fn start(
    state: &mut AppState,
    set: ObjRef,
    steps: Steps,
    bake_seconds: u64,
) -> Result<Vec<Command>, String> {
    let now = state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let s = state.mirror.set(&set).ok_or_else(|| format!("{set} no longer exists"))?.clone();
    if let Some(held) = record::lease(&s).filter(|l| l.holds(now)) {
        return Err(format!("a plan runner holds {set}: {}", held.words()));
    }
    let start = Start {
        steps,
        bake_seconds,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        by: String::new(),
    };
    let first = {
        let pods: Vec<(i32, &Pod)> = state.mirror.pods_of(&set).collect();
        let facts = facts(state, &s, &pods, now, None);
        decide::begin(&start, &facts).map_err(|e| format!("{set}: {e}"))?
    };
    let mut cmds = vec![cluster(
        ClusterOp::PlanLease { set: set.clone(), lease: Some(lease(now)), seen: lease_text(&s) },
        None,
    )];
    let renew_at = now.checked_add(SignedDuration::from_secs(RENEW_S)).unwrap_or(now);
    state.plan_run = Some(PlanRun {
        set: set.clone(),
        written: None,
        baseline: None,
        renew_at,
        halt_seen: None,
    });
    note(
        state,
        format!(
            "plan {} steps={} bake={}s: started by this console",
            set.name, start.steps, bake_seconds
        ),
    );
    cmds.extend(carry_out(state, first, &s, None));
    Ok(cmds)
}

fn facts<'a>(
    state: &AppState,
    set: &'a StatefulSet,
    pods: &'a [(i32, &'a Pod)],
    now: Timestamp,
    baseline: Option<&'a Baseline>,
) -> Facts<'a> {
    let seconds = set.spec.min_ready_seconds.unwrap_or(0);
    let min_ready = MinReady::new(seconds, &state.options.semantics);
    Facts { set, pods, now, min_ready, stuck_after_ms: STUCK_AFTER_MS, baseline }
}

/// At the end of a batch: the plan's next move, if this console runs one.
pub fn drive(state: &mut AppState) -> Vec<Command> {
    let (Some(run), Some(now)) = (state.plan_run.as_ref(), state.now) else { return Vec::new() };
    // What this batch reads of the run (not its baseline: the decision borrows that).
    let (key, written, halt_seen) = (run.set.clone(), run.written.clone(), run.halt_seen);
    let Some(set) = state.mirror.set(&key).cloned() else {
        stop(state, format!("plan stopped: {key} no longer exists"));
        return Vec::new();
    };
    let mut cmds = renew(state, &set, now);
    if state.plan_run.is_none() {
        return cmds;
    }
    let recorded = record::plan(&set).and_then(Result::ok);
    if let Some((w, at)) = &written {
        // Its writer's name is filled in on the way (`by`): the rest must read back.
        let same = |r: &Record| {
            (r.step, r.phase, &r.since, r.partition) == (w.step, w.phase, &w.since, w.partition)
        };
        if !recorded.as_ref().is_some_and(same)
            && now.duration_since(*at) < SignedDuration::from_secs(OBSERVE_S)
        {
            return cmds;
        }
        if let Some(r) = state.plan_run.as_mut() {
            r.written = None;
        }
    }
    let Some(current) = recorded else {
        stop(state, format!("plan stopped: {key}'s plan record is gone (aborted?)"));
        return cmds;
    };
    // Decided on the mirror's pods as they are (borrowed, never copied per batch).
    let (next, baseline) = {
        let pods: Vec<(i32, &Pod)> = state.mirror.pods_of(&key).collect();
        let base = state.plan_run.as_ref().and_then(|r| r.baseline.as_ref());
        let facts = facts(state, &set, &pods, now, base);
        let mut next = decide::decide(&current, &facts);
        if next == Next::Check {
            // A console runs no check commands: the step is done.
            next = decide::advance(&current, &facts);
        }
        // A bake that begins compares with the pods as they are now.
        let baking = matches!(&next, Next::Record(r) if r.phase == Phase::Baking);
        (next, baking.then(|| decide::baseline(&pods)))
    };
    if matches!(next, Next::Halt(_)) && current.phase != Phase::Halted {
        // The watches race: a halt waits a grace for a change that explains it.
        let seen = halt_seen.unwrap_or(now);
        if now.duration_since(seen) < SignedDuration::from_secs(GRACE_S) {
            if let Some(r) = state.plan_run.as_mut() {
                r.halt_seen = Some(seen);
            }
            return cmds;
        }
    } else if let Some(r) = state.plan_run.as_mut() {
        r.halt_seen = None;
    }
    cmds.extend(carry_out(state, next, &set, baseline));
    cmds
}

/// Renews the lease when it is due; stops when another runner took it.
fn renew(state: &mut AppState, set: &StatefulSet, now: Timestamp) -> Vec<Command> {
    let Some(run) = state.plan_run.as_ref() else { return Vec::new() };
    if now < run.renew_at {
        return Vec::new();
    }
    let key = run.set.clone();
    let held = record::lease(set);
    let ours = held.as_ref().is_some_and(|l| l.pid == std::process::id() && l.host == HOST);
    if !ours && held.as_ref().is_some_and(|l| l.holds(now)) {
        stop(state, format!("plan stopped: another runner took {key}'s lease"));
        return Vec::new();
    }
    if let Some(r) = state.plan_run.as_mut() {
        r.renew_at = now.checked_add(SignedDuration::from_secs(RENEW_S)).unwrap_or(now);
    }
    let op = ClusterOp::PlanLease { set: key, lease: Some(lease(now)), seen: lease_text(set) };
    vec![cluster(op, None)]
}

/// The commands for `next`, noted in the timeline.
fn carry_out(
    state: &mut AppState,
    next: Next,
    set: &StatefulSet,
    baseline: Option<Baseline>,
) -> Vec<Command> {
    let Some(key) = state.plan_run.as_ref().map(|r| r.set.clone()) else { return Vec::new() };
    let now = state.now.unwrap_or_default();
    let wrote = |state: &mut AppState, r: &Record| {
        if let Some(p) = state.plan_run.as_mut() {
            p.written = Some((r.clone(), now));
        }
        serde_json::to_string(r).unwrap_or_default()
    };
    match next {
        Next::Open { from, to, record } => {
            let text = wrote(state, &record);
            let said = format!(
                "step {}/{}: partition {from} → {to}{}",
                record.step,
                record.of,
                decide::opens(set, to, from)
            );
            tell(state, &key, &record, said);
            vec![cluster(
                ClusterOp::Plan { set: key.clone(), partition: Some((from, to)), record: text },
                Some(set),
            )]
        }
        Next::Record(record) => {
            let text = wrote(state, &record);
            if let Some(p) = state.plan_run.as_mut() {
                p.baseline = baseline;
            }
            tell(state, &key, &record, record.phase_words());
            vec![cluster(
                ClusterOp::Plan { set: key.clone(), partition: None, record: text },
                Some(set),
            )]
        }
        Next::Delete { pod, uid, record } => {
            if let Some(p) = state.plan_run.as_mut() {
                p.written = None;
            }
            let text = format!(
                "step {}/{}: delete {pod} (OnDelete: it comes back on the update revision)",
                record.step, record.of
            );
            tell(state, &key, &record, text);
            let pod = ObjRef::new(key.namespace.clone(), pod);
            vec![cluster(ClusterOp::DeletePod { pod, force: false, uid: Some(uid) }, None)]
        }
        Next::Halt(record) => {
            let why = record.words(now);
            let mut cmds = Vec::new();
            let halted_already =
                record::plan(set).and_then(Result::ok).is_some_and(|r| r.phase == Phase::Halted);
            if !halted_already {
                let text = serde_json::to_string(&record).unwrap_or_default();
                cmds.push(cluster(
                    ClusterOp::Plan { set: key.clone(), partition: None, record: text },
                    Some(set),
                ));
            }
            cmds.extend(release(&key, set));
            let holds = match crate::steer::holding(set).is_some() {
                true => "the set is frozen: nothing further opens".to_string(),
                false => format!("the partition holds at {}", record.partition),
            };
            error(state, format!("{why}; {holds}"));
            state.plan_run = None;
            cmds
        }
        Next::Done => {
            let cmds = release(&key, set);
            info(state, format!("plan {} done", key.name));
            state.plan_run = None;
            cmds
        }
        Next::Wait(_) | Next::Check => Vec::new(),
    }
}

fn release(key: &ObjRef, set: &StatefulSet) -> Vec<Command> {
    let ours = record::lease(set).is_some_and(|l| l.pid == std::process::id() && l.host == HOST);
    if !ours {
        return Vec::new();
    }
    vec![cluster(
        ClusterOp::PlanLease { set: key.clone(), lease: None, seen: lease_text(set) },
        None,
    )]
}

fn stop(state: &mut AppState, why: String) {
    state.plan_run = None;
    error(state, why);
}

/// `A`: the plan waiting at a gate goes on.
pub fn approve(state: &mut AppState) -> Result<Vec<Command>, String> {
    let key = state.selected_set.clone().ok_or("nothing selected")?;
    let set = state.mirror.set(&key).ok_or_else(|| format!("{key} no longer exists"))?.clone();
    let now = state.now.unwrap_or_default();
    let r = match record::plan(&set) {
        None => return Err(format!("{} has no rollout plan (P starts one)", key.name)),
        Some(Err(why)) => return Err(why),
        Some(Ok(r)) => r,
    };
    if r.phase != Phase::Gate {
        return Err(format!("no plan waits for approval: {}", r.words(now)));
    }
    let approved = Record { phase: Phase::Approved, since: stamp(now), ..r.clone() };
    let text = serde_json::to_string(&approved).unwrap_or_default();
    note(state, format!("approve {}", key.name));
    info(state, format!("step {}/{} approved: sent, waiting for the server …", r.step, r.of));
    Ok(vec![cluster(ClusterOp::Plan { set: key, partition: None, record: text }, Some(&set))])
}

/// What `P` prefills: the set's last plan (`1,50%,100% bake=2m`), or a first suggestion.
pub fn last_plan(set: &StatefulSet) -> String {
    match record::plan(set).and_then(Result::ok) {
        Some(r) if r.bake_seconds > 0 => format!("{} bake={}s", r.steps, r.bake_seconds),
        Some(r) => r.steps,
        None => "1,50%,100%".into(),
    }
}

/// Parses `STEPS [bake=DUR]`.
pub fn parse(text: &str) -> Result<(Steps, u64), String> {
    let mut words = text.split_whitespace();
    let steps = words.next().ok_or("expected steps, e.g. 1,50%,100% bake=1m")?;
    let steps = Steps::parse(steps)?;
    let mut bake = 0;
    for w in words {
        match w.split_once('=') {
            Some(("bake", d)) => bake = crate::plan::duration_secs(d)?,
            _ => return Err(format!("{w:?}: expected bake=DUR after the steps (e.g. bake=1m)")),
        }
    }
    Ok((steps, bake))
}

/// A freeze of a set whose plan is under way halts the plan too (its record says so). Sent after
/// the freeze, so a runner reads the freeze first (a freeze is never undone); without a basis,
/// as the freeze just changed the set this was decided on.
pub fn halt_for_freeze(state: &AppState, key: &ObjRef, set: &StatefulSet) -> Option<Command> {
    let r = record::plan(set)?.ok()?;
    if matches!(r.phase, Phase::Done | Phase::Halted) {
        return None;
    }
    let now = state.now.unwrap_or_default();
    let halted = decide::halted(&r, now, "halted by a freeze from the console".into());
    let text = serde_json::to_string(&halted).unwrap_or_default();
    Some(cluster(ClusterOp::Plan { set: key.clone(), partition: None, record: text }, None))
}
