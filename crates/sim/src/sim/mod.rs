//! The simulated cluster: an in-process object store, API semantics, kubelet model, garbage
//! collector, the controller loop around `core::reconcile`, and virtual time. Deterministic:
//! the same inputs give the same event sequence, byte for byte.
//!
//! [`Sim`] is the facade everything else uses (scenario player, headless runner, soak, the
//! real-time [`driver`]). It holds no logic of its own:
//! - `store` objects and the journal of changes; `api` verb semantics; `gc` collection;
//! - `kubelet` pod lifecycle and faults; `controller` the queue and syncs; `explain` wording;
//! - `clock` virtual time and the agenda; `engine` the order things run in;
//! - `ops` console/script operations; `driver` wall-time playback for the console;
//! - `manifest`, `validate`, `scenario`, `timeline`, `headless`, `soak`: manifests, API
//!   validation messages, the script language and player, the timeline formats, the headless
//!   runner and the randomized soak, all built on [`Sim`].
//!
//! Must not: use a wall clock outside `driver`, iterate hash maps, or talk to a real cluster.

pub mod api;
pub mod checks;
pub mod clock;
pub mod controller;
pub mod disruption;
pub mod driver;
pub mod engine;
pub mod explain;
pub mod gc;
pub mod headless;
pub mod kubelet;
pub mod manifest;
pub mod ops;
pub mod planner;
pub mod recorder;
pub mod rest;
pub mod scenario;
pub mod soak;
pub mod store;
pub mod textfile;
pub mod timeline;
pub mod validate;
pub mod world;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use api::{ApiError, Cascade};
pub use controller::{Reconciler, SetRecord};
pub use kubelet::{FaultError, KubeletConfig};
pub use ops::OpError;
pub use store::ChangeKind;

use crate::backend::{BackendEvent, Event, EventKind, Mode, ObjKind, ObjRef, Object, Op, SimOp};
use crate::core::{Options, Plan, labels};
use world::World;

/// How to build a [`Sim`].
#[derive(Debug, Clone, Default)]
pub struct SimConfig {
    /// Seed for all randomness (only soak/fault randomness uses it; see [`Sim::rng`]).
    pub seed: u64,
    /// Which upstream controller semantics the core reproduces.
    pub options: Options,
    /// Pod timing for pods created from the start.
    pub kubelet: KubeletConfig,
    /// The wall instant (Unix ms) virtual time 0 maps to; `None`: the fixed
    /// [`clock::EPOCH_UNIX_MS`] (reproducible timestamps). A served simulator starts at now.
    pub epoch_unix_ms: Option<i64>,
    /// Record core/v1 Events (`recorder`): on when served.
    pub record_events: bool,
    /// Syncs at one virtual instant that count as a livelock (`None`:
    /// [`engine::MAX_SYNCS_PER_INSTANT`]; tests lower it).
    pub livelock_syncs: Option<u64>,
}

/// A fault of the served API (scenario commands). Without a server they only show in the
/// timeline as the commands they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFault {
    /// Every request is refused (503, or the connection is refused) for `ms` virtual ms.
    Down { ms: u64 },
    /// Every response waits `ms` virtual ms (0 ends it).
    Latency { ms: u64 },
    /// Every request is refused as 401 Unauthorized for `ms` virtual ms (expired credentials).
    Unauthorized { ms: u64 },
    /// Every open watch is closed.
    DropWatches,
    /// The watch history is compacted: older resourceVersions get 410 Gone.
    Compact,
    /// The next `n` writes (POST, PUT, PATCH, DELETE; not the reviews that ask who one is and
    /// what one may do) that succeed are carried out, but their replies are lost: the
    /// connection breaks before the answer is complete.
    LoseReplies { n: u32 },
    /// Every watch, open or opened meanwhile, sends nothing (no change, no bookmark) for `ms`
    /// virtual ms, then what it held: the connection stays up, as behind a stalled proxy.
    /// With `resource` (one of [`WATCHABLE`]), only the watches of that resource: one cache
    /// behind the others.
    StallWatches { ms: u64, resource: Option<&'static str> },
    /// The next `n` API requests (reads, writes and watches) answer 500 Internal Server Error.
    Errors { n: u32 },
}

