//! Pure invariant checks over a sync's input and output, shared by the tests, the simulator's
//! soak and the property tests: at most one pod per ordinal; OrderedReady never creates or
//! progresses past an unready in-range predecessor; scale-down in descending order; no update
//! deletes below the partition; claims never handed to garbage collection (or lost) under
//! Retain; status counts agree with the pods; Recreate creates nothing while an old-revision
//! pod exists and deletes every old pod at once.
//!
//! Owns: the definitions of these properties. Must not touch: the algorithm itself — checks are
//! written from the spec, not by calling the sync, so they can catch it being wrong.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::labels::{is_member_name, ordinal_of};
use super::options::Semantics;
use super::pod;
use super::spec;
use super::types::{DeleteReason, Effect, Now, Observed, Plan};

/// Which property was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// Two pods (existing or being created) share an ordinal.
    DuplicateOrdinal,
    /// OrderedReady created, repaired, updated or scaled down past an unready predecessor.
    OrderedProgress,
    /// A scale-down delete out of descending order.
    ScaleDownOrder,
    /// A pod below the partition (or under OnDelete) was deleted for update.
    PartitionDeleted,
    /// A claim was given an ownerRef its retention policy does not ask for, or disappeared
    /// under Retain/Retain.
    ClaimRetention,
    /// The computed status disagrees with the pods.
    StatusCounts,
    /// Recreate created a pod while an old-revision pod existed, or left an old pod standing.
    RecreateOrder,
}

/// A broken invariant, with a message saying what was seen and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub kind: ViolationKind,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

fn v(kind: ViolationKind, message: String) -> Violation {
    Violation { kind, message }
}

/// The set's pods as the sync saw them: controlled by the set (by UID) or adopted by the plan,
/// minus those the plan releases.
pub fn set_pods<'a>(observed: &Observed<'a>, plan: &Plan) -> Vec<&'a Pod> {
    let set = observed.set;
    let uid = spec::uid(set);
    let adopted: HashSet<&str> = plan
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::AdoptPod { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let released: HashSet<&str> = plan
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::ReleasePod { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    observed
        .pods
        .iter()
        .copied()
        .filter(|p| p.metadata.namespace.as_deref() == set.metadata.namespace.as_deref())
        .filter(|p| {
            let owned = p
                .metadata
                .owner_references
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|r| r.controller == Some(true) && r.uid == uid && !uid.is_empty());
            (owned || adopted.contains(pod::name(p))) && !released.contains(pod::name(p))
        })
        .collect()
}

/// Every check that needs only the sync's input and its plan, under the sync's semantics. A
/// Recreate sync that still has old-revision pods deletes them all at once, whatever the
/// policy: the ordered and scale-down order checks do not apply to it.
pub fn check_plan(
    observed: &Observed<'_>,
    plan: &Plan,
    now: Now,
    sem: &Semantics,
) -> Vec<Violation> {
    let pods = set_pods(observed, plan);
    let mut out = Vec::new();
    out.extend(check_unique_ordinals(observed.set, &pods, plan));
    let old = recreate_old(observed.set, &pods, plan, sem);
    if old.is_empty() {
        out.extend(check_ordered_ready(observed.set, &pods, plan));
        out.extend(check_scale_down_order(observed.set, &pods, plan));
    }
    out.extend(check_recreate(&old, plan));
    out.extend(check_partition(observed.set, &pods, plan));
    out.extend(check_claim_refs(observed.set, plan));
    out.extend(check_status(observed.set, &pods, plan, now));
    out
}

/// Under a recreating strategy, the set's created pods not on the plan's update revision
/// (empty otherwise, or when the sync resolved no revision).
fn recreate_old<'a>(
    set: &StatefulSet,
    pods: &[&'a Pod],
    plan: &Plan,
    sem: &Semantics,
) -> Vec<&'a Pod> {
    if !spec::strategy(set).recreates(sem) || plan.update_revision.is_empty() {
        return Vec::new();
    }
    let old = |p: &&&Pod| pod::is_created(p) && pod::revision(p) != plan.update_revision;
    pods.iter().filter(old).copied().collect()
}

