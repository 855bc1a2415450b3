//! API validation beyond the StatefulSet spec (`validate`): status writes (upstream
//! `ValidateStatefulSetStatus[Update]`: a status the real API server refuses, such as a negative
//! count, is refused here too), immutable fields of the other kinds, and the metadata rules every
//! object shares.
//!
//! Owns: these rules and their messages. Must not: touch the store.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::validate::{FieldError, ValidationError, dns1123_label, finish_kind, validate_labels};

const NONNEGATIVE: &str = "must be greater than or equal to 0";

/// A StatefulSet status write (upstream `ValidateStatefulSetStatusUpdate`).
#[doc(alias = "ValidateStatefulSetStatusUpdate")]
pub fn set_status(
    name: &str,
    old: Option<&StatefulSetStatus>,
    new: &StatefulSetStatus,
) -> Result<(), ValidationError> {
    let mut errs = Vec::new();
    let counts = [
        ("status.replicas", new.replicas),
        ("status.readyReplicas", new.ready_replicas.unwrap_or(0)),
        ("status.currentReplicas", new.current_replicas.unwrap_or(0)),
        ("status.updatedReplicas", new.updated_replicas.unwrap_or(0)),
        ("status.availableReplicas", new.available_replicas.unwrap_or(0)),
    ];
    for (field, v) in counts {
        if v < 0 {
            errs.push(FieldError::invalid(field, json!(v), NONNEGATIVE));
        }
    }
    if let Some(g) = new.observed_generation.filter(|g| *g < 0) {
        errs.push(FieldError::invalid("status.observedGeneration", json!(g), NONNEGATIVE));
    }
    if let Some(c) = new.collision_count.filter(|c| *c < 0) {
        errs.push(FieldError::invalid("status.collisionCount", json!(c), NONNEGATIVE));
    }
    let over = "cannot be greater than status.replicas";
    for (field, v) in &counts[1..] {
        if *v > new.replicas {
            errs.push(FieldError::invalid(field, json!(v), over));
        }
    }
    let (ready, available) = (counts[1].1, counts[4].1);
    if available > ready {
        errs.push(FieldError::invalid(
            "status.availableReplicas",
            json!(available),
            "cannot be greater than status.readyReplicas",
        ));
    }
    if let (Some(before), Some(now)) = (old.and_then(|o| o.collision_count), new.collision_count)
        && now < before
    {
        errs.push(FieldError::invalid("status.collisionCount", json!(now), "cannot be decreased"));
    }
    finish_kind("StatefulSet.apps", name, errs)
}

/// The metadata every created object needs: a DNS-1123 name (subdomain rules, 253 characters)
/// and valid labels (upstream `ValidateObjectMeta`).
pub fn object_meta(kind: &'static str, meta: &ObjectMeta) -> Result<(), ValidationError> {
    let name = meta.name.clone().unwrap_or_default();
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required("metadata.name", "name or generateName is required"));
    } else if name.len() > 253 || name.split('.').any(|part| !dns1123_label(part).is_empty()) {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character",
        ));
    }
    if let Some(labels) = &meta.labels {
        errs.extend(validate_labels("metadata.labels", labels));
    }
    finish_kind(kind, &name, errs)
}

/// A pod update: its spec is immutable but for container images and a few scheduling fields
/// (upstream `ValidatePodUpdate`).
pub fn pod_update(old: &Pod, new: &Pod) -> Result<(), ValidationError> {
    let name = new.metadata.name.clone().unwrap_or_default();
    let (Some(a), Some(b)) = (&old.spec, &new.spec) else { return Ok(()) };
    let mut a = a.clone();
    for (ca, cb) in a.containers.iter_mut().zip(&b.containers) {
        ca.image.clone_from(&cb.image);
    }
    a.active_deadline_seconds = b.active_deadline_seconds;
    a.tolerations.clone_from(&b.tolerations);
    if a.node_name.is_none() {
        a.node_name.clone_from(&b.node_name);
    }
    let mut errs = Vec::new();
    if a != *b {
        errs.push(FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`, \
             `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` \
             (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds`",
        ));
    }
    finish_kind("Pod", &name, errs)
}

/// A ControllerRevision update: its data is immutable.
pub fn revision_update(
    old: &ControllerRevision,
    new: &ControllerRevision,
) -> Result<(), ValidationError> {
    let name = new.metadata.name.clone().unwrap_or_default();
    let mut errs = Vec::new();
    if old.data != new.data {
        errs.push(FieldError::invalid("data", json!("{…}"), "field is immutable"));
    }
    finish_kind("ControllerRevision.apps", &name, errs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_the_api_server_refuses_is_refused_with_its_message() {
        let ok = StatefulSetStatus {
            replicas: 3,
            ready_replicas: Some(2),
            available_replicas: Some(2),
            ..Default::default()
        };
        assert!(set_status("web", None, &ok).is_ok());
        let negative =
            StatefulSetStatus { replicas: 3, current_replicas: Some(-1), ..Default::default() };
        assert_eq!(
            set_status("web", None, &negative).unwrap_err().to_string(),
            "StatefulSet.apps \"web\" is invalid: status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let over = StatefulSetStatus {
            replicas: 2,
            ready_replicas: Some(3),
            available_replicas: Some(3),
            ..Default::default()
        };
        let msg = set_status("web", None, &over).unwrap_err().to_string();
        assert!(
            msg.contains(
                "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"
            ),
            "{msg}"
        );
        let before = StatefulSetStatus { collision_count: Some(2), ..Default::default() };
        let after = StatefulSetStatus { collision_count: Some(1), ..Default::default() };
        assert!(
            set_status("web", Some(&before), &after)
                .unwrap_err()
                .to_string()
                .contains("cannot be decreased")
        );
    }
}
