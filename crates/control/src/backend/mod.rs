//! The contract between a backend (the embedded simulator, or a real cluster through kube-rs)
//! and the console: what a backend reports ([`BackendEvent`]), what the console asks of it
//! ([`Op`]: cluster writes and simulator-only operations), and what it can do
//! ([`Capabilities`], which may change while it runs).
//!
//! Plain data plus one small trait. This module owns no behaviour: the simulator implements
//! [`Backend`] in `sim`, the real-cluster adapter in `cluster`; `app` only sees these types.
//! The timeline [`Event`] is also the simulator's public JSONL format (`spec/scenario.md`), so
//! its serialization is part of the public interface.

mod cluster_op;
pub mod lifecycle;
mod op;
mod timeline;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Serialize;

pub use op::{
    ClusterOp, FAILURE_WORDS, Failure, FailureKind, Fault, ImageFailure, LogChunk, LogRequest, Op,
    SimOp, ViewOp, Write, WriteId, WriteKind, describe_rbac,
};
pub use timeline::{Event, EventKind};

/// The namespace of an object that names none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A namespaced object name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjRef {
    pub namespace: String,
    pub name: String,
}

impl ObjRef {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjRef { namespace: namespace.into(), name: name.into() }
    }

    /// The reference of any object from its metadata (no namespace: [`DEFAULT_NAMESPACE`]).
    pub fn of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Self {
        ObjRef::new(
            meta.namespace.clone().unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
            meta.name.clone().unwrap_or_default(),
        )
    }
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Any object a backend watches.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    Set(Arc<StatefulSet>),
    Pod(Arc<Pod>),
    Claim(Arc<PersistentVolumeClaim>),
    Revision(Arc<ControllerRevision>),
    /// A core/v1 Event: those about the open set and the selected pod (`ViewOp::PodEvents`)
    /// reach the console, which shows them in the pod detail and the controller pane; a
    /// cluster's Warnings also become timeline lines.
    Event(Arc<k8s_openapi::api::core::v1::Event>),
    /// A `policy/v1` PodDisruptionBudget: what an eviction is judged against, and what a
    /// rollout step waits on while it allows nothing.
    Budget(Arc<k8s_openapi::api::policy::v1::PodDisruptionBudget>),
    /// A `lifecycle.k8s.io/v1alpha1` Eviction (servers with the EvictionRequest API): a pod's
    /// eviction requests and responders, shown in its detail.
    Eviction(Arc<lifecycle::Eviction>),
}

impl Object {
    pub fn kind(&self) -> ObjKind {
        match self {
            Object::Set(_) => ObjKind::Set,
            Object::Pod(_) => ObjKind::Pod,
            Object::Claim(_) => ObjKind::Claim,
            Object::Revision(_) => ObjKind::Revision,
            Object::Event(_) => ObjKind::Event,
            Object::Budget(_) => ObjKind::Budget,
            Object::Eviction(_) => ObjKind::Eviction,
        }
    }

    pub fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        match self {
            Object::Set(o) => &o.metadata,
            Object::Pod(o) => &o.metadata,
            Object::Claim(o) => &o.metadata,
            Object::Revision(o) => &o.metadata,
            Object::Event(o) => &o.metadata,
            Object::Budget(o) => &o.metadata,
            Object::Eviction(o) => &o.metadata,
        }
    }
}

/// The kinds of [`Object`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjKind {
    Set,
    Pod,
    Claim,
    Revision,
    Event,
    Budget,
    Eviction,
}

impl ObjKind {
    /// The resource's plural, as the API and kubectl name it.
    pub fn plural(self) -> &'static str {
        match self {
            ObjKind::Set => "statefulsets",
            ObjKind::Pod => "pods",
            ObjKind::Claim => "persistentvolumeclaims",
            ObjKind::Revision => "controllerrevisions",
            ObjKind::Event => "events",
            ObjKind::Budget => "poddisruptionbudgets",
            ObjKind::Eviction => "evictions",
        }
    }
}

/// What one watch covers: a namespace (or all), optionally one name or a label selector. A
/// [`BackendEvent::Listed`] replaces exactly the objects of its kind inside its scope.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scope {
    /// `None`: every namespace.
    pub namespace: Option<String>,
    /// `None`: every object of the kind.
    pub selector: Option<LabelSelector>,
    /// `Some`: only the object of that name.
    pub name: Option<String>,
    /// Events only: the Events about this object, `Kind/name` (e.g. `Pod/web-4`).
    pub about: Option<String>,
}

impl Scope {
    pub fn namespace(ns: impl Into<String>) -> Scope {
        Scope { namespace: Some(ns.into()), ..Scope::default() }
    }

