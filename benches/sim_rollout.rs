//! A 1,000-replica Parallel rolling update with zero kubelet delays, headless, to completion
//! (every pod on the new revision and status.currentRevision == updateRevision).
//!
//! Two variants: the default maxUnavailable (1, with the 1.37 semantics: one pod at a time, about
//! two syncs per pod) and maxUnavailable=100% (every pod replaced in a handful of syncs).
//! Setup (creating the 1,000 pods) is not measured.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ststui::backend::{ClusterOp, ObjRef, Op};
use ststui::sim::{KubeletConfig, Sim, SimConfig};

#[path = "../tests/support/objects.rs"]
#[allow(dead_code, reason = "shared with other benches, which use the rest")]
mod objects;

const REPLICAS: i32 = 1000;

/// `web` (the tests' set) with REPLICAS pods, Parallel.
fn web() -> StatefulSet {
    let mut s = objects::set("web", REPLICAS);
    s.spec.pod_management_policy = Some("Parallel".into());
    s
}

fn ready_world(max_unavailable: Option<&str>) -> Sim {
    let config = SimConfig { seed: 1, kubelet: KubeletConfig::instant(), ..Default::default() };
    let mut sim = Sim::new(config);
    assert!(sim.create_set(web()).is_ok() && sim.settle(60_000), "setup failed");
    if let Some(mu) = max_unavailable {
        let op = Op::from(ClusterOp::SetMaxUnavailable {
            set: ObjRef::new("default", "web"),
            value: IntOrString::String(mu.into()),
        });
        assert!(sim.apply_op(op).is_ok() && sim.settle(60_000), "setup failed");
    }
    sim.drain_events();
    sim
}

fn roll(mut sim: Sim) -> Sim {
    let set = ObjRef::new("default", "web");
    let image = Op::from(ClusterOp::SetImage { set: set.clone(), image: "nginx:1.27".into() });
    assert!(sim.apply_op(image).is_ok());
    let settled = sim.settle(3_600_000);
    let st = sim.set(&set).and_then(|s| s.status.clone()).unwrap_or_default();
    let done = settled
        && st.updated_replicas == Some(REPLICAS)
        && st.current_revision.is_some()
        && st.current_revision == st.update_revision;
    assert!(done, "rollout did not complete: {st:?}");
    black_box(sim.drain_events().len());
    sim
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sim_rollout");
    group.sample_size(10);
    group.bench_function("parallel_1000_max_unavailable_default", |b| {
        b.iter_batched(|| ready_world(None), roll, BatchSize::PerIteration)
    });
    group.bench_function("parallel_1000_max_unavailable_100pct", |b| {
        b.iter_batched(|| ready_world(Some("100%")), roll, BatchSize::PerIteration)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
