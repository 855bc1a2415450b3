//! A rollout plan run by the console itself (`P`): the plan engine (`plan::engine`, the one
//! `ststui rollout` and the simulator run) adapted to the reducer. At the end of every batch
//! the engine takes a turn on what the mirror shows; its writes leave as [`Command`]s through
//! the backend like any key's, its fresh reads as a [`ViewOp::Read`] whose answer
//! ([`BackendEvent::Read`]) is the next turn's view, and the backend's answers to its writes
//! (`OpDone`, `OpFailed`) are reported back to it. It works on a cluster and in the simulator
//! alike (a plan rehearsed at ×100 is the plan run later on production).
//!
//! Differences from the verb: no `--check` commands (a console runs no processes; a pipeline
//! runs checks), failures hold (`ststui abort` or the abort key then reverts). `P` shows the
//! steps it will take and asks first, as every surprising action does.
//!
//! Owns: [`PlanRun`], the adapter. Must not: read a clock (the backend's `now` is the time),
//! or touch the terminal.
//!
//! [`BackendEvent::Read`]: crate::backend::BackendEvent::Read

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::jiff::SignedDuration;

use super::msg::Command;
use super::notify::{error, info, push_now};
use super::state::{AppState, Confirm, Form, Modal, Origin, PlanRun, Then};
use crate::app::refusal::Refusal;
use crate::backend::{ClusterOp, EventKind, Failure, Fresh, ObjRef, Op, ViewOp, Write, WriteId};
use crate::core::pod::MinReady;
use crate::plan::ask::Ask;
use crate::plan::engine::{Act, Config, End, Engine, Stop, View};
use crate::plan::record::{self, Phase, Reading, Record, stamp};
use crate::plan::{OnFailure, Steps};

/// The host a console's lease names (a console's lease is taken over only when it runs out).
pub const HOST: &str = "ststui-console";
/// How long a step's pods may take before the plan halts.
pub const STUCK_AFTER_MS: u64 = 600_000;

/// The engine for a console's plan on `set`.
fn engine(state: &AppState, set: ObjRef, form: &Form) -> Engine {
    let (steps, bake_seconds) = (form.steps.clone(), form.bake_seconds);
    let secs = SignedDuration::from_secs;
    let cfg = Config {
        set,
        host: HOST.into(),
        pid: std::process::id(),
        hold: secs(30),
        renew: secs(10),
        retry: secs(2),
        // A cluster's watch can lag; the simulator's view is its store.
        fresh_reads: state.caps.writes_answered_later,
        observe: secs(10),
        runs_checks: false,
        stuck_after_ms: form.stuck_after_ms,
        dead: None,
        wait_lease: false,
        observe_spec: Some(secs(30)),
        group: None,
    };
    let ask = Ask {
        steps: Some(steps),
        bake_seconds,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        // The operator saw the preview and said yes: the plan shown is the plan run.
        force: true,
        continue_halted: true,
        gates: Default::default(),
        by: String::new(),
        // The console offers a stuck pod's replacement as a key of its own (the explain hint).
        replace_stuck: false,
    };
    Engine::new(cfg, ask)
}

/// `P`, after the prompt: the steps it will take (from the partition the server holds) and
/// what becomes of a plan recorded on the set, asked first.
pub fn offer(state: &mut AppState, set: ObjRef, form: Form) -> Result<Vec<Command>, Refusal> {
    let (steps, bake_seconds) = (form.steps.clone(), form.bake_seconds);
    let s = state.mirror.set(&set).ok_or_else(|| format!("{set} no longer exists"))?.clone();
    let now = state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let runner = record::Runner::of(&s, now);
    match &runner {
        record::Runner::Live(l) => {
            return Err(format!("a plan runner holds {set}: {}", l.words()).into());
        }
        record::Runner::Unreadable => return Err(format!("{set}: {}", runner.words()).into()),
        _ => {}
    }
    let start = crate::plan::decide::Start {
        steps: steps.clone(),
        bake_seconds,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        by: String::new(),
        gates: Default::default(),
    };
    let mut details = crate::plan::said::preview(&set, &s, &start);
    if let Some(first) = details.first_mut() {
        *first = first.replace(&format!("plan for {set}: "), "");
    }
    let warning = match record::read(&s) {
        Reading::Plan(r) if r.phase == Phase::Halted => Some(format!(
            "the plan recorded on the set halted at {}/{} ({}): this one starts from the \
             partition it left, its first open step checked and baked again",
            r.step,
            r.of,
            r.reason.as_deref().unwrap_or("no reason recorded")
        )),
        Reading::Plan(r) if !r.phase.over() => Some(format!(
            "a plan is recorded under way ({}, {}): this one replaces it",
            r.words(now),
            runner.words()
        )),
        Reading::Invalid(why) => {
            Some(format!("the plan record on the set is invalid ({why}): this one replaces it"))
        }
        _ => None,
    };
    let bake = crate::plan::duration_words(bake_seconds * 1000);
    let stuck = crate::plan::duration_words(form.stuck_after_ms);
    details.push(format!("  a step that makes no progress for {stuck} halts"));
    state.modal = Modal::Confirm(Confirm {
        title: format!("Run the plan {steps} (bake {bake}) on {set} from this console?"),
        old: format!("partition {}", crate::core::spec::strategy(&s).partition),
        new: format!("{} steps, each waited for, baked; a failure holds", steps.0.len()),
        warning,
        ops: Vec::new(),
        log: form.line(&set.name),
        details,
        then: Some(Then::Plan { set, form }),
    });
    Ok(Vec::new())
}

