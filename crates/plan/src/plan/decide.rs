//! The plan's decision, pure: given the plan's record and what the set and its pods show now,
//! what the runner does next — open the next step (a partition write, recorded in the same
//! patch), delete the next pod (OnDelete), move to the next phase, run the checks, wait (and
//! for what), or halt (and why).
//!
//! The rules, in order, at every observation of a plan under way:
//! 1. The plan halts when another writer changed what it drives: the template (the update
//!    revision is not the plan's), the replicas, the strategy, or the partition (a freeze
//!    raising it halts the plan too, naming the freeze).
//! 2. Waiting: every ordinal the step opened must have a pod on the update revision, Ready and
//!    available (minReadySeconds), not terminating — `wait`'s rule. OnDelete: while they are
//!    not, and none of them is on its way, the highest one on an older revision is deleted.
//!    Not there within `stuck_after`: halt, naming the pods.
//! 3. Baking: every pod of the set stays Ready, restarts no container and does not flap
//!    (its Ready condition changing after the bake began): else halt, naming the pod.
//! 4. Checking: the runner runs the checks; a failure halts.
//! 5. A gate waits for `ststui approve`.
//!
//! Owns: these rules. Must not: do IO or read a clock.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::Target;
pub use super::facts::{
    Baseline, Facts, Next, Steady, baseline, observed_update_revision, opened, previous_partition,
};
use super::facts::{NOT_UPDATED, partition_now, pod_at, ready_since, restarts};
use super::gate::Gating;
use super::record::{Phase, Record, stamp};
use crate::core::pod as podf;
use crate::core::spec;

/// `record` halted now for `why`.
pub fn halted(record: &Record, now: Timestamp, why: String) -> Record {
    Record { phase: Phase::Halted, since: stamp(now), reason: Some(why), ..record.clone() }
}

/// `record` ended as aborted now (`ststui abort`, or `--on-failure undo`), and the partition
/// move that puts back the one from before the plan — from before the freeze it took over,
/// when it began on a frozen set: `(from, to)`, also when they are equal but a freeze is on the
/// set (the move lifts it: an abort leaves no freeze behind). `None` for OnDelete, or a record
/// that does not say where it began.
pub fn aborted(
    record: &Record,
    set: &StatefulSet,
    now: Timestamp,
    why: String,
) -> (Record, Option<(i32, i32)>) {
    let r = Record { phase: Phase::Aborted, ..halted(record, now, why) };
    let st = spec::strategy(set);
    let frozen = super::freeze::frozen(set).is_some();
    let back = record
        .began_at
        .filter(|b| !st.on_delete && (*b != st.partition || frozen))
        .map(|b| (st.partition, b));
    (r, back)
}

/// The next thing to do for the plan `record` on what `facts` show.
pub fn decide(record: &Record, facts: &Facts<'_>) -> Next {
    match record.phase {
        Phase::Done | Phase::Aborted => return Next::Done,
        Phase::Halted => return Next::Halt(record.clone()),
        _ => {}
    }
    if let Some(next) = super::recreate::learn(record, facts) {
        return next;
    }
    if let Err(drift) = still_ours(record, facts.set, facts.frozen) {
        return Next::Halt(halted(record, facts.now, drift.to_string()));
    }
    let since = record.since().unwrap_or(facts.now);
    let elapsed_ms = u64::try_from(facts.now.duration_since(since).as_millis().max(0)).unwrap_or(0);
    match record.phase {
        Phase::Waiting => waiting(record, facts),
        Phase::Baking => baking(record, facts, elapsed_ms),
        Phase::Checking => Next::Check,
        Phase::Gate => Next::Wait(format!(
            "waiting for approval: ststui approve {}",
            facts.set.metadata.name.as_deref().unwrap_or_default()
        )),
        Phase::Approved => advance(record, facts),
        Phase::Halted | Phase::Done | Phase::Aborted => Next::Done,
    }
}

