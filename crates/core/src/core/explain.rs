//! Explanations for the console, built from a sync's input and its [`Plan`]: each ordinal's
//! role, the controller's next actions in words, the forced-rollback situation of spec 7.1
//! (kubernetes#67250) and what raising the partition does (7.7 a).
//!
//! Owns: typed explanation values (the UI decides colours from the kinds) and their English
//! text. Must not touch: the sync algorithm; everything here reads a [`Plan`] already computed.

use std::fmt;

use k8s_openapi::api::core::v1::Pod;

use super::claim;
use super::labels::{is_member_name, ordinal_of, pod_name};
use super::pod;
use super::spec;
use super::types::{Blocker, DeleteReason, Effect, Hold, Now, Observed, Plan, PodWait};

/// How a pod's revision relates to the set's revisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisionRole {
    /// On the current revision (not being rolled out to).
    Current,
    /// On the update revision (the target of the rollout).
    Update,
    /// Current and update are the same revision, and the pod is on it.
    Both,
    /// On a third revision (neither current nor update).
    Other(String),
    /// No pod (placeholder): no revision yet.
    None,
}

/// Where an ordinal sits relative to the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionSide {
    /// Below `start + partition`: held on the current revision.
    Held,
    /// At or above the partition: updated by the rolling update.
    Open,
    /// OnDelete: updates happen only by manual deletes.
    Manual,
}

/// The pod's lifecycle state as the controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodState {
    /// Not created yet (a placeholder in the sync).
    Missing,
    Pending,
    /// Running, not Ready.
    Running,
    /// Ready but not yet available for `minReadySeconds`.
    Ready,
    /// Running, Ready and available.
    Available,
    Terminating,
    Failed,
    Succeeded,
}

/// One ordinal of the set, in range or condemned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrdinalRole {
    pub ordinal: i32,
    pub pod: String,
    pub revision: RevisionRole,
    pub partition: PartitionSide,
    /// Outside `[start, start + replicas)`: will be deleted by scale-down.
    pub condemned: bool,
    pub state: PodState,
}

fn state_of(p: &Pod, mrs: pod::MinReady, now: Now) -> PodState {
    if pod::is_terminating(p) {
        PodState::Terminating
    } else if pod::is_failed(p) {
        PodState::Failed
    } else if pod::is_succeeded(p) {
        PodState::Succeeded
    } else if !pod::is_created(p) {
        PodState::Missing
    } else if pod::is_pending(p) {
        PodState::Pending
    } else if pod::is_running_and_available(p, mrs, now) {
        PodState::Available
    } else if pod::is_running_and_ready(p) {
        PodState::Ready
    } else {
        PodState::Running
    }
}

/// Every ordinal of the set: the in-range ones (with placeholders for missing pods) and the
/// condemned pods, in ascending ordinal order. Pods are claimed as the sync would claim them.
pub fn ordinal_roles(observed: &Observed<'_>, plan: &Plan, now: Now) -> Vec<OrdinalRole> {
    let set = observed.set;
    let claimed = claim::claim_pods(set, observed.pods).ok();
    let pods: Vec<&Pod> =
        claimed.as_ref().map(|c| c.pods.iter().map(AsRef::as_ref).collect()).unwrap_or_default();
    let (start, end, mrs) = (spec::start_ordinal(set), spec::end_ordinal(set), plan.min_ready);
    let st = spec::strategy(set);
    let side = |o: i32| {
        if st.on_delete {
            PartitionSide::Manual
        } else if st.holds(start, i64::from(o)) {
            PartitionSide::Held
        } else {
            PartitionSide::Open
        }
    };
    let role = |rev: &str| match (rev == plan.current_revision, rev == plan.update_revision) {
        (true, true) => RevisionRole::Both,
        (true, false) => RevisionRole::Current,
        (false, true) => RevisionRole::Update,
        _ => RevisionRole::Other(rev.to_string()),
    };
    let mut out: Vec<OrdinalRole> = pods
        .iter()
        .filter(|p| pod::ordinal(p) >= 0)
        .map(|p| {
            let o = pod::ordinal(p);
            OrdinalRole {
                ordinal: o,
                pod: pod::name(p).to_string(),
                revision: role(pod::revision(p)),
                partition: side(o),
                condemned: !spec::in_range(set, o),
                state: state_of(p, mrs, now),
            }
        })
        .collect();
    // No pod name parses to an ordinal past int32.
    for o in start..=i32::try_from(end).unwrap_or(i32::MAX) {
        if !out.iter().any(|r| r.ordinal == o) {
            out.push(OrdinalRole {
                ordinal: o,
                pod: pod_name(spec::name(set), o),
                revision: RevisionRole::None,
                partition: side(o),
                condemned: false,
                state: PodState::Missing,
            });
        }
    }
    out.sort_by_key(|r| r.ordinal);
    out
}

