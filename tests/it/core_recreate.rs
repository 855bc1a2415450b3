//! The Recreate update strategy (spec 3.8; upstream v1.37 `recreateDeleteAndWait`), driven
//! through the world: every old pod deleted at once, nothing created until they are gone, then
//! the policy's order; the `Progressing` condition; the gate off; a release without the type.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::{World, pod_actions, writes_status};
use k8s_openapi::api::apps::v1::StatefulSetStatus;
use ststui::core::recreate::{COMPLETED, CREATING, DELETING, IN_PROGRESS, progressing};
use ststui::core::{Blocker, Plan, UNKNOWN_STRATEGY};

/// (status, reason, message) of the Progressing condition.
fn condition(s: &StatefulSetStatus) -> Option<(String, String, String)> {
    let c = progressing(s)?;
    Some((
        c.status.clone().unwrap_or_default(),
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    ))
}

fn said(status: &str, reason: &str, message: &str) -> Option<(String, String, String)> {
    Some((status.into(), reason.into(), message.into()))
}

fn recreating(replicas: i32) -> World {
    let mut w = World::new(replicas).recreate(true).timings(1, 1, 3);
    w.settle(60);
    w
}

/// Syncs (ticking a second between) until a plan creates a pod; returns that plan and the
/// plans before it.
fn until_create(w: &mut World, max: usize) -> (Plan, Vec<Plan>) {
    let mut before = Vec::new();
    for _ in 0..max {
        let p = w.sync();
        if pod_actions(&p).iter().any(|a| a.starts_with("create-pod")) {
            return (p, before);
        }
        before.push(p);
        w.tick(1);
    }
    panic!("no pod created in {max} syncs");
}

#[test]
fn ordered_ready_deletes_every_old_pod_at_once_then_creates_one_at_a_time() {
    let mut w = recreating(3);
    assert!(w.converged());
    w.set_image("nginx:2");
    let p = w.sync();
    let mut deleted = pod_actions(&p);
    deleted.sort();
    assert_eq!(
        deleted,
        ["delete-pod web-0 recreate", "delete-pod web-1 recreate", "delete-pod web-2 recreate"],
        "all at once, whatever OrderedReady says"
    );
    assert_eq!(condition(&p.status), said("True", IN_PROGRESS, DELETING));
    assert!(writes_status(&p), "the condition is written");
    let Some(Blocker::Recreate { pods, left }) = &p.waiting_on else {
        panic!("expected the recreate wait, got {:?}", p.waiting_on);
    };
    assert_eq!((pods.len(), *left), (3, 3));
    // While they terminate nothing is created.
    let (p, waiting) = until_create(&mut w, 20);
    assert!(!waiting.is_empty(), "the terminating pods are waited for");
    assert!(waiting.iter().all(|q| matches!(q.waiting_on, Some(Blocker::Recreate { .. }))));
    assert_eq!(pod_actions(&p), ["create-pod web-0"], "then OrderedReady: one pod");
    assert_eq!(condition(&p.status), said("True", IN_PROGRESS, CREATING));
    w.settle(60);
    assert!(w.converged());
    let s = w.status();
    assert_eq!(condition(&s), said("False", COMPLETED, "All pods recreated successfully"));
    for pod in ["web-0", "web-1", "web-2"] {
        assert_eq!(w.revision_of(pod), w.update_revision());
    }
    w.assert_invariants();
}

#[test]
fn parallel_creates_every_pod_at_once_once_the_old_ones_are_gone() {
    let mut w = World::new(4).parallel().recreate(true).timings(1, 1, 2);
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p).len(), 4);
    let (p, _) = until_create(&mut w, 20);
    assert_eq!(pod_actions(&p).len(), 4, "{:?}", pod_actions(&p));
    w.settle(60);
    assert!(w.converged());
    w.assert_invariants();
}

#[test]
fn a_scale_down_during_a_recreate_deletes_the_condemned_in_the_same_burst() {
    let mut w = recreating(4);
    w.set_image("nginx:2");
    w.scale(2);
    let p = w.sync();
    let mut deleted = pod_actions(&p);
    deleted.sort();
    assert_eq!(
        deleted,
        [
            "delete-pod web-0 recreate",
            "delete-pod web-1 recreate",
            "delete-pod web-2 scale-down",
            "delete-pod web-3 scale-down"
        ]
    );
    w.settle(60);
    assert!(w.converged());
    assert_eq!(w.pod_names(), ["web-0", "web-1"]);
    w.assert_invariants();
}

