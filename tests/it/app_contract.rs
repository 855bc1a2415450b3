//! The backend contract as the console sees it: complete re-listings replace the mirror,
//! capabilities change at run time, the server's version picks the advisor's semantics, a lost
//! connection stops writes, a conflict asks again, and freeze / resume on a cluster.
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
use ststui::app::state::{Modal, StatusKind};
use ststui::app::{AppState, Msg};
use ststui::backend::{
    BackendEvent, Capabilities, ClusterOp, Connection, Failure, FailureKind, ObjKind, ObjRef,
    Object, Op, Scope, Write, WriteKind,
};

fn backend(ev: BackendEvent) -> Msg {
    Msg::Backend(ev)
}

#[test]
fn a_relist_replaces_its_scope_and_objects_gone_in_the_gap_disappear() {
    let mut st = demo(sim_caps());
    assert!(st.mirror.pod_at(&web(), 4).is_some());
    let before = st.mirror.generation();
    // A re-list of the pods of `app=web` that lacks web-3 and web-4 (deleted while the watch
    // was down), plus a pod of another set in the namespace that the scope does not cover.
    let mut other = pod("db", 0, "db-a", true);
    other.metadata.labels = Some(labels(&[("app", "db")]));
    run(&mut st, [applied(Object::Pod(std::sync::Arc::new(other)))]);
    let pods: Vec<Object> =
        (0..3).map(|o| Object::Pod(std::sync::Arc::new(pod("web", o, "web-a", true)))).collect();
    let selector = ststui::backend::Scope {
        namespace: Some(NS.into()),
        selector: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            ..Default::default()
        }),
        name: None,
        about: None,
    };
    run(
        &mut st,
        [backend(BackendEvent::Listed {
            kind: ObjKind::Pod,
            scope: selector.clone(),
            objects: pods.clone(),
        })],
    );
    assert_eq!(st.relists, 0, "a scope's first listing is not a re-list");
    assert!(st.mirror.pod_at(&web(), 2).is_some());
    assert!(st.mirror.pod_at(&web(), 3).is_none() && st.mirror.pod_at(&web(), 4).is_none());
    assert!(st.mirror.pod(&ObjRef::new(NS, "db-0")).is_some(), "outside the scope: kept");
    assert!(st.mirror.generation() > before);
    run(
        &mut st,
        [backend(BackendEvent::Listed { kind: ObjKind::Pod, scope: selector, objects: pods })],
    );
    assert_eq!(st.relists, 1, "the same scope listed again is a re-list (the badge)");
    // The same listing again changes nothing.
    let generation = st.mirror.generation();
    let pods: Vec<Object> =
        (0..3).map(|o| Object::Pod(std::sync::Arc::new(pod("web", o, "web-a", true)))).collect();
    run(
        &mut st,
        [backend(BackendEvent::Listed {
            kind: ObjKind::Pod,
            scope: Scope::namespace(NS),
            objects: pods,
        })],
    );
    assert!(st.mirror.pod(&ObjRef::new(NS, "db-0")).is_none(), "a namespace scope covers db-0");
    assert!(st.mirror.generation() > generation);
}

#[test]
fn capabilities_change_at_run_time_and_denied_writes_are_refused_with_the_reason() {
    let mut st = demo(Capabilities::cluster());
    assert!(!ops(&run(&mut st, [key('[')])).is_empty(), "allowed at first");
    let mut caps = Capabilities::cluster();
    caps.denied.insert(
        WriteKind::PatchSet,
        "you may not patch statefulsets (apps) in default".to_string(),
    );
    run(&mut st, [backend(BackendEvent::Capabilities(caps))]);
    assert!(run(&mut st, [key('[')]).is_empty());
    let s = st.status.clone().unwrap_or_else(|| panic!("no refusal"));
    assert_eq!(s.kind, StatusKind::Refusal);
    assert_eq!(s.text, "read-only: you may not patch statefulsets (apps) in default");
    // Scale is another permission: still allowed.
    assert_eq!(
        ops(&run(&mut st, [key('+')])),
        vec![Op::from(ClusterOp::Scale { set: web(), replicas: 6 })]
    );
    // The footer dims what is denied.
    let hints = ststui::app::view::footer::hints(&st);
    let step =
        hints.iter().find(|h| h.label == "partition−").unwrap_or_else(|| panic!("{hints:?}"));
    assert!(!step.applies);
    assert!(hints.iter().find(|h| h.label == "scale").is_some_and(|h| h.applies));
    // The header says so; undo refuses before its picker opens, not on Enter.
    let header = ststui::app::view::Screen::of(&st).header.map(|h| h.read_only);
    assert_eq!(header, Some(ststui::app::view::ReadOnly::Partly));
    assert!(run(&mut st, [key('u')]).is_empty());
    assert_eq!(st.modal, Modal::None, "no picker for a write that cannot be made");
    assert!(status_text(&st).starts_with("read-only: you may not patch"), "{}", status_text(&st));
    let mut all = Capabilities::cluster();
    for kind in WriteKind::ALL {
        all.denied.insert(kind, "--read-only: ststui makes no writes".into());
    }
    run(&mut st, [backend(BackendEvent::Capabilities(all))]);
    let screen = ststui::app::view::Screen::of(&st);
    let lines = ststui::app::view::header::lines(screen.header.as_ref().unwrap(), 200);
    let text: String = lines.iter().flatten().map(|p| p.text.as_str()).collect();
    assert!(text.contains("● live read-only"), "{text}");
}

