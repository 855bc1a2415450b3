//! A plan's gate on screen: the grid marks the pod it runs for, the header says which gate the
//! plan waits on, the pod's detail shows the gate and its last output — escaped, since a gate's
//! output is about the cluster and may carry terminal escapes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support::*;
use ststui::backend::{ObjRef, Object};
use ststui::plan::gate::{GateState, GateStatus};
use ststui::plan::record::{PLAN, Phase, Record, stamp};

fn with_gate(status: GateStatus, phase: Phase) -> ststui::app::AppState {
    let mut f = rolling();
    f.selected = 2;
    let mut st = f.state();
    let key = ObjRef::new("default", "web");
    let now = st.now.unwrap();
    let record = Record {
        steps: "1,100%".into(),
        bake_seconds: 0,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "web-5c4f8d6b9".into(),
        template: String::new(),
        step: 2,
        of: 2,
        phase,
        since: stamp(now),
        partition: 0,
        by: "ana".into(),
        started: stamp(now),
        reason: (phase == Phase::Halted).then(|| "pre-delete gate failed".into()),
        began_at: Some(5),
        from: String::new(),
        gates: ststui::plan::gate::Gates {
            pre_delete: Some("cmd:./drain.sh".into()),
            ..Default::default()
        },
        target: None,
        gate: Some(GateState {
            gate: "pre-delete".into(),
            pod: Some("web-2".into()),
            status,
            since: stamp(now),
            tries: 3,
            output: vec!["isr 2/3 \u{1b}]0;pwned\u{7}".into()],
        }),
    };
    let mut set = st.mirror.set(&key).unwrap().clone();
    set.metadata.annotations =
        Some([(PLAN.to_string(), serde_json::to_string(&record).unwrap())].into());
    st.mirror.apply(Object::Set(std::sync::Arc::new(set)));
    st
}

fn screen_text(st: &ststui::app::AppState) -> Vec<String> {
    let buf = render(st, 200, 50).backend().buffer().clone();
    (0..50).map(|y| row(&buf, y)).collect()
}

#[test]
fn a_gate_not_yet_marks_its_pod_and_the_header_names_it() {
    let rows = screen_text(&with_gate(GateStatus::NotYet, Phase::Waiting));
    let marked: Vec<&String> =
        rows.iter().filter(|r| r.contains("gate pre-delete not yet ×3")).collect();
    assert_eq!(marked.len(), 1, "{rows:#?}");
    assert!(marked[0].contains("web-2"), "{}", marked[0]);
    assert!(
        rows[0].contains("waiting on the pre-delete gate on web-2: not yet (3 tries)"),
        "{}",
        rows[0]
    );
    let all = rows.join("\n");
    assert!(all.contains("gate output"), "{all}");
    assert!(all.contains("isr 2/3"), "{all}");
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "escaped: {all}");
}

#[test]
fn a_failed_gate_stays_marked_a_passed_one_does_not() {
    let rows = screen_text(&with_gate(GateStatus::Failed, Phase::Halted));
    assert!(rows.iter().any(|r| r.contains("web-2") && r.contains("gate pre-delete failed")));
    let rows = screen_text(&with_gate(GateStatus::Passed, Phase::Waiting));
    assert!(!rows.iter().any(|r| r.contains("gate pre-delete")), "{rows:#?}");
}
