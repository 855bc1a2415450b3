//! Reducer tests of console behaviour added while hardening: speed steps that come back to ×1,
//! the key that jumps to the pod the controller waits on, timeline lines attributed to their
//! set with a filter, and the dropped-entries count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

mod app_fixtures;

use app_fixtures::*;
use ststui::app::Msg;
use ststui::app::state::Origin;
use ststui::app::view::timeline::last_lines;
use ststui::backend::{BackendEvent, Event, EventKind, Object, Op, SimOp};
use ststui::core::{Blocker, PodWait};

#[test]
fn speed_steps_come_back_to_x1() {
    let mut st = demo(sim_caps());
    for _ in 0..20 {
        run(&mut st, [key('>')]);
    }
    assert_eq!(st.speed, 1000.0);
    assert!(status_text(&st).contains("fastest"), "{}", status_text(&st));
    let mut down = 0;
    while st.speed > 1.0 && down < 20 {
        run(&mut st, [key('<')]);
        down += 1;
    }
    assert_eq!(st.speed, 1.0, "stepping down from ×1000 missed ×1");
    // From a speed that is not on the ladder (`--speed 3`).
    st.speed = 3.0;
    assert_eq!(ops(&run(&mut st, [key('<')])), vec![Op::Sim(SimOp::SetSpeed { speed: 2.0 })]);
    run(&mut st, [key('<')]);
    assert_eq!(st.speed, 1.0);
}

#[test]
fn w_selects_the_pod_the_controller_waits_on() {
    let mut st = demo(sim_caps());
    // Nothing waits and nothing is to do: `w` says so and keeps the selection.
    st.selected_ordinal = 1;
    if let Some(a) = st.advisor.as_mut() {
        a.plan.waiting_on = None;
        a.plan.effects.clear();
    }
    st.derived = None; // derived again from the plan just edited
    run(&mut st, [Msg::BatchEnd, key('w')]);
    assert_eq!(st.selected_ordinal, 1, "{}", status_text(&st));
    assert!(status_text(&st).contains("waits on no pod"), "{}", status_text(&st));
    // OrderedReady waits on web-3: `w` selects it and says why.
    if let Some(a) = st.advisor.as_mut() {
        let pod = "web-3".to_string();
        a.plan.waiting_on = Some(Blocker::Ordered { pod, ordinal: 3, wait: PodWait::NotReady });
    }
    run(&mut st, [key('w')]);
    assert_eq!(st.selected_ordinal, 3);
    assert!(status_text(&st).contains("web-3: the controller waits on it"), "{}", status_text(&st));
}

fn timeline(kind: EventKind) -> Msg {
    Msg::Backend(BackendEvent::Timeline(Event { t_ms: 1000, kind }))
}

fn kubelet(pod: &str) -> EventKind {
    EventKind::Kubelet { pod: pod.into(), event: "ready".into() }
}

#[test]
fn with_several_sets_lines_name_their_set_and_t_filters() {
    let mut st = demo(sim_caps());
    let db = set("db", 2, 0, "postgres:16", "db-a", "db-a");
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(db))), Msg::BatchEnd]);
    run(&mut st, [timeline(kubelet("web-1")), timeline(kubelet("db-0"))]);
    let cmd = EventKind::Command { line: 0, text: "kubelet start=2s".into() };
    run(&mut st, [timeline(cmd)]);
    let lines = last_lines(&st, 10);
    let sets: Vec<Option<&str>> = lines.iter().map(|l| l.set.as_deref()).collect();
    assert_eq!(sets, [Some("web"), Some("db"), None]);
    // `T`: only web's lines, and the line about no set.
    run(&mut st, [key('T')]);
    assert_eq!(st.timeline.only(), Some("web"));
    let texts: Vec<String> = last_lines(&st, 10).into_iter().map(|l| l.text).collect();
    assert_eq!(texts, ["web-1 ready", "kubelet start=2s"], "{texts:?}");
    assert!(status_text(&st).contains("only web's lines"), "{}", status_text(&st));
    // Operator commands are attributed too.
    run(&mut st, [key('[')]);
    let last = st.timeline.iter().last().map(|e| (e.origin, e.set.clone()));
    assert_eq!(last, Some((Origin::Operator, Some("web".into()))));
    run(&mut st, [key('T')]);
    assert_eq!(st.timeline.only(), None);
    assert_eq!(last_lines(&st, 10).len(), 4);
}

#[test]
fn one_set_needs_no_set_column() {
    let mut st = demo(sim_caps());
    run(&mut st, [timeline(kubelet("web-1"))]);
    assert!(last_lines(&st, 10).iter().all(|l| l.set.is_none()));
}

/// `b` breaks the image, not the pod: the pod's image (here the template's: the fixture's pods
/// carry no spec) is marked broken and `b` again fixes it; both are logged in scenario syntax.
#[test]
fn b_breaks_and_fixes_the_image() {
    use ststui::backend::Fault;
    let mut st = demo(sim_caps());
    run(&mut st, [key('l')]);
    let broken = Fault::BrokenImage { image: "nginx:1.26".into(), broken: true };
    assert_eq!(ops(&run(&mut st, [key('b')])), vec![Op::from(broken)]);
    assert!(st.broken_images.contains("nginx:1.26"));
    assert!(status_text(&st).contains("nginx:1.26 is broken"), "{}", status_text(&st));
    let logged = st.timeline.iter().last().map(|e| e.kind.clone());
    let want = EventKind::Command { line: 0, text: "break-image nginx:1.26".into() };
    assert_eq!(logged, Some(want));
    let fixed = Fault::BrokenImage { image: "nginx:1.26".into(), broken: false };
    assert_eq!(ops(&run(&mut st, [key('b')])), vec![Op::from(fixed)]);
    assert!(st.broken_images.is_empty());
    // A script's `break-image` marks the image too.
    let line = EventKind::Command { line: 3, text: "break-image nginx:1.27".into() };
    run(&mut st, [timeline(line)]);
    assert!(st.broken_images.contains("nginx:1.27"));
}
