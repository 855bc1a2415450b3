//! Scaling, creation order, failed and terminating pods, identity repair and the set being
//! deleted (spec 3.2–3.5 and the scale cases of 3.8), driven through the in-memory world with
//! invariants checked after every step.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::{World, actions, pod_actions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ststui::core::{Blocker, PodWait};

fn ordered(plan: &ststui::core::Plan) -> Option<(String, PodWait)> {
    match &plan.waiting_on {
        Some(Blocker::Ordered { pod, wait, .. }) => Some((pod.clone(), *wait)),
        _ => None,
    }
}

#[test]
fn scale_0_to_3_ordered_ready_creates_one_pod_per_healthy_predecessor() {
    let mut w = World::new(3);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-0"]);
    assert_eq!(ordered(&p), Some(("web-0".into(), PodWait::NotCreated)));
    // While web-0 is Pending and then Running-but-not-Ready nothing else is created.
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(ordered(&p), Some(("web-0".into(), PodWait::Pending)));
    w.tick(1);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(ordered(&p), Some(("web-0".into(), PodWait::NotReady)));
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-1"]);
    w.settle(40);
    assert!(w.converged());
    assert_eq!(w.pod_names(), ["web-0", "web-1", "web-2"]);
    // replicas progressed 1 → 2 → 3 and readyReplicas trailed it.
    let seen: Vec<(i32, i32)> =
        w.plans.iter().map(|p| (p.status.replicas, p.status.ready_replicas.unwrap_or(0))).collect();
    let mut replicas: Vec<i32> = seen.iter().map(|s| s.0).collect();
    replicas.dedup();
    assert_eq!(replicas, [0, 1, 2, 3]);
    assert!(seen.iter().all(|(r, ready)| ready <= r));
    w.assert_invariants();
}

#[test]
fn scale_0_to_3_with_claims_creates_claims_before_each_pod() {
    let mut w = World::new(3).claim_templates(&["data"]);
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-0", "create-pod web-0"]);
    w.settle(40);
    assert!(w.converged());
    assert!(["data-web-0", "data-web-1", "data-web-2"].iter().all(|c| w.claims.contains_key(*c)));
    w.assert_invariants();
}

#[test]
fn pending_pod_gets_a_deleted_claim_recreated() {
    let mut w = World::new(1).claim_templates(&["data"]).timings(5, 1, 1);
    w.sync();
    w.claims.remove("data-web-0");
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-0"], "3.3 c: Pending pods re-create claims");
    w.assert_invariants();
}