/// Rule 1's finding: what the plan drives is no longer as the plan left it (another writer, or
/// a freeze): the plan halts, saying which.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Drift {
    #[error(
        "the template changed under the plan: it no longer is the one of {revision} (another writer)"
    )]
    Template { revision: String },
    #[error(
        "the template changed under the plan: the update revision is {update}, the plan rolls out {revision} (another writer)"
    )]
    Revision { update: String, revision: String },
    #[error(
        "the replicas changed under the plan: {replicas} now, so step {step} would be partition {partition}, not {recorded} (another writer)"
    )]
    Replicas { replicas: i32, step: usize, partition: i32, recorded: i32 },
    /// A freeze (its words) raised the partition.
    #[error("{0}: a freeze halts the plan")]
    Frozen(String),
    #[error("the partition moved from {from} to {to} under the plan (another writer)")]
    Partition { from: i32, to: i32 },
}

/// Rule 1: what the plan drives is as the plan left it.
fn still_ours(record: &Record, set: &StatefulSet, frozen: Option<&str>) -> Result<(), Drift> {
    if !record.template.is_empty() && super::record::template_hash(set) != record.template {
        return Err(Drift::Template { revision: record.revision.clone() });
    }
    if let Some(update) = observed_update_revision(set)
        && update != record.revision
    {
        return Err(Drift::Revision { update: update.into(), revision: record.revision.clone() });
    }
    let replicas = spec::replicas(set);
    let recorded = record.target.unwrap_or(record.partition);
    if let Some(steps) = record.parsed_steps().ok().map(|s| s.targets(replicas))
        && let Some(Target::Update { partition, .. }) =
            record.step.checked_sub(1).and_then(|i| steps.get(i)).copied()
        && partition != recorded
    {
        return Err(Drift::Replicas { replicas, step: record.step, partition, recorded });
    }
    match partition_now(set) {
        Some(p) if p != record.partition => match frozen {
            Some(f) => Err(Drift::Frozen(f.into())),
            None => Err(Drift::Partition { from: record.partition, to: p }),
        },
        _ => Ok(()),
    }
}

/// " (opens web-3, web-2)" for a partition moving down from `from` to `to`.
pub fn opens(set: &StatefulSet, to: i32, from: i32) -> String {
    let name = set.metadata.name.as_deref().unwrap_or_default();
    let start = spec::start_ordinal(set);
    let until = from.min(spec::replicas(set));
    if to >= until {
        return String::new();
    }
    let (first, last) = (start + until - 1, start + to);
    match until - to {
        1 => format!(" (opens {name}-{first})"),
        2 => format!(" (opens {name}-{first}, {name}-{last})"),
        n => format!(" (opens {name}-{first} … {name}-{last}, {n} pods)"),
    }
}

/// Pods and what each waits for, in ordinal order, in a few words however many there are:
/// neighbours waiting for the same thing are one range (`web-500 … web-698 not updated (199
/// pods)`), and after a few groups the rest is counted (a halt's reason goes into the set's
/// annotations, which the API server limits to 256 KiB).
pub fn pending_words(name: &str, pending: &[(i32, &str)]) -> String {
    const GROUPS: usize = 4;
    let mut groups: Vec<(i32, i32, &str, usize)> = Vec::new();
    for (o, w) in pending {
        match groups.last_mut() {
            Some((_, last, what, n)) if *what == *w && *last + 1 == *o => {
                *last = *o;
                *n += 1;
            }
            _ => groups.push((*o, *o, w, 1)),
        }
    }
    let mut out: Vec<String> = groups
        .iter()
        .take(GROUPS)
        .map(|(a, b, w, n)| match n {
            1 => format!("{name}-{a} {w}"),
            2 => format!("{name}-{a}, {name}-{b} {w}"),
            n => format!("{name}-{a} … {name}-{b} {w} ({n} pods)"),
        })
        .collect();
    let rest: usize = groups.iter().skip(GROUPS).map(|g| g.3).sum();
    if rest > 0 {
        out.push(format!("and {rest} more"));
    }
    out.join(", ")
}

