//! Mirror and keymap tests: objects applied from backend events, indexes, spans; the keymap
//! table's consistency (no conflicts, help and footer derived from it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use std::collections::HashSet;

use crate::support::objects::web;
use app_fixtures::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ststui::app::Action;
use ststui::app::keymap::{self, BINDINGS, Context};
use ststui::app::mirror::Mirror;
use ststui::backend::{Capabilities, Object};

#[test]
fn applies_replaces_and_deletes_objects() {
    let mut m = Mirror::default();
    assert!(
        m.apply(Object::Set(std::sync::Arc::new(set("web", 3, 0, "nginx:1", "web-a", "web-a"))))
    );
    let g = m.generation();
    assert!(
        !m.apply(Object::Set(std::sync::Arc::new(set("web", 3, 0, "nginx:1", "web-a", "web-a"))))
    );
    assert_eq!(m.generation(), g, "an identical object changes nothing");
    assert!(
        m.apply(Object::Set(std::sync::Arc::new(set("web", 4, 0, "nginx:1", "web-a", "web-a"))))
    );
    assert_eq!(m.set(&web()).and_then(|s| s.spec.replicas), Some(4));
    for o in [2, 0, 1] {
        m.apply(Object::Pod(std::sync::Arc::new(pod("web", o, "web-a", true))));
    }
    // A pod of another set with a prefix-sharing name is not web's.
    m.apply(Object::Pod(std::sync::Arc::new(pod("web-x", 0, "web-x-a", true))));
    let ords: Vec<i32> = m.pods_of(&web()).map(|(o, _)| o).collect();
    assert_eq!(ords, vec![0, 1, 2]);
    assert!(m.pod_at(&web(), 1).is_some());
    assert!(m.delete(&Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", true)))));
    assert!(!m.delete(&Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", true)))));
    assert!(m.pod_at(&web(), 1).is_none());
    assert_eq!(m.pods_of(&web()).count(), 2);
    assert_eq!(m.pods_in(NS).count(), 3);
}

#[test]
fn the_ordinal_index_follows_each_pods_newest_version_and_its_own_deletion() {
    let mut m = Mirror::default();
    m.apply(Object::Set(std::sync::Arc::new(set("web", 3, 0, "nginx:1", "web-a", "web-a"))));
    m.apply(Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", false))));
    m.apply(Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", true))));
    let ready = |m: &Mirror| m.pod_at(&web(), 1).map(ststui::core::pod::is_ready);
    assert_eq!(ready(&m), Some(true), "the index holds the pod as last applied");
    // `web-01` parses as ordinal 1 too: deleting it leaves web-1 where it is.
    let mut alike = pod("web", 1, "web-a", true);
    alike.metadata.name = Some("web-01".into());
    m.apply(Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", true))));
    assert!(!m.delete(&Object::Pod(std::sync::Arc::new(alike))));
    assert_eq!(ready(&m), Some(true));
    assert_eq!(m.pods_of(&web()).map(|(o, _)| o).collect::<Vec<_>>(), vec![1]);
}

#[test]
fn span_covers_desired_and_condemned_ordinals() {
    let mut m = Mirror::default();
    m.apply(Object::Set(std::sync::Arc::new(set("web", 3, 0, "nginx:1", "web-a", "web-a"))));
    assert_eq!(m.ordinal_span(&web()), Some((0, 2)));
    // Scaled down to 3 while web-5 still terminates: the grid keeps showing it.
    m.apply(Object::Pod(std::sync::Arc::new(pod("web", 5, "web-a", true))));
    assert_eq!(m.ordinal_span(&web()), Some((0, 5)));
    let mut zero = set("web", 0, 0, "nginx:1", "web-a", "web-a");
    m.apply(Object::Set(std::sync::Arc::new(zero.clone())));
    assert_eq!(m.ordinal_span(&web()), Some((5, 5)));
    m.delete(&Object::Pod(std::sync::Arc::new(pod("web", 5, "web-a", true))));
    assert_eq!(m.ordinal_span(&web()), None);
    // A start ordinal shifts the range.
    zero.spec.replicas = Some(2);
    zero.spec.ordinals = Some(k8s_openapi::api::apps::v1::StatefulSetOrdinals { start: Some(10) });
    m.apply(Object::Set(std::sync::Arc::new(zero)));
    assert_eq!(m.ordinal_span(&web()), Some((10, 11)));
}

#[test]
fn revisions_of_a_set_are_owned_and_sorted() {
    let mut m = Mirror::default();
    m.apply(Object::Set(std::sync::Arc::new(set("web", 3, 0, "nginx:1", "web-a", "web-b"))));
    m.apply(Object::Revision(std::sync::Arc::new(revision("web", "web-b", 2, "nginx:2"))));
    m.apply(Object::Revision(std::sync::Arc::new(revision("web", "web-a", 1, "nginx:1"))));
    // Owned by another set: excluded.
    m.apply(Object::Revision(std::sync::Arc::new(revision("db", "web-zzz", 3, "pg:16"))));
    let names: Vec<_> =
        m.revisions_of(&web()).iter().filter_map(|r| r.metadata.name.clone()).collect();
    assert_eq!(names, vec!["web-a", "web-b"]);
}

#[test]
fn keymap_has_no_conflicting_keys_within_a_context() {
    // A key may mean different things on different backends, never two on one.
    for caps in [Capabilities::simulator(), Capabilities::cluster()] {
        let mut seen = HashSet::new();
        for b in BINDINGS.iter().filter(|b| b.when.holds(&caps)) {
            for k in b.keys {
                assert!(
                    seen.insert((b.context, k.code, k.mods)),
                    "{:?} is bound twice in {:?} ({caps:?})",
                    k.label(),
                    b.context
                );
            }
        }
    }
}

#[test]
fn every_normal_binding_has_help_and_the_footer_is_derived() {
    let sections = keymap::help_sections(None);
    let lines: usize = sections.iter().map(|(_, l)| l.len()).sum();
    let normal = BINDINGS.iter().filter(|b| b.context == Context::Normal).count();
    assert_eq!(lines, normal);
    assert!(sections.iter().flat_map(|(_, l)| l).all(|l| !l.help.is_empty()));
    let (sim, cluster) = (Capabilities::simulator(), Capabilities::cluster());
    let footer = keymap::footer(Context::Normal, &sim);
    assert!(footer.contains(&("[".to_string(), "partition−")));
    assert!(footer.contains(&("?".to_string(), "help")));
    assert!(footer.contains(&("space".to_string(), "pause")));
    let footer = keymap::footer(Context::Normal, &cluster);
    assert!(footer.contains(&("space".to_string(), "freeze")), "{footer:?}");
    assert!(!footer.iter().any(|(_, l)| *l == "pause"), "{footer:?}");
    // The console's footer leaves out what the backend never offers.
    let st = ststui::app::AppState::new(cluster.clone(), Default::default());
    let hints = ststui::app::view::footer::hints(&st);
    assert!(hints.iter().any(|h| h.label == "freeze"), "{hints:?}");
    assert!(!hints.iter().any(|h| h.label == "step" || h.label == "pause"), "{hints:?}");
    assert_eq!(
        keymap::key_on(Context::Normal, &sim, Action::TogglePause).as_deref(),
        Some("space")
    );
    assert_eq!(
        keymap::key_on(Context::Normal, &cluster, Action::ToggleFreeze).as_deref(),
        Some("space")
    );
    assert_eq!(keymap::key_on(Context::Normal, &sim, Action::ToggleFreeze).as_deref(), Some("F"));
    assert_eq!(keymap::key_for(Context::Normal, Action::DeletePod).as_deref(), Some("ctrl-d"));
    // The help overlay lists what applies on this backend only.
    let on_cluster: usize =
        keymap::help_sections(Some(&cluster)).iter().map(|(_, l)| l.len()).sum();
    let on_sim: usize = keymap::help_sections(Some(&sim)).iter().map(|(_, l)| l.len()).sum();
    assert_eq!(
        on_cluster + on_sim,
        lines
            + BINDINGS
                .iter()
                .filter(|b| b.context == Context::Normal && b.when == keymap::When::Always)
                .count()
    );
}

#[test]
fn space_pauses_in_the_simulator_and_freezes_on_a_cluster() {
    let space = KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE);
    let sim = Capabilities::simulator();
    let cluster = Capabilities::cluster();
    assert_eq!(keymap::lookup(Context::Normal, &sim, &space), Some(Action::TogglePause));
    assert_eq!(keymap::lookup(Context::Normal, &cluster, &space), Some(Action::ToggleFreeze));
}

#[test]
fn lookup_ignores_shift_on_characters_but_not_control() {
    let caps = Capabilities::simulator();
    let shifted = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
    assert_eq!(keymap::lookup(Context::Normal, &caps, &shifted), Some(Action::Help));
    let ctrl_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(keymap::lookup(Context::Normal, &caps, &ctrl_d), Some(Action::DeletePod));
    let plain_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::NONE);
    assert_eq!(keymap::lookup(Context::Normal, &caps, &plain_d), None);
    let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    assert_eq!(keymap::lookup(Context::Help, &caps, &q), Some(Action::Cancel));
    assert_eq!(keymap::lookup(Context::Prompt, &caps, &q), None, "q is text in a prompt");
}

/// A cluster's pods arrive without container specs (`cluster::lean`): the image a pod shows is
/// its own spec's where it has one, else its revision's template, else what its container runs.
#[test]
fn a_pods_image_comes_from_its_spec_its_revision_or_what_runs() {
    use k8s_openapi::api::core::v1::{Container, ContainerStatus, PodSpec};
    use std::sync::Arc;
    let mut m = Mirror::default();
    m.apply(Object::Revision(Arc::new(revision("web", "web-a", 1, "nginx:1.25"))));
    m.apply(Object::Revision(Arc::new(revision("web", "web-b", 2, "nginx:1.26"))));
    let lean = pod("web", 0, "web-b", true);
    assert_eq!(m.pod_image(&lean), Some("nginx:1.26"), "the revision its label names");
    let mut own = pod("web", 0, "web-b", true);
    let c =
        Container { name: "app".into(), image: Some("nginx:hotfix".into()), ..Default::default() };
    own.spec = Some(PodSpec { containers: vec![c], ..Default::default() });
    assert_eq!(m.pod_image(&own), Some("nginx:hotfix"), "a spec the pod holds comes first");
    let mut orphan = pod("web", 1, "web-gone", true);
    assert_eq!(m.pod_image(&orphan), None, "no revision, no status: unknown, never a guess");
    orphan.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
        name: "app".into(),
        image: "docker.io/library/nginx:1.24".into(),
        ..Default::default()
    }]);
    assert_eq!(m.pod_image(&orphan), Some("docker.io/library/nginx:1.24"));
}
