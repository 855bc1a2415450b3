//! The simulated world with a stand-in reconciler: store semantics through the facade, the
//! kubelet's timings and faults, garbage collection by ownerReferences, the controller loop
//! (enqueue → sync → effects, pause/step, minReadySeconds requeue, back-off) and determinism.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use sim_world_common::*;
use ststui::backend::{ClusterOp, EventKind, Fault, Mode, Op, SimOp};
use ststui::core::{Effect, Observed, Options, Plan};
use ststui::sim::{Cascade, ChangeKind, KubeletConfig, OpError, Sim, SimConfig, SimEvent};

fn kubelet(start: u64, ready: u64, stop: u64) -> KubeletConfig {
    KubeletConfig {
        start_ms: start,
        ready_ms: ready,
        stop_ms: stop,
        broken: None,
        failure: Default::default(),
    }
}

fn phase(p: Option<&Pod>) -> String {
    p.and_then(|p| p.status.as_ref()?.phase.clone()).unwrap_or_else(|| "<none>".into())
}

fn ready_transition_ms(p: &Pod) -> Option<i64> {
    let c = p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready")?;
    let t = c.last_transition_time.as_ref()?.0.as_millisecond();
    Some(t - ststui::sim::clock::EPOCH_UNIX_MS)
}

#[test]
fn generation_follows_spec_changes_not_status_writes() {
    let mut sim = sim_with_fake(kubelet(0, 0, 0));
    sim.create_set(set("web", 2)).unwrap();
    assert!(sim.settle(60_000));
    let s = sim.set(&key("web")).unwrap();
    assert_eq!(s.metadata.generation, Some(1), "status writes must not bump generation");
    assert_eq!(s.status.as_ref().map(|s| s.ready_replicas), Some(Some(2)));
    let rv_before: u64 = s.metadata.resource_version.clone().unwrap().parse().unwrap();
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 3 })).unwrap();
    let s = sim.set(&key("web")).unwrap();
    assert_eq!(s.metadata.generation, Some(2));
    let rv_after: u64 = s.metadata.resource_version.clone().unwrap().parse().unwrap();
    assert!(rv_after > rv_before);
    assert!(sim.settle(60_000));
    let s = sim.set(&key("web")).unwrap();
    assert_eq!(s.status.as_ref().and_then(|s| s.observed_generation), Some(2));
    assert_eq!(sim.pods_of(&key("web")).len(), 3);
}

#[test]
fn kubelet_moves_pods_through_their_phases_on_time() {
    let mut sim = sim_with_fake(kubelet(2000, 3000, 4000));
    sim.create_set(set("web", 1)).unwrap();
    sim.advance(0);
    let pod = key("web-0");
    assert_eq!(phase(sim.pod(&pod)), "Pending");
    sim.advance(1999);
    assert_eq!(phase(sim.pod(&pod)), "Pending");
    sim.advance(1);
    assert_eq!(phase(sim.pod(&pod)), "Running");
    assert!(!ready(sim.pod(&pod).unwrap()));
    sim.advance(2999);
    assert!(!ready(sim.pod(&pod).unwrap()));
    sim.advance(1);
    assert!(ready(sim.pod(&pod).unwrap()));
    assert_eq!(ready_transition_ms(sim.pod(&pod).unwrap()), Some(5000));
    // Graceful deletion: terminating for the stop delay, then gone (and recreated).
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: pod.clone(), force: false, uid: None }))
        .unwrap();
    assert!(sim.pod(&pod).unwrap().metadata.deletion_timestamp.is_some());
    sim.advance(3999);
    assert!(sim.pod(&pod).unwrap().metadata.deletion_timestamp.is_some());
    sim.drain_events();
    sim.advance(1);
    let l = lines(&sim.drain_events());
    assert!(l.iter().any(|l| l.ends_with("kubelet web-0 gone")), "{l:#?}");
    assert!(l.iter().any(|l| l.ends_with("controller create-pod web-0")), "{l:#?}");
    assert_eq!(phase(sim.pod(&pod)), "Pending", "recreated");
}