#[test]
fn the_server_version_picks_the_advisor_semantics_and_an_unknown_one_is_said_once() {
    let mut st = demo(Capabilities::cluster());
    run(&mut st, [backend(BackendEvent::Server { version: "v1.34.2+k3s1".into() })]);
    assert_eq!(st.options.version, ststui::core::Version { minor: 34, patch: 2 });
    assert!(st.status.is_none() || !status_text(&st).contains("newer"));
    run(&mut st, [backend(BackendEvent::Server { version: "v1.40.1".into() })]);
    assert_eq!(st.options.version, ststui::core::Version::LATEST);
    assert!(
        status_text(&st).contains("newer than the releases ststui knows"),
        "{}",
        status_text(&st)
    );
    assert_eq!(st.server_version.as_deref(), Some("v1.40.1"));
}

#[test]
fn a_lost_connection_keeps_the_data_still_sends_writes_and_recovers() {
    let mut st = demo(Capabilities::cluster());
    let since = t0();
    let down = Connection::Unreachable { since, error: "connection refused".into() };
    run(&mut st, [backend(BackendEvent::Connection(down))]);
    assert!(st.mirror.set(&web()).is_some(), "the last data is kept");
    assert!(status_text(&st).contains("lost the connection: connection refused"));
    // A write still goes out, carrying the set it was decided on: the server refuses it if it
    // moved meanwhile, and its outcome is told as the server holds it.
    let sent = run(&mut st, [key('[')]);
    let Some(ststui::app::Command::Backend(Op::Cluster(w))) = sent.first() else {
        panic!("{sent:?}")
    };
    assert!(w.basis.is_some(), "decided on the set shown");
    let failing = Connection::Failing { since, error: "list pods in default: 503".into() };
    run(&mut st, [backend(BackendEvent::Connection(failing))]);
    assert!(
        status_text(&st).contains("the server answers with errors: list pods"),
        "{}",
        status_text(&st)
    );
    run(&mut st, [backend(BackendEvent::Connection(Connection::Up))]);
    assert!(status_text(&st).contains("reconnected"));
    assert_eq!(ops(&run(&mut st, [key('[')])).len(), 1);
    // Refused credentials stop writes: nothing can succeed until they are renewed.
    let refused = Connection::Unauthorized { error: "401".into() };
    run(&mut st, [backend(BackendEvent::Connection(refused))]);
    assert!(run(&mut st, [key('[')]).is_empty());
    assert!(status_text(&st).contains("refuses our credentials"), "{}", status_text(&st));
}

#[test]
fn a_conflict_shows_what_changed_and_asks_again_on_the_fresh_set() {
    let mut st = demo(Capabilities::cluster());
    let fresh = set("web", 5, 3, "nginx:1.26", "web-a", "web-b");
    let write = Write::on(
        ClusterOp::SetPartition { set: web(), partition: 4 },
        Some(Box::new(fresh.clone())),
    );
    let failure = Failure {
        op: "partition default/web 4".into(),
        kind: FailureKind::Conflict,
        message: "default/web changed since you decided: partition 5 → 3".into(),
        write: Some(write.clone()),
        id: Some(ststui::backend::WriteId::next()),
    };
    run(&mut st, [backend(BackendEvent::OpFailed(failure))]);
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    assert_eq!(c.old, "default/web changed since you decided: partition 5 → 3");
    assert_eq!(c.ops, vec![Op::Cluster(write.clone())]);
    assert_eq!(decided_ops(&run(&mut st, [key('y')])), vec![Op::Cluster(write)]);
    // While the operator is typing, a conflict never takes the prompt away.
    run(&mut st, [key('s'), key('7')]);
    let failure = Failure::new("scale default/web 6".into(), FailureKind::Conflict, "changed");
    run(&mut st, [backend(BackendEvent::OpFailed(failure))]);
    let Modal::Prompt(p) = &st.modal else { panic!("the prompt was lost") };
    assert_eq!(p.input, "7");
}

