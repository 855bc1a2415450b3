//! Events through the reducer: the backend is asked for the selected pod's Events (once per
//! change of selection), the pod before's leave the mirror, the detail lists them Warnings
//! first with count and age, and a set's FailedCreate joins the controller pane until the
//! controller succeeds since.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use std::sync::Arc;

use app_fixtures::*;
use k8s_openapi::api::core::v1::{Event as KubeEvent, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use ststui::app::Msg;
use ststui::app::view::Screen;
use ststui::backend::{BackendEvent, Capabilities, ObjKind, ObjRef, Object, Op, Scope, ViewOp};

fn event(name: &str, kind: &str, about: &str, reason: &str, warning: bool, ago_s: i64) -> Msg {
    let e = KubeEvent {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            kind: Some(kind.into()),
            name: Some(about.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(format!("{reason} happened")),
        type_: Some(if warning { "Warning" } else { "Normal" }.into()),
        count: Some(if warning { 7 } else { 1 }),
        last_timestamp: Some(Time(t0() - k8s_openapi::jiff::SignedDuration::from_secs(ago_s))),
        ..Default::default()
    };
    applied(Object::Event(Arc::new(e)))
}

fn pod_events_asked(cmds: &[ststui::app::Command]) -> Vec<Option<String>> {
    ops(cmds)
        .into_iter()
        .filter_map(|op| match op {
            Op::View(ViewOp::PodEvents(p)) => Some(p.map(|p| p.name)),
            _ => None,
        })
        .collect()
}

fn detail_rows(st: &ststui::app::AppState) -> Vec<(String, String)> {
    let screen = Screen::of(st);
    let d = screen.detail().expect("a pod is selected");
    d.rows.iter().map(|(l, v)| (l.to_string(), v.clone())).collect()
}

#[test]
fn the_selected_pods_events_are_asked_for_once_per_selection_and_shown_warnings_first() {
    let mut st = demo(Capabilities::simulator());
    // The demo's batch end asked for web-0's.
    assert_eq!(st.events_pod, Some(ObjRef::new("default", "web-0")));
    let cmds = run(&mut st, [Msg::BatchEnd]);
    assert!(pod_events_asked(&cmds).is_empty(), "not again while the selection stays");
    run(
        &mut st,
        [
            event("e1", "Pod", "web-0", "Started", false, 30),
            event("e2", "Pod", "web-0", "Unhealthy", true, 90),
            event("e3", "Pod", "web-0", "Pulled", false, 10),
        ],
    );
    let rows = detail_rows(&st);
    let events: Vec<_> = rows.iter().filter(|(l, _)| l == "warning" || l == "event").collect();
    assert_eq!(events.len(), 3, "{rows:#?}");
    assert_eq!(events[0].0, "warning");
    assert_eq!(events[0].1, "Unhealthy ×7, 90s ago: Unhealthy happened");
    assert!(events[1].1.starts_with("Pulled, 10s ago"), "newest next: {events:#?}");
    // Another pod: asked for, the one before's forgotten.
    let cmds = run(&mut st, [key('j'), Msg::BatchEnd]);
    assert_eq!(pod_events_asked(&cmds), [Some("web-1".to_string())]);
    assert!(st.mirror.events().is_empty(), "web-0's Events left with its selection");
    // Its listing replaces what was held about it.
    let listed = BackendEvent::Listed {
        kind: ObjKind::Event,
        scope: Scope {
            namespace: Some("default".into()),
            about: Some("Pod/web-1".into()),
            ..Scope::default()
        },
        objects: Vec::new(),
    };
    run(&mut st, [event("e4", "Pod", "web-1", "BackOff", true, 5), Msg::Backend(listed)]);
    assert!(st.mirror.events().is_empty(), "a listing without it: gone");
}

#[test]
fn more_events_than_the_detail_shows_are_counted() {
    let mut st = demo(Capabilities::simulator());
    let many: Vec<Msg> =
        (0..7).map(|i| event(&format!("e{i}"), "Pod", "web-0", "Pulled", false, i)).collect();
    run(&mut st, many);
    let rows = detail_rows(&st);
    let more = rows.iter().find(|(l, _)| l == "events").expect("a count of the rest");
    assert_eq!(more.1, "3 more (kubectl describe pod web-0)");
}

#[test]
fn a_sets_failed_create_joins_the_controller_pane() {
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [event("f1", "StatefulSet", "web", "FailedCreate", true, 20), Msg::BatchEnd]);
    let screen = Screen::of(&st);
    let lines: Vec<String> = screen.controller.iter().map(|l| l.text.clone()).collect();
    assert!(
        lines.iter().any(|l| l == "the controller retries: FailedCreate ×7: FailedCreate happened"),
        "{lines:#?}"
    );
    // The controller succeeded since (a lost reply, a passing outage): no longer a blocker …
    run(&mut st, [event("s1", "StatefulSet", "web", "SuccessfulCreate", false, 5), Msg::BatchEnd]);
    let screen = Screen::of(&st);
    assert!(!screen.controller.iter().any(|l| l.text.contains("FailedCreate")), "{screen:#?}");
    // … until it fails again, later than that success.
    run(&mut st, [event("f1", "StatefulSet", "web", "FailedCreate", true, 2), Msg::BatchEnd]);
    let screen = Screen::of(&st);
    let retries = screen.controller.iter().filter(|l| l.text.contains("retries: FailedCreate"));
    assert_eq!(retries.count(), 1);
    // An old one is history, not a blocker.
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [event("f1", "StatefulSet", "web", "FailedCreate", true, 3600), Msg::BatchEnd]);
    let screen = Screen::of(&st);
    assert!(!screen.controller.iter().any(|l| l.text.contains("FailedCreate")));
}

