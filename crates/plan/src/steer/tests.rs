//! What each write does to a set, and the conflict rule.

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::jiff::Timestamp;

use super::*;

fn key() -> ObjRef {
    ObjRef::new("default", "web")
}

fn set(replicas: i32, partition: Option<i32>, image: &str) -> StatefulSet {
    let mut s = StatefulSet::default();
    s.metadata.name = Some("web".into());
    s.metadata.namespace = Some("default".into());
    s.metadata.uid = Some("uid-web".into());
    s.metadata.resource_version = Some("7".into());
    s.spec.replicas = Some(replicas);
    s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: partition.map(|p| RollingUpdateStatefulSetStrategy {
            partition: Some(p),
            max_unavailable: None,
        }),
    });
    s.spec.template.spec = Some(PodSpec {
        containers: vec![Container {
            name: "app".into(),
            image: Some(image.into()),
            ..Default::default()
        }],
        ..Default::default()
    });
    s
}

fn revision(n: i64, image: &str, owner: &str) -> ControllerRevision {
    ControllerRevision {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(format!("web-{n}")),
            namespace: Some("default".into()),
            owner_references: Some(vec![OwnerReference {
                controller: Some(true),
                uid: owner.into(),
                ..Default::default()
            }]),
            ..Default::default()
        },
        revision: Some(n),
        data: RawExtension(serde_json::json!({"spec": {"template": {"$patch": "replace",
            "spec": {"containers": [{"name": "app", "image": image}]}}}})),
    }
}

