//! The simulator running the real core: ordering, rolling updates, rollback, restart, the
//! retention policy through ownerReferences and garbage collection, op validation, and
//! determinism.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::sim_world_common;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use sim_world_common::*;
use ststui::backend::{ClusterOp, EventKind, Fault, ObjKind, Op, SimOp};
use ststui::sim::{ApiError, Cascade, ChangeKind, KubeletConfig, Sim, SimConfig, SimEvent};

fn sim() -> Sim {
    Sim::new(SimConfig { seed: 7, kubelet: KubeletConfig::default(), ..Default::default() })
}

fn settle(sim: &mut Sim) {
    assert!(sim.settle(3_600_000), "did not settle");
}

/// (t_ms, action, pod) of the controller's pod actions, in order.
fn pod_actions(events: &[SimEvent], action: &str) -> Vec<(u64, String)> {
    events
        .iter()
        .filter_map(SimEvent::timeline)
        .filter_map(|e| match &e.kind {
            EventKind::Controller { action: a, pod: Some(p), .. } if a.as_str() == action => {
                Some((e.t_ms, p.clone()))
            }
            _ => None,
        })
        .collect()
}

fn status(sim: &Sim, name: &str) -> k8s_openapi::api::apps::v1::StatefulSetStatus {
    sim.set(&key(name)).and_then(|s| s.status.clone()).unwrap_or_default()
}

fn images(sim: &Sim, name: &str) -> Vec<String> {
    sim.pods_of(&key(name))
        .iter()
        .filter_map(|p| p.spec.as_ref()?.containers.first()?.image.clone())
        .collect()
}

fn rolled_out(sim: &Sim, name: &str) -> bool {
    let st = status(sim, name);
    st.current_revision.is_some() && st.current_revision == st.update_revision
}

#[test]
fn ordered_ready_creates_one_pod_at_a_time() {
    let mut sim = sim();
    sim.create_set(set("web", 3)).unwrap();
    settle(&mut sim);
    let created = pod_actions(&sim.drain_events(), "create-pod");
    // Each pod waits for the previous one: 1 s to Running, 1 s to Ready.
    let expected = [(0, "web-0"), (2000, "web-1"), (4000, "web-2")];
    assert_eq!(created, expected.map(|(t, p)| (t, p.to_string())));
    let st = status(&sim, "web");
    assert_eq!((st.replicas, st.ready_replicas, st.available_replicas), (3, Some(3), Some(3)));
    assert!(rolled_out(&sim, "web"));
}

#[test]
fn rolling_update_goes_from_the_highest_ordinal_down_and_completes() {
    let mut sim = sim();
    sim.create_set(set("web", 3)).unwrap();
    settle(&mut sim);
    let first = status(&sim, "web").update_revision;
    sim.drain_events();
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.27".into() }))
        .unwrap();
    settle(&mut sim);
    let events = sim.drain_events();
    let deleted: Vec<String> =
        pod_actions(&events, "delete-pod").into_iter().map(|x| x.1).collect();
    assert_eq!(deleted, ["web-2", "web-1", "web-0"]);
    let st = status(&sim, "web");
    assert_ne!(st.update_revision, first);
    assert!(rolled_out(&sim, "web"));
    assert_eq!(st.updated_replicas, Some(3));
    assert_eq!(images(&sim, "web"), ["nginx:1.27"; 3]);
    assert_eq!(sim.revisions_of(&key("web")).len(), 2);
    assert_eq!(sim.set(&key("web")).and_then(|s| s.metadata.generation), Some(2));
}

#[test]
fn partition_holds_the_lower_ordinals() {
    let mut sim = sim();
    sim.create_set(set("web", 3)).unwrap();
    settle(&mut sim);
    sim.apply_op(Op::from(ClusterOp::SetPartition { set: key("web"), partition: 2 })).unwrap();
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.27".into() }))
        .unwrap();
    settle(&mut sim);
    assert_eq!(images(&sim, "web"), ["nginx:1.25", "nginx:1.25", "nginx:1.27"]);
    assert_eq!(status(&sim, "web").updated_replicas, Some(1));
    assert!(!rolled_out(&sim, "web"));
    assert!(
        sim.last_plan(&key("web")).is_some_and(|p| p.waiting_on.is_none() && p.held_by.is_some())
    );
}

