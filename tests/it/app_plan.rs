//! The console's rollout plan, through the reducer: `P` and its prompt (prefilled, a bad entry
//! named in the dialog, a valid one taking the lease and opening the first step in one patch),
//! a second runner refused by name, `A` only at a gate, the freeze key halting a plan, and the
//! partition keys refused while a plan drives the partition (the controller pane names the plan
//! instead of `[`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use std::sync::Arc;

use crate::support::objects::web;
use app_fixtures::*;
use crossterm::event::KeyCode;
use ststui::app::state::Modal;
use ststui::app::{AppState, Msg};
use ststui::backend::{ClusterOp, Object, Op, Write};
use ststui::plan::record::{LEASE, Lease, PLAN, Phase, Record, stamp};

fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(key).collect()
}

/// The demo set with `annotations` (plan record, lease) as the server would show it.
fn annotate(st: &mut AppState, annotations: &[(&str, String)]) {
    let mut set = st.mirror.set(&web()).unwrap().clone();
    let map = set.metadata.annotations.get_or_insert_with(Default::default);
    for (k, v) in annotations {
        map.insert((*k).to_string(), v.clone());
    }
    run(st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
}

fn record(phase: Phase, step: usize, partition: i32) -> Record {
    Record {
        steps: "1,pause,100%".into(),
        bake_seconds: 0,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "web-b".into(),
        template: String::new(),
        step,
        of: 3,
        phase,
        since: stamp(t0()),
        partition,
        by: "ana".into(),
        started: stamp(t0()),
        reason: None,
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    }
}

fn plan_ops(cmds: &[ststui::app::Command]) -> Vec<ClusterOp> {
    decided_ops(cmds)
        .into_iter()
        .filter_map(|op| match op {
            Op::Cluster(Write { op, .. }) => Some(op),
            _ => None,
        })
        .collect()
}

/// The demo set as the controller has observed it (a plan reads only an observed status).
fn observed(st: &mut AppState) {
    let mut set = st.mirror.set(&web()).unwrap().clone();
    let status = set.status.get_or_insert_with(Default::default);
    status.observed_generation = set.metadata.generation;
    run(st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
}

#[test]
fn p_prefills_names_a_bad_entry_and_starts_with_the_lease_and_the_first_step() {
    let mut st = demo(sim_caps());
    observed(&mut st);
    run(&mut st, [key('P')]);
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt: {:?}", st.modal) };
    assert_eq!(p.input, "1,50%,100%", "a first suggestion without a plan on the set");
    // A bad entry: named in the dialog, nothing sent, the dialog stays.
    run(&mut st, [ctrl('u')]);
    let cmds = run(&mut st, typed("1,0%").into_iter().chain([code(KeyCode::Enter)]));
    assert!(plan_ops(&cmds).is_empty(), "{cmds:?}");
    let Modal::Prompt(p) = &st.modal else { panic!("the dialog closed") };
    assert!(p.error.as_deref().unwrap_or_default().contains("0%"), "{:?}", p.error);
    run(&mut st, [ctrl('u')]);
    let cmds =
        run(&mut st, typed("1,pause,100% bake=30s").into_iter().chain([code(KeyCode::Enter)]));
    // Nothing is written before the operator has seen the steps and said yes.
    assert!(plan_ops(&cmds).is_empty(), "{cmds:?}");
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    let steps = c.details.join("\n");
    assert!(steps.contains("step 1: 1 → 1 of 5 updated (partition 5 → 4)"), "{steps}");
    assert!(steps.contains("step 2: pause until `ststui approve web`"), "{steps}");
    assert!(steps.contains("step 3: 100% → 5 of 5 updated (partition 4 → 0)"), "{steps}");
    assert!(steps.contains("bake 30s"), "{steps}");
    let cmds = run(&mut st, [key('y')]);
    let ops = plan_ops(&cmds);
    let [ClusterOp::PlanLease { lease: Some(l), .. }] = ops.as_slice() else {
        panic!("the lease first, alone: {ops:?}")
    };
    assert!(l.contains("ststui-console"), "{l}");
    // The server shows the lease: the first step, decided on the set with the lease.
    let lease = l.clone();
    let cmds = {
        let mut set = st.mirror.set(&web()).unwrap().clone();
        set.metadata.annotations.get_or_insert_with(Default::default).insert(LEASE.into(), lease);
        run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd])
    };
    let ops = plan_ops(&cmds);
    let Some(ClusterOp::Plan { partition, record, .. }) = ops.first() else {
        panic!("no first step: {ops:?} {:?}", st.status)
    };
    assert_eq!(*partition, Some((5, 4)), "step 1 opens web-4 only");
    let r: Record = serde_json::from_str(record).unwrap();
    assert_eq!((r.step, r.of, r.phase, r.bake_seconds), (1, 3, Phase::Waiting, 30));
    assert!(st.plan_run.is_some());
}

