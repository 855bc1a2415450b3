//! The console's backend in drive mode (`ststui --drive`): a real-cluster backend for what the
//! console shows and the operator's writes, plus the [`Driver`] that reconciles. The cluster
//! backend's timeline lines about the controller (inferred from watch diffs) are left out: the
//! driver reports its own actions, so no line appears twice. Pause, resume and step go to the
//! driver; another controller seen at work stops it, says so, and the console falls back to a
//! cluster's keys (space freezes again).
//!
//! Quitting drops the driver: reconciliation stops and everything stays as it is (a paused
//! set stays as it was). Owns: the composition. Must not: touch the app.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::access::VERSION_WAIT;
use super::{Calls, Config, Driver, Input, Output};
use crate::backend::{Backend, BackendEvent, Capabilities, Mode, Op, SimOp, Sink};
use crate::cluster::{ClusterBackend, Session, Target};
use crate::core::Options;

/// A cluster backend whose StatefulSets ststui's controller drives.
pub struct DriveBackend {
    cluster: ClusterBackend,
    driver: Option<Driver>,
    driving: Arc<AtomicBool>,
    /// This ststui holds the drive lease.
    leading: Arc<AtomicBool>,
    /// Who does, while this one stands by.
    standby: Arc<Mutex<Option<String>>>,
    /// The lease's candidate: stopping it gives the lease up (when held).
    elector: Option<Elector>,
    /// Shared with the controller's thread (see `Calls::runtime`).
    _runtime: Arc<tokio::runtime::Runtime>,
}

/// The capabilities the cluster reported, with the driver's on top while it drives (and who
/// does while this one stands by).
fn patched(caps: Capabilities, driving: bool, standby: Option<String>) -> Capabilities {
    if !driving {
        return Capabilities { standby, ..caps };
    }
    Capabilities { pause_reconcile: true, drives: true, standby: None, ..caps }
}

/// What the console's sink, the driver's output and the lease's elector share.
#[derive(Clone)]
struct Shared {
    /// No other controller seen at work.
    driving: Arc<AtomicBool>,
    /// This ststui holds the drive lease (driving needs it too: a standby's header and keys
    /// are a cluster's).
    leading: Arc<AtomicBool>,
    /// The capabilities the cluster last reported.
    last_caps: Arc<Mutex<Option<Capabilities>>>,
    /// Who holds the lease while this one stands by.
    standby: Arc<Mutex<Option<String>>>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            driving: Arc::new(AtomicBool::new(true)),
            leading: Arc::new(AtomicBool::new(false)),
            last_caps: Arc::default(),
            standby: Arc::default(),
        }
    }

    fn drives(&self) -> bool {
        self.driving.load(Ordering::Relaxed) && self.leading.load(Ordering::Relaxed)
    }

    /// `c` as the console is told it now.
    fn patch(&self, c: Capabilities) -> Capabilities {
        let holder = self.standby.lock().ok().and_then(|h| h.clone());
        patched(c, self.drives(), holder)
    }

    /// The sink the cluster backend reports to: its controller lines left out while driving
    /// (the driver says its own), its capabilities kept and patched.
    fn console_sink(&self, sink: &Sink) -> Sink {
        let (sink, shared) = (Arc::clone(sink), self.clone());
        Arc::new(move |ev| match ev {
            BackendEvent::Timeline(e) if shared.drives() && super::controller_line(&e.kind) => {}
            BackendEvent::Capabilities(c) => {
                if let Ok(mut last) = shared.last_caps.lock() {
                    *last = Some(c.clone());
                }
                sink(BackendEvent::Capabilities(shared.patch(c)));
            }
            other => sink(other),
        })
    }
}

/// The driver's first verdict: driving or a standby (`Ok`), or another controller at work.
type FirstVerdict = std::sync::mpsc::Receiver<Result<(), String>>;

/// The lease's candidate: stopping it gives the lease up (when held).
type Elector = (tokio::sync::oneshot::Sender<()>, std::sync::mpsc::Receiver<()>);