    /// Whether `meta` falls inside this scope (an unparsable selector covers nothing).
    pub fn covers(
        &self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> bool {
        let ns = meta.namespace.as_deref().unwrap_or("default");
        if self.namespace.as_deref().is_some_and(|want| want != ns) {
            return false;
        }
        if self.name.as_deref().is_some_and(|want| Some(want) != meta.name.as_deref()) {
            return false;
        }
        match &self.selector {
            None => true,
            Some(sel) => crate::core::selector::Selector::from_label_selector(Some(sel))
                .is_ok_and(|s| s.matches(meta.labels.as_ref())),
        }
    }
}

/// Whether the controller is reconciling (simulator). A real cluster's controller always is;
/// a frozen rollout there is a property of the set (see `steer::frozen`), not a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The controller reconciles as events arrive.
    Live,
    /// Simulator only: reconciliation stopped; [`SimOp::Step`] runs single syncs.
    Paused,
}

/// What a backend can do; the console dims what is not offered and says why. Reported at start
/// and again whenever it changes ([`BackendEvent::Capabilities`]: RBAC answers, `--read-only`,
/// another controller seen while driving). The default is a real cluster's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// The controller is ststui's own (the simulator's, or drive mode's): reconciliation can be
    /// paused and single-stepped.
    pub pause_reconcile: bool,
    /// That controller reconciles a real API server (`--drive`): the header says "driving".
    pub drives: bool,
    /// `--drive` as a standby: another ststui holds the drive lease; this one writes nothing
    /// and the header says who drives, in these words (`lease::standby_words`).
    pub standby: Option<String>,
    /// There is a list of StatefulSets to pick from (a cluster's namespace).
    pub set_list: bool,
    /// The credentials can be read again and the connection made anew (`R`).
    pub reconnect: bool,
    /// Faults can be injected (simulator only).
    pub inject_faults: bool,
    /// Virtual time whose speed can be changed (simulator only).
    pub speed: bool,
    /// Writes this backend will not make, each with the reason (a missing permission,
    /// `--read-only`). Empty: every write is allowed.
    pub denied: BTreeMap<WriteKind, String>,
    /// A write is answered later, by a server (a cluster): the console calls it sent until the
    /// backend reports it done ([`BackendEvent::OpDone`]) or failed. The simulator applies a
    /// write at once.
    pub writes_answered_later: bool,
}

impl Default for Capabilities {
    fn default() -> Capabilities {
        Capabilities {
            pause_reconcile: false,
            drives: false,
            standby: None,
            set_list: true,
            reconnect: true,
            inject_faults: false,
            speed: false,
            denied: BTreeMap::new(),
            writes_answered_later: false,
        }
    }
}

impl Capabilities {
    /// The simulator: its own controller, faults, speed; one world, no credentials.
    pub fn simulator() -> Capabilities {
        Capabilities {
            pause_reconcile: true,
            inject_faults: true,
            speed: true,
            set_list: false,
            reconnect: false,
            ..Default::default()
        }
    }

    /// A real cluster: writes only (as far as permissions go), answered by the server.
    pub fn cluster() -> Capabilities {
        Capabilities { writes_answered_later: true, ..Capabilities::default() }
    }

    /// A real API server ststui's controller drives (`--drive`): a cluster's, plus pause and
    /// step.
    pub fn drive() -> Capabilities {
        Capabilities { pause_reconcile: true, drives: true, ..Capabilities::cluster() }
    }

    /// Why `kind` is not allowed, if it is not.
    pub fn denied(&self, kind: WriteKind) -> Option<&str> {
        self.denied.get(&kind).map(String::as_str)
    }
}

/// The connection to a real cluster's API server: up when its requests succeed (a listing, a
/// watch opened, a frame of a watch), not when an object changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// The requests succeed.
    Up,
    /// No answer (refused, reset, timed out): the last data is kept and marked stale. `since`
    /// is wall time; `error` says what failed.
    Unreachable { since: k8s_openapi::jiff::Timestamp, error: String },
    /// The server answers, with errors (5xx, 429, an answer that cannot be read): the last data
    /// is kept and marked stale.
    Failing { since: k8s_openapi::jiff::Timestamp, error: String },
    /// The credentials were refused (401): the user must fix them; `error` says how.
    Unauthorized { error: String },
}

impl Connection {
    /// Whether the data may be behind the server (unreachable, failing, refused).
    pub fn stale(&self) -> bool {
        *self != Connection::Up
    }
}

/// A quorum read of a set for a plan's verdict ([`ViewOp::Read`]): the set, the pods its
/// selector matches, and — for a RollingUpdate set, whose step a budget holds — the
/// PodDisruptionBudgets of its namespace (`None` where they were not read: OnDelete, whose
/// evictions the API server judges itself, or budgets this user may not list; the watch's
/// then stand in).
#[derive(Debug, Clone, PartialEq)]
pub struct Fresh {
    pub set: Arc<StatefulSet>,
    pub pods: Vec<Arc<Pod>>,
    pub budgets: Option<Vec<Arc<k8s_openapi::api::policy::v1::PodDisruptionBudget>>>,
}

