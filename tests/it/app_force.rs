//! The console's way past a disruption budget: ctrl-k asks why, says what the pod's budget
//! allows now, asks again (old → new, the reason), records the reason on the set and only then
//! — once the server holds the record — deletes the pod; nothing is deleted when the record
//! fails. A budget's refusal of an eviction names this way; abort's question names the pods a
//! budget would keep; the record is shown beside the set's state while it is recent, escaped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures::*;

use std::sync::Arc;

use crossterm::event::KeyCode;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use ststui::app::Msg;
use ststui::app::state::Modal;
use ststui::backend::{
    BackendEvent, Capabilities, ClusterOp, EventKind, Failure, FailureKind, ObjRef, Object, Op,
    Write,
};

fn web() -> ObjRef {
    ObjRef::new("default", "web")
}

/// `pdb/web` selecting the demo's pods: `healthy` of `needs`, `allowed` disruptions.
fn budget(healthy: i32, needs: i32, allowed: i32) -> Msg {
    let pdb: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default", "generation": 1},
        "spec": {"minAvailable": needs, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"currentHealthy": healthy, "desiredHealthy": needs, "disruptionsAllowed": allowed,
                   "expectedPods": 5, "observedGeneration": 1},
    }))
    .unwrap();
    applied(Object::Budget(Arc::new(pdb)))
}

fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(key).collect()
}

fn writes(cmds: &[ststui::app::Command]) -> Vec<Write> {
    decided_ops(cmds)
        .into_iter()
        .filter_map(|op| match op {
            Op::Cluster(w) => Some(w),
            _ => None,
        })
        .collect()
}