/// What keeps an opened ordinal from counting as done, if anything: a few words, with why a
/// pod is not Ready as `kubectl describe` would say (`not Ready (CrashLoopBackOff: exit 1, 3
/// restarts)`).
fn not_done(pod: Option<&Pod>, update: &str, facts: &Facts<'_>) -> Option<String> {
    let Some(p) = pod else { return Some(NOT_CREATED.into()) };
    if podf::is_terminating(p) {
        return Some("terminating".into());
    }
    if podf::revision(p) != update {
        return Some(NOT_UPDATED.into());
    }
    if !podf::is_running_and_ready(p) {
        let what = if podf::phase(p) == "Running" { NOT_READY } else { NOT_RUNNING };
        return Some(match crate::core::why::reason(p) {
            Some(why) => format!("{what} ({why})"),
            None => what.into(),
        });
    }
    if !podf::is_running_and_available(p, facts.min_ready, facts.now) {
        return Some(NOT_AVAILABLE.into());
    }
    None
}

const NOT_CREATED: &str = "not created";
const NOT_RUNNING: &str = "not running";
const NOT_READY: &str = "Running, not Ready";
const NOT_AVAILABLE: &str = "Ready, not available yet (minReadySeconds)";

/// What a waiting line says a pod of the step is awaited for, from its state as [`not_done`]
/// words it: `web-1 to be updated`, not `web-1 not updated`.
fn awaited(state: &str) -> String {
    let (head, why) = match state.find(" (") {
        Some(i) if state != NOT_AVAILABLE => state.split_at(i),
        _ => (state, ""),
    };
    let verb = match head {
        NOT_UPDATED => "to be updated",
        NOT_CREATED => "to be created",
        "terminating" => "to be gone (terminating)",
        NOT_RUNNING => "to run",
        NOT_READY => "to be Ready",
        NOT_AVAILABLE => "to be available (minReadySeconds)",
        other => other,
    };
    format!("{verb}{why}")
}
/// When the step last made progress: it began, or a pod of it was created on the update
/// revision or turned Ready (the API server's and the kubelets' times: minutes of
/// `stuck-after` do not mind their seconds of skew).
fn last_progress(record: &Record, facts: &Facts<'_>) -> Timestamp {
    let mut at = record.since().unwrap_or(facts.now);
    if let Some(passed) = facts.gating.and_then(|g| g.progress) {
        at = at.max(passed);
    }
    for o in opened(facts.set, record.partition) {
        let Some(p) = pod_at(facts, o).filter(|p| podf::revision(p) == record.revision) else {
            continue;
        };
        let created = p.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let ready = ready_since(p).filter(|_| podf::is_ready(p));
        for t in [created, ready].into_iter().flatten() {
            at = at.max(t);
        }
    }
    at.min(facts.now)
}

/// When a waiting step halts if nothing moves before then: `stuck_after` past its last
/// progress (a runner that sleeps wakes then).
pub fn stuck_deadline(record: &Record, facts: &Facts<'_>) -> Option<Timestamp> {
    if record.phase != Phase::Waiting {
        return None;
    }
    let after =
        SignedDuration::from_millis(i64::try_from(facts.stuck_after_ms).unwrap_or(i64::MAX));
    last_progress(record, facts).checked_add(after).ok()
}

