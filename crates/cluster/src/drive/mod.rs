//! Drive mode: ststui's controller core as the StatefulSet controller of a real API server
//! whose kube-controller-manager runs without its own (`--controllers=*,-statefulset-controller`).
//! Watches feed a [`mirror::Mirror`] of the namespace; the controller loop (`control`) reads
//! it and carries its Plans out as API calls (`effects`); pause, resume and step are the loop's
//! own operations. Nothing drives without the explicit `--drive`, and [`guard`] refuses to start,
//! or stops at once, when another StatefulSet controller is seen at work.
//!
//! The controller runs on a thread of its own ([`Driver`]), blocking on its API calls as
//! upstream's worker does; its watchers run on the caller's tokio runtime. The console
//! (`backend::DriveBackend`) and `ststui play --drive` both use it.
//!
//! Owns: the loop's thread, its timers in wall time, the start and stop. Must not: touch the
//! app, the terminal or the simulator's store.

pub mod access;
pub mod backend;
pub mod consistency;
pub mod effects;
pub mod guard;
pub mod headless;
pub mod lease;
pub mod mirror;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};

use crate::backend::{Event, EventKind, Mode, ObjRef};
use crate::control::{Controller, Read, Seen, Timers};
use crate::core::Options;
pub use effects::Calls;
use mirror::{Mirror, Watched};

/// A watch that failed, and why: said once while it repeats (the watchers retry with
/// back-off).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {why}")]
pub struct WatchFailed {
    /// Which watch (`watch pods in default`).
    pub what: String,
    pub why: String,
}

/// What the controller thread takes in.
#[derive(Debug)]
pub enum Input {
    /// A watch event, and when its watcher emitted it (a re-list's `Init` before its list
    /// request: read your own writes counts by it).
    Watched(Box<Watched>, Instant),
    /// A watch failed (it retries with back-off).
    WatchError(WatchFailed),
    Pause,
    Resume,
    /// Runs up to `n` queued syncs (meant while paused).
    Step(u32),
}

/// What it reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A timeline line: the controller's own actions, status, blocked, errors.
    Line(Event),
    /// Reconciling live or paused.
    Mode(Mode),
    /// Every kind is listed and no other controller was seen: driving.
    Driving,
    /// Every kind is listed and no other controller was seen, but another ststui holds the
    /// lease: a standby (said once; [`Output::Driving`] follows if the lease comes).
    Standby,
    /// A step ran this many syncs.
    Stepped(u32),
    /// Another controller is at work: not started, or stopped (the words say which).
    OtherController(String),
    /// A watch failed (said once while it repeats).
    WatchError(WatchFailed),
}

/// How to drive.
#[derive(Debug, Clone)]
pub struct Config {
    pub namespace: String,
    /// Only this set (`None`: every set of the namespace).
    pub only: Option<String>,
    pub options: Options,
    /// Timeline time 0.
    pub epoch: Instant,
    /// Start paused (nothing is written until resumed or stepped).
    pub paused: bool,
    /// Each watch event (or watch error) also goes here, in order, before the controller
    /// takes it: `play --drive` reads the namespace through the controller's four watches
    /// rather than four of its own.
    pub tee: Option<tokio::sync::mpsc::Sender<Result<Watched, WatchFailed>>>,
    /// The Lease this driver must hold to write (`lease`): no sync runs, and no write goes
    /// out, while it does not. `None`: no election (one driver by construction: tests).
    pub gate: Option<lease::Gate>,
}

/// Wall-time delayed enqueues.
#[derive(Debug, Default)]
struct Alarms {
    items: BTreeMap<(u64, u64), ObjRef>,
    seq: u64,
}

impl Timers for Alarms {
    fn schedule(&mut self, at_ms: u64, key: ObjRef) -> u64 {
        self.seq += 1;
        self.items.insert((at_ms, self.seq), key);
        self.seq
    }
    fn cancel(&mut self, at_ms: u64, id: u64) {
        self.items.remove(&(at_ms, id));
    }
}

