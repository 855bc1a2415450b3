//! Never two controllers: drive mode looks, in every change it sees, for another StatefulSet
//! controller at work on a set it drives — a status written, or a pod of the set created, by
//! another field manager (`kube-controller-manager`'s own controller writes both) — and names
//! it. Before driving, a write in the last [`RECENT_S`] seconds refuses the start; while
//! driving, any such write stops reconciling at once.
//!
//! The managed fields are the evidence: the API server stamps each write with its manager and
//! time, whoever the writer is. Owns: reading them. Must not: write anything.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::backend::Object;
use crate::steer::FIELD_MANAGER;

/// How far back a write by another controller refuses the start.
pub const RECENT_S: i64 = 60;

/// The instant from which another manager's writes count: [`RECENT_S`] before `start`.
pub fn since(start: Timestamp) -> Timestamp {
    start.checked_sub(SignedDuration::from_secs(RECENT_S)).unwrap_or(start)
}

fn foreign(e: &ManagedFieldsEntry, since: Timestamp) -> Option<(&str, Timestamp)> {
    let manager = e.manager.as_deref().filter(|m| *m != FIELD_MANAGER)?;
    let at = e.time.as_ref()?.0;
    (at >= since).then_some((manager, at))
}

/// Another manager's write of the set's status since `since`.
fn status_writer(set: &StatefulSet, since: Timestamp) -> Option<String> {
    let e = set.metadata.managed_fields.iter().flatten().find_map(|e| {
        (e.subresource.as_deref() == Some("status")).then(|| foreign(e, since)).flatten()
    })?;
    let ns = set.metadata.namespace.as_deref().unwrap_or("default");
    let name = set.metadata.name.as_deref().unwrap_or_default();
    Some(format!("{} wrote the status of StatefulSet {ns}/{name} at {}", e.0, e.1))
}

/// Another manager's creation of a pod owned by a driven set since `since`: the entry that
/// set its owner references (a kubelet's status writes and a label edit do not count).
pub fn pod_creator(pod: &Pod, since: Timestamp, drives: &dyn Fn(&str) -> bool) -> Option<String> {
    let owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true) && r.kind == "StatefulSet")?;
    if !drives(&owner.name) {
        return None;
    }
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    if pod.metadata.managed_fields.as_ref().is_none_or(Vec::is_empty) {
        // Every write through a real API server leaves managed fields (ours say `ststui`): a
        // recent pod without any was made by a writer that records none.
        let created = pod.metadata.creation_timestamp.as_ref()?.0;
        return (created >= since).then(|| {
            format!(
                "pod {name} of StatefulSet {} was created at {created} by a writer that \
                 records no managed fields",
                owner.name
            )
        });
    }
    let e = pod.metadata.managed_fields.iter().flatten().find_map(|e| {
        let owns = e.subresource.is_none()
            && e.fields_v1.as_ref().is_some_and(|f| f.0.to_string().contains("f:ownerReferences"));
        owns.then(|| foreign(e, since)).flatten()
    })?;
    Some(format!("{} created pod {name} of StatefulSet {} at {}", e.0, owner.name, e.1))
}

/// Before driving: the newest status write of `set` is another manager's and came at or after
/// the set's last change (its newest write of the main resource). That controller saw the set
/// as it is now, however long ago: its StatefulSet controller is configured, even on a quiet
/// set (kube-controller-manager writes every set's status once it has observed a change).
pub fn configured(set: &StatefulSet) -> Option<String> {
    let entries = set.metadata.managed_fields.as_ref()?;
    let (at, newest) = entries
        .iter()
        .filter(|e| e.subresource.as_deref() == Some("status"))
        .filter_map(|e| Some((e.time.as_ref()?.0, e)))
        .max_by_key(|(t, _)| *t)?;
    let manager = newest.manager.as_deref().filter(|m| *m != FIELD_MANAGER)?;
    let changed = entries
        .iter()
        .filter(|e| e.subresource.is_none())
        .filter_map(|e| e.time.as_ref().map(|t| t.0))
        .max()?;
    let ns = set.metadata.namespace.as_deref().unwrap_or("default");
    let name = set.metadata.name.as_deref().unwrap_or_default();
    (at >= changed).then(|| {
        format!(
            "{manager} wrote the status of StatefulSet {ns}/{name} at {at}, after its last change \
             at {changed}: its StatefulSet controller saw the set as it is"
        )
    })
}

/// The words of a refusal on [`configured`]'s evidence, with the way out when that controller
/// is off now.
pub fn configured_words(evidence: &str, set: &str) -> String {
    format!(
        "will not drive: another StatefulSet controller is configured ({evidence}). Drive only \
         where kube-controller-manager runs without its StatefulSet controller \
         (--controllers=*,-statefulset-controller); if it does now, change the set once (e.g. \
         `kubectl label statefulset {set} ststui.dev/driven-by=ststui --overwrite`) and start \
         again"
    )
}

/// What shows another controller at work in `o`, if anything does.
pub fn other_controller(
    o: &Object,
    since: Timestamp,
    drives: &dyn Fn(&str) -> bool,
) -> Option<String> {
    match o {
        Object::Set(s) if drives(s.metadata.name.as_deref().unwrap_or_default()) => {
            status_writer(s, since)
        }
        Object::Pod(p) => pod_creator(p, since, drives),
        _ => None,
    }
}

