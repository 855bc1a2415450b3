//! What the console says matches what it would do: the controller pane names only keys that
//! would be carried out, `[` asks before running ahead of a canary that is not updated and
//! Ready, `]` warns only when there is an update to keep, and the partition line says what the
//! held pods run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use app_fixtures::*;
use ststui::app::state::Modal;
use ststui::app::view::Screen;
use ststui::backend::{BackendEvent, Capabilities, Object, WriteKind};

fn controller_text(st: &ststui::app::AppState) -> String {
    Screen::of(st).controller.iter().map(|l| l.text.clone()).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_controller_pane_names_only_keys_that_would_be_carried_out() {
    let (mut st, _, _) = demo_real(4);
    let text = controller_text(&st);
    assert!(text.contains("press [ to lower it"), "{text}");
    // Read-only: the hold is told, the key is not offered.
    let mut caps = Capabilities::simulator();
    caps.denied.insert(WriteKind::PatchSet, "you may not patch statefulsets".into());
    run(
        &mut st,
        [ststui::app::Msg::Backend(BackendEvent::Capabilities(caps)), ststui::app::Msg::BatchEnd],
    );
    let text = controller_text(&st);
    assert!(text.contains("partition 4 holds"), "{text}");
    assert!(!text.contains("press ["), "{text}");
}

#[test]
fn a_frozen_set_is_not_offered_a_partition_key() {
    let (mut st, cur, upd) = demo_real(4);
    let mut s = set("web", 5, 5, "nginx:1.26", &cur, &upd);
    let ann = s.metadata.annotations.get_or_insert_with(Default::default);
    ann.insert(ststui::steer::FROZEN_PARTITION.into(), "4".into());
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s))), ststui::app::Msg::BatchEnd]);
    let text = controller_text(&st);
    assert!(!text.contains("press ["), "{text}");
}

#[test]
fn lowering_ahead_of_a_canary_that_is_not_ready_asks_first() {
    let (mut st, _, upd) = demo_real(4);
    // web-4, the canary, is on the update revision but not Ready.
    let canary = pod("web", 4, &upd, false);
    run(&mut st, [applied(Object::Pod(std::sync::Arc::new(canary))), ststui::app::Msg::BatchEnd]);
    assert!(run(&mut st, [key('[')]).is_empty(), "not sent at once");
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    let warning = c.warning.clone().unwrap_or_default();
    assert!(warning.contains("web-4 Running"), "{warning}");
    assert!(warning.contains("ahead of the canary"), "{warning}");
    assert_eq!(decided_ops(&run(&mut st, [key('y')])).len(), 1, "y opens it anyway");
    // A Ready canary: one key, no question.
    let (mut st, _, _) = demo_real(4);
    assert_eq!(decided_ops(&run(&mut st, [key('[')])).len(), 1);
}

#[test]
fn raising_warns_only_when_updated_pods_would_be_held() {
    // One revision everywhere: nothing to keep updated, so no warning and no question.
    let (mut st, cur, _) = demo_real(0);
    let s = set("web", 5, 2, "nginx:1.25", &cur, &cur);
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s))), ststui::app::Msg::BatchEnd]);
    for o in 0..5 {
        let p = pod("web", o, &cur, true);
        run(&mut st, [applied(Object::Pod(std::sync::Arc::new(p)))]);
    }
    run(&mut st, [ststui::app::Msg::BatchEnd]);
    let sent = decided_ops(&run(&mut st, [key(']')]));
    assert_eq!(sent.len(), 1, "no confirmation: {:?}", st.modal);
    assert!(!status_text(&st).contains("stay on the update revision"), "{}", status_text(&st));
}

#[test]
fn the_partition_line_says_what_the_held_pods_run() {
    use ststui::app::view::grid::HeldOn;
    let (st, _, _) = demo_real(3);
    let held = |st: &ststui::app::AppState| {
        Screen::of(st).grid.rules.iter().find(|r| r.value > 0).map(|r| r.held)
    };
    assert_eq!(held(&st), Some(HeldOn::Current));
    // web-0 runs a third, older revision (a rollback under way).
    let (mut st, _, _) = demo_real(3);
    let older = pod("web", 0, "web-older", true);
    run(&mut st, [applied(Object::Pod(std::sync::Arc::new(older))), ststui::app::Msg::BatchEnd]);
    assert_eq!(held(&st), Some(HeldOn::Mixed));
    assert_eq!(HeldOn::Mixed.words(), "held on current and older");
}