/// The controller thread's handle: dropping it stops reconciling (what was written stays).
pub struct Driver {
    tx: mpsc::Sender<Input>,
    /// Pause takes effect between two writes, not only between two syncs.
    pausing: Arc<AtomicBool>,
    watchers: Vec<tokio::task::JoinHandle<()>>,
    done: mpsc::Receiver<()>,
}

/// How long dropping the driver waits for a call under way.
const STOP_WAIT: Duration = Duration::from_secs(2);

impl Driver {
    /// Starts the watchers (on `calls.handle`) and the controller thread.
    pub fn start(
        calls: Calls,
        config: Config,
        out: Box<dyn FnMut(Output) + Send>,
    ) -> Result<Driver, String> {
        let (tx, rx) = mpsc::channel();
        let watchers = watch_namespace(
            &calls.handle,
            &calls.client,
            &config.namespace,
            Some(&tx),
            config.tee.as_ref(),
        );
        let (done_tx, done) = mpsc::channel();
        let pausing = Arc::new(AtomicBool::new(config.paused));
        let flag = Arc::clone(&pausing);
        std::thread::Builder::new()
            .name("ststui-drive".into())
            .spawn(move || {
                let _done = done_tx;
                Loop::new(calls, config, out, flag).run(&rx);
            })
            .map_err(|e| format!("cannot start the controller thread: {e}"))?;
        Ok(Driver { tx, pausing, watchers, done })
    }

    pub fn send(&self, input: Input) {
        match input {
            Input::Pause => self.pausing.store(true, Ordering::Relaxed),
            Input::Resume => self.pausing.store(false, Ordering::Relaxed),
            _ => {}
        }
        let _ = self.tx.send(input);
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        for w in &self.watchers {
            w.abort();
        }
        let (tx, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.tx, tx));
        let _ = self.done.recv_timeout(STOP_WAIT);
    }
}

/// Where watch events go besides the controller: in order, with back-pressure.
pub type Tee = tokio::sync::mpsc::Sender<Result<Watched, WatchFailed>>;

/// The four watchers of a namespace (with back-off), on `handle`: each event to the
/// controller's channel `driver` and to `tee`, whichever are given (`ststui play` without
/// `--drive` reads through a tee alone). A watcher ends when the ones it feeds have gone.
pub fn watch_namespace(
    handle: &tokio::runtime::Handle,
    client: &kube::Client,
    ns: &str,
    driver: Option<&mpsc::Sender<Input>>,
    tee: Option<&Tee>,
) -> Vec<tokio::task::JoinHandle<()>> {
    fn spawn<K>(
        handle: &tokio::runtime::Handle,
        api: Api<K>,
        what: String,
        (driver, tee): (Option<mpsc::Sender<Input>>, Option<Tee>),
        wrap: fn(watcher::Event<K>) -> Watched,
    ) -> tokio::task::JoinHandle<()>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
    {
        handle.spawn(async move {
            // Consistent listings: a re-list holds every write answered before it began
            // (`consistency`); from 1.31 the API server serves them from its watch cache.
            let config =
                watcher::Config::default().list_semantic(watcher::ListSemantic::MostRecent);
            let mut s =
                watcher(api, config).backoff(crate::cluster::QuickBackoff::default()).boxed();
            while let Some(ev) = s.next().await {
                let ev = ev.map(wrap).map_err(|e| WatchFailed {
                    what: what.clone(),
                    why: crate::cluster::trouble::watcher_brief(&e),
                });
                // A tee's reader that went away (the play ended) stops nothing the
                // controller needs.
                let teed = match &tee {
                    Some(tee) => tee.send(ev.clone()).await.is_ok(),
                    None => false,
                };
                let fed = driver.as_ref().is_some_and(|tx| {
                    let input = match ev {
                        Ok(w) => Input::Watched(Box::new(w), Instant::now()),
                        Err(words) => Input::WatchError(words),
                    };
                    tx.send(input).is_ok()
                });
                if !teed && !fed {
                    return;
                }
            }
        })
    }
    let to = || (driver.cloned(), tee.cloned());
    let c = client;
    vec![
        spawn(
            handle,
            Api::<StatefulSet>::namespaced(c.clone(), ns),
            format!("watch statefulsets in {ns}"),
            to(),
            Watched::Set,
        ),
        spawn(
            handle,
            Api::<Pod>::namespaced(c.clone(), ns),
            format!("watch pods in {ns}"),
            to(),
            Watched::Pod,
        ),
        spawn(
            handle,
            Api::<PersistentVolumeClaim>::namespaced(c.clone(), ns),
            format!("watch persistentvolumeclaims in {ns}"),
            to(),
            Watched::Claim,
        ),
        spawn(
            handle,
            Api::<ControllerRevision>::namespaced(c.clone(), ns),
            format!("watch controllerrevisions in {ns}"),
            to(),
            Watched::Revision,
        ),
    ]
}

