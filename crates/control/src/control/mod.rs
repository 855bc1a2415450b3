//! The controller loop around the core, as upstream's `StatefulSetController` runs it (spec
//! 1.1–1.5): object events enqueue the owning set; one sync at a time from a de-duplicated FIFO
//! queue; a sync reads an [`Observed`] snapshot through [`Read`], calls the reconciler at the
//! backend's now and carries the Plan's effects out in order through [`Write`], stopping at the
//! first failure; failed syncs are re-added with exponential back-off, `minReadySeconds`
//! requeues through [`Timers`]. Pause and single-step are operations of this loop.
//!
//! Two backends implement the traits: the simulator over its store and agenda (virtual time,
//! deterministic), and drive mode over a watch mirror of a real API server and API calls (wall
//! time). Nothing here knows which.
//!
//! Timeline: `controller` per effect carried out, `status` when the stored status changed,
//! `blocked` when the reason the sync waits changed, `error` when a sync failed (once per
//! distinct message).
//!
//! Why by hand: kube-runtime's `Controller` owns its own watches, runs reconciles concurrently
//! on tokio and has no pause, single-step or virtual time; the simulator needs a loop that is
//! deterministic to the byte and that runs inside its scheduler, and drive mode needs the same
//! loop so that both backends share one behaviour. The loop is small; the core decides.
//!
//! Owns: the work queue, delayed enqueues, retry back-off, pause, and the last Plan per set.
//! Must not: decide anything the core decides, touch objects except through [`Write`], or use
//! tokio, a kube client, the simulator or the console.

mod handlers;
mod sync;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use crate::backend::{EventKind, FailureKind, ObjRef, Object};
use crate::core::{Effect, Now, Observed, Options, Plan};

pub use handlers::selector_matches;
pub use sync::HOLD_SAID_MS;

/// The function a sync calls: `core::reconcile`, or a stand-in in tests.
pub type Reconciler = fn(&Observed<'_>, &Options, Now) -> Plan;

/// Upstream's default per-item back-off: 5 ms doubling, capped at 1000 s.
const BACKOFF_BASE_MS: u64 = 5;
const BACKOFF_MAX_MS: u64 = 1_000_000;

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One object change as the event handlers see it: `object` is the new state (the last state
/// for `Deleted`), `old` the previous state for `Modified`.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub kind: ChangeKind,
    pub object: &'a Object,
    pub old: Option<&'a Object>,
}

/// The read side: what the controller observes (upstream's listers) and the backend's clock.
pub trait Read {
    fn set(&self, key: &ObjRef) -> Option<&StatefulSet>;
    fn sets_in(&self, ns: &str) -> Vec<&StatefulSet>;
    fn pods_in(&self, ns: &str) -> Vec<&Pod>;
    fn claims_in(&self, ns: &str) -> Vec<&PersistentVolumeClaim>;
    fn revisions_in(&self, ns: &str) -> Vec<&ControllerRevision>;
    /// Milliseconds on the backend's clock (virtual in the simulator).
    fn now_ms(&self) -> u64;
    /// The same instant as a timestamp (what the core compares conditions with).
    fn now(&self) -> Now;
    /// A write of this controller's for the set that what is read has not shown yet (read
    /// your own writes, KEP-5647). A backend that reads its store itself is always caught up.
    fn unseen(&self, _set: &ObjRef) -> Option<Unseen> {
        None
    }
}

/// A write of the controller's own that its cache has not shown yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// The resource's plural (`pods`).
    pub resource: &'static str,
    /// The object written (the latest write of the resource for the set).
    pub name: String,
    /// Its resourceVersion as the server answered.
    pub wrote: u64,
    /// How far that resource's watch has read (`None`: nothing with a version yet).
    pub read: Option<u64>,
}

