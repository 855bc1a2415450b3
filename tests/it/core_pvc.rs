//! Claims (spec 3.7): claim objects, creation before the pod, claims being deleted, the
//! retention-policy ownerRef table, stale claims blocking scale-up, foreign controllers, and
//! claims kept under Retain.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use std::collections::BTreeMap;

use core_harness::{SET_UID, World, actions, pod_actions};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use ststui::core::pvc::{claims_for, is_claim_owner_up_to_date, update_claim_owner_refs};
use ststui::core::{Blocker, Effect};

/// `(kind, uid)` of every ownerRef of a claim in the world, all controller refs.
fn refs(w: &World, claim: &str) -> Vec<(String, String)> {
    let c = w.claims.get(claim);
    let refs = c.and_then(|c| c.metadata.owner_references.clone()).unwrap_or_default();
    assert!(
        refs.iter().all(|r| r.controller == Some(true) && r.block_owner_deletion == Some(true))
    );
    refs.into_iter().map(|r| (r.kind, r.uid)).collect()
}

fn pod_uid(w: &World, pod: &str) -> String {
    w.pods.get(pod).and_then(|p| p.metadata.uid.clone()).unwrap_or_default()
}

fn set_ref() -> (String, String) {
    ("StatefulSet".into(), SET_UID.into())
}

#[test]
fn claim_objects_merge_selector_labels_and_carry_no_owner_refs() {
    let mut w = World::new(3).claim_templates(&["data"]);
    if let Some(t) = w.set.spec.volume_claim_templates.as_mut().and_then(|v| v.first_mut()) {
        t.metadata.labels =
            Some(BTreeMap::from([("app".into(), "other".into()), ("tier".into(), "db".into())]));
        t.metadata.annotations = Some(BTreeMap::from([("a".into(), "b".into())]));
    }
    let claims = claims_for(&w.set, 2);
    assert_eq!(claims.len(), 1);
    let c = &claims[0];
    assert_eq!(c.metadata.name.as_deref(), Some("data-web-2"));
    assert_eq!(c.metadata.namespace.as_deref(), Some("default"));
    let labels = c.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("web"), "the selector wins");
    assert_eq!(labels.get("tier").map(String::as_str), Some("db"));
    assert_eq!(
        c.metadata.annotations.clone().unwrap_or_default().get("a").map(String::as_str),
        Some("b")
    );
    assert!(c.metadata.owner_references.is_none());
    assert!(c.spec.is_some());
}

#[test]
fn claim_being_deleted_blocks_pod_creation_with_a_retried_error() {
    let mut w = World::new(1).claim_templates(&["data", "logs"]);
    let mut c = claims_for(&w.set, 0).remove(0);
    c.metadata.deletion_timestamp = Some(Time(w.now()));
    w.claims.insert("data-web-0".into(), c);
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc logs-web-0"], "other claims are still created");
    assert_eq!(
        p.waiting_on,
        Some(Blocker::ClaimTerminating { pod: "web-0".into(), claim: "data-web-0".into() })
    );
    assert!(p.error.as_ref().is_some_and(|e| e.retry && e.message.contains("data-web-0")));
    assert!(core_harness::writes_status(&p), "the status is still written after the error");
    w.claims.remove("data-web-0");
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-0", "create-pod web-0"]);
    w.assert_invariants();
}

/// Settles 2 replicas, then scales to 1; returns the first scale-down plan.
fn retention_case(when_deleted: &str, when_scaled: &str) -> (World, ststui::core::Plan) {
    let mut w = World::new(2).claim_templates(&["data"]).retention(when_deleted, when_scaled);
    w.settle(40);
    w.scale(1);
    let p = w.sync();
    (w, p)
}

#[test]
fn retention_retain_retain_sets_no_refs_and_keeps_claims() {
    let (mut w, p) = retention_case("Retain", "Retain");
    assert!(refs(&w, "data-web-0").is_empty());
    assert_eq!(actions(&p), ["delete-pod web-1 scale-down"]);
    w.settle(20);
    assert!(w.claims.contains_key("data-web-1"), "kept for a later scale-up");
    w.scale(2);
    let from = w.plans.len();
    w.settle(20);
    let created: Vec<String> =
        w.plans[from..].iter().flat_map(actions).filter(|a| a.contains("pvc")).collect();
    assert!(created.is_empty(), "the retained claim is reused: {created:?}");
    w.assert_invariants();
}

#[test]
fn retention_delete_on_set_deletion_refs_the_set_in_range_and_condemned() {
    let (mut w, p) = retention_case("Delete", "Retain");
    assert_eq!(refs(&w, "data-web-0"), [set_ref()]);
    assert_eq!(refs(&w, "data-web-1"), [set_ref()]);
    assert_eq!(actions(&p), ["delete-pod web-1 scale-down"], "condemned claim already matches");
    w.settle(20);
    assert!(w.claims.contains_key("data-web-1"));
    w.assert_invariants();
}

