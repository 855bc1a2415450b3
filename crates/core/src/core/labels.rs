//! Label and annotation keys the controller reads and writes, and pod-name parsing
//! (spec 1.3 and 2.8). Pure string work shared by claiming, the sync and the explanations.

/// `apps.StatefulSetRevisionLabel`: the full revision *name* the pod was built from.
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// `apps.StatefulSetPodNameLabel`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `apps.PodIndexLabel` (GA 1.32).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// `ControllerRevisionHashLabel` on ControllerRevisions.
pub const REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// Set by `kubectl rollout restart` on the pod template.
pub const RESTARTED_AT_ANNOTATION: &str = "kubectl.kubernetes.io/restartedAt";

/// Splits a pod name as upstream's `^(.*)-([0-9]+)$` does: the parent (everything before the
/// last `-`) and the ordinal. The ordinal is `-1` when the digits do not fit an int32
/// (upstream's parse failure); `None` when the name does not match at all.
#[doc(alias = "getParentNameAndOrdinal")]
pub fn parent_and_ordinal(name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, digits.parse::<i32>().unwrap_or(-1)))
}

/// The pod's ordinal, or `-1` when the name does not parse (upstream `getOrdinal`).
#[doc(alias = "getOrdinal")]
pub fn ordinal_of(name: &str) -> i32 {
    parent_and_ordinal(name).map_or(-1, |(_, o)| o)
}

/// Whether `pod_name` names a pod of set `set_name` (upstream `isMemberOf`, the name half).
#[doc(alias = "isMemberOf")]
pub fn is_member_name(set_name: &str, pod_name: &str) -> bool {
    parent_and_ordinal(pod_name).is_some_and(|(parent, _)| parent == set_name)
}

/// The pod part (`<set>-<ordinal>`) of claim `claim_name` when it is `<template>-<pod>` for a
/// pod of set `set_name`: the inverse of [`claim_name`].
pub fn claim_pod<'c>(claim_name: &'c str, template: &str, set_name: &str) -> Option<&'c str> {
    let pod = claim_name.strip_prefix(template)?.strip_prefix('-')?;
    is_member_name(set_name, pod).then_some(pod)
}

/// `<set>-<ordinal>` (upstream `getPodName`).
#[doc(alias = "getPodName")]
pub fn pod_name(set_name: &str, ordinal: i32) -> String {
    format!("{set_name}-{ordinal}")
}

/// `<template>-<set>-<ordinal>` (upstream `getPersistentVolumeClaimName`).
#[doc(alias = "getPersistentVolumeClaimName")]
pub fn claim_name(template: &str, set_name: &str, ordinal: i32) -> String {
    format!("{template}-{set_name}-{ordinal}")
}

/// The pods of set `set_name` (uid `set_uid`) among `pods`, in ordinal order, terminating ones
/// included: pods named `<set>-<n>` that the set controls or that nobody controls (what a
/// scenario's `expect pods=` lists).
pub fn members<'a>(
    set_name: &str,
    set_uid: Option<&str>,
    pods: impl Iterator<Item = &'a k8s_openapi::api::core::v1::Pod>,
) -> Vec<&'a k8s_openapi::api::core::v1::Pod> {
    // Each name parsed once: sorting on a key made per comparison (a name parsed and copied)
    // cost milliseconds at 10,000 pods, on every state change of the console.
    let mut keyed: Vec<(i32, &str, &k8s_openapi::api::core::v1::Pod)> = pods
        .filter_map(|p| {
            let name = p.metadata.name.as_deref().unwrap_or_default();
            let (parent, ordinal) = parent_and_ordinal(name)?;
            let ctrl =
                p.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true));
            let ours = parent == set_name && ctrl.is_none_or(|r| Some(r.uid.as_str()) == set_uid);
            ours.then_some((ordinal, name, p))
        })
        .collect();
    keyed.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    keyed.into_iter().map(|(_, _, p)| p).collect()
}

/// The claims of a set with claim templates `templates` among `claims`
/// (`<template>-<set>-<n>`), by template then ordinal (what `expect claims=` lists).
pub fn member_claims<'a>(
    set_name: &str,
    templates: &[String],
    claims: impl Iterator<Item = &'a k8s_openapi::api::core::v1::PersistentVolumeClaim>,
) -> Vec<&'a k8s_openapi::api::core::v1::PersistentVolumeClaim> {
    let mut out = Vec::new();
    for c in claims {
        let name = c.metadata.name.as_deref().unwrap_or_default();
        for (i, t) in templates.iter().enumerate() {
            if let Some(pod) = claim_pod(name, t, set_name) {
                out.push((i, ordinal_of(pod), c));
            }
        }
    }
    out.sort_by_key(|(i, o, _)| (*i, *o));
    out.into_iter().map(|(_, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_upstream_regex() {
        assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
        assert_eq!(parent_and_ordinal("my-web-12"), Some(("my-web", 12)));
        // Greedy `(.*)`: the last dash splits.
        assert_eq!(parent_and_ordinal("web-1-2"), Some(("web-1", 2)));
        assert_eq!(parent_and_ordinal("web-"), None);
        assert_eq!(parent_and_ordinal("web-a"), None);
        assert_eq!(parent_and_ordinal("web"), None);
        assert_eq!(parent_and_ordinal("-3"), Some(("", 3)));
        // Digits that overflow int32 match the regex but the ordinal is -1.
        assert_eq!(parent_and_ordinal("web-99999999999"), Some(("web", -1)));
        assert_eq!(ordinal_of("web-x"), -1);
        assert!(is_member_name("web", "web-3"));
        assert!(!is_member_name("web", "webx-3"));
        assert!(!is_member_name("web", "web-3-x"));
        assert_eq!(claim_name("data", "web", 2), "data-web-2");
    }
}