fn observed_pod<'a>(observed: &Observed<'a>, name: &str) -> Option<&'a Pod> {
    observed.pods.iter().copied().find(|p| pod::name(p) == name)
}

/// What kind of step a line describes; the UI picks colours from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    Create,
    DeleteForUpdate,
    DeleteForScaleDown,
    DeleteFailed,
    Repair,
    Claim,
    Revision,
    Adopt,
    Status,
    /// The sync stopped early (a [`Blocker`]).
    Wait,
    /// The operator's configuration holds the rollout (a [`Hold`]).
    Hold,
    Error,
}

/// One line of "what the controller does next".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub kind: StepKind,
    /// The pod the line is about, if one.
    pub pod: Option<String>,
    pub text: String,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn step(kind: StepKind, pod: Option<&str>, text: String) -> Step {
    Step { kind, pod: pod.map(str::to_string), text }
}

/// The plan in words: one line per effect (status writes folded into one), then why it stopped
/// or what holds it.
pub fn next_actions(observed: &Observed<'_>, plan: &Plan) -> Vec<Step> {
    let mut out: Vec<Step> =
        plan.effects.iter().filter_map(|e| effect_step(observed, plan, e)).collect();
    if let Some(b) = &plan.waiting_on {
        out.push(blocker_step(b));
    } else if let Some(h) = &plan.held_by {
        out.push(hold_step(observed, plan, h));
    }
    out
}

fn effect_step(observed: &Observed<'_>, plan: &Plan, e: &Effect) -> Option<Step> {
    let rev_of =
        |name: &str| observed_pod(observed, name).map(pod::revision).unwrap_or("?").to_string();
    Some(match e {
        Effect::CreatePod(p) => {
            let n = pod::name(p);
            step(StepKind::Create, Some(n), format!("create {n} ({})", pod::revision(p)))
        }
        Effect::DeletePod { name, reason: DeleteReason::Update } => step(
            StepKind::DeleteForUpdate,
            Some(name),
            format!("delete {name} for update ({} → {})", rev_of(name), plan.update_revision),
        ),
        Effect::DeletePod { name, reason: DeleteReason::Recreate } => step(
            StepKind::DeleteForUpdate,
            Some(name),
            format!(
                "delete {name} to recreate it ({} → {}): Recreate deletes every old pod at once",
                rev_of(name),
                plan.update_revision
            ),
        ),
        Effect::DeletePod { name, reason: DeleteReason::ScaleDown } => {
            step(StepKind::DeleteForScaleDown, Some(name), format!("delete {name} (scale down)"))
        }
        Effect::DeletePod { name, reason: DeleteReason::Failed } => step(
            StepKind::DeleteFailed,
            Some(name),
            format!("delete failed {name}; it is recreated once gone"),
        ),
        Effect::UpdatePod(p) => {
            let n = pod::name(p);
            step(
                StepKind::Repair,
                Some(n),
                format!("repair {n} (identity, storage or claim ownerRefs)"),
            )
        }
        Effect::CreateClaim(c) => {
            let n = c.metadata.name.as_deref().unwrap_or_default();
            step(StepKind::Claim, None, format!("create claim {n}"))
        }
        Effect::UpdateClaim(c) => {
            let n = c.metadata.name.as_deref().unwrap_or_default();
            step(StepKind::Claim, None, format!("set ownerRefs of claim {n} (retention policy)"))
        }
        Effect::CreateRevision(r) => {
            let n = r.metadata.name.as_deref().unwrap_or_default();
            step(StepKind::Revision, None, format!("create revision {n}"))
        }
        Effect::UpdateRevision(r) => {
            let n = r.metadata.name.as_deref().unwrap_or_default();
            let num = r.revision.unwrap_or_default();
            step(StepKind::Revision, None, format!("roll back to revision {n} (renumbered {num})"))
        }
        Effect::DeleteRevision { name } => {
            step(StepKind::Revision, None, format!("delete old revision {name} (history limit)"))
        }
        Effect::AdoptRevision { name, .. } => {
            step(StepKind::Adopt, None, format!("adopt revision {name}"))
        }
        Effect::AdoptPod { name, .. } => step(StepKind::Adopt, Some(name), format!("adopt {name}")),
        Effect::ReleasePod { name, .. } => {
            step(StepKind::Adopt, Some(name), format!("release {name}"))
        }
        Effect::WriteStatus(_) => step(StepKind::Status, None, "update status".into()),
    })
}