#[test]
fn space_freezes_on_a_cluster_and_resume_asks_first() {
    let mut st = demo(Capabilities::cluster());
    let sent = decided_ops(&run(&mut st, [key(' ')]));
    let [Op::Cluster(w)] = &sent[..] else { panic!("not one write: {sent:?}") };
    assert_eq!(w.op, ClusterOp::Freeze { set: web() });
    // Sent is not written: the server has not answered yet.
    assert_eq!(status_text(&st), "freeze web: sent, waiting for the server …");
    assert_eq!(st.writes_pending.len(), 1);
    let done = BackendEvent::OpDone { id: w.id, said: None };
    run(&mut st, [backend(done)]);
    assert!(status_text(&st).contains("froze web"), "{}", status_text(&st));
    assert!(st.writes_pending.is_empty());
    // The set comes back frozen (annotations), as another operator would see it.
    let mut frozen = set("web", 5, 5, "nginx:1.26", "web-a", "web-b");
    let ann = frozen.metadata.annotations.get_or_insert_with(Default::default);
    ann.insert(ststui::steer::FROZEN_PARTITION.into(), "2".into());
    ann.insert(ststui::steer::FROZEN_BY.into(), "ana".into());
    ann.insert(ststui::steer::FROZEN_AT.into(), "2026-01-01T00:00:00Z".into());
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(frozen)))]);
    // Partition keys say why they wait.
    assert!(run(&mut st, [key('[')]).is_empty());
    assert!(
        status_text(&st).contains("frozen by ana since 2026-01-01T00:00:00Z"),
        "{}",
        status_text(&st)
    );
    assert!(run(&mut st, [key(' ')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("resume did not ask") };
    assert_eq!(c.new, "partition 2");
    assert_eq!(
        ops(&run(&mut st, [key('y')])),
        vec![Op::from(ClusterOp::Unfreeze { set: web(), force: false })]
    );
    // Another writer lowers the partition under the freeze: it is broken, and resuming asks
    // before writing the record over their partition.
    let mut broken = set("web", 5, 0, "nginx:1.26", "web-a", "web-b");
    broken.metadata.annotations = frozen_ann();
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(broken)))]);
    assert!(run(&mut st, [key(' ')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("resume did not ask") };
    assert!(c.title.contains("freeze broken: partition moved to 0"), "{}", c.title);
    assert!(c.warning.as_deref().unwrap_or("").contains("writes over partition 0"));
    assert_eq!(
        ops(&run(&mut st, [key('y')])),
        vec![Op::from(ClusterOp::Unfreeze { set: web(), force: true })]
    );
}

/// On a cluster a write is "sent" until the server answers: done (the console's own words, or
/// the server's when it had something to say), or failed (the failure's words); in the
/// simulator it is done at once.
#[test]
fn a_cluster_write_is_sent_until_the_server_answers() {
    const LOST: &str = "the reply was lost; it may or may not be written";
    let mut st = demo(Capabilities::cluster());
    run(&mut st, [key('[')]);
    assert!(status_text(&st).ends_with(": sent, waiting for the server …"), "{}", status_text(&st));
    let id = st.writes_pending.front().map(|(id, _)| *id).expect("a pending write");
    let failure = Failure::new("partition default/web 4".into(), FailureKind::Unknown, LOST).of(id);
    run(&mut st, [backend(BackendEvent::OpFailed(failure))]);
    assert!(st.writes_pending.is_empty(), "a failure answers the write");
    assert!(status_text(&st).contains("may or may not be written"), "{}", status_text(&st));
    // The server's own words (a lost reply read back) stand for the answer.
    run(&mut st, [key(' ')]);
    let said = "freeze default/web: written (the reply was lost: reset; read back)".to_string();
    let id = st.writes_pending.front().map(|(id, _)| *id).expect("a pending write");
    run(&mut st, [backend(BackendEvent::Notice(said.clone()))]);
    run(&mut st, [backend(BackendEvent::OpDone { id, said: Some(said.clone()) })]);
    assert_eq!(status_text(&st), said);
    assert!(st.writes_pending.is_empty());
    // The simulator applies a write at once.
    let mut sim = demo(Capabilities::simulator());
    run(&mut sim, [key('[')]);
    assert!(!status_text(&sim).contains("sent"), "{}", status_text(&sim));
    assert!(sim.writes_pending.is_empty());
}

/// Two writes with the same words are two writes: each answer finds its own by id, and an
/// answer to no write the console sent (a stale id, or none) leaves the pending ones alone.
#[test]
fn an_answer_finds_its_write_by_id_not_by_its_words() {
    let mut st = demo(Capabilities::cluster());
    let first = decided_ops(&run(&mut st, [key('[')]));
    let second = decided_ops(&run(&mut st, [key('[')]));
    let (Some(Op::Cluster(a)), Some(Op::Cluster(b))) = (first.first(), second.first()) else {
        panic!("two writes expected: {first:?} {second:?}")
    };
    assert_eq!(a.op.describe(), b.op.describe(), "the same words, as the test needs");
    assert_ne!(a.id, b.id);
    let pending = |st: &AppState| st.writes_pending.iter().map(|(id, _)| *id).collect::<Vec<_>>();
    assert_eq!(pending(&st), vec![a.id, b.id]);
    // The second is answered first: the first stays pending.
    let op = b.op.describe();
    run(&mut st, [backend(BackendEvent::OpDone { id: b.id, said: None })]);
    assert_eq!(pending(&st), vec![a.id]);
    // A failure in the same words but for no write of ours, or for no write at all, answers none.
    let stranger =
        Failure::new(op.clone(), FailureKind::Invalid, "no").of(ststui::backend::WriteId::next());
    run(&mut st, [backend(BackendEvent::OpFailed(stranger))]);
    run(&mut st, [backend(BackendEvent::OpFailed(Failure::new(op, FailureKind::Invalid, "no")))]);
    assert_eq!(pending(&st), vec![a.id]);
    let failed = Failure::new(a.op.describe(), FailureKind::Invalid, "refused").of(a.id);
    run(&mut st, [backend(BackendEvent::OpFailed(failed))]);
    assert!(st.writes_pending.is_empty());
}

fn frozen_ann() -> Option<std::collections::BTreeMap<String, String>> {
    let mut ann = std::collections::BTreeMap::new();
    ann.insert(ststui::steer::FROZEN_PARTITION.into(), "2".into());
    ann.insert(ststui::steer::FROZEN_BY.into(), "ana".into());
    ann.insert(ststui::steer::FROZEN_AT.into(), "2026-01-01T00:00:00Z".into());
    Some(ann)
}

#[test]
fn the_simulator_freezes_with_shift_f() {
    let mut st: AppState = demo(sim_caps());
    assert_eq!(ops(&run(&mut st, [key('F')])), vec![Op::from(ClusterOp::Freeze { set: web() })]);
}

fn controller(action: &str, pod: &str, reason: Option<&str>) -> Msg {
    backend(BackendEvent::Timeline(ststui::backend::Event {
        t_ms: 0,
        kind: ststui::backend::EventKind::Controller {
            set: "web".into(),
            action: ststui::core::ControllerAction::parse(action).expect("an action"),
            pod: Some(pod.into()),
            pvc: None,
            revision: None,
            reason: reason.map(|r| ststui::core::DeleteReason::parse(r).expect("a reason")),
        },
    }))
}

fn clock(secs: i64) -> Msg {
    let now = t0()
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(secs))
        .unwrap_or_else(|e| panic!("{e}"));
    backend(BackendEvent::Clock { now, speed: 1.0 })
}

