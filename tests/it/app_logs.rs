//! The log view through the reducer: `L` opens the selected pod's log and asks the backend to
//! follow it; chunks replace and append (only the log shown); the view is bounded and counts
//! what it dropped; scrolled back, new lines keep the same lines in view; `p` switches to the
//! previous container; Esc closes and stops following.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use app_fixtures::*;
use crossterm::event::KeyCode;
use ststui::app::state::MAX_LOG_LINES as MAX_LINES;
use ststui::app::state::Modal;
use ststui::app::{AppState, Msg};
use ststui::backend::{BackendEvent, Capabilities, LogChunk, LogRequest, ObjRef, Op, ViewOp};

fn asked(cmds: &[ststui::app::Command]) -> Vec<Option<LogRequest>> {
    ops(cmds)
        .into_iter()
        .filter_map(|op| match op {
            Op::View(ViewOp::Logs(r)) => Some(r),
            _ => None,
        })
        .collect()
}

fn req(pod: &str, previous: bool) -> LogRequest {
    LogRequest { pod: ObjRef::new("default", pod), previous }
}

fn chunk(r: &LogRequest, c: LogChunk) -> Msg {
    Msg::Backend(BackendEvent::Log { request: r.clone(), chunk: c })
}

fn view(st: &AppState) -> &ststui::app::state::LogView {
    match &st.modal {
        Modal::Log(v) => v,
        other => panic!("no log open: {other:?}"),
    }
}

fn screen(st: &AppState, w: u16, h: u16) -> String {
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    term.draw(|f| {
        ststui::ui::draw(f, st, &ststui::ui::theme::Theme::colored());
    })
    .unwrap();
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn lines(n: std::ops::Range<usize>) -> Vec<String> {
    n.map(|i| format!("line {i}")).collect()
}

#[test]
fn l_follows_the_selected_pods_log_and_esc_stops() {
    let mut st = demo(Capabilities::simulator());
    let cmds = run(&mut st, [key('j'), key('L')]);
    let r = req("web-1", false);
    assert_eq!(asked(&cmds), [Some(r.clone())]);
    run(
        &mut st,
        [chunk(&r, LogChunk::Replace(lines(0..3))), chunk(&r, LogChunk::Append(lines(3..5)))],
    );
    assert_eq!(view(&st).lines.len(), 5);
    // Another log's chunk (a late one of the pod before) is not this one's.
    run(&mut st, [chunk(&req("web-0", false), LogChunk::Append(lines(9..10)))]);
    assert_eq!(view(&st).lines.len(), 5);
    let cmds = run(&mut st, [code(KeyCode::Esc)]);
    assert_eq!(asked(&cmds), [None]);
    assert!(matches!(st.modal, Modal::None));
}

#[test]
fn p_switches_to_the_previous_container_and_a_failure_is_shown() {
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [key('L')]);
    let cmds = run(&mut st, [key('p')]);
    let prev = req("web-0", true);
    assert_eq!(asked(&cmds), [Some(prev.clone())]);
    let why = "previous terminated container \"app\" in pod \"web-0\" not found";
    run(&mut st, [chunk(&prev, LogChunk::Failed(why.into()))]);
    assert_eq!(view(&st).note.as_deref(), Some(why));
    assert!(view(&st).ended);
    let text = screen(&st, 120, 30);
    assert!(text.contains("Log: web-0 (previous container) · ended"), "{text}");
    assert!(text.contains(why), "{text}");
}

#[test]
fn the_view_is_bounded_counts_what_it_dropped_and_holds_its_place_when_scrolled() {
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [key('L')]);
    let r = req("web-0", false);
    run(&mut st, [chunk(&r, LogChunk::Replace(lines(0..MAX_LINES + 10)))]);
    assert_eq!(view(&st).lines.len(), MAX_LINES);
    assert_eq!(view(&st).dropped, 10);
    assert_eq!(view(&st).lines.front().map(String::as_str), Some("line 10"));
    run(&mut st, [key('k'), key('k')]);
    assert_eq!(view(&st).back, 2);
    run(&mut st, [chunk(&r, LogChunk::Append(lines(0..3)))]);
    assert_eq!(view(&st).back, 5, "scrolled back, the same lines stay in view");
    run(&mut st, [key('G')]);
    assert!(view(&st).following());
}

#[test]
fn a_pod_that_does_not_exist_has_no_log() {
    let mut st = demo(Capabilities::simulator());
    // Scale the demo's selection past its pods: the sixth ordinal has no pod.
    st.selected_ordinal = 7;
    let cmds = run(&mut st, [key('L')]);
    assert!(asked(&cmds).is_empty());
    assert!(
        status_text(&st).contains("web-7 does not exist: it has no log"),
        "{}",
        status_text(&st)
    );
}
