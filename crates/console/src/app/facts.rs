//! Small readings of k8s objects the reducer needs to validate an action: a set's replicas,
//! partition, strategy, image, revisions; a pod's revision, readiness, phase.
//!
//! Owns only these pure accessors, with the API defaults applied (replicas 1, RollingUpdate,
//! partition 0, start ordinal 0); where the core has the same reading (`core::spec`,
//! `core::pod`) they delegate to it, so the console and the advisor never disagree. Must not hold
//! state or decide anything.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;

use crate::core::{pod, spec};

/// `spec.replicas` (default 1, never negative).
pub fn replicas(set: &StatefulSet) -> i32 {
    spec::replicas(set)
}

/// `spec.ordinals.start` (default 0).
pub fn start_ordinal(set: &StatefulSet) -> i32 {
    spec::start_ordinal(set)
}

/// Whether `spec.updateStrategy.type` is OnDelete (the default is RollingUpdate).
pub fn on_delete(set: &StatefulSet) -> bool {
    spec::strategy(set).on_delete
}

/// `spec.updateStrategy.rollingUpdate.partition` (default 0).
pub fn partition(set: &StatefulSet) -> i32 {
    spec::strategy(set).partition
}

/// The first container's image in the pod template.
pub fn image(set: &StatefulSet) -> Option<&str> {
    set.spec.template.spec.as_ref()?.containers.first()?.image.as_deref()
}

/// `status.currentRevision`.
pub fn current_revision(set: &StatefulSet) -> Option<&str> {
    set.status.as_ref()?.current_revision.as_deref().filter(|s| !s.is_empty())
}

/// `status.updateRevision`.
pub fn update_revision(set: &StatefulSet) -> Option<&str> {
    set.status.as_ref()?.update_revision.as_deref().filter(|s| !s.is_empty())
}

/// The revision a pod was built from (its `controller-revision-hash` label).
pub fn pod_revision(pod: &Pod) -> Option<&str> {
    Some(pod::revision(pod)).filter(|r| !r.is_empty())
}

/// Whether the pod's Ready condition is True.
pub fn pod_ready(pod: &Pod) -> bool {
    pod::is_ready(pod)
}

/// The pod's phase (`Pending` when unset).
pub fn pod_phase(pod: &Pod) -> &str {
    Some(pod::phase(pod)).filter(|p| !p.is_empty()).unwrap_or("Pending")
}

/// Whether the pod has a deletionTimestamp.
pub fn pod_terminating(pod: &Pod) -> bool {
    pod::is_terminating(pod)
}

/// A pod's state in one word: Terminating, Failed, Succeeded, Ready, Running, Pending.
pub fn pod_word(pod: &Pod) -> &str {
    if pod_terminating(pod) {
        return "Terminating";
    }
    match pod_phase(pod) {
        "Running" if pod_ready(pod) => "Ready",
        other => other,
    }
}

/// The first container's image recorded in a ControllerRevision (its `data` is the template
/// patch `{"spec":{"template":{...}}}`), when it can be read.
pub fn revision_image(rev: &ControllerRevision) -> Option<&str> {
    rev.data.0.pointer("/spec/template/spec/containers/0/image")?.as_str()
}

/// The revision an ordinal is (re)created at, by the core's rule (upstream
/// `newVersionedStatefulSetPod`, including a RollingUpdate without `rollingUpdate`).
pub fn revision_for_ordinal(set: &StatefulSet, ordinal: i32) -> Option<&str> {
    if crate::core::newpod::gets_current_revision(set, i64::from(ordinal)) {
        current_revision(set)
    } else {
        update_revision(set)
    }
}

/// A short revision label: the hash suffix of `<set>-<hash>` (`web-7d9f5c` → `7d9f5c`).
pub fn short_revision(name: &str) -> &str {
    name.rsplit_once('-').map_or(name, |(_, h)| h)
}

/// The set's current and update revision names: the set's status, else the advisor's plan.
pub fn revisions_of<'a>(
    set: &'a StatefulSet,
    plan: Option<&'a crate::core::Plan>,
) -> (&'a str, &'a str) {
    let status = set.status.as_ref();
    let pick = |from_status: Option<&'a String>, from_plan: Option<&'a String>| {
        from_status.filter(|s| !s.is_empty()).or(from_plan).map_or("", String::as_str)
    };
    (
        pick(status.and_then(|s| s.current_revision.as_ref()), plan.map(|p| &p.current_revision)),
        pick(status.and_then(|s| s.update_revision.as_ref()), plan.map(|p| &p.update_revision)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{
        RollingUpdateStatefulSetStrategy, StatefulSetStatus, StatefulSetUpdateStrategy,
    };

    fn set(rolling: Option<RollingUpdateStatefulSetStrategy>) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.spec.replicas = Some(3);
        s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: rolling,
        });
        s.status = Some(StatefulSetStatus {
            current_revision: Some("web-a".into()),
            update_revision: Some("web-b".into()),
            current_replicas: Some(2),
            ..Default::default()
        });
        s
    }

    #[test]
    fn recreation_revision_follows_the_partition_or_the_current_count_when_unset() {
        let partitioned = set(Some(RollingUpdateStatefulSetStrategy {
            partition: Some(1),
            ..Default::default()
        }));
        assert_eq!(revision_for_ordinal(&partitioned, 0), Some("web-a"));
        assert_eq!(revision_for_ordinal(&partitioned, 1), Some("web-b"));
        // No rollingUpdate: below status.currentReplicas (2) a pod comes back at the current one.
        let unset = set(None);
        assert_eq!(revision_for_ordinal(&unset, 1), Some("web-a"));
        assert_eq!(revision_for_ordinal(&unset, 2), Some("web-b"));
    }
}
