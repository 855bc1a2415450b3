//! Rolling updates, partitions, OnDelete and maxUnavailable with their version semantics
//! (spec 3.5, 3.6 and the update cases of 3.8, plus 7.2, 7.3, 7.7), driven through the world.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::{World, mu, pod_actions};
use ststui::core::{Blocker, Hold, Plan};

/// Every `delete-pod … update` across the plans since `from`.
fn update_deletes(w: &World, from: usize) -> Vec<String> {
    w.plans[from..]
        .iter()
        .flat_map(pod_actions)
        .filter(|a| a.ends_with(" update"))
        .map(|a| a.split(' ').nth(1).unwrap_or_default().to_string())
        .collect()
}

fn rollout(w: &mut World, rounds: usize) -> Vec<Plan> {
    let from = w.plans.len();
    w.settle(rounds);
    w.plans[from..].to_vec()
}

#[test]
fn template_change_ordered_ready_updates_from_the_top_one_at_a_time() {
    let mut w = World::new(3);
    w.settle(40);
    let r1 = w.update_revision();
    let from = w.plans.len();
    w.set_image("nginx:2");
    let p = w.sync();
    let r2 = p.update_revision.clone();
    assert_ne!(r1, r2);
    assert_eq!(p.current_revision, r1);
    assert_eq!(pod_actions(&p), ["delete-pod web-2 update"]);
    assert_eq!(p.status.current_replicas, Some(2), "currentReplicas decremented for the delete");
    // web-2 comes back at R2; web-1 waits until web-2 is Running, Ready and available.
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-2"]);
    assert_eq!(w.revision_of("web-2"), r2);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    w.settle(60);
    assert_eq!(update_deletes(&w, from), ["web-2", "web-1", "web-0"]);
    let s = w.status();
    assert_eq!(s.current_revision.as_deref(), Some(r2.as_str()));
    assert_eq!(s.current_replicas, Some(3));
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn template_change_legacy_path_matches_on_1_34() {
    let mut w = World::new(3).version("1.34");
    w.settle(40);
    let from = w.plans.len();
    w.set_image("nginx:2");
    w.settle(60);
    assert_eq!(update_deletes(&w, from), ["web-2", "web-1", "web-0"]);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn partition_2_updates_only_web_2_and_recreates_below_at_current() {
    let mut w = World::new(3).partition(2);
    w.settle(40);
    let r1 = w.update_revision();
    let from = w.plans.len();
    w.set_image("nginx:2");
    let plans = rollout(&mut w, 40);
    assert_eq!(update_deletes(&w, from), ["web-2"]);
    let r2 = w.update_revision();
    let s = w.status();
    assert_eq!(s.current_revision.as_deref(), Some(r1.as_str()));
    assert_eq!(s.updated_replicas, Some(1));
    assert_eq!(w.revision_of("web-2"), r2);
    let last = plans.last().cloned().unwrap_or_default();
    assert_eq!(
        last.held_by,
        Some(Hold::Partition { partition: 2, first_held: 0, last_held: 1, outdated: 2 })
    );
    assert_eq!(last.waiting_on, None);
    // A deleted pod below the partition comes back at R1, above it at R2.
    w.delete_pod("web-0");
    w.delete_pod("web-2");
    w.tick(1);
    w.settle(40);
    assert_eq!(w.revision_of("web-0"), r1);
    assert_eq!(w.revision_of("web-2"), r2);
    w.assert_invariants();
}

#[test]
fn partition_is_an_offset_from_start_ordinal() {
    let mut w = World::new(4).start_ordinal(2).partition(3);
    w.settle(60);
    let from = w.plans.len();
    w.set_image("nginx:2");
    w.settle(40);
    assert_eq!(update_deletes(&w, from), ["web-5"], "ordinals 2..=4 are held by partition 3");
    w.assert_invariants();
}

#[test]
fn raising_the_partition_never_reverts_updated_pods() {
    let mut w = World::new(3);
    w.settle(40);
    w.set_image("nginx:2");
    w.sync();
    w.tick(1);
    w.sync();
    w.settle(6);
    let r2 = w.update_revision();
    w.set_partition(3);
    let from = w.plans.len();
    w.settle(30);
    assert_eq!(w.revision_of("web-2"), r2, "web-2 stays updated");
    assert!(update_deletes(&w, from).is_empty());
    w.assert_invariants();
}

#[test]
fn on_delete_never_deletes_and_recreates_at_the_update_revision() {
    let mut w = World::new(3).on_delete();
    w.settle(40);
    w.set_image("nginx:2");
    let from = w.plans.len();
    w.settle(20);
    assert!(update_deletes(&w, from).is_empty());
    let r2 = w.update_revision();
    let p = w.plans.last().cloned().unwrap_or_default();
    assert_eq!(p.held_by, Some(Hold::OnDelete { outdated: 3 }));
    w.delete_pod("web-1");
    w.tick(1);
    w.settle(20);
    assert_eq!(w.revision_of("web-1"), r2);
    w.scale(4);
    w.settle(20);
    assert_eq!(w.revision_of("web-3"), r2, "scale-up pods use the update revision");
    w.assert_invariants();
}

#[test]
fn on_delete_completes_in_1_37_but_not_in_1_34() {
    for (version, completes) in [("1.37", true), ("1.34", false)] {
        let mut w = World::new(2).on_delete().version(version);
        w.settle(40);
        let r1 = w.update_revision();
        w.set_image("nginx:2");
        w.sync();
        w.delete_pod("web-0");
        w.delete_pod("web-1");
        w.tick(1);
        w.settle(40);
        let r2 = w.update_revision();
        let s = w.status();
        assert_eq!(s.updated_replicas, Some(2), "{version}");
        let want = if completes { r2 } else { r1 };
        assert_eq!(s.current_revision, Some(want), "{version}");
        w.assert_invariants();
    }
}

#[test]
fn max_unavailable_2_deletes_two_at_once_and_recreates_one_by_one_when_ordered() {
    let mut w = World::new(5).max_unavailable(mu("2"));
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-4 update", "delete-pod web-3 update"]);
    assert_eq!(p.waiting_on, Some(Blocker::MaxUnavailable { unavailable: 2, max: 2 }));
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-3"], "OrderedReady: one at a time");
    w.settle(80);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn max_unavailable_2_parallel_recreates_both_at_once() {
    let mut w = World::new(5).parallel().max_unavailable(mu("2"));
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-4 update", "delete-pod web-3 update"]);
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-3", "create-pod web-4"]);
    w.settle(80);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn max_unavailable_is_ignored_with_the_gate_off() {
    let mut w = World::new(5).version("1.36").max_unavailable(mu("3"));
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-4 update"]);
    assert_eq!(p.waiting_on, Some(Blocker::UpdateStep { pod: "web-4".into() }));
    w.assert_invariants();
}

#[test]
fn max_unavailable_percentage_rounds_down() {
    let mut w = World::new(5).parallel().max_unavailable(mu("50%"));
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p).len(), 2, "50% of 5 is 2");
    w.assert_invariants();
}

/// #137409: a single Parallel replica whose first revision crash-loops.
fn broken_single_replica(version: &str) -> World {
    let mut w = World::new(1).parallel().version(version);
    w.broken_images.insert("bad:1".into());
    w.set_image("bad:1");
    w.settle(20);
    w.set_image("nginx:2");
    w
}

#[test]
fn parallel_broken_old_pod_is_stuck_on_1_35_0() {
    let mut w = broken_single_replica("1.35.0");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "the old broken pod uses up the budget");
    assert_eq!(p.waiting_on, Some(Blocker::MaxUnavailable { unavailable: 1, max: 1 }));
    w.settle(20);
    assert!(!w.converged());
    w.assert_invariants();
}

#[test]
fn parallel_broken_old_pod_is_replaced_on_1_37_and_1_36() {
    for version in ["1.37", "1.36", "1.35.4"] {
        let mut w = broken_single_replica(version);
        let p = w.sync();
        assert_eq!(pod_actions(&p), ["delete-pod web-0 update"], "{version}");
        w.settle(20);
        assert!(w.converged(), "{version}");
        w.assert_invariants();
    }
}

#[test]
fn parallel_two_phase_deletes_all_broken_old_pods_then_spends_the_budget() {
    let mut w = World::new(5).parallel();
    w.settle(60);
    w.unready("web-0");
    w.unready("web-1");
    w.set_image("nginx:2");
    let p = w.sync();
    // Phase 1: broken old pods (web-1, web-0), no budget; phase 2: unavailable (2) >= max (1).
    assert_eq!(pod_actions(&p), ["delete-pod web-1 update", "delete-pod web-0 update"]);
    assert_eq!(p.waiting_on, Some(Blocker::MaxUnavailable { unavailable: 2, max: 1 }));
    w.assert_invariants();
}

#[test]
fn ordered_ready_max_unavailable_keeps_the_strict_single_pass_in_1_37() {
    let mut w = World::new(3).max_unavailable(mu("2"));
    w.settle(40);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 update", "delete-pod web-1 update"]);
    w.assert_invariants();
}

#[test]
fn parallel_self_heals_a_broken_highest_pod_on_the_legacy_path() {
    let mut w = World::new(3).parallel().version("1.34");
    w.broken_images.insert("bad:1".into());
    w.settle(40);
    w.set_image("bad:1");
    w.sync();
    w.settle(10);
    assert!(!w.is_ready("web-2"));
    let p = w.sync();
    assert_eq!(
        p.waiting_on,
        Some(Blocker::UpdateWaiting { pod: "web-2".into(), wait: ststui::core::PodWait::NotReady }),
        "an updated but unavailable pod blocks the pods below it"
    );
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(
        pod_actions(&p),
        ["delete-pod web-2 update"],
        "an old-revision broken pod is deleted"
    );
    w.settle(60);
    assert!(w.converged());
    w.assert_invariants();
}

/// A rolling update of two pods with minReadySeconds 10 under `version`: web-1 is replaced and
/// Ready again; returns the world and the second at which web-1 became Ready, with the plan of
/// the sync that created web-1.
fn min_ready_rollout(version: &str) -> (World, i64, Plan) {
    let mut w = World::new(2).min_ready(10).version(version);
    w.settle(80);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-1 update"]);
    assert_eq!(p.requeue_after_ms, None, "the deleted pod still counted as available");
    w.tick(1);
    let created = w.sync();
    assert_eq!(pod_actions(&created), ["create-pod web-1"]);
    w.tick(2);
    assert!(w.is_ready("web-1"));
    let ready_at = w.t;
    (w, ready_at, created)
}

#[test]
fn min_ready_seconds_delays_the_next_update_and_requeues_exactly_from_1_36() {
    let (mut w, ready_at, created) = min_ready_rollout("1.37");
    assert_eq!(created.requeue_after_ms, None, "every Ready pod is available");
    let p = w.sync();
    assert!(pod_actions(&p).is_empty());
    assert_eq!(p.requeue_after_ms, Some(10_000), "when web-1 becomes available");
    w.tick(9);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "ready for 9s < minReadySeconds");
    assert_eq!(p.requeue_after_ms, Some(1000));
    w.tick(1);
    assert_eq!(w.t, ready_at + 10);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-0 update"], "available at the deadline");
    w.settle(60);
    assert_eq!(w.plans.last().and_then(|p| p.requeue_after_ms), None);
    w.assert_invariants();
}

