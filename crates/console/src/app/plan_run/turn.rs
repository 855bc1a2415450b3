//! The console's turns of the one plan run (`plan::run`), one set's or a group's alike: the run
//! takes a turn on what the mirror shows, or on every member's fresh read; its writes leave as
//! [`Command`]s, its lines go to the timeline, its end to the status line.
//!
//! A fresh read ([`Act::Read`]) reads every member: one [`ViewOp::Read`] per set, the answers
//! gathered in the run's order; the next turn waits until every one is in, and one failure
//! fails the read (reported once all are in, so no answer of an old read joins a new one).
//!
//! Owns: the turn, the gathering of reads, the end's words. Must not: read a clock, touch the
//! terminal.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::note;
use crate::app::msg::Command;
use crate::app::notify::{error, info, push_now};
use crate::app::state::{AppState, Origin};
use crate::backend::{Failure, Fresh, ObjRef, Op, ViewOp};
use crate::plan::engine::{Act, Stop};
use crate::plan::run::{Member, RunEnd, RunView, Step};

/// One turn of the run, on every member's fresh `read` or the mirror (none while a read is
/// awaited).
pub(super) fn turn(state: &mut AppState, read: Option<Vec<Fresh>>) -> Vec<Command> {
    let Some(mut run) = state.plan_run.take() else { return Vec::new() };
    if read.is_none() && run.reads.is_some() {
        state.plan_run = Some(run);
        return Vec::new();
    }
    let now = state.now.unwrap_or_default();
    let sets = run.sets().to_vec();
    let step = {
        let seen = match &read {
            Some(all) => Seen::read(state, all, &sets),
            None => Seen::mirror(state, &sets),
        };
        let members = seen.members();
        let view =
            RunView { members: &members, now, fresh: read.is_some(), budgets: &seen.budgets };
        run.run.next(&view)
    };
    let group = run.run.group_name().map(|g| crate::text::escape_controls(g).into_owned());
    for (i, said) in run.run.said() {
        let key = &run.run.sets()[i];
        match (&said.record, &group) {
            (Some(r), _) => push_now(state, r.event(&key.name, said.text), Origin::Notice),
            (None, Some(group)) => note(state, format!("group {group}: {}", said.text)),
            (None, None) => note(state, said.text),
        }
    }
    let cmds = match step {
        Step::Do(Act::Write(w)) => {
            run.sent = Some(w.id);
            vec![Command::Backend(Op::Cluster(w))]
        }
        Step::Do(Act::Read) => {
            run.reads = Some(vec![None; sets.len()]);
            sets.iter().map(|k| Command::Backend(Op::View(ViewOp::Read(k.clone())))).collect()
        }
        // The console asks no checks or gates (it runs no processes), and a failure holds
        // (nothing to revert).
        Step::Do(_) => Vec::new(),
        Step::End(end) => {
            let about = run.set().clone();
            return match group {
                None => {
                    ended(state, &about, end);
                    Vec::new()
                }
                Some(group) => {
                    group_ended(state, &group, end);
                    // Back to watching only what is shown.
                    vec![Command::Backend(Op::View(crate::app::group::view_op(state)))]
                }
            };
        }
    };
    state.plan_run = Some(run);
    cmds
}

/// A member's fresh read: kept until every member's is in, then the turn (or the failure).
pub(super) fn fresh(
    state: &mut AppState,
    key: &ObjRef,
    read: Result<Fresh, Failure>,
) -> Vec<Command> {
    let now = state.now.unwrap_or_default();
    let Some(run) = state.plan_run.as_mut() else { return Vec::new() };
    let Some(i) = run.sets().iter().position(|k| k == key) else { return Vec::new() };
    // Not asked (an answer after the run stopped reading): dropped.
    let Some(slot) = run.reads.as_mut().and_then(|r| r.get_mut(i)) else { return Vec::new() };
    *slot = Some(read.map_err(Box::new));
    if run.reads.as_ref().is_some_and(|r| r.iter().any(Option::is_none)) {
        return Vec::new();
    }
    let all: Vec<crate::app::state::Answer> =
        run.reads.take().unwrap_or_default().into_iter().flatten().collect();
    let mut ok = Vec::with_capacity(all.len());
    for (i, r) in all.into_iter().enumerate() {
        match r {
            Ok(f) => ok.push(f),
            Err(f) => {
                run.run.read_failed(now, i, *f);
                return Vec::new();
            }
        }
    }
    turn(state, Some(ok))
}