fn differs(st: &AppState) -> Vec<String> {
    st.timeline
        .iter()
        .filter_map(|e| match &e.kind {
            ststui::backend::EventKind::Differs { expected, observed, .. } => {
                Some(format!("{expected} / {observed}"))
            }
            _ => None,
        })
        .collect()
}

/// `web` as in `demo_real` with `partition` and `generation`.
fn real_set(partition: i32, generation: i64, cur: &str, upd: &str) -> Msg {
    let mut s = set("web", 5, partition, "nginx:1.26", cur, upd);
    s.metadata.generation = Some(generation);
    applied(Object::Set(std::sync::Arc::new(s)))
}

#[test]
fn what_the_cluster_did_unlike_the_advisor_is_told_after_a_grace() {
    let (mut st, cur, upd) = demo_real(4);
    st.caps = Capabilities::cluster();
    st.can_pick = true;
    // The partition moved to 3: the advisor's plan deletes web-3 for the update. The cluster
    // doing just that is not news.
    run(&mut st, [real_set(3, 2, &cur, &upd), Msg::BatchEnd]);
    run(&mut st, [controller("delete-pod", "web-3", Some("update")), clock(5), Msg::BatchEnd]);
    assert!(differs(&st).is_empty(), "{:?}", differs(&st));
    // The cluster creates web-9, which no plan holds: a suspicion, told once the grace is over
    // without a spec change that would explain it.
    run(&mut st, [controller("create-pod", "web-9", None), Msg::BatchEnd]);
    assert!(differs(&st).is_empty(), "not yet: a racing watch may explain it");
    run(&mut st, [clock(10), Msg::BatchEnd]);
    let told = differs(&st);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].ends_with("/ created web-9"), "{told:?}");
    // web-2 deleted for the update before the watch showed the partition at 2: the set's next
    // generation explains it, so nothing is told.
    run(&mut st, [controller("delete-pod", "web-2", Some("update")), real_set(2, 3, &cur, &upd)]);
    run(&mut st, [clock(20), Msg::BatchEnd]);
    assert_eq!(differs(&st).len(), 1, "{:?}", differs(&st));
}

