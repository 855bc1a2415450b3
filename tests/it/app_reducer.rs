//! Reducer tests: keys → state → commands, confirmations, refusals, prompts, selection,
//! backend events. Driven with hand-built objects (no simulator).
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
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy;
use ratatui::layout::Rect;
use ststui::app::state::{HitMap, HitRegion, Modal, Origin, StatusKind};
use ststui::app::{Command, Msg};
use ststui::backend::{
    BackendEvent, Capabilities, ClusterOp, EventKind, Failure, FailureKind, Fault, Mode, ObjRef,
    Object, Op, SimOp, Write,
};

/// What the last draw reported for a 3-column grid of 5 ordinals (cells 10×2 at (10, 5)).
fn grid_3_columns() -> HitMap {
    HitMap {
        regions: vec![HitRegion::Grid {
            area: Rect::new(10, 5, 30, 4),
            cell_width: 10,
            cell_height: 2,
            columns: 3,
            first: 0,
            count: 5,
        }],
        grid_columns: 3,
        page: 6,
        timeline_rows: 0,
    }
}

#[test]
fn partition_down_sends_one_op_and_logs_it() {
    let mut st = demo(sim_caps());
    let cmds = run(&mut st, [key('[')]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::SetPartition { set: web(), partition: 4 })]);
    // The write carries the set it was decided on.
    let Some(Op::Cluster(Write { basis: Some(basis), .. })) = decided_ops(&cmds).pop() else {
        panic!("no basis: {cmds:?}")
    };
    assert_eq!(Some(&*basis), st.mirror.set(&web()));
    assert_eq!(st.modal, Modal::None);
    assert!(status_text(&st).contains("5 → 4"), "{}", status_text(&st));
    let last = st.timeline.iter().last().cloned();
    let Some(last) = last else { panic!("no timeline entry") };
    assert_eq!(last.origin, Origin::Operator);
    assert_eq!(last.kind, EventKind::Command { line: 0, text: "partition web 4".into() });
}

#[test]
fn partition_below_zero_is_refused_with_a_reason() {
    let mut st = demo(sim_caps());
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            5,
            0,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    let cmds = run(&mut st, [key('[')]);
    assert!(cmds.is_empty());
    let s = st.status.clone().unwrap_or_else(|| panic!("no status"));
    assert_eq!(s.kind, StatusKind::Refusal);
    assert!(s.text.contains("already 0"), "{}", s.text);
}

#[test]
fn partition_above_replicas_steps_down_to_replicas_minus_one() {
    let mut st = demo(sim_caps());
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            5,
            9,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    let cmds = run(&mut st, [key('[')]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::SetPartition { set: web(), partition: 4 })]);
}

#[test]
fn raising_the_partition_over_updated_pods_asks_and_warns() {
    // Partition 3: web-3 and web-4 are already on the update revision.
    let (mut st, _, upd) = demo_real(3);
    let plan = st.advisor.as_ref().map(|a| a.plan.update_revision.clone());
    assert_eq!(plan.as_deref(), Some(upd.as_str()), "the advisor agrees with the status");
    let cmds = run(&mut st, [key(']')]);
    assert!(cmds.is_empty(), "must ask first: {cmds:?}");
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("partition 3", "partition 4"));
    let warning = c.warning.clone().unwrap_or_default();
    assert!(warning.contains("web-3") && warning.contains("never reverts"), "{warning}");
    assert!(!warning.contains("web-4"), "web-4 stays above the partition: {warning}");
    // "n" cancels, nothing sent.
    assert!(run(&mut st, [key('n')]).is_empty());
    assert_eq!(st.modal, Modal::None);
    assert!(status_text(&st).contains("cancelled"));
    // Ask again, "y" sends it.
    run(&mut st, [key(']')]);
    let cmds = run(&mut st, [key('y')]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::SetPartition { set: web(), partition: 4 })]);
    assert_eq!(st.modal, Modal::None);
}