/// How often a driver without the lease looks whether it holds it now.
const LEASE_POLL: Duration = Duration::from_millis(250);

/// Inputs taken in one go before the controller runs a sync (a burst of watch events is
/// folded in first, but a flood never starves the controller).
const BATCH: usize = 512;

struct Loop {
    calls: Calls,
    mirror: Mirror,
    controller: Controller,
    alarms: Alarms,
    out: Box<dyn FnMut(Output) + Send>,
    /// Listed and checked: reconciling (unless paused).
    driving: bool,
    /// Another controller was seen: never again.
    stopped: bool,
    /// Listed and checked without the lease: said once.
    standby: bool,
    since: k8s_openapi::jiff::Timestamp,
    last_watch_error: Option<WatchFailed>,
    pausing: Arc<AtomicBool>,
    gate: Option<lease::Gate>,
}

impl Loop {
    fn new(
        calls: Calls,
        config: Config,
        out: Box<dyn FnMut(Output) + Send>,
        pausing: Arc<AtomicBool>,
    ) -> Loop {
        let mut controller = Controller::new(config.options, crate::core::reconcile);
        controller.set_paused(config.paused);
        Loop {
            calls,
            mirror: Mirror::new(config.namespace, config.only, config.epoch),
            controller,
            alarms: Alarms::default(),
            out,
            driving: false,
            stopped: false,
            standby: false,
            since: guard::since(k8s_openapi::jiff::Timestamp::now()),
            last_watch_error: None,
            pausing,
            gate: config.gate,
        }
    }

    /// Whether this driver holds the lease (always, without an election).
    fn leading(&self) -> bool {
        self.gate.as_ref().is_none_or(lease::Gate::may_write)
    }

    fn run(mut self, rx: &mpsc::Receiver<Input>) {
        let mode = if self.controller.is_paused() { Mode::Paused } else { Mode::Live };
        (self.out)(Output::Mode(mode));
        loop {
            let wait = self.wait();
            match rx.recv_timeout(wait) {
                Ok(i) => self.take(i),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            for i in rx.try_iter().take(BATCH) {
                self.take(i);
            }
            self.fire_alarms();
            self.say_resolved();
            if !self.driving && !self.stopped && self.mirror.listed() {
                if self.leading() {
                    self.driving = true;
                    (self.out)(Output::Driving);
                } else if !self.standby {
                    self.standby = true;
                    (self.out)(Output::Standby);
                }
            }
            if self.driving && !self.stopped && self.leading() && self.controller.runnable() {
                self.sync_one();
            }
        }
    }

    /// How each pod creation whose answer was lost turned out, on the timeline.
    fn say_resolved(&mut self) {
        for text in self.mirror.take_resolved() {
            let t_ms = self.mirror.now_ms();
            (self.out)(Output::Line(Event { t_ms, kind: EventKind::Notice { text } }));
        }
    }

    /// How long to wait for input: not at all while a sync is runnable, else until the next
    /// alarm.
    fn wait(&self) -> Duration {
        if !self.leading() {
            // A standby (or fenced): look again soon, the lease may come.
            return LEASE_POLL;
        }
        if self.driving && !self.stopped && self.controller.runnable() {
            return Duration::ZERO;
        }
        let now = self.mirror.now_ms();
        match self.alarms.items.keys().next() {
            Some((at, _)) => Duration::from_millis(at.saturating_sub(now)),
            None => Duration::from_secs(3600),
        }
    }

    fn fire_alarms(&mut self) {
        let now = self.mirror.now_ms();
        while let Some(entry) = self.alarms.items.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.controller.fire_delayed(&key);
        }
    }