#[test]
fn broken_images_run_but_never_become_ready() {
    let mut sim = sim_with_fake(KubeletConfig { broken: Some("bad:1".into()), ..kubelet(0, 0, 0) });
    sim.create_set(set("web", 1)).unwrap();
    sim.settle(10_000);
    assert!(ready(sim.pod(&key("web-0")).unwrap()));
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "bad:1".into() })).unwrap();
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: key("web-0"), force: true, uid: None }))
        .unwrap();
    assert!(sim.settle(60_000), "a broken pod is not pending work");
    let p = sim.pod(&key("web-0")).unwrap();
    assert_eq!(phase(Some(p)), "Running");
    assert!(!ready(p));
    let blocked = sim.last_sync(&key("web")).and_then(|r| r.blocked.clone());
    assert!(
        blocked.is_some_and(
            |(reason, pod)| reason.contains("web-0") && pod.as_deref() == Some("web-0")
        )
    );
}

#[test]
fn faults_flip_readiness_fail_and_break_pods() {
    let mut sim = sim_with_fake(kubelet(1000, 1000, 1000));
    sim.create_set(set("web", 2)).unwrap();
    sim.settle(60_000);
    let p0 = key("web-0");
    sim.drain_events();
    sim.advance(500);
    sim.apply_op(Op::from(Fault::SetPodReady { pod: p0.clone(), ready: false })).unwrap();
    let p = sim.pod(&p0).unwrap();
    assert!(!ready(p));
    let t_unready = ready_transition_ms(p).unwrap();
    assert_eq!(t_unready as u64, sim.now_ms() / 1000 * 1000, "stored in whole seconds");
    let err =
        sim.apply_op(Op::from(Fault::SetPodReady { pod: p0.clone(), ready: false })).unwrap_err();
    assert!(err.to_string().contains("already unready"), "{err}");
    sim.advance(10_000);
    assert!(!ready(sim.pod(&p0).unwrap()), "unready stays until `ready`");
    sim.apply_op(Op::from(Fault::SetPodReady { pod: p0.clone(), ready: true })).unwrap();
    assert!(ready_transition_ms(sim.pod(&p0).unwrap()).unwrap() > t_unready);
    // A broken image: every pod of it is unready now and never Ready again, even across
    // time; a pod of it deleted and recreated is just as broken (kubernetes#67250's lesson).
    let image = sim.pod(&p0).unwrap().spec.as_ref().unwrap().containers[0].image.clone();
    let image = image.unwrap();
    let broken = |b: bool| {
        Op::from(Fault::BrokenImage { image: image.clone(), broken: b.then(Default::default) })
    };
    sim.apply_op(broken(true)).unwrap();
    sim.advance(60_000);
    assert!(!ready(sim.pod(&p0).unwrap()));
    assert!(!ready(sim.pod(&key("web-1")).unwrap()), "every pod of the image");
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: p0.clone(), force: true, uid: None }))
        .unwrap();
    sim.advance(60_000);
    let again = sim.pod(&p0).unwrap();
    assert_eq!(again.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Running"));
    assert!(!ready(again), "recreated from the same broken image");
    // Fixed: its pods become Ready after the ready delay.
    sim.apply_op(broken(false)).unwrap();
    sim.advance(1_000);
    assert!(ready(sim.pod(&p0).unwrap()) && ready(sim.pod(&key("web-1")).unwrap()));
    // Fail: phase Failed; the stand-in deletes failed pods; a Failed pod goes at once
    // (upstream CheckGracefulDelete: zero grace for terminated pods) and is recreated.
    sim.drain_events();
    sim.apply_op(Op::from(Fault::FailPod { pod: key("web-1") })).unwrap();
    sim.advance(0);
    let l = lines(&sim.drain_events());
    let pos = |s: &str| l.iter().position(|l| l.ends_with(s));
    let (f, d, g, c) = (
        pos("kubelet web-1 failed"),
        pos("controller delete-pod web-1 (failed)"),
        pos("kubelet web-1 gone"),
        pos("controller create-pod web-1"),
    );
    assert!(f < d && d < g && g < c && f.is_some(), "{l:#?}");
    // Faults on pods that do not exist, or are not running, say so.
    let err = sim.apply_op(Op::from(Fault::FailPod { pod: key("nope-0") })).unwrap_err();
    assert!(err.to_string().contains("nope-0 not found"), "{err}");
    let err =
        sim.apply_op(Op::from(Fault::SetPodReady { pod: key("web-1"), ready: true })).unwrap_err();
    assert!(err.to_string().contains("needs a Running pod"), "{err}");
}