#[test]
fn min_ready_seconds_requeues_while_not_all_available_before_1_36() {
    for version in ["1.34", "1.35"] {
        let (mut w, ready_at, created) = min_ready_rollout(version);
        assert_eq!(created.requeue_after_ms, Some(10_000), "{version}: available != replicas");
        w.tick(10);
        assert_eq!(w.t, ready_at + 10);
        let p = w.sync();
        assert_eq!(pod_actions(&p), ["delete-pod web-0 update"], "{version}: at the deadline");
        assert_eq!(p.requeue_after_ms, None, "{version}: the deleted pod still counted");
        w.settle(60);
        w.assert_invariants();
    }
}

#[test]
fn min_ready_seconds_counts_only_strictly_after_the_deadline_before_1_34() {
    for (version, at_deadline) in [("1.33", false), ("1.34", true)] {
        let mut w = World::new(2).min_ready(10).version(version);
        assert_eq!(pod_actions(&w.sync()), ["create-pod web-0"]);
        while !w.is_ready("web-0") {
            w.tick(1);
            w.sync();
        }
        let ready_at = w.t;
        w.tick(10);
        assert_eq!(w.t, ready_at + 10);
        let p = w.sync();
        let want: &[&str] = if at_deadline { &["create-pod web-1"] } else { &[] };
        assert_eq!(pod_actions(&p), want, "{version}: ready for exactly minReadySeconds");
        w.tick(1);
        let p = w.sync();
        let want: &[&str] = if at_deadline { &[] } else { &["create-pod web-1"] };
        assert_eq!(pod_actions(&p), want, "{version}: a second later");
        w.settle(60);
        w.assert_invariants();
    }
}