/// The resources the served API watches, by plural (`api-stall-watches DUR RESOURCE`).
pub const WATCHABLE: [&str; 7] = [
    "statefulsets",
    "pods",
    "persistentvolumeclaims",
    "controllerrevisions",
    "events",
    "leases",
    "namespaces",
];

/// What the simulation reports, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum SimEvent {
    /// A watch change: `object` is the new state, or the last state for `Deleted`.
    Watch { kind: ChangeKind, object: Object },
    /// A timeline entry; its serde form is the JSONL line of `spec/scenario.md`.
    Timeline(Event),
    /// The controller was paused or resumed.
    Mode(Mode),
    /// A script asked for a fault of the served API.
    Api(ApiFault),
    /// The images the kubelet now fails (after a `break-image` or `fix-image`).
    BrokenImages(Vec<String>),
}

impl SimEvent {
    /// The console's view: Added/Modified → `Applied`, Deleted → `Deleted`.
    pub fn into_backend(self) -> BackendEvent {
        match self {
            SimEvent::Watch { kind: ChangeKind::Deleted, object } => BackendEvent::Deleted(object),
            SimEvent::Watch { object, .. } => BackendEvent::Applied(object),
            SimEvent::Timeline(ev) => BackendEvent::Timeline(ev),
            SimEvent::Mode(m) => BackendEvent::Mode(m),
            SimEvent::Api(f) => BackendEvent::Notice(format!("served API fault: {f:?}")),
            SimEvent::BrokenImages(images) => BackendEvent::BrokenImages(images),
        }
    }

    /// The timeline entry, if this is one.
    pub fn timeline(&self) -> Option<&Event> {
        match self {
            SimEvent::Timeline(ev) => Some(ev),
            _ => None,
        }
    }
}

/// The simulated cluster. Nothing happens between calls: time moves only through
/// [`Sim::advance`], [`Sim::advance_to`] and [`Sim::settle`]; syncs run only then (or by
/// [`Sim::step`] while paused). Operations take effect immediately on the store; what the
/// controller and kubelet make of them shows up once time is advanced (`advance(0)` runs
/// everything due now).
#[derive(Debug)]
pub struct Sim {
    world: World,
    rng: ChaCha8Rng,
    seed: u64,
}

impl Sim {
    /// A new, empty cluster at virtual time 0 running `core::reconcile`.
    pub fn new(config: SimConfig) -> Self {
        let controller = controller::Controller::new(config.options, crate::core::reconcile);
        let mut world = World::new(kubelet::Kubelet::new(config.kubelet), controller);
        if let Some(epoch) = config.epoch_unix_ms {
            world.store.clock.set_epoch(epoch);
        }
        world.recorder.enabled = config.record_events;
        if let Some(n) = config.livelock_syncs {
            world.livelock_syncs = n;
        }
        Sim { world, rng: ChaCha8Rng::seed_from_u64(config.seed), seed: config.seed }
    }

    /// Replaces the function syncs call (tests drive the loop with a stand-in core).
    pub fn with_reconciler(mut self, reconcile: Reconciler) -> Self {
        self.world.controller.set_reconciler(reconcile);
        self
    }

    // ---- objects ----

    /// Creates a StatefulSet (defaulted and validated as the API server would).
    pub fn create_set(&mut self, set: StatefulSet) -> Result<StatefulSet, ApiError> {
        api::create_set(&mut self.world.store, set, &self.world.controller.options().semantics)
    }

    /// Creates the set, or updates it when it exists (`kubectl apply`, `-f`, script `apply`).
    pub fn apply_set(&mut self, set: StatefulSet) -> Result<StatefulSet, ApiError> {
        api::apply_set(&mut self.world.store, set, &self.world.controller.options().semantics)
    }