#[test]
fn raise_warning_falls_back_to_the_status_before_the_advisor_runs() {
    let mut st = demo(sim_caps());
    st.advisor = None;
    run(
        &mut st,
        [
            applied(Object::Set(std::sync::Arc::new(set(
                "web",
                5,
                3,
                "nginx:1.26",
                "web-a",
                "web-b",
            )))),
            applied(Object::Pod(std::sync::Arc::new(pod("web", 3, "web-b", true)))),
            applied(Object::Pod(std::sync::Arc::new(pod("web", 4, "web-b", true)))),
        ],
    );
    run(&mut st, [key('p'), key('5'), code(KeyCode::Enter)]);
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    let warning = c.warning.clone().unwrap_or_default();
    assert!(warning.contains("web-3 … web-4 (2 pods)"), "{warning}");
}

#[test]
fn raising_the_partition_over_outdated_pods_needs_no_confirmation() {
    let mut st = demo(sim_caps());
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            5,
            3,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    let cmds = run(&mut st, [key(']')]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::SetPartition { set: web(), partition: 4 })]);
    // At replicas, raising further is refused.
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            5,
            5,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    assert!(run(&mut st, [key(']')]).is_empty());
    assert!(status_text(&st).contains("holds every ordinal"), "{}", status_text(&st));
}

#[test]
fn partition_prompt_validates_and_confirms_a_jump() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('p')]);
    assert!(matches!(st.modal, Modal::Prompt(_)));
    // A letter is rejected in place; Enter on empty input keeps the prompt open.
    run(&mut st, [key('x'), code(KeyCode::Enter)]);
    let Modal::Prompt(p) = &st.modal else { panic!("prompt closed") };
    assert!(p.input.is_empty());
    assert!(p.error.as_deref().is_some_and(|e| e.contains("type a number")), "{:?}", p.error);
    // 2: a jump of three asks for confirmation, then y sends it.
    let cmds = run(&mut st, [key('2'), code(KeyCode::Enter)]);
    assert!(cmds.is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("partition 5", "partition 2"));
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::SetPartition { set: web(), partition: 2 })]);
    // Esc cancels a prompt.
    run(&mut st, [key('p'), key('4'), code(KeyCode::Esc)]);
    assert_eq!(st.modal, Modal::None);
}

#[test]
fn partition_on_an_on_delete_set_is_refused() {
    let mut st = demo(sim_caps());
    let s = on_delete(set("web", 5, 0, "nginx:1.26", "web-a", "web-b"));
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s)))]);
    for k in ['[', ']', 'p'] {
        assert!(run(&mut st, [key(k)]).is_empty());
        assert!(status_text(&st).contains("OnDelete"), "{k}: {}", status_text(&st));
        assert_eq!(st.modal, Modal::None);
    }
}

/// The RollingUpdate settings of `set` (what the console remembers when it switches to OnDelete).
fn rolling_of(s: &k8s_openapi::api::apps::v1::StatefulSet) -> RollingUpdateStatefulSetStrategy {
    s.spec.update_strategy.clone().and_then(|u| u.rolling_update).unwrap_or_default()
}

#[test]
fn strategy_toggle_round_trip_restores_the_partition() {
    let mut st = demo(sim_caps());
    let before = rolling_of(st.set().unwrap());
    assert_eq!(before.partition, Some(5));
    let cmds = run(&mut st, [key('o')]);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetStrategy {
            set: web(),
            kind: ststui::core::spec::UpdateType::OnDelete,
            rolling: None
        })]
    );
    let s = on_delete(set("web", 5, 0, "nginx:1.26", "web-a", "web-b"));
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s)))]);
    // Back: partition 5 holds every pod, so nothing is replaced and nothing is asked.
    let cmds = run(&mut st, [key('o')]);
    assert_eq!(st.modal, Modal::None);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetStrategy {
            set: web(),
            kind: ststui::core::spec::UpdateType::RollingUpdate,
            rolling: Some(before)
        })]
    );
    assert!(status_text(&st).contains("partition=5"), "{}", status_text(&st));
}

