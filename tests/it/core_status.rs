//! Status computation and the status write (spec section 4 and 2.9).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::core_harness;

use core_harness::{World, writes_status};
use k8s_openapi::api::apps::v1::{StatefulSetCondition, StatefulSetStatus};
use ststui::core::status::{complete_update, needs_write};
use ststui::core::{Effect, Version};

#[test]
fn status_write_is_skipped_when_nothing_changed() {
    let mut w = World::new(2);
    w.settle(40);
    let p = w.sync();
    assert!(!writes_status(&p));
    assert_eq!(p.status.ready_replicas, Some(2), "the plan still carries the computed status");
    w.assert_invariants();
}

#[test]
fn a_new_generation_is_written_even_with_equal_counts() {
    let mut w = World::new(2);
    w.settle(40);
    w.edit(|s| s.revision_history_limit = Some(3));
    let p = w.sync();
    let Some(Effect::WriteStatus(s)) =
        p.effects.iter().find(|e| matches!(e, Effect::WriteStatus(_)))
    else {
        panic!("expected a status write");
    };
    assert_eq!(s.observed_generation, Some(2));
    w.assert_invariants();
}

#[test]
fn conditions_survive_until_another_field_changes_and_are_then_dropped() {
    // Before 1.37: conditions are neither carried nor compared.
    let mut w = World::new(2).version("1.36").timings(1, 1, 5);
    w.settle(40);
    set_custom_condition(&mut w);
    let p = w.sync();
    assert!(!writes_status(&p), "conditions are not compared");
    assert!(w.status().conditions.is_some());
    w.unready("web-1");
    let p = w.sync();
    assert!(writes_status(&p));
    assert_eq!(w.status().conditions, None, "the controller's write replaces the whole status");
    w.assert_invariants();
}

#[test]
fn from_1_37_conditions_are_carried_and_compared() {
    let mut w = World::new(2).timings(1, 1, 5);
    w.settle(40);
    set_custom_condition(&mut w);
    let p = w.sync();
    assert!(!writes_status(&p), "the status carries the stored conditions: nothing differs");
    assert_eq!(p.status.conditions.as_ref().map(Vec::len), Some(1), "carried into the status");
    w.unready("web-1");
    let p = w.sync();
    assert!(writes_status(&p));
    assert_eq!(w.status().conditions.map(|c| c.len()), Some(1), "kept across the write");
    w.assert_invariants();
}

fn set_custom_condition(w: &mut World) {
    if let Some(s) = w.set.status.as_mut() {
        s.conditions = Some(vec![StatefulSetCondition {
            type_: Some("Custom".into()),
            status: Some("True".into()),
            ..Default::default()
        }]);
    }
}

#[test]
fn collision_count_is_not_compared_but_always_present() {
    let mut w = World::new(1);
    w.settle(20);
    let p = w.sync();
    assert_eq!(p.status.collision_count, Some(0));
    let mut other = w.status();
    other.collision_count = Some(7);
    assert!(!needs_write(&w.set, &other, &w.options.semantics));
    other.available_replicas = Some(0);
    assert!(needs_write(&w.set, &other, &w.options.semantics), "availableReplicas is compared");
}

#[test]
fn terminating_pods_count_as_replicas_and_ready_but_not_current() {
    let mut w = World::new(3).timings(1, 1, 5);
    w.settle(40);
    w.scale(2);
    w.sync();
    let p = w.sync();
    assert!(w.is_terminating("web-2"));
    let s = &p.status;
    assert_eq!(s.replicas, 3, "terminating and condemned pods count");
    assert_eq!(s.ready_replicas, Some(3), "a terminating pod that is still Ready counts");
    assert_eq!(s.current_replicas, Some(2), "terminating pods are not current");
    assert_eq!(s.updated_replicas, Some(2));
    w.assert_invariants();
}