#[test]
fn scale_0_to_3_parallel_creates_all_in_one_sync() {
    let mut w = World::new(3).parallel();
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-0", "create-pod web-1", "create-pod web-2"]);
    assert_eq!(p.waiting_on, None, "burst mode does not stop early");
    w.settle(40);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn scale_3_to_1_ordered_ready_deletes_highest_first_and_waits_for_it_to_go() {
    let mut w = World::new(3);
    w.settle(40);
    w.scale(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 scale-down"]);
    assert_eq!(p.waiting_on, Some(Blocker::ScaleDownStep { pod: "web-2".into() }));
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(p.waiting_on, Some(Blocker::CondemnedTerminating { pod: "web-2".into() }));
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-1 scale-down"]);
    w.settle(40);
    assert_eq!(w.pod_names(), ["web-0"]);
    w.assert_invariants();
}

#[test]
fn scale_down_ordered_ready_requires_in_range_pods_healthy() {
    let mut w = World::new(3);
    w.settle(40);
    w.unready("web-0");
    w.scale(1);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "scaling waits for web-0");
    assert_eq!(ordered(&p), Some(("web-0".into(), PodWait::NotReady)));
    w.assert_invariants();
}

#[test]
fn scale_3_to_1_parallel_deletes_both_in_one_sync() {
    let mut w = World::new(3).parallel();
    w.settle(40);
    w.scale(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 scale-down", "delete-pod web-1 scale-down"]);
    w.settle(40);
    assert_eq!(w.pod_names(), ["web-0"]);
    w.assert_invariants();
}

#[test]
fn condemned_unhealthy_pod_above_another_unhealthy_one_blocks_scale_down() {
    let mut w = World::new(5);
    w.settle(60);
    w.unready("web-3");
    w.unready("web-4");
    w.scale(0);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(
        p.waiting_on,
        Some(Blocker::CondemnedUnhealthy {
            pod: "web-4".into(),
            first_unavailable: Some("web-3".into())
        })
    );
    // Once web-4 is Ready again it goes first, then the first unavailable pod may go.
    w.ready("web-4");
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-4 scale-down"]);
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-3 scale-down"], "web-3 is the first unavailable");
    w.assert_invariants();
}

#[test]
fn failed_pod_is_deleted_and_recreated_after_it_is_gone() {
    let mut w = World::new(3);
    w.settle(40);
    w.fail("web-1");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-1 failed"]);
    assert_eq!(p.waiting_on, Some(Blocker::TerminalPod { pod: "web-1".into(), ordinal: 1 }));
    // Still there (terminating): not deleted again, nothing created.
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-1"]);
    w.settle(40);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn failed_pod_with_deletion_timestamp_is_only_waited_for() {
    let mut w = World::new(2).timings(1, 1, 30);
    w.settle(40);
    w.delete_pod("web-1");
    w.fail("web-1");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "a terminal pod already terminating is not deleted again");
    assert_eq!(p.waiting_on, Some(Blocker::TerminalPod { pod: "web-1".into(), ordinal: 1 }));
    w.assert_invariants();
}

#[test]
fn succeeded_pod_is_treated_like_failed() {
    let mut w = World::new(1);
    w.settle(20);
    if let Some(st) = w.pods.get_mut("web-0").and_then(|p| p.status.as_mut()) {
        st.phase = Some("Succeeded".into());
    }
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-0 failed"]);
    w.assert_invariants();
}

#[test]
fn ordered_ready_updates_wait_behind_a_failed_pod() {
    let mut w = World::new(3).timings(1, 1, 5);
    w.settle(40);
    w.fail("web-1");
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-1 failed"], "web-2 is not updated");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    w.assert_invariants();
}

#[test]
fn terminating_in_range_pod_blocks_ordered_ready() {
    let mut w = World::new(3).timings(1, 1, 5);
    w.settle(40);
    w.delete_pod("web-0");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(ordered(&p), Some(("web-0".into(), PodWait::Terminating)));
    w.tick(5);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-0"]);
    w.assert_invariants();
}

#[test]
fn terminating_pod_does_not_block_parallel() {
    let mut w = World::new(3).parallel().timings(1, 1, 5);
    w.settle(40);
    w.delete_pod("web-0");
    w.delete_pod("web-2");
    w.fail("web-1");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-1 failed"]);
    assert_eq!(p.waiting_on, None);
    w.assert_invariants();
}

#[test]
fn start_ordinal_change_creates_new_range_first_then_removes_old_descending() {
    let mut w = World::new(2);
    w.settle(40);
    w.set_start(2);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-2"]);
    let mut order = Vec::new();
    for _ in 0..60 {
        let p = w.sync();
        order.extend(pod_actions(&p));
        w.tick(1);
    }
    assert_eq!(
        order,
        ["create-pod web-3", "delete-pod web-1 scale-down", "delete-pod web-0 scale-down"]
    );
    assert_eq!(w.pod_names(), ["web-2", "web-3"]);
    w.assert_invariants();
}

#[test]
fn pods_with_unparseable_ordinals_are_ignored() {
    let mut w = World::new(1);
    w.settle(20);
    let mut odd = w.pods["web-0"].clone();
    odd.metadata.name = Some("web-99999999999".into());
    odd.metadata.uid = Some("uid-odd".into());
    w.pods.insert("web-99999999999".into(), odd);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "ordinal -1 is neither a replica nor condemned");
    assert_eq!(p.status.replicas, 1, "and is not counted after the sync's recount");
    w.assert_invariants();
}

#[test]
fn set_being_deleted_does_nothing_but_status() {
    let mut w = World::new(3);
    w.settle(40);
    w.scale(1);
    w.set.metadata.deletion_timestamp = Some(Time(w.now()));
    w.fail("web-0");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(p.waiting_on, Some(Blocker::SetDeleting));
    assert_eq!(p.status.replicas, 3, "counts every claimed pod");
    w.assert_invariants();
}

#[test]
fn identity_repair_restores_the_pod_name_label() {
    let mut w = World::new(2);
    w.settle(40);
    if let Some(l) = w.pods.get_mut("web-1").and_then(|p| p.metadata.labels.as_mut()) {
        l.remove(ststui::core::labels::POD_NAME_LABEL);
    }
    let p = w.sync();
    assert_eq!(actions(&p), ["update-pod web-1"]);
    let fixed = w.pods["web-1"].metadata.labels.clone().unwrap_or_default();
    assert_eq!(fixed.get(ststui::core::labels::POD_NAME_LABEL).map(String::as_str), Some("web-1"));
    assert_eq!(fixed.get(ststui::core::labels::POD_INDEX_LABEL).map(String::as_str), Some("1"));
    w.assert_invariants();
}

#[test]
fn storage_repair_rewrites_claim_volumes_and_creates_missing_claims() {
    let mut w = World::new(1).claim_templates(&["data"]);
    w.settle(20);
    if let Some(s) = w.pods.get_mut("web-0").and_then(|p| p.spec.as_mut()) {
        s.volumes = None;
    }
    w.claims.remove("data-web-0");
    let p = w.sync();
    assert_eq!(actions(&p), ["create-pvc data-web-0", "update-pod web-0"]);
    let vols = w.pods["web-0"].spec.clone().and_then(|s| s.volumes).unwrap_or_default();
    assert_eq!(vols.len(), 1);
    assert_eq!(
        vols[0].persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()),
        Some("data-web-0")
    );
    w.assert_invariants();
}