/// `P` on a Recreate set with partial steps: refused before the question, naming what a plan
/// there is (one step of every pod), nothing sent.
#[test]
fn p_on_a_recreate_set_with_partial_steps_is_refused_before_the_question() {
    let mut st = demo(sim_caps());
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    let status = set.status.get_or_insert_with(Default::default);
    status.observed_generation = set.metadata.generation;
    status.current_revision.clone_from(&status.update_revision);
    run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
    run(&mut st, [key('P'), ctrl('u')]);
    let cmds = run(&mut st, typed("1,100%").into_iter().chain([code(KeyCode::Enter)]));
    assert!(plan_ops(&cmds).is_empty(), "{cmds:?}");
    assert!(!matches!(st.modal, Modal::Confirm(_)), "asked: {:?}", st.modal);
    let said = match &st.modal {
        Modal::Prompt(p) => p.error.clone().unwrap_or_default(),
        _ => status_text(&st),
    };
    assert!(said.contains("uses the Recreate strategy"), "{said}");
    assert!(said.contains("a plan on it is one step of every pod"), "{said}");
    assert!(st.plan_run.is_none());
}

#[test]
fn p_is_refused_while_another_runner_holds_the_lease() {
    let mut st = demo(sim_caps());
    let lease = Lease {
        holder: "ana".into(),
        host: "build-7".into(),
        pid: 4242,
        expires: stamp(t0().checked_add(k8s_openapi::jiff::SignedDuration::from_secs(20)).unwrap()),
    };
    annotate(&mut st, &[(LEASE, serde_json::to_string(&lease).unwrap())]);
    run(&mut st, [key('P')]);
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert!(plan_ops(&cmds).is_empty(), "{cmds:?}");
    let said = match &st.modal {
        Modal::Prompt(p) => p.error.clone().unwrap_or_default(),
        _ => status_text(&st),
    };
    assert!(said.contains("a plan runner holds default/web: ana on build-7 (pid 4242)"), "{said}");
    assert!(st.plan_run.is_none());
}

#[test]
fn a_approves_only_a_gate() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('A')]);
    assert!(
        status_text(&st).contains("web has no rollout plan (P starts one)"),
        "{}",
        status_text(&st)
    );
    annotate(&mut st, &[(PLAN, serde_json::to_string(&record(Phase::Waiting, 1, 4)).unwrap())]);
    let cmds = run(&mut st, [key('A')]);
    assert!(plan_ops(&cmds).is_empty());
    assert!(status_text(&st).contains("no plan waits for approval"), "{}", status_text(&st));
    annotate(&mut st, &[(PLAN, serde_json::to_string(&record(Phase::Gate, 2, 4)).unwrap())]);
    let cmds = run(&mut st, [key('A')]);
    let Some(ClusterOp::Plan { partition: None, record, .. }) = plan_ops(&cmds).pop() else {
        panic!("{cmds:?}")
    };
    let r: Record = serde_json::from_str(&record).unwrap();
    assert_eq!((r.step, r.phase), (2, Phase::Approved));
}