#[test]
fn where_the_gate_is_on_the_toggle_cycles_through_recreate_and_asks_before_it() {
    let mut st = demo(sim_caps());
    st.options.semantics.recreate_gate = true;
    let s = on_delete(set("web", 5, 0, "nginx:1.26", "web-a", "web-b"));
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s.clone())))]);
    // OnDelete → Recreate: the outdated pods would all go at once, so it asks.
    assert!(run(&mut st, [key('o')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("OnDelete", "Recreate"));
    assert!(c.warning.as_deref().is_some_and(|w| w.contains("deletes them all at once")), "{c:?}");
    let cmds = run(&mut st, [key('y')]);
    let recreate = ststui::core::spec::UpdateType::Recreate;
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetStrategy { set: web(), kind: recreate, rolling: None })]
    );
    // On Recreate the partition keys are refused, naming the strategy …
    let mut r = s;
    if let Some(u) = r.spec.update_strategy.as_mut() {
        u.type_ = Some("Recreate".into());
    }
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(r)))]);
    assert!(run(&mut st, [key('[')]).is_empty());
    assert!(status_text(&st).contains("this set is Recreate"), "{}", status_text(&st));
    // … and the next press goes back to RollingUpdate, holding every ordinal.
    let cmds = run(&mut st, [key('o')]);
    let rolling = ststui::core::spec::UpdateType::RollingUpdate;
    let sent = ops(&cmds);
    assert!(
        matches!(sent.as_slice(), [Op::Cluster(Write { op: ClusterOp::SetStrategy { kind, .. }, .. })] if *kind == rolling),
        "{sent:?}"
    );
    // Without the gate OnDelete goes straight back to RollingUpdate.
    let mut st = demo(sim_caps());
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(on_delete(set(
            "web",
            5,
            0,
            "nginx:1.26",
            "web-a",
            "web-b",
        )))))],
    );
    let cmds = run(&mut st, [key('o')]);
    let sent = ops(&cmds);
    assert!(
        matches!(sent.as_slice(), [Op::Cluster(Write { op: ClusterOp::SetStrategy { kind, .. }, .. })] if *kind == rolling),
        "{sent:?}"
    );
}

#[test]
fn a_set_born_on_delete_switches_to_rolling_update_holding_every_ordinal() {
    let mut st = demo(sim_caps());
    let s = on_delete(set("web", 5, 0, "nginx:1.26", "web-a", "web-b"));
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s)))]);
    let cmds = run(&mut st, [key('o')]);
    assert_eq!(st.modal, Modal::None, "nothing is replaced: no confirmation");
    let sent = ops(&cmds);
    let [
        Op::Cluster(Write {
            op:
                ClusterOp::SetStrategy {
                    kind: ststui::core::spec::UpdateType::RollingUpdate,
                    rolling: Some(r),
                    ..
                },
            ..
        }),
    ] = sent.as_slice()
    else {
        panic!("{cmds:?}")
    };
    assert_eq!(r.partition, Some(5));
    assert!(status_text(&st).contains("press [ to roll one"), "{}", status_text(&st));
}

#[test]
fn back_to_rolling_update_asks_when_outdated_pods_would_be_replaced() {
    let mut st = demo(sim_caps());
    // Remembered partition 2: web-2..web-4 are outdated and would be replaced at once.
    let s = set("web", 5, 2, "nginx:1.26", "web-a", "web-b");
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(s.clone())))]);
    run(&mut st, [key('o')]);
    run(&mut st, [applied(Object::Set(std::sync::Arc::new(on_delete(s.clone()))))]);
    assert!(run(&mut st, [key('o')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation") };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("OnDelete", "RollingUpdate partition=2"));
    assert!(
        c.warning.as_deref().is_some_and(|w| w.contains("3 pod(s) from web-2 up")),
        "{:?}",
        c.warning
    );
    let cmds = run(&mut st, [key('y')]);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetStrategy {
            set: web(),
            kind: ststui::core::spec::UpdateType::RollingUpdate,
            rolling: Some(rolling_of(&s))
        })]
    );
}

