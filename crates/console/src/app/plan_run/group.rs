//! A rollout group's plan run by the console itself (`P` in a group's view): the group engine
//! (`plan::group::run`, the one `ststui rollout --group` and the simulator run) adapted to the
//! reducer as `app::plan_run` adapts the plan engine to one set. At the end of every batch the
//! engine takes a turn on what the mirror shows; its writes leave as [`Command`]s, and the
//! backend's answers go back to it (`plan_run::answered`, shared).
//!
//! A fresh read ([`Act::Read`]) reads every member: one [`ViewOp::Read`] per set, the answers
//! gathered in the group's order; the next turn waits until every one is in, and one failure
//! fails the read (reported once all are in, so no answer of an old read joins a new one).
//! While the run lasts its sets stay watched whatever the console shows (`group::view_op`):
//! its turns read them.
//!
//! What runs comes from the dialog only; a part recorded on a set says where a rerun resumes,
//! never what runs. The engine's own first turn, taken on the mirror without sending anything,
//! says before anything is asked whether it would refuse (another driver, a set rolling by
//! itself) or resume.
//!
//! Owns: the group plan's prompt, offer, start, turns and end. Must not: read a clock, touch
//! the terminal.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::{ask, config, note};
use crate::app::msg::Command;
use crate::app::notify::{error, info, push_now};
use crate::app::refusal::Refusal;
use crate::app::state::{
    AppState, Confirm, Driver, GroupForm, GroupRun, GroupShown, Modal, Origin,
};
use crate::app::state::{PlanRun, Then};
use crate::app::state::{Prompt, PromptKind};
use crate::backend::{Failure, Fresh, ObjRef, Op, ViewOp};
use crate::core::pod::MinReady;
use crate::plan::engine::{Act, Stop};
use crate::plan::group::part::{self, Reading};
use crate::plan::group::run::{GroupConfig, GroupEnd, GroupEngine, GroupView, Member, Step};

/// What the dialog offers when the group carries no part to start from.
const SUGGESTED: &str = "1,100% zone-bake=1m";

/// `P` in a group's view: the group's plan, typed (prefilled with the group's last one); refused
/// at once when the group may not be driven from here.
pub fn prompt(state: &mut AppState, shown: GroupShown) -> Result<Vec<Command>, Refusal> {
    if let Some(run) = &state.plan_run {
        return Err(format!("this console runs {} already: one at a time", run.words()).into());
    }
    if shown.sets.is_empty() {
        return Err(format!("group {} has no sets here", name(&shown)).into());
    }
    if shown.by == crate::app::state::GroupBy::Label {
        let now = crate::app::group::labelled(state, &shown.namespace, &shown.name);
        crate::app::group::too_many(&shown.name, now.len())?;
    }
    let initial = last_plan(state, &shown);
    let form = super::parse_group(&initial)?;
    dry_run(state, &shown, &form)?;
    state.modal = Modal::Prompt(Prompt::new(PromptKind::GroupPlan { group: shown }, initial));
    Ok(Vec::new())
}

/// What the dialog prefills: the plan the group's first set's part records, when it reads as
/// one (typed again by the operator, never run as it is), else a suggestion.
fn last_plan(state: &AppState, shown: &GroupShown) -> String {
    let Some(Reading::Part(p)) = state.mirror.set(&shown.sets[0]).map(part::read) else {
        return SUGGESTED.into();
    };
    let steps = match p.steps.strip_prefix("batches ") {
        Some(b) => format!("batches={b}"),
        None => p.steps.clone(),
    };
    let text = match p.zone_bake_seconds {
        0 => steps,
        z => format!("{steps} zone-bake={z}s"),
    };
    match super::parse_group(&text) {
        Ok(_) => text,
        Err(_) => SUGGESTED.into(),
    }
}

/// The group's name as shown (read from the cluster: escaped).
fn name(shown: &GroupShown) -> String {
    crate::text::escape_controls(&shown.name).into_owned()
}

/// The engine for the group's plan `form` from this console.
fn engine(state: &AppState, shown: &GroupShown, form: &GroupForm) -> GroupEngine {
    let cfg = GroupConfig {
        group: shown.name.clone(),
        sets: shown.sets.clone(),
        zone_bake_seconds: form.zone_bake_seconds,
        batches: form.batches.clone(),
        engine: config(state, shown.sets[0].clone(), &form.form),
    };
    GroupEngine::new(cfg, ask(&form.form))
}