/// The driver's output to the console, and its first verdict (driving, standby, or another
/// controller at work), which the start waits for before the console takes the terminal.
fn driver_output(sink: &Sink, shared: &Shared) -> (Box<dyn FnMut(Output) + Send>, FirstVerdict) {
    let (verdict_tx, verdict) = std::sync::mpsc::channel::<Result<(), String>>();
    let (sink, driving) = (Arc::clone(sink), Arc::clone(&shared.driving));
    let mut caps = Capabilities::drive();
    let mut verdict_tx = Some(verdict_tx);
    let mut decided = move |v: Result<(), String>| {
        if let Some(tx) = verdict_tx.take() {
            let _ = tx.send(v);
        }
    };
    let out = Box::new(move |o: Output| match o {
        Output::Line(e) => sink(BackendEvent::Timeline(e)),
        // Once another controller is seen, the mode is its (live), not the driver's.
        Output::Mode(m) if driving.load(Ordering::Relaxed) => sink(BackendEvent::Mode(m)),
        Output::Mode(_) => {}
        Output::Driving => {
            decided(Ok(()));
            sink(BackendEvent::Notice(
                "driving: ststui's controller reconciles this namespace's StatefulSets".into(),
            ));
        }
        Output::Standby => decided(Ok(())),
        Output::Stepped(0) => sink(BackendEvent::Notice("step: nothing queued".into())),
        Output::Stepped(_) => {}
        Output::OtherController(words) => {
            decided(Err(words.clone()));
            driving.store(false, Ordering::Relaxed);
            sink(BackendEvent::Error(words));
            sink(BackendEvent::Mode(Mode::Live));
            caps.pause_reconcile = false;
            caps.drives = false;
            sink(BackendEvent::Capabilities(caps.clone()));
        }
        Output::WatchError(e) => sink(BackendEvent::Error(format!("drive: {e}"))),
    }) as Box<dyn FnMut(Output) + Send>;
    (out, verdict)
}

/// The runtime, the session and the controller's options for `target`, or why it cannot be
/// driven (read-only, every namespace, no answer, no permission).
fn connect(target: &Target) -> Result<(tokio::runtime::Runtime, Session, Options), String> {
    if target.read_only {
        return Err("--drive writes (it is the controller): it cannot be --read-only".into());
    }
    if target.all_namespaces {
        return Err("--drive drives one namespace: use -n NAMESPACE, not -A".into());
    }
    let runtime = crate::runtime::build("drive-io", crate::runtime::Workers::Threads(1))
        .map_err(|e| e.to_string())?;
    let session = runtime.block_on(crate::cluster::session(target))?;
    let version = runtime.block_on(super::access::server_version(&session))?;
    runtime.block_on(super::access::may_drive(&session, &session.namespace))?;
    let options = Options::for_server(&version.git_version, &target.feature_gates);
    if let Some(why) = target.feature_gates.refused_by(options.version) {
        return Err(why);
    }
    Ok((runtime, session, options))
}

/// Stands for the namespace's drive lease (one driver at a time, held before the first write):
/// a first round before the driver lists, then rounds on the runtime, each change of role (or
/// of holder) said on the console's status line, a standby's every round in its header.
fn elect(
    runtime: &tokio::runtime::Runtime,
    session: &Session,
    gate: &super::lease::Gate,
    sink: &Sink,
    shared: &Shared,
) -> Elector {
    use super::lease::{Role, Timings, standby_words};
    let me = super::lease::identity(&session.context);
    let mut candidate = super::lease::Elector::new(
        session.client.clone(),
        &session.namespace,
        me.clone(),
        gate.clone(),
    );
    // The first round before the driver lists: a leader does not pass for a standby.
    let first = async { tokio::time::timeout(VERSION_WAIT, candidate.round()).await };
    let _ = runtime.block_on(first);
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (sink, shared) = (Arc::clone(sink), shared.clone());
    let ns = session.namespace.clone();
    let gate_seen = gate.clone();
    let mut said: Option<String> = None;
    let report = move |role: &Role| {
        shared.leading.store(matches!(role, Role::Leader | Role::Unelected), Ordering::Relaxed);
        let words = match role {
            Role::Standby { holder, seen_ago, takes_over_in, claims } => {
                Some(standby_words(holder, *seen_ago, *takes_over_in, *claims, Timings::default()))
            }
            _ => None,
        };
        let header = match (&words, shared.standby.lock()) {
            (w, Ok(mut s)) if *s != *w => {
                s.clone_from(w);
                true
            }
            _ => false,
        };
        let trouble = gate_seen.trouble();
        let key = match role {
            Role::Standby { holder, .. } => format!("standby {holder}"),
            other => format!("{:?} {trouble:?}", std::mem::discriminant(other)),
        };
        if said.as_ref() != Some(&key) {
            said = Some(key);
            sink(lease_said(role, &ns, &me, trouble.as_deref()));
        } else if !header {
            return;
        }
        let last = shared.last_caps.lock().ok().and_then(|l| l.clone());
        if let Some(c) = last {
            sink(BackendEvent::Capabilities(shared.patch(c)));
        }
    };
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    runtime.spawn(async move {
        candidate.run(report, stopped).await;
        drop(done_tx);
    });
    (stop, done)
}

