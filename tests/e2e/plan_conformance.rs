//! The plan conformance suite: one set of plan tests, generic over the runner, run against each
//! of the three adapters of the one plan engine — the simulator's `rollout` (in process, on
//! virtual time), the console's `P` (the reducer over the simulator's real-time driver), and
//! `ststui rollout` (the binary against the simulator served as a cluster). Each must: open its
//! steps in order and no other partition, end done and give its lease back; hold at a gate
//! until approved; halt on a step that does not come up, holding the partition, the set then
//! Halted; halt when the template changes under it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::objects::web;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::api::apps::v1::StatefulSet;
use ststui::app::{AppState, Command, Msg};
use ststui::backend::{Backend, BackendEvent, ClusterOp};
use ststui::plan::record::{self, Phase, Record};
use ststui::sim::driver::SimHandle;
use ststui::sim::{KubeletConfig, Sim};

/// `web` (4 replicas, pods that start and turn Ready in 100 ms, `nginx:broken` never Ready),
/// held at partition 4, its template changed to `image`: an update waiting for a plan.
fn peer(image: &str) -> Sim {
    let kubelet = KubeletConfig {
        start_ms: 100,
        ready_ms: 100,
        stop_ms: 100,
        broken: Some("nginx:broken".into()),
        failure: Default::default(),
    };
    let mut sim = serve_common::sim(vec![serve_common::set("web", 4)], kubelet, false);
    sim.apply_op(ClusterOp::SetPartition { set: web(), partition: 4 }.into()).unwrap();
    sim.apply_op(ClusterOp::SetImage { set: web(), image: image.into() }.into()).unwrap();
    assert!(sim.settle(60_000));
    sim
}

/// One of the plan engine's adapters, on the set `web` of a simulated peer.
trait Runner {
    fn name(&self) -> &'static str;
    /// Starts a plan of `steps` with a bake of `bake_s` seconds; a step that makes no progress
    /// for `stuck_s` seconds halts.
    fn start(&mut self, steps: &str, bake_s: u64, stuck_s: u64);
    fn approve(&mut self);
    /// A write by someone else (the template changed under the plan).
    fn other_writer(&mut self, op: ClusterOp);
    /// Lets time pass until `done` holds for the set (bounded), each set seen recorded.
    fn until(&mut self, what: &str, done: &dyn Fn(&StatefulSet) -> bool) -> StatefulSet;
    /// Every partition seen, in order, repeats folded.
    fn partitions(&self) -> Vec<i32>;
}

fn phase_is(p: Phase) -> impl Fn(&StatefulSet) -> bool {
    move |s| record::read(s).plan().is_some_and(|r| r.phase == p)
}

fn plan_of(s: &StatefulSet) -> Record {
    record::read(s).plan().cloned().unwrap_or_else(|| panic!("no plan record"))
}

fn note(seen: &mut Vec<i32>, set: &StatefulSet) {
    let p = ststui::core::spec::strategy(set).partition;
    if seen.last() != Some(&p) {
        seen.push(p);
    }
}

// ---- the simulator's `rollout` -------------------------------------------------------------

struct Simulated {
    sim: Sim,
    seen: Vec<i32>,
}

impl Runner for Simulated {
    fn name(&self) -> &'static str {
        "simulator"
    }

    fn start(&mut self, steps: &str, bake_s: u64, stuck_s: u64) {
        let r = ststui::sim::planner::Rollout {
            set: web(),
            steps: ststui::plan::Steps::parse(steps).unwrap(),
            bake_seconds: bake_s,
            stuck_after_ms: stuck_s * 1000,
            on_failure: ststui::plan::OnFailure::Hold,
            gates: Default::default(),
            replace_stuck: false,
            image: None,
            line: 0,
        };
        self.sim.start_rollout(r).unwrap();
    }

    fn approve(&mut self) {
        self.sim.approve_plan(&web()).unwrap();
    }

    fn other_writer(&mut self, op: ClusterOp) {
        self.sim.apply_op(op.into()).unwrap();
    }

    fn until(&mut self, what: &str, done: &dyn Fn(&StatefulSet) -> bool) -> StatefulSet {
        for _ in 0..20_000 {
            let set = self.sim.set(&web()).unwrap().clone();
            note(&mut self.seen, &set);
            if done(&set) {
                return set;
            }
            self.sim.advance(50);
        }
        panic!("simulator: {what}: not within 1000 s of virtual time")
    }

    fn partitions(&self) -> Vec<i32> {
        self.seen.clone()
    }
}

