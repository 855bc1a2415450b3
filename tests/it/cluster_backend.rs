//! The cluster backend against a served simulator, without a console: what it reports first,
//! and how a write decided on an older set goes (a 409 re-read and re-decided: through when only
//! the status moved, a conflict naming the change when the spec did), simulator-only ops, and
//! `--read-only`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::objects::web;
use k8s_openapi::api::apps::v1::StatefulSet;
use ststui::backend::{
    Backend, BackendEvent, ClusterOp, FailureKind, Fault, ObjKind, ObjRef, Object, Op, SimOp,
    ViewOp, Write,
};
use ststui::cluster::{ClusterBackend, Target};
use ststui::serve::{self, ServeConfig, Server};
use ststui::sim::driver::SimHandle;
use ststui::sim::{KubeletConfig, Sim, SimConfig};

type Seen = Arc<Mutex<Vec<BackendEvent>>>;

struct Rig {
    handle: SimHandle,
    _server: Server,
    dir: std::path::PathBuf,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rig(test: &str) -> Rig {
    let kubelet = KubeletConfig {
        start_ms: 50,
        ready_ms: 50,
        stop_ms: 50,
        broken: None,
        failure: Default::default(),
    };
    let now = k8s_openapi::jiff::Timestamp::now().as_millisecond();
    let mut sim = Sim::new(SimConfig {
        kubelet,
        epoch_unix_ms: Some(now),
        record_events: true,
        ..SimConfig::default()
    });
    let manifest = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  serviceName: web\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n";
    let set: StatefulSet = serde_yaml_ng::from_str(manifest).unwrap_or_else(|e| panic!("{e}"));
    sim.create_set(set).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.settle(60_000));
    let config = ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        deny: Vec::new(),
        git_version: "v1.36.2+ststui-sim".into(),
    };
    let (handle, server) = serve::serve_sim(sim, 1.0, std::sync::Arc::new(|_| {}), config)
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = std::env::temp_dir().join(format!("ststui-cluster-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap_or_else(|e| panic!("{e}"));
    Rig { handle, _server: server, dir }
}

fn connect(r: &Rig, read_only: bool) -> (ClusterBackend, Seen) {
    let seen: Seen = Arc::default();
    let s = Arc::clone(&seen);
    let target = Target {
        kubeconfig: Some(r.dir.join("kubeconfig")),
        name: Some("web".into()),
        read_only,
        ..Target::default()
    };
    let b = ClusterBackend::start(
        target,
        Arc::new(move |ev| s.lock().unwrap_or_else(|e| e.into_inner()).push(ev)),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (b, seen)
}

fn wait_for<T>(seen: &Seen, what: &str, f: impl Fn(&[BackendEvent]) -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f(&seen.lock().unwrap_or_else(|e| e.into_inner())) {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The newest `web` the backend reported.
fn last_set(v: &[BackendEvent]) -> Option<StatefulSet> {
    v.iter().rev().find_map(|e| match e {
        BackendEvent::Applied(Object::Set(s)) => Some((**s).clone()),
        BackendEvent::Listed { kind: ObjKind::Set, objects, .. } => {
            objects.iter().find_map(|o| match o {
                Object::Set(s) => Some((**s).clone()),
                _ => None,
            })
        }
        _ => None,
    })
}

fn partition_in_sim(r: &Rig) -> i32 {
    let (tx, rx) = std::sync::mpsc::channel();
    r.handle.caller().call(Box::new(move |sim| {
        let _ = tx.send(sim.set(&web()).map(ststui::core::spec::strategy).map(|s| s.partition));
    }));
    rx.recv_timeout(Duration::from_secs(5)).ok().flatten().unwrap_or(-1)
}

#[test]
fn it_reports_the_server_the_set_and_synced() {
    let r = rig("start");
    let (_b, seen) = connect(&r, false);
    wait_for(&seen, "synced", |v| v.contains(&BackendEvent::Synced).then_some(()));
    let v = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(v.contains(&BackendEvent::Server { version: "v1.36.2+ststui-sim".into() }));
    assert!(last_set(&v).is_some());
    let pods = v.iter().find_map(|e| match e {
        BackendEvent::Listed { kind: ObjKind::Pod, objects, .. } => Some(objects.len()),
        _ => None,
    });
    assert_eq!(pods, Some(3));
    wait_for(&seen, "the capabilities", |v| {
        v.iter()
            .any(|e| matches!(e, BackendEvent::Capabilities(c) if c.denied.is_empty()))
            .then_some(())
    });
}

#[test]
fn a_write_decided_on_an_older_set_is_re_decided_or_refused_as_a_conflict() {
    let r = rig("conflict");
    let (mut b, seen) = connect(&r, false);
    let basis = wait_for(&seen, "the set", last_set);
    // Only the status moves (a pod goes unready): the 409 is re-read and the write goes through.
    r.handle.caller().call(Box::new(|sim| {
        let _ = sim.apply_op(
            Fault::SetPodReady { pod: ObjRef::new("default", "web-1"), ready: false }.into(),
        );
    }));
    wait_for(&seen, "the status change", |v| {
        last_set(v).filter(|s| s.metadata.resource_version != basis.metadata.resource_version)
    });
    let write = |partition, basis: &StatefulSet| {
        Op::Cluster(Write::on(
            ClusterOp::SetPartition { set: web(), partition },
            Some(Box::new(basis.clone())),
        ))
    };
    b.execute(write(1, &basis));
    let start = Instant::now();
    while partition_in_sim(&r) != 1 {
        assert!(start.elapsed() < Duration::from_secs(30), "the re-decided write did not land");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The spec moves under the operator: a conflict that says what changed, re-based.
    b.execute(write(2, &basis));
    let f = wait_for(&seen, "the conflict", |v| {
        v.iter().find_map(|e| match e {
            BackendEvent::OpFailed(f) if f.kind == FailureKind::Conflict => Some(f.clone()),
            _ => None,
        })
    });
    assert_eq!(f.message, "default/web changed since you decided: partition 0 → 1");
    let rebased = f.write.and_then(|w| w.basis).unwrap_or_else(|| panic!("no fresh basis"));
    assert_eq!(ststui::core::spec::strategy(&rebased).partition, 1);
    assert_eq!(partition_in_sim(&r), 1, "nothing written on a conflict");
}

#[test]
fn simulator_ops_are_unsupported_and_read_only_writes_nothing() {
    let r = rig("readonly");
    let (mut b, seen) = connect(&r, true);
    assert!(
        b.capabilities()
            .denied(ststui::backend::WriteKind::PatchSet)
            .is_some_and(|w| w.contains("--read-only"))
    );
    b.execute(Op::Sim(SimOp::Pause));
    let f = wait_for(&seen, "the refusal", |v| {
        v.iter().find_map(|e| match e {
            BackendEvent::OpFailed(f) if f.kind == FailureKind::Unsupported => Some(f.clone()),
            _ => None,
        })
    });
    assert!(f.message.contains("simulator only"), "{}", f.message);
    b.execute(Op::from(ClusterOp::SetPartition { set: web(), partition: 2 }));
    wait_for(&seen, "the read-only refusal", |v| {
        v.iter()
            .any(|e| matches!(e, BackendEvent::OpFailed(f) if f.kind == FailureKind::Forbidden))
            .then_some(())
    });
    assert_eq!(partition_in_sim(&r), 0);
}

#[test]
fn a_group_view_watches_every_member_and_one_set_again_drops_the_others() {
    let r = rig("group");
    let manifest = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  replicas: 2\n  serviceName: db\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      containers:\n      - name: app\n        image: postgres:17\n";
    let db: StatefulSet = serde_yaml_ng::from_str(manifest).unwrap_or_else(|e| panic!("{e}"));
    let (tx, rx) = std::sync::mpsc::channel();
    r.handle.caller().call(Box::new(move |sim| {
        let _ = tx.send(sim.create_set(db).map(|_| sim.settle(60_000)).is_ok());
    }));
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).ok(), Some(true));
    let (mut b, seen) = connect(&r, false);
    wait_for(&seen, "synced", |v| v.contains(&BackendEvent::Synced).then_some(()));
    // The group of the one set shown (a group by label, its other members not known yet): the
    // namespace's sets are watched, where the console finds them.
    b.execute(Op::View(ViewOp::Group(vec![web()])));
    wait_for(&seen, "the namespace's sets", |v| {
        v.iter()
            .any(|e| {
                matches!(e, BackendEvent::Listed { kind: ObjKind::Set, scope, objects }
                    if scope.name.is_none() && objects.len() == 2)
            })
            .then_some(())
    });
    let db_ref = ObjRef::new("default", "db");
    b.execute(Op::View(ViewOp::Group(vec![web(), db_ref.clone()])));
    // db's pods listed beside web's, in one listing of the namespace's (one watch of the pods
    // for the group: never one per set).
    wait_for(&seen, "db's pods beside web's", |v| {
        v.iter()
            .any(|e| match e {
                BackendEvent::Listed { kind: ObjKind::Pod, scope, objects } => {
                    let names = |p: &str| {
                        objects
                            .iter()
                            .filter(|o| ObjRef::of(o.metadata()).name.starts_with(p))
                            .count()
                    };
                    scope.selector.is_none() && names("db-") == 2 && names("web-") == 3
                }
                _ => false,
            })
            .then_some(())
    });
    let pod_watches = |v: &[BackendEvent]| {
        v.iter().filter(|e| matches!(e, BackendEvent::Listed { kind: ObjKind::Pod, .. })).count()
    };
    assert_eq!(
        pod_watches(&seen.lock().unwrap_or_else(|e| e.into_inner())[..]),
        3,
        "web's alone, the group's emptied, the group's one listing"
    );
    let listed = |name: &'static str, n: usize| {
        move |v: &[BackendEvent]| {
            v.iter()
                .any(|e| match e {
                    BackendEvent::Listed { kind: ObjKind::Pod, scope, objects } => {
                        let sel = scope.selector.as_ref().and_then(|s| s.match_labels.as_ref());
                        sel.and_then(|l| l.get("app")).map(String::as_str) == Some(name)
                            && objects.len() == n
                    }
                    _ => false,
                })
                .then_some(())
        }
    };
    seen.lock().unwrap_or_else(|e| e.into_inner()).clear();
    b.execute(Op::View(ViewOp::Focus(Some(web()))));
    // Back to one set: what the group showed leaves the mirror, then web's pods list again.
    wait_for(&seen, "the members' pods dropped", |v| {
        v.iter()
            .any(|e| {
                matches!(e, BackendEvent::Listed { kind: ObjKind::Pod, scope, objects }
                    if scope.selector.is_none() && objects.is_empty())
            })
            .then_some(())
    });
    wait_for(&seen, "web's pods again", listed("web", 3));
    let v = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        !v.iter().any(|e| matches!(e, BackendEvent::Listed { kind: ObjKind::Pod, objects, .. }
            if objects.iter().any(|o| ObjRef::of(o.metadata()).name.starts_with("db-")))),
        "db's pods are no longer sent"
    );
}