/// The status line when one set's plan ends.
fn ended(state: &mut AppState, key: &ObjRef, end: RunEnd) {
    match end {
        RunEnd::Done => info(state, format!("plan {} done", key.name)),
        RunEnd::Halted { record, .. } => {
            let now = state.now.unwrap_or_default();
            error(state, record.words(now));
        }
        RunEnd::Refused { why, .. } => error(state, format!("plan not started: {why}")),
        RunEnd::Stopped { why, kind: Stop::Asked } => info(state, format!("plan stopped: {why}")),
        RunEnd::Stopped { why, .. } => error(state, format!("plan stopped: {why}")),
    }
}

/// The status line when a group's run ends.
fn group_ended(state: &mut AppState, group: &str, end: RunEnd) {
    match end {
        RunEnd::Done => info(state, format!("group plan {group} done: every set rolled")),
        RunEnd::Halted { set, record } => {
            let now = state.now.unwrap_or_default();
            error(
                state,
                format!("group plan {group} halted at {}: {}", set.name, record.words(now)),
            );
        }
        RunEnd::Refused { why, .. } => {
            error(state, format!("group plan {group} not started: {why}"));
        }
        RunEnd::Stopped { why, kind: Stop::Asked } => {
            info(state, format!("group plan {group} stopped: {why}"));
        }
        RunEnd::Stopped { why, .. } => error(state, format!("group plan {group} stopped: {why}")),
    }
}

/// Every member as a turn sees it: from the fresh reads, or from the mirror.
pub(super) struct Seen<'a> {
    sets: Vec<Option<&'a StatefulSet>>,
    pods: Vec<Vec<(i32, &'a Pod)>>,
    frozen: Vec<Option<String>>,
    semantics: crate::core::options::Semantics,
    pub(super) budgets: Vec<&'a PodDisruptionBudget>,
}

impl<'a> Seen<'a> {
    pub(super) fn mirror(state: &'a AppState, keys: &'a [ObjRef]) -> Seen<'a> {
        let sets: Vec<Option<&StatefulSet>> = keys.iter().map(|k| state.mirror.set(k)).collect();
        let pods = keys.iter().map(|k| state.mirror.pods_of(k).collect()).collect();
        let ns = keys.first().map(|k| k.namespace.as_str()).unwrap_or_default();
        let budgets = state.mirror.budgets_in(ns).collect();
        Seen::of(state, sets, pods, budgets)
    }

    fn read(state: &'a AppState, all: &'a [Fresh], keys: &'a [ObjRef]) -> Seen<'a> {
        let sets = all.iter().map(|f| Some(&*f.set)).collect();
        let pods = all.iter().zip(keys).map(|(f, k)| f.own(&k.name)).collect();
        let ns = keys.first().map(|k| k.namespace.as_str()).unwrap_or_default();
        // The first member's read budgets (one namespace); the watch's where it read none.
        let budgets = match all.first().and_then(|f| f.budgets.as_ref()) {
            Some(read) => read.iter().map(|b| &**b).collect(),
            None => state.mirror.budgets_in(ns).collect(),
        };
        Seen::of(state, sets, pods, budgets)
    }

    fn of(
        state: &AppState,
        sets: Vec<Option<&'a StatefulSet>>,
        pods: Vec<Vec<(i32, &'a Pod)>>,
        budgets: Vec<&'a PodDisruptionBudget>,
    ) -> Seen<'a> {
        let frozen = sets.iter().map(|s| s.and_then(crate::steer::holding).map(|f| f.words()));
        let semantics = state.options.semantics;
        Seen { frozen: frozen.collect(), semantics, sets, pods, budgets }
    }

    pub(super) fn members(&self) -> Vec<Member<'_>> {
        crate::plan::member::members(&self.sets, &self.pods, &self.frozen, |_| self.semantics)
    }
}
