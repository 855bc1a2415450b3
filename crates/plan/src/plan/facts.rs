//! What the plan's decision reads and returns, and the small questions about a set every rule
//! of it asks (which ordinals a step opened, the pod at an ordinal, the partition now and before
//! a step): the leaf the decision's files share, so none of them imports another's.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::Target;
use super::gate::{GateKind, GatePod, Gating, Key};
use super::record::Record;
use crate::core::pod::{self as podf, MinReady};
use crate::core::spec;

/// What the decision reads.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub set: &'a StatefulSet,
    /// The set's own pods (as the controller claims them), with their ordinals, in ordinal
    /// order.
    pub pods: &'a [(i32, &'a Pod)],
    pub now: Timestamp,
    pub min_ready: MinReady,
    /// A step's pods not there after this long halt the plan.
    pub stuck_after_ms: u64,
    /// What the set's pods were when the bake began (the runner keeps it: the pods' own times
    /// come from the nodes' clocks, which need not agree with the runner's).
    pub baseline: Option<&'a Baseline>,
    /// The operator's freeze holding the set, in its words (`steer::holding`, read by the
    /// runner: a freeze halts the plan, naming it).
    pub frozen: Option<&'a str>,
    /// The gates this invocation asks and what passed in this run (`None`: none asked).
    pub gating: Option<&'a Gating>,
    /// `--replace-stuck` asked (else such pods are only offered, in the waiting words).
    pub replace_stuck: bool,
    /// `--max-restarts N` (`Ask::max_restarts`).
    pub max_restarts: Option<u32>,
    /// The image this invocation sets (`rollout --image`), where the plan sets it itself: a
    /// Recreate set's step opens with it ([`super::recreate`]).
    pub image: Option<&'a str>,
}

/// What a pod was when a bake began: the same pod (uid), its restarts, its readiness since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steady {
    pub uid: String,
    pub restarts: i32,
    pub ready_since: Option<Timestamp>,
}

/// The set's pods at a bake's start, by name.
pub type Baseline = std::collections::BTreeMap<String, Steady>;

/// The baseline of a bake starting on `pods`.
pub fn baseline(pods: &[(i32, &Pod)]) -> Baseline {
    pods.iter()
        .map(|(_, p)| {
            let steady = Steady {
                uid: podf::uid(p).to_string(),
                restarts: restarts(p),
                ready_since: ready_since(p),
            };
            (podf::name(p).to_string(), steady)
        })
        .collect()
}

pub(super) fn restarts(p: &Pod) -> i32 {
    let statuses = p.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    statuses.into_iter().flatten().map(|c| c.restart_count).sum()
}

pub(super) fn ready_since(p: &Pod) -> Option<Timestamp> {
    let conditions = p.status.as_ref().and_then(|s| s.conditions.as_ref());
    let ready = conditions.into_iter().flatten().find(|c| c.type_ == "Ready");
    ready.and_then(|c| c.last_transition_time.as_ref()).map(|t| t.0)
}

/// What the runner does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Move the partition from `from` to `to` and write `record`, in one patch.
    Open { from: i32, to: i32, record: Record },
    /// Delete this pod (its uid the precondition) so that it comes back updated: OnDelete's
    /// next pod (`stuck: None`), or one stuck broken on an older revision (`--replace-stuck`;
    /// `stuck` says how it is broken).
    Delete { pod: String, uid: String, record: Record, stuck: Option<String> },
    /// Set the template's first image and write `record`, in one patch: a Recreate step opens
    /// (the controller then deletes every old pod).
    Recreate { image: String, record: Record },
    /// Write this record (a phase changed).
    Record(Record),
    /// Run the step's checks, then [`super::decide::advance`] (or halt on a failure).
    Check,
    /// Run this gate (for this pod), then decide again; `record` is the plan as it stands.
    Gate { kind: GateKind, key: Key, pod: Option<GatePod>, record: Record },
    /// Nothing to do now; what it waits for.
    Wait(String),
    /// Stop: the record says why (phase [`Phase::Halted`]).
    Halt(Record),
    /// Every step is done.
    Done,
}

/// The update revision the controller reports for the set's current spec (`None` while it has
/// not observed the spec yet: nothing about the rollout can be judged then).
pub fn observed_update_revision(set: &StatefulSet) -> Option<&str> {
    let status = set.status.as_ref()?;
    let observed = status.observed_generation.unwrap_or(0) >= set.metadata.generation.unwrap_or(0);
    observed.then_some(status.update_revision.as_deref()).flatten()
}

/// The partition a plan reads: the RollingUpdate partition, or `None` for OnDelete and
/// Recreate (nothing reads one there).
pub(super) fn partition_now(set: &StatefulSet) -> Option<i32> {
    let st = spec::strategy(set);
    (!st.on_delete && !st.recreate).then_some(st.partition)
}

/// The ordinals a step at `partition` has opened.
pub fn opened(set: &StatefulSet, partition: i32) -> std::ops::Range<i32> {
    let start = spec::start_ordinal(set);
    start.saturating_add(partition.max(0))..start.saturating_add(spec::replicas(set))
}

/// A pod of the step still on an older revision, in [`super::decide`]'s words.
pub(super) const NOT_UPDATED: &str = "not updated";

pub(super) fn pod_at<'a>(facts: &Facts<'a>, ordinal: i32) -> Option<&'a Pod> {
    let at = facts.pods.binary_search_by_key(&ordinal, |(o, _)| *o).ok()?;
    facts.pods.get(at).map(|(_, p)| *p)
}

/// The partition before step `r.step` (where the step's pods begin being new).
pub fn previous_partition(r: &Record, replicas: i32) -> i32 {
    let Ok(steps) = r.parsed_steps() else { return replicas };
    let targets = steps.targets(replicas);
    targets[..r.step.saturating_sub(1).min(targets.len())]
        .iter()
        .rev()
        .find_map(|t| match t {
            Target::Update { partition, .. } => Some(*partition),
            Target::Gate => None,
        })
        .unwrap_or(replicas)
}