#[test]
fn step_while_live_says_to_pause_first_then_steps_once_paused() {
    let mut st = demo(sim_caps());
    assert!(run(&mut st, [key('n')]).is_empty());
    assert!(status_text(&st).contains("press space to pause first"), "{}", status_text(&st));
    let cmds = run(&mut st, [key(' ')]);
    assert_eq!(ops(&cmds), vec![Op::Sim(SimOp::Pause)]);
    // The mode changes when the backend says so.
    assert_eq!(st.mode, Mode::Live);
    run(&mut st, [Msg::Backend(BackendEvent::Mode(Mode::Paused))]);
    assert_eq!(st.mode, Mode::Paused);
    assert_eq!(ops(&run(&mut st, [key('n')])), vec![Op::Sim(SimOp::Step { n: 1 })]);
    assert_eq!(ops(&run(&mut st, [key('.')])), vec![Op::Sim(SimOp::Step { n: 1 })]);
    assert_eq!(ops(&run(&mut st, [key(' ')])), vec![Op::Sim(SimOp::Resume)]);
}

#[test]
fn cluster_backends_refuse_pause_step_faults_and_speed() {
    let mut st = demo(Capabilities::default());
    for (k, why) in [
        ('n', "exists in the simulator only"),
        ('f', "fault injection exists in the simulator only"),
        ('t', "fault injection"),
        ('b', "fault injection"),
        ('>', "speed exists in the simulator only"),
    ] {
        assert!(run(&mut st, [key(k)]).is_empty(), "{k}");
        let s = st.status.clone().unwrap_or_else(|| panic!("{k}: no status"));
        assert_eq!(s.kind, StatusKind::Refusal);
        assert!(s.text.contains(why), "{k}: {}", s.text);
    }
}

#[test]
fn scale_up_is_direct_and_scale_to_zero_asks() {
    let mut st = demo(sim_caps());
    assert_eq!(
        ops(&run(&mut st, [key('+')])),
        vec![Op::from(ClusterOp::Scale { set: web(), replicas: 6 })]
    );
    assert_eq!(
        ops(&run(&mut st, [key('-')])),
        vec![Op::from(ClusterOp::Scale { set: web(), replicas: 4 })]
    );
    let cmds = run(&mut st, [key('s'), key('0'), code(KeyCode::Enter)]);
    assert!(cmds.is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation") };
    assert_eq!((c.old.as_str(), c.new.as_str()), ("5 replicas", "0 replicas"));
    assert_eq!(
        ops(&run(&mut st, [key('y')])),
        vec![Op::from(ClusterOp::Scale { set: web(), replicas: 0 })]
    );
    // Already at 0: scale down is refused.
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            0,
            0,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    assert!(run(&mut st, [key('-')]).is_empty());
    assert!(status_text(&st).contains("already has 0"), "{}", status_text(&st));
}

#[test]
fn delete_pod_confirms_old_and_new_and_refuses_placeholders() {
    let mut st = demo(sim_caps());
    run(&mut st, [code(KeyCode::Right), code(KeyCode::Right)]);
    assert_eq!(st.selected_ordinal, 2);
    assert!(run(&mut st, [ctrl('d')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation") };
    assert!(c.title.contains("default/web-2"), "{}", c.title);
    assert!(c.old.contains("Ready") && c.old.contains("revision a"), "{}", c.old);
    // Partition 5 holds ordinal 2: it comes back at the current revision.
    assert!(c.new.contains("revision a"), "{}", c.new);
    let cmds = run(&mut st, [key('y')]);
    let pod = ObjRef::new(NS, "web-2");
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::EvictPod { pod, uid: None })]);
    // A placeholder (the pod is gone) is refused.
    run(
        &mut st,
        [Msg::Backend(BackendEvent::Deleted(Object::Pod(std::sync::Arc::new(pod_at(2)))))],
    );
    assert!(run(&mut st, [ctrl('d')]).is_empty());
    assert!(status_text(&st).contains("placeholder"), "{}", status_text(&st));
}

fn pod_at(o: i32) -> k8s_openapi::api::core::v1::Pod {
    pod("web", o, "web-a", true)
}

#[test]
fn faults_on_the_selected_pod() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('l')]);
    let p = ObjRef::new(NS, "web-1");
    assert_eq!(ops(&run(&mut st, [key('f')])), vec![Op::from(Fault::FailPod { pod: p.clone() })]);
    assert_eq!(
        ops(&run(&mut st, [key('t')])),
        vec![Op::from(Fault::SetPodReady { pod: p.clone(), ready: false })]
    );
}