#[test]
fn a_scale_up_beyond_10x_or_100000_asks_first_showing_old_and_new() {
    use crossterm::event::KeyCode;
    let mut st = demo(sim_caps());
    // 5 → 50 is 10×: direct. 5 → 51 asks.
    assert_eq!(
        ops(&run(&mut st, [key('s'), key('5'), key('0'), code(KeyCode::Enter)])),
        vec![Op::from(ClusterOp::Scale { set: web(), replicas: 50 })]
    );
    let typed: Vec<Msg> =
        "2000000".chars().map(key).chain([code(KeyCode::Enter)]).collect::<Vec<_>>();
    let cmds = run(&mut st, std::iter::once(key('s')).chain(typed));
    assert!(cmds.is_empty(), "{cmds:?}");
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("5 replicas", "2000000 replicas"));
    assert!(c.warning.as_deref().is_some_and(|w| w.contains("1999995 new pods")), "{c:?}");
    // No: nothing is sent.
    assert!(ops(&run(&mut st, [key('n')])).is_empty());
    assert!(ststui::app::ops::is_big_scale_up(1000, 100_001));
    assert!(!ststui::app::ops::is_big_scale_up(10_000, 100_000));
    assert!(ststui::app::ops::is_big_scale_up(0, 11));
    assert!(!ststui::app::ops::is_big_scale_up(0, 10));
}

#[test]
fn simulator_only_keys_on_a_cluster_say_so_and_help_does_not_list_them() {
    for k in ['f', 't', 'b', '>', '<', '.', 'n'] {
        let mut st = demo(Capabilities::cluster());
        assert!(run(&mut st, [key(k)]).is_empty(), "{k}");
        assert!(status_text(&st).contains("simulator only"), "{k}: {:?}", status_text(&st));
    }
    let listed = |caps: &Capabilities| -> Vec<String> {
        ststui::app::keymap::help_sections(Some(caps))
            .into_iter()
            .flat_map(|(_, lines)| lines.into_iter().map(|l| l.keys))
            .collect()
    };
    let cluster = listed(&Capabilities::cluster());
    for k in ["f", "t", "b", ">", "<", "n ."] {
        assert!(!cluster.iter().any(|l| l == k), "{k} listed on a cluster: {cluster:?}");
    }
    let sim = listed(&sim_caps());
    for k in ["f", "t", "b", ">", "<", "n ."] {
        assert!(sim.iter().any(|l| l == k), "{k} not listed in the simulator: {sim:?}");
    }
}

#[test]
fn the_simulator_names_its_own_freeze_key() {
    let mut st: AppState = demo(sim_caps());
    run(&mut st, [key('F')]);
    assert!(status_text(&st).ends_with("F resumes"), "{}", status_text(&st));
}