    /// Deletes a StatefulSet with the given cascade.
    pub fn delete_set(&mut self, set: &ObjRef, cascade: Cascade) -> Result<(), ApiError> {
        api::delete_set(&mut self.world.store, set, cascade)
    }

    /// Applies a console/script operation (see [`ops`]). `SimOp::SetSpeed` is refused here: only
    /// the real-time driver has a speed.
    pub fn apply_op(&mut self, op: Op) -> Result<(), OpError> {
        match op {
            // Stepping is the scheduler's, not a write's.
            Op::Sim(SimOp::Step { n }) => self.step(n).map(drop),
            op => ops::apply(&mut self.world, op),
        }
    }

    /// Asks the served API for a fault (script `api-down` & co.); reported in order with
    /// everything else.
    /// Starts a rollout plan (a scenario's `rollout` line): it begins once the controller has
    /// observed the set's spec and moves as time passes (`planner`).
    pub fn start_rollout(&mut self, rollout: planner::Rollout) -> Result<(), OpError> {
        planner::start(&mut self.world, rollout)
    }

    /// Starts a group's plan (a scenario's `rollout group=…` line).
    pub fn start_group(&mut self, rollout: planner::GroupRollout) -> Result<(), OpError> {
        planner::start_group(&mut self.world, rollout)
    }

    /// How a rehearsed gate answers for `target` (a scenario's `gate` line).
    pub fn gate_fault(&mut self, target: &ObjRef, g: &scenario::GateArgs) {
        planner::set_gate_fault(&mut self.world, target, g);
    }

    /// Passes the gate a plan of `set` waits at (a scenario's `approve` line).
    pub fn approve_plan(&mut self, set: &ObjRef) -> Result<(), OpError> {
        planner::approve(&mut self.world, set)
    }