#[test]
fn scaling_to_zero_completes_the_update_and_later_pods_use_the_update_revision() {
    let mut w = World::new(3).partition(3);
    w.settle(40);
    w.set_image("nginx:2");
    w.sync();
    w.scale(0);
    w.settle(40);
    let s = w.status();
    assert_eq!(s.current_revision, s.update_revision, "#121534: 0 == 0 == 0 completes");
    w.scale(1);
    w.settle(40);
    assert_eq!(w.revision_of("web-0"), w.update_revision(), "even below the partition");
    w.assert_invariants();
}

#[test]
fn nil_rolling_block_uses_current_replicas_for_the_placeholder_revision() {
    let mut w = World::new(3).nil_rolling_block();
    w.settle(40);
    let r1 = w.update_revision();
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 update"]);
    // The user deletes web-0 mid-rollout: 0 < start + status.currentReplicas, so it comes
    // back at the current revision (the (A && B) branch of 3.5).
    w.delete_pod("web-0");
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-0"]);
    assert_eq!(w.revision_of("web-0"), r1);
    w.assert_invariants();
}

#[test]
fn revert_after_a_broken_update_needs_a_forced_rollback() {
    let mut w = World::new(3);
    w.broken_images.insert("bad:1".into());
    w.settle(40);
    let r1 = w.update_revision();
    w.set_image("bad:1");
    w.settle(10);
    let r2 = w.update_revision();
    assert_eq!(w.revision_of("web-2"), r2);
    w.set_image("nginx:1");
    let p = w.sync();
    assert_eq!(p.update_revision, r1, "rollback reuses the old revision name");
    assert!(pod_actions(&p).is_empty(), "OrderedReady waits on the broken web-2 forever");
    let fr = ststui::core::explain::forced_rollback(
        &ststui::core::Observed {
            set: &w.set,
            pods: &w.pods.values().collect::<Vec<_>>(),
            claims: &[],
            revisions: &w.revisions.values().collect::<Vec<_>>(),
        },
        &p,
        w.now(),
    );
    assert_eq!(fr.map(|f| f.pod), Some("web-2".to_string()));
    w.delete_pod("web-2");
    w.tick(1);
    w.settle(40);
    assert!(w.converged());
    assert_eq!(w.revision_of("web-2"), r1);
    w.assert_invariants();
}

#[test]
fn current_replicas_decrement_counts_pods_on_a_third_revision() {
    let mut w = World::new(3).parallel();
    w.settle(40);
    let r1 = w.update_revision();
    w.set_image("nginx:2");
    w.sync();
    w.tick(1);
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["create-pod web-2"]);
    // Mid-rollout to R2, change again to R3: web-2 (R2) is on a third revision now.
    w.set_image("nginx:3");
    let p = w.sync();
    assert_eq!(p.current_revision, r1);
    assert_eq!(pod_actions(&p), ["delete-pod web-2 update"], "phase 1: old and unavailable");
    // web-0 and web-1 are on R1, yet the R2 delete is subtracted too (7.12).
    assert_eq!(p.status.current_replicas, Some(1));
    w.assert_invariants();
}