#[test]
fn retention_delete_on_scale_refs_the_condemned_pod_before_deleting_it() {
    let (mut w, p) = retention_case("Retain", "Delete");
    assert!(refs(&w, "data-web-0").is_empty());
    assert_eq!(actions(&p), ["update-pvc data-web-1", "delete-pod web-1 scale-down"]);
    w.settle(20);
    assert!(!w.claims.contains_key("data-web-1"), "garbage-collected with its pod");
    w.assert_invariants();
}

#[test]
fn retention_delete_delete_moves_the_ref_from_set_to_pod_on_scale_down() {
    let mut w = World::new(2).claim_templates(&["data"]).retention("Delete", "Delete");
    w.settle(40);
    assert_eq!(refs(&w, "data-web-0"), [set_ref()]);
    assert_eq!(refs(&w, "data-web-1"), [set_ref()]);
    let web1 = pod_uid(&w, "web-1");
    w.scale(1);
    let p = w.sync();
    assert_eq!(actions(&p), ["update-pvc data-web-1", "delete-pod web-1 scale-down"]);
    assert_eq!(refs(&w, "data-web-1"), [("Pod".to_string(), web1)]);
    w.settle(20);
    assert!(!w.claims.contains_key("data-web-1"));
    w.assert_invariants();
}

#[test]
fn retention_refs_of_a_new_claim_are_added_by_the_next_sync() {
    let mut w = World::new(1).claim_templates(&["data"]).retention("Delete", "Retain");
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-0", "create-pod web-0"]);
    let p = w.sync();
    assert_eq!(actions(&p), ["update-pvc data-web-0"], "the lister now sees the claim");
    assert_eq!(refs(&w, "data-web-0"), [set_ref()]);
    w.assert_invariants();
}

#[test]
fn monotonic_scale_down_fixes_every_condemned_claim_before_deleting() {
    let mut w = World::new(3).claim_templates(&["data"]).retention("Retain", "Delete");
    w.settle(40);
    w.scale(1);
    let p = w.sync();
    assert_eq!(
        actions(&p),
        ["update-pvc data-web-2", "update-pvc data-web-1", "delete-pod web-2 scale-down"]
    );
    w.assert_invariants();
}

#[test]
fn stale_claim_blocks_scale_up_until_garbage_collected() {
    let mut w = World::new(1).claim_templates(&["data"]).retention("Retain", "Delete");
    w.settle(30);
    let mut stale = claims_for(&w.set, 1).remove(0);
    stale.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: "web-1".into(),
        uid: "uid-old-web-1".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    w.claims.insert("data-web-1".into(), stale);
    w.scale(2);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(
        p.waiting_on,
        Some(Blocker::StaleClaim { pod: "web-1".into(), claim: "data-web-1".into() })
    );
    assert!(p.error.is_none());
    w.claims.remove("data-web-1");
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-1", "create-pod web-1"]);
    w.assert_invariants();
}

#[test]
fn stale_claims_never_block_under_when_scaled_retain() {
    let mut w = World::new(1).claim_templates(&["data"]);
    w.settle(30);
    let mut old = claims_for(&w.set, 1).remove(0);
    old.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: "web-1".into(),
        uid: "uid-old".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    w.claims.insert("data-web-1".into(), old);
    w.scale(2);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-1"]);
}