#[test]
fn the_timeline_names_who_said_what_once() {
    use ststui::app::view::timeline::{Source, last_lines};
    let mut st = demo(Capabilities::cluster());
    let db = set("db", 2, 0, "pg:16", "db-a", "db-a");
    run(
        &mut st,
        [
            ststui::app::Msg::Backend(BackendEvent::Notice("connected to https://x as ana".into())),
            applied(Object::Set(std::sync::Arc::new(db))),
        ],
    );
    let lines = last_lines(&st, 10);
    let notice = lines.iter().find(|l| l.text.starts_with("connected to")).unwrap();
    assert_eq!(notice.source, Source::Notice, "not a script line");
    assert_eq!(notice.source.tag(), "ststui");
    // With several sets, a line names its set once: "you web undo 1", not "undo web 1".
    run(&mut st, [key('u'), code(crossterm::event::KeyCode::Enter), key('y')]);
    let lines = last_lines(&st, 10);
    let undo = lines.iter().find(|l| l.source == Source::Operator).unwrap();
    assert_eq!(undo.set.as_deref(), Some("web"));
    assert!(undo.text.starts_with("undo ") && !undo.text.contains("web"), "{undo:?}");
}

#[test]
fn a_set_that_never_was_is_not_called_deleted_and_an_empty_namespace_is_named() {
    use ststui::app::AppState;
    use ststui::backend::{ObjKind, ObjRef, Scope};
    let mut st = AppState::new(Capabilities::cluster(), ststui::core::Options::default());
    st.can_pick = true;
    st.selected_set = Some(ObjRef::new("prod", "webb"));
    let scope =
        Scope { namespace: Some("prod".into()), name: Some("webb".into()), ..Scope::default() };
    run(
        &mut st,
        [
            ststui::app::Msg::Backend(BackendEvent::Listed {
                kind: ObjKind::Set,
                scope,
                objects: Vec::new(),
            }),
            ststui::app::Msg::Backend(BackendEvent::Synced),
        ],
    );
    let said = status_text(&st);
    assert!(said.contains("statefulset webb not found in namespace prod"), "{said}");
    assert!(!said.contains("deleted"), "{said}");
    assert_eq!(st.picking, Some(0), "the set list is offered");
    assert!(ststui::app::sets::empty_reason(&st).starts_with("no StatefulSet in namespace prod"));
    // A set list that may not be read says so, with the permission.
    st.unreadable.insert(ObjKind::Set, "you may not list statefulsets in every namespace".into());
    assert!(ststui::app::sets::empty_reason(&st).starts_with("statefulsets unknown: you may not"));
    // A set seen and then gone was deleted.
    let mut st = demo(Capabilities::cluster());
    st.can_pick = true;
    let web = st.mirror.set(&ObjRef::new("default", "web")).cloned().unwrap();
    run(
        &mut st,
        [ststui::app::Msg::Backend(BackendEvent::Deleted(Object::Set(std::sync::Arc::new(web))))],
    );
    assert!(
        status_text(&st).contains("statefulset default/web was deleted"),
        "{}",
        status_text(&st)
    );
}

#[test]
fn what_happened_during_an_outage_is_marked_as_seen_late() {
    use ststui::app::view::timeline::{LATE_MARK, last_lines};
    use ststui::backend::{Connection, Event, EventKind};
    let mut st = demo(Capabilities::cluster());
    let at = |s: i64| t0().checked_add(k8s_openapi::jiff::SignedDuration::from_secs(s)).unwrap();
    let msg = ststui::app::Msg::Backend;
    let kubelet = |t_ms: u64, pod: &str| {
        msg(BackendEvent::Timeline(Event {
            t_ms,
            kind: EventKind::Kubelet { pod: pod.into(), event: "ready".into() },
        }))
    };
    run(
        &mut st,
        [
            msg(BackendEvent::Connection(Connection::Unreachable {
                since: at(10),
                error: "refused".into(),
            })),
            msg(BackendEvent::Clock { now: at(80), speed: 1.0 }),
            msg(BackendEvent::Connection(Connection::Up)),
            kubelet(80_500, "web-3"),
            kubelet(95_000, "web-4"),
        ],
    );
    let lines = last_lines(&st, 10);
    let notice = lines.iter().find(|l| l.text.starts_with("reconnected")).unwrap();
    assert!(notice.text.contains("after 1m10s without the server"), "{}", notice.text);
    let late = lines.iter().find(|l| l.text == "web-3 ready").unwrap();
    assert!(late.time.starts_with(LATE_MARK), "the catch-up is marked: {late:?}");
    let after = lines.iter().find(|l| l.text == "web-4 ready").unwrap();
    assert!(!after.time.starts_with(LATE_MARK), "later lines are not: {after:?}");
}

