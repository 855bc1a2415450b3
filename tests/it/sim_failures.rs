//! How a broken image fails in the simulator's kubelet, as a real kubelet reports it: the
//! container states and reasons a pod's status carries, the timeline's kubelet lines, and the
//! Events the recorder writes (counted when they repeat), for each failure (`probe`, `pull`,
//! `crash`), and recovery once the image is fixed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use sim_world_common::*;
use ststui::backend::{ClusterOp, Fault, ImageFailure, Op};
use ststui::sim::{KubeletConfig, Sim, SimConfig};

const BAD: &str = "app:bad";

/// `web` (1 replica) Ready on nginx:1.25 under the real controller, events recorded; then its
/// image is `BAD`, broken as `how`, and the pod re-created on it.
fn broken(how: ImageFailure) -> Sim {
    let kubelet =
        KubeletConfig { start_ms: 1000, ready_ms: 2000, stop_ms: 0, ..Default::default() };
    let mut sim =
        Sim::new(SimConfig { seed: 1, kubelet, record_events: true, ..Default::default() });
    sim.create_set(set("web", 1)).unwrap();
    assert!(sim.settle(60_000));
    sim.apply_op(Op::from(Fault::BrokenImage { image: BAD.into(), broken: Some(how) })).unwrap();
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: BAD.into() })).unwrap();
    sim.drain_events();
    sim
}

fn container(sim: &Sim) -> ContainerStatus {
    let pod: &Pod = sim.pod(&key("web-0")).unwrap();
    pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap()[0].clone()
}

fn waiting(sim: &Sim) -> Option<String> {
    container(sim).state?.waiting?.reason
}

fn phase(sim: &Sim) -> String {
    sim.pod(&key("web-0")).unwrap().status.as_ref().unwrap().phase.clone().unwrap_or_default()
}

/// The recorded Events about web-0: (type, reason, message, count), oldest first.
fn events(sim: &Sim) -> Vec<(String, String, String, i32)> {
    let mut out: Vec<_> = sim
        .store()
        .events()
        .iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("web-0"))
        .map(|e| {
            (
                e.type_.clone().unwrap_or_default(),
                e.reason.clone().unwrap_or_default(),
                e.message.clone().unwrap_or_default(),
                e.count.unwrap_or(1),
            )
        })
        .collect();
    out.sort();
    out
}

fn kubelet_lines(sim: &mut Sim) -> Vec<String> {
    lines(&sim.drain_events()).into_iter().filter(|l| l.contains("kubelet web-0")).collect()
}

#[test]
fn a_pull_failure_stays_pending_with_err_image_pull_then_backs_off_and_retries() {
    let mut sim = broken(ImageFailure::Pull);
    // The old pod goes (update), the new one is created; its pull fails at the start delay.
    sim.advance(20_000);
    assert_eq!(phase(&sim), "Pending", "a pod whose image never pulled is Pending");
    assert_eq!(waiting(&sim).as_deref(), Some("ImagePullBackOff"));
    let l = kubelet_lines(&mut sim);
    let pulls = l.iter().filter(|l| l.ends_with("pull-failed")).count();
    assert!(pulls >= 2, "the first pull and the retry after 10 s: {l:#?}");
    assert!(l.iter().any(|l| l.ends_with("pull-back-off")), "{l:#?}");
    assert!(!l.iter().any(|l| l.ends_with("running")), "never started: {l:#?}");
    let ev = events(&sim);
    let failed = ev.iter().find(|e| e.1 == "Failed" && e.2 == "Error: ErrImagePull").unwrap();
    assert_eq!((failed.0.as_str(), failed.3), ("Warning", pulls as i32), "counted: {ev:#?}");
    assert!(
        ev.iter().any(|e| e.2.starts_with("Failed to pull image \"app:bad\"")),
        "the pull's error: {ev:#?}"
    );
    assert!(ev.iter().any(|e| e.2 == "Error: ImagePullBackOff"), "{ev:#?}");
    // Settling does not wait for a back-off that repeats forever.
    assert!(sim.settle(60_000), "a retrying pull is not pending work");
    // Fixed: the next retry pulls, the pod runs and becomes Ready.
    sim.apply_op(Op::from(Fault::BrokenImage { image: BAD.into(), broken: None })).unwrap();
    // Fixed, the retry that brings it up is work `settle` waits for.
    assert!(sim.settle(10 * 60_000));
    assert_eq!(phase(&sim), "Running");
    assert!(ready(sim.pod(&key("web-0")).unwrap()), "recovered at its next retry");
}