#[test]
fn kubelet_config_applies_to_pods_created_afterwards() {
    let mut sim = sim_with_fake(kubelet(1000, 1000, 1000));
    sim.create_set(set("web", 1)).unwrap();
    sim.advance(0);
    sim.set_kubelet(kubelet(10_000, 10_000, 10_000));
    sim.advance(2000);
    assert!(ready(sim.pod(&key("web-0")).unwrap()), "web-0 keeps the timing it was created with");
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 2 })).unwrap();
    sim.advance(5000);
    assert_eq!(phase(sim.pod(&key("web-1"))), "Pending");
    sim.advance(5000);
    assert_eq!(phase(sim.pod(&key("web-1"))), "Running");
}

#[test]
fn background_delete_collects_pods_and_set_owned_claims_only() {
    // whenDeleted=Delete: claims carry a set ref and go with the set.
    let mut sim = sim_with_fake(kubelet(0, 0, 1000));
    sim.create_set(with_claims(set("web", 2), "Delete", "Retain")).unwrap();
    sim.create_set(with_claims(set("db", 1), "Retain", "Retain")).unwrap();
    assert!(sim.settle(60_000));
    assert_eq!(sim.all_claims().count(), 3);
    sim.drain_events();
    sim.delete_set(&key("web"), Cascade::Background).unwrap();
    sim.advance(0);
    let l = lines(&sim.drain_events());
    assert!(
        l.iter().any(|l| l.ends_with("gc web-0")) && l.iter().any(|l| l.ends_with("gc web-1")),
        "{l:#?}"
    );
    assert!(l.iter().any(|l| l.ends_with("gc data-web-0")), "{l:#?}");
    // pvc-protection: the claims wait for the pods that use them.
    let claim = sim.all_claims().find(|c| c.metadata.name.as_deref() == Some("data-web-0"));
    assert!(claim.is_some_and(|c| c.metadata.deletion_timestamp.is_some()));
    assert!(sim.settle(60_000));
    assert_eq!(sim.all_pods().count(), 1, "only db-0 is left");
    let names: Vec<_> = sim.all_claims().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["data-db-0"]);
    // Retain: deleting db leaves its claim.
    sim.delete_set(&key("db"), Cascade::Background).unwrap();
    assert!(sim.settle(60_000));
    assert_eq!(sim.all_pods().count(), 0);
    assert_eq!(sim.all_claims().count(), 1);
}

#[test]
fn scale_down_with_when_scaled_delete_collects_the_pod_owned_claim_after_the_pod() {
    let mut sim = sim_with_fake(kubelet(0, 0, 2000));
    sim.create_set(with_claims(set("web", 2), "Retain", "Delete")).unwrap();
    assert!(sim.settle(60_000));
    sim.drain_events();
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 1 })).unwrap();
    assert!(sim.settle(60_000));
    let l = lines(&sim.drain_events());
    let gone = l.iter().position(|l| l.ends_with("kubelet web-1 gone"));
    let gc = l.iter().position(|l| l.ends_with("gc data-web-1"));
    assert!(gone.is_some() && gone < gc, "{l:#?}");
    let names: Vec<_> = sim.all_claims().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["data-web-0"]);
}

#[test]
fn orphan_delete_keeps_dependents_and_removes_the_refs() {
    let mut sim = sim_with_fake(kubelet(0, 0, 0));
    sim.create_set(with_claims(set("web", 2), "Delete", "Retain")).unwrap();
    assert!(sim.settle(60_000));
    sim.delete_set(&key("web"), Cascade::Orphan).unwrap();
    assert!(sim.settle(60_000));
    assert!(sim.set(&key("web")).is_none());
    assert_eq!(sim.all_pods().count(), 2);
    assert_eq!(sim.all_claims().count(), 2);
    let refs = sim
        .all_pods()
        .chain(std::iter::empty())
        .map(|p| p.metadata.owner_references.clone().unwrap_or_default().len());
    assert!(refs.into_iter().all(|n| n == 0));
    assert!(
        sim.all_claims().all(|c| c
            .metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .is_empty())
    );
}

#[test]
fn events_enqueue_syncs_and_effects_reach_the_store() {
    let mut sim = sim_with_fake(kubelet(1000, 1000, 1000));
    sim.create_set(set("web", 3)).unwrap();
    assert_eq!(sim.sync_count(), 0, "nothing runs until time is advanced");
    sim.advance(0);
    let events = sim.drain_events();
    let added: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            SimEvent::Watch {
                kind: ChangeKind::Added,
                object: ststui::backend::Object::Pod(p),
            } => p.metadata.name.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(added, ["web-0", "web-1", "web-2"]);
    let l = lines(&events);
    assert!(l.iter().any(|l| l.contains("status 3/0")), "{l:#?}");
    assert!(l.iter().any(|l| l.contains("blocked")), "{l:#?}");
    let plan = sim.last_plan(&key("web")).unwrap();
    assert_eq!(plan.status.replicas, 3);
    assert!(sim.settle(60_000));
    assert_eq!(sim.now_ms(), 2000, "settled when the last pod became Ready");
    let st = sim.set(&key("web")).unwrap().status.clone().unwrap();
    assert_eq!((st.replicas, st.ready_replicas), (3, Some(3)));
    // The blocked reason is reported once per change, not once per sync.
    let l = lines(&sim.drain_events());
    assert_eq!(l.iter().filter(|l| l.contains("blocked")).count(), 1, "{l:#?}");
}

