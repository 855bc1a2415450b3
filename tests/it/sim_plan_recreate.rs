//! A plan on a Recreate set (`plan::recreate`), on the simulator with the gate on: one step of
//! every pod, opened by the plan's own template write once its before-step gate passed (a gate
//! that fails leaves every old pod standing and the template as it was), each pod's post-ready
//! as it is back, partial steps and a plan with nothing to set refused, `--on-failure undo`
//! putting the template back.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use ststui::backend::{EventKind, ObjRef};
use ststui::sim::SimConfig;

use crate::support::played::{Run, play_with};

const BASE: &str = "kubelet start=1s ready=1s stop=3s\n\
                    create web replicas=3 strategy=Recreate\n\
                    settle\n";

fn gated() -> SimConfig {
    let mut config = SimConfig::default();
    config.options.semantics.recreate_gate = true;
    config
}

fn play(text: &str) -> Run {
    play_with(&format!("{BASE}{text}"), gated())
}

fn plan_lines(r: &Run) -> Vec<String> {
    r.timeline()
        .filter_map(|(_, k)| match k {
            EventKind::Plan { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn errors(r: &Run) -> Vec<String> {
    r.timeline()
        .filter_map(|(_, k)| match k {
            EventKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn image(r: &Run) -> String {
    let set = r.sim.set(&ObjRef::new("default", "web")).unwrap();
    set.spec.template.spec.as_ref().unwrap().containers[0].image.clone().unwrap()
}

/// The uids of web's pods, in ordinal order.
fn uids(r: &Run) -> Vec<String> {
    (0..3)
        .map(|o| {
            let p = r.sim.pod(&ObjRef::new("default", format!("web-{o}"))).unwrap();
            p.metadata.uid.clone().unwrap()
        })
        .collect()
}

fn position(lines: &[String], what: &str) -> usize {
    lines.iter().position(|l| l.contains(what)).unwrap_or_else(|| panic!("{what}: {lines:#?}"))
}

#[test]
fn the_before_step_gate_passes_then_the_image_is_set_and_each_pod_is_post_ready_gated() {
    let r = play(
        "rollout web steps=100% image=nginx:1.27 gates=before-step,post-ready\n\
         settle\n\
         expect web plan=done updated=3 ready=3 rolledOut=true\n",
    );
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, errors(&r));
    assert_eq!(image(&r), "nginx:1.27");
    let lines = plan_lines(&r);
    let before = position(&lines, "before-step gate");
    let passed = position(&lines, "before-step gate `sim:`: passed");
    let set = position(&lines, "image nginx:1.27 set on web (Recreate");
    assert!(before < passed && passed < set, "{lines:#?}");
    // Each pod's post-ready once it is back, in the order OrderedReady brings them.
    let posts: Vec<usize> = ["web-0", "web-1", "web-2"]
        .iter()
        .map(|p| position(&lines, &format!("post-ready gate `sim:` on {p}: passed")))
        .collect();
    assert!(set < posts[0] && posts[0] < posts[1] && posts[1] < posts[2], "{lines:#?}");
    let done = lines.last().unwrap();
    assert_eq!(done, "plan done: 1 step (100%), every pod recreated on the new revision");
}

#[test]
fn a_failing_before_step_gate_halts_with_the_template_and_every_old_pod_untouched() {
    let before = play("");
    let r = play(
        "gate web before-step fail\n\
         rollout web steps=100% image=nginx:1.27 gates=before-step\n\
         settle\n\
         expect web plan=halted updated=3 ready=3 rolledOut=true\n",
    );
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, errors(&r));
    assert_eq!(image(&r), image(&before), "the image was never set");
    assert_eq!(uids(&r), uids(&before), "no pod was deleted");
}

#[test]
fn partial_steps_and_a_plan_with_nothing_to_set_are_refused_with_nothing_written() {
    let r = play("rollout web steps=1,100% image=nginx:1.27\nsettle\n");
    let e = errors(&r).join("\n");
    assert!(e.contains("a plan on it is one step of every pod (--steps 100%"), "{e}");
    assert!(e.contains("1,100% would leave 1 of 3 updated"), "{e}");
    assert_ne!(image(&r), "nginx:1.27");
    let r = play("rollout web steps=100%\nsettle\n");
    let e = errors(&r).join("\n");
    assert!(e.contains("a plan on it sets the image itself"), "{e}");
    // Its template changed outside the plan: a before-step gate comes too late.
    let r = play("image web nginx:1.27\nrollout web steps=100% gates=before-step\nsettle\n");
    let e = errors(&r).join("\n");
    assert!(e.contains("comes too late"), "{e}");
    let r = play("rollout web steps=100% image=nginx:1.27 gates=pre-delete\nsettle\n");
    let e = errors(&r).join("\n");
    assert!(e.contains("there is no pod for --pre-delete to go before or after"), "{e}");
    // image= is a Recreate set's.
    let r = play_with(
        "create web replicas=2\nsettle\nrollout web steps=100% image=nginx:1.27\nsettle\n",
        gated(),
    );
    let e = errors(&r).join("\n");
    assert!(e.contains("image= is set by a Recreate set's plan"), "{e}");
}

#[test]
fn a_plan_follows_a_recreate_already_under_way_without_a_before_step_gate() {
    let r = play(
        "image web nginx:1.27\n\
         rollout web steps=100% gates=post-ready\n\
         settle\n\
         expect web plan=done updated=3 ready=3\n",
    );
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, errors(&r));
    let lines = plan_lines(&r);
    assert!(lines.iter().all(|l| !l.contains("image nginx:1.27 set")), "{lines:#?}");
    assert_eq!(
        lines.iter().filter(|l| l.contains("post-ready gate") && l.contains(": passed")).count(),
        3
    );
}

#[test]
fn a_failing_post_ready_gate_with_undo_puts_the_old_template_back() {
    let before = play("");
    let r = play(
        "gate web-1 post-ready fail\n\
         rollout web steps=100% image=nginx:1.27 gates=post-ready on-failure=undo\n\
         settle\n\
         expect web plan=aborted ready=3 rolledOut=true\n",
    );
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, errors(&r));
    assert_eq!(image(&r), image(&before), "the template is the old one again");
    let lines = plan_lines(&r);
    assert!(lines.iter().any(|l| l.contains("on web-1 failed")), "{lines:#?}");
}

#[test]
fn a_broken_image_halts_at_stuck_after_and_abort_leaves_nothing_behind() {
    let before = play("");
    let r = play(
        "break-image nginx:bad\n\
         rollout web steps=100% image=nginx:bad stuck-after=1m\n\
         settle\n\
         expect web plan=halted\n\
         abort web\n\
         settle\n\
         expect web plan=aborted ready=3 updated=3 rolledOut=true\n",
    );
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, errors(&r));
    assert_eq!(image(&r), image(&before), "the template is the old one again");
    let set = r.sim.set(&ObjRef::new("default", "web")).unwrap();
    let annotations = set.metadata.annotations.clone().unwrap_or_default();
    let left: Vec<&String> =
        annotations.keys().filter(|k| k.contains("frozen") || k.contains("lease")).collect();
    assert!(left.is_empty(), "no freeze or lease left behind: {left:?}");
    let strategy = ststui::core::spec::strategy(set);
    assert!(strategy.recreate, "still Recreate");
    let lines = plan_lines(&r);
    assert!(lines.iter().any(|l| l.contains("made no progress for 1m")), "{lines:#?}");
}

#[test]
fn a_group_with_a_recreate_set_is_refused_naming_it() {
    let r = play_with(
        "kubelet start=1s ready=1s stop=1s\n\
         create db-a replicas=2 strategy=Recreate labels=rollout-group=db\n\
         create db-b replicas=2 labels=rollout-group=db\n\
         settle\n\
         partition db-b 2\n\
         image db-b nginx:1.27\n\
         rollout group=db steps=100%\n\
         settle\n",
        gated(),
    );
    let e = errors(&r).join("\n");
    assert!(e.contains("db-a uses the Recreate strategy: a group holds its sets"), "{e}");
    let b = r.sim.set(&ObjRef::new("default", "db-b")).unwrap();
    assert_eq!(ststui::core::spec::strategy(b).partition, 2, "nothing rolled");
}