#[test]
fn undo_rolls_the_template_back_to_the_previous_revision() {
    let mut sim = sim();
    sim.create_set(set("web", 2)).unwrap();
    settle(&mut sim);
    let err =
        sim.apply_op(Op::from(ClusterOp::Undo { set: key("web"), revision: None })).unwrap_err();
    assert_eq!(err.kind(), ststui::backend::FailureKind::NotFound);
    assert!(err.to_string().contains("no previous revision to roll back to (it has 1)"), "{err}");
    let first = status(&sim, "web").update_revision.unwrap_or_default();
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.27".into() }))
        .unwrap();
    settle(&mut sim);
    let err =
        sim.apply_op(Op::from(ClusterOp::Undo { set: key("web"), revision: Some(9) })).unwrap_err();
    assert_eq!(err.to_string(), "revision 9 of default/web not found: expected one of 1, 2");
    sim.drain_events();
    sim.apply_op(Op::from(ClusterOp::Undo { set: key("web"), revision: None })).unwrap();
    settle(&mut sim);
    // The rollback renumbers the old revision (it keeps its name): pods on it count as updated.
    let renumbered = sim.drain_events().iter().filter_map(SimEvent::timeline).any(|e| {
        matches!(&e.kind, EventKind::Controller { action, revision: Some(r), .. }
            if *action == ststui::core::ControllerAction::UpdateRevision && *r == first)
    });
    assert!(renumbered);
    assert_eq!(status(&sim, "web").current_revision.as_deref(), Some(first.as_str()));
    assert_eq!(images(&sim, "web"), ["nginx:1.25"; 2]);
    let revs = sim.revisions_of(&key("web"));
    assert_eq!(revs.last().and_then(|r| r.metadata.name.clone()), Some(first));
    assert_eq!(revs.last().and_then(|r| r.revision), Some(3));
}

#[test]
fn restart_annotates_the_template_and_rolls_every_pod() {
    let mut sim = sim();
    sim.create_set(set("web", 2)).unwrap();
    settle(&mut sim);
    sim.advance(2500);
    let at = sim.now_ms();
    sim.apply_op(Op::from(ClusterOp::Restart { set: key("web") })).unwrap();
    let ann = sim.set(&key("web")).and_then(|s| {
        s.spec
            .template
            .metadata
            .as_ref()?
            .annotations
            .as_ref()?
            .get("kubectl.kubernetes.io/restartedAt")
            .cloned()
    });
    assert_eq!(at, 6500);
    assert_eq!(ann.as_deref(), Some("2026-01-01T00:00:06Z"));
    sim.drain_events();
    settle(&mut sim);
    let deleted = pod_actions(&sim.drain_events(), "delete-pod");
    assert_eq!(deleted.len(), 2);
    assert!(rolled_out(&sim, "web"));
    assert_eq!(sim.revisions_of(&key("web")).len(), 2);
}

#[test]
fn retention_delete_collects_claims_with_their_owner() {
    let mut sim = sim();
    sim.create_set(with_claims(set("web", 3), "Delete", "Delete")).unwrap();
    settle(&mut sim);
    let uid = sim.set(&key("web")).and_then(|s| s.metadata.uid.clone());
    let owned_by_set = sim.claims_of(&key("web")).iter().all(|c| {
        c.metadata.owner_references.iter().flatten().any(|r| Some(&r.uid) == uid.as_ref())
    });
    assert!(owned_by_set, "whenDeleted=Delete: the core puts a set ref on every claim");
    sim.drain_events();
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 1 })).unwrap();
    settle(&mut sim);
    let lines = lines(&sim.drain_events());
    let pos = |s: &str| lines.iter().position(|l| l.ends_with(s));
    assert!(pos("kubelet web-2 gone") < pos("gc data-web-2"), "{lines:#?}");
    assert!(pos("gc data-web-2").is_some() && pos("gc data-web-1").is_some(), "{lines:#?}");
    let names: Vec<_> =
        sim.claims_of(&key("web")).iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["data-web-0"]);
    sim.delete_set(&key("web"), Cascade::Background).unwrap();
    settle(&mut sim);
    assert_eq!(sim.all_pods().count(), 0);
    assert_eq!(sim.all_claims().count(), 0);
    assert_eq!(sim.revisions_of(&key("web")).len(), 0);
}