fn inputs<'a>(revisions: &'a [&'a ControllerRevision]) -> Inputs<'a> {
    Inputs { now: Timestamp::from_second(1_800_000_000).unwrap(), identity: "ana", revisions }
}

fn changed(c: Change) -> StatefulSet {
    match c {
        Change::Set(s) => *s,
        Change::Unchanged(why) => panic!("unchanged: {why}"),
    }
}

#[test]
fn partition_is_set_and_refused_for_on_delete() {
    let s = set(5, Some(5), "nginx:1");
    let op = ClusterOp::SetPartition { set: key(), partition: 3 };
    let new = changed(apply(&op, &key(), &s, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&new).partition, 3);
    let mut od = s.clone();
    od.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    let err = apply(&op, &key(), &od, inputs(&[])).unwrap_err();
    assert_eq!(err.kind, FailureKind::Invalid);
    assert!(err.message.contains("uses OnDelete"), "{}", err.message);
}

#[test]
fn a_type_only_switch_keeps_rolling_update_nil_and_a_console_switch_sets_it() {
    let mut s = set(3, None, "nginx:1");
    s.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    let bare = ClusterOp::SetStrategy {
        set: key(),
        kind: crate::core::spec::UpdateType::RollingUpdate,
        rolling: None,
    };
    let new = changed(apply(&bare, &key(), &s, inputs(&[])).unwrap());
    assert!(new.spec.update_strategy.as_ref().unwrap().rolling_update.is_none());
    let rolling = RollingUpdateStatefulSetStrategy { partition: Some(3), max_unavailable: None };
    let full = ClusterOp::SetStrategy {
        set: key(),
        kind: crate::core::spec::UpdateType::RollingUpdate,
        rolling: Some(rolling),
    };
    let new = changed(apply(&full, &key(), &s, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&new).partition, 3);
}

#[test]
fn restart_stamps_the_template_with_the_input_time() {
    let s = set(3, None, "nginx:1");
    let new = changed(apply(&ClusterOp::Restart { set: key() }, &key(), &s, inputs(&[])).unwrap());
    let ann = new.spec.template.metadata.unwrap().annotations.unwrap();
    assert_eq!(ann.get(RESTARTED_AT_ANNOTATION).map(String::as_str), Some("2027-01-15T08:00:00Z"));
}

#[test]
fn undo_picks_the_previous_controlled_revision_and_skips_a_match() {
    let s = set(3, None, "nginx:3");
    let (r1, r2, r3) = (
        revision(1, "nginx:1", "uid-web"),
        revision(2, "nginx:2", "uid-web"),
        revision(3, "nginx:3", "uid-web"),
    );
    let foreign = revision(9, "evil:9", "someone-else");
    let all = [&r1, &r3, &foreign, &r2];
    let op = ClusterOp::Undo { set: key(), revision: None };
    let new = changed(apply(&op, &key(), &s, inputs(&all)).unwrap());
    assert_eq!(new.spec.template.spec.unwrap().containers[0].image.as_deref(), Some("nginx:2"));
    let to3 = ClusterOp::Undo { set: key(), revision: Some(3) };
    assert!(matches!(apply(&to3, &key(), &s, inputs(&all)), Ok(Change::Unchanged(_))));
    let to9 = ClusterOp::Undo { set: key(), revision: Some(9) };
    let err = apply(&to9, &key(), &s, inputs(&all)).unwrap_err();
    assert_eq!(err.kind, FailureKind::NotFound);
    assert!(err.message.contains("expected one of 1, 2, 3"), "{}", err.message);
    let err = apply(&op, &key(), &s, inputs(&[&r1])).unwrap_err();
    assert!(err.message.contains("no previous revision"), "{}", err.message);
}

#[test]
fn freeze_records_and_resume_restores_idempotently() {
    let s = set(5, Some(2), "nginx:1");
    let frozen_set =
        changed(apply(&ClusterOp::Freeze { set: key() }, &key(), &s, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&frozen_set).partition, 5);
    let f = frozen(&frozen_set).unwrap();
    assert_eq!(
        (f.partition.clone(), f.by.as_str(), f.at.as_str(), f.broken),
        (Ok(2), "ana", "2027-01-15T08:00:00Z", None)
    );
    // Twice: nothing more.
    let again = apply(&ClusterOp::Freeze { set: key() }, &key(), &frozen_set, inputs(&[])).unwrap();
    assert!(matches!(again, Change::Unchanged(ref w) if w.contains("already frozen by ana")));
    // A frozen set refuses partition moves.
    let step = ClusterOp::SetPartition { set: key(), partition: 4 };
    let err = apply(&step, &key(), &frozen_set, inputs(&[])).unwrap_err();
    assert_eq!(err.kind, FailureKind::Conflict);
    let resumed = changed(
        apply(&ClusterOp::Unfreeze { set: key(), force: false }, &key(), &frozen_set, inputs(&[]))
            .unwrap(),
    );
    assert_eq!(crate::core::spec::strategy(&resumed).partition, 2);
    assert!(frozen(&resumed).is_none());
    assert_eq!(resumed.metadata.annotations, None);
    let again =
        apply(&ClusterOp::Unfreeze { set: key(), force: false }, &key(), &resumed, inputs(&[]))
            .unwrap();
    assert!(matches!(again, Change::Unchanged(_)));
}

#[test]
fn a_status_change_is_no_conflict_but_a_spec_change_is() {
    let basis = set(5, Some(3), "nginx:1");
    let mut fresh = basis.clone();
    fresh.metadata.resource_version = Some("9".into());
    fresh.status = Some(Default::default());
    let op = ClusterOp::SetPartition { set: key(), partition: 2 };
    assert!(decide(&op, &key(), Some(&basis), &fresh, inputs(&[])).is_ok());
    fresh.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition =
        Some(1);
    fresh.spec.template.spec.as_mut().unwrap().containers[0].image = Some("nginx:2".into());
    let err = decide(&op, &key(), Some(&basis), &fresh, inputs(&[])).unwrap_err();
    assert_eq!(err.kind, FailureKind::Conflict);
    assert_eq!(
        err.message,
        "default/web changed since you decided: partition 3 → 1, image nginx:1 → nginx:2"
    );
}

#[test]
fn the_merge_patch_carries_the_change_and_the_precondition() {
    let old = set(5, Some(3), "nginx:1");
    let op = ClusterOp::SetPartition { set: key(), partition: 2 };
    let new = changed(apply(&op, &key(), &old, inputs(&[])).unwrap());
    let patch = merge_patch(&old, &new, Some("7")).unwrap();
    assert_eq!(
        patch,
        serde_json::json!({"metadata": {"resourceVersion": "7"},
            "spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}})
    );
    // Removing an annotation is a null.
    let frozen_set =
        changed(apply(&ClusterOp::Freeze { set: key() }, &key(), &old, inputs(&[])).unwrap());
    let resumed = changed(
        apply(&ClusterOp::Unfreeze { set: key(), force: false }, &key(), &frozen_set, inputs(&[]))
            .unwrap(),
    );
    let patch = merge_patch(&frozen_set, &resumed, None).unwrap();
    assert_eq!(patch["metadata"]["annotations"], serde_json::Value::Null);
    assert!(merge_patch(&old, &old, None).is_none());
}

/// A frozen set whose partition another writer moved.
fn broken_freeze(to: i32) -> StatefulSet {
    let s = set(5, Some(2), "nginx:1");
    let mut frozen_set =
        changed(apply(&ClusterOp::Freeze { set: key() }, &key(), &s, inputs(&[])).unwrap());
    let rolling = frozen_set.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut();
    rolling.unwrap().partition = Some(to);
    frozen_set
}

#[test]
fn a_freeze_whose_partition_another_writer_moved_is_broken_and_resume_refuses_it() {
    let mut moved = broken_freeze(0);
    let entry = k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
        manager: Some("kubectl-patch".into()),
        operation: Some("Update".into()),
        time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2027-01-15T08:05:00Z".parse().unwrap(),
        )),
        fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
            serde_json::json!({"f:spec": {"f:updateStrategy": {"f:rollingUpdate": {"f:partition": {}}}}}),
        )),
        ..Default::default()
    };
    moved.metadata.managed_fields = Some(vec![entry]);
    let f = frozen(&moved).unwrap();
    assert_eq!(f.broken, Some(0));
    assert_eq!(f.moved_by.as_deref(), Some("kubectl-patch at 08:05:00"));
    assert!(
        f.words().starts_with("freeze broken: partition moved to 0 by kubectl-patch"),
        "{}",
        f.words()
    );
    let step = ClusterOp::SetPartition { set: key(), partition: 3 };
    let err = apply(&step, &key(), &moved, inputs(&[])).unwrap_err();
    assert!(
        err.message.starts_with("default/web's freeze is broken: partition moved to 0"),
        "{}",
        err.message
    );
    let resume = ClusterOp::Unfreeze { set: key(), force: false };
    let err = apply(&resume, &key(), &moved, inputs(&[])).unwrap_err();
    assert_eq!(err.kind, FailureKind::Conflict);
    assert!(err.message.contains("resuming would set partition 2 over it"), "{}", err.message);
    let forced = ClusterOp::Unfreeze { set: key(), force: true };
    let resumed = changed(apply(&forced, &key(), &moved, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&resumed).partition, 2);
    assert!(frozen(&resumed).is_none());
    // Freezing a broken freeze again holds every ordinal and keeps the first record.
    let again =
        changed(apply(&ClusterOp::Freeze { set: key() }, &key(), &moved, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&again).partition, 5);
    assert_eq!(frozen(&again).map(|f| (f.partition, f.broken)), Some((Ok(2), None)));
}

