//! Properties of the simulated world under random operation sequences (stand-in reconciler):
//! watch events carry strictly increasing resourceVersions, timeline time never goes back,
//! every Modified/Deleted object was Added before, and a run replays identically.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use proptest::prelude::*;
use sim_world_common::*;
use ststui::backend::{ClusterOp, Fault, Object, Op, SimOp};
use ststui::sim::{Cascade, ChangeKind, KubeletConfig, SimEvent};

#[derive(Debug, Clone)]
enum Step {
    Wait(u64),
    Scale(i32),
    Image(u8),
    Fail(i32),
    Unready(i32),
    Ready(i32),
    /// Break (true) or fix an image of the run (`img:N`).
    BreakImage(u8, bool),
    Delete(i32, bool),
    Pause,
    Resume,
    Syncs(u32),
    Kubelet(u64, u64, u64),
    DeleteSet(bool),
    Recreate,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u64..3000).prop_map(Step::Wait),
        (0i32..5).prop_map(Step::Scale),
        (0u8..3).prop_map(Step::Image),
        (0i32..5).prop_map(Step::Fail),
        (0i32..5).prop_map(Step::Unready),
        (0i32..5).prop_map(Step::Ready),
        ((0u8..3), any::<bool>()).prop_map(|(i, b)| Step::BreakImage(i, b)),
        ((0i32..5), any::<bool>()).prop_map(|(o, f)| Step::Delete(o, f)),
        Just(Step::Pause),
        Just(Step::Resume),
        (0u32..4).prop_map(Step::Syncs),
        ((0u64..2000), (0u64..2000), (0u64..2000)).prop_map(|(a, b, c)| Step::Kubelet(a, b, c)),
        any::<bool>().prop_map(Step::DeleteSet),
        Just(Step::Recreate),
    ]
}

fn pod(o: i32) -> ststui::backend::ObjRef {
    key(&format!("web-{o}"))
}

fn run(steps: &[Step]) -> Vec<SimEvent> {
    let mut sim = sim_with_fake(KubeletConfig::default());
    let _ = sim.create_set(with_claims(set("web", 2), "Delete", "Delete"));
    let mut events = Vec::new();
    for s in steps {
        let web = key("web");
        // Errors (missing pods, not paused, ...) are part of the input space: ignored here.
        let _ = match s {
            Step::Wait(ms) => {
                sim.advance(*ms);
                Ok(())
            }
            Step::Scale(n) => sim.apply_op(Op::from(ClusterOp::Scale { set: web, replicas: *n })),
            Step::Image(i) => {
                sim.apply_op(Op::from(ClusterOp::SetImage { set: web, image: format!("img:{i}") }))
            }
            Step::Fail(o) => sim.apply_op(Op::from(Fault::FailPod { pod: pod(*o) })),
            Step::Unready(o) => {
                sim.apply_op(Op::from(Fault::SetPodReady { pod: pod(*o), ready: false }))
            }
            Step::Ready(o) => {
                sim.apply_op(Op::from(Fault::SetPodReady { pod: pod(*o), ready: true }))
            }
            Step::BreakImage(i, broken) => sim.apply_op(Op::from(Fault::BrokenImage {
                image: format!("img:{i}"),
                // Each image fails its own way: a probe, a pull, a crash loop.
                broken: broken.then(|| {
                    use ststui::backend::ImageFailure::*;
                    [Probe, Pull, Crash][*i as usize % 3]
                }),
            })),
            Step::Delete(o, force) => sim.apply_op(Op::from(ClusterOp::DeletePod {
                pod: pod(*o),
                force: *force,
                uid: None,
            })),
            Step::Pause => sim.apply_op(Op::Sim(SimOp::Pause)),
            Step::Resume => sim.apply_op(Op::Sim(SimOp::Resume)),
            Step::Syncs(n) => sim.apply_op(Op::Sim(SimOp::Step { n: *n })),
            Step::Kubelet(a, b, c) => {
                sim.set_kubelet(KubeletConfig {
                    start_ms: *a,
                    ready_ms: *b,
                    stop_ms: *c,
                    ..KubeletConfig::default()
                });
                Ok(())
            }
            Step::DeleteSet(orphan) => {
                let cascade = if *orphan { Cascade::Orphan } else { Cascade::Background };
                let _ = sim.delete_set(&web, cascade);
                Ok(())
            }
            Step::Recreate => {
                let _ = sim.create_set(with_claims(set("web", 2), "Delete", "Delete"));
                Ok(())
            }
        };
        events.extend(sim.drain_events());
    }
    sim.resume();
    sim.settle(600_000);
    events.extend(sim.drain_events());
    events
}

fn meta(o: &Object) -> (&'static str, String, u64, Option<String>) {
    let (kind, m) = match o {
        Object::Set(x) => ("set", &x.metadata),
        Object::Pod(x) => ("pod", &x.metadata),
        Object::Claim(x) => ("claim", &x.metadata),
        Object::Revision(x) => ("rev", &x.metadata),
        Object::Event(x) => ("event", &x.metadata),
        Object::Budget(x) => ("pdb", &x.metadata),
        Object::Eviction(x) => ("eviction", &x.metadata),
    };
    let rv = m.resource_version.as_deref().and_then(|r| r.parse().ok()).unwrap_or(0);
    (kind, m.name.clone().unwrap_or_default(), rv, m.uid.clone())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn watch_and_timeline_stay_consistent(steps in prop::collection::vec(step(), 1..40)) {
        let events = run(&steps);
        let mut last_rv = 0;
        let mut last_t = 0;
        let mut live = std::collections::BTreeMap::new();
        for e in &events {
            match e {
                SimEvent::Watch { kind, object } => {
                    let (k, name, rv, uid) = meta(object);
                    prop_assert!(rv > last_rv, "rv {rv} after {last_rv}");
                    last_rv = rv;
                    let id = (k, name.clone());
                    match kind {
                        ChangeKind::Added => {
                            prop_assert!(live.insert(id, uid).is_none(), "{k} {name} added twice");
                        }
                        ChangeKind::Modified => prop_assert_eq!(live.get(&id), Some(&uid)),
                        ChangeKind::Deleted => prop_assert_eq!(live.remove(&id), Some(uid)),
                    }
                }
                SimEvent::Timeline(ev) => {
                    prop_assert!(ev.t_ms >= last_t);
                    last_t = ev.t_ms;
                }
                SimEvent::Mode(_) | SimEvent::Api(_) | SimEvent::BrokenImages(_) => {}
            }
        }
        prop_assert_eq!(events, run(&steps));
    }
}