#[test]
fn retention_retain_keeps_claims_through_scale_down_and_deletion() {
    let mut sim = sim();
    sim.create_set(with_claims(set("web", 3), "Retain", "Retain")).unwrap();
    settle(&mut sim);
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 1 })).unwrap();
    settle(&mut sim);
    assert_eq!(sim.all_claims().count(), 3);
    sim.delete_set(&key("web"), Cascade::Background).unwrap();
    settle(&mut sim);
    assert_eq!(sim.all_pods().count(), 0);
    assert_eq!(sim.all_claims().count(), 3);
    // Recreated, the set finds its claims again.
    sim.create_set(with_claims(set("web", 3), "Retain", "Retain")).unwrap();
    settle(&mut sim);
    assert_eq!(sim.all_claims().count(), 3);
    assert_eq!(sim.pods_of(&key("web")).len(), 3);
}

#[test]
fn bad_ops_and_invalid_sets_are_refused_with_what_is_expected() {
    let mut sim = sim();
    let err = sim.create_set(set("web", -1)).unwrap_err();
    assert!(
        matches!(err, ApiError::Invalid(_)) && err.to_string().contains("spec.replicas"),
        "{err}"
    );
    sim.create_set(set("web", 1)).unwrap();
    let cases = [
        // Values reach the API layer, which answers as the API server does.
        (
            Op::from(ClusterOp::SetPartition { set: key("web"), partition: -1 }),
            "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.partition: \
             Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            Op::from(ClusterOp::Scale { set: key("web"), replicas: -2 }),
            "StatefulSet.apps \"web\" is invalid: spec.replicas: Invalid value: -2: \
             must be greater than or equal to 0",
        ),
        (
            Op::from(ClusterOp::SetMaxUnavailable { set: key("web"), value: IntOrString::Int(0) }),
            "StatefulSet.apps \"web\" is invalid: \
             spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0",
        ),
        (
            Op::from(ClusterOp::SetMaxUnavailable {
                set: key("web"),
                value: IntOrString::String("150%".into()),
            }),
            "StatefulSet.apps \"web\" is invalid: \
             spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": \
             must not be greater than 100%",
        ),
        (
            Op::from(ClusterOp::Scale { set: key("nope"), replicas: 1 }),
            "statefulset default/nope not found",
        ),
        (
            Op::from(ClusterOp::DeletePod { pod: key("web-7"), force: false, uid: None }),
            "pod default/web-7 not found",
        ),
        (Op::Sim(SimOp::Step { n: 1 }), "step needs the controller paused"),
        (Op::Sim(SimOp::SetSpeed { speed: 2.0 }), "speed applies to the real-time console"),
        (Op::from(ClusterOp::SetImage { set: key("web"), image: " ".into() }), "image is empty"),
    ];
    for (op, want) in cases {
        let got = sim_err(&mut sim, op);
        assert!(got.starts_with(want), "{got:?} should start with {want:?}");
    }
    sim.apply_op(Op::from(ClusterOp::SetStrategy {
        set: key("web"),
        kind: ststui::core::spec::UpdateType::OnDelete,
        rolling: None,
    }))
    .unwrap();
    let got =
        sim_err(&mut sim, Op::from(ClusterOp::SetPartition { set: key("web"), partition: 1 }));
    assert!(got.contains("uses OnDelete (switch the strategy first)"), "{got}");
    assert_eq!(sim.set(&key("web")).and_then(|s| s.metadata.generation), Some(2));
    // Back to RollingUpdate: a type-only switch leaves rollingUpdate nil (the API does not
    // default it then); with settings, they are written.
    sim.apply_op(Op::from(ClusterOp::SetStrategy {
        set: key("web"),
        kind: ststui::core::spec::UpdateType::RollingUpdate,
        rolling: None,
    }))
    .unwrap();
    let strategy = |sim: &Sim| sim.set(&key("web")).and_then(|s| s.spec.update_strategy.clone());
    assert_eq!(strategy(&sim).and_then(|s| s.rolling_update), None);
    sim.apply_op(Op::from(ClusterOp::SetStrategy {
        set: key("web"),
        kind: ststui::core::spec::UpdateType::OnDelete,
        rolling: None,
    }))
    .unwrap();
    let rolling = k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy {
        partition: Some(3),
        ..Default::default()
    };
    sim.apply_op(Op::from(ClusterOp::SetStrategy {
        set: key("web"),
        kind: ststui::core::spec::UpdateType::RollingUpdate,
        rolling: Some(rolling),
    }))
    .unwrap();
    let s = strategy(&sim).unwrap_or_default();
    assert_eq!(s.type_.as_deref(), Some("RollingUpdate"));
    assert_eq!(s.rolling_update.and_then(|r| r.partition), Some(3));
}