#[test]
fn a_controller_without_the_recreate_gate_is_said_from_its_warning() {
    let mut st = demo(Capabilities::simulator());
    let ev = event("u1", "StatefulSet", "web", "UnknownStrategy", true, 20);
    run(&mut st, [ev, Msg::BatchEnd]);
    let screen = Screen::of(&st);
    let said = screen
        .controller
        .iter()
        .any(|l| l.text.starts_with("the controller retries: UnknownStrategy"));
    assert!(said, "{:#?}", screen.controller);
}

#[test]
fn events_of_an_earlier_pod_of_the_same_name_are_not_the_pods() {
    let mut st = demo(Capabilities::simulator());
    let mut pod = st.mirror.pod(&ObjRef::new("default", "web-0")).cloned().expect("web-0");
    let uid = "web-0-now".to_string();
    pod.metadata.uid = Some(uid.clone());
    run(&mut st, [applied(Object::Pod(Arc::new(pod)))]);
    let of = |name: &str, reason: &str, uid: Option<&str>| {
        let Msg::Backend(BackendEvent::Applied(Object::Event(e))) =
            event(name, "Pod", "web-0", reason, false, 20)
        else {
            unreachable!()
        };
        let mut e = (*e).clone();
        e.involved_object.uid = uid.map(str::to_string);
        applied(Object::Event(Arc::new(e)))
    };
    run(
        &mut st,
        [
            of("old", "Started", Some("an-earlier-web-0")),
            of("now", "Scheduled", Some(&uid)),
            of("unsaid", "Pulled", None),
        ],
    );
    let rows = detail_rows(&st);
    let words: Vec<&str> =
        rows.iter().filter(|(l, _)| l == "event").map(|(_, w)| w.as_str()).collect();
    assert!(words.iter().any(|w| w.starts_with("Scheduled")), "{rows:#?}");
    assert!(words.iter().any(|w| w.starts_with("Pulled")), "no uid: kept, {rows:#?}");
    assert!(!words.iter().any(|w| w.starts_with("Started")), "the earlier pod's: {rows:#?}");
}
