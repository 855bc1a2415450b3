//! The sync as a whole (spec 1.2, 3.1, 2.5 from the sync's side, 2.7): effect order, errors,
//! the requeue, determinism, rollback and history.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use std::collections::BTreeMap;

use core_harness::{World, pod_actions, ts};
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, ObjectMeta, Time};
use ststui::core::{Effect, Observed, Plan, reconcile};

fn kinds(p: &Plan) -> Vec<String> {
    p.effects
        .iter()
        .map(|e| {
            let (what, name) = match e {
                Effect::AdoptRevision { name, .. } => ("adopt-revision", name.clone()),
                Effect::AdoptPod { name, .. } => ("adopt-pod", name.clone()),
                Effect::ReleasePod { name, .. } => ("release-pod", name.clone()),
                Effect::CreateRevision(_) => ("create-revision", String::new()),
                Effect::UpdateRevision(_) => ("update-revision", String::new()),
                Effect::DeleteRevision { name } => ("delete-revision", name.clone()),
                Effect::CreateClaim(c) => {
                    ("create-pvc", c.metadata.name.clone().unwrap_or_default())
                }
                Effect::UpdateClaim(c) => {
                    ("update-pvc", c.metadata.name.clone().unwrap_or_default())
                }
                Effect::CreatePod(p) => ("create-pod", p.metadata.name.clone().unwrap_or_default()),
                Effect::UpdatePod(p) => ("update-pod", p.metadata.name.clone().unwrap_or_default()),
                Effect::DeletePod { name, .. } => ("delete-pod", name.clone()),
                Effect::WriteStatus(_) => ("write-status", String::new()),
            };
            if name.is_empty() { what.to_string() } else { format!("{what} {name}") }
        })
        .collect()
}

fn orphan_ready_pod(name: &str, t: i64) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-orphan-{name}")),
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            ..Default::default()
        },
        spec: Some(Default::default()),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(ts(t))),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

#[test]
fn effects_come_in_upstream_order() {
    let mut w = World::new(2);
    let t = w.t - 100;
    w.pods.insert("web-0".into(), orphan_ready_pod("web-0", t));
    let p = w.sync();
    assert_eq!(
        kinds(&p),
        [
            "adopt-pod web-0",
            "create-revision",
            "update-pod web-0",
            "create-pod web-1",
            "write-status"
        ],
        "claim, revisions, replicas in order, then the status"
    );
    w.assert_invariants();
}

#[test]
fn orphan_revisions_are_adopted_before_anything_else() {
    let mut w = World::new(1);
    w.settle(20);
    let name = w.update_revision();
    if let Some(r) = w.revisions.get_mut(&name) {
        r.metadata.owner_references = None;
    }
    w.unready("web-0");
    let p = w.sync();
    let k = kinds(&p);
    assert_eq!(k.first().map(String::as_str), Some(format!("adopt-revision {name}").as_str()));
    assert!(!k.iter().any(|e| e.starts_with("create-revision")), "the adopted revision is reused");
    w.assert_invariants();
}

#[test]
fn truncation_runs_last_and_keeps_live_revisions() {
    let mut w = World::new(2).history_limit(0);
    w.settle(40);
    for image in ["nginx:2", "nginx:3", "nginx:4"] {
        w.set_image(image);
        for _ in 0..60 {
            let p = w.sync();
            let k = kinds(&p);
            if let Some(i) = k.iter().position(|e| e.starts_with("delete-revision")) {
                assert!(k[i..].iter().all(|e| e.starts_with("delete-revision")), "{k:?}");
            }
            // Every revision a pod or the status names survives.
            for pod in w.pods.keys() {
                assert!(
                    w.revisions.contains_key(&w.revision_of(pod)),
                    "live revision of {pod} kept"
                );
            }
            assert!(w.revisions.len() <= 2, "limit 0: only live revisions remain");
            w.tick(1);
        }
        assert!(w.converged());
    }
    assert_eq!(w.revisions.len(), 1);
    w.assert_invariants();
}

#[test]
fn rollback_renumbers_the_old_revision_and_keeps_its_name() {
    let mut w = World::new(3).partition(2);
    w.settle(40);
    let r1 = w.update_revision();
    let n1 = w.revisions[&r1].revision;
    w.set_image("nginx:2");
    w.settle(20);
    w.set_image("nginx:1");
    let p = w.sync();
    assert_eq!(p.update_revision, r1);
    let updated: Vec<String> =
        kinds(&p).into_iter().filter(|k| k.starts_with("update-revision")).collect();
    assert_eq!(updated.len(), 1);
    assert!(w.revisions[&r1].revision > n1, "renumbered to max + 1");
    assert_eq!(p.status.updated_replicas, Some(2), "pods on the old name count as updated");
    w.assert_invariants();
}

#[test]
fn invalid_selector_is_a_non_retried_error_with_no_effects() {
    let mut w = World::new(1);
    w.set.spec.selector.match_expressions = Some(vec![LabelSelectorRequirement {
        key: "app".into(),
        operator: "Bogus".into(),
        values: Some(vec!["web".into()]),
    }]);
    let p = w.sync();
    assert!(p.effects.is_empty());
    assert!(p.error.as_ref().is_some_and(|e| !e.retry), "{:?}", p.error);
    assert_eq!(p.requeue_after_ms, None);
}

#[test]
fn no_requeue_after_an_error() {
    let mut w = World::new(1).min_ready(10).claim_templates(&["data"]);
    let mut c = ststui::core::pvc::claims_for(&w.set, 0).remove(0);
    c.metadata.deletion_timestamp = Some(Time(w.now()));
    w.claims.insert("data-web-0".into(), c);
    let p = w.sync();
    assert!(p.error.is_some());
    assert_eq!(p.requeue_after_ms, None, "syncStatefulSet returns the error first");
}

#[test]
fn reconcile_is_deterministic() {
    let mut w = World::new(4).parallel().claim_templates(&["data"]);
    w.settle(10);
    w.set_image("nginx:2");
    w.fail("web-1");
    let pods: Vec<&Pod> = w.pods.values().collect();
    let claims: Vec<_> = w.claims.values().collect();
    let revs: Vec<_> = w.revisions.values().collect();
    let o = Observed { set: &w.set, pods: &pods, claims: &claims, revisions: &revs };
    let a = reconcile(&o, &w.options, w.now());
    let b = reconcile(&o, &w.options, w.now());
    assert_eq!(a, b);
    assert!(!pod_actions(&a).is_empty());
}

#[test]
fn released_pods_are_not_processed() {
    let mut w = World::new(2);
    w.settle(40);
    if let Some(l) = w.pods.get_mut("web-1").and_then(|p| p.metadata.labels.as_mut()) {
        l.insert("app".into(), "other".into());
    }
    let p = w.sync();
    let k = kinds(&p);
    assert_eq!(k.first().map(String::as_str), Some("release-pod web-1"));
    // The released pod still holds the name: upstream's create gets AlreadyExists.
    assert!(k.contains(&"create-pod web-1".to_string()));
    assert_eq!(w.api_errors.len(), 1);
    assert!(w.set.status.as_ref().is_some_and(|s| s.replicas == 1));
}