impl DriveBackend {
    /// Connects, reads the server's version (the release whose controller the core reproduces)
    /// and starts both the console's watches and the controller.
    pub fn start(target: Target, sink: Sink) -> Result<DriveBackend, String> {
        let (runtime, session, options) = connect(&target)?;
        let shared = Shared::new();
        let epoch = Instant::now();
        let cluster = ClusterBackend::start(target.clone(), shared.console_sink(&sink))?;
        let (out, verdict) = driver_output(&sink, &shared);
        let runtime = Arc::new(runtime);
        let calls = Calls::new(
            session.client.clone(),
            runtime.handle().clone(),
            Some(Arc::clone(&runtime)),
        );
        let gate = super::lease::Gate::new(super::lease::Timings::default());
        let elector = elect(&runtime, &session, &gate, &sink, &shared);
        let config = Config {
            namespace: session.namespace.clone(),
            only: target.name.clone(),
            options,
            epoch,
            paused: false,
            tee: None,
            gate: Some(gate),
        };
        let driver = Driver::start(calls, config, out)?;
        // Driving or a standby, or no verdict yet (a slow listing: the console says it later),
        // open the console; another controller at work refuses here.
        if let Ok(Err(refused)) = verdict.recv_timeout(VERDICT_WAIT) {
            drop(driver);
            let (stop, done) = elector;
            let _ = stop.send(());
            let _ = done.recv_timeout(RELEASE_WAIT);
            return Err(refused);
        }
        Ok(DriveBackend {
            cluster,
            driver: Some(driver),
            driving: shared.driving,
            leading: shared.leading,
            standby: shared.standby,
            elector: Some(elector),
            _runtime: runtime,
        })
    }

    pub fn namespace(&self) -> &str {
        self.cluster.namespace()
    }

    /// Driving: no other controller seen, and the lease held.
    fn drives(&self) -> bool {
        self.driving.load(Ordering::Relaxed) && self.leading.load(Ordering::Relaxed)
    }
}

/// How long the start waits for the driver's first verdict (the namespace listed and checked
/// for another controller) before the console opens anyway.
const VERDICT_WAIT: Duration = Duration::from_secs(30);

/// How long quitting waits for the lease to be given up.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// What the console is told when the lease's role changes.
fn lease_said(
    role: &super::lease::Role,
    ns: &str,
    me: &str,
    trouble: Option<&str>,
) -> BackendEvent {
    use super::lease::Role;
    let lease = super::lease::LEASE_NAME;
    match role {
        Role::Starting => match trouble {
            Some(why) => BackendEvent::Error(format!(
                "drive: cannot take the lease {ns}/{lease}, so nothing is driven: {why}"
            )),
            None => BackendEvent::Notice(format!("drive: reading the lease {ns}/{lease}")),
        },
        Role::Leader => BackendEvent::Notice(format!(
            "drive: this ststui holds the lease {ns}/{lease} ({me}) and drives"
        )),
        Role::Fenced { why } => BackendEvent::Error(format!("drive: stopped writing: {why}")),
        Role::Unelected => BackendEvent::Notice(
            "drive: this server serves no Leases (coordination.k8s.io/v1): driving without an \
             election, so a second ststui --drive here would drive too"
                .into(),
        ),
        Role::Standby { holder, seen_ago, takes_over_in, claims } => BackendEvent::Error(format!(
            "drive: standby, writing nothing ({ns}/{lease}): {}",
            super::lease::standby_words(
                holder,
                *seen_ago,
                *takes_over_in,
                *claims,
                super::lease::Timings::default()
            )
        )),
    }
}

impl Drop for DriveBackend {
    fn drop(&mut self) {
        // The controller stops first: nothing more is written once the console is gone.
        self.driver.take();
        // Then the lease is given up, so another driver takes over at once.
        // (A channel, not block_on: this may run on any thread, a runtime's too.)
        if let Some((stop, done)) = self.elector.take() {
            let _ = stop.send(());
            let _ = done.recv_timeout(RELEASE_WAIT);
        }
    }
}

impl Backend for DriveBackend {
    fn capabilities(&self) -> Capabilities {
        let holder = self.standby.lock().ok().and_then(|h| h.clone());
        patched(self.cluster.capabilities(), self.drives(), holder)
    }

    fn execute(&mut self, op: Op) {
        let driving = self.drives();
        match (op, &self.driver) {
            (Op::Sim(SimOp::Pause), Some(d)) if driving => d.send(Input::Pause),
            (Op::Sim(SimOp::Resume), Some(d)) if driving => d.send(Input::Resume),
            (Op::Sim(SimOp::Step { n }), Some(d)) if driving => d.send(Input::Step(n)),
            // Speed and faults (and pause or step once not driving): the cluster backend
            // answers that it cannot, in its words.
            (op, _) => self.cluster.execute(op),
        }
    }
}