fn claim_with(refs: Vec<OwnerReference>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data-web-0".into()),
            owner_references: Some(refs),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn oref(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: if kind == "Pod" { "v1" } else { "apps/v1" }.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

fn pod0() -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            uid: Some("uid-pod-0".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn foreign_controller_claims_are_left_alone_unless_ours_must_go() {
    let w = World::new(1).claim_templates(&["data"]).retention("Delete", "Delete");
    let foreign = oref("Backup", "b", "uid-b", true);
    assert!(is_claim_owner_up_to_date(&claim_with(vec![foreign.clone()]), &w.set, &pod0()));
    let mut both = claim_with(vec![foreign.clone(), oref("StatefulSet", "web", SET_UID, true)]);
    assert!(!is_claim_owner_up_to_date(&both, &w.set, &pod0()), "our ref must be cleaned up");
    update_claim_owner_refs(&mut both, &w.set, &pod0());
    assert_eq!(both.metadata.owner_references, Some(vec![foreign]), "ours removed, none added");
    // Under Retain/Retain a foreign controller is never unexpected.
    let r = World::new(1).claim_templates(&["data"]);
    let c = claim_with(vec![oref("Backup", "b", "uid-b", true)]);
    assert!(is_claim_owner_up_to_date(&c, &r.set, &pod0()));
}

#[test]
fn stale_refs_make_a_claim_untouchable() {
    let w = World::new(1).claim_templates(&["data"]).retention("Delete", "Delete");
    let stale_set = claim_with(vec![oref("StatefulSet", "web", "uid-other", true)]);
    assert!(is_claim_owner_up_to_date(&stale_set, &w.set, &pod0()));
    let stale_pod = claim_with(vec![oref("Pod", "web-0", "uid-old", true)]);
    assert!(is_claim_owner_up_to_date(&stale_pod, &w.set, &pod0()));
}

#[test]
fn non_controller_owner_is_made_controller() {
    let w = World::new(1).claim_templates(&["data"]).retention("Delete", "Retain");
    let mut c = claim_with(vec![oref("StatefulSet", "web", SET_UID, false)]);
    assert!(!is_claim_owner_up_to_date(&c, &w.set, &pod0()));
    update_claim_owner_refs(&mut c, &w.set, &pod0());
    assert_eq!(c.metadata.owner_references, Some(vec![oref("StatefulSet", "web", SET_UID, true)]));
    assert!(is_claim_owner_up_to_date(&c, &w.set, &pod0()));
}

#[test]
fn controller_ref_without_uid_is_treated_as_stale_and_removed() {
    let w = World::new(1).claim_templates(&["data"]).retention("Delete", "Retain");
    let mut c = claim_with(vec![oref("StatefulSet", "web", "", true)]);
    // A ref naming our set with another (here: no) UID is an unexpected controller: it is
    // scrubbed and nothing is added in the same pass.
    update_claim_owner_refs(&mut c, &w.set, &pod0());
    assert_eq!(c.metadata.owner_references, Some(vec![]));
    update_claim_owner_refs(&mut c, &w.set, &pod0());
    assert_eq!(c.metadata.owner_references, Some(vec![oref("StatefulSet", "web", SET_UID, true)]));
}

#[test]
fn the_retention_table_for_in_range_and_condemned_pods() {
    // (whenDeleted, whenScaled) → (in range refs, condemned refs)
    let cases = [
        ("Retain", "Retain", vec![], vec![]),
        ("Delete", "Retain", vec!["StatefulSet"], vec!["StatefulSet"]),
        ("Retain", "Delete", vec![], vec!["Pod"]),
        ("Delete", "Delete", vec!["StatefulSet"], vec!["Pod"]),
    ];
    for (wd, ws, in_range, condemned) in cases {
        let w = World::new(1).claim_templates(&["data"]).retention(wd, ws);
        for (ordinal, want) in [(0, &in_range), (5, &condemned)] {
            let pod = Pod {
                metadata: ObjectMeta {
                    name: Some(format!("web-{ordinal}")),
                    uid: Some("uid-p".into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut c = claim_with(vec![]);
            update_claim_owner_refs(&mut c, &w.set, &pod);
            let kinds: Vec<String> = c
                .metadata
                .owner_references
                .clone()
                .unwrap_or_default()
                .into_iter()
                .map(|r| r.kind)
                .collect();
            assert_eq!(&kinds, want, "{wd}/{ws} ordinal {ordinal}");
            assert!(is_claim_owner_up_to_date(&c, &w.set, &pod), "{wd}/{ws} ordinal {ordinal}");
        }
    }
}

#[test]
fn claim_updates_are_effects_with_full_objects() {
    let (w, p) = retention_case("Retain", "Delete");
    let Some(Effect::UpdateClaim(c)) =
        p.effects.iter().find(|e| matches!(e, Effect::UpdateClaim(_)))
    else {
        panic!("expected a claim update");
    };
    assert_eq!(c.metadata.name.as_deref(), Some("data-web-1"));
    assert!(c.metadata.uid.is_some(), "the stored claim with its uid, refs changed");
    w.assert_invariants();
}

#[test]
fn burst_stops_after_the_batch_with_a_claim_error() {
    let mut w = World::new(4).parallel().claim_templates(&["data"]);
    let mut c = claims_for(&w.set, 1).remove(0);
    c.metadata.deletion_timestamp = Some(Time(w.now()));
    w.claims.insert("data-web-1".into(), c);
    let p = w.sync();
    // Batches of 1 (web-0) and 2 (web-1 fails, web-2 still runs); no batch for web-3.
    assert_eq!(
        actions(&p),
        ["create-pvc data-web-0", "create-pod web-0", "create-pvc data-web-2", "create-pod web-2"]
    );
    assert_eq!(
        p.waiting_on,
        Some(Blocker::ClaimTerminating { pod: "web-1".into(), claim: "data-web-1".into() })
    );
    assert!(p.error.is_some());
    w.assert_invariants();
}

#[test]
fn a_policy_change_repairs_claim_refs_through_update_stateful_pod() {
    let mut w = World::new(2).claim_templates(&["data"]);
    w.settle(40);
    w.edit(|s| {
        if let Some(p) = s.persistent_volume_claim_retention_policy.as_mut() {
            p.when_deleted = Some("Delete".into());
        }
    });
    let p = w.sync();
    // Upstream marks the pod dirty when its claims were fixed and PUTs it unchanged.
    assert_eq!(
        actions(&p),
        ["update-pvc data-web-0", "update-pod web-0", "update-pvc data-web-1", "update-pod web-1"]
    );
    assert_eq!(refs(&w, "data-web-0"), [set_ref()]);
    let p = w.sync();
    assert!(actions(&p).is_empty());
    w.assert_invariants();
}
