//! Drive mode through what a real network does to its writes, on a served simulator whose own
//! controller is paused (an API server without a StatefulSet controller, ststui's the only one):
//! replies lost after the server carried the write out, an outage of the whole API, and a denied
//! permission. The server's own store is the judge: the set converges, no pod is made twice, a
//! revision whose creation lost its reply is not taken for a collision (which would rename the
//! update revision and roll every pod again), and a denied write is refused before driving.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::objects::web;
use ststui::backend::{BackendEvent, ClusterOp, EventKind};
use ststui::cluster::Target;
use ststui::core::ControllerAction;
use ststui::drive::backend::DriveBackend;
use ststui::serve::{self, Server};
use ststui::sim::driver::SimHandle;
use ststui::sim::{ApiFault, Sim};

type Seen = Arc<Mutex<Vec<BackendEvent>>>;

struct Rig {
    handle: SimHandle,
    _server: Server,
    dir: std::path::PathBuf,
    seen: Seen,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `web` (3 replicas) on a served simulation with its controller paused, denying `deny`.
fn rig(test: &str, deny: &[&str]) -> Rig {
    let sim =
        serve_common::sim(vec![serve_common::set("web", 3)], serve_common::kubelet(100), true);
    rig_of(test, deny, sim)
}

fn rig_of(test: &str, deny: &[&str], sim: Sim) -> Rig {
    let (handle, server) = serve_common::serve_sim(sim, deny);
    let dir =
        std::env::temp_dir().join(format!("ststui-drive-faults-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap();
    Rig { handle, _server: server, dir, seen: Arc::default() }
}

impl Rig {
    fn target(&self) -> Target {
        Target {
            kubeconfig: Some(self.dir.join("kubeconfig")),
            name: Some("web".into()),
            ..Target::default()
        }
    }

    fn drive(&self) -> Result<DriveBackend, String> {
        self.drive_with("")
    }

    /// Drives with these `--feature-gates`.
    fn drive_with(&self, gates: &str) -> Result<DriveBackend, String> {
        let seen = Arc::clone(&self.seen);
        let feature_gates =
            if gates.is_empty() { Default::default() } else { gates.parse().unwrap() };
        let target = Target { feature_gates, ..self.target() };
        DriveBackend::start(
            target,
            Arc::new(move |ev| seen.lock().unwrap_or_else(|e| e.into_inner()).push(ev)),
        )
    }

    fn call<T: Send + 'static>(&self, f: impl FnOnce(&mut Sim) -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle.caller().call(Box::new(move |sim| {
            let _ = tx.send(f(sim));
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap()
    }

    fn op(&self, op: ClusterOp) {
        self.call(move |sim| sim.apply_op(op.into()).map_err(|e| e.to_string())).unwrap();
    }

    /// What the server holds: (pod names with their uid, Ready and revision), the set's
    /// revisions, its update revision and collision count.
    fn held(&self) -> Held {
        self.call(|sim| {
            let set = sim.set(&web()).cloned().unwrap();
            let status = set.status.clone().unwrap_or_default();
            let mut pods: Vec<(String, bool, String)> = sim
                .pods_of(&web())
                .into_iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .map(|p| {
                    (
                        p.metadata.name.clone().unwrap_or_default(),
                        ststui::core::pod::is_ready(p),
                        ststui::core::pod::revision(p).to_string(),
                    )
                })
                .collect();
            pods.sort();
            Held {
                pods,
                revisions: sim.revisions_of(&web()).len(),
                update: status.update_revision.unwrap_or_default(),
                collisions: status.collision_count.unwrap_or(0),
            }
        })
    }

    fn until(&self, what: &str, f: impl Fn(&Held) -> bool) -> Held {
        let start = Instant::now();
        loop {
            let h = self.held();
            if f(&h) {
                return h;
            }
            if start.elapsed() >= Duration::from_secs(60) {
                let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                let said: Vec<String> = seen
                    .iter()
                    .filter_map(|e| match e {
                        BackendEvent::Timeline(ev) => Some(format!("{} {:?}", ev.t_ms, ev.kind)),
                        BackendEvent::Error(e) => Some(format!("error {e}")),
                        BackendEvent::Notice(n) => Some(format!("notice {n}")),
                        _ => None,
                    })
                    .collect();
                panic!("{what}: not within 60 s: {h:?}\n{}", said.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The driver's notices on the timeline.
    fn notices(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter()
            .filter_map(|e| match e {
                BackendEvent::Timeline(ev) => match &ev.kind {
                    EventKind::Notice { text } => Some(text.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// The driver's timeline, in order: its notices as `notice …`, its actions as `ACTION
    /// NAME`.
    fn said(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter()
            .filter_map(|e| match e {
                BackendEvent::Timeline(ev) => match &ev.kind {
                    EventKind::Notice { text } => Some(format!("notice {text}")),
                    EventKind::Controller { action, pod, revision, .. } => Some(format!(
                        "{} {}",
                        action.as_str(),
                        pod.clone().or_else(|| revision.clone()).unwrap_or_default()
                    )),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// The driver's own timeline lines of `action`.
    fn actions(&self, action: ControllerAction) -> Vec<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter()
            .filter_map(|e| match e {
                BackendEvent::Timeline(ev) => match &ev.kind {
                    EventKind::Controller { action: a, pod, revision, .. } if *a == action => {
                        Some(pod.clone().or_else(|| revision.clone()).unwrap_or_default())
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug)]
struct Held {
    pods: Vec<(String, bool, String)>,
    revisions: usize,
    update: String,
    collisions: i32,
}

impl Held {
    fn ready_on(&self, n: usize, revision: &str) -> bool {
        self.pods.len() == n && self.pods.iter().all(|(_, r, rev)| *r && rev == revision)
    }
}

#[test]
fn lost_replies_make_no_pod_twice_and_no_collision() {
    let r = rig("lost", &[]);
    let _d = r.drive().unwrap();
    let first = r.until("3 Ready pods", |h| !h.update.is_empty() && h.ready_on(3, &h.update));
    // Creations whose replies are lost: the pods exist, the driver heard nothing back.
    r.call(|sim| sim.api_fault(ApiFault::LoseReplies { n: 3 }));
    r.op(ClusterOp::Scale { set: web(), replicas: 6 });
    let h = r.until("6 Ready pods", |h| h.ready_on(6, &first.update));
    assert_eq!(h.revisions, 1, "{h:?}");
    assert!(r.actions(ControllerAction::DeletePod).is_empty(), "nothing deleted to mend a loss");
    // Each creation whose answer was lost is resolved on the timeline when its pod appears.
    let notes = r.notices();
    let made: Vec<&String> = notes.iter().filter(|n| n.contains("made it after all")).collect();
    assert!(!made.is_empty(), "{notes:?}");
    assert!(made.iter().all(|n| n.starts_with("create-pod web-")), "{made:?}");
    // A new revision whose creation loses its reply: read again, it is the same revision, not a
    // hash collision.
    r.call(|sim| sim.api_fault(ApiFault::LoseReplies { n: 1 }));
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.27".into() });
    let h = r.until("rolled out", |h| h.update != first.update && h.ready_on(6, &h.update));
    assert_eq!(h.collisions, 0, "a lost reply is no collision: {h:?}");
    assert_eq!(h.revisions, 2, "{h:?}");
}

#[test]
fn an_outage_of_the_api_is_waited_out_and_the_set_converges() {
    let r = rig("outage", &[]);
    let _d = r.drive().unwrap();
    let first = r.until("3 Ready pods", |h| !h.update.is_empty() && h.ready_on(3, &h.update));
    r.call(|sim| sim.api_fault(ApiFault::Down { ms: 3000 }));
    r.op(ClusterOp::Scale { set: web(), replicas: 5 });
    r.until("5 Ready pods after the outage", |h| h.ready_on(5, &first.update));
    let created = r.actions(ControllerAction::CreatePod);
    for p in ["web-3", "web-4"] {
        assert_eq!(created.iter().filter(|c| *c == p).count(), 1, "{p} told once: {created:?}");
    }
}

#[test]
fn a_denied_write_refuses_to_drive_and_names_it() {
    let r = rig("denied", &["create:pods", "update:statefulsets"]);
    let Err(e) = r.drive() else { panic!("drove without the permission to create pods") };
    assert!(e.contains("will not drive default:"), "{e}");
    assert!(e.contains("create pods (core)"), "{e}");
    assert!(!e.contains("delete pods"), "only what is denied is named: {e}");
    assert!(r.held().pods.is_empty(), "nothing written");
}

/// Scales `web` to 4 while the pods watch is stalled for 3 s (the sets watch is not): the
/// driver creates web-3 and writes the status; the status's watch event asks for another sync.
fn scale_behind_a_stalled_pods_watch(r: &Rig) -> Held {
    let first = r.until("3 Ready pods", |h| !h.update.is_empty() && h.ready_on(3, &h.update));
    // The driver's view too (the server's is ahead of its watches): its status says 3 Ready.
    let start = Instant::now();
    while !r.seen.lock().unwrap().iter().any(|e| {
        matches!(e, BackendEvent::Timeline(ev) if matches!(ev.kind,
            EventKind::Status { replicas: 3, ready_replicas: 3, .. }))
    }) {
        assert!(start.elapsed() < Duration::from_secs(30), "the driver never saw 3 Ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stalled = Instant::now();
    r.call(|sim| sim.api_fault(ApiFault::StallWatches { ms: 3000, resource: Some("pods") }));
    r.op(ClusterOp::Scale { set: web(), replicas: 4 });
    let h = r.until("4 Ready pods", |h| h.ready_on(4, &first.update));
    // The server has them at once; the driver hears of them when the stall ends.
    std::thread::sleep(Duration::from_secs(4).saturating_sub(stalled.elapsed()));
    h
}

#[test]
fn a_sync_is_held_until_the_pods_watch_shows_the_pod_it_created() {
    let r = rig("read-own-writes", &[]);
    let _d = r.drive().unwrap();
    let h = scale_behind_a_stalled_pods_watch(&r);
    assert_eq!(h.pods.len(), 4, "{h:?}");
    let said = r.said();
    let held = said
        .iter()
        .position(|l| l.starts_with("notice sync default/web held: the pods watch has not shown"))
        .unwrap_or_else(|| panic!("no hold said: {said:#?}"));
    assert!(said[held].contains("write of web-3 (resourceVersion "), "{}", said[held]);
    let back = said
        .iter()
        .position(|l| l.starts_with("notice sync default/web: its own writes read back after"))
        .unwrap_or_else(|| panic!("the hold's end not said: {said:#?}"));
    assert!(back > held, "{said:#?}");
    // Held means held: nothing written for the set between the two.
    let between: Vec<&String> =
        said[held + 1..back].iter().filter(|l| !l.starts_with("notice")).collect();
    assert!(between.is_empty(), "written while held: {between:?}");
    assert_eq!(said.iter().filter(|l| l.contains(" held: ")).count(), 1, "said once: {said:#?}");
    let created = r.actions(ControllerAction::CreatePod);
    assert_eq!(created.iter().filter(|p| *p == "web-3").count(), 1, "{created:?}");
}

#[test]
fn with_the_gate_off_a_sync_reads_its_own_writes_from_the_mirror_at_once() {
    let r = rig("read-own-writes-off", &[]);
    let _d = r.drive_with("StaleControllerConsistencyStatefulSet=false").unwrap();
    scale_behind_a_stalled_pods_watch(&r);
    let said = r.said();
    assert!(!said.iter().any(|l| l.contains(" held: ")), "held with the gate off: {said:#?}");
    let created = r.actions(ControllerAction::CreatePod);
    assert_eq!(created.iter().filter(|p| *p == "web-3").count(), 1, "{created:?}");
}

/// An API server that stores a Recreate set (its gate on) and ststui driving with the
/// controller's gate off (1.37's default): the set is not reconciled, and the Warning Event
/// upstream records on it is posted to the server, once per sync that refuses it.
#[test]
fn a_recreate_set_with_the_controllers_gate_off_is_refused_with_a_warning_event_on_the_server() {
    let mut config =
        ststui::sim::SimConfig { kubelet: serve_common::kubelet(100), ..Default::default() };
    config.options.semantics.recreate_gate = true;
    let sim = serve_common::sim_with(vec![serve_common::set("web", 3)], config, true);
    let r = rig_of("recreate-gate-off", &[], sim);
    r.op(ClusterOp::SetStrategy {
        set: web(),
        kind: ststui::core::spec::UpdateType::Recreate,
        rolling: None,
    });
    let _d = r.drive().unwrap();
    let start = Instant::now();
    let warning = loop {
        let found = r.call(|sim| {
            sim.store()
                .events()
                .iter()
                .find(|e| e.reason.as_deref() == Some(ststui::core::UNKNOWN_STRATEGY))
                .cloned()
        });
        if let Some(e) = found {
            break e;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no Event: {:#?}", r.said());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.involved_object.name.as_deref(), Some("web"));
    let message = warning.message.clone().unwrap_or_default();
    assert!(
        message.contains(
            "uses Recreate strategy but feature gate StatefulSetRecreateStrategy is disabled"
        ),
        "{message}"
    );
    // Nothing reconciled: no pod made for the set.
    assert!(r.held().pods.is_empty(), "{:?}", r.held());
}