/// Recreate (spec 3.8): while any of `old` exists nothing is created, and every one of them
/// not yet terminating is deleted in the same sync.
pub fn check_recreate(old: &[&Pod], plan: &Plan) -> Vec<Violation> {
    let Some(first) = old.first() else { return Vec::new() };
    let mut out: Vec<Violation> = created_names(plan)
        .map(|n| {
            v(
                ViolationKind::RecreateOrder,
                format!(
                    "Recreate created {n} while old-revision pod {} exists; expected nothing \
                     created until every old pod is gone",
                    pod::name(first)
                ),
            )
        })
        .collect();
    let deleted: HashSet<&str> = deletes(plan).map(|(n, _)| n).collect();
    for p in old.iter().filter(|p| !pod::is_terminating(p)) {
        if !deleted.contains(pod::name(p)) {
            out.push(v(
                ViolationKind::RecreateOrder,
                format!(
                    "Recreate left old-revision pod {} standing; expected every old pod deleted \
                     in one sync",
                    pod::name(p)
                ),
            ));
        }
    }
    out
}

fn created_names(plan: &Plan) -> impl Iterator<Item = &str> {
    plan.effects.iter().filter_map(|e| match e {
        Effect::CreatePod(p) => Some(pod::name(p)),
        _ => None,
    })
}

fn deletes(plan: &Plan) -> impl Iterator<Item = (&str, DeleteReason)> {
    plan.effects.iter().filter_map(|e| match e {
        Effect::DeletePod { name, reason } => Some((name.as_str(), *reason)),
        _ => None,
    })
}

/// At most one pod per ordinal, counting pods the plan creates.
pub fn check_unique_ordinals(set: &StatefulSet, pods: &[&Pod], plan: &Plan) -> Vec<Violation> {
    let mut by_ordinal: BTreeMap<i32, Vec<&str>> = BTreeMap::new();
    let names = pods.iter().map(|p| pod::name(p)).chain(created_names(plan));
    for name in names.filter(|n| is_member_name(spec::name(set), n)) {
        by_ordinal.entry(ordinal_of(name)).or_default().push(name);
    }
    by_ordinal
        .into_iter()
        .filter(|(o, names)| *o >= 0 && names.len() > 1)
        .map(|(o, names)| {
            v(
                ViolationKind::DuplicateOrdinal,
                format!(
                    "ordinal {o} has {} pods ({}); expected at most one",
                    names.len(),
                    names.join(", ")
                ),
            )
        })
        .collect()
}

/// OrderedReady: a pod is created or repaired only when every lower in-range pod is Running,
/// Ready and not terminating; update and scale-down deletes only when all in-range pods are.
pub fn check_ordered_ready(set: &StatefulSet, pods: &[&Pod], plan: &Plan) -> Vec<Violation> {
    if spec::is_parallel(set) || set.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    let healthy: BTreeMap<i32, bool> = pods
        .iter()
        .filter(|p| spec::in_range(set, pod::ordinal(p)))
        .map(|p| (pod::ordinal(p), pod::is_running_and_ready(p) && !pod::is_terminating(p)))
        .collect();
    let start = i64::from(spec::start_ordinal(set));
    let first_unhealthy = (start..=spec::end_ordinal(set))
        .find(|o| !i32::try_from(*o).is_ok_and(|o| healthy.get(&o).copied().unwrap_or(false)));
    let mut out = Vec::new();
    let touched = plan.effects.iter().filter_map(|e| match e {
        Effect::CreatePod(p) => Some(("creates", pod::name(p))),
        Effect::UpdatePod(p) => Some(("updates", pod::name(p))),
        Effect::DeletePod { name, reason: DeleteReason::ScaleDown | DeleteReason::Update } => {
            Some(("deletes", name.as_str()))
        }
        _ => None,
    });
    for (verb, name) in touched {
        let o = ordinal_of(name);
        let limit = if verb == "deletes" || !spec::in_range(set, o) {
            spec::end_ordinal(set) + 1
        } else {
            i64::from(o)
        };
        if let Some(bad) = first_unhealthy.filter(|f| *f < limit) {
            out.push(v(
                ViolationKind::OrderedProgress,
                format!(
                    "OrderedReady sync {verb} {name} while ordinal {bad} is not Running and Ready; \
                     expected it to wait for {}-{bad}",
                    spec::name(set)
                ),
            ));
        }
    }
    out
}