#[test]
fn available_replicas_wait_for_min_ready_seconds() {
    for (version, at_deadline) in [("1.33", false), ("1.37", true)] {
        let mut w = World::new(1).min_ready(5).version(version);
        w.sync();
        w.tick(2);
        let p = w.sync();
        assert_eq!((p.status.ready_replicas, p.status.available_replicas), (Some(1), Some(0)));
        w.tick(4);
        let p = w.sync();
        assert_eq!(p.status.available_replicas, Some(0), "{version}: ready 4s");
        w.tick(1);
        let p = w.sync();
        let at_5 = Some(i32::from(at_deadline));
        assert_eq!(p.status.available_replicas, at_5, "{version}: ready exactly 5s");
        w.tick(1);
        let p = w.sync();
        assert_eq!((p.status.ready_replicas, p.status.available_replicas), (Some(1), Some(1)));
        w.assert_invariants();
    }
}

#[test]
fn completion_needs_every_replica_updated_and_ready() {
    let mut w = World::new(2).timings(1, 1, 1);
    w.settle(40);
    let r1 = w.update_revision();
    w.set_image("nginx:2");
    w.sync();
    w.tick(1);
    w.sync();
    w.tick(2);
    let p = w.sync();
    assert_eq!(p.status.current_revision.as_deref(), Some(r1.as_str()), "web-0 still on R1");
    w.settle(40);
    let s = w.status();
    assert_eq!(s.current_revision, s.update_revision);
    assert_eq!(s.current_replicas, s.updated_replicas);
    w.assert_invariants();
}

#[test]
fn completion_ignores_availability_unless_139307_is_on() {
    for requires_available in [false, true] {
        let mut w = World::new(1).min_ready(30);
        w.options.semantics.completion_requires_available = requires_available;
        w.settle(80);
        let r1 = w.update_revision();
        w.set_image("nginx:2");
        for _ in 0..6 {
            w.sync();
            w.tick(1);
        }
        let s = w.status();
        assert_eq!(s.ready_replicas, Some(1));
        assert_eq!(s.available_replicas, Some(0));
        let flipped = s.current_revision != Some(r1.clone());
        assert_eq!(flipped, !requires_available, "#136831 / #139307 switch");
        w.assert_invariants();
    }
}

#[test]
fn complete_update_rule_by_version() {
    let mut w = World::new(2).on_delete();
    w.settle(20);
    let status = StatefulSetStatus {
        replicas: 2,
        ready_replicas: Some(2),
        available_replicas: Some(2),
        updated_replicas: Some(2),
        current_replicas: Some(0),
        current_revision: Some("web-a".into()),
        update_revision: Some("web-b".into()),
        ..Default::default()
    };
    for (v, completes) in [("1.36", false), ("1.37", true)] {
        let sem = v.parse::<Version>().unwrap_or_default().semantics();
        let mut s = status.clone();
        complete_update(&w.set, &mut s, &sem, w.now());
        assert_eq!(s.current_revision.as_deref() == Some("web-b"), completes, "{v}");
        if completes {
            assert_eq!(s.current_replicas, Some(2));
            assert_eq!(s.update_revision.as_deref(), Some("web-b"), "never cleared");
        }
    }
    // Compared against spec.replicas, not status.replicas (#120731).
    w.set.spec.replicas = Some(3);
    let mut s = status.clone();
    complete_update(&w.set, &mut s, &Version::V1_37.semantics(), w.now());
    assert_eq!(s.current_revision.as_deref(), Some("web-a"));
}

#[test]
fn observed_generation_must_grow_to_force_a_write() {
    let mut w = World::new(1);
    w.settle(20);
    let mut s = w.status();
    s.observed_generation = Some(0);
    assert!(
        !needs_write(&w.set, &s, &w.options.semantics),
        "a smaller observedGeneration alone does not write"
    );
    s.observed_generation = Some(5);
    assert!(needs_write(&w.set, &s, &w.options.semantics));
}