#[test]
fn while_a_plan_drives_the_partition_the_keys_say_so_and_freeze_halts_it() {
    let mut st = demo(sim_caps());
    annotate(&mut st, &[(PLAN, serde_json::to_string(&record(Phase::Waiting, 1, 4)).unwrap())]);
    for k in ['[', ']', 'p'] {
        let cmds = run(&mut st, [key(k)]);
        assert!(plan_ops(&cmds).is_empty(), "{k}: {cmds:?}");
        let said = status_text(&st);
        assert!(
            said.contains("a rollout plan drives web's partition (plan 1/3 (1): waiting"),
            "{k}: {said}"
        );
        assert!(said.contains("A approves a gate, F halts the plan"), "{k}: {said}");
        assert_eq!(st.modal, Modal::None, "{k}");
    }
    let set = st.mirror.set(&web()).unwrap().clone();
    let offer = ststui::app::derived::offer(&st, &set);
    assert!(offer.planned && !offer.lower_partition && !offer.set_partition, "{offer:?}");
    // The controller pane names the plan, not `[`.
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 50)).unwrap();
    let theme = ststui::ui::Theme::colored();
    term.draw(|f| {
        ststui::ui::draw(f, &st, &theme);
    })
    .unwrap();
    let buf = term.backend().buffer().clone();
    let screen: String = (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect();
    assert!(screen.contains("held: partition 5 holds web-0..web-4"), "{screen}");
    assert!(screen.contains("— the rollout plan holds it"), "{screen}");
    assert!(!screen.contains("press [ to lower it"), "{screen}");
    // The freeze key freezes and records the plan halted, in the same keypress.
    let cmds = run(&mut st, [key('F')]);
    let ops = plan_ops(&cmds);
    assert!(ops.iter().any(|o| matches!(o, ClusterOp::Freeze { .. })), "{ops:?}");
    let halted = ops.iter().find_map(|o| match o {
        ClusterOp::Plan { record, .. } => serde_json::from_str::<Record>(record).ok(),
        _ => None,
    });
    let halted = halted.unwrap_or_else(|| panic!("no halt recorded: {ops:?}"));
    assert_eq!(halted.phase, Phase::Halted);
    assert!(halted.reason.unwrap_or_default().contains("freeze"));
    // The freeze goes first (a runner must read the freeze before the halt: a freeze is never
    // undone), and the halt without a basis (the freeze just changed the set).
    let sent = decided_ops(&cmds);
    let at = |f: &dyn Fn(&ClusterOp) -> bool| {
        sent.iter().position(|o| matches!(o, Op::Cluster(Write { op, .. }) if f(op))).unwrap()
    };
    let freeze = at(&|o| matches!(o, ClusterOp::Freeze { .. }));
    let halt = at(&|o| matches!(o, ClusterOp::Plan { .. }));
    assert!(freeze < halt, "{sent:?}");
    assert!(matches!(&sent[halt], Op::Cluster(Write { basis: None, .. })), "{sent:?}");
}