    /// The forced rollback of `set` (a scenario's `abort` line): decided by `steer::abort` on
    /// what the store holds, its writes applied in order; a plan the simulator runs on it ends.
    pub fn abort(&mut self, set: &ObjRef) -> Result<(), String> {
        let now = self.world.store.clock().timestamp();
        let decided = {
            let s = self.set(set).ok_or_else(|| format!("{set} does not exist"))?;
            let pods: Vec<(i32, &Pod)> = self
                .pods_of(set)
                .into_iter()
                .map(|p| (labels::ordinal_of(p.metadata.name.as_deref().unwrap_or("")), p))
                .collect();
            let revisions = self.revisions_of(set);
            crate::steer::abort::abort(set, s, &revisions, &pods, now, "a script")
                .map_err(|r| r.message)?
        };
        for w in decided.writes() {
            self.apply_op(Op::Cluster(w)).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub fn api_fault(&mut self, fault: ApiFault) {
        engine::dispatch(&mut self.world);
        self.world.out.push(SimEvent::Api(fault));
    }

    /// The object store, to read (the served API lists and gets from it).
    pub fn store(&self) -> &store::Store {
        &self.world.store
    }

    /// How long after an owner leaves the garbage collector collects its dependents (script
    /// `gc delay=DUR`; 0, the default, collects at once).
    pub fn set_gc_delay(&mut self, delay_ms: u64) {
        self.world.gc.delay_ms = delay_ms;
    }

    /// Pod timing for pods created from now on (script `kubelet`).
    pub fn set_kubelet(&mut self, config: KubeletConfig) {
        self.world.kubelet.configure(config);
    }

    pub fn kubelet_config(&self) -> &KubeletConfig {
        self.world.kubelet.config()
    }

    // ---- the controller ----

    /// Stops reconciling; events still queue.
    pub fn pause(&mut self) {
        self.world.set_paused(true);
    }

    pub fn resume(&mut self) {
        self.world.set_paused(false);
    }

    pub fn is_paused(&self) -> bool {
        self.world.controller.is_paused()
    }

    /// While paused, runs up to `n` queued syncs; returns how many ran.
    pub fn step(&mut self, n: u32) -> Result<u32, OpError> {
        if !self.is_paused() {
            return Err(OpError::NotPaused);
        }
        Ok(engine::step(&mut self.world, n))
    }

    /// Set keys waiting for a sync, in queue order.
    pub fn queued(&self) -> Vec<ObjRef> {
        self.world.controller.queued().cloned().collect()
    }

    /// Syncs run so far.
    pub fn sync_count(&self) -> u64 {
        self.world.controller.sync_count()
    }

    // ---- time ----

    /// Virtual milliseconds since start.
    pub fn now_ms(&self) -> u64 {
        self.world.store.clock().now_ms()
    }

    /// The virtual now as a timestamp (start = 2026-01-01T00:00:00Z).
    pub fn now(&self) -> Timestamp {
        self.world.store.clock().timestamp()
    }

    /// Runs everything due within the next `ms` virtual milliseconds.
    pub fn advance(&mut self, ms: u64) {
        let target = self.now_ms().saturating_add(ms);
        engine::advance_to(&mut self.world, target);
    }

    /// Runs everything due up to absolute virtual time `ms` (no-op for the past).
    pub fn advance_to(&mut self, ms: u64) {
        let target = ms.max(self.now_ms());
        engine::advance_to(&mut self.world, target);
    }

    /// [`Sim::advance_to`] in bounded slices: `go_on` is asked before every step; `false` when it
    /// stopped the run before `ms` (the clock then stands at the last thing that happened).
    pub fn advance_until(&mut self, ms: u64, go_on: &mut dyn FnMut() -> bool) -> bool {
        let target = ms.max(self.now_ms());
        engine::advance_until(&mut self.world, target, go_on)
    }

    /// Advances until nothing is pending (no kubelet transition, no queued or delayed sync; a
    /// paused controller's queue and delayed syncs do not count) or `max_ms` passed. `true` when
    /// it settled; the clock then stands at the last thing that happened.
    pub fn settle(&mut self, max_ms: u64) -> bool {
        engine::settle(&mut self.world, max_ms)
    }

    /// [`Sim::advance_to`], handing what happens to `sink` every [`STREAM_STEPS`] steps instead
    /// of keeping it: memory stays flat over any span of virtual time (`wait 99999h`).
    pub fn advance_to_streaming(&mut self, ms: u64, sink: &mut dyn FnMut(&SimEvent)) {
        stream_to(&mut self.world, ms, sink);
    }

    /// [`Sim::settle`], handing what happens to `sink` as [`Sim::advance_to_streaming`] does.
    pub fn settle_streaming(&mut self, max_ms: u64, sink: &mut dyn FnMut(&SimEvent)) -> bool {
        engine::settle_by(&mut self.world, max_ms, &mut |w, t| stream_to(w, t, sink))
    }

    /// The absolute virtual time of the next thing due (`now` when a sync is runnable), or
    /// `None` when nothing is scheduled. What the real-time driver sleeps until.
    pub fn next_due(&self) -> Option<u64> {
        if self.world.controller.runnable() || self.world.planner.wants_run() {
            return Some(self.now_ms());
        }
        self.world.agenda.next_due()
    }

    /// Whether `settle` would still have something to do.
    pub fn is_pending(&self) -> bool {
        engine::next_pending(&self.world).is_some()
    }

    // ---- reading ----

    /// All StatefulSets, by namespace then name.
    pub fn sets(&self) -> impl Iterator<Item = &StatefulSet> {
        self.world.store.sets().iter()
    }

    pub fn set(&self, key: &ObjRef) -> Option<&StatefulSet> {
        self.world.store.sets().get(key)
    }

    pub fn pod(&self, key: &ObjRef) -> Option<&Pod> {
        self.world.store.pods().get(key)
    }

    /// All pods, by namespace then name.
    pub fn all_pods(&self) -> impl Iterator<Item = &Pod> {
        self.world.store.pods().iter()
    }

    /// The set's pods in ordinal order, terminating ones included: pods named `<set>-<n>` that
    /// the set controls or that nobody controls.
    pub fn pods_of(&self, key: &ObjRef) -> Vec<&Pod> {
        let uid = self.set(key).and_then(|s| s.metadata.uid.as_deref());
        labels::members(&key.name, uid, self.world.store.pods().in_namespace(&key.namespace))
    }

    /// The set's ControllerRevisions (controlled by it), by revision number.
    pub fn revisions_of(&self, key: &ObjRef) -> Vec<&ControllerRevision> {
        self.set(key).map_or_else(Vec::new, |set| ops::controlled_revisions(&self.world.store, set))
    }

    /// The set's claims (`<template>-<set>-<n>` for each claim template), by template then
    /// ordinal.
    pub fn claims_of(&self, key: &ObjRef) -> Vec<&PersistentVolumeClaim> {
        let templates: Vec<String> = self
            .set(key)
            .and_then(|s| s.spec.volume_claim_templates.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|t| t.metadata.name.clone())
            .collect();
        let claims = self.world.store.claims().in_namespace(&key.namespace);
        labels::member_claims(&key.name, &templates, claims)
    }

    /// All claims, by namespace then name.
    pub fn all_claims(&self) -> impl Iterator<Item = &PersistentVolumeClaim> {
        self.world.store.claims().iter()
    }

    /// The Plan of the set's last sync.
    pub fn last_plan(&self, key: &ObjRef) -> Option<&Plan> {
        self.world.controller.record(key).map(|r| &r.plan)
    }

    /// What the set's last sync left: Plan, blocked sentence, error, time.
    pub fn last_sync(&self, key: &ObjRef) -> Option<&SetRecord> {
        self.world.controller.record(key)
    }

    /// The seed this simulation was built with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The seeded generator for soak and fault randomness (the simulation itself uses none).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    // ---- output ----

    /// Adds a timeline event at the current virtual time (the script player's `command`,
    /// `expect` and `error` lines), in order with everything else.
    pub fn emit(&mut self, kind: EventKind) {
        engine::dispatch(&mut self.world);
        let t_ms = self.now_ms();
        self.world.out.push(SimEvent::Timeline(Event { t_ms, kind }));
    }

    /// Everything reported since the last call, in order. Operations applied since the last
    /// advance have their watch changes included.
    pub fn drain_events(&mut self) -> Vec<SimEvent> {
        engine::dispatch(&mut self.world);
        std::mem::take(&mut self.world.out)
    }

    /// Every object, one complete listing per kind (all namespaces), for a console that starts
    /// watching now.
    pub fn snapshot(&self) -> Vec<BackendEvent> {
        // The listings share the store's objects (`rest_list`), as the watch events do.
        [ObjKind::Set, ObjKind::Revision, ObjKind::Claim, ObjKind::Pod, ObjKind::Budget]
            .into_iter()
            .map(|kind| BackendEvent::Listed {
                kind,
                scope: crate::backend::Scope::default(),
                objects: self.rest_list(kind, None).0,
            })
            .collect()
    }

    /// Livelocks the guard stopped so far (upstream's own, or the simulator's fault).
    pub fn livelocks(&self) -> &[engine::Livelock] {
        &self.world.livelocks
    }

    /// The controller semantics this simulation reproduces.
    pub fn options(&self) -> Options {
        *self.world.controller.options()
    }
}

/// Steps of the simulation between two hand-overs of events to a streaming caller.
pub const STREAM_STEPS: u32 = 512;

/// Advances `w` to `ms` (not backwards), draining its events into `sink` every
/// [`STREAM_STEPS`] steps and at the end.
fn stream_to(w: &mut World, ms: u64, sink: &mut dyn FnMut(&SimEvent)) {
    let target = ms.max(w.store.clock().now_ms());
    loop {
        let mut budget = STREAM_STEPS;
        let reached = engine::advance_until(w, target, &mut || {
            budget = budget.saturating_sub(1);
            budget > 0
        });
        for ev in std::mem::take(&mut w.out) {
            sink(&ev);
        }
        if reached {
            return;
        }
    }
}