/// Starts the plan `form` on `set` (confirmed): refused while this console runs one.
pub fn start(state: &mut AppState, set: ObjRef, form: Form) -> Result<Vec<Command>, Refusal> {
    if state.plan_run.is_some() {
        return Err("this console runs a plan already: one at a time".into());
    }
    state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let engine = engine(state, set.clone(), &form);
    state.plan_run = Some(PlanRun { engine, sent: None });
    note(state, format!("{}: started by this console", form.line(&set.name)));
    Ok(turn(state, None))
}

fn note(state: &mut AppState, text: String) {
    push_now(state, EventKind::Notice { text }, Origin::Notice);
}

/// At the end of a batch: the plan's next move, if this console runs one.
pub fn drive(state: &mut AppState) -> Vec<Command> {
    if state.plan_run.is_none() || state.now.is_none() {
        return Vec::new();
    }
    turn(state, None)
}

/// A fresh read of the plan's set arrived: the next turn decides on it.
pub fn fresh(state: &mut AppState, key: &ObjRef, read: Result<Fresh, Failure>) -> Vec<Command> {
    let Some(run) = state.plan_run.as_mut().filter(|r| r.set() == key) else { return Vec::new() };
    match read {
        Ok(fresh) => turn(state, Some(fresh)),
        Err(f) => {
            let now = state.now.unwrap_or_default();
            run.engine.read_failed(now, f);
            Vec::new()
        }
    }
}

/// The backend's answer to a write: the plan's, when it is the one it sent last.
pub fn answered(state: &mut AppState, id: Option<WriteId>, failure: Option<&Failure>) {
    let now = state.now.unwrap_or_default();
    let Some(run) = state.plan_run.as_mut() else { return };
    if id.is_none() || run.sent != id {
        return;
    }
    run.sent = None;
    run.engine.wrote(now, failure.map_or(Ok(None), |f| Err(Box::new(f.clone()))));
}

/// One turn of the engine, on `read` (fresh) or the mirror.
fn turn(state: &mut AppState, read: Option<Fresh>) -> Vec<Command> {
    let Some(mut run) = state.plan_run.take() else { return Vec::new() };
    let now = state.now.unwrap_or_default();
    let key = run.set().clone();
    let act = match &read {
        Some(fresh) => {
            let own = fresh.own(&key.name);
            let budgets = fresh.budgets.as_ref().map(|b| b.iter().map(|b| &**b).collect());
            step(state, &mut run, (&fresh.set, &own), now, Some(budgets))
        }
        None => match state.mirror.set(&key).cloned() {
            None => {
                run.engine.stop(format!("{key} no longer exists"));
                let pods: Vec<(i32, &Pod)> = Vec::new();
                let empty = StatefulSet::default();
                step(state, &mut run, (&empty, &pods), now, None)
            }
            Some(set) => {
                let pods: Vec<(i32, &Pod)> = state.mirror.pods_of(&key).collect();
                step(state, &mut run, (&set, &pods), now, None)
            }
        },
    };
    for said in run.engine.said() {
        match &said.record {
            Some(r) => push_now(state, r.event(&key.name, said.text), Origin::Notice),
            None => note(state, said.text),
        }
    }
    let cmds = match act {
        Act::Write(w) => {
            run.sent = Some(w.id);
            vec![Command::Backend(Op::Cluster(w))]
        }
        Act::Read => vec![Command::Backend(Op::View(ViewOp::Read(key.clone())))],
        // The console asks no gates (it runs no processes).
        Act::Wait { .. } | Act::Check { .. } | Act::Gate(_) | Act::Revert { .. } => Vec::new(),
        Act::End(end) => {
            ended(state, &key, end);
            return Vec::new();
        }
    };
    state.plan_run = Some(run);
    cmds
}

/// One turn on `set` and its `pods`: `read` is a fresh read's budgets (`Some(None)`: it read
/// none, the watch's stand in); `None` the watch's view.
fn step(
    state: &AppState,
    run: &mut PlanRun,
    (set, pods): (&StatefulSet, &[(i32, &Pod)]),
    now: k8s_openapi::jiff::Timestamp,
    read: Option<Option<Vec<&PodDisruptionBudget>>>,
) -> Act {
    let min_ready =
        MinReady::new(set.spec.min_ready_seconds.unwrap_or(0), &state.options.semantics);
    let frozen = crate::steer::holding(set).map(|f| f.words());
    let ns = set.metadata.namespace.as_deref().unwrap_or(crate::backend::DEFAULT_NAMESPACE);
    let fresh = read.is_some();
    let budgets: Vec<&PodDisruptionBudget> = match read.flatten() {
        Some(read) => read,
        None => state.mirror.budgets_in(ns).collect(),
    };
    let view =
        View { set, pods, now, min_ready, frozen: frozen.as_deref(), fresh, budgets: &budgets };
    run.engine.next(&view)
}