/// Starts `1,pause,100%` from this console and shows the server holding its lease: the run
/// is under way (what the quit tests need).
fn running(st: &mut AppState) -> String {
    observed(st);
    run(st, [key('P'), ctrl('u')]);
    run(st, typed("1,pause,100%").into_iter().chain([code(KeyCode::Enter)]));
    let cmds = run(st, [key('y')]);
    let Some(ClusterOp::PlanLease { lease: Some(l), .. }) = plan_ops(&cmds).pop() else {
        panic!("{cmds:?}")
    };
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.metadata.annotations.get_or_insert_with(Default::default).insert(LEASE.into(), l.clone());
    run(st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
    assert!(st.plan_run.is_some());
    l
}

#[test]
fn quitting_while_this_console_runs_a_plan_asks_and_gives_the_lease_back() {
    let mut st = demo(sim_caps());
    let lease = running(&mut st);
    // q asks; n keeps it running.
    let cmds = run(&mut st, [key('q')]);
    assert!(!st.quit && cmds.is_empty(), "{cmds:?}");
    let Modal::Confirm(c) = &st.modal else { panic!("no question: {:?}", st.modal) };
    assert!(c.title.contains("Quit while this console runs the plan on default/web"), "{c:?}");
    run(&mut st, [key('n')]);
    assert!(!st.quit && st.plan_run.is_some());
    // q, y: the lease is given back (its precondition: the lease the server holds), then quit.
    run(&mut st, [key('q')]);
    let cmds = run(&mut st, [key('y')]);
    assert!(st.quit);
    let ops = plan_ops(&cmds);
    assert!(
        ops.iter().any(
            |o| matches!(o, ClusterOp::PlanLease { lease: None, seen: Some(s), .. } if *s == lease)
        ),
        "{ops:?}"
    );
    assert!(matches!(cmds.last(), Some(ststui::app::Command::Quit)), "{cmds:?}");
}

#[test]
fn a_signal_stops_the_plan_and_gives_the_lease_back_without_asking() {
    let mut st = demo(sim_caps());
    running(&mut st);
    let cmds = run(&mut st, [Msg::Signal(15)]);
    assert!(st.quit);
    assert!(plan_ops(&cmds).iter().any(|o| matches!(o, ClusterOp::PlanLease { lease: None, .. })));
}

/// The abort key: the forced rollback of the whole set, shown as `ststui abort` shows it,
/// asked, then the plan's end (the partition back where it began), the undo and the stuck pods'
/// deletions, in that order.
#[test]
fn the_abort_key_shows_the_rollback_asks_and_sends_it_in_order() {
    let mut st = demo(sim_caps());
    let r = Record { began_at: Some(5), ..record(Phase::Waiting, 1, 4) };
    annotate(&mut st, &[(PLAN, serde_json::to_string(&r).unwrap())]);
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition = Some(4);
    run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
    let cmds = run(&mut st, [key('U')]);
    assert!(plan_ops(&cmds).is_empty(), "nothing before the yes: {cmds:?}");
    let Modal::Confirm(c) = &st.modal else {
        panic!("no question: {:?} {}", st.modal, status_text(&st))
    };
    let shown = format!("{} {} {}", c.title, c.new, c.details.join(" | "));
    // Said again once it ran ("old → new"): in the present, never "will revert".
    assert!(c.new.starts_with("the template back to revision"), "{shown}");
    assert!(shown.contains("will end the plan, recorded as aborted"), "{shown}");
    assert!(shown.contains("will put the partition back from 4 to 5"), "{shown}");
    let ops = plan_ops(&run(&mut st, [key('y')]));
    let Some(ClusterOp::Plan { partition: Some((4, 5)), record, .. }) = ops.first() else {
        panic!("the plan's end first: {ops:?}")
    };
    let ended: Record = serde_json::from_str(record).unwrap();
    assert_eq!(ended.phase, Phase::Aborted);
    assert!(matches!(ops.get(1), Some(ClusterOp::Undo { .. })), "{ops:?}");
}

/// `P` after a halt: the steps shown from the partition the halted plan left; the step already
/// open is entered (its pod checked and baked), never counted as done: the first write records
/// step 1 waiting, it opens nothing.
#[test]
fn p_after_a_halt_shows_its_steps_asks_and_never_skips_the_open_step() {
    let mut st = demo(sim_caps());
    observed(&mut st);
    let halted = Record {
        steps: "1,50%,100%".into(),
        reason: Some("check exited 1".into()),
        ..record(Phase::Halted, 1, 4)
    };
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition = Some(4);
    set.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(PLAN.into(), serde_json::to_string(&halted).unwrap());
    run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]);
    run(&mut st, [key('P')]);
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert!(plan_ops(&cmds).is_empty());
    let Modal::Confirm(c) = &st.modal else { panic!("no question: {:?}", st.modal) };
    assert!(c.warning.as_deref().unwrap_or("").contains("halted at 1/3"), "{c:?}");
    let steps = c.details.join("\n");
    assert!(steps.contains("step 1: 1 → 1 of 5 updated (partition 4 (open already"), "{steps}");
    assert!(steps.contains("step 2: 50% → 3 of 5 updated (partition 4 → 2)"), "{steps}");
    let Some(ClusterOp::PlanLease { lease: Some(l), .. }) =
        plan_ops(&run(&mut st, [key('y')])).pop()
    else {
        panic!("no lease")
    };
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.metadata.annotations.get_or_insert_with(Default::default).insert(LEASE.into(), l);
    let ops = plan_ops(&run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd]));
    let Some(ClusterOp::Plan { partition, record, .. }) = ops.first() else { panic!("{ops:?}") };
    assert_eq!(*partition, None, "nothing opens before step 1's pod is checked and baked");
    let r: Record = serde_json::from_str(record).unwrap();
    assert_eq!((r.step, r.phase, r.partition), (1, Phase::Waiting, 4));
}