/// The words of a refusal or a stop, with what to do.
pub fn words(evidence: &str, driving: bool) -> String {
    let head = if driving { "stopped driving" } else { "will not drive" };
    format!(
        "{head}: another StatefulSet controller is at work ({evidence}). Two controllers would \
         fight over the same pods: drive only where kube-controller-manager runs without its \
         StatefulSet controller (--controllers=*,-statefulset-controller); if it was stopped \
         just now, wait {RECENT_S} s"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        FieldsV1, ObjectMeta, OwnerReference, Time,
    };
    use std::sync::Arc;

    fn entry(manager: &str, sub: Option<&str>, at: Timestamp, fields: &str) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Update".into()),
            subresource: sub.map(Into::into),
            time: Some(Time(at)),
            fields_v1: Some(FieldsV1(serde_json::from_str(fields).unwrap_or_default())),
            ..Default::default()
        }
    }

    fn set_with(entries: Vec<ManagedFieldsEntry>) -> Object {
        Object::Set(Arc::new(StatefulSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                managed_fields: Some(entries),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    fn pod_with(entries: Vec<ManagedFieldsEntry>) -> Object {
        Object::Pod(Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some("web-0".into()),
                namespace: Some("default".into()),
                owner_references: Some(vec![OwnerReference {
                    kind: "StatefulSet".into(),
                    name: "web".into(),
                    controller: Some(true),
                    ..Default::default()
                }]),
                managed_fields: Some(entries),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    #[test]
    fn a_recent_status_write_by_another_manager_is_another_controller() {
        let now = Timestamp::now();
        let all = |_: &str| true;
        let kcm = set_with(vec![entry("kube-controller-manager", Some("status"), now, "{}")]);
        let said = other_controller(&kcm, since(now), &all).unwrap_or_default();
        assert!(
            said.starts_with("kube-controller-manager wrote the status of StatefulSet default/web"),
            "{said}"
        );
        let ours = set_with(vec![entry(FIELD_MANAGER, Some("status"), now, "{}")]);
        assert_eq!(other_controller(&ours, since(now), &all), None);
        let old = now.checked_sub(SignedDuration::from_secs(3600)).unwrap_or(now);
        let long_ago = set_with(vec![entry("kube-controller-manager", Some("status"), old, "{}")]);
        assert_eq!(other_controller(&long_ago, since(now), &all), None, "a write an hour ago");
        let spec = set_with(vec![entry("kubectl-edit", None, now, "{}")]);
        assert_eq!(other_controller(&spec, since(now), &all), None, "a spec edit is no controller");
        assert_eq!(other_controller(&kcm, since(now), &|n| n != "web"), None, "a set not driven");
    }

    #[test]
    fn a_status_written_after_the_last_change_is_a_configured_controller_however_old() {
        let set = |entries| match set_with(entries) {
            Object::Set(s) => s,
            _ => unreachable!(),
        };
        let long_ago = Timestamp::now().checked_sub(SignedDuration::from_secs(86_400)).unwrap();
        let later = long_ago.checked_add(SignedDuration::from_secs(1)).unwrap();
        let quiet = set(vec![
            entry("kubectl-client-side-apply", None, long_ago, "{}"),
            entry("kube-controller-manager", Some("status"), later, "{}"),
        ]);
        let said = configured(&quiet).unwrap_or_default();
        assert!(said.starts_with("kube-controller-manager wrote the status"), "{said}");
        assert!(said.contains("after its last change"), "{said}");
        // Changed since (the way out): that write saw an older set.
        let changed = set(vec![
            entry("kube-controller-manager", Some("status"), long_ago, "{}"),
            entry("kubectl-label", None, later, "{}"),
        ]);
        assert_eq!(configured(&changed), None);
        // Our own status write is the newest: we drove it last.
        let ours = set(vec![
            entry("kubectl-client-side-apply", None, long_ago, "{}"),
            entry("kube-controller-manager", Some("status"), long_ago, "{}"),
            entry(FIELD_MANAGER, Some("status"), later, "{}"),
        ]);
        assert_eq!(configured(&ours), None);
        assert!(configured_words(&said, "web").contains("kubectl label statefulset web"));
    }

    #[test]
    fn a_pod_created_by_another_manager_is_another_controller_but_its_status_is_not() {
        let now = Timestamp::now();
        let all = |_: &str| true;
        let owners = r#"{"f:metadata":{"f:ownerReferences":{}}}"#;
        let kcm = pod_with(vec![entry("kube-controller-manager", None, now, owners)]);
        let said = other_controller(&kcm, since(now), &all).unwrap_or_default();
        assert!(
            said.starts_with("kube-controller-manager created pod web-0 of StatefulSet web"),
            "{said}"
        );
        let kubelet = pod_with(vec![
            entry(FIELD_MANAGER, None, now, owners),
            entry("ststui-kubelet", Some("status"), now, r#"{"f:status":{}}"#),
        ]);
        assert_eq!(other_controller(&kubelet, since(now), &all), None);
    }
}