#[test]
fn a_terminating_old_pod_holds_every_creation() {
    let mut w = World::new(2).recreate(true).timings(1, 1, 30);
    w.settle(60);
    w.set_image("nginx:2");
    let first = w.sync();
    let since = progressing(&first.status).and_then(|c| c.last_transition_time.clone());
    w.tick(5);
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "nothing deleted twice, nothing created");
    assert_eq!(condition(&p.status), said("True", IN_PROGRESS, DELETING));
    let now = progressing(&p.status).and_then(|c| c.last_transition_time.clone());
    assert_eq!(now, since, "the same condition keeps its transition time");
    let said = ststui::core::explain::blocker_step(p.waiting_on.as_ref().unwrap()).text;
    assert_eq!(
        said,
        "waiting: web-0, web-1 to terminate — Recreate creates no pod until every old one is gone"
    );
}

#[test]
fn switching_the_type_alone_rolls_nothing() {
    let mut w = World::new(3).timings(1, 1, 3);
    w.options.semantics.recreate_gate = true;
    w.settle(60);
    let rev = w.update_revision();
    w.edit(|s| {
        s.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
    });
    let p = w.sync();
    assert!(pod_actions(&p).is_empty(), "{:?}", pod_actions(&p));
    assert_eq!(p.update_revision, rev, "the revision hash covers the template only");
    assert_eq!(condition(&p.status), None, "nothing to recreate, no condition");
}

#[test]
fn with_the_gate_off_the_set_is_not_reconciled_and_a_warning_is_recorded() {
    let mut w = World::new(2).recreate(false);
    let p = w.sync();
    let warning = p.warning.as_ref().expect("a warning");
    assert_eq!(warning.reason, UNKNOWN_STRATEGY);
    assert_eq!(
        warning.message,
        "statefulset default/web uses Recreate strategy but feature gate \
         StatefulSetRecreateStrategy is disabled"
    );
    assert_eq!(p.error.as_ref().map(|e| e.message.as_str()), Some(warning.message.as_str()));
    assert!(pod_actions(&p).is_empty(), "no pod is created");
    assert!(!writes_status(&p), "no status is computed");
}

#[test]
fn before_1_37_the_type_rolls_as_a_rolling_update() {
    let mut w = World::new(3).version("1.36").recreate(true).timings(1, 1, 1);
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.sync();
    assert_eq!(pod_actions(&p), ["delete-pod web-2 update"], "one at a time, from the top");
    assert!(p.warning.is_none());
    assert_eq!(condition(&p.status), None);
    w.assert_invariants();
}

#[test]
fn a_failed_old_pod_is_deleted_in_the_burst_and_said_failed() {
    let mut w = recreating(3);
    w.set_image("nginx:2");
    w.fail("web-1");
    let p = w.sync();
    let mut deleted = pod_actions(&p);
    deleted.sort();
    assert_eq!(
        deleted,
        ["delete-pod web-0 recreate", "delete-pod web-1 failed", "delete-pod web-2 recreate"]
    );
    w.settle(60);
    assert!(w.converged());
    w.assert_invariants();
}

/// kubernetes#67250 does not hold under Recreate: a broken new pod is never named for a manual
/// delete, and reverting the template alone replaces it (the burst deletes it).
#[test]
fn a_broken_recreate_is_never_a_forced_rollback_and_a_revert_alone_unblocks_it() {
    let mut w = recreating(3);
    w.broken_images.insert("bad:1".into());
    w.set_image("bad:1");
    w.settle(20);
    let p = w.plan();
    assert!(matches!(p.waiting_on, Some(Blocker::Ordered { .. })), "{:?}", p.waiting_on);
    let stuck = {
        let pods: Vec<&k8s_openapi::api::core::v1::Pod> = w.pods.values().collect();
        let claims: Vec<_> = w.claims.values().collect();
        let revisions: Vec<_> = w.revisions.values().collect();
        let o = ststui::core::Observed {
            set: &w.set,
            pods: &pods,
            claims: &claims,
            revisions: &revisions,
        };
        ststui::core::explain::forced_rollback(&o, &p, w.now())
    };
    assert_eq!(stuck, None);
    w.set_image("nginx:1.25");
    w.settle(60);
    assert!(w.converged(), "the revert alone replaced the broken pod");
    assert_eq!(w.revision_of("web-0"), w.update_revision());
    w.assert_invariants();
}