/// The status line when the run ends.
fn ended(state: &mut AppState, key: &ObjRef, end: End) {
    match end {
        End::Done(_) => info(state, format!("plan {} done", key.name)),
        End::Halted(r) => {
            let now = state.now.unwrap_or_default();
            error(state, r.words(now));
        }
        End::Refused { why, .. } => error(state, format!("plan not started: {why}")),
        End::Stopped { why, kind: Stop::Asked } => info(state, format!("plan stopped: {why}")),
        End::Stopped { why, .. } => error(state, format!("plan stopped: {why}")),
    }
}

/// Quitting while this console runs a plan: it stops (its lease given back, the set held where
/// the plan left it); the commands give the lease back.
pub fn stop(state: &mut AppState, why: &str) -> Vec<Command> {
    let Some(run) = state.plan_run.as_mut() else { return Vec::new() };
    run.engine.stop(why.to_string());
    turn(state, None)
}

/// `A`: the plan waiting at a gate goes on.
pub fn approve(state: &mut AppState) -> Result<Vec<Command>, Refusal> {
    let key = state.selected_set.clone().ok_or("nothing selected")?;
    let set = state.mirror.set(&key).ok_or_else(|| format!("{key} no longer exists"))?.clone();
    let now = state.now.unwrap_or_default();
    let r = match record::read(&set) {
        Reading::None => {
            return Err(format!("{} has no rollout plan (P starts one)", key.name).into());
        }
        Reading::Invalid(why) => return Err(Reading::invalid_words(&why, &key.name).into()),
        Reading::Plan(r) => r,
    };
    if r.phase != Phase::Gate {
        return Err(format!("no plan waits for approval: {}", r.words(now)).into());
    }
    let approved = Record { phase: Phase::Approved, since: stamp(now), ..(*r).clone() };
    let text = serde_json::to_string(&approved).unwrap_or_default();
    note(state, format!("approve {}", key.name));
    info(state, format!("step {}/{} approved: sent, waiting for the server …", r.step, r.of));
    let op = ClusterOp::Plan { set: key, partition: None, record: text };
    Ok(vec![Command::Backend(Op::Cluster(Write::on(op, Some(Box::new(set)))))])
}

/// What `P` prefills: the set's last plan (`1,50%,100% bake=2m`), or a first suggestion.
pub fn last_plan(set: &StatefulSet) -> String {
    match record::read(set) {
        Reading::Plan(r) if r.bake_seconds > 0 => format!("{} bake={}s", r.steps, r.bake_seconds),
        Reading::Plan(r) => r.steps,
        _ => "1,50%,100%".into(),
    }
}

/// Parses `STEPS [bake=DUR] [stuck-after=DUR]`.
pub fn parse(text: &str) -> Result<Form, Refusal> {
    let mut words = text.split_whitespace();
    let steps = words.next().ok_or("expected steps, e.g. 1,50%,100% bake=1m")?;
    let steps = Steps::parse(steps).map_err(Refusal::of)?;
    let secs = |d| crate::plan::duration_secs(d).map_err(Refusal::of);
    let (mut bake, mut stuck_after_ms) = (0, STUCK_AFTER_MS);
    for w in words {
        match w.split_once('=') {
            Some(("bake", d)) => bake = secs(d)?,
            Some(("stuck-after", d)) => match secs(d)? {
                0 => return Err("stuck-after=0s: expected a duration above zero".into()),
                s => stuck_after_ms = s.saturating_mul(1000),
            },
            _ => {
                return Err(format!(
                    "{w:?}: expected bake=DUR or stuck-after=DUR after the steps (e.g. bake=1m)"
                )
                .into());
            }
        }
    }
    if bake > record::MAX_BAKE_SECONDS {
        return Err(format!(
            "bake={bake}s: at most {}",
            crate::plan::duration_words(record::MAX_BAKE_SECONDS * 1000)
        )
        .into());
    }
    Ok(Form { steps, bake_seconds: bake, stuck_after_ms })
}

/// A freeze of a set whose plan is under way halts the plan too (its record says so). Sent after
/// the freeze, so a runner reads the freeze first (a freeze is never undone); without a basis,
/// as the freeze just changed the set this was decided on.
pub fn halt_for_freeze(state: &AppState, key: &ObjRef, set: &StatefulSet) -> Option<Command> {
    let r = record::read(set).under_way()?.clone();
    let now = state.now.unwrap_or_default();
    let halted = crate::plan::decide::halted(&r, now, "halted by a freeze from the console".into());
    let text = serde_json::to_string(&halted).unwrap_or_default();
    let op = ClusterOp::Plan { set: key.clone(), partition: None, record: text };
    Some(Command::Backend(Op::Cluster(Write::new(op))))
}
