//! Reducer tests about time and the mirror: the clock and its extrapolation, status expiry, the
//! bounded timeline, identical re-applies, notices, and the maxUnavailable prompt. Driven with
//! hand-built objects (no simulator).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use crate::support::objects::web;
use app_fixtures::*;
use crossterm::event::KeyCode;
use ststui::app::Msg;
use ststui::app::state::{Modal, Origin, TIMELINE_CAPACITY};
use ststui::backend::{BackendEvent, ClusterOp, Event, EventKind, Object, Op};

#[test]
fn status_messages_expire_after_ticks() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('[')]);
    assert!(st.wants_tick());
    for _ in 0..10 {
        run(&mut st, [Msg::Tick]);
    }
    assert!(st.status.is_none());
    assert!(!st.wants_tick(), "no ticks once nothing counts down");
}

#[test]
fn timeline_is_bounded() {
    let mut st = demo(sim_caps());
    for i in 0..(TIMELINE_CAPACITY as u64 + 10) {
        let ev = Event {
            t_ms: i,
            kind: EventKind::Kubelet { pod: "web-0".into(), event: "ready".into() },
        };
        run(&mut st, [Msg::Backend(BackendEvent::Timeline(ev))]);
    }
    assert_eq!(st.timeline.len(), TIMELINE_CAPACITY);
    assert_eq!(st.timeline.iter().next().map(|e| e.t_ms), Some(10));
}

#[test]
fn clock_marks_dirty_only_when_the_shown_second_changes() {
    let mut st = demo(sim_caps());
    st.dirty = false;
    let at = |ms: i64| t0().checked_add(k8s_openapi::jiff::SignedDuration::from_millis(ms));
    let Ok(half) = at(500) else { panic!() };
    run(&mut st, [Msg::Backend(BackendEvent::Clock { now: half, speed: 1.0 })]);
    assert!(!st.dirty);
    let Ok(later) = at(1500) else { panic!() };
    run(&mut st, [Msg::Backend(BackendEvent::Clock { now: later, speed: 1.0 })]);
    assert!(st.dirty);
    assert_eq!(st.elapsed_ms(), 1500);
}