/// The engine's first turn on the mirror, nothing sent: its refusal, else what it said (a
/// resumed run).
fn dry_run(state: &AppState, shown: &GroupShown, form: &GroupForm) -> Result<Vec<String>, Refusal> {
    let now = state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let mut e = engine(state, shown, form);
    let seen = Seen::mirror(state, &shown.sets);
    let members = seen.members();
    let view = GroupView { members: &members, now, fresh: true, budgets: &seen.budgets };
    if let Step::End(GroupEnd::Refused { why, .. }) = e.next(&view) {
        return Err(format!("group {}: {why}", name(shown)).into());
    }
    Ok(e.said().into_iter().map(|(_, s)| s.text).collect())
}

/// After the dialog: what the group's plan will do, asked first.
pub fn offer(
    state: &mut AppState,
    shown: GroupShown,
    form: GroupForm,
) -> Result<Vec<Command>, Refusal> {
    let said = dry_run(state, &shown, &form)?;
    let n = shown.sets.len();
    let mut details = vec![format!("  one set at a time, in this order ({n}):")];
    for (i, key) in shown.sets.iter().enumerate() {
        let at = match state.mirror.set(key) {
            Some(s) => {
                let st = crate::core::spec::strategy(s);
                let replicas = crate::core::spec::replicas(s);
                format!("partition {} of {replicas}", st.partition)
            }
            None => "not seen here".into(),
        };
        details.push(format!("    {}. {}: {at}", i + 1, crate::text::escape_controls(&key.name)));
    }
    details.push(
        "  a set starts only when every pod of every set of the group is updated or untouched, \
         Ready and available (every ordinal its spec wants)"
            .into(),
    );
    let zone = crate::plan::duration_words(form.zone_bake_seconds * 1000);
    let stuck = crate::plan::duration_words(form.form.stuck_after_ms);
    details.push(format!("  {zone} of that between sets (the zone bake)"));
    details.push(format!(
        "  a step that makes no progress for {stuck} halts the group; the other sets stay as \
         they are"
    ));
    let bake = crate::plan::duration_words(form.form.bake_seconds * 1000);
    state.modal = Modal::Confirm(Confirm {
        title: format!(
            "Run the group plan of {} ({n} sets) from this console, each set {} (bake {bake})?",
            name(&shown),
            form.steps_words()
        ),
        old: format!("{} first", crate::text::escape_controls(&shown.sets[0].name)),
        new: format!("one set at a time, zone bake {zone}; a failure holds"),
        warning: said.into_iter().next(),
        ops: Vec::new(),
        log: form.line(&shown.name),
        details,
        then: Some(Then::GroupPlan { group: shown, form }),
    });
    Ok(Vec::new())
}

/// Starts the group's plan (confirmed): refused while this console runs one.
pub fn start(
    state: &mut AppState,
    shown: GroupShown,
    form: GroupForm,
) -> Result<Vec<Command>, Refusal> {
    if let Some(run) = &state.plan_run {
        return Err(format!("this console runs {} already: one at a time", run.words()).into());
    }
    state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let engine = engine(state, &shown, &form);
    let run = GroupRun { engine, reads: None };
    state.plan_run = Some(PlanRun { driver: Driver::Group(Box::new(run)), sent: None });
    note(state, format!("{}: started by this console", form.line(&name(&shown))));
    // Its sets watched whatever is shown next (they are shown now).
    let mut cmds = vec![Command::Backend(Op::View(crate::app::group::view_op(state)))];
    cmds.extend(turn(state, None));
    Ok(cmds)
}