/// A Failed pod on the old revision is deleted twice in one sync (processReplica, then the
/// rolling update); the API removes it at once (grace 0 for terminal pods), so the second
/// delete meets NotFound, which upstream's rolling update treats as success.
#[test]
fn an_update_delete_of_a_pod_already_gone_is_not_a_sync_error() {
    let options = ststui::core::Options::for_version(ststui::core::Version { minor: 36, patch: 0 });
    let mut sim = Sim::new(SimConfig { seed: 7, options, ..Default::default() });
    let mut web = set("web", 3);
    web.spec.pod_management_policy = Some("Parallel".into());
    sim.create_set(web).unwrap();
    settle(&mut sim);
    sim.apply_op(Op::Sim(SimOp::Pause)).unwrap();
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.26".into() }))
        .unwrap();
    sim.apply_op(Op::from(Fault::FailPod { pod: key("web-2") })).unwrap();
    sim.drain_events();
    sim.apply_op(Op::Sim(SimOp::Resume)).unwrap();
    settle(&mut sim);
    let events = sim.drain_events();
    let deletes: Vec<String> =
        pod_actions(&events, "delete-pod").into_iter().map(|(_, p)| p).collect();
    assert_eq!(deletes[..2], ["web-2", "web-2"], "failed-pod delete, then the update delete");
    let errors: Vec<_> = events
        .iter()
        .filter_map(SimEvent::timeline)
        .filter(|e| matches!(e.kind, EventKind::Error { .. }))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(rolled_out(&sim, "web"));
}

fn sim_err(sim: &mut Sim, op: Op) -> String {
    sim.apply_op(op).map_err(|e| e.to_string()).err().unwrap_or_else(|| "ok".into())
}

fn parallel_rollout(replicas: i32, max_unavailable: Option<&str>) -> (Sim, Vec<String>) {
    let mut sim =
        Sim::new(SimConfig { seed: 3, kubelet: KubeletConfig::instant(), ..Default::default() });
    let mut s = set("web", replicas);
    s.spec.pod_management_policy = Some("Parallel".into());
    sim.create_set(s).unwrap();
    settle(&mut sim);
    if let Some(mu) = max_unavailable {
        let value = IntOrString::String(mu.into());
        sim.apply_op(Op::from(ClusterOp::SetMaxUnavailable { set: key("web"), value })).unwrap();
    }
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.27".into() }))
        .unwrap();
    settle(&mut sim);
    let out = timeline(&sim.drain_events());
    (sim, out)
}

#[test]
fn parallel_rollouts_complete_in_one_virtual_instant_with_instant_pods() {
    let (sim, _) = parallel_rollout(40, None);
    assert!(rolled_out(&sim, "web"));
    assert_eq!(sim.now_ms(), 0, "zero kubelet delays: everything happens at t=0");
    assert_eq!(images(&sim, "web"), vec!["nginx:1.27"; 40]);
    let (sim, _) = parallel_rollout(40, Some("100%"));
    assert!(rolled_out(&sim, "web"));
    assert!(sim.sync_count() < 20, "{} syncs", sim.sync_count());
}

#[test]
fn the_same_inputs_give_a_byte_identical_timeline() {
    let run = || {
        let mut sim = sim();
        sim.create_set(with_claims(set("web", 3), "Delete", "Delete")).unwrap();
        settle(&mut sim);
        sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:1.27".into() }))
            .unwrap();
        sim.advance(2500);
        sim.apply_op(Op::from(Fault::FailPod { pod: key("web-0") })).unwrap();
        settle(&mut sim);
        sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 1 })).unwrap();
        settle(&mut sim);
        timeline(&sim.drain_events()).join("\n")
    };
    let a = run();
    assert!(a.lines().count() > 50);
    assert_eq!(a, run());
}

/// `web` (two replicas) rolled out, then deleted with its pods orphaned.
fn orphaned_web() -> Sim {
    let mut sim = sim();
    sim.create_set(set("web", 2)).unwrap();
    settle(&mut sim);
    sim.delete_set(&key("web"), Cascade::Orphan).unwrap();
    settle(&mut sim);
    sim
}