impl Fresh {
    /// The set's own pods among those read (its members: owned by it, or orphans of its name)
    /// with their ordinals, in ordinal order.
    pub fn own(&self, name: &str) -> Vec<(i32, &Pod)> {
        let uid = self.set.metadata.uid.as_deref();
        let mut own: Vec<(i32, &Pod)> =
            crate::core::labels::members(name, uid, self.pods.iter().map(|p| &**p))
                .into_iter()
                .map(|p| {
                    let pod_name = p.metadata.name.as_deref().unwrap_or_default();
                    (crate::core::labels::ordinal_of(pod_name), p)
                })
                .collect();
        own.sort_by_key(|(o, _)| *o);
        own
    }
}

/// Everything a backend reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendEvent {
    /// An object was added or modified (watch ADDED / MODIFIED).
    Applied(Object),
    /// An object was deleted (watch DELETED); carries its last state.
    Deleted(Object),
    /// A complete listing of one kind in one scope (kube-rs `Init` … `InitDone`, buffered and
    /// swapped): it replaces what the mirror holds there, so objects deleted during a watch gap
    /// disappear. After [`BackendEvent::Synced`], a `Listed` is a re-list (a 410 or a
    /// reconnect).
    Listed { kind: ObjKind, scope: Scope, objects: Vec<Object> },
    /// Every initial listing is complete: the mirror may now be trusted.
    Synced,
    /// Something happened worth a timeline line.
    Timeline(Event),
    /// The backend's clock: virtual time in the simulator, wall time on a real cluster.
    Clock { now: k8s_openapi::jiff::Timestamp, speed: f64 },
    /// Reconciliation mode changed (simulator).
    Mode(Mode),
    /// The simulator's pace: `achieved` virtual seconds per wall second while it cannot keep up
    /// with the `asked` speed (`None`: it keeps up again).
    Pace { asked: f64, achieved: Option<f64> },
    /// The simulator's kubelet fails these images now (its pods never become Ready): shown on
    /// the revisions and the pod detail.
    BrokenImages(Vec<String>),
    /// What the backend can do changed.
    Capabilities(Capabilities),
    /// The API server's version (`gitVersion`, e.g. `v1.34.2+k3s1`): the advisor reproduces that
    /// release's controller.
    Server { version: String },
    /// A piece of the log followed (`ViewOp::Logs`).
    Log { request: LogRequest, chunk: LogChunk },
    /// The connection to the cluster changed.
    Connection(Connection),
    /// Whether a kind may be listed (`denied`: why not, naming the permission). A kind the user
    /// may not read is unknown, never empty.
    Access { kind: ObjKind, denied: Option<String> },
    /// A first listing of a kind is under way: `so_far` objects received, of which `objects`
    /// arrived since the last report (a first listing of pods is sent as it arrives, so the grid
    /// draws what is known; the complete listing follows as [`BackendEvent::Listed`] and
    /// replaces them). `objects` may be empty: progress only.
    Listing { kind: ObjKind, so_far: usize, objects: Vec<Object> },
    /// An [`Op`] failed: what kind of failure, and what was wrong and what is expected.
    OpFailed(Failure),
    /// The answer to [`ViewOp::Read`]: the set, its pods and the namespace's budgets as the
    /// server holds them now, or why they could not be read.
    Read { set: ObjRef, read: Result<Fresh, Failure> },
    /// A cluster write was carried out (`id`: the write's, what the console matches the answer
    /// with); `said` when the server's answer needs words of its own (nothing to change;
    /// written, read back after a lost reply).
    OpDone { id: WriteId, said: Option<String> },
    /// A backend-level problem (watch error) the user should see.
    Error(String),
    /// Something the user should know that is not a problem (a script played to its end).
    Notice(String),
}

/// Where a backend reports, from any of its threads: one type for the simulator, a cluster and
/// drive mode (the console's inbox, a headless printer, a test's recorder).
pub type Sink = Arc<dyn Fn(BackendEvent) + Send + Sync>;

/// Why a fleet's view (the console on several clusters) writes nothing, and what steers one.
pub const FLEET_READ_ONLY: &str = "a fleet's view is read-only: steer it with `ststui rollout \
                                   … --contexts`, or one cluster's console (`ststui --context C \
                                   NAME`)";

/// Slowest and fastest simulator speed (virtual seconds per wall second), everywhere a speed
/// is accepted: `--speed`, the console's `<` / `>`, and the driver.
pub const SPEED_RANGE: (f64, f64) = (0.01, 1000.0);

/// A backend: it executes [`Op`]s and reports [`BackendEvent`]s through the sink it was built
/// with. `execute` never blocks on IO; failures arrive as [`BackendEvent::OpFailed`]. An op a
/// backend cannot do at all (a simulator op on a cluster) fails with [`FailureKind::Unsupported`].
pub trait Backend: Send {
    fn capabilities(&self) -> Capabilities;
    fn execute(&mut self, op: Op);
}
