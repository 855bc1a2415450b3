//! Which member a shared watch's object is, and what the picker's watch tells a group.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use super::*;

fn labels(kv: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

fn set(name: &str, claims: bool) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            selector: LabelSelector {
                match_labels: labels(&[("app", "db"), ("zone", &name[name.len() - 1..])]),
                ..Default::default()
            },
            volume_claim_templates: claims.then(|| vec![Default::default()]),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn meta(name: &str, l: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        labels: labels(l),
        ..Default::default()
    }
}

fn shown(names: &[&str]) -> Vec<Shown> {
    names
        .iter()
        .map(|n| (ObjRef::new("default", *n), Arc::new(Mutex::new(Tracker::named(n)))))
        .collect()
}

/// `db-a` (claims) and `db-b` shown; `db-c` not there.
fn members() -> Members {
    let wanted =
        [Some(Wanted::of(&set("db-a", true))), Some(Wanted::of(&set("db-b", false))), None];
    Members::of(&shown(&["db-a", "db-b", "db-c"]), &wanted)
}

#[test]
fn a_pod_is_the_member_it_is_named_after_and_selected_by() {
    let m = members();
    assert_eq!(m.0.len(), 2, "the member that is not there has no objects");
    let pod = |name: &str, zone: &str| Pod {
        metadata: meta(name, &[("app", "db"), ("zone", zone)]),
        ..Default::default()
    };
    assert_eq!(m.pod(&pod("db-a-0", "a")), Some(0));
    assert_eq!(m.pod(&pod("db-b-3", "b")), Some(1));
    // Named after a member but not selected by it (another controller's), or selected but named
    // after a set outside the group (`db-a-x-0`: its parent is db-a-x), or no ordinal.
    assert_eq!(m.pod(&pod("db-a-0", "b")), None);
    assert_eq!(m.pod(&pod("db-a-x-0", "a")), None);
    assert_eq!(m.pod(&pod("db-a", "a")), None);
    assert_eq!(m.pod(&pod("db-c-0", "c")), None);
}

#[test]
fn a_revision_is_its_owners_and_a_claim_a_member_with_templates() {
    let m = members();
    let mut r = ControllerRevision {
        metadata: meta("db-b-7d9c5b8f4", &[("app", "db"), ("zone", "b")]),
        ..Default::default()
    };
    assert_eq!(m.revision(&r), Some(1), "no owner: named after and selected by db-b");
    r.metadata.owner_references = Some(vec![OwnerReference {
        kind: "StatefulSet".into(),
        name: "db-a".into(),
        controller: Some(true),
        ..Default::default()
    }]);
    assert_eq!(m.revision(&r), Some(0), "its controller says whose it is");
    r.metadata.owner_references.as_mut().unwrap()[0].name = "other".into();
    assert_eq!(m.revision(&r), None);
    let claim = |zone: &str| PersistentVolumeClaim {
        metadata: meta("data-db-x-0", &[("app", "db"), ("zone", zone)]),
        ..Default::default()
    };
    assert!(m.claim(&claim("a")));
    assert!(!m.claim(&claim("b")), "db-b has no claim templates");
}

#[test]
fn an_event_is_about_the_member_it_names() {
    let m = members();
    let event = |kind: &str, name: &str| KubeEvent {
        involved_object: k8s_openapi::api::core::v1::ObjectReference {
            kind: Some(kind.into()),
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(m.about(&event("StatefulSet", "db-b"), "StatefulSet"), Some(1));
    assert_eq!(m.about(&event("StatefulSet", "db-c"), "StatefulSet"), None);
    assert_eq!(m.about(&event("Pod", "db-a-2"), "Pod"), Some(0));
    assert_eq!(m.about(&event("Pod", "db-a-2"), "StatefulSet"), None);
    let events = [event("Pod", "db-b-0"), event("Pod", "zz-0")];
    let split = m.split(&events, |e| m.about(e, "Pod"));
    assert_eq!(split.iter().map(Vec::len).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn the_hub_publishes_what_sets_are_watched_by_only_when_it_changes() {
    let hub = Hub::default();
    let mut rx = hub.subscribe();
    assert!(rx.borrow_and_update().is_none(), "nothing known before the first listing");
    hub.show(shown(&["db-a"]));
    let (a, b) = (set("db-a", true), set("db-b", false));
    let lines = hub.seen(Seen::Listed(&[a.clone(), b.clone()]));
    assert!(rx.has_changed().unwrap());
    assert_eq!(rx.borrow_and_update().as_ref().map(BTreeMap::len), Some(2));
    assert!(lines.is_empty(), "a set with no status says nothing yet");
    // A status change alone: the shown member's tracker hears it, nothing is republished.
    let mut moved = a.clone();
    moved.status = Some(Default::default());
    let lines = hub.seen(Seen::Applied(&moved));
    assert_eq!(lines.len(), 1, "db-a's status line");
    assert!(!rx.has_changed().unwrap(), "its selector did not change");
    assert!(hub.seen(Seen::Applied(&b)).is_empty(), "db-b is not shown");
    hub.seen(Seen::Deleted(&b));
    assert!(rx.has_changed().unwrap());
    assert!(
        !rx.borrow_and_update().as_ref().unwrap().contains_key(&ObjRef::new("default", "db-b"))
    );
    // Sets that may not be listed: known as none.
    let hub = Hub::default();
    let rx = hub.subscribe();
    hub.unreadable();
    assert_eq!(rx.borrow().as_ref().map(BTreeMap::len), Some(0));
}