// ---- the console's `P` ---------------------------------------------------------------------

pub(crate) struct Console {
    name: &'static str,
    pub(crate) state: AppState,
    /// The simulator's real-time driver, or a cluster backend on the simulator served.
    backend: Box<dyn Backend>,
    /// Work on the simulation's thread (the driver's, or the served one's).
    caller: ststui::sim::driver::Caller,
    rx: Receiver<BackendEvent>,
    seen: Vec<i32>,
    _keep: Option<(SimHandle, ststui::serve::Server, TempDir)>,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sink() -> (ststui::backend::Sink, Receiver<BackendEvent>) {
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    (Arc::new(move |ev| drop(tx.lock().unwrap().send(ev))), rx)
}

impl Console {
    /// The console over the simulator's driver (at ×100).
    fn new(sim: Sim) -> Console {
        let (sink, rx) = sink();
        let handle = ststui::sim::driver::spawn(sim, 100.0, sink);
        let caller = handle.caller();
        Console::with("console", Box::new(handle), caller, rx, None, web())
    }

    /// The console over a cluster backend on the simulator served as a cluster: its verdicts
    /// rest on fresh reads (`ViewOp::Read`) through the API.
    fn on_cluster(sim: Sim, test: &str) -> Console {
        let (handle, server) = serve_common::serve_sim(sim, &[]);
        let dir =
            std::env::temp_dir().join(format!("ststui-planconf-c-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ststui::serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap();
        let target = ststui::cluster::Target {
            kubeconfig: Some(dir.join("kubeconfig")),
            name: Some("web".into()),
            ..Default::default()
        };
        let (sink, rx) = sink();
        let backend = Box::new(ststui::cluster::ClusterBackend::start(target, sink).unwrap());
        let caller = handle.caller();
        let keep = Some((handle, server, TempDir(dir)));
        Console::with("console on a cluster", backend, caller, rx, keep, web())
    }

    /// The console over a cluster backend on `served`, opened on `open`.
    pub(crate) fn on_served(served: &crate::support::rig::Served, open: &str) -> Console {
        let target = ststui::cluster::Target {
            kubeconfig: Some(served.dir.join("kubeconfig")),
            name: Some(open.into()),
            ..Default::default()
        };
        let (sink, rx) = sink();
        let backend = Box::new(ststui::cluster::ClusterBackend::start(target, sink).unwrap());
        let caller = served.handle.caller();
        let key = ststui::backend::ObjRef::new("default", open);
        Console::with("console on a cluster", backend, caller, rx, None, key)
    }

    fn with(
        name: &'static str,
        backend: Box<dyn Backend>,
        caller: ststui::sim::driver::Caller,
        rx: Receiver<BackendEvent>,
        keep: Option<(SimHandle, ststui::serve::Server, TempDir)>,
        open: ststui::backend::ObjRef,
    ) -> Console {
        let caps = backend.capabilities();
        let mut state = AppState::new(caps, ststui::core::Options::default());
        state.selected_set = Some(open.clone());
        let mut c = Console { name, state, backend, caller, rx, seen: vec![4], _keep: keep };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(c.state.synced && c.state.now.is_some() && c.state.mirror.set(&open).is_some()) {
            assert!(Instant::now() < deadline, "console: no first view");
            c.pump();
        }
        c
    }

    pub(crate) fn run(&mut self, msg: Msg) {
        for cmd in ststui::app::update(&mut self.state, msg) {
            if let Command::Backend(op) = cmd {
                self.backend.execute(op);
            }
        }
    }

    pub(crate) fn key(&mut self, code: KeyCode, mods: KeyModifiers) {
        self.run(Msg::Key(KeyEvent::new(code, mods)));
        self.run(Msg::BatchEnd);
    }

    pub(crate) fn typed(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    /// A batch of what the backend reported, then its end (the plan's turn).
    pub(crate) fn pump(&mut self) {
        let Ok(first) = self.rx.recv_timeout(Duration::from_millis(20)) else {
            self.run(Msg::BatchEnd);
            return;
        };
        self.run(Msg::Backend(first));
        while let Ok(ev) = self.rx.try_recv() {
            self.run(Msg::Backend(ev));
        }
        self.run(Msg::BatchEnd);
    }
}

impl Runner for Console {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(&mut self, steps: &str, bake_s: u64, stuck_s: u64) {
        self.key(KeyCode::Char('P'), KeyModifiers::NONE);
        self.key(KeyCode::Char('u'), KeyModifiers::CONTROL);
        self.typed(&format!("{steps} bake={bake_s}s stuck-after={stuck_s}s"));
        self.key(KeyCode::Enter, KeyModifiers::NONE);
        self.key(KeyCode::Char('y'), KeyModifiers::NONE);
        assert!(self.state.plan_run.is_some(), "console: no plan started: {:?}", self.state.status);
    }

    fn approve(&mut self) {
        self.key(KeyCode::Char('A'), KeyModifiers::NONE);
    }

    fn other_writer(&mut self, op: ClusterOp) {
        let (tx, rx) = channel();
        self.caller.call(Box::new(move |sim| {
            let _ = tx.send(sim.apply_op(op.into()).map_err(|e| e.to_string()));
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
    }

    fn until(&mut self, what: &str, done: &dyn Fn(&StatefulSet) -> bool) -> StatefulSet {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            self.pump();
            if let Some(set) = self.state.mirror.set(&web()).cloned() {
                note(&mut self.seen, &set);
                if done(&set) {
                    return set;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{}: {what}: not within 60 s: {:?} {:?} {:?}",
                self.name,
                self.state.status,
                self.state.mirror.set(&web()).map(record::read),
                self.state.plan_run.as_ref().map(|r| r.plan().cloned()),
            );
        }
    }

    fn partitions(&self) -> Vec<i32> {
        self.seen.clone()
    }
}

// ---- `ststui rollout` ----------------------------------------------------------------------

struct Verb {
    handle: SimHandle,
    _server: ststui::serve::Server,
    dir: std::path::PathBuf,
    child: Option<std::process::Child>,
    seen: Vec<i32>,
}

impl Drop for Verb {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Verb {
    fn new(sim: Sim, test: &str) -> Verb {
        let (handle, server) = serve_common::serve_sim(sim, &[]);
        let dir =
            std::env::temp_dir().join(format!("ststui-planconf-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ststui::serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap();
        Verb { handle, _server: server, dir, child: None, seen: vec![4] }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = crate::support::runner::ststui();
        c.args(args)
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--log-file")
            .arg(self.dir.join("log"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    }

    fn set(&self) -> StatefulSet {
        let (tx, rx) = channel();
        self.handle.caller().call(Box::new(move |sim| {
            let _ = tx.send(sim.set(&web()).cloned());
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap()
    }
}

impl Runner for Verb {
    fn name(&self) -> &'static str {
        "ststui rollout"
    }

    fn start(&mut self, steps: &str, bake_s: u64, stuck_s: u64) {
        let (bake, stuck) = (format!("{bake_s}s"), format!("{stuck_s}s"));
        let args = ["rollout", "web", "--steps", steps, "--bake", &bake, "--stuck-after", &stuck];
        self.child = Some(self.command(&args).spawn().unwrap());
    }

    fn approve(&mut self) {
        let status = self.command(&["approve", "web"]).status().unwrap();
        assert!(status.success(), "ststui approve: {status}");
    }

    fn other_writer(&mut self, op: ClusterOp) {
        let (tx, rx) = channel();
        self.handle.caller().call(Box::new(move |sim| {
            let _ = tx.send(sim.apply_op(op.into()).map_err(|e| e.to_string()));
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
    }

    fn until(&mut self, what: &str, done: &dyn Fn(&StatefulSet) -> bool) -> StatefulSet {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let set = self.set();
            note(&mut self.seen, &set);
            if done(&set) {
                return set;
            }
            assert!(Instant::now() < deadline, "ststui rollout: {what}: not within 60 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn partitions(&self) -> Vec<i32> {
        self.seen.clone()
    }
}

// ---- the suite -----------------------------------------------------------------------------

fn runners(image: &str, test: &str) -> Vec<Box<dyn Runner>> {
    vec![
        Box::new(Simulated { sim: peer(image), seen: vec![4] }),
        Box::new(Console::new(peer(image))),
        Box::new(Console::on_cluster(peer(image), test)),
        Box::new(Verb::new(peer(image), test)),
    ]
}

#[test]
fn steps_open_in_order_and_no_other_partition_then_done_and_the_lease_given_back() {
    for mut r in runners("nginx:1.26", "order") {
        r.start("1,50%,100%", 0, 600);
        let set = r.until("done", &phase_is(Phase::Done));
        assert_eq!(r.partitions(), [4, 3, 2, 0], "{}", r.name());
        let done = plan_of(&set);
        assert_eq!((done.step, done.of, done.partition), (3, 3, 0), "{}", r.name());
        let set = r.until("the lease given back", &|s| record::lease(s).is_none());
        assert_eq!(
            ststui::plan::verdict::of_status(&set, k8s_openapi::jiff::Timestamp::now())
                .word()
                .word(),
            "Healthy",
            "{}",
            r.name()
        );
    }
}

#[test]
fn a_gate_holds_until_approved() {
    for mut r in runners("nginx:1.26", "gate") {
        r.start("1,pause,100%", 0, 600);
        r.until("at the gate", &phase_is(Phase::Gate));
        // A while at the gate: nothing further opens.
        let at = r.until("still at the gate", &|s| ststui::core::spec::strategy(s).partition == 3);
        assert_eq!(plan_of(&at).phase, Phase::Gate, "{}", r.name());
        r.approve();
        r.until("done", &phase_is(Phase::Done));
        assert_eq!(r.partitions(), [4, 3, 0], "{}", r.name());
    }
}

#[test]
fn a_step_that_never_comes_up_halts_holding_the_partition_and_the_set_is_halted() {
    for mut r in runners("nginx:broken", "broken") {
        r.start("1,100%", 0, 2);
        let set = r.until("halted", &phase_is(Phase::Halted));
        let halted = plan_of(&set);
        assert!(
            halted.reason.as_deref().unwrap_or("").contains("web-3"),
            "{}: {halted:?}",
            r.name()
        );
        assert_eq!(ststui::core::spec::strategy(&set).partition, 3, "{}", r.name());
        let v = ststui::plan::verdict::of_status(&set, k8s_openapi::jiff::Timestamp::now());
        assert_eq!(v.row, ststui::plan::verdict::Row::Halted, "{}", r.name());
        assert_eq!(r.partitions(), [4, 3], "{}", r.name());
    }
}

#[test]
fn a_template_change_under_the_plan_halts_it() {
    for mut r in runners("nginx:1.26", "template") {
        r.start("1,100%", 3600, 600);
        r.until("baking", &phase_is(Phase::Baking));
        r.other_writer(ClusterOp::SetImage { set: web(), image: "nginx:1.27".into() });
        let set = r.until("halted", &phase_is(Phase::Halted));
        let why = plan_of(&set).reason.unwrap_or_default();
        assert!(why.contains("the template changed under the plan"), "{}: {why}", r.name());
        assert_eq!(ststui::core::spec::strategy(&set).partition, 3, "{}", r.name());
    }
}
