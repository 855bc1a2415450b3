//! The timeline's filters through the reducer: `T` cycles every set → the selected set → the
//! selected pod → every set, the pane's title says which, and the pod filter follows the
//! selection.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use app_fixtures::*;
use ststui::app::Msg;
use ststui::backend::{BackendEvent, Capabilities, Event, EventKind};

fn kubelet(t_ms: u64, pod: &str) -> Msg {
    let kind = EventKind::Kubelet { pod: pod.into(), event: "ready".into() };
    Msg::Backend(BackendEvent::Timeline(Event { t_ms, kind }))
}

#[test]
fn t_cycles_set_pod_and_every_line_and_the_pod_filter_follows_the_selection() {
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [kubelet(1000, "web-0"), kubelet(2000, "web-1"), kubelet(3000, "web-1")]);
    let all = st.timeline.len();
    run(&mut st, [key('T')]);
    assert_eq!(st.timeline.only(), Some("web"));
    run(&mut st, [key('T')]);
    assert_eq!(st.timeline.only_pod(), Some("web-0"), "the selected ordinal is 0");
    assert_eq!(st.timeline.len(), 1);
    assert!(status_text(&st).contains("only the lines about web-0"), "{}", status_text(&st));
    let title = ststui::app::view::timeline::title(&st, 10, "J");
    assert!(title.starts_with("Timeline: web-0 only (1 lines)"), "{title}");
    run(&mut st, [key('l')]);
    assert_eq!(st.timeline.only_pod(), Some("web-1"), "it follows the selection");
    assert_eq!(st.timeline.len(), 2);
    run(&mut st, [key('T')]);
    assert_eq!((st.timeline.only(), st.timeline.only_pod()), (None, None));
    assert_eq!(st.timeline.len(), all);
}

#[test]
fn x_exports_every_line_held_as_the_documented_jsonl_and_says_where() {
    let mut st = demo(Capabilities::simulator());
    run(&mut st, [kubelet(1000, "web-0"), kubelet(2500, "web-1")]);
    let cmds = run(&mut st, [key('X')]);
    let Some(ststui::app::Command::Export { name, text, lines }) = cmds.first() else {
        panic!("no export asked: {cmds:?}");
    };
    assert!(name.starts_with("ststui-timeline-web-") && name.ends_with(".jsonl"), "{name}");
    assert_eq!(*lines, st.timeline.len());
    let parsed: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(parsed.len(), *lines);
    let ready = parsed.iter().find(|v| v["pod"] == "web-1").unwrap();
    assert_eq!(ready["t"], 2.5);
    assert_eq!((ready["type"].as_str(), ready["event"].as_str()), (Some("kubelet"), Some("ready")));
    run(&mut st, [Msg::Exported { path: "/tmp/x.jsonl".into(), lines: *lines, error: None }]);
    assert!(
        status_text(&st).contains(&format!("timeline exported: {lines} lines to /tmp/x.jsonl"))
    );
    run(&mut st, [Msg::Exported { path: "x".into(), lines: 0, error: Some("disk full".into()) }]);
    assert!(status_text(&st).contains("cannot export the timeline: disk full"));
}