#[test]
fn a_crash_loop_counts_restarts_keeps_the_exit_code_and_backs_off() {
    let mut sim = broken(ImageFailure::Crash);
    sim.advance(60_000);
    let c = container(&sim);
    assert_eq!(phase(&sim), "Running", "a crash-looping pod is Running, not Ready");
    assert!(!ready(sim.pod(&key("web-0")).unwrap()));
    let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()).unwrap();
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
    // Crashes 2 s after each start; back-off 10 s, 20 s: restarts at ~13, ~35 s, crashing at
    // ~3, ~15, ~37 s within the first minute.
    assert_eq!(c.restart_count, 3, "{c:#?}");
    let l = kubelet_lines(&mut sim);
    assert_eq!(l.iter().filter(|l| l.ends_with("crashed")).count(), 3, "{l:#?}");
    let ev = events(&sim);
    let backoff = ev.iter().find(|e| e.1 == "BackOff").unwrap();
    assert!(
        backoff.2.starts_with("Back-off restarting failed container app in pod web-0_default(")
    );
    assert_eq!((backoff.0.as_str(), backoff.3), ("Warning", 3), "one Event, counted: {ev:#?}");
    assert!(sim.settle(60_000), "a crash loop is not pending work");
    sim.apply_op(Op::from(Fault::BrokenImage { image: BAD.into(), broken: None })).unwrap();
    assert!(sim.settle(10 * 60_000));
    assert!(ready(sim.pod(&key("web-0")).unwrap()), "recovered after its next restart");
    assert_eq!(waiting(&sim), None);
}

#[test]
fn a_failing_probe_runs_never_ready_and_says_unhealthy() {
    let mut sim = broken(ImageFailure::Probe);
    assert!(sim.settle(60_000));
    assert_eq!(phase(&sim), "Running");
    assert!(!ready(sim.pod(&key("web-0")).unwrap()));
    assert_eq!(container(&sim).restart_count, 0);
    let l = kubelet_lines(&mut sim);
    assert!(l.iter().any(|l| l.ends_with("probe-failed")), "{l:#?}");
    let ev = events(&sim);
    assert!(
        ev.iter().any(|e| e.0 == "Warning"
            && e.1 == "Unhealthy"
            && e.2.starts_with("Readiness probe failed")),
        "{ev:#?}"
    );
}

#[test]
fn breaking_a_running_image_to_crash_crashes_its_ready_pods_at_once() {
    let kubelet = KubeletConfig { start_ms: 0, ready_ms: 0, stop_ms: 0, ..Default::default() };
    let mut sim = Sim::new(SimConfig { seed: 1, kubelet, ..Default::default() });
    sim.create_set(set("web", 2)).unwrap();
    assert!(sim.settle(60_000));
    let crash = Some(ImageFailure::Crash);
    sim.apply_op(Op::from(Fault::BrokenImage { image: "nginx:1.25".into(), broken: crash }))
        .unwrap();
    sim.advance(0);
    for p in ["web-0", "web-1"] {
        let pod = sim.pod(&key(p)).unwrap();
        assert!(!ready(pod), "{p} crashed");
        let c = &pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap()[0];
        assert_eq!(c.restart_count, 1, "{p}");
    }
}

#[test]
fn broken_storage_leaves_claims_pending_and_their_pods_unscheduled_until_fixed() {
    let kubelet =
        KubeletConfig { start_ms: 1000, ready_ms: 1000, stop_ms: 0, ..Default::default() };
    let mut sim = Sim::new(SimConfig { seed: 1, kubelet, ..Default::default() });
    sim.apply_op(Op::from(Fault::Storage { full: true })).unwrap();
    sim.create_set(with_claims(set("web", 2), "Retain", "Retain")).unwrap();
    assert!(sim.settle(60_000), "a pod waiting on its claim is not pending work");
    let claim = sim.store().claims().get(&key("data-web-0")).unwrap().clone();
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Pending"));
    assert_eq!(phase(&sim), "Pending");
    let pod = sim.pod(&key("web-0")).unwrap();
    let scheduled = pod.status.as_ref().unwrap().conditions.as_ref().unwrap();
    let c = scheduled.iter().find(|c| c.type_ == "PodScheduled").unwrap();
    assert_eq!((c.status.as_str(), c.reason.as_deref()), ("False", Some("Unschedulable")));
    assert!(c.message.as_deref().unwrap().contains("unbound immediate PersistentVolumeClaims"));
    assert!(sim.pod(&key("web-1")).is_none(), "OrderedReady waits on web-0");
    sim.apply_op(Op::from(Fault::Storage { full: false })).unwrap();
    assert!(sim.settle(60_000));
    for p in ["web-0", "web-1"] {
        assert!(ready(sim.pod(&key(p)).unwrap()), "{p} Ready once its claim bound");
    }
    let claim = sim.store().claims().get(&key("data-web-1")).unwrap().clone();
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
}
