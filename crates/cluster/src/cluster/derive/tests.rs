use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{
    Event as KubeEvent, ObjectReference, Pod, PodCondition, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use super::*;

fn pod(name: &str, uid: &str, rev: &str, phase: &str, ready: bool) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            uid: Some(uid.into()),
            labels: Some([("controller-revision-hash".to_string(), rev.to_string())].into()),
            ..Default::default()
        },
        status: Some(PodStatus {
            phase: Some(phase.into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn set(replicas: i32, update: &str) -> StatefulSet {
    let mut s = StatefulSet::default();
    s.metadata.name = Some("web".into());
    s.spec.replicas = Some(replicas);
    s.status = Some(StatefulSetStatus {
        replicas,
        update_revision: Some(update.into()),
        current_revision: Some("web-a".into()),
        ..Default::default()
    });
    s
}

fn words(evs: &[EventKind]) -> Vec<String> {
    evs.iter()
        .map(|e| {
            ststui_sim::sim::timeline::text(&crate::backend::Event { t_ms: 0, kind: e.clone() })
                [21..]
                .trim_start()
                .to_string()
        })
        .collect()
}

#[test]
fn a_pods_life_as_the_watch_shows_it() {
    let mut t = Tracker::default();
    t.set(&set(3, "web-b"));
    assert!(
        t.pods_listed(&[pod("web-0", "u0", "web-a", "Running", true)]).is_empty(),
        "what was there is not news"
    );
    let created = t.pod(&pod("web-1", "u1", "web-b", "Pending", false), false);
    assert_eq!(words(&created), ["web create-pod web-1 web-b"]);
    let running = t.pod(&pod("web-1", "u1", "web-b", "Running", false), false);
    assert_eq!(words(&running), ["web-1 running"]);
    assert_eq!(
        words(&t.pod(&pod("web-1", "u1", "web-b", "Running", true), false)),
        ["web-1 ready"]
    );
    assert_eq!(
        words(&t.pod(&pod("web-1", "u1", "web-b", "Running", false), false)),
        ["web-1 unready"]
    );
    let mut dying = pod("web-0", "u0", "web-a", "Running", true);
    dying.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    assert_eq!(words(&t.pod(&dying, false)), ["web delete-pod web-0 (update)"]);
    assert_eq!(words(&t.pod(&dying, true)), ["web-0 gone"]);
    // Scaled down: the reason is the replicas.
    t.set(&set(1, "web-b"));
    let mut condemned = pod("web-1", "u1", "web-b", "Running", false);
    condemned.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    assert_eq!(words(&t.pod(&condemned, false)), ["web delete-pod web-1 (scale-down)"]);
}

#[test]
fn a_relist_after_a_gap_tells_what_changed_in_it() {
    let mut t = Tracker::default();
    t.set(&set(2, "web-a"));
    t.pods_listed(&[
        pod("web-0", "u0", "web-a", "Running", true),
        pod("web-1", "u1", "web-a", "Running", true),
    ]);
    // During the gap web-1 was deleted and came back as a new pod: its deletion is told (the
    // watch never showed it terminating), then its going, then the new one.
    let out = t.pods_listed(&[
        pod("web-0", "u0", "web-a", "Running", true),
        pod("web-1", "u9", "web-a", "Pending", false),
    ]);
    assert_eq!(words(&out), ["web delete-pod web-1", "web-1 gone", "web create-pod web-1 web-a"]);
    let out = t.pods_listed(&[pod("web-0", "u0", "web-a", "Running", true)]);
    assert_eq!(words(&out), ["web delete-pod web-1", "web-1 gone"]);
}

/// A pod whose terminating state the watch skipped (its deletion and removal folded into one
/// event) is still told deleted, with the reason, before it is gone.
#[test]
fn a_deletion_the_watch_skipped_is_still_told() {
    let mut t = Tracker::default();
    t.set(&set(3, "web-b"));
    t.pods_listed(&[pod("web-2", "u2", "web-a", "Running", true)]);
    let last = pod("web-2", "u2", "web-a", "Running", true);
    assert_eq!(words(&t.pod(&last, true)), ["web delete-pod web-2 (update)", "web-2 gone"]);
    // Replaced between two watch events: the old one's end, then the new one.
    t.pod(&pod("web-1", "u1", "web-a", "Running", true), false);
    let new = t.pod(&pod("web-1", "u7", "web-b", "Pending", false), false);
    assert_eq!(
        words(&new),
        ["web delete-pod web-1 (update)", "web-1 gone", "web create-pod web-1 web-b"]
    );
}

#[test]
fn status_changes_and_warnings_are_told_once() {
    let mut t = Tracker::default();
    assert_eq!(t.set(&set(3, "web-b")).len(), 1);
    assert!(t.set(&set(3, "web-b")).is_empty());
    let warning = KubeEvent {
        metadata: ObjectMeta { uid: Some("e1".into()), ..Default::default() },
        involved_object: ObjectReference {
            kind: Some("StatefulSet".into()),
            name: Some("web".into()),
            ..Default::default()
        },
        reason: Some("FailedCreate".into()),
        message: Some("create Pod web-3 in StatefulSet web failed error: quota exceeded".into()),
        type_: Some("Warning".into()),
        count: Some(1),
        ..Default::default()
    };
    assert_eq!(
        words(&t.event(&warning)),
        [
            "statefulset/web FailedCreate: create Pod web-3 in StatefulSet web failed error: quota exceeded"
        ]
    );
    assert!(t.event(&warning).is_empty(), "once");
    let normal = KubeEvent { type_: Some("Normal".into()), ..warning };
    assert!(t.event(&normal).is_empty());
}

#[test]
fn the_operators_own_delete_is_told_once_and_an_update_comes_after_its_revision() {
    let mut t = Tracker::default();
    t.set(&set(2, "web-b"));
    t.revisions_listed(&[] as &[ControllerRevision]);
    t.pods_listed(&[
        pod("web-0", "u0", "web-a", "Running", true),
        pod("web-1", "u1", "web-a", "Running", true),
    ]);
    // The pods watch shows the rollout's first deletion before the revisions watch shows the
    // new revision: the revision comes first on the timeline, and only once.
    let mut dying = pod("web-1", "u1", "web-a", "Running", true);
    dying.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let out = t.pod(&dying, false);
    assert_eq!(words(&out), ["web create-revision web-b", "web delete-pod web-1 (update)"]);
    let mut rev = k8s_openapi::api::apps::v1::ControllerRevision::default();
    rev.metadata.name = Some("web-b".into());
    assert!(t.revision(&rev).is_empty(), "not told twice");
    // The operator deletes web-0 from the console: its own line says so; the watch's view of
    // it is not told again as the controller's.
    t.operator_deleted("web-0");
    let mut gone = pod("web-0", "u0", "web-a", "Running", true);
    gone.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    assert!(t.pod(&gone, false).is_empty(), "{:?}", words(&t.pod(&gone, false)));
    assert_eq!(words(&t.pod(&gone, true)), ["web-0 gone"]);
}
