//! Reducer tests of console behaviour: speed steps that come back to ×1, `b` breaking an image,
//! the key that jumps to the pod the controller waits on, timeline lines attributed to their set
//! with a filter, the timeline scrolling, `/`, and the help overlay and its pages.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use app_fixtures::*;
use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use ststui::app::Msg;
use ststui::app::state::{HitMap, HitRegion, Modal, Origin};
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
    // `T` again: the selected pod's lines; once more: every line.
    run(&mut st, [key('T')]);
    assert!(st.timeline.only_pod().is_some_and(|p| p.starts_with("web-")));
    run(&mut st, [key('T')]);
    assert_eq!((st.timeline.only(), st.timeline.only_pod()), (None, None));
    assert_eq!(last_lines(&st, 10).len(), 4);
}

#[test]
fn one_set_needs_no_set_column() {
    let mut st = demo(sim_caps());
    run(&mut st, [timeline(kubelet("web-1"))]);
    assert!(last_lines(&st, 10).iter().all(|l| l.set.is_none()));
}

/// `b` breaks an image, not a pod: it asks which, prefilled with the rollout's target (the
/// update revision's image), marks it broken, and `b` on a broken image fixes it; both are
/// logged in scenario syntax.
#[test]
fn b_breaks_and_fixes_the_image() {
    use ststui::app::state::PromptKind;
    use ststui::backend::Fault;
    let mut st = demo(sim_caps());
    run(&mut st, [key('l')]);
    assert!(run(&mut st, [key('b')]).is_empty());
    let Modal::Prompt(p) = &st.modal else { panic!("b did not ask: {:?}", st.modal) };
    assert_eq!(
        (&p.kind, p.input.as_str()),
        (&PromptKind::BrokenImage { fixing: false }, "nginx:1.26")
    );
    let broken =
        Fault::BrokenImage { image: "nginx:1.26".into(), broken: Some(Default::default()) };
    assert_eq!(ops(&run(&mut st, [code(KeyCode::Enter)])), vec![Op::from(broken)]);
    // Broken when the simulator says so, not before.
    assert!(st.broken_images.is_empty());
    run(&mut st, [echo(&["nginx:1.26"])]);
    assert!(st.broken_images.contains("nginx:1.26"));
    assert!(status_text(&st).contains("nginx:1.26 is broken"), "{}", status_text(&st));
    let logged = st.timeline.iter().last().map(|e| e.kind.clone());
    let want = EventKind::Command { line: 0, text: "break-image nginx:1.26".into() };
    assert_eq!(logged, Some(want));
    run(&mut st, [key('b')]);
    let Modal::Prompt(p) = &st.modal else { panic!("b did not ask") };
    assert_eq!(p.kind, PromptKind::BrokenImage { fixing: true });
    let fixed = Fault::BrokenImage { image: "nginx:1.26".into(), broken: None };
    assert_eq!(ops(&run(&mut st, [code(KeyCode::Enter)])), vec![Op::from(fixed)]);
    run(&mut st, [echo(&[])]);
    assert!(st.broken_images.is_empty());
    // A timeline line is words, never state: a `break-image` line alone marks nothing; the
    // simulator's report of what it fails does (a script's `break-image` included).
    let line = EventKind::Command { line: 3, text: "break-image nginx:1.27".into() };
    run(&mut st, [timeline(line)]);
    assert!(st.broken_images.is_empty());
    run(&mut st, [echo(&["nginx:1.27"])]);
    assert!(st.broken_images.contains("nginx:1.27"));
}

fn echo(images: &[&str]) -> Msg {
    let images = images.iter().map(|i| i.to_string()).collect();
    Msg::Backend(ststui::backend::BackendEvent::BrokenImages(images))
}

/// The simulator reports the images it fails whenever a `break-image` or `fix-image` changes
/// them, sorted by name.
#[test]
fn the_simulator_reports_the_images_it_fails() {
    use ststui::backend::Fault;
    use ststui::sim::{Sim, SimEvent};
    let mut sim = Sim::new(Default::default());
    let _ = sim.drain_events();
    let broken =
        |image: &str| Fault::BrokenImage { image: image.into(), broken: Some(Default::default()) };
    sim.apply_op(broken("b:1").into()).unwrap();
    sim.apply_op(broken("a:1").into()).unwrap();
    sim.apply_op(Fault::BrokenImage { image: "b:1".into(), broken: None }.into()).unwrap();
    let said: Vec<Vec<String>> = sim
        .drain_events()
        .into_iter()
        .filter_map(|e| match e {
            SimEvent::BrokenImages(i) => Some(i),
            _ => None,
        })
        .collect();
    let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(said, vec![v(&["b:1"]), v(&["a:1", "b:1"]), v(&["a:1"])]);
}

#[test]
fn help_opens_and_closes_and_unbound_keys_say_so() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('?')]);
    assert!(st.help_open());
    // Keys other than the close keys do nothing in help, and q closes rather than quits.
    assert!(run(&mut st, [key('q')]).is_empty());
    assert!(!st.help_open() && !st.quit);
    run(&mut st, [key('Q')]);
    assert!(status_text(&st).contains("not bound"), "{}", status_text(&st));
}