#[test]
fn orphaned_pods_are_adopted_by_a_recreated_set() {
    let mut sim = orphaned_web();
    assert_eq!(sim.all_pods().count(), 2, "orphaned pods stay");
    assert!(sim.all_pods().all(|p| p.metadata.owner_references.as_ref().is_none_or(Vec::is_empty)));
    sim.drain_events();
    sim.create_set(set("web", 2)).unwrap();
    settle(&mut sim);
    assert!(pod_actions(&sim.drain_events(), "create-pod").is_empty(), "adopted, not recreated");
    let uid = sim.set(&key("web")).and_then(|s| s.metadata.uid.clone());
    let adopted = sim.pods_of(&key("web")).iter().all(|p| {
        p.metadata.owner_references.iter().flatten().any(|r| Some(&r.uid) == uid.as_ref())
    });
    assert!(adopted);
    assert_eq!(status(&sim, "web").ready_replicas, Some(2));
}

/// Freeze holds a rollout in the simulator as on a cluster: the partition goes to replicas,
/// the previous one is recorded on the set and comes back on resume; both are idempotent.
#[test]
fn freeze_holds_the_rollout_and_resume_restores_the_partition() {
    let mut sim = sim();
    let mut s = set("web", 4);
    s.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy {
            partition: Some(2),
            max_unavailable: None,
        }),
    });
    sim.create_set(s).unwrap();
    settle(&mut sim);
    let freeze = || Op::from(ClusterOp::Freeze { set: key("web") });
    sim.apply_op(freeze()).unwrap();
    sim.apply_op(freeze()).unwrap();
    let frozen = ststui::steer::frozen(sim.set(&key("web")).unwrap()).unwrap();
    assert_eq!((frozen.partition, frozen.by.as_str()), (Ok(2), "ststui-sim"));
    sim.apply_op(Op::from(ClusterOp::SetImage { set: key("web"), image: "nginx:2".into() }))
        .unwrap();
    settle(&mut sim);
    assert_eq!(status(&sim, "web").updated_replicas, Some(0), "frozen: nothing rolls");
    let err =
        sim_err(&mut sim, Op::from(ClusterOp::SetPartition { set: key("web"), partition: 1 }));
    assert!(err.contains("frozen by ststui-sim"), "{err}");
    sim.apply_op(Op::from(ClusterOp::Unfreeze { set: key("web"), force: false })).unwrap();
    settle(&mut sim);
    assert_eq!(status(&sim, "web").updated_replicas, Some(2), "ordinals 2 and 3 roll");
    assert!(ststui::steer::frozen(sim.set(&key("web")).unwrap()).is_none());
}

/// A write decided on an older spec is refused as a conflict naming what changed; one decided
/// on a set whose status alone moved goes through. A delete whose pod was recreated is refused.
#[test]
fn writes_carry_what_they_were_decided_on() {
    let mut sim = sim();
    sim.create_set(set("web", 3)).unwrap();
    settle(&mut sim);
    let basis = sim.set(&key("web")).cloned().map(Box::new);
    sim.apply_op(Op::from(ClusterOp::Scale { set: key("web"), replicas: 3 })).unwrap();
    settle(&mut sim); // status writes move the resourceVersion
    let write = |op| Op::Cluster(ststui::backend::Write::on(op, basis.clone()));
    sim.apply_op(write(ClusterOp::SetPartition { set: key("web"), partition: 1 })).unwrap();
    let err = sim.apply_op(write(ClusterOp::Scale { set: key("web"), replicas: 5 })).unwrap_err();
    assert_eq!(err.kind(), ststui::backend::FailureKind::Conflict);
    assert_eq!(err.to_string(), "default/web changed since you decided: partition 0 → 1");
    let uid = sim.pod(&key("web-1")).and_then(|p| p.metadata.uid.clone());
    sim.apply_op(Op::from(ClusterOp::DeletePod {
        pod: key("web-1"),
        force: true,
        uid: uid.clone(),
    }))
    .unwrap();
    settle(&mut sim);
    let again = ClusterOp::DeletePod { pod: key("web-1"), force: true, uid };
    let err = sim.apply_op(Op::from(again)).unwrap_err();
    assert_eq!(err.kind(), ststui::backend::FailureKind::Conflict);
    assert!(err.to_string().contains("was recreated since you decided"), "{err}");
}