/// Rule 2.
fn waiting(record: &Record, facts: &Facts<'_>) -> Next {
    if let Some(next) = super::recreate::waiting(record, facts) {
        return next;
    }
    let set = facts.set;
    let name = set.metadata.name.as_deref().unwrap_or_default();
    let range = opened(set, record.partition);
    let pending: Vec<(i32, String)> = range
        .clone()
        .filter_map(|o| not_done(pod_at(facts, o), &record.revision, facts).map(|w| (o, w)))
        .collect();
    if let Some(halt) = restarted_too_often(record, facts) {
        return halt;
    }
    let stuck = super::stuck::in_step(record, facts);
    if facts.replace_stuck
        && let Some(s) = stuck.first()
    {
        // Unavailable already: replaced at once, whatever else is on its way, and without a
        // pre-delete gate (a pod that does not run cannot answer one).
        return Next::Delete {
            pod: s.pod.clone(),
            uid: s.uid.clone(),
            record: record.clone(),
            stuck: Some(s.reason.clone()),
        };
    }
    let offer = super::stuck::offer(&stuck, facts);
    let waits = |words: String| Next::Wait(format!("{words}{offer}"));
    if let Some(g) = facts.gating
        && let Some(next) = super::gated::waiting(record, facts, g, &pending)
    {
        return match next {
            Next::Wait(words) => waits(words),
            n => n,
        };
    }
    if pending.is_empty() {
        if record.bake_seconds > 0 {
            let since = stamp(facts.now);
            return Next::Record(Record { phase: Phase::Baking, since, ..record.clone() });
        }
        return checked(record, facts);
    }
    if spec::strategy(set).on_delete {
        // One at a time: only while every opened pod that is not on an older revision is done.
        let moving = pending.iter().any(|(_, w)| w != NOT_UPDATED);
        if !moving
            && let Some((o, _)) = pending.iter().rev().find(|(_, w)| w == NOT_UPDATED)
            && let Some(p) = pod_at(facts, *o)
        {
            return Next::Delete {
                pod: podf::name(p).to_string(),
                uid: podf::uid(p).to_string(),
                record: record.clone(),
                stuck: None,
            };
        }
    }
    let states: Vec<(i32, &str)> = pending.iter().map(|(o, w)| (*o, w.as_str())).collect();
    let words = pending_words(name, &states);
    if stuck_deadline(record, facts).is_some_and(|t| facts.now > t) {
        let after = super::duration_words(facts.stuck_after_ms);
        return Next::Halt(halted(
            record,
            facts.now,
            format!("step {} made no progress for {after}: {words}", record.step),
        ));
    }
    let awaited: Vec<(i32, String)> = pending.iter().map(|(o, w)| (*o, awaited(w))).collect();
    let awaited: Vec<(i32, &str)> = awaited.iter().map(|(o, w)| (*o, w.as_str())).collect();
    waits(format!("waiting for {}", pending_words(name, &awaited)))
}

/// `--max-restarts N`: a pod the step opened, on the plan's revision, whose containers restarted
/// N times halts the plan at once, named with why it is not Ready.
fn restarted_too_often(record: &Record, facts: &Facts<'_>) -> Option<Next> {
    let limit = i32::try_from(facts.max_restarts?).unwrap_or(i32::MAX);
    let p = opened(facts.set, record.partition).filter_map(|o| pod_at(facts, o)).find(|p| {
        podf::revision(p) == record.revision && !podf::is_terminating(p) && restarts(p) >= limit
    })?;
    let why = crate::core::why::reason(p).map(|w| format!(" ({w})")).unwrap_or_default();
    Some(Next::Halt(halted(
        record,
        facts.now,
        format!(
            "step {}: {} restarted {} times{why}: --max-restarts {limit}",
            record.step,
            podf::name(p),
            restarts(p)
        ),
    )))
}

/// Rule 3. Without a baseline (a runner resumed mid-bake) the bake starts over.
fn baking(record: &Record, facts: &Facts<'_>, elapsed_ms: u64) -> Next {
    let Some(baseline) = facts.baseline else {
        return Next::Record(Record { since: stamp(facts.now), ..record.clone() });
    };
    let set = facts.set;
    let name = set.metadata.name.as_deref().unwrap_or_default();
    for o in opened(set, 0) {
        let Some(p) = pod_at(facts, o) else {
            return halt_baking(record, facts, format!("{name}-{o} is gone"));
        };
        if let Some(why) = unsteady(p, baseline.get(podf::name(p))) {
            return halt_baking(record, facts, format!("{}: {why}", podf::name(p)));
        }
    }
    let bake_ms = record.bake_seconds * 1000;
    if elapsed_ms >= bake_ms {
        return checked(record, facts);
    }
    Next::Wait(format!("baking, {} left", super::duration_words(bake_ms - elapsed_ms)))
}

/// A step that is steady: its checks run next, or (without checks) the next step.
fn checked(record: &Record, facts: &Facts<'_>) -> Next {
    if record.checks.is_empty() {
        return advance(record, facts);
    }
    Next::Record(Record { phase: Phase::Checking, since: stamp(facts.now), ..record.clone() })
}