/// One turn of the group's engine, on every member's fresh `read` or the mirror (none while a
/// read is awaited).
pub(super) fn turn(state: &mut AppState, read: Option<Vec<Fresh>>) -> Vec<Command> {
    let Some(mut run) = state.plan_run.take() else { return Vec::new() };
    let Driver::Group(g) = &mut run.driver else {
        state.plan_run = Some(run);
        return Vec::new();
    };
    if read.is_none() && g.reads.is_some() {
        state.plan_run = Some(run);
        return Vec::new();
    }
    let now = state.now.unwrap_or_default();
    let sets = g.engine.sets().to_vec();
    let step = {
        let seen = match &read {
            Some(all) => Seen::read(state, all, &sets),
            None => Seen::mirror(state, &sets),
        };
        let members = seen.members();
        let view =
            GroupView { members: &members, now, fresh: read.is_some(), budgets: &seen.budgets };
        g.engine.next(&view)
    };
    let group = crate::text::escape_controls(g.engine.group()).into_owned();
    for (key, said) in g.engine.said() {
        match &said.record {
            Some(r) => push_now(state, r.event(&key.name, said.text), Origin::Notice),
            None => note(state, format!("group {group}: {}", said.text)),
        }
    }
    let mut sent = None;
    let cmds = match step {
        Step::Do(Act::Write(w)) => {
            sent = Some(w.id);
            vec![Command::Backend(Op::Cluster(w))]
        }
        Step::Do(Act::Read) => {
            g.reads = Some(vec![None; sets.len()]);
            sets.iter().map(|k| Command::Backend(Op::View(ViewOp::Read(k.clone())))).collect()
        }
        // The console asks no checks or gates, and a failure holds (nothing to revert).
        Step::Do(_) => Vec::new(),
        Step::End(end) => {
            ended(state, &group, end);
            // Back to watching only what is shown.
            return vec![Command::Backend(Op::View(crate::app::group::view_op(state)))];
        }
    };
    if sent.is_some() {
        run.sent = sent;
    }
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
    let Some(PlanRun { driver: Driver::Group(g), .. }) = state.plan_run.as_mut() else {
        return Vec::new();
    };
    let Some(i) = g.engine.sets().iter().position(|k| k == key) else { return Vec::new() };
    // Not asked (an answer after the run stopped reading): dropped.
    let Some(slot) = g.reads.as_mut().and_then(|r| r.get_mut(i)) else { return Vec::new() };
    *slot = Some(read.map_err(Box::new));
    if g.reads.as_ref().is_some_and(|r| r.iter().any(Option::is_none)) {
        return Vec::new();
    }
    let all: Vec<crate::app::state::Answer> =
        g.reads.take().unwrap_or_default().into_iter().flatten().collect();
    let mut ok = Vec::with_capacity(all.len());
    for r in all {
        match r {
            Ok(f) => ok.push(f),
            Err(f) => {
                g.engine.read_failed(now, *f);
                return Vec::new();
            }
        }
    }
    turn(state, Some(ok))
}

/// The status line when the group's run ends.
fn ended(state: &mut AppState, group: &str, end: GroupEnd) {
    match end {
        GroupEnd::Done => info(state, format!("group plan {group} done: every set rolled")),
        GroupEnd::Halted { set, record } => {
            let now = state.now.unwrap_or_default();
            error(
                state,
                format!("group plan {group} halted at {}: {}", set.name, record.words(now)),
            );
        }
        GroupEnd::Refused { why, .. } => {
            error(state, format!("group plan {group} not started: {why}"));
        }
        GroupEnd::Stopped { why, kind: Stop::Asked } => {
            info(state, format!("group plan {group} stopped: {why}"));
        }
        GroupEnd::Stopped { why, .. } => error(state, format!("group plan {group} stopped: {why}")),
    }
}

/// Every member as a turn sees it: from the fresh reads, or from the mirror.
struct Seen<'a> {
    sets: Vec<Option<&'a StatefulSet>>,
    pods: Vec<Vec<(i32, &'a Pod)>>,
    frozen: Vec<Option<String>>,
    min_ready: Vec<MinReady>,
    budgets: Vec<&'a PodDisruptionBudget>,
}

impl<'a> Seen<'a> {
    fn mirror(state: &'a AppState, keys: &'a [ObjRef]) -> Seen<'a> {
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
        let sem = &state.options.semantics;
        let frozen = sets.iter().map(|s| s.and_then(crate::steer::holding).map(|f| f.words()));
        let min_ready = sets
            .iter()
            .map(|s| s.map(|s| crate::core::spec::min_ready(s, sem)).unwrap_or_default());
        Seen { frozen: frozen.collect(), min_ready: min_ready.collect(), sets, pods, budgets }
    }

    fn members(&self) -> Vec<Member<'_>> {
        (0..self.sets.len())
            .map(|i| Member {
                set: self.sets[i],
                pods: &self.pods[i],
                min_ready: self.min_ready[i],
                frozen: self.frozen[i].as_deref(),
            })
            .collect()
    }
}
