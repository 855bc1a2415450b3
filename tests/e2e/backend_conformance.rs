//! The backend conformance suite: one set of tests, generic over the backend, run against each
//! of the three the console can be given — the simulator (in process), a real cluster's backend
//! (on a served simulator, through its kubeconfig), and drive mode (ststui's controller driving
//! a served simulator whose own controller is paused: the API server without a StatefulSet
//! controller). Each must: report the set and its pods as they come to be, then `Synced`; carry
//! a write out and report the set as the server then holds it; and answer pause and step as its
//! capabilities say (paused, a scale-up is not acted on; one step, one pod; or, without an
//! embedded controller, refuse as unsupported).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::objects::web;
use ststui::backend::{
    Backend, BackendEvent, ClusterOp, FailureKind, Mode, ObjKind, Object, Op, SimOp, Write,
};
use ststui::cluster::{ClusterBackend, Target};
use ststui::drive::backend::DriveBackend;
use ststui::serve::{self, Server};
use ststui::sim::Sim;
use ststui::sim::driver::SimHandle;

type Seen = Arc<Mutex<Vec<BackendEvent>>>;

/// A backend under test, what it reported, and what keeps its peer alive.
struct Subject {
    name: &'static str,
    backend: Box<dyn Backend>,
    seen: Seen,
    _keep: Vec<Box<dyn std::any::Any>>,
    _dir: Option<TempDir>,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `web` with 3 replicas; `paused`: the API server without a StatefulSet controller (drive mode
/// is the only one).
fn sim_with_web(paused: bool) -> Sim {
    serve_common::sim(vec![serve_common::set("web", 3)], serve_common::kubelet(100), paused)
}

fn sink(seen: &Seen) -> ststui::backend::Sink {
    let s = Arc::clone(seen);
    Arc::new(move |ev| s.lock().unwrap_or_else(|e| e.into_inner()).push(ev))
}

fn served(sim: Sim, test: &str) -> (SimHandle, Server, TempDir) {
    let (handle, server) = serve_common::serve_sim(sim, &[]);
    let dir = std::env::temp_dir().join(format!("ststui-conf-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap();
    (handle, server, TempDir(dir))
}

fn target(dir: &TempDir) -> Target {
    Target {
        kubeconfig: Some(dir.0.join("kubeconfig")),
        name: Some("web".into()),
        ..Target::default()
    }
}

fn simulator(_test: &str) -> Subject {
    let seen: Seen = Arc::default();
    let handle = ststui::sim::driver::spawn(sim_with_web(false), 1.0, sink(&seen));
    Subject { name: "simulator", backend: Box::new(handle), seen, _keep: Vec::new(), _dir: None }
}

fn cluster(test: &str) -> Subject {
    let (handle, server, dir) = served(sim_with_web(false), test);
    let seen: Seen = Arc::default();
    let b = ClusterBackend::start(target(&dir), sink(&seen)).unwrap();
    let keep: Vec<Box<dyn std::any::Any>> = vec![Box::new(server), Box::new(handle)];
    Subject { name: "cluster", backend: Box::new(b), seen, _keep: keep, _dir: Some(dir) }
}

fn drive(test: &str) -> Subject {
    let (handle, server, dir) = served(sim_with_web(true), test);
    let seen: Seen = Arc::default();
    let b = DriveBackend::start(target(&dir), sink(&seen)).unwrap();
    let keep: Vec<Box<dyn std::any::Any>> = vec![Box::new(server), Box::new(handle)];
    Subject { name: "drive", backend: Box::new(b), seen, _keep: keep, _dir: Some(dir) }
}

/// What the events say now: the set's spec replicas and partition, and the pods by name
/// (Ready or not).
#[derive(Debug, Default)]
struct View {
    set: Option<(i32, i32)>,
    pods: BTreeMap<String, bool>,
    synced: bool,
}

fn ready(p: &k8s_openapi::api::core::v1::Pod) -> bool {
    ststui::core::pod::is_ready(p)
}

fn view(events: &[BackendEvent]) -> View {
    let mut v = View::default();
    let take = |o: &Object, v: &mut View| match o {
        Object::Set(s) if s.metadata.name.as_deref() == Some("web") => {
            let partition = ststui::core::spec::strategy(s).partition;
            v.set = Some((s.spec.replicas.unwrap_or(1), partition));
        }
        Object::Pod(p) => {
            v.pods.insert(p.metadata.name.clone().unwrap_or_default(), ready(p));
        }
        _ => {}
    };
    for e in events {
        match e {
            BackendEvent::Applied(o) => take(o, &mut v),
            BackendEvent::Deleted(Object::Pod(p)) => {
                v.pods.remove(p.metadata.name.as_deref().unwrap_or_default());
            }
            BackendEvent::Listed { kind, objects, .. } => {
                if *kind == ObjKind::Pod {
                    v.pods.clear();
                }
                for o in objects {
                    take(o, &mut v);
                }
            }
            BackendEvent::Synced => v.synced = true,
            _ => {}
        }
    }
    v
}

impl Subject {
    fn wait(&self, what: &str, f: impl Fn(&View, &[BackendEvent]) -> bool) {
        let start = Instant::now();
        loop {
            {
                let ev = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                if f(&view(&ev), &ev) {
                    return;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{}: {what}: not within 30 s",
                self.name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn view(&self) -> View {
        view(&self.seen.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn write(&mut self, op: ClusterOp) {
        self.backend.execute(Op::Cluster(Write::new(op)));
    }

    fn settled(&self, n: usize) {
        self.wait(&format!("{n} Ready pods"), |v, _| {
            v.synced && v.pods.len() == n && v.pods.values().all(|r| *r)
        });
    }
}

fn reports_the_set_and_its_pods_then_synced(s: Subject) {
    s.settled(3);
    let v = s.view();
    assert_eq!(v.set, Some((3, 0)), "{}", s.name);
    assert_eq!(v.pods.keys().collect::<Vec<_>>(), ["web-0", "web-1", "web-2"], "{}", s.name);
}

fn carries_a_write_out_and_reports_what_the_server_holds(mut s: Subject) {
    s.settled(3);
    s.write(ClusterOp::SetPartition { set: web(), partition: 2 });
    s.wait("partition 2 held", |v, _| v.set.is_some_and(|(_, p)| p == 2));
    s.write(ClusterOp::Scale { set: web(), replicas: 4 });
    s.settled(4);
}

fn pauses_and_steps_as_its_capabilities_say(mut s: Subject) {
    s.settled(3);
    let caps = s.backend.capabilities();
    s.backend.execute(Op::Sim(SimOp::Pause));
    if !caps.pause_reconcile {
        s.wait("pause refused as unsupported", |_, ev| {
            ev.iter().any(
                |e| matches!(e, BackendEvent::OpFailed(f) if f.kind == FailureKind::Unsupported),
            )
        });
        return;
    }
    s.wait("paused", |_, ev| ev.iter().rev().find_map(mode) == Some(Mode::Paused));
    s.write(ClusterOp::Scale { set: web(), replicas: 5 });
    s.wait("the new spec seen", |v, _| v.set.is_some_and(|(r, _)| r == 5));
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(s.view().pods.len(), 3, "{}: paused, yet a pod was created", s.name);
    s.backend.execute(Op::Sim(SimOp::Step { n: 1 }));
    s.wait("one step, one pod", |v, _| v.pods.contains_key("web-3"));
    std::thread::sleep(Duration::from_millis(800));
    assert!(!s.view().pods.contains_key("web-4"), "{}: one step made more than one pod", s.name);
    s.backend.execute(Op::Sim(SimOp::Resume));
    s.wait("live", |_, ev| ev.iter().rev().find_map(mode) == Some(Mode::Live));
    s.settled(5);
}

fn mode(e: &BackendEvent) -> Option<Mode> {
    match e {
        BackendEvent::Mode(m) => Some(*m),
        _ => None,
    }
}

macro_rules! conformance {
    ($($subject:ident),*) => {
        $(
            mod $subject {
                #[test]
                fn reports_the_set_and_its_pods_then_synced() {
                    super::reports_the_set_and_its_pods_then_synced(super::$subject("list"));
                }
                #[test]
                fn carries_a_write_out_and_reports_what_the_server_holds() {
                    super::carries_a_write_out_and_reports_what_the_server_holds(super::$subject("write"));
                }
                #[test]
                fn pauses_and_steps_as_its_capabilities_say() {
                    super::pauses_and_steps_as_its_capabilities_say(super::$subject("pause"));
                }
            }
        )*
    };
}

conformance!(simulator, cluster, drive);