fn timeline(st: &ststui::app::AppState) -> Vec<String> {
    st.timeline
        .iter()
        .map(|e| match &e.kind {
            EventKind::Command { text, .. } | EventKind::Notice { text } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Up to the question: ctrl-k, the reason typed, Enter.
fn asked(caps: Capabilities, reason: &str) -> ststui::app::AppState {
    let mut st = demo(caps);
    let mut web0 = pod("web", 0, "web-a", true);
    web0.metadata.uid = Some("u-web-0".into());
    run(&mut st, [applied(Object::Pod(Arc::new(web0))), budget(5, 5, 0), Msg::BatchEnd]);
    let cmds = run(&mut st, [ctrl('k')]);
    assert!(cmds.is_empty(), "nothing sent before the reason: {cmds:?}");
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt: {:?}", st.modal) };
    let label = p.kind.label();
    assert!(label.contains("why force-delete web-0"), "{label}");
    assert!(
        label.contains("refused by pdb/web: 5 healthy, needs 5, 0 disruptions allowed"),
        "what the budget allows now: {label}"
    );
    run(&mut st, typed(reason).into_iter().chain([code(KeyCode::Enter)]));
    st
}

#[test]
fn a_force_delete_asks_why_records_it_on_the_set_then_deletes_once_the_record_is_written() {
    let mut st = asked(Capabilities::cluster(), "INC-42: node-3 lost");
    let Modal::Confirm(c) = &st.modal else { panic!("no question: {:?}", st.modal) };
    let shown = format!("{} | {} | {}", c.title, c.new, c.details.join(" | "));
    assert!(shown.contains("Force-delete pod default/web-0?"), "{shown}");
    assert!(shown.contains("reason: INC-42: node-3 lost"), "{shown}");
    assert!(shown.contains("not if the record fails"), "{shown}");
    let cmds = run(&mut st, [key('y')]);
    let sent = writes(&cmds);
    let [record] = sent.as_slice() else { panic!("the record alone first: {sent:?}") };
    let ClusterOp::ForceDeleted { set, pods, reason, refused } = &record.op else {
        panic!("{record:?}")
    };
    assert_eq!(
        (set, pods.as_slice(), reason.as_str()),
        (&web(), &["web-0".to_string()][..], "INC-42: node-3 lost")
    );
    assert!(refused.as_deref().is_some_and(|r| r.contains("pdb/web")), "{refused:?}");
    let lines = timeline(&st);
    assert!(lines.iter().any(|l| l == "force-delete-pod web-0"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("force-delete web-0 past its disruption budgets")
            && l.contains("INC-42: node-3 lost")),
        "the reason in the timeline: {lines:?}"
    );
    // The server holds the record: now the pod goes, at once, its uid the precondition.
    let cmds = run(&mut st, [Msg::Backend(BackendEvent::OpDone { id: record.id, said: None })]);
    let sent = writes(&cmds);
    let [delete] = sent.as_slice() else { panic!("the deletion: {sent:?}") };
    let ClusterOp::DeletePod { pod, force: true, uid: Some(uid) } = &delete.op else {
        panic!("{delete:?}")
    };
    assert_eq!((pod.name.as_str(), uid.as_str()), ("web-0", "u-web-0"));
    // Answered once: another answer sends nothing more.
    let again = run(&mut st, [Msg::Backend(BackendEvent::OpDone { id: record.id, said: None })]);
    assert!(writes(&again).is_empty(), "{again:?}");
}

#[test]
fn nothing_is_deleted_when_the_record_fails() {
    let mut st = asked(Capabilities::cluster(), "INC-43");
    let cmds = run(&mut st, [key('y')]);
    let record = writes(&cmds).pop().unwrap();
    let f =
        Failure::new("force-deleted-record default/web".into(), FailureKind::Forbidden, "denied");
    let cmds = run(&mut st, [Msg::Backend(BackendEvent::OpFailed(f.of(record.id)))]);
    assert!(writes(&cmds).is_empty(), "nothing deleted: {cmds:?}");
    let status = status_text(&st);
    assert!(status.contains("not sent, as force-deleted-record default/web failed"), "{status}");
}

#[test]
fn in_the_simulator_the_record_and_the_deletion_go_in_order_at_once() {
    let mut st = asked(sim_caps(), "rehearsal");
    let sent = writes(&run(&mut st, [key('y')]));
    assert!(
        matches!(
            sent.iter().map(|w| &w.op).collect::<Vec<_>>().as_slice(),
            [ClusterOp::ForceDeleted { .. }, ClusterOp::DeletePod { force: true, .. }]
        ),
        "{sent:?}"
    );
}

#[test]
fn a_reason_must_be_words_on_one_line() {
    let mut st = demo(Capabilities::cluster());
    run(&mut st, [ctrl('k'), code(KeyCode::Enter)]);
    let Modal::Prompt(p) = &st.modal else { panic!("the prompt stays open: {:?}", st.modal) };
    assert!(p.error.as_deref().is_some_and(|e| e.contains("is blank")), "{p:?}");
    // Read-only for the set: refused before anything is asked, saying why.
    let mut st = demo(Capabilities::cluster());
    st.caps.denied.insert(ststui::backend::WriteKind::PatchSet, "RBAC: no patch".into());
    run(&mut st, [ctrl('k')]);
    assert_eq!(st.modal, Modal::None);
    let status = status_text(&st);
    assert!(
        status.contains("records its reason on the set") && status.contains("no patch"),
        "{status}"
    );
}

#[test]
fn a_budgets_refusal_names_the_way_past_it() {
    let mut st = demo(Capabilities::cluster());
    let f = Failure::new(
        "evict-pod default/web-0".into(),
        FailureKind::Disruption,
        "refused by pdb/web: 5 healthy, needs 5, 0 disruptions allowed: nothing deleted",
    );
    run(&mut st, [Msg::Backend(BackendEvent::OpFailed(f))]);
    let status = status_text(&st);
    assert!(status.contains("refused by pdb/web"), "{status}");
    assert!(status.contains("ctrl-k on it force-deletes past its budgets (asks why)"), "{status}");
}

#[test]
fn the_record_is_shown_beside_the_state_while_recent_and_escaped() {
    let mut st = demo(sim_caps());
    let record = ststui::steer::forced::record(
        "alice",
        t0(),
        &["web-3".into()],
        "INC-42 \u{1b}]0;pwned\u{7}",
        Some("refused by pdb/web"),
    );
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(ststui::steer::FORCE_DELETED.into(), record);
    run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
    let screen = ststui::app::view::Screen::of(&st);
    let lines: Vec<&str> = screen.controller.iter().map(|l| l.text.as_str()).collect();
    let forced = lines
        .iter()
        .find(|l| l.contains("force-deleted past the disruption budgets by alice"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(forced.contains("INC-42") && !forced.contains('\u{1b}'), "{forced}");
    assert!(forced.contains("(refused by pdb/web)"), "{forced}");
}

/// The abort key's question names a stuck pod a budget would keep (as the budgets the console
/// watches judge its eviction now), and the way past it.
#[test]
fn the_abort_question_names_a_pod_its_budget_would_keep() {
    let (mut st, _, update) = demo_real(4);
    let mut stuck = pod("web", 4, &update, false);
    stuck.metadata.uid = Some("u-web-4".into());
    let mut set = st.mirror.set(&web()).unwrap().clone();
    let status = set.status.get_or_insert_with(Default::default);
    status.observed_generation = set.metadata.generation;
    let msgs = [
        applied(Object::Set(Arc::new(set))),
        applied(Object::Pod(Arc::new(stuck))),
        budget(4, 5, 0),
        Msg::BatchEnd,
    ];
    run(&mut st, msgs);
    run(&mut st, [key('U')]);
    let Modal::Confirm(c) = &st.modal else {
        panic!("no question: {:?} {}", st.modal, status_text(&st))
    };
    let details = c.details.join(" | ");
    assert!(details.contains("will delete, as stuck on"), "{details}");
    assert!(
        details.contains(
            "web-4: its eviction would be refused by pdb/web: 4 healthy, needs 5, 0 disruptions \
             allowed now"
        ),
        "{details}"
    );
    assert!(details.contains("unless force-deleted (ctrl-k, asks why"), "{details}");
    // A budget that allows it: nothing said of it.
    run(&mut st, [code(KeyCode::Esc), budget(5, 4, 1), Msg::BatchEnd, key('U')]);
    let Modal::Confirm(c) = &st.modal else { panic!("no question: {:?}", st.modal) };
    assert!(!c.details.join(" | ").contains("would be refused"), "{:?}", c.details);
}