#[test]
fn paused_controller_queues_events_and_steps_one_sync_at_a_time() {
    let mut sim = sim_with_fake(kubelet(0, 0, 0));
    sim.pause();
    assert_eq!(sim.step(0).ok(), Some(0));
    sim.create_set(set("web", 2)).unwrap();
    assert!(sim.settle(60_000), "a paused queue is not pending");
    assert!(sim.all_pods().next().is_none(), "no sync while paused");
    assert_eq!(sim.queued(), [key("web")]);
    assert_eq!(sim.step(1).ok(), Some(1));
    assert_eq!(sim.all_pods().count(), 2);
    // The pods' events re-queued the set, but nothing runs on its own.
    sim.advance(1000);
    assert_eq!(sim.queued(), [key("web")]);
    let syncs = sim.sync_count();
    // The sync's own status write re-queues the set once; the next sync changes nothing.
    let ran = sim.step(5).unwrap();
    assert!((1..5).contains(&ran), "{ran}");
    assert_eq!(sim.sync_count(), syncs + u64::from(ran));
    assert!(sim.queued().is_empty());
    sim.resume();
    assert!(sim.settle(60_000));
    assert!(sim.pods_of(&key("web")).iter().all(|p| ready(p)));
    assert_eq!(sim.step(1), Err(OpError::NotPaused));
    let err = sim.apply_op(Op::Sim(SimOp::Step { n: 1 })).unwrap_err().to_string();
    assert_eq!(err, "step needs the controller paused (press space to pause first)");
    let modes: Vec<_> =
        sim.drain_events().into_iter().filter(|e| matches!(e, SimEvent::Mode(_))).collect();
    assert_eq!(modes, [SimEvent::Mode(Mode::Paused), SimEvent::Mode(Mode::Live)]);
}

fn without_requeue(
    o: &ststui::core::Observed<'_>,
    opts: &ststui::core::Options,
    now: k8s_openapi::jiff::Timestamp,
) -> ststui::core::Plan {
    ststui::core::Plan { requeue_after_ms: None, ..fake_reconcile(o, opts, now) }
}

fn min_ready_sim(reconcile: ststui::sim::Reconciler, version: &str) -> ststui::sim::Sim {
    let mut s = set("web", 1);
    s.spec.min_ready_seconds = Some(5);
    let options = ststui::core::Options::for_version(version.parse().unwrap());
    let config = SimConfig { seed: 1, kubelet: kubelet(0, 1000, 0), options, ..Default::default() };
    let mut sim = Sim::new(config).with_reconciler(reconcile);
    sim.create_set(s).unwrap();
    sim.advance(1000);
    assert!(ready(sim.pod(&key("web-0")).unwrap()));
    sim
}

fn available(sim: &ststui::sim::Sim) -> Option<i32> {
    sim.set(&key("web")).unwrap().status.clone().unwrap().available_replicas
}

#[test]
fn a_pod_becoming_ready_requeues_its_set_after_min_ready_seconds_plus_one_until_1_36() {
    for (version, requeue_at) in [("1.35", 7000), ("1.37", 6000)] {
        let mut sim = min_ready_sim(without_requeue, version);
        assert_eq!(available(&sim), Some(0));
        // No pod event happens after 1 s: only the delayed enqueue brings the next sync.
        sim.advance(requeue_at - 1001);
        assert_eq!(sim.last_sync(&key("web")).map(|r| r.at_ms), Some(1000), "{version}");
        sim.advance(1);
        assert_eq!(sim.last_sync(&key("web")).map(|r| r.at_ms), Some(requeue_at), "{version}");
        assert_eq!(available(&sim), Some(1), "{version}");
        assert!(sim.settle(60_000));
    }
}

