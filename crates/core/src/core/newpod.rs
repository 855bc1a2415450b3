//! New pods and pod identity (spec 3.5 and 3.3 e): which revision a placeholder gets, how a pod
//! is built from a set's template, and the identity/storage checks and repairs.
//!
//! Owns: `newVersionedStatefulSetPod`, `newStatefulSetPod`, `identityMatches`,
//! `storageMatches`, `updateIdentity`, `updateStorage`. Must not touch: claims in the store or
//! effects; it only builds and edits pod objects.
//!
//! Upstream detail: `updateStorage` iterates a Go map, so the order of several claim volumes is
//! not stable upstream. Here claim volumes come in `volumeClaimTemplates` order (deterministic),
//! followed by the template's other volumes.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaimVolumeSource, Pod, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::labels::{POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL, parent_and_ordinal};
use super::pod;
use super::spec;

/// The controller ownerRef to the set (`metav1.NewControllerRef(set, controllerKind)`).
pub fn set_controller_ref(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: spec::name(set).into(),
        uid: spec::uid(set).into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The pod for `ordinal` at the revision spec 3.5 chooses: the current revision (built from
/// `current_set`) when `(type == RollingUpdate && rollingUpdate == nil && ordinal < start +
/// currentSet.status.currentReplicas) || (rollingUpdate != nil && ordinal < start + partition)`,
/// else the update revision (built from `update_set`). The `(A && B) || C` grouping is
/// upstream's exactly, and the partition is an offset from `start`.
#[doc(alias = "newVersionedStatefulSetPod")]
pub fn new_versioned_pod(
    current_set: &StatefulSet,
    update_set: &StatefulSet,
    current_revision: &str,
    update_revision: &str,
    ordinal: i64,
) -> Pod {
    if gets_current_revision(current_set, ordinal) {
        let mut p = new_pod(current_set, ordinal);
        set_revision(&mut p, current_revision);
        p
    } else {
        let mut p = new_pod(update_set, ordinal);
        set_revision(&mut p, update_revision);
        p
    }
}

/// The 3.5 revision rule on its own: whether a new pod at `ordinal` is built from the current
/// revision.
pub fn gets_current_revision(current_set: &StatefulSet, ordinal: i64) -> bool {
    let st = spec::strategy(current_set);
    let start = i64::from(spec::start_ordinal(current_set));
    let current_replicas =
        current_set.status.as_ref().and_then(|s| s.current_replicas).map_or(0, i64::from);
    (st.rolling && !st.has_rolling_block && ordinal < start + current_replicas)
        || st.holds(spec::start_ordinal(current_set), ordinal)
}

/// A pod from the set's template with its identity and storage (upstream `newStatefulSetPod`,
/// `controller.GetPodFromTemplate` + `initIdentity` + `updateStorage`).
#[doc(alias = "newStatefulSetPod")]
pub fn new_pod(set: &StatefulSet, ordinal: i64) -> Pod {
    let template = Some(&set.spec.template);
    let tmeta = template.and_then(|t| t.metadata.as_ref());
    let set_name = spec::name(set);
    let name = format!("{set_name}-{ordinal}");
    let mut p = Pod {
        metadata: ObjectMeta {
            labels: tmeta.and_then(|m| m.labels.clone()),
            annotations: tmeta.and_then(|m| m.annotations.clone()),
            finalizers: tmeta.and_then(|m| m.finalizers.clone()),
            generate_name: Some(format!("{set_name}-")),
            owner_references: Some(vec![set_controller_ref(set)]),
            name: Some(name.clone()),
            ..Default::default()
        },
        spec: template.and_then(|t| t.spec.clone()),
        status: None,
    };
    update_identity(set, &mut p);
    let pod_spec = p.spec.get_or_insert_with(Default::default);
    pod_spec.hostname.clone_from(&p.metadata.name);
    pod_spec.subdomain = set.spec.service_name.clone();
    update_storage(set, &mut p);
    p
}

/// Sets the `controller-revision-hash` label (upstream `setPodRevision`).
#[doc(alias = "setPodRevision")]
pub fn set_revision(pod: &mut Pod, revision: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(REVISION_LABEL.into(), revision.into());
}

/// Whether `name` is exactly `<set>-<ordinal>` (no leading zeros), without allocating.
pub fn is_canonical_name(set_name: &str, name: &str) -> bool {
    match parent_and_ordinal(name) {
        Some((parent, ord)) if ord >= 0 && parent == set_name => {
            let digits = &name[parent.len() + 1..];
            digits == "0" || !digits.starts_with('0')
        }
        _ => false,
    }
}

/// Name, namespace and the pod-name label conform to the set (upstream `identityMatches`).
/// Hostname, subdomain and the pod-index label are not checked.
#[doc(alias = "identityMatches")]
pub fn identity_matches(set: &StatefulSet, p: &Pod) -> bool {
    let name = pod::name(p);
    is_canonical_name(spec::name(set), name)
        && p.metadata.namespace.as_deref().unwrap_or_default() == spec::namespace(set)
        && p.metadata.labels.as_ref().and_then(|l| l.get(POD_NAME_LABEL)).map(String::as_str)
            == Some(name)
}

/// Whether `claim_name` is `<template>-<set>-<ordinal>`, without allocating.
pub fn is_claim_name(claim_name: &str, template: &str, set_name: &str, ordinal: i32) -> bool {
    let Some(rest) = claim_name.strip_prefix(template).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let Some(digits) = rest.strip_prefix(set_name).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    digits.parse::<i32>().ok() == Some(ordinal)
        && (digits == "0" || !digits.starts_with('0'))
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Every claim template has a volume of its name pointing at `<template>-<set>-<ordinal>`
/// (upstream `storageMatches`).
#[doc(alias = "storageMatches")]
pub fn storage_matches(set: &StatefulSet, p: &Pod) -> bool {
    let ordinal = pod::ordinal(p);
    if ordinal < 0 {
        return false;
    }
    let volumes = p.spec.as_ref().and_then(|s| s.volumes.as_deref()).unwrap_or_default();
    let set_name = spec::name(set);
    spec::claim_templates(set).iter().all(|t| {
        let tname = t.metadata.name.as_deref().unwrap_or_default();
        volumes.iter().find(|v| v.name == tname).is_some_and(|v| {
            v.persistent_volume_claim
                .as_ref()
                .is_some_and(|c| is_claim_name(&c.claim_name, tname, set_name, ordinal))
        })
    })
}

/// Sets name, namespace and the pod-name and pod-index labels (upstream `updateIdentity`).
#[doc(alias = "updateIdentity")]
pub fn update_identity(set: &StatefulSet, p: &mut Pod) {
    let ordinal = pod::ordinal(p);
    let name = format!("{}-{ordinal}", spec::name(set));
    p.metadata.namespace = Some(spec::namespace(set).into());
    let labels = p.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    p.metadata.name = Some(name);
}

/// Rewrites the claim-template volumes and keeps the others after them (upstream
/// `updateStorage`).
#[doc(alias = "updateStorage")]
pub fn update_storage(set: &StatefulSet, p: &mut Pod) {
    let templates = spec::claim_templates(set);
    if templates.is_empty() {
        return;
    }
    let ordinal = pod::ordinal(p);
    let set_name = spec::name(set);
    let pod_spec = p.spec.get_or_insert_with(Default::default);
    let current = pod_spec.volumes.take().unwrap_or_default();
    let mut volumes: Vec<Volume> = templates
        .iter()
        .map(|t| {
            let tname = t.metadata.name.clone().unwrap_or_default();
            Volume {
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: format!("{tname}-{set_name}-{ordinal}"),
                    read_only: Some(false),
                }),
                name: tname,
                ..Default::default()
            }
        })
        .collect();
    let is_template =
        |n: &str| templates.iter().any(|t| t.metadata.name.as_deref().unwrap_or_default() == n);
    volumes.extend(current.into_iter().filter(|v| !is_template(&v.name)));
    pod_spec.volumes = Some(volumes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_reject_leading_zeros() {
        assert!(is_canonical_name("web", "web-0"));
        assert!(is_canonical_name("web", "web-10"));
        assert!(!is_canonical_name("web", "web-01"));
        assert!(!is_canonical_name("web", "webx-1"));
        assert!(is_claim_name("data-web-3", "data", "web", 3));
        assert!(!is_claim_name("data-web-03", "data", "web", 3));
        assert!(!is_claim_name("data-web-3", "data", "web", 4));
        assert!(!is_claim_name("data-web-3", "dat", "web", 3));
    }
}