#[test]
fn selection_moves_and_clamps() {
    let mut st = demo(sim_caps());
    assert_eq!(st.selected_ordinal, 0);
    run(&mut st, [code(KeyCode::Left)]);
    assert_eq!(st.selected_ordinal, 0, "clamped at the first ordinal");
    run(&mut st, [code(KeyCode::End)]);
    assert_eq!(st.selected_ordinal, 4);
    run(&mut st, [key('l'), code(KeyCode::PageDown)]);
    assert_eq!(st.selected_ordinal, 4, "clamped at the last ordinal");
    run(&mut st, [key('g')]);
    assert_eq!(st.selected_ordinal, 0);
    // With a 3-column grid from the last draw, Down moves one row.
    let hits = grid_3_columns();
    st.dirty = false;
    run(&mut st, [Msg::Drawn(hits)]);
    assert!(!st.dirty, "a draw report must not cause a redraw");
    run(&mut st, [key('j')]);
    assert_eq!(st.selected_ordinal, 3);
    run(&mut st, [key('k')]);
    assert_eq!(st.selected_ordinal, 0);
    // Scale down to 2: the selection follows the span once the condemned pods are gone.
    run(&mut st, [code(KeyCode::End)]);
    run(
        &mut st,
        [applied(Object::Set(std::sync::Arc::new(set(
            "web",
            2,
            5,
            "nginx:1.26",
            "web-a",
            "web-b",
        ))))],
    );
    assert_eq!(st.selected_ordinal, 4, "condemned pods stay selectable while they exist");
    for o in 2..5 {
        run(
            &mut st,
            [Msg::Backend(BackendEvent::Deleted(Object::Pod(std::sync::Arc::new(pod_at(o)))))],
        );
    }
    assert_eq!(st.selected_ordinal, 1);
}

