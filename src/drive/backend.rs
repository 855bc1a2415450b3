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

use super::{Calls, Config, Driver, Input, Output};
use crate::backend::{Backend, BackendEvent, Capabilities, Mode, Op, SimOp, Sink};
use crate::cluster::{ClusterBackend, Target};
use crate::core::Options;

/// How long the server's version is waited for before refusing to drive.
const VERSION_WAIT: Duration = Duration::from_secs(20);

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
    elector: Option<(tokio::sync::oneshot::Sender<()>, std::sync::mpsc::Receiver<()>)>,
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

impl DriveBackend {
    /// Connects, reads the server's version (the release whose controller the core reproduces)
    /// and starts both the console's watches and the controller.
    pub fn start(target: Target, sink: Sink) -> Result<DriveBackend, String> {
        if target.read_only {
            return Err("--drive writes (it is the controller): it cannot be --read-only".into());
        }
        if target.all_namespaces {
            return Err("--drive drives one namespace: use -n NAMESPACE, not -A".into());
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ststui-drive-io")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the controller's runtime: {e}"))?;
        let session = runtime.block_on(crate::cluster::session(&target))?;
        let version = runtime
            .block_on(async {
                tokio::time::timeout(VERSION_WAIT, session.client.apiserver_version()).await
            })
            .map_err(|_| {
                format!("{} did not answer within {} s", session.server, VERSION_WAIT.as_secs())
            })?
            .map_err(|e| {
                format!("cannot drive {}: {}", session.server, crate::cluster::trouble::brief(&e))
            })?;
        runtime.block_on(super::access::may_drive(&session, &session.namespace))?;
        let options = Options::for_server(&version.git_version, &target.feature_gates);
        let driving = Arc::new(AtomicBool::new(true));
        // Driving needs the lease too: a standby's header and keys are a cluster's.
        let leading = Arc::new(AtomicBool::new(false));
        let last_caps: Arc<Mutex<Option<Capabilities>>> = Arc::default();
        // Who holds the lease while this one stands by.
        let standby: Arc<Mutex<Option<String>>> = Arc::default();
        let drives = {
            let (driving, leading) = (Arc::clone(&driving), Arc::clone(&leading));
            move || driving.load(Ordering::Relaxed) && leading.load(Ordering::Relaxed)
        };
        let patch = {
            let (drives, standby) = (drives.clone(), Arc::clone(&standby));
            move |c: Capabilities| {
                let holder = standby.lock().ok().and_then(|h| h.clone());
                patched(c, drives(), holder)
            }
        };
        let inner: Sink = {
            let (sink, drives, last_caps, patch) =
                (Arc::clone(&sink), drives.clone(), Arc::clone(&last_caps), patch.clone());
            Arc::new(move |ev| match ev {
                BackendEvent::Timeline(e) if drives() && super::controller_line(&e.kind) => {}
                BackendEvent::Capabilities(c) => {
                    if let Ok(mut last) = last_caps.lock() {
                        *last = Some(c.clone());
                    }
                    sink(BackendEvent::Capabilities(patch(c)));
                }
                other => sink(other),
            })
        };
        let epoch = Instant::now();
        let cluster = ClusterBackend::start(target.clone(), inner)?;
        // The driver's first verdict (driving, standby, or another controller at work), waited
        // for before the console takes the terminal: a refusal is said there, exit 2.
        let (verdict_tx, verdict) = std::sync::mpsc::channel::<Result<(), String>>();
        let out = {
            let (sink, driving) = (Arc::clone(&sink), Arc::clone(&driving));
            let mut caps = Capabilities::drive();
            let mut verdict_tx = Some(verdict_tx);
            let mut decided = move |v: Result<(), String>| {
                if let Some(tx) = verdict_tx.take() {
                    let _ = tx.send(v);
                }
            };
            Box::new(move |o: Output| match o {
                Output::Line(e) => sink(BackendEvent::Timeline(e)),
                // Once another controller is seen, the mode is its (live), not the driver's.
                Output::Mode(m) if driving.load(Ordering::Relaxed) => sink(BackendEvent::Mode(m)),
                Output::Mode(_) => {}
                Output::Driving => {
                    decided(Ok(()));
                    sink(BackendEvent::Notice(
                        "driving: ststui's controller reconciles this namespace's StatefulSets"
                            .into(),
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
            }) as Box<dyn FnMut(Output) + Send>
        };
        let runtime = Arc::new(runtime);
        let calls = Calls::new(
            session.client.clone(),
            runtime.handle().clone(),
            Some(Arc::clone(&runtime)),
        );
        // One driver at a time: the namespace's Lease, held before the first write.
        let gate = super::lease::Gate::new(super::lease::Timings::default());
        let me = super::lease::identity(target.context.as_deref().unwrap_or("current-context"));
        let elector = {
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
            let sink = Arc::clone(&sink);
            let ns = session.namespace.clone();
            let (leading, last_caps) = (Arc::clone(&leading), Arc::clone(&last_caps));
            let (standby, patch) = (Arc::clone(&standby), patch.clone());
            let gate_seen = gate.clone();
            // The status line hears of a change of role (or of holder); the header of a
            // standby's every round.
            let mut said: Option<String> = None;
            let report = move |role: &super::lease::Role| {
                use super::lease::{Role, Timings, standby_words};
                leading.store(matches!(role, Role::Leader | Role::Unelected), Ordering::Relaxed);
                let words = match role {
                    Role::Standby { holder, seen_ago, takes_over_in } => {
                        Some(standby_words(holder, *seen_ago, *takes_over_in, Timings::default()))
                    }
                    _ => None,
                };
                let header = match (&words, standby.lock()) {
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
                let last = last_caps.lock().ok().and_then(|l| l.clone());
                if let Some(c) = last {
                    sink(BackendEvent::Capabilities(patch(c)));
                }
            };
            let (done_tx, done) = std::sync::mpsc::channel::<()>();
            runtime.spawn(async move {
                candidate.run(report, stopped).await;
                drop(done_tx);
            });
            (stop, done)
        };
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
            driving,
            leading,
            standby,
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
        Role::Standby { holder, seen_ago, takes_over_in } => BackendEvent::Error(format!(
            "drive: standby, writing nothing: {} holds the lease {ns}/{lease} (renewal seen {} s \
             ago); takes over in {} s if it stops renewing",
            crate::text::escape_controls(holder),
            seen_ago.as_secs(),
            takes_over_in.as_secs()
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
