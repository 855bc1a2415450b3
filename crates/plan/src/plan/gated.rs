//! The decision's gated part, pure: when a plan has gates, what comes before a pod goes and
//! after it is back.
//!
//! - OnDelete: ststui deletes each pod itself, so `pre-delete` runs right before a pod's
//!   eviction and `post-ready` once its replacement is updated, Ready and available, before the
//!   next pod goes. `--last`/`--last-by` keep that pod for the end of the step.
//! - RollingUpdate: the controller deletes the pods a partition opens without asking anyone, so
//!   a gated step opens one ordinal at a time: `pre-delete` for the pod the next ordinal would
//!   take, the partition lowered by one (the controller then replaces exactly that pod),
//!   `post-ready` once it is back, then the next.
//! - Recreate: the controller deletes every old pod at once and brings them back as its policy
//!   says, asking no one: `--before-step` comes before the plan's template write
//!   ([`super::recreate`]), `post-ready` for each pod as it is back, while the others come.
//! - `--before-step`: once before a step's pods start to go, and again `--recheck` later.
//!
//! A pass counts for this run only (the decision's [`Gating`]): a resumed plan asks again, it
//! never takes a pass from the set. Owns: these rules. Must not: do IO or read a clock.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::facts::{Facts, NOT_UPDATED, Next, partition_now, pod_at, previous_partition};
use super::gate::{GateKind, GatePod, Gating, Key};
use super::record::Record;
use crate::core::pod as podf;
use crate::core::spec;

/// What the gates make of a waiting step, if anything (`None`: the ungated rules go on —
/// waiting for pods on their way, baking once the step is done). `pending`: the step's opened
/// ordinals not yet done, with what each waits for.
pub fn waiting(
    record: &Record,
    facts: &Facts<'_>,
    g: &Gating,
    pending: &[(i32, String)],
) -> Option<Next> {
    let st = spec::strategy(facts.set);
    if st.recreate {
        // Nothing waits for the gate: each pod's post-ready as soon as it is back.
        return g
            .asks(GateKind::PostReady)
            .then(|| back_unpassed(record, facts, g, pending))
            .flatten()
            .and_then(|pod| pod_gate(g, GateKind::PostReady, pod, record));
    }
    let on_delete = st.on_delete;
    // Pods on their way (terminating, starting, not Ready): wait for them, whatever the gates.
    let moving = pending.iter().any(|(_, w)| w != NOT_UPDATED);
    if moving || (!on_delete && !pending.is_empty()) {
        return None;
    }
    if g.asks(GateKind::PostReady)
        && let Some(pod) = back_unpassed(record, facts, g, pending)
    {
        return pod_gate(g, GateKind::PostReady, pod, record);
    }
    if on_delete {
        on_delete_next(record, facts, g, pending)
    } else {
        rolling_next(record, facts, g)
    }
}

/// OnDelete: the next pod to go, after its gates.
fn on_delete_next(
    record: &Record,
    facts: &Facts<'_>,
    g: &Gating,
    pending: &[(i32, String)],
) -> Option<Next> {
    let old: Vec<i32> = pending.iter().filter(|(_, w)| w == NOT_UPDATED).map(|(o, _)| *o).collect();
    if old.is_empty() {
        return None;
    }
    if let Some(next) = before_step(record, facts, g) {
        return Some(next);
    }
    if g.asks(GateKind::LastBy) && g.leader.as_ref().map(|(_, n)| *n) != Some(old.len()) {
        let key = Key::Step(record.step, LEADER_ROUND);
        return Some(Next::Gate { kind: GateKind::LastBy, key, pod: None, record: record.clone() });
    }
    let last = g.last.as_deref().or(g.leader.as_ref().map(|(name, _)| name.as_str()));
    let pods: Vec<(i32, &k8s_openapi::api::core::v1::Pod)> =
        old.iter().rev().filter_map(|o| pod_at(facts, *o).map(|p| (*o, p))).collect();
    let victim = pods
        .iter()
        .find(|(_, p)| Some(podf::name(p)) != last)
        .or(pods.first())
        .map(|(o, p)| gate_pod(*o, p))?;
    if g.asks(GateKind::PreDelete)
        && let Some(gate) = pod_gate(g, GateKind::PreDelete, victim.clone(), record)
    {
        return Some(gate);
    }
    Some(Next::Delete { pod: victim.name, uid: victim.uid, record: record.clone(), stuck: None })
}

/// `--last-by`'s key round (a step's before-step uses rounds 0 and 1).
pub const LEADER_ROUND: u8 = 9;