#[test]
fn a_click_on_a_grid_cell_selects_its_ordinal() {
    let mut st = demo(sim_caps());
    let hits = grid_3_columns();
    run(&mut st, [Msg::Drawn(hits)]);
    let click = |column, row| {
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    run(&mut st, [click(21, 7)]); // second row, second column
    assert_eq!(st.selected_ordinal, 4);
    run(&mut st, [click(35, 7)]); // third column of the second row: no ordinal 5
    assert_eq!(st.selected_ordinal, 4);
    run(&mut st, [click(10, 5)]);
    assert_eq!(st.selected_ordinal, 0);
}

#[test]
fn op_failures_show_in_the_status_line_and_the_timeline() {
    let mut st = demo(sim_caps());
    let before = st.timeline.len();
    run(
        &mut st,
        [Msg::Backend(BackendEvent::OpFailed(Failure::new(
            "partition web -1".into(),
            FailureKind::Invalid,
            "partition must be >= 0",
        )))],
    );
    let s = st.status.clone().unwrap_or_else(|| panic!("no status"));
    assert_eq!(s.kind, StatusKind::Error);
    assert!(s.text.contains("partition must be >= 0"), "{}", s.text);
    assert_eq!(st.timeline.len(), before + 1);
    let last = st.timeline.iter().last().map(|e| e.kind.clone());
    assert!(matches!(last, Some(EventKind::Error { message, .. }) if message.contains(">= 0")));
}

#[test]
fn undo_picks_a_revision_and_confirms() {
    let mut st = demo(sim_caps());
    assert!(run(&mut st, [key('u')]).is_empty());
    let Modal::Picker(p) = &st.modal else { panic!("no picker: {:?}", st.modal) };
    assert_eq!(p.choices.iter().map(|c| c.revision).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(p.selected, 1, "the newest revision that is not the update revision");
    assert_eq!(p.choices[1].image.as_deref(), Some("nginx:1.25"));
    // Each choice says what rolling back to it changes in the template the set has now.
    assert_eq!(p.choices[1].change.as_deref(), Some("image: nginx:1.26 → nginx:1.25"));
    assert_eq!(p.choices[0].change, None, "the update revision changes nothing");
    // Enter on the update revision is refused, the picker stays.
    run(&mut st, [key('k'), code(KeyCode::Enter)]);
    assert!(matches!(st.modal, Modal::Picker(_)));
    assert!(status_text(&st).contains("already the update revision"));
    run(&mut st, [key('j'), code(KeyCode::Enter)]);
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation") };
    assert!(c.old.contains("revision 2") && c.new.contains("revision 1"), "{c:?}");
    assert!(c.new.contains("nginx:1.25"));
    let cmds = run(&mut st, [key('y')]);
    assert_eq!(ops(&cmds), vec![Op::from(ClusterOp::Undo { set: web(), revision: Some(1) })]);
}

#[test]
fn undo_with_one_revision_is_refused() {
    let mut st = demo(sim_caps());
    let r = revision("web", "web-a", 1, "nginx:1.25");
    run(&mut st, [Msg::Backend(BackendEvent::Deleted(Object::Revision(std::sync::Arc::new(r))))]);
    assert!(run(&mut st, [key('u')]).is_empty());
    assert_eq!(st.modal, Modal::None);
    assert!(status_text(&st).contains("no earlier revision"), "{}", status_text(&st));
}

#[test]
fn new_image_prompt_is_prefilled_with_a_bump() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('i')]);
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt") };
    assert_eq!(p.input, "nginx:1.27");
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert_eq!(
        ops(&cmds),
        vec![Op::from(ClusterOp::SetImage { set: web(), image: "nginx:1.27".into() })]
    );
    // Unchanged image is refused.
    run(&mut st, [key('i'), ctrl('u')]);
    for c in "nginx:1.26".chars() {
        run(&mut st, [key(c)]);
    }
    assert!(run(&mut st, [code(KeyCode::Enter)]).is_empty());
    assert!(status_text(&st).contains("already nginx:1.26"), "{}", status_text(&st));
}

#[test]
fn restart_and_speed() {
    let mut st = demo(sim_caps());
    // Restart asks first (k9s does): every pod is replaced.
    assert!(run(&mut st, [key('r')]).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("restart did not ask") };
    assert!(c.warning.as_deref().unwrap_or_default().contains("every pod is replaced"));
    assert_eq!(ops(&run(&mut st, [key('y')])), vec![Op::from(ClusterOp::Restart { set: web() })]);
    assert_eq!(ops(&run(&mut st, [key('>')])), vec![Op::Sim(SimOp::SetSpeed { speed: 2.0 })]);
    assert_eq!(st.speed, 2.0);
    assert_eq!(ops(&run(&mut st, [key('<'), key('<')])).len(), 2);
    assert_eq!(st.speed, 0.5);
}

#[test]
fn quit_from_any_context() {
    let mut st = demo(sim_caps());
    assert_eq!(run(&mut st, [key('q')]), vec![Command::Quit]);
    assert!(st.quit);
    let mut st = demo(sim_caps());
    run(&mut st, [key('p')]);
    assert_eq!(run(&mut st, [ctrl('c')]), vec![Command::Quit]);
    let mut st = demo(sim_caps());
    assert_eq!(run(&mut st, [Msg::Signal(15)]), vec![Command::Quit]);
}