fn halt_baking(record: &Record, facts: &Facts<'_>, why: String) -> Next {
    Next::Halt(halted(record, facts.now, format!("while baking step {}: {why}", record.step)))
}

/// Why a pod is not as steady as it was when the bake began: not Ready, terminating, another
/// pod of its name, a container restarted, or its readiness changed meanwhile.
fn unsteady(p: &Pod, was: Option<&Steady>) -> Option<String> {
    if podf::is_terminating(p) {
        return Some("terminating".into());
    }
    if !podf::is_ready(p) {
        return Some(match crate::core::why::reason(p) {
            Some(why) => format!("not Ready ({why})"),
            None => "not Ready".into(),
        });
    }
    let Some(was) = was else { return Some("appeared during the bake".into()) };
    if podf::uid(p) != was.uid {
        return Some("was deleted and created again".into());
    }
    if restarts(p) > was.restarts {
        let statuses = p.status.as_ref().and_then(|s| s.container_statuses.as_ref());
        let last = statuses.into_iter().flatten().find_map(|c| {
            let t = c.last_state.as_ref()?.terminated.as_ref()?;
            let reason = t.reason.as_ref().map(|r| format!(", {r}")).unwrap_or_default();
            Some(format!("container {} restarted (exit code {}{reason})", c.name, t.exit_code))
        });
        return Some(last.unwrap_or_else(|| "a container restarted".into()));
    }
    if ready_since(p) != was.ready_since {
        return Some("its readiness changed during the bake".into());
    }
    None
}

/// The step after `record`'s: open it, wait at its gate, or done.
pub fn advance(record: &Record, facts: &Facts<'_>) -> Next {
    let set = facts.set;
    let Ok(steps) = record.parsed_steps() else {
        let why = format!("the plan's steps {:?} cannot be read", record.steps);
        return Next::Halt(halted(record, facts.now, why));
    };
    let targets = steps.targets(spec::replicas(set));
    if record.step >= targets.len() {
        let since = stamp(facts.now);
        let done = Record { phase: Phase::Done, since, reason: None, ..record.clone() };
        return Next::Record(done);
    }
    enter(record, record.step + 1, &targets, facts)
}

/// Enters step `step` (from 1) of `targets`.
pub fn enter(record: &Record, step: usize, targets: &[Target], facts: &Facts<'_>) -> Next {
    let since = stamp(facts.now);
    let base = Record { step, of: targets.len(), since, reason: None, ..record.clone() };
    match targets.get(step.wrapping_sub(1)) {
        None => Next::Record(Record { phase: Phase::Done, ..base }),
        Some(Target::Gate) => Next::Record(Record { phase: Phase::Gate, ..base }),
        Some(Target::Update { partition, .. }) => {
            let record = Record { phase: Phase::Waiting, partition: *partition, ..base };
            if let Some(next) = super::recreate::enter(record.clone(), facts) {
                return next;
            }
            match partition_now(facts.set) {
                // Gates before the step's pods go: it opens gradually, as they pass.
                Some(from) if from > *partition && facts.gating.is_some_and(Gating::any) => {
                    Next::Record(Record { partition: from, target: Some(*partition), ..record })
                }
                Some(from) if from != *partition => Next::Open { from, to: *partition, record },
                _ => Next::Record(record),
            }
        }
    }
}

/// The step's pods stuck on the plan's revision (on it and not Ready): what `--on-failure undo`
/// and `ststui abort` delete once the template is reverted (kubernetes#67250: the controller
/// waits on them forever otherwise).
pub fn stuck_on(revision: &str, pods: &[(i32, &Pod)]) -> Vec<(String, String)> {
    let mut out: Vec<(i32, String, String)> = pods
        .iter()
        .filter(|(_, p)| podf::revision(p) == revision && !podf::is_terminating(p))
        .filter(|(_, p)| !podf::is_running_and_ready(p))
        .map(|(o, p)| (*o, podf::name(p).to_string(), podf::uid(p).to_string()))
        .collect();
    out.sort_by_key(|o| std::cmp::Reverse(o.0));
    out.into_iter().map(|(_, n, u)| (n, u)).collect()
}
