//! The invariant checks catch what they claim to catch: each is fed a plan broken on purpose.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::World;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ststui::core::invariants::{ViolationKind, check_claims_kept, check_plan};
use ststui::core::{DeleteReason, Effect, Observed, Plan};

fn kinds_of(w: &World, plan: &Plan) -> Vec<ViolationKind> {
    let pods: Vec<&Pod> = w.pods.values().collect();
    let claims: Vec<&PersistentVolumeClaim> = w.claims.values().collect();
    let revs: Vec<_> = w.revisions.values().collect();
    let o = Observed { set: &w.set, pods: &pods, claims: &claims, revisions: &revs };
    check_plan(&o, plan, w.now(), &w.options.semantics).into_iter().map(|v| v.kind).collect()
}

fn delete(name: &str, reason: DeleteReason) -> Effect {
    Effect::DeletePod { name: name.into(), reason }
}

fn settled(n: i32) -> World {
    let mut w = World::new(n);
    w.settle(60);
    w
}

#[test]
fn real_plans_pass() {
    let mut w = settled(3);
    let p = w.plan();
    assert!(kinds_of(&w, &p).is_empty());
}

#[test]
fn duplicate_ordinal_is_caught() {
    let mut w = settled(2);
    let mut p = w.plan();
    let dup = w.pods["web-1"].clone();
    p.effects.push(Effect::CreatePod(Box::new(dup)));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::DuplicateOrdinal));
}

#[test]
fn ordered_ready_progress_past_an_unready_pod_is_caught() {
    let mut w = settled(3);
    w.unready("web-0");
    w.force_delete("web-2");
    let mut p = w.plan();
    let mut web2 = w.pods["web-1"].clone();
    web2.metadata.name = Some("web-2".into());
    p.effects.push(Effect::CreatePod(Box::new(web2)));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::OrderedProgress));
    let mut p = w.plan();
    p.effects.push(delete("web-1", DeleteReason::Update));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::OrderedProgress));
    // Deleting a failed pod is always allowed.
    let mut p = w.plan();
    p.effects.push(delete("web-1", DeleteReason::Failed));
    assert!(!kinds_of(&w, &p).contains(&ViolationKind::OrderedProgress));
    // Parallel sets may progress.
    w.set_policy(true);
    let mut p = w.plan();
    p.effects.push(delete("web-1", DeleteReason::Update));
    assert!(!kinds_of(&w, &p).contains(&ViolationKind::OrderedProgress));
}

#[test]
fn scale_down_out_of_order_is_caught() {
    let mut w = settled(3);
    w.scale(0);
    let mut p = w.plan();
    p.effects.retain(|e| !matches!(e, Effect::DeletePod { .. }));
    p.effects.push(delete("web-1", DeleteReason::ScaleDown));
    let k = kinds_of(&w, &p);
    assert!(k.contains(&ViolationKind::ScaleDownOrder), "web-2 still exists: {k:?}");
    w.set_policy(true);
    let mut p = w.plan();
    p.effects.retain(|e| !matches!(e, Effect::DeletePod { .. }));
    p.effects.push(delete("web-0", DeleteReason::ScaleDown));
    p.effects.push(delete("web-2", DeleteReason::ScaleDown));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::ScaleDownOrder), "ascending in one plan");
}

#[test]
fn update_delete_below_the_partition_is_caught() {
    let mut w = settled(3);
    w.set_partition(2);
    let mut p = w.plan();
    p.effects.push(delete("web-1", DeleteReason::Update));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::PartitionDeleted));
    let mut p = w.plan();
    p.effects.push(delete("web-2", DeleteReason::Update));
    assert!(!kinds_of(&w, &p).contains(&ViolationKind::PartitionDeleted));
    w.set_strategy(true);
    let mut p = w.plan();
    p.effects.push(delete("web-2", DeleteReason::Update));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::PartitionDeleted), "OnDelete");
}

#[test]
fn claim_refs_against_the_policy_are_caught() {
    let mut w = World::new(1).claim_templates(&["data"]);
    w.settle(30);
    let mut p = w.plan();
    let mut c = w.claims["data-web-0"].clone();
    c.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: "web".into(),
        uid: core_harness::SET_UID.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    p.effects.push(Effect::UpdateClaim(Box::new(c)));
    assert!(kinds_of(&w, &p).contains(&ViolationKind::ClaimRetention));
    let before: Vec<&PersistentVolumeClaim> = w.claims.values().collect();
    let v = check_claims_kept(&w.set, &before, &[]);
    assert_eq!(v.len(), 1);
    assert!(v[0].message.contains("data-web-0"));
}

#[test]
fn wrong_status_counts_are_caught() {
    let mut w = settled(3);
    let mut p = w.plan();
    p.status.replicas = 2;
    p.status.ready_replicas = Some(1);
    let k = kinds_of(&w, &p);
    assert_eq!(k.iter().filter(|k| **k == ViolationKind::StatusCounts).count(), 2);
    let mut p = w.plan();
    p.status.current_replicas = Some(1);
    assert!(kinds_of(&w, &p).contains(&ViolationKind::StatusCounts));
}