#[test]
fn a_recorded_partition_that_is_not_one_is_named_and_only_force_drops_it() {
    for bad in ["abc", "-7"] {
        let mut s = broken_freeze(5);
        s.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(crate::steer::FROZEN_PARTITION.into(), bad.into());
        let f = frozen(&s).unwrap();
        assert_eq!(f.partition, Err(bad.to_string()));
        assert_eq!(f.broken, None);
        let err = apply(&ClusterOp::Unfreeze { set: key(), force: false }, &key(), &s, inputs(&[]))
            .unwrap_err();
        assert_eq!(err.kind, FailureKind::Invalid);
        assert!(
            err.message.contains(&format!("holds {bad:?}, not a partition")),
            "{}",
            err.message
        );
        let dropped = changed(
            apply(&ClusterOp::Unfreeze { set: key(), force: true }, &key(), &s, inputs(&[]))
                .unwrap(),
        );
        assert!(frozen(&dropped).is_none());
        assert_eq!(crate::core::spec::strategy(&dropped).partition, 5, "kept as it is");
    }
}

#[test]
fn a_step_is_recorded_with_its_partition_refused_when_moved_and_settled_after() {
    let s = set(5, Some(4), "nginx:1");
    let step = ClusterOp::Step { set: key(), from: 4, to: 3 };
    let stepped = changed(apply(&step, &key(), &s, inputs(&[])).unwrap());
    assert_eq!(crate::core::spec::strategy(&stepped).partition, 3);
    let p = crate::steer::pending(&stepped).unwrap();
    assert_eq!((p.from, p.to, p.by.as_str()), (4, 3, "ana"));
    // Decided on 4, but the partition reads 3 now: refused, nothing written.
    let err = apply(&step, &key(), &stepped, inputs(&[])).unwrap_err();
    assert_eq!(err.kind, FailureKind::Conflict);
    let settled = changed(
        apply(&ClusterOp::StepSettled { set: key() }, &key(), &stepped, inputs(&[])).unwrap(),
    );
    assert!(crate::steer::pending(&settled).is_none());
    assert_eq!(crate::core::spec::strategy(&settled).partition, 3);
    let again =
        apply(&ClusterOp::StepSettled { set: key() }, &key(), &settled, inputs(&[])).unwrap();
    assert!(matches!(again, Change::Unchanged(_)));
}

#[test]
fn a_lease_is_released_against_the_same_lease_however_the_server_wrote_it() {
    let written =
        r#"{"holder":"","host":"ststui-console","pid":7,"expires":"2026-11-28T22:00:00Z"}"#;
    // As stored: the holder filled in by the server, the fields in its order.
    let stored =
        r#"{"expires":"2026-11-28T22:00:00Z","holder":"ana","host":"ststui-console","pid":7}"#;
    let mut s = set(3, Some(3), "nginx:1.25");
    s.metadata.annotations = Some([(crate::plan::record::LEASE.to_string(), stored.into())].into());
    let release =
        |seen: &str| ClusterOp::PlanLease { set: key(), lease: None, seen: Some(seen.into()) };
    // A lease written and not yet seen back is given back all the same.
    match apply(&release(written), &key(), &s, inputs(&[])) {
        Ok(Change::Set(new)) => assert_eq!(new.metadata.annotations.unwrap_or_default().len(), 0),
        other => panic!("not released: {other:?}"),
    }
    // Another holder's lease (another process) is never taken away.
    let other = written.replace("\"pid\":7", "\"pid\":8");
    let refused = apply(&release(&other), &key(), &s, inputs(&[])).unwrap_err();
    assert_eq!(refused.kind, FailureKind::Conflict, "{}", refused.message);
    assert!(refused.message.contains("the plan's lease changed since it was read"));
    // Nothing held, a lease expected: refused too.
    s.metadata.annotations = None;
    assert!(apply(&release(written), &key(), &s, inputs(&[])).is_err());
}
