//! `reconcile` on a steady set and mid-rollout at 10, 1,000 and 10,000 pods (OrderedReady,
//! RollingUpdate, v1.37 semantics). The worlds are built directly (pods at their revision,
//! Running and Ready for a long time, the status as the previous sync would have written it),
//! so every measured sync does the full work: resolve the revisions, claim and summarise every
//! pod (one pass), processReplica over every replica, the status, and (mid-rollout) the
//! maxUnavailable step.
//!
//! At 10,000 pods a sync reads ~27 distinct cache lines per pod (k8s-openapi objects: the Pod
//! struct, owner refs, the label map's node and strings, name, namespace, phase, conditions), so
//! that size is bound by memory latency and varies with what else the host is doing; the 10 and
//! 1,000 cases are steadier.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use ststui::core::defaults::set_defaults_stateful_set;
use ststui::core::newpod::new_versioned_pod;
use ststui::core::revisions::resolve_with;
use ststui::core::{Effect, Observed, Options, reconcile};

struct Fixture {
    set: StatefulSet,
    pods: Vec<Pod>,
    revisions: Vec<ControllerRevision>,
}

fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn base_set(n: i32, image: &str, opts: &Options) -> StatefulSet {
    let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
    let mut set = StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("uid-web".into()),
            generation: Some(1),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(n),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            service_name: Some("web".into()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some(image.into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    };
    set_defaults_stateful_set(&mut set, &opts.semantics);
    set
}

/// The revision the set's template resolves to, stored with a uid.
fn revision_for(
    set: &StatefulSet,
    existing: &[ControllerRevision],
    opts: &Options,
) -> ControllerRevision {
    let refs: Vec<&ControllerRevision> = existing.iter().collect();
    let resolved = resolve_with(set, &refs, &refs, opts).unwrap_or_else(|e| panic!("resolve: {e}"));
    let mut r = resolved.update;
    r.metadata.uid = Some(format!("uid-rev-{}", existing.len()));
    r
}

fn running_pod(set: &StatefulSet, rev: &ControllerRevision, o: i32) -> Pod {
    let name = rev.metadata.name.as_deref().unwrap_or_default();
    let mut p = new_versioned_pod(set, set, name, name, i64::from(o));
    p.metadata.uid = Some(format!("uid-pod-{o}"));
    p.metadata.creation_timestamp = Some(Time(now()));
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(Timestamp::UNIX_EPOCH)),
            ..Default::default()
        }]),
        ..Default::default()
    });
    p
}

/// `n` pods; the top `updated` ordinals on a second template. The status is what the previous
/// sync wrote, so a steady set plans no effects.
fn fixture(n: i32, updated: i32) -> Fixture {
    let opts = Options::default();
    let v1 = base_set(n, "nginx:1", &opts);
    let r1 = revision_for(&v1, &[], &opts);
    let mut revisions = vec![r1.clone()];
    let mut set = v1.clone();
    let mut pods: Vec<Pod> = (0..n).map(|o| running_pod(&v1, &r1, o)).collect();
    if updated > 0 {
        set = base_set(n, "nginx:2", &opts);
        set.metadata.generation = Some(2);
        let r2 = revision_for(&set, &revisions, &opts);
        for o in n - updated..n {
            pods[usize::try_from(o).unwrap_or(0)] = running_pod(&set, &r2, o);
        }
        revisions.push(r2);
    }
    let r1_name = r1.metadata.name.clone();
    set.status = Some(k8s_openapi::api::apps::v1::StatefulSetStatus {
        current_revision: r1_name,
        ..Default::default()
    });
    let mut fx = Fixture { set, pods, revisions };
    // One sync to write the status the controller would have written.
    let plan = run(&fx);
    if let Some(Effect::WriteStatus(s)) =
        plan.effects.iter().find(|e| matches!(e, Effect::WriteStatus(_)))
    {
        fx.set.status = Some((**s).clone());
    }
    fx
}

fn run(fx: &Fixture) -> ststui::core::Plan {
    let pods: Vec<&Pod> = fx.pods.iter().collect();
    let revs: Vec<&ControllerRevision> = fx.revisions.iter().collect();
    let o = Observed { set: &fx.set, pods: &pods, claims: &[], revisions: &revs };
    reconcile(&o, &Options::default(), now())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reconcile");
    for n in [10, 1_000, 10_000] {
        let steady = fixture(n, 0);
        let plan = run(&steady);
        assert!(plan.effects.is_empty(), "steady set plans nothing: {:?}", plan.effects.len());
        let pods: Vec<&Pod> = steady.pods.iter().collect();
        let revs: Vec<&ControllerRevision> = steady.revisions.iter().collect();
        let o = Observed { set: &steady.set, pods: &pods, claims: &[], revisions: &revs };
        let opts = Options::default();
        g.bench_with_input(BenchmarkId::new("steady", n), &o, |b, o| {
            b.iter(|| reconcile(black_box(o), &opts, now()))
        });

        let mid = fixture(n, n / 2);
        let plan = run(&mid);
        assert!(
            plan.effects.iter().any(|e| matches!(e, Effect::DeletePod { .. })),
            "mid-rollout deletes the next pod"
        );
        let pods: Vec<&Pod> = mid.pods.iter().collect();
        let revs: Vec<&ControllerRevision> = mid.revisions.iter().collect();
        let o = Observed { set: &mid.set, pods: &pods, claims: &[], revisions: &revs };
        g.bench_with_input(BenchmarkId::new("mid_rollout", n), &o, |b, o| {
            b.iter(|| reconcile(black_box(o), &opts, now()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