fn wait_words(w: PodWait) -> String {
    match w {
        PodWait::NotCreated => "not created yet".into(),
        PodWait::Pending => "Pending".into(),
        PodWait::NotReady => "not Ready".into(),
        PodWait::NotAvailable { min_ready_seconds } => {
            format!("Ready but not yet available (minReadySeconds {min_ready_seconds})")
        }
        PodWait::Terminating => "terminating".into(),
        PodWait::Terminal => "failed".into(),
    }
}

/// The pod the plan waits on, if its blocker names one.
pub fn waited_pod(plan: &Plan) -> Option<String> {
    plan.waiting_on.as_ref().and_then(|b| blocker_step(b).pod)
}

/// A blocker in words.
pub fn blocker_step(b: &Blocker) -> Step {
    let w = |p: &str, t: String| step(StepKind::Wait, Some(p), t);
    match b {
        Blocker::SetDeleting => step(
            StepKind::Wait,
            None,
            "the set is being deleted: nothing is created, updated or deleted".into(),
        ),
        Blocker::Ordered { pod, wait: PodWait::NotCreated, .. } => w(
            pod,
            format!(
                "{pod} is created this sync; OrderedReady waits for it to be Ready before the next"
            ),
        ),
        Blocker::Ordered { pod, wait: PodWait::Terminating, .. } => {
            w(pod, format!("{pod} is terminating — OrderedReady waits for it to go"))
        }
        Blocker::Ordered { pod, wait, .. } => {
            let words = wait_words(*wait);
            // A rollout or a scale-up alike: OrderedReady goes one pod at a time.
            w(pod, format!("waiting: {pod} {words} — OrderedReady waits for it before the next"))
        }
        Blocker::TerminalPod { pod, .. } => {
            w(pod, format!("{pod} failed: deleted, recreated once it is gone"))
        }
        Blocker::StaleClaim { pod, claim } => w(
            pod,
            format!(
                "{pod} cannot be created: claim {claim} still belongs to a previous {pod} \
                 (garbage collection pending)"
            ),
        ),
        Blocker::ClaimTerminating { pod, claim } => {
            w(pod, format!("{pod} cannot be created: claim {claim} is being deleted"))
        }
        Blocker::CondemnedTerminating { pod } => {
            w(pod, format!("{pod} is terminating — scale-down waits for it to go"))
        }
        Blocker::CondemnedUnhealthy { pod, first_unavailable } => w(
            pod,
            match first_unavailable {
                Some(f) => format!(
                    "scale-down waits: {pod} is unhealthy and only {f}, the first unavailable \
                     pod, may go first"
                ),
                None => format!("scale-down waits: {pod} is unhealthy"),
            },
        ),
        Blocker::ScaleDownStep { pod } => {
            w(pod, format!("scale-down deletes {pod} this sync; the next goes once it is gone"))
        }
        Blocker::UpdateStep { pod } => {
            w(pod, format!("rolling update deletes {pod} this sync; one pod at a time"))
        }
        Blocker::UpdateWaiting { pod, wait } => w(
            pod,
            format!(
                "waiting: {pod} {} — the next pod is updated once it is available",
                wait_words(*wait)
            ),
        ),
        Blocker::MaxUnavailable { unavailable, max } => step(
            StepKind::Wait,
            None,
            format!("maxUnavailable budget used: {unavailable} of {max}"),
        ),
        Blocker::Recreate { pods, left } => {
            let named = pods.join(", ");
            let more = usize::try_from(*left).unwrap_or(0).saturating_sub(pods.len());
            let who = if more > 0 { format!("{named} and {more} more") } else { named };
            let first = pods.first().map(String::as_str).unwrap_or_default();
            let text = format!(
                "waiting: {who} to terminate — Recreate creates no pod until every old one is gone"
            );
            w(first, text)
        }
        Blocker::Error { message } => step(StepKind::Error, None, format!("sync error: {message}")),
    }
}