#[test]
fn identical_reapply_is_not_a_change_and_the_advisor_follows_the_mirror() {
    let mut st = demo(sim_caps());
    let a = st.advisor.clone().unwrap_or_else(|| panic!("advisor did not run after Synced"));
    assert_eq!(a.set, web());
    st.dirty = false;
    run(
        &mut st,
        [applied(Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", true)))), Msg::BatchEnd],
    );
    assert!(!st.dirty, "an identical object is not a visible change");
    assert_eq!(st.advisor.as_ref().map(|a| a.mirror_generation), Some(a.mirror_generation));
    run(
        &mut st,
        [applied(Object::Pod(std::sync::Arc::new(pod("web", 1, "web-a", false)))), Msg::BatchEnd],
    );
    assert!(st.dirty);
    let b = st.advisor.clone().unwrap_or_else(|| panic!("advisor lost"));
    assert!(b.mirror_generation > a.mirror_generation);
}

#[test]
fn nothing_selected_before_the_first_set() {
    let mut st = ststui::app::AppState::new(sim_caps(), Default::default());
    run(&mut st, [key('[')]);
    assert!(status_text(&st).contains("waiting for the backend"), "{}", status_text(&st));
    run(&mut st, [Msg::Backend(BackendEvent::Synced)]);
    run(&mut st, [ctrl('d')]);
    assert!(status_text(&st).contains("there is no StatefulSet"), "{}", status_text(&st));
}

#[test]
fn operator_entries_share_the_backend_time_axis() {
    // The backend's history (up to 10 s) arrives before its first clock reading.
    let mut st = ststui::app::AppState::new(sim_caps(), Default::default());
    let ev = Event {
        t_ms: 10_000,
        kind: EventKind::Kubelet { pod: "web-4".into(), event: "ready".into() },
    };
    run(&mut st, [Msg::Backend(BackendEvent::Timeline(ev))]);
    let Ok(now) = t0().checked_add(k8s_openapi::jiff::SignedDuration::from_millis(10_500)) else {
        panic!()
    };
    run(&mut st, [Msg::Backend(BackendEvent::Clock { now, speed: 1.0 })]);
    assert_eq!(st.elapsed_ms(), 10_000, "t=0 is the backend's start, not the first reading");
}

#[test]
fn the_backend_clock_is_extrapolated_between_reports() {
    let mut st = ststui::app::AppState::new(sim_caps(), Default::default());
    let wall = std::time::Instant::now();
    run(&mut st, [Msg::Wall(wall), Msg::Backend(BackendEvent::Clock { now: t0(), speed: 2.0 })]);
    assert_eq!(st.elapsed_ms(), 0);
    st.dirty = false;
    run(&mut st, [Msg::Wall(wall + std::time::Duration::from_millis(400))]);
    assert!(!st.dirty, "the wall clock alone never causes a redraw");
    assert_eq!(st.elapsed_ms(), 800, "0.4 wall seconds at ×2");
    // Never more than a second ahead of the backend's last report (a backend that is behind,
    // or blocked, shows its own time, so nothing is stamped later than what follows it).
    run(&mut st, [Msg::Wall(wall + std::time::Duration::from_millis(1500))]);
    assert_eq!(st.elapsed_ms(), 1000);
    // While the simulator reports it cannot keep up, the achieved speed is what extrapolates.
    run(&mut st, [Msg::Backend(BackendEvent::Pace { asked: 2.0, achieved: Some(0.5) })]);
    assert_eq!(st.elapsed_ms(), 750, "1.5 wall seconds at the achieved ×0.5");
    // An operator entry gets the extrapolated time.
    let mut st = demo(sim_caps());
    run(&mut st, [Msg::Wall(wall), Msg::Backend(BackendEvent::Clock { now: t0(), speed: 1.0 })]);
    run(&mut st, [Msg::Wall(wall + std::time::Duration::from_millis(700)), key('[')]);
    let t = st.timeline.iter().last().map(|e| (e.t_ms, e.origin));
    assert_eq!(t, Some((700, Origin::Operator)));
}

#[test]
fn max_unavailable_takes_a_number_or_a_percentage() {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let mut st = demo(sim_caps());
    run(&mut st, [key('m'), key('x')]);
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt") };
    assert!(p.error.as_deref().unwrap_or_default().contains("percentage"));
    // Enter on nothing typed says what to type, not `"" is not a number`.
    run(&mut st, [code(KeyCode::Enter)]);
    let Modal::Prompt(p) = &st.modal else { panic!("the prompt stays open") };
    let said = p.error.clone().unwrap_or_default();
    assert!(said.starts_with("type a number (e.g. 2) or a percentage"), "{said}");
    assert!(!said.contains("\"\""), "{said}");
    let cmds = run(&mut st, [key('2'), key('5'), key('%'), code(KeyCode::Enter)]);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetMaxUnavailable {
            set: web(),
            value: IntOrString::String("25%".into())
        })]
    );
    run(&mut st, [key('m'), key('0'), code(KeyCode::Enter)]);
    let Modal::Prompt(p) = &st.modal else { panic!("the prompt stays open") };
    assert!(p.error.as_deref().unwrap_or_default().contains("at least 1"));
    let cmds = run(&mut st, [ctrl('u'), key('3'), code(KeyCode::Enter)]);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetMaxUnavailable { set: web(), value: IntOrString::Int(3) })]
    );
}

#[test]
fn a_backend_notice_goes_to_the_status_line_and_the_timeline() {
    let mut st = demo(sim_caps());
    let before = st.timeline.len();
    let text = "script finished: 3 expectation(s) held";
    run(&mut st, [Msg::Backend(BackendEvent::Notice(text.into()))]);
    assert_eq!(status_text(&st), text);
    assert_eq!(st.timeline.len(), before + 1);
    let last = st.timeline.iter().last().map(|e| e.kind.clone());
    assert_eq!(last, Some(EventKind::Notice { text: text.into() }));
    // Exported as its own type: a notice is no script line.
    let ev = ststui::backend::Event { t_ms: 0, kind: EventKind::Notice { text: text.into() } };
    let json = serde_json::to_value(&ev).unwrap();
    assert_eq!(json["type"], "notice", "{json}");
    assert!(json.get("line").is_none(), "{json}");
}
