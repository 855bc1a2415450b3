//! A rollout plan run by the console itself (`P`): the one plan run (`plan::run`, the one
//! `ststui rollout` and the simulator run) adapted to the reducer, a group's too (`group`). At the end of every batch
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
use k8s_openapi::jiff::SignedDuration;

pub mod group;
mod turn;

use super::msg::Command;
use super::notify::{info, push_now};
use super::state::{AppState, Confirm, Form, GroupForm, Modal, Origin, PlanRun, Then};
use crate::app::refusal::Refusal;
use crate::backend::{ClusterOp, EventKind, Failure, Fresh, ObjRef, Op, Write, WriteId};
use crate::plan::ask::Ask;
use crate::plan::engine::Config;
use crate::plan::record::{self, Phase, Reading, Record, stamp};
use crate::plan::run::Run;
use crate::plan::{OnFailure, Steps};

/// The host a console's lease names (a console's lease is taken over only when it runs out).
pub const HOST: &str = "ststui-console";
/// How long a step's pods may take before the plan halts.
pub const STUCK_AFTER_MS: u64 = 600_000;

/// The engine's configuration for a console's plan on `set` (a group's: on its first set).
pub(super) fn config(state: &AppState, set: ObjRef, form: &Form) -> Config {
    let secs = SignedDuration::from_secs;
    Config {
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
        take_overclaimed: false,
        // The simulator's planner writes its leases for its own long term: believed here.
        believe: if state.caps.writes_answered_later {
            crate::plan::overclaim::BELIEVED
        } else {
            crate::plan::overclaim::SIMULATOR_TERM
        },
        observe_spec: Some(secs(30)),
        group: None,
    }
}

/// What a console's plan asks: the form's steps and bake; no checks or gates (a console runs no
/// processes), a failure holds.
pub(super) fn ask(form: &Form) -> Ask {
    Ask {
        steps: Some(form.steps.clone()),
        bake_seconds: form.bake_seconds,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        // The operator saw the preview and said yes: the plan shown is the plan run.
        force: true,
        continue_halted: true,
        gates: Default::default(),
        by: String::new(),
        // The console offers a stuck pod's replacement as a key of its own (the explain hint).
        replace_stuck: false,
        max_restarts: None,
        image: None,
    }
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
    let start = crate::plan::start::Start {
        steps: steps.clone(),
        bake_seconds,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        by: String::new(),
        gates: Default::default(),
    };
    // A plan that cannot begin is refused before the question (the engine says the same
    // once started): nothing to roll, a Recreate set's partial steps or missing image.
    {
        let pods: Vec<(i32, &Pod)> = state.mirror.pods_of(&set).collect();
        let facts = crate::plan::facts::Facts {
            set: &s,
            pods: &pods,
            now,
            min_ready: crate::core::spec::min_ready(&s, &state.options.semantics),
            stuck_after_ms: form.stuck_after_ms,
            baseline: None,
            frozen: None,
            gating: None,
            replace_stuck: false,
            max_restarts: None,
            image: None,
        };
        // Not observed yet: the plan waits for the controller (paused, say), as it would.
        match crate::plan::start::begin(&start, &facts) {
            Err(crate::plan::start::NoStart::Unobserved { .. }) | Ok(_) => {}
            Err(why) => return Err(format!("plan not started: {why}").into()),
        }
    }
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
            r.reason_said().unwrap_or("no reason recorded".into())
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
    let run = Run::one(config(state, set.clone(), &form), ask(&form));
    state.plan_run = Some(PlanRun::new(run));
    note(state, format!("{}: started by this console", form.line(&set.name)));
    Ok(turn::turn(state, None))
}

pub(super) fn note(state: &mut AppState, text: String) {
    push_now(state, EventKind::Notice { text }, Origin::Notice);
}

/// At the end of a batch: the plan's next move, if this console runs one.
pub fn drive(state: &mut AppState) -> Vec<Command> {
    if state.plan_run.is_none() || state.now.is_none() {
        return Vec::new();
    }
    next(state)
}

/// The run's next turn on what the mirror shows (it waits for a fresh read asked).
fn next(state: &mut AppState) -> Vec<Command> {
    turn::turn(state, None)
}

/// A fresh read of a set of the plan arrived: the next turn decides on it (with every other
/// member's).
pub fn fresh(state: &mut AppState, key: &ObjRef, read: Result<Fresh, Failure>) -> Vec<Command> {
    turn::fresh(state, key, read)
}