#[test]
fn help_turns_pages_as_far_as_the_terminal_needs() {
    let mut st = demo(sim_caps());
    run(&mut st, [Msg::Resize(80, 24), key('?')]);
    let pages = ststui::app::view::help::layout(st.screen, &st.caps).pages.len();
    assert!(pages >= 2);
    let down = || code(KeyCode::PageDown);
    let up = || code(KeyCode::PageUp);
    run(&mut st, [down()]);
    assert_eq!(st.modal, Modal::Help { page: 1 });
    for _ in 0..pages + 3 {
        run(&mut st, [key('j')]);
    }
    assert_eq!(st.modal, Modal::Help { page: pages - 1 }, "PgDn stops at the last page");
    run(&mut st, [up()]);
    assert_eq!(st.modal, Modal::Help { page: pages - 2 });
    // On a big terminal everything is on one page: PgDn stays there, Esc closes.
    run(&mut st, [Msg::Resize(200, 60), down(), up(), down()]);
    assert_eq!(st.modal, Modal::Help { page: 0 });
    run(&mut st, [code(KeyCode::Esc)]);
    assert!(!st.help_open());
}

/// `K` / `J` scroll the timeline by half its pane, the wheel over it by three lines; scrolled
/// back, new entries keep the view where it is; at either end a key says why it did nothing.
#[test]
fn the_timeline_scrolls_back_and_stays_put_while_entries_arrive() {
    let mut st = demo(sim_caps());
    let area = Rect::new(0, 30, 80, 10);
    let hits = HitMap {
        regions: vec![HitRegion::Timeline { area }],
        timeline_rows: area.height,
        ..HitMap::default()
    };
    run(&mut st, [Msg::Drawn(hits)]);
    let entry = |i: u64| {
        Msg::Backend(BackendEvent::Timeline(Event {
            t_ms: i * 1000,
            kind: EventKind::Command { line: 0, text: format!("entry {i}") },
        }))
    };
    run(&mut st, (0..40).map(entry));
    let rows = usize::from(area.height);
    assert_eq!(st.timeline.back(rows), 0);
    run(&mut st, [key('J')]);
    assert!(status_text(&st).contains("already follows the newest"), "{}", status_text(&st));
    run(&mut st, [key('K')]);
    assert_eq!(st.timeline.back(rows), 5, "half of a 10-line pane");
    let newest_shown = |st: &ststui::app::AppState| {
        let lines = ststui::app::view::timeline::last_lines(st, rows);
        lines.last().map(|l| l.text.clone()).unwrap_or_default()
    };
    let shown = newest_shown(&st);
    run(&mut st, (40..43).map(entry));
    assert_eq!(newest_shown(&st), shown, "new entries do not move a scrolled-back view");
    let wheel =
        |kind| Msg::Mouse(MouseEvent { kind, column: 5, row: 33, modifiers: KeyModifiers::NONE });
    run(&mut st, [wheel(MouseEventKind::ScrollUp)]);
    assert_eq!(st.timeline.back(rows), 11);
    for _ in 0..20 {
        run(&mut st, [key('K')]);
    }
    assert_eq!(st.timeline.back(rows), st.timeline.len() - rows, "stops at the oldest");
    assert!(status_text(&st).contains("oldest entry is on screen"), "{}", status_text(&st));
    for _ in 0..20 {
        run(&mut st, [key('J')]);
    }
    assert_eq!(st.timeline.back(rows), 0);
    run(&mut st, [entry(99)]);
    assert_eq!(newest_shown(&st), "entry 99", "at the bottom it follows again");
}

#[test]
fn slash_goes_to_an_ordinal_and_refuses_one_off_the_grid() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('/')]);
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt") };
    assert_eq!(p.kind.label(), "go to ordinal of default/web (0–4)");
    run(&mut st, [key('9'), code(KeyCode::Enter)]);
    let Modal::Prompt(p) = &st.modal else { panic!("the prompt should stay open") };
    assert_eq!(p.error.as_deref(), Some("ordinal 9 is not on the grid: expected 0 to 4"));
    run(&mut st, [code(KeyCode::Backspace), key('3')]);
    run(&mut st, [code(KeyCode::Enter)]);
    assert_eq!(st.modal, Modal::None);
    assert_eq!(st.selected_ordinal, 3);
}

/// A set asking for 2147483647 replicas (a real cluster accepts it): the advisor refuses to
/// model it instead of allocating a slot per replica, the grid holds the pods that exist and a
/// bounded tail of placeholders, and End stays on the grid.
#[test]
fn a_hostile_replica_count_allocates_nothing_per_replica() {
    let mut st = ststui::app::AppState::new(
        ststui::backend::Capabilities::simulator(),
        ststui::core::Options::default(),
    );
    let huge = set("web", i32::MAX, 0, "nginx:1.25", "web-a", "web-a");
    let mut msgs = vec![
        Msg::Backend(BackendEvent::Clock { now: t0(), speed: 1.0 }),
        applied(Object::Set(std::sync::Arc::new(huge))),
    ];
    for o in 0..3 {
        msgs.push(applied(Object::Pod(std::sync::Arc::new(pod("web", o, "web-a", true)))));
    }
    msgs.extend([Msg::Backend(BackendEvent::Synced), Msg::BatchEnd]);
    run(&mut st, msgs);
    let d = st.derived.clone().unwrap_or_else(|| panic!("not derived"));
    let tail = usize::try_from(ststui::app::view::grid::PLACEHOLDER_TAIL).unwrap_or(0);
    assert_eq!(d.grid.cells.len(), 3 + tail);
    assert!(d.grid.hidden > 2_000_000_000);
    let said: Vec<&str> = d.controller.iter().map(|l| l.text.as_str()).collect();
    assert!(said.iter().any(|t| t.contains("beyond the 100000 replicas")), "{said:?}");
    run(&mut st, [code(KeyCode::End)]);
    assert_eq!(st.selected_ordinal, 2 + ststui::app::view::grid::PLACEHOLDER_TAIL);
}