/// A hold in words, naming the pods it holds.
pub fn hold_step(observed: &Observed<'_>, plan: &Plan, h: &Hold) -> Step {
    let set_name = spec::name(observed.set);
    match h {
        Hold::Partition { partition, first_held, last_held, .. } => step(
            StepKind::Hold,
            None,
            format!(
                "partition {partition} holds {}..{}",
                pod_name(set_name, *first_held),
                pod_name(set_name, *last_held)
            ),
        ),
        Hold::OnDelete { .. } => {
            let outdated = outdated_pods(observed, plan);
            step(
                StepKind::Hold,
                outdated.first().map(String::as_str),
                format!("OnDelete: waiting for a manual delete of {}", outdated.join(", ")),
            )
        }
    }
}

/// In-range pods not on the update revision (created, not terminating), ascending.
fn outdated_pods(observed: &Observed<'_>, plan: &Plan) -> Vec<String> {
    let set = observed.set;
    let mut v: Vec<(i32, String)> = observed
        .pods
        .iter()
        .filter(|p| {
            is_member_name(spec::name(set), pod::name(p)) && spec::in_range(set, pod::ordinal(p))
        })
        .filter(|p| {
            pod::is_created(p)
                && !pod::is_terminating(p)
                && pod::revision(p) != plan.update_revision
        })
        .map(|p| (pod::ordinal(p), pod::name(p).to_string()))
        .collect();
    v.sort();
    v.into_iter().map(|(_, n)| n).collect()
}

/// Why a rollout is stuck in the forced-rollback situation (spec 7.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StuckReason {
    /// The pod is on a revision other than the update revision (e.g. the broken one after a
    /// revert) and OrderedReady waits for it forever.
    OldRevision { pod_revision: String },
    /// The pod is on the update revision and does not become Ready: the update itself may be
    /// broken. Revert the template, then delete the pod.
    BrokenUpdate,
}

/// kubernetes#67250: an OrderedReady set waiting on a pod that only a manual delete unblocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForcedRollback {
    /// The pod that must be deleted.
    pub pod: String,
    pub ordinal: i32,
    pub reason: StuckReason,
    pub update_revision: String,
    /// Seconds since the pod was created, if known (the UI decides when "long" is too long).
    pub stuck_for_secs: Option<i64>,
}

impl fmt::Display for ForcedRollback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            StuckReason::OldRevision { pod_revision } => write!(
                f,
                "{} is on {pod_revision}, not the update revision {}: OrderedReady waits for \
                 it forever; delete {} to recreate it (forced rollback, kubernetes#67250)",
                self.pod, self.update_revision, self.pod
            ),
            StuckReason::BrokenUpdate => write!(
                f,
                "{} is on the update revision {} and not Ready: if the update is broken, \
                 revert the template and then delete {} (reverting alone does not unblock \
                 OrderedReady, kubernetes#67250)",
                self.pod, self.update_revision, self.pod
            ),
        }
    }
}