#[test]
fn new_pods_carry_identity_owner_and_hostname() {
    let mut w = World::new(1).claim_templates(&["data"]);
    w.sync();
    let p = &w.pods["web-0"];
    let labels = p.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("web"), "template labels copied");
    assert_eq!(labels.get("statefulset.kubernetes.io/pod-name").map(String::as_str), Some("web-0"));
    assert_eq!(labels.get("apps.kubernetes.io/pod-index").map(String::as_str), Some("0"));
    assert_eq!(
        labels.get("controller-revision-hash").map(String::as_str),
        Some(w.update_revision().as_str()),
        "the revision label is the full revision name"
    );
    assert!(w.update_revision().starts_with("web-"));
    let spec = p.spec.clone().unwrap_or_default();
    assert_eq!(spec.hostname.as_deref(), Some("web-0"));
    assert_eq!(spec.subdomain.as_deref(), Some("web"));
    assert_eq!(p.metadata.generate_name.as_deref(), Some("web-"));
    let owner = p.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(owner.len(), 1);
    assert_eq!(owner[0].uid, core_harness::SET_UID);
    assert_eq!(owner[0].controller, Some(true));
    assert_eq!(owner[0].block_owner_deletion, Some(true));
    w.assert_invariants();
}

#[test]
fn failed_condemned_pod_above_another_unavailable_one_blocks_ordered_scale_down() {
    // processCondemned has no rule for terminal pods: web-3 (Failed) is not the first
    // unavailable pod (web-2 is), so OrderedReady scale-down waits until someone deletes it.
    let mut w = World::new(4);
    w.settle(60);
    w.fail("web-2");
    w.fail("web-3");
    w.scale(1);
    for _ in 0..10 {
        let p = w.sync();
        assert!(pod_actions(&p).is_empty());
        assert_eq!(
            p.waiting_on,
            Some(Blocker::CondemnedUnhealthy {
                pod: "web-3".into(),
                first_unavailable: Some("web-2".into())
            })
        );
        w.tick(1);
    }
    w.delete_pod("web-3");
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 scale-down"], "web-2 is the first unavailable");
    w.assert_invariants();
}