#[test]
fn pods_that_may_not_be_read_are_unknown_never_not_created_or_healthy() {
    use ststui::app::health::Health;
    use ststui::backend::ObjKind;
    let mut st = demo(Capabilities::cluster());
    let denied = "you may not list pods in default (403 Forbidden: pods is forbidden)";
    run(
        &mut st,
        [
            ststui::app::Msg::Backend(BackendEvent::Access {
                kind: ObjKind::Pod,
                denied: Some(denied.into()),
            }),
            ststui::app::Msg::BatchEnd,
        ],
    );
    let screen = Screen::of(&st);
    assert!(screen.grid.cells.is_empty(), "no cell is drawn as 'not created'");
    assert_eq!(screen.grid.note.as_deref(), Some(&*format!("pods unknown: {denied}")));
    assert_eq!(screen.header.as_ref().and_then(|h| h.health), Some(Health::Unknown));
    assert!(controller_text(&st).starts_with("the advisor cannot run: pods unknown"));
    assert!(st.advisor.is_none(), "the advisor does not run on made-up data");
    // A first listing under way says so too.
    let mut st = demo(Capabilities::cluster());
    run(
        &mut st,
        [
            ststui::app::Msg::Backend(BackendEvent::Listing {
                kind: ObjKind::Pod,
                so_far: 1500,
                objects: Vec::new(),
            }),
            ststui::app::Msg::BatchEnd,
        ],
    );
    // (More than the set's replicas: the selector's pods, counted.)
    assert_eq!(Screen::of(&st).grid.note.as_deref(), Some("listing pods … 1500 so far"));
}

/// A first listing of pods is drawn as it arrives: the pods known so far in their cells, every
/// other ordinal "not listed yet" (never "not created"), the listing's progress in the title;
/// no advisor on part of the pods; the complete listing replaces it all.
#[test]
fn a_first_listing_is_drawn_as_the_pods_arrive_and_nothing_else_is_made_up() {
    use std::sync::Arc;
    use ststui::app::view::PodState;
    use ststui::app::{AppState, Msg};
    use ststui::backend::{ObjKind, ObjRef, Scope};
    let mut st = AppState::new(Capabilities::cluster(), ststui::core::Options::default());
    st.selected_set = Some(ObjRef::new("default", "web"));
    let pod = |o| Object::Pod(Arc::new(app_fixtures::pod("web", o, "web-a", true)));
    let listing = |so_far, objects| {
        Msg::Backend(BackendEvent::Listing { kind: ObjKind::Pod, so_far, objects })
    };
    run(
        &mut st,
        [
            Msg::Backend(BackendEvent::Clock { now: t0(), speed: 1.0 }),
            applied(Object::Set(Arc::new(set("web", 5, 5, "nginx:1.26", "web-a", "web-a")))),
            applied(Object::Revision(Arc::new(revision("web", "web-a", 1, "nginx:1.26")))),
            Msg::Backend(BackendEvent::Synced),
            listing(0, Vec::new()),
            Msg::BatchEnd,
        ],
    );
    assert!(Screen::of(&st).grid.cells.is_empty(), "nothing arrived: no cell");
    run(&mut st, [listing(2, vec![pod(0), pod(1)]), Msg::BatchEnd]);
    let grid = Screen::of(&st).grid;
    let states: Vec<PodState> = grid.cells.iter().map(|c| c.state).collect();
    use PodState::{Ready, Unlisted};
    assert_eq!(states, [Ready, Ready, Unlisted, Unlisted, Unlisted], "{:?}", grid.cells);
    assert_eq!(grid.note.as_deref(), Some("listing pods … 2/5"));
    assert!(st.advisor.is_none(), "the advisor does not run on part of the pods");
    assert!(controller_text(&st).starts_with("the advisor cannot run: listing pods"));
    let scope = Scope { namespace: Some("default".into()), ..Scope::default() };
    let objects = (0..5).map(pod).collect();
    let listed = BackendEvent::Listed { kind: ObjKind::Pod, scope, objects };
    run(&mut st, [Msg::Backend(listed), Msg::BatchEnd]);
    let grid = Screen::of(&st).grid;
    assert!(grid.note.is_none(), "{:?}", grid.note);
    assert!(grid.cells.iter().all(|c| c.state == Ready), "{:?}", grid.cells);
    assert!(st.advisor.is_some(), "listed: the advisor runs");
}

#[test]
fn claims_that_may_not_be_read_do_not_stop_the_advisor() {
    use ststui::backend::ObjKind;
    let (mut st, _, _) = demo_real(4);
    run(
        &mut st,
        [
            ststui::app::Msg::Backend(BackendEvent::Access {
                kind: ObjKind::Claim,
                denied: Some("you may not list persistentvolumeclaims in default".into()),
            }),
            ststui::app::Msg::BatchEnd,
        ],
    );
    assert!(st.advisor.is_some(), "the advisor runs without claims");
    assert!(controller_text(&st).contains("partition 4 holds"), "{}", controller_text(&st));
}