/// A write the backend refused or could not make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError {
    pub kind: FailureKind,
    /// The server's (or the simulated API's) words.
    pub message: String,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The effect side: carries out one effect of a Plan (upstream's `StatefulPodControl`, its
/// status updater and history client), and takes the loop's timeline lines.
pub trait Write {
    /// Carries out `effect` for the set `set`; what the backend reads next reflects it.
    fn apply(&mut self, set: &ObjRef, effect: Effect) -> Result<(), WriteError>;
    /// A timeline line; `ns` when it is about objects of a namespace (Events are recorded for
    /// those where the backend records Events).
    fn note(&mut self, ns: Option<&str>, kind: EventKind);
}

/// Delayed enqueues: the backend calls [`Controller::fire_delayed`] when one comes due.
pub trait Timers {
    /// Schedules `key` at `at_ms`; returns an id for [`Timers::cancel`].
    fn schedule(&mut self, at_ms: u64, key: ObjRef) -> u64;
    fn cancel(&mut self, at_ms: u64, id: u64);
}

/// What the last sync of a set left behind.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SetRecord {
    /// The Plan the reconciler returned, without its effects (they were carried out).
    pub plan: Plan,
    /// The `blocked` sentence and pod last reported (None when the sync did not wait).
    pub blocked: Option<(String, Option<String>)>,
    /// The last sync error reported, if the last sync failed.
    pub error: Option<String>,
    /// Backend time of that sync.
    pub at_ms: u64,
    /// Since when (backend time) the set's syncs are held for the controller's own writes to
    /// be read back, and whether that was said.
    pub held: Option<(u64, bool)>,
}

/// The controller: queue, delayed enqueues, pause state and per-set records.
#[derive(Debug)]
pub struct Controller {
    options: Options,
    reconcile: Reconciler,
    queue: VecDeque<ObjRef>,
    queued: BTreeSet<ObjRef>,
    /// Pending delayed enqueues: when, and the backend's timer id.
    delayed: BTreeMap<ObjRef, (u64, u64)>,
    failures: BTreeMap<ObjRef, u32>,
    paused: bool,
    records: BTreeMap<ObjRef, SetRecord>,
    syncs: u64,
}

impl Controller {
    pub fn new(options: Options, reconcile: Reconciler) -> Self {
        Controller {
            options,
            reconcile,
            queue: VecDeque::new(),
            queued: BTreeSet::new(),
            delayed: BTreeMap::new(),
            failures: BTreeMap::new(),
            paused: false,
            records: BTreeMap::new(),
            syncs: 0,
        }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn set_reconciler(&mut self, reconcile: Reconciler) {
        self.reconcile = reconcile;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Pauses or resumes; `true` when that changed anything.
    pub fn set_paused(&mut self, paused: bool) -> bool {
        std::mem::replace(&mut self.paused, paused) != paused
    }

    /// Keys waiting for a sync, in order.
    pub fn queued(&self) -> impl Iterator<Item = &ObjRef> {
        self.queue.iter()
    }

    /// Whether a sync would run now (something queued and not paused).
    pub fn runnable(&self) -> bool {
        !self.paused && !self.queue.is_empty()
    }

    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Syncs run so far.
    pub fn sync_count(&self) -> u64 {
        self.syncs
    }

    pub fn record(&self, key: &ObjRef) -> Option<&SetRecord> {
        self.records.get(key)
    }

    /// The earliest delayed enqueue, if any (drive mode sleeps until then).
    pub fn next_delayed_ms(&self) -> Option<u64> {
        self.delayed.values().map(|(at, _)| *at).min()
    }

    /// Adds a key unless it is already waiting (workqueue dedup).
    pub fn enqueue(&mut self, key: ObjRef) {
        if self.queued.insert(key.clone()) {
            self.queue.push_back(key);
        }
    }

    /// `AddAfter`: an earlier pending time wins, as in the delaying queue.
    pub fn enqueue_after(&mut self, key: ObjRef, delay_ms: u64, now_ms: u64, t: &mut dyn Timers) {
        let at = now_ms.saturating_add(delay_ms);
        if let Some(&(pending, id)) = self.delayed.get(&key) {
            if pending <= at {
                return;
            }
            t.cancel(pending, id);
        }
        let id = t.schedule(at, key.clone());
        self.delayed.insert(key, (at, id));
    }

    /// A delayed enqueue came due.
    pub fn fire_delayed(&mut self, key: &ObjRef) {
        self.delayed.remove(key);
        self.enqueue(key.clone());
    }

    /// Forgets everything about a set no longer watched (drive mode's scope changed).
    pub fn forget(&mut self, key: &ObjRef) {
        self.records.remove(key);
        self.failures.remove(key);
    }

    /// Runs the next queued sync (even while paused: `step` uses this). The key synced, or
    /// `None` when the queue is empty.
    pub fn sync_next<B: Read + Write>(&mut self, b: &mut B, t: &mut dyn Timers) -> Option<ObjRef> {
        let key = self.queue.pop_front()?;
        self.queued.remove(&key);
        self.sync(&key, b, t);
        Some(key)
    }
}