#[test]
fn an_earlier_requeue_after_replaces_a_later_pending_one() {
    // The delaying queue keeps the earliest time per key (upstream `AddAfter`). The sync at
    // 0 s asked for a requeue at 5 s; neither the pod handler's 1 s + 6 s nor the 1 s sync's
    // 1 s + 5 s replaces it. At 5 s the pod (Ready at 1 s) is not yet available, so the next
    // look is 5 s later, at 10 s.
    let mut sim = min_ready_sim(fake_reconcile, "1.35");
    sim.advance(4000);
    assert_eq!(sim.last_sync(&key("web")).map(|r| r.at_ms), Some(5000));
    assert_eq!(available(&sim), Some(0));
    sim.advance(4999);
    assert_eq!(sim.last_sync(&key("web")).map(|r| r.at_ms), Some(5000));
    sim.advance(1);
    assert_eq!(sim.last_sync(&key("web")).map(|r| r.at_ms), Some(10_000));
    assert_eq!(available(&sim), Some(1));
    assert!(sim.settle(60_000));
}

/// A reconciler whose first effect collides with an existing pod (once there is one), followed
/// by a claim creation that must then be skipped, then the stand-in's own effects.
fn failing_pod(o: &Observed<'_>, opts: &Options, now: Timestamp) -> Plan {
    let mut plan = fake_reconcile(o, opts, now);
    if let Some(p) = o.pods.first() {
        let marker = PersistentVolumeClaim {
            metadata: ObjectMeta { name: Some("marker".into()), ..Default::default() },
            ..Default::default()
        };
        plan.effects.insert(0, Effect::CreatePod(Box::new((*p).clone())));
        plan.effects.insert(1, Effect::CreateClaim(Box::new(marker)));
    }
    plan
}

/// A reconciler that creates revision `web-r` on every sync (it collides from the second on).
fn failing_revision(o: &Observed<'_>, opts: &Options, now: Timestamp) -> Plan {
    let mut plan = fake_reconcile(o, opts, now);
    let rev = ControllerRevision {
        metadata: ObjectMeta { name: Some("web-r".into()), ..Default::default() },
        ..Default::default()
    };
    plan.effects.insert(0, Effect::CreateRevision(Box::new(rev)));
    plan
}

fn errors(events: &[SimEvent]) -> Vec<String> {
    let timeline = events.iter().filter_map(SimEvent::timeline);
    timeline
        .filter(|e| matches!(e.kind, EventKind::Error { .. }))
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

/// A minute of `web` (one replica) under `reconcile`, and the error lines it gave.
fn a_minute_of(reconcile: ststui::sim::Reconciler) -> (Sim, Vec<String>) {
    let mut sim = sim_with_fake(kubelet(0, 0, 0)).with_reconciler(reconcile);
    sim.create_set(set("web", 1)).unwrap();
    sim.advance(60_000);
    let errors = errors(&sim.drain_events());
    (sim, errors)
}

#[test]
fn a_failed_pod_effect_skips_the_rest_but_still_writes_status_and_backs_off() {
    // First syncs: no pods yet, they succeed and create web-0. Later syncs fail on the duplicate.
    let (sim, errors) = a_minute_of(failing_pod);
    assert_eq!(errors.len(), 1, "one error line per distinct message: {errors:#?}");
    assert!(errors[0].contains("create-pod web-0 failed") && errors[0].contains("already exists"));
    assert!(sim.all_claims().next().is_none(), "effects after the failure are skipped");
    // Upstream writes the status even when pod processing failed.
    let st = sim.set(&key("web")).unwrap().status.clone().unwrap();
    assert_eq!((st.replicas, st.ready_replicas), (1, Some(1)));
    // Back-off: 5 ms doubling; within 60 s that is about 14 retries, not thousands.
    let syncs = sim.sync_count();
    assert!((8..40).contains(&syncs), "{syncs} syncs");
}

#[test]
fn a_failed_revision_effect_skips_the_status_write() {
    let mut sim = sim_with_fake(kubelet(0, 0, 0)).with_reconciler(failing_revision);
    sim.create_set(set("web", 1)).unwrap();
    sim.advance(10_000);
    let errors = errors(&sim.drain_events());
    assert!(errors.len() == 1 && errors[0].contains("create-revision web-r failed"), "{errors:#?}");
    // The first sync created web-0 and wrote replicas 0 (web-0 did not exist when it looked);
    // every later sync failed before its status write, so the status never caught up.
    assert_eq!(sim.pods_of(&key("web")).len(), 1);
    let st = sim.set(&key("web")).unwrap().status.clone().unwrap();
    assert_eq!(st.replicas, 0);
}

/// The stand-in, but with the negative `currentReplicas` upstream's controller can compute after
/// back-to-back template changes.
fn negative_status(o: &Observed<'_>, opts: &Options, now: Timestamp) -> Plan {
    let mut plan = fake_reconcile(o, opts, now);
    plan.status.current_replicas = Some(-1);
    let set = o.set.status.clone().unwrap_or_default();
    if set.current_replicas != Some(-1) {
        plan.effects.retain(|e| !matches!(e, Effect::WriteStatus(_)));
        plan.effects.push(Effect::WriteStatus(Box::new(plan.status.clone())));
    }
    plan
}

#[test]
fn a_status_the_api_server_refuses_is_not_stored_and_the_sync_backs_off() {
    let (sim, errors) = a_minute_of(negative_status);
    let want = "write-status web failed: StatefulSet.apps \\\"web\\\" is invalid: \
                status.currentReplicas: Invalid value: -1: must be greater than or equal to 0";
    assert!(errors.len() == 1 && errors[0].contains(want), "{errors:#?}");
    // Nothing of the refused write is stored; the pods were still created.
    let st = sim.set(&key("web")).unwrap().status.clone().unwrap_or_default();
    assert_ne!(st.current_replicas, Some(-1));
    assert_eq!(sim.pods_of(&key("web")).len(), 1);
    // A failed status write is a failed sync: retried with back-off, not thousands of times.
    let syncs = sim.sync_count();
    assert!((8..40).contains(&syncs), "{syncs} syncs");
}

fn run_script() -> Vec<String> {
    let mut sim = sim_with_fake(kubelet(700, 1300, 900));
    sim.create_set(with_claims(set("web", 3), "Delete", "Delete")).unwrap();
    sim.create_set(set("db", 2)).unwrap();
    sim.settle(60_000);
    sim.apply_op(Op::from(Fault::FailPod { pod: key("web-1") })).unwrap();
    sim.advance(300);
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 1 })).unwrap();
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: key("db-0"), force: false, uid: None }))
        .unwrap();
    sim.settle(60_000);
    sim.delete_set(&key("web"), Cascade::Background).unwrap();
    sim.settle(60_000);
    let mut out = timeline(&sim.drain_events());
    out.push(format!("end {}", sim.now_ms()));
    out
}