/// Scale-down deletes come in descending ordinal order; OrderedReady deletes at most one and
/// only when no higher condemned pod remains.
pub fn check_scale_down_order(set: &StatefulSet, pods: &[&Pod], plan: &Plan) -> Vec<Violation> {
    let deleted: Vec<i32> = deletes(plan)
        .filter(|(_, r)| *r == DeleteReason::ScaleDown)
        .map(|(n, _)| ordinal_of(n))
        .collect();
    let mut out = Vec::new();
    if deleted.windows(2).any(|w| w[0] <= w[1]) {
        out.push(v(
            ViolationKind::ScaleDownOrder,
            format!("scale-down deleted ordinals {deleted:?}; expected strictly descending order"),
        ));
    }
    if !spec::is_parallel(set) {
        if deleted.len() > 1 {
            out.push(v(
                ViolationKind::ScaleDownOrder,
                format!("OrderedReady deleted {deleted:?} in one sync; expected one pod per sync"),
            ));
        }
        for o in &deleted {
            let higher =
                pods.iter().map(|p| pod::ordinal(p)).filter(|h| h > o && !spec::in_range(set, *h));
            if let Some(h) = higher.max() {
                out.push(v(
                    ViolationKind::ScaleDownOrder,
                    format!(
                        "OrderedReady deleted ordinal {o} while condemned ordinal {h} still \
                         exists; expected highest first"
                    ),
                ));
            }
        }
    }
    out
}

/// Update deletes only under RollingUpdate and only at or above `start + partition`.
pub fn check_partition(set: &StatefulSet, pods: &[&Pod], plan: &Plan) -> Vec<Violation> {
    let st = spec::strategy(set);
    let limit = spec::start_ordinal(set).saturating_add(st.partition.max(0));
    let exists: HashSet<&str> = pods.iter().map(|p| pod::name(p)).collect();
    deletes(plan)
        .filter(|(_, r)| *r == DeleteReason::Update)
        .filter(|(n, _)| st.on_delete || (ordinal_of(n) < limit && exists.contains(n)))
        .map(|(n, _)| {
            v(
                ViolationKind::PartitionDeleted,
                format!(
                    "{n} was deleted for update; expected no update deletes {}",
                    if st.on_delete {
                        "under OnDelete".to_string()
                    } else {
                        format!("below ordinal {limit} (partition {})", st.partition)
                    }
                ),
            )
        })
        .collect()
}

/// Claim writes follow the retention policy: no pod ownerRef under whenScaled=Retain, no set
/// ownerRef under whenDeleted=Retain.
pub fn check_claim_refs(set: &StatefulSet, plan: &Plan) -> Vec<Violation> {
    let policy = spec::retention(set);
    let (set_name, uid) = (spec::name(set), spec::uid(set));
    let mut out = Vec::new();
    for e in &plan.effects {
        let c = match e {
            Effect::CreateClaim(c) | Effect::UpdateClaim(c) => c,
            _ => continue,
        };
        for r in c.metadata.owner_references.as_deref().unwrap_or_default() {
            let ours_set = r.kind == "StatefulSet" && r.name == set_name && r.uid == uid;
            let ours_pod = r.kind == "Pod" && is_member_name(set_name, &r.name);
            if (ours_set && !policy.when_deleted_delete) || (ours_pod && !policy.when_scaled_delete)
            {
                out.push(v(
                    ViolationKind::ClaimRetention,
                    format!(
                        "claim {} gets an ownerRef to {} {}; the retention policy keeps it \
                         (expected no such ref)",
                        c.metadata.name.as_deref().unwrap_or_default(),
                        r.kind,
                        r.name
                    ),
                ));
            }
        }
    }
    out
}

/// Whether the garbage collector may take `claim` whatever the set's policy is now: it still
/// carries an ownerRef (written while the policy said Delete, or by someone else). Under
/// Retain/Retain the controller drops its refs at its next sync ([`ViolationKind::ClaimRetention`]
/// checks the refs after every sync); a pod deleted before that sync takes such a claim with
/// it, in the simulator as on a cluster.
pub fn collectable(claim: &PersistentVolumeClaim) -> bool {
    claim.metadata.owner_references.as_ref().is_some_and(|r| !r.is_empty())
}

