//! Explanations for the console: ordinal roles, next actions in words, the forced-rollback
//! detector (spec 7.1) and the partition warning (7.7 a).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::{World, mu};
use k8s_openapi::api::core::v1::Pod;
use ststui::core::explain::{
    self, PartitionSide, PodState, RevisionRole, StepKind, StuckReason, forced_rollback,
    next_actions, ordinal_roles, partition_warning,
};
use ststui::core::{Observed, Plan};

fn with_observed<T>(w: &World, f: impl FnOnce(&Observed<'_>) -> T) -> T {
    let pods: Vec<&Pod> = w.pods.values().collect();
    let claims: Vec<_> = w.claims.values().collect();
    let revs: Vec<_> = w.revisions.values().collect();
    f(&Observed { set: &w.set, pods: &pods, claims: &claims, revisions: &revs })
}

fn texts(w: &World, p: &Plan) -> Vec<String> {
    with_observed(w, |o| next_actions(o, p).into_iter().map(|s| s.text).collect())
}

#[test]
fn ordinal_roles_cover_revisions_partition_condemned_and_placeholders() {
    let mut w = World::new(4).partition(2).timings(1, 1, 10);
    w.settle(60);
    w.set_image("nginx:2");
    w.sync();
    w.tick(1);
    w.scale(3);
    let p = w.plan();
    let roles = with_observed(&w, |o| ordinal_roles(o, &p, w.now()));
    let by = |o: i32| roles.iter().find(|r| r.ordinal == o).cloned();
    let r0 = by(0).unwrap_or_else(|| panic!("web-0 role"));
    assert_eq!(
        (r0.revision.clone(), r0.partition, r0.condemned),
        (RevisionRole::Current, PartitionSide::Held, false)
    );
    assert_eq!(r0.state, PodState::Available);
    let r3 = by(3).unwrap_or_else(|| panic!("web-3 role"));
    assert!(r3.condemned);
    assert_eq!(r3.state, PodState::Terminating, "deleted for update, still terminating");
    let r2 = by(2).unwrap_or_else(|| panic!("web-2 role"));
    assert_eq!(r2.partition, PartitionSide::Open);
    w.force_delete("web-2");
    let p = w.plan();
    let roles = with_observed(&w, |o| ordinal_roles(o, &p, w.now()));
    let r2 = roles.iter().find(|r| r.ordinal == 2).cloned().unwrap_or_else(|| panic!("web-2"));
    assert_eq!((r2.revision, r2.state), (RevisionRole::None, PodState::Missing));
}

#[test]
fn next_actions_name_pods_revisions_and_reasons() {
    let mut w = World::new(3);
    w.settle(40);
    let r1 = w.update_revision();
    w.set_image("nginx:2");
    let p = w.plan();
    let r2 = p.update_revision.clone();
    let t = texts(&w, &p);
    assert!(t.contains(&format!("delete web-2 for update ({r1} → {r2})")), "{t:?}");
    w.apply(&p);
    w.tick(1);
    let p = w.sync();
    assert!(texts(&w, &p).contains(&format!("create web-2 ({r2})")));
    let p = w.plan();
    let t = texts(&w, &p);
    assert_eq!(
        t.last().map(String::as_str),
        Some("waiting: web-2 Pending — OrderedReady waits for it before the next")
    );
    w.tick(1);
    let p = w.plan();
    let steps = with_observed(&w, |o| next_actions(o, &p));
    let last = steps.last().cloned().unwrap_or_else(|| panic!("a step"));
    assert_eq!(last.text, "waiting: web-2 not Ready — OrderedReady waits for it before the next");
    assert_eq!((last.kind, last.pod.as_deref()), (StepKind::Wait, Some("web-2")));
}

#[test]
fn holds_and_budgets_in_words() {
    let mut w = World::new(3).partition(2);
    w.settle(40);
    w.set_image("nginx:2");
    w.settle(30);
    let p = w.plan();
    assert_eq!(texts(&w, &p).last().map(String::as_str), Some("partition 2 holds web-0..web-1"));

    let mut w = World::new(4).max_unavailable(mu("2"));
    w.settle(60);
    w.set_image("nginx:2");
    let p = w.plan();
    assert_eq!(
        texts(&w, &p).last().map(String::as_str),
        Some("maxUnavailable budget used: 2 of 2")
    );

    let mut w = World::new(2).on_delete();
    w.settle(40);
    w.set_image("nginx:2");
    w.sync();
    let p = w.plan();
    assert_eq!(
        texts(&w, &p).last().map(String::as_str),
        Some("OnDelete: waiting for a manual delete of web-0, web-1")
    );

    let mut w = World::new(3).timings(1, 1, 10);
    w.settle(40);
    w.scale(1);
    w.sync();
    let p = w.plan();
    let t = texts(&w, &p);
    assert_eq!(
        t.last().map(String::as_str),
        Some("web-2 is terminating — scale-down waits for it to go")
    );
}

#[test]
fn forced_rollback_names_the_pod_to_delete() {
    let mut w = World::new(3);
    w.broken_images.insert("bad:1".into());
    w.settle(40);
    w.set_image("bad:1");
    w.settle(10);
    let p = w.plan();
    let f =
        with_observed(&w, |o| forced_rollback(o, &p, w.now())).unwrap_or_else(|| panic!("stuck"));
    assert_eq!((f.pod.as_str(), f.reason.clone()), ("web-2", StuckReason::BrokenUpdate));
    assert!(f.to_string().contains("revert the template"));
    w.set_image("nginx:1");
    let p = w.sync();
    let f =
        with_observed(&w, |o| forced_rollback(o, &p, w.now())).unwrap_or_else(|| panic!("stuck"));
    assert_eq!(f.pod, "web-2");
    assert!(matches!(f.reason, StuckReason::OldRevision { .. }));
    assert!(f.to_string().contains("delete web-2"));
    assert!(f.stuck_for_secs.is_some_and(|s| s > 0));
    // A healthy set is never reported.
    let mut ok = World::new(2);
    ok.settle(30);
    let p = ok.plan();
    assert!(with_observed(&ok, |o| forced_rollback(o, &p, ok.now())).is_none());
}

#[test]
fn raising_the_partition_warns_which_pods_stay_updated() {
    let mut w = World::new(4);
    w.settle(60);
    w.set_image("nginx:2");
    w.sync();
    w.tick(1);
    w.sync();
    assert_eq!(w.revision_of("web-3"), w.update_revision());
    let p = w.plan();
    let warn =
        with_observed(&w, |o| partition_warning(o, &p, 4)).unwrap_or_else(|| panic!("warning"));
    assert_eq!(warn.stays_updated, ["web-3"]);
    assert_eq!(warn.newly_held, ["web-0", "web-1", "web-2"]);
    assert!(warn.to_string().contains("never reverts"));
    assert!(with_observed(&w, |o| partition_warning(o, &p, 0)).is_none(), "lowering is no warning");
}

#[test]
fn every_blocker_has_words() {
    use ststui::core::{Blocker, PodWait};
    let all = [
        Blocker::SetDeleting,
        Blocker::Ordered {
            pod: "web-1".into(),
            ordinal: 1,
            wait: PodWait::NotAvailable { min_ready_seconds: 5 },
        },
        Blocker::TerminalPod { pod: "web-1".into(), ordinal: 1 },
        Blocker::StaleClaim { pod: "web-1".into(), claim: "data-web-1".into() },
        Blocker::ClaimTerminating { pod: "web-1".into(), claim: "data-web-1".into() },
        Blocker::CondemnedTerminating { pod: "web-4".into() },
        Blocker::CondemnedUnhealthy {
            pod: "web-4".into(),
            first_unavailable: Some("web-3".into()),
        },
        Blocker::ScaleDownStep { pod: "web-4".into() },
        Blocker::UpdateStep { pod: "web-2".into() },
        Blocker::UpdateWaiting { pod: "web-2".into(), wait: PodWait::NotReady },
        Blocker::MaxUnavailable { unavailable: 1, max: 1 },
        Blocker::Error { message: "boom".into() },
    ];
    for b in all {
        let s = explain::blocker_step(&b);
        assert!(!s.text.is_empty());
        if let Some(pod) = &s.pod {
            assert!(s.text.contains(pod.as_str()), "{}", s.text);
        }
    }
}

#[test]
fn an_unhealthy_pod_held_by_the_partition_is_not_a_forced_rollback() {
    let mut w = World::new(3).partition(2);
    w.settle(40);
    w.set_image("nginx:2");
    w.settle(20);
    w.unready("web-0");
    let p = w.plan();
    assert!(matches!(p.waiting_on, Some(ststui::core::Blocker::Ordered { .. })));
    assert!(with_observed(&w, |o| forced_rollback(o, &p, w.now())).is_none());
    let steps = with_observed(&w, |o| next_actions(o, &p));
    let s = explain::step_for(&steps, "web-0").map(|s| s.kind);
    assert_eq!(s, Some(StepKind::Wait));
}

/// A pod on the current revision the rollout has not reached yet (not held by the partition)
/// that is not Ready is on its way or unhealthy, never a forced rollback: `wait` called it
/// stuck at once when `abort` had just recreated it and the next image was set.
#[test]
fn an_unready_pod_on_the_current_revision_above_the_partition_is_not_a_forced_rollback() {
    let mut w = World::new(3);
    w.settle(40);
    w.set_image("nginx:2");
    w.unready("web-0");
    let p = w.sync();
    assert!(
        matches!(&p.waiting_on, Some(ststui::core::Blocker::Ordered { pod, .. }) if pod == "web-0"),
        "{:?}",
        p.waiting_on
    );
    assert_ne!(p.current_revision, p.update_revision);
    assert_eq!(w.revision_of("web-0"), p.current_revision);
    assert!(with_observed(&w, |o| forced_rollback(o, &p, w.now())).is_none());
}