/// The backend's answer to a write: the plan's, when it is the one it sent last.
pub fn answered(state: &mut AppState, id: Option<WriteId>, failure: Option<&Failure>) {
    let now = state.now.unwrap_or_default();
    let Some(run) = state.plan_run.as_mut() else { return };
    if id.is_none() || run.sent != id {
        return;
    }
    run.sent = None;
    let result = failure.map_or(Ok(None), |f| Err(Box::new(f.clone())));
    run.run.wrote(now, result);
}

/// The plan this console runs stops (its lease given back, the set held where the plan left
/// it); the commands give the lease back. The console goes on: the answers come back.
pub fn stop(state: &mut AppState, why: &str) -> Vec<Command> {
    let Some(run) = state.plan_run.as_mut() else { return Vec::new() };
    run.stop(why.to_string());
    next(state)
}

/// Quitting while this console runs a plan: it stops, and every lease it holds is given back
/// now — a group's rolling set's plan lease, then the group's — as no answer will be read:
/// each write is sent and the next turn taken as if it had gone through (a release that fails
/// runs out with its lease anyway).
pub fn quit(state: &mut AppState, why: &str) -> Vec<Command> {
    let mut cmds = stop(state, why);
    // A group's stop takes a turn per lease (at most its set's and its own; bounded anyway).
    for _ in 0..4 {
        let sent = state.plan_run.as_ref().and_then(|r| r.sent);
        let group = state.plan_run.as_ref().is_some_and(|r| r.run.group_name().is_some());
        if !group || sent.is_none() {
            break;
        }
        answered(state, sent, None);
        cmds.extend(next(state));
    }
    cmds
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
    parse_with(text, false).map(|g| g.form)
}

/// Parses a group's `STEPS|batches=1,2,4 [bake=DUR] [zone-bake=DUR] [stuck-after=DUR]`.
pub fn parse_group(text: &str) -> Result<GroupForm, Refusal> {
    parse_with(text, true)
}

fn parse_with(text: &str, group: bool) -> Result<GroupForm, Refusal> {
    let secs = |d| crate::plan::duration_secs(d).map_err(Refusal::of);
    let (mut steps, mut batches) = (None, None);
    let (mut bake, mut zone_bake, mut stuck_after_ms) = (0, 0, STUCK_AFTER_MS);
    for (i, w) in text.split_whitespace().enumerate() {
        match w.split_once('=') {
            None if i == 0 => steps = Some(Steps::parse(w).map_err(Refusal::of)?),
            Some(("bake", d)) => bake = secs(d)?,
            Some(("zone-bake", d)) if group => zone_bake = secs(d)?,
            Some(("batches", b)) if group => {
                batches = Some(crate::value::batches(b).map_err(Refusal::of)?);
            }
            Some(("stuck-after", d)) => match secs(d)? {
                0 => return Err("stuck-after=0s: expected a duration above zero".into()),
                s => stuck_after_ms = s.saturating_mul(1000),
            },
            _ if group => {
                return Err(format!(
                    "{w:?}: expected the steps first (or batches=1,2,4), then bake=DUR, \
                     zone-bake=DUR or stuck-after=DUR (e.g. 1,100% zone-bake=10m)"
                )
                .into());
            }
            _ => {
                return Err(format!(
                    "{w:?}: expected bake=DUR or stuck-after=DUR after the steps (e.g. bake=1m)"
                )
                .into());
            }
        }
    }
    let steps = match (steps, &batches) {
        (Some(_), Some(_)) => return Err("give the steps or batches=, not both".into()),
        (Some(s), None) => s,
        // Resolved per set, on its replicas.
        (None, Some(_)) => Steps(vec![crate::plan::StepSpec::Percent(100)]),
        (None, None) if group => {
            return Err("expected steps, e.g. 1,100% zone-bake=10m (or batches=1,2,4)".into());
        }
        (None, None) => return Err("expected steps, e.g. 1,50%,100% bake=1m".into()),
    };
    for (key, value) in [("bake", bake), ("zone-bake", zone_bake)] {
        if value > record::MAX_BAKE_SECONDS {
            return Err(format!(
                "{key}={value}s: at most {}",
                crate::plan::duration_words(record::MAX_BAKE_SECONDS * 1000)
            )
            .into());
        }
    }
    let form = Form { steps, bake_seconds: bake, stuck_after_ms };
    Ok(GroupForm { form, zone_bake_seconds: zone_bake, batches })
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