    fn take(&mut self, input: Input) {
        match input {
            Input::Watched(w, emitted) => {
                let mut w = *w;
                // A pod when it first appears (its creator is what counts), before its managed
                // fields are dropped: the mirror keeps none of a pod, claim or revision.
                if !self.stopped
                    && let Some(p) = self.mirror.new_pod(&w)
                {
                    let drives = |n: &str| self.mirror.drives(n);
                    if let Some(e) = guard::pod_creator(p, self.since, &drives) {
                        self.stop(&e);
                    }
                }
                mirror::lean(&mut w);
                for (kind, object, old, ours) in self.mirror.take(w, emitted) {
                    // A set's status at every change, never our own writes.
                    let look = matches!(object, crate::backend::Object::Set(_))
                        && kind != crate::control::ChangeKind::Deleted;
                    if !self.stopped && !ours && look {
                        let drives = |n: &str| self.mirror.drives(n);
                        if let Some(e) = guard::other_controller(&object, self.since, &drives) {
                            self.stop(&e);
                        } else if !self.driving
                            && let crate::backend::Object::Set(set) = &object
                            && drives(set.metadata.name.as_deref().unwrap_or_default())
                            && let Some(e) = guard::configured(set)
                        {
                            let name = set.metadata.name.clone().unwrap_or_default();
                            self.refuse(guard::configured_words(&e, &name));
                        }
                    }
                    let seen = Seen { kind, object: &object, old: old.as_ref() };
                    self.controller.observe(seen, &self.mirror, &mut self.alarms);
                }
            }
            Input::WatchError(e) => {
                if self.last_watch_error.as_ref() != Some(&e) {
                    self.last_watch_error = Some(e.clone());
                    (self.out)(Output::WatchError(e));
                }
            }
            Input::Pause | Input::Resume => {
                let paused = matches!(input, Input::Pause);
                if self.controller.set_paused(paused) {
                    (self.out)(Output::Mode(if paused { Mode::Paused } else { Mode::Live }));
                }
            }
            Input::Step(n) => {
                let mut ran = 0;
                while self.driving
                    && !self.stopped
                    && self.leading()
                    && ran < n
                    && self.controller.has_queued()
                {
                    self.sync_next(false);
                    ran += 1;
                }
                (self.out)(Output::Stepped(ran));
            }
        }
    }

    fn stop(&mut self, evidence: &str) {
        self.refuse(guard::words(evidence, self.driving));
    }

    /// Never reconciles again, saying `words`.
    fn refuse(&mut self, words: String) {
        self.stopped = true;
        self.pausing.store(true, Ordering::Relaxed);
        self.controller.set_paused(true);
        (self.out)(Output::OtherController(words));
        (self.out)(Output::Mode(Mode::Paused));
    }

    fn sync_one(&mut self) {
        if self.controller.runnable() {
            self.sync_next(true);
        }
    }

    /// Runs the next queued sync (`interruptible`: a pause stops its writes; a step's runs
    /// whole).
    fn sync_next(&mut self, interruptible: bool) {
        let interrupt = interruptible.then_some(&*self.pausing);
        let out = &mut self.out;
        let mut say = |line| out(Output::Line(line));
        let mut live = effects::Live {
            mirror: &mut self.mirror,
            calls: &self.calls,
            say: &mut say,
            interrupt,
            gate: self.gate.as_ref(),
        };
        self.controller.sync_next(&mut live, &mut self.alarms);
    }
}

/// Whether a timeline line is the controller's own (drive mode reports these itself; what a
/// watch diff would infer of them is left out, so no line appears twice).
pub fn controller_line(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Controller { .. } | EventKind::Status { .. } | EventKind::Blocked { .. }
    )
}

#[cfg(test)]
mod tests;