/// Between two observations under Retain/Retain, no claim of the set's templates may vanish
/// unless it was [`collectable`].
pub fn check_claims_kept(
    set: &StatefulSet,
    before: &[&PersistentVolumeClaim],
    after: &[&PersistentVolumeClaim],
) -> Vec<Violation> {
    if !spec::retention(set).is_retain_retain() {
        return Vec::new();
    }
    let templates: Vec<&str> =
        spec::claim_templates(set).iter().filter_map(|t| t.metadata.name.as_deref()).collect();
    let ours = |c: &PersistentVolumeClaim| {
        let name = c.metadata.name.as_deref().unwrap_or_default();
        templates.iter().any(|t| crate::core::labels::claim_pod(name, t, spec::name(set)).is_some())
    };
    let after_names: HashSet<&str> =
        after.iter().filter_map(|c| c.metadata.name.as_deref()).collect();
    before
        .iter()
        .filter(|c| ours(c) && !collectable(c))
        .filter_map(|c| c.metadata.name.as_deref())
        .filter(|n| !after_names.contains(n))
        .map(|n| {
            v(
                ViolationKind::ClaimRetention,
                format!("claim {n} disappeared under Retain/Retain; expected it to be kept"),
            )
        })
        .collect()
}

/// The computed status counts the set's pods with a valid ordinal (all claimed pods when the
/// set is being deleted): replicas, ready, available, updated; current matches its pods minus
/// this sync's update deletes, or equals updated once the completion rule (2.9) fired.
pub fn check_status(set: &StatefulSet, pods: &[&Pod], plan: &Plan, now: Now) -> Vec<Violation> {
    if plan.error.is_some() || plan.update_revision.is_empty() {
        return Vec::new();
    }
    let deleting = set.metadata.deletion_timestamp.is_some();
    let counted: Vec<&Pod> =
        pods.iter().copied().filter(|p| deleting || pod::ordinal(p) >= 0).collect();
    let mrs = plan.min_ready;
    let count = |f: &dyn Fn(&Pod) -> bool| {
        i32::try_from(counted.iter().filter(|p| f(p)).count()).unwrap_or(i32::MAX)
    };
    let with_rev = |r: &str| {
        count(&|p| pod::is_created(p) && !pod::is_terminating(p) && pod::revision(p) == r)
    };
    let s = &plan.status;
    let mut out = Vec::new();
    let mut expect = |field: &str, got: i32, want: i32| {
        if got != want {
            let msg = format!("status.{field} is {got}; the pods say {want}");
            out.push(v(ViolationKind::StatusCounts, msg));
        }
    };
    expect("replicas", s.replicas, count(&pod::is_created));
    expect("readyReplicas", s.ready_replicas.unwrap_or(0), count(&pod::is_running_and_ready));
    let available = count(&|p| pod::is_running_and_available(p, mrs, now));
    expect("availableReplicas", s.available_replicas.unwrap_or(0), available);
    expect("updatedReplicas", s.updated_replicas.unwrap_or(0), with_rev(&plan.update_revision));
    let update_deletes = deletes(plan).filter(|(_, r)| *r == DeleteReason::Update).count();
    let before = with_rev(&plan.current_revision) - i32::try_from(update_deletes).unwrap_or(0);
    let replicas = spec::replicas(set);
    let completed = s.current_revision.as_deref() == Some(plan.update_revision.as_str())
        && s.updated_replicas.unwrap_or(0) == replicas
        && s.ready_replicas.unwrap_or(0) == replicas
        && s.replicas == replicas;
    let got_current = s.current_replicas.unwrap_or(0);
    if !(completed && got_current == s.updated_replicas.unwrap_or(0)) {
        expect("currentReplicas", got_current, before);
    }
    if !completed && s.current_revision.as_deref() != Some(plan.current_revision.as_str()) {
        out.push(v(
            ViolationKind::StatusCounts,
            format!(
                "status.currentRevision is {:?} although the update is not complete; expected {}",
                s.current_revision, plan.current_revision
            ),
        ));
    }
    out
}
