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
pub fn revision_image(rev: &ControllerRevision) -> Option<String> {
    let v = &rev.data.0;
    let image = v.pointer("/spec/template/spec/containers/0/image")?;
    image.as_str().map(str::to_string)
}

/// The revision an ordinal is (re)created at: below `start + partition` on RollingUpdate it is
/// the current revision, otherwise the update revision (upstream
/// `newVersionedStatefulSetPod`).
pub fn revision_for_ordinal(set: &StatefulSet, ordinal: i32) -> Option<&str> {
    let held = !on_delete(set) && ordinal < start_ordinal(set).saturating_add(partition(set));
    if held { current_revision(set) } else { update_revision(set) }
}

/// A short revision label: the hash suffix of `<set>-<hash>` (`web-7d9f5c` → `7d9f5c`).
pub fn short_revision(name: &str) -> &str {
    name.rsplit_once('-').map_or(name, |(_, h)| h)
}