/// `i` says before anything is typed when a new image would roll pods at once (a partition
/// below the replicas, no plan): how many, and that F holds the set first and P runs a plan.
#[test]
fn a_new_image_that_rolls_at_once_says_so_before_it_is_typed() {
    let mut st = demo(sim_caps());
    run(&mut st, [key('i')]);
    let Modal::Prompt(p) = &st.modal else { panic!("{:?}", st.modal) };
    assert!(!p.kind.label().contains("at once"), "held at partition 5: {}", p.kind.label());
    run(&mut st, [code(KeyCode::Esc)]);
    let mut set = st.mirror.set(&web()).unwrap().clone();
    set.spec.update_strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().partition = Some(0);
    run(&mut st, [applied(Object::Set(Arc::new(set))), Msg::BatchEnd, key('i')]);
    let Modal::Prompt(p) = &st.modal else { panic!("{:?}", st.modal) };
    let label = p.kind.label();
    assert!(label.contains("partition 0: it rolls 5 pods of web at once"), "{label}");
    assert!(label.contains("F holds the set first, then P runs a plan"), "{label}");
}

/// On a cluster the plan waits for its write's answer, matched by id: a failure in the same
/// words for another write (a second console's, a stale one) is not its answer.
#[test]
fn a_plan_takes_only_its_own_writes_answer() {
    use ststui::backend::{BackendEvent, Capabilities, Failure, FailureKind};
    let mut st = demo(Capabilities::cluster());
    observed(&mut st);
    run(&mut st, [key('P'), ctrl('u')]);
    run(&mut st, typed("1,100%").into_iter().chain([code(KeyCode::Enter)]));
    let sent = decided_ops(&run(&mut st, [key('y')]));
    let [Op::Cluster(lease)] = sent.as_slice() else { panic!("the lease alone: {sent:?}") };
    let words = lease.op.describe();
    let ending = |st: &AppState| st.plan_run.as_ref().is_none_or(|r| r.ending());
    // A conflict on the lease at the start would refuse the plan: another write's is ignored.
    let other = Failure::new(words.clone(), FailureKind::Conflict, "someone else's")
        .of(ststui::backend::WriteId::next());
    run(&mut st, [Msg::Backend(BackendEvent::OpFailed(other))]);
    assert!(!ending(&st), "another write's failure ended the plan: {:?}", st.status);
    let own = Failure::new(words, FailureKind::Conflict, "taken").of(lease.id);
    run(&mut st, [Msg::Backend(BackendEvent::OpFailed(own))]);
    assert!(ending(&st), "its own write's failure did not end the plan: {:?}", st.status);
}

/// A group part naming a first set this console does not hold: while the namespace's sets are
/// not listed here the keys refuse, naming the way past (`ststui step web --force`); once they
/// are, the named set does not exist, nothing drives the group, and the keys move the partition.
#[test]
fn a_part_naming_a_set_that_does_not_exist_never_locks_the_partition_keys() {
    use ststui::backend::{BackendEvent, ObjKind, Scope};
    use ststui::plan::group::part::{PART, Part, State};
    let mut st = demo(sim_caps());
    let part = Part {
        group: "ghosts".into(),
        sets: vec!["ghost".into(), "web".into()],
        place: 1,
        state: State::Waiting,
        since: stamp(t0()),
        by: "mallory".into(),
        started: stamp(t0()),
        steps: "1,100%".into(),
        zone_bake_seconds: 0,
        reason: None,
        clusters: None,
        cluster_bake_seconds: 0,
        approval: None,
    };
    annotate(&mut st, &[(PART, serde_json::to_string(&part).unwrap())]);
    run(&mut st, [key('[')]);
    let said = status_text(&st);
    assert!(said.contains("the group opens it in turn"), "{said}");
    assert!(said.contains("`ststui step web --force` moves it all the same"), "{said}");
    assert_eq!(st.modal, Modal::None);
    // The namespace's sets listed: `ghost` is not among them.
    let set = st.mirror.set(&web()).unwrap().clone();
    let listing = BackendEvent::Listed {
        kind: ObjKind::Set,
        scope: Scope::namespace(NS),
        objects: vec![Object::Set(Arc::new(set))],
    };
    run(&mut st, [Msg::Backend(listing), Msg::BatchEnd]);
    run(&mut st, [key('[')]);
    let said = status_text(&st);
    assert!(!said.contains("opens it in turn"), "{said}");
    assert!(said.contains("partition web 5 → 4"), "the step is taken: {said}");
}