#[test]
fn a_claim_repair_keeps_the_pod_scheduled_and_deletions_graceful() {
    let mut sim = sim();
    sim.create_set(with_claims(set("web", 2), "Retain", "Retain")).unwrap();
    settle(&mut sim);
    sim.drain_events();
    let before: Vec<_> = sim.pods_of(&key("web")).iter().map(|p| (*p).clone()).collect();
    // The retention policy changes: upstream repairs the claims' owner references, and the pod
    // counts as dirty, so it is PUT (unchanged: the API server stores nothing and tells no one).
    sim.apply_set(with_claims(set("web", 2), "Delete", "Delete")).unwrap();
    settle(&mut sim);
    let events = sim.drain_events();
    for p in &before {
        let name = p.metadata.name.clone().unwrap_or_default();
        let now = sim.pod(&key(&name)).unwrap();
        assert_eq!(
            now.spec.as_ref().and_then(|s| s.node_name.clone()),
            p.spec.as_ref().and_then(|s| s.node_name.clone()),
            "{name}: nodeName kept"
        );
        assert!(
            now.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some(),
            "{name}: still scheduled"
        );
        assert_eq!(
            now.metadata.resource_version, p.metadata.resource_version,
            "{name}: an unchanged PUT stores nothing"
        );
    }
    let watch_mods = events.iter().filter(|e| matches!(e, SimEvent::Watch { kind: ChangeKind::Modified, object } if object.kind() == ObjKind::Pod)).count();
    assert_eq!(watch_mods, 0, "no pod watch event for an unchanged PUT");
    // A later deletion is graceful (the pod goes through Terminating).
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: key("web-1"), force: false, uid: None }))
        .unwrap();
    sim.advance(10);
    assert!(sim.pod(&key("web-1")).is_some_and(|p| p.metadata.deletion_timestamp.is_some()));
}

#[test]
fn a_failed_create_in_a_burst_batch_still_sends_the_rest_of_that_batch() {
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    let mut sim = sim();
    // A pod named web-1 that the set does not select: its create-pod fails (AlreadyExists).
    let foreign = Pod {
        metadata: ObjectMeta {
            name: Some("web-1".into()),
            namespace: Some("default".into()),
            labels: Some([("app".to_string(), "other".to_string())].into()),
            ..Default::default()
        },
        spec: Some(Default::default()),
        ..Default::default()
    };
    sim.rest_create(ststui::backend::Object::Pod(std::sync::Arc::new(foreign)), false).unwrap();
    let mut s = set("web", 4);
    s.spec.pod_management_policy = Some("Parallel".into());
    sim.create_set(s).unwrap();
    sim.advance(30_000);
    let events = sim.drain_events();
    let created: Vec<String> =
        pod_actions(&events, "create-pod").into_iter().map(|(_, p)| p).collect();
    // slowStartBatch(1, 4): [web-0], [web-1, web-2], [web-3]. web-1 fails; web-2, in the same
    // batch, is still created; nothing after the batch ever is.
    assert_eq!(created, ["web-0", "web-2"]);
}

#[test]
fn adoption_and_release_appear_in_the_timeline() {
    let mut sim = orphaned_web();
    sim.drain_events();
    // Recreated, the set adopts its orphaned pods and revision.
    sim.create_set(set("web", 2)).unwrap();
    settle(&mut sim);
    let events = sim.drain_events();
    let adopted = pod_actions(&events, "adopt-pod");
    let names: Vec<&str> = adopted.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(names, ["web-0", "web-1"], "{events:#?}");
    let revisions = events
        .iter()
        .filter_map(SimEvent::timeline)
        .filter(|e| {
            matches!(
                &e.kind,
                EventKind::Controller { action: ststui::core::ControllerAction::AdoptRevision, .. }
            )
        })
        .count();
    assert_eq!(revisions, 1);
    // A pod whose labels no longer match is released.
    let mut q = sim.pod(&key("web-1")).unwrap().clone();
    q.metadata.labels.get_or_insert_with(Default::default).insert("app".into(), "other".into());
    q.metadata.resource_version = None;
    sim.rest_update(ststui::backend::Object::Pod(std::sync::Arc::new(q)), false, false).unwrap();
    sim.advance(1000);
    let released = pod_actions(&sim.drain_events(), "release-pod");
    assert_eq!(released.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), ["web-1"]);
}
