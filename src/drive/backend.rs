//! The console's backend in drive mode (`ststui --drive`): a real-cluster backend for what the
//! console shows and the operator's writes, plus the [`Driver`] that reconciles. The cluster
//! backend's timeline lines about the controller (inferred from watch diffs) are left out: the
//! driver reports its own actions, so no line appears twice. Pause, resume and step go to the
//! driver; another controller seen at work stops it, says so, and the console falls back to a
//! cluster's keys (space freezes again).
//!
//! Quitting drops the driver: reconciliation stops and everything stays as it is (a paused
//! set stays as it was). Owns: the composition. Must not: touch the app.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Calls, Config, Driver, Input, Output};
use crate::backend::{Backend, BackendEvent, Capabilities, Mode, Op, SimOp, Sink};
use crate::cluster::{ClusterBackend, Target};
use crate::core::{Options, Version};

/// How long the server's version is waited for before refusing to drive.
const VERSION_WAIT: Duration = Duration::from_secs(20);

/// A cluster backend whose StatefulSets ststui's controller drives.
pub struct DriveBackend {
    cluster: ClusterBackend,
    driver: Option<Driver>,
    driving: Arc<AtomicBool>,
    /// Shared with the controller's thread (see `Calls::runtime`).
    _runtime: Arc<tokio::runtime::Runtime>,
}

/// The capabilities the cluster reported, with the driver's on top while it drives.
fn patched(caps: Capabilities, driving: bool) -> Capabilities {
    if !driving {
        return caps;
    }
    Capabilities { pause_reconcile: true, drives: true, ..caps }
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
        runtime.block_on(super::access::may_drive(&session))?;
        let options = Options::for_version(Version::for_server(&version.git_version).0);
        let driving = Arc::new(AtomicBool::new(true));
        let inner: Sink = {
            let (sink, driving) = (Arc::clone(&sink), Arc::clone(&driving));
            Arc::new(move |ev| match ev {
                BackendEvent::Timeline(e)
                    if driving.load(Ordering::Relaxed) && super::controller_line(&e.kind) => {}
                BackendEvent::Capabilities(c) => {
                    sink(BackendEvent::Capabilities(patched(c, driving.load(Ordering::Relaxed))));
                }
                other => sink(other),
            })
        };
        let epoch = Instant::now();
        let cluster = ClusterBackend::start(target.clone(), inner)?;
        let out = {
            let (sink, driving) = (Arc::clone(&sink), Arc::clone(&driving));
            let mut caps = Capabilities::drive();
            Box::new(move |o: Output| match o {
                Output::Line(e) => sink(BackendEvent::Timeline(e)),
                // Once another controller is seen, the mode is its (live), not the driver's.
                Output::Mode(m) if driving.load(Ordering::Relaxed) => sink(BackendEvent::Mode(m)),
                Output::Mode(_) => {}
                Output::Driving => sink(BackendEvent::Notice(
                    "driving: ststui's controller reconciles this namespace's StatefulSets".into(),
                )),
                Output::Stepped(0) => sink(BackendEvent::Notice("step: nothing queued".into())),
                Output::Stepped(_) => {}
                Output::OtherController(words) => {
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
        let config = Config {
            namespace: session.namespace.clone(),
            only: target.name.clone(),
            options,
            epoch,
            paused: false,
            tee: None,
        };
        let driver = Driver::start(calls, config, out)?;
        Ok(DriveBackend { cluster, driver: Some(driver), driving, _runtime: runtime })
    }

    pub fn namespace(&self) -> &str {
        self.cluster.namespace()
    }
}

impl Drop for DriveBackend {
    fn drop(&mut self) {
        // The controller stops first: nothing more is written once the console is gone.
        self.driver.take();
    }
}

impl Backend for DriveBackend {
    fn capabilities(&self) -> Capabilities {
        patched(self.cluster.capabilities(), self.driving.load(Ordering::Relaxed))
    }

    fn execute(&mut self, op: Op) {
        let driving = self.driving.load(Ordering::Relaxed);
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