#[test]
fn same_inputs_give_the_same_event_sequence() {
    let a = run_script();
    let b = run_script();
    assert!(a.len() > 30, "{a:#?}");
    assert_eq!(a, b);
}

/// A bounded advance stops where its budget ends, with the clock at the last thing that ran
/// (never at the target it did not reach), and a later advance finishes the work.
#[test]
fn advance_until_stops_when_told_and_never_jumps_the_clock() {
    let mut sim = ststui::sim::Sim::new(ststui::sim::SimConfig::default());
    sim.create_set(set("web", 3)).unwrap();
    let mut steps = 0;
    let reached = sim.advance_until(60_000, &mut || {
        steps += 1;
        steps <= 3
    });
    assert!(!reached);
    assert!(sim.now_ms() < 60_000, "the clock jumped to the target: {}", sim.now_ms());
    let before = sim.now_ms();
    assert!(sim.advance_until(60_000, &mut || true));
    assert_eq!(sim.now_ms(), 60_000);
    assert!(sim.now_ms() >= before);
    assert_eq!(sim.pods_of(&key("web")).len(), 3);
}

#[test]
fn streaming_hands_over_everything_it_would_have_kept_and_keeps_nothing() {
    let run = |stream: bool| {
        let mut sim = sim_with_fake(kubelet(1000, 1000, 1000));
        sim.create_set(set("web", 300)).unwrap();
        let mut seen = Vec::new();
        if stream {
            let mut handed = 0;
            sim.advance_to_streaming(300_000, &mut |e| {
                handed += 1;
                seen.push(format!("{e:?}"));
            });
            assert!(sim.drain_events().is_empty(), "nothing kept");
            assert!(sim.settle_streaming(600_000, &mut |e| seen.push(format!("{e:?}"))));
            assert!(sim.drain_events().is_empty(), "nothing kept");
            assert!(handed > ststui::sim::STREAM_STEPS as usize, "several hand-overs");
        } else {
            sim.advance_to(300_000);
            assert!(sim.settle(600_000));
            seen = sim.drain_events().iter().map(|e| format!("{e:?}")).collect();
        }
        seen
    };
    assert_eq!(run(true), run(false));
}