/// RollingUpdate: the next ordinal opened, after its gates.
fn rolling_next(record: &Record, facts: &Facts<'_>, g: &Gating) -> Option<Next> {
    let target = record.target.filter(|t| record.partition > *t)?;
    if let Some(next) = before_step(record, facts, g) {
        return Some(next);
    }
    let from = partition_now(facts.set).unwrap_or(record.partition);
    if !g.per_pod() {
        let record = Record { partition: target, target: None, ..record.clone() };
        return Some(Next::Open { from, to: target, record });
    }
    let replicas = spec::replicas(facts.set);
    let to = (record.partition.min(replicas) - 1).max(target);
    let ordinal = spec::start_ordinal(facts.set) + to;
    if g.asks(GateKind::PreDelete)
        && let Some(p) = pod_at(facts, ordinal)
        && podf::revision(p) != record.revision
        && !podf::is_terminating(p)
        && let Some(gate) = pod_gate(g, GateKind::PreDelete, gate_pod(ordinal, p), record)
    {
        return Some(gate);
    }
    let record =
        Record { partition: to, target: (to > target).then_some(target), ..record.clone() };
    Some(Next::Open { from, to, record })
}

/// `--before-step` for the step: asked first, then again `--recheck` after it passed.
pub(super) fn before_step(record: &Record, facts: &Facts<'_>, g: &Gating) -> Option<Next> {
    if !g.asks(GateKind::BeforeStep) {
        return None;
    }
    let gate = |round| Next::Gate {
        kind: GateKind::BeforeStep,
        key: Key::Step(record.step, round),
        pod: None,
        record: record.clone(),
    };
    let first = g.passed(&Key::Step(record.step, 0));
    let Some(first) = first else { return Some(gate(0)) };
    if g.recheck_ms == 0 || g.passed(&Key::Step(record.step, 1)).is_some() {
        return None;
    }
    let again = recheck_at(first, g.recheck_ms);
    if facts.now >= again {
        return Some(gate(1));
    }
    Some(Next::Wait(format!(
        "before-step gate passed; asked again in {} (--recheck)",
        super::duration_words(millis(again.duration_since(facts.now)))
    )))
}

fn recheck_at(first: Timestamp, ms: u64) -> Timestamp {
    let d = SignedDuration::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
    // Too far to say: never, not at once.
    super::later(first, d)
}

fn millis(d: SignedDuration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(0).max(1000)
}

/// When a gated step wakes by itself: its before-step's recheck comes due.
pub fn due(record: &Record, g: &Gating) -> Option<Timestamp> {
    if !g.asks(GateKind::BeforeStep)
        || g.recheck_ms == 0
        || g.passed(&Key::Step(record.step, 1)).is_some()
    {
        return None;
    }
    g.passed(&Key::Step(record.step, 0)).map(|t| recheck_at(t, g.recheck_ms))
}

/// A pod the step replaced that is back (updated, Ready, available: not `pending`) and whose
/// `post-ready` has not passed in this run, in the order the pods come back.
fn back_unpassed(
    record: &Record,
    facts: &Facts<'_>,
    g: &Gating,
    pending: &[(i32, String)],
) -> Option<GatePod> {
    let replicas = spec::replicas(facts.set);
    let floor =
        previous_partition(record, replicas).min(record.began_at.unwrap_or(replicas)).min(replicas);
    let start = spec::start_ordinal(facts.set);
    let mut ordinals: Vec<i32> = (record.partition.max(0)..floor).map(|i| start + i).collect();
    // The order the pods come back in: highest first where the plan opens them so, lowest
    // first where the controller brings them all back (Recreate, in its policy's order).
    if !spec::strategy(facts.set).recreate {
        ordinals.reverse();
    }
    ordinals.into_iter().find_map(|o| {
        let p = pod_at(facts, o)?;
        let back = podf::revision(p) == record.revision
            && !podf::is_terminating(p)
            && !pending.iter().any(|(at, _)| *at == o);
        let passed = g.passed(&Key::Pod(GateKind::PostReady, podf::uid(p).to_string()));
        (back && passed.is_none()).then(|| gate_pod(o, p))
    })
}

/// Gate `kind` for `pod`, unless it passed in this run (for this pod's uid).
fn pod_gate(g: &Gating, kind: GateKind, pod: GatePod, record: &Record) -> Option<Next> {
    let key = Key::Pod(kind, pod.uid.clone());
    let record = record.clone();
    g.passed(&key).is_none().then_some(Next::Gate { kind, key, pod: Some(pod), record })
}

fn gate_pod(ordinal: i32, p: &k8s_openapi::api::core::v1::Pod) -> GatePod {
    GatePod {
        name: podf::name(p).to_string(),
        ordinal,
        uid: podf::uid(p).to_string(),
        revision: podf::revision(p).to_string(),
    }
}

/// How many of the step's opened pods are not on the plan's revision yet.
pub fn old_left(record: &Record, facts: &Facts<'_>) -> usize {
    let start = spec::start_ordinal(facts.set);
    (record.partition.max(0)..spec::replicas(facts.set))
        .filter(|i| pod_at(facts, start + i).is_some_and(|p| podf::revision(p) != record.revision))
        .count()
}
