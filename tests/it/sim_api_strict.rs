//! The simulated API as strict as the real one, where the controller's own writes meet it: a
//! claim repair's pod PUT keeps what the API server keeps (the node, graceful termination), a
//! status write the server refuses fails the sync.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use sim_world_common::*;
use ststui::backend::{ClusterOp, EventKind, Op};
use ststui::sim::{KubeletConfig, Sim, SimConfig, SimEvent};

/// Changing the retention policy makes the real core repair the claims' ownerRefs and PUT the
/// pods (upstream `UpdateStatefulPod` dirties the pod after a claim repair). The PUT keeps
/// `spec.nodeName` (the API refuses clearing it), and the pod still terminates gracefully later.
#[test]
fn a_claim_repair_keeps_the_node_and_graceful_deletion() {
    let mut sim = Sim::new(SimConfig::default());
    sim.set_kubelet(KubeletConfig {
        start_ms: 1000,
        ready_ms: 1000,
        stop_ms: 3000,
        broken: None,
        failure: Default::default(),
    });
    sim.create_set(with_claims(set("web", 2), "Retain", "Retain")).unwrap();
    assert!(sim.settle(60_000));
    let node = |sim: &Sim| sim.pod(&key("web-0")).and_then(|p| p.spec.clone()?.node_name);
    let before = node(&sim);
    assert!(before.is_some(), "scheduled at creation");
    sim.drain_events();
    // whenDeleted=Delete: every claim gets a controller ref to the set; the pods are PUT.
    sim.apply_set(with_claims(set("web", 2), "Delete", "Retain")).unwrap();
    assert!(sim.settle(60_000));
    let l = lines(&sim.drain_events());
    assert!(l.iter().any(|l| l.contains("update-pvc data-web-0")), "{l:#?}");
    assert!(l.iter().any(|l| l.contains("update-pod web-0")), "{l:#?}");
    assert!(!l.iter().any(|l| l.contains("error")), "{l:#?}");
    assert_eq!(node(&sim), before, "the PUT kept spec.nodeName");
    // A later delete is graceful: terminating for the kubelet's stop delay, then gone.
    let del = ClusterOp::DeletePod { pod: key("web-0"), force: false, uid: None };
    sim.apply_op(Op::from(del)).unwrap();
    sim.advance(1000);
    let p = sim.pod(&key("web-0")).unwrap();
    assert!(p.metadata.deletion_timestamp.is_some(), "still terminating after 1 s");
    sim.advance(3000);
    let gone = sim.drain_events().into_iter().any(|e| match e {
        SimEvent::Timeline(t) => {
            matches!(t.kind, EventKind::Kubelet { ref pod, ref event } if pod == "web-0" && event == "gone")
        }
        _ => false,
    });
    assert!(gone, "gone after the stop delay");
}