/// Detects spec 7.1: the plan waits (OrderedReady) on an in-range pod that is Pending, not
/// Ready or not available, and either on neither the update nor the current revision (the
/// broken one after a revert), or on the update revision while an older one is still current.
pub fn forced_rollback(observed: &Observed<'_>, plan: &Plan, now: Now) -> Option<ForcedRollback> {
    let Some(Blocker::Ordered { pod: name, ordinal, wait }) = &plan.waiting_on else { return None };
    if !matches!(wait, PodWait::Pending | PodWait::NotReady | PodWait::NotAvailable { .. }) {
        return None;
    }
    if spec::strategy(observed.set).recreate {
        // Recreate (1.37) is upstream's answer to kubernetes#67250: reverting the template
        // alone deletes every pod off the (reverted) update revision, the stuck one included.
        return None;
    }
    let p = observed_pod(observed, name)?;
    let rev = pod::revision(p);
    if rev == plan.current_revision {
        // On the current revision, the one every earlier rollout left healthy: held by the
        // partition a delete brings the same revision back, and above it the pod is one the
        // rollout has not reached yet (recreated a moment ago, say): an ordinary pod on its way
        // to Ready or an unhealthy one, never the stuck rollout of kubernetes#67250.
        return None;
    }
    let reason = if rev != plan.update_revision {
        StuckReason::OldRevision { pod_revision: rev.to_string() }
    } else if plan.current_revision != plan.update_revision {
        StuckReason::BrokenUpdate
    } else {
        return None;
    };
    let stuck_for_secs =
        p.metadata.creation_timestamp.as_ref().map(|t| now.duration_since(t.0).as_secs());
    Some(ForcedRollback {
        pod: name.clone(),
        ordinal: *ordinal,
        reason,
        update_revision: plan.update_revision.clone(),
        stuck_for_secs,
    })
}

/// What raising (or lowering) the partition to `new_partition` does (spec 7.7 a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionWarning {
    pub from: i32,
    pub to: i32,
    /// Pods below the new partition already on the update revision: they stay updated (a
    /// partition never rolls pods back).
    pub stays_updated: Vec<String>,
    /// Pods that become held (below the new partition, not yet updated).
    pub newly_held: Vec<String>,
}

impl fmt::Display for PartitionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "partition {} → {}", self.from, self.to)?;
        if !self.stays_updated.is_empty() {
            write!(
                f,
                ": {} stay on the update revision (raising the partition never reverts updated \
                 pods; delete them to recreate them at the current revision)",
                self.stays_updated.join(", ")
            )?;
        }
        Ok(())
    }
}

/// The warning for changing the partition to `new_partition`; `None` unless it is raised.
pub fn partition_warning(
    observed: &Observed<'_>,
    plan: &Plan,
    new_partition: i32,
) -> Option<PartitionWarning> {
    let set = observed.set;
    let from = spec::strategy(set).partition;
    if new_partition <= from {
        return None;
    }
    let limit = i64::from(spec::start_ordinal(set)) + i64::from(new_partition);
    let old_limit = i64::from(spec::start_ordinal(set)) + i64::from(from);
    let mut pods: Vec<&Pod> = observed
        .pods
        .iter()
        .copied()
        .filter(|p| {
            is_member_name(spec::name(set), pod::name(p)) && spec::in_range(set, pod::ordinal(p))
        })
        .filter(|p| pod::is_created(p) && i64::from(pod::ordinal(p)) < limit)
        .collect();
    pods.sort_by_key(|p| pod::ordinal(p));
    // With one revision (current = update) every pod is on both: raising reverts nothing and
    // keeps nothing "updated" apart.
    let rolling = plan.current_revision != plan.update_revision;
    let on_update =
        |p: &Pod| rolling && pod::revision(p) == plan.update_revision && !pod::is_terminating(p);
    let stays_updated =
        pods.iter().filter(|p| on_update(p)).map(|p| pod::name(p).to_string()).collect();
    let newly_held = pods
        .iter()
        .filter(|p| !on_update(p) && i64::from(pod::ordinal(p)) >= old_limit)
        .map(|p| pod::name(p).to_string())
        .collect();
    Some(PartitionWarning { from, to: new_partition, stays_updated, newly_held })
}

/// The step about `pod`, if the plan has one (the UI shows it next to the ordinal).
pub fn step_for<'s>(steps: &'s [Step], pod: &str) -> Option<&'s Step> {
    steps.iter().find(|s| s.pod.as_deref() == Some(pod))
}

/// The ordinal a step is about, if it names a pod.
pub fn step_ordinal(s: &Step) -> Option<i32> {
    s.pod.as_deref().map(ordinal_of)
}
