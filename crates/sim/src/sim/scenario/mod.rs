//! Scenario scripts (`spec/scenario.md`, a public interface): the parsed form of a script
//! ([`Script`], [`Line`], [`Command`]), the parser ([`parse`]) and the [`Player`] that executes a
//! script against a [`crate::sim::Sim`], headless (virtual time, as fast as the CPU allows) or
//! in real time (the interactive driver polls it).
//!
//! Owns: the script language and its errors. Must not touch: the store's internals (the player
//! goes through the `Sim` facade), stdout (events are returned to the caller).

pub mod build;
pub mod parse;
pub mod player;
mod values;

use crate::core::spec::UpdateType;
use std::path::PathBuf;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

pub use parse::{parse, parse_file};
pub use player::{Outcome, Player};

/// The namespace set and pod names default to.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A parsed script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Where it was read from (`apply` paths are relative to it); `<inline>` for text.
    pub path: PathBuf,
    /// The command lines, in order (comments and blank lines dropped).
    pub lines: Vec<Line>,
}

/// One command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    /// The command text, comment and surrounding blanks removed (the `command` event's `text`).
    pub text: String,
    pub command: Command,
}

/// A namespaced name from the script: `NAME` (namespace `default`) or `NAMESPACE/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    pub namespace: String,
    pub name: String,
}

impl Name {
    pub fn as_ref(&self) -> crate::backend::ObjRef {
        crate::backend::ObjRef::new(self.namespace.clone(), self.name.clone())
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace == DEFAULT_NAMESPACE {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

/// `podManagementPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    OrderedReady,
    Parallel,
}

/// PVC retention: `Retain` or `Delete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    Retain,
    Delete,
}

impl Retention {
    pub fn as_str(self) -> &'static str {
        match self {
            Retention::Retain => "Retain",
            Retention::Delete => "Delete",
        }
    }
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::OrderedReady => "OrderedReady",
            Policy::Parallel => "Parallel",
        }
    }
}

/// `create NAME ...` with the spec's defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateArgs {
    pub set: Name,
    pub replicas: i32,
    pub image: String,
    pub policy: Policy,
    pub strategy: UpdateType,
    /// `None` when not given: 0 under RollingUpdate, no rollingUpdate block under OnDelete or
    /// Recreate.
    pub partition: Option<i32>,
    pub max_unavailable: Option<IntOrString>,
    pub min_ready_seconds: i32,
    pub start_ordinal: Option<i32>,
    pub claims: Vec<String>,
    pub history_limit: i32,
    pub when_deleted: Retention,
    pub when_scaled: Retention,
    /// The set's own labels (`labels=rollout-group=ingester`), beside none of the pods'.
    pub labels: std::collections::BTreeMap<String, String>,
}

/// `kubelet ...`: each field is `Some` when the command set it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KubeletArgs {
    pub start_ms: Option<u64>,
    pub ready_ms: Option<u64>,
    pub stop_ms: Option<u64>,
    pub broken: Option<String>,
    /// How the broken image fails.
    pub failure: Option<crate::backend::ImageFailure>,
}

impl KubeletArgs {
    /// `config` with what this line sets (an empty `broken=` clears the broken image).
    pub fn apply_to(&self, config: &mut crate::sim::KubeletConfig) {
        config.start_ms = self.start_ms.unwrap_or(config.start_ms);
        config.ready_ms = self.ready_ms.unwrap_or(config.ready_ms);
        config.stop_ms = self.stop_ms.unwrap_or(config.stop_ms);
        if let Some(b) = &self.broken {
            config.broken = (!b.is_empty()).then(|| b.clone());
        }
        config.failure = self.failure.unwrap_or(config.failure);
    }
}

/// `rollout NAME steps=LIST [bake=DUR] [stuck-after=DUR] [on-failure=hold|undo]
/// [gates=LIST] [last=POD] [recheck=DUR] [gate-interval=DUR] [gate-tries=N]
/// [replace-stuck=true|false]`, or `rollout group=NAME … [zone-bake=DUR] [order=TIERS]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutArgs {
    /// The set, or with `group` the group (its namespace, and the `rollout-group` label's value).
    pub set: Name,
    pub group: bool,
    pub zone_bake_seconds: u64,
    /// `batches=1,2,4` (a group's): each set's steps as batches of pods.
    pub batches: Option<Vec<u32>>,
    /// `order=fe,be`: the group's tiers (alphabetical otherwise).
    pub tiers: Option<Vec<String>>,
    pub steps: crate::plan::Steps,
    pub bake_seconds: u64,
    pub stuck_after_ms: u64,
    pub on_failure: crate::plan::OnFailure,
    /// The gates rehearsed (`sim:`: they answer as the `gate` lines say).
    pub gates: crate::plan::gate::Gates,
    /// Pods stuck broken on an older revision are replaced first (`--replace-stuck`).
    pub replace_stuck: bool,
    /// `image=IMAGE`: a Recreate set's plan sets it when its step opens, after its gates
    /// (`rollout --image`).
    pub image: Option<String>,
    /// `clusters=A,B,C`: a fleet rehearsed, each cluster a namespace of the simulation.
    pub clusters: Option<Vec<String>>,
    /// `cluster-bake=DUR` (a fleet's).
    pub cluster_bake_seconds: u64,
}

/// `gate NAME KIND [fail] [slow=DUR] [not-yet=N] [leader=POD] [pass]`: how a rehearsed gate
/// answers for a pod (NAME; the set for before-step and last-by).
#[derive(Debug, Clone, PartialEq)]
pub struct GateArgs {
    pub name: Name,
    pub kind: crate::plan::gate::GateKind,
    pub fail: bool,
    pub slow_ms: Option<u64>,
    pub not_yet: Option<u32>,
    pub leader: Option<String>,
}

/// `pdb NAME min-available=N|P% | max-unavailable=N|P% [set=SET] [unhealthy=POLICY]`: a
/// PodDisruptionBudget named NAME over the pods of set SET (NAME when not given) in NAME's
/// namespace, selected by the set's own selector.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetArgs {
    pub name: Name,
    pub set: String,
    pub min_available: Option<IntOrString>,
    pub max_unavailable: Option<IntOrString>,
    /// `unhealthyPodEvictionPolicy` (`IfHealthyBudget` or `AlwaysAllow`).
    pub unhealthy: Option<String>,
}

/// `delete NAME cascade=...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cascade {
    Background,
    Orphan,
}

/// One `key=value` of an `expect` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Replicas(i32),
    Ready(i32),
    Available(i32),
    Current(i32),
    Updated(i32),
    RolledOut(bool),
    /// Pod names in ordinal order (terminating ones included).
    Pods(Vec<String>),
    Blocked(bool),
    /// Extension: the set's PersistentVolumeClaims that exist (terminating ones included), by
    /// claim template then ordinal.
    Claims(Vec<String>),
    /// Extension: `spec.updateStrategy.rollingUpdate.partition` (0 when unset).
    Partition(i32),
    /// Extension: the phase of the set's rollout plan as its record names it (`waiting`,
    /// `baking`, `checking`, `gate`, `approved`, `halted`, `done`), or `none`.
    Plan(String),
    /// Extension: the set's state in its rollout group (`waiting`, `rolling`, `done`,
    /// `halted`, `aborted`), `none` without one, `invalid`.
    Group(String),
}

impl Check {
    /// The key as written in scripts.
    pub fn key(&self) -> &'static str {
        match self {
            Check::Replicas(_) => "replicas",
            Check::Ready(_) => "ready",
            Check::Available(_) => "available",
            Check::Current(_) => "current",
            Check::Updated(_) => "updated",
            Check::RolledOut(_) => "rolledOut",
            Check::Pods(_) => "pods",
            Check::Blocked(_) => "blocked",
            Check::Claims(_) => "claims",
            Check::Partition(_) => "partition",
            Check::Plan(_) => "plan",
            Check::Group(_) => "group",
        }
    }

    /// The expected value as written in scripts.
    pub fn value(&self) -> String {
        match self {
            Check::Replicas(n)
            | Check::Ready(n)
            | Check::Available(n)
            | Check::Current(n)
            | Check::Updated(n)
            | Check::Partition(n) => n.to_string(),
            Check::RolledOut(b) | Check::Blocked(b) => b.to_string(),
            Check::Pods(p) | Check::Claims(p) => p.join(","),
            Check::Plan(p) | Check::Group(p) => p.clone(),
        }
    }
}

/// A script command (`spec/scenario.md`, "Script language").
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Create(Box<CreateArgs>),
    /// `apply FILE`, resolved against the script's directory.
    Apply(PathBuf),
    Image {
        set: Name,
        image: String,
    },
    Scale {
        set: Name,
        replicas: i32,
    },
    Partition {
        set: Name,
        partition: i32,
    },
    Strategy {
        set: Name,
        kind: UpdateType,
    },
    MaxUnavailable {
        set: Name,
        value: IntOrString,
    },
    Undo {
        set: Name,
        revision: Option<i64>,
    },
    Restart {
        set: Name,
    },
    Delete {
        set: Name,
        cascade: Cascade,
    },
    DeletePod {
        pod: Name,
        force: bool,
    },
    /// `evict POD`: through the Eviction API, which the pod's disruption budgets judge (as
    /// ststui's own deletions; `delete-pod` bypasses them, as `kubectl delete pod` does).
    Evict {
        pod: Name,
    },
    /// `pdb NAME …`: a PodDisruptionBudget created, or replaced when it exists.
    Budget(Box<BudgetArgs>),
    /// `delete-pdb NAME`.
    DeleteBudget {
        name: Name,
    },
    Fail {
        pod: Name,
    },
    SetReady {
        pod: Name,
        ready: bool,
    },
    Kubelet(KubeletArgs),
    /// `gc delay=DUR`: the garbage collector collects dependents that long after their owner
    /// left (ststui extension).
    Gc {
        delay_ms: u64,
    },
    /// `break-image IMG [failure=probe|pull|crash]` / `fix-image IMG`: every pod running the
    /// image, now and later, fails as the failure says and never becomes Ready, or recovers
    /// (ststui extension).
    BrokenImage {
        image: String,
        broken: Option<crate::backend::ImageFailure>,
    },
    /// `break-storage` / `fix-storage`: new claims stay Pending (no volume can be provisioned)
    /// and their pods unscheduled, or the Pending claims bind (ststui extension).
    Storage {
        full: bool,
    },
    /// `quota pods=N [namespace=NS]` / `quota off [namespace=NS]`: a ResourceQuota of N pods in
    /// the namespace — a pod created beyond it is refused (FailedCreate) — or none (ststui
    /// extension).
    Quota {
        namespace: String,
        pods: Option<u32>,
    },
    /// `freeze NAME` / `unfreeze NAME`: the console's freeze (the partition holds every
    /// ordinal; recorded on the set) and its resume.
    Freeze {
        set: Name,
        on: bool,
    },
    /// `rollout NAME steps=…`: a rollout plan the simulator runs as time passes (ststui
    /// extension; on a cluster, `ststui rollout`).
    Rollout(Box<RolloutArgs>),
    /// `gate NAME KIND …`: how a rehearsed gate answers (ststui extension).
    Gate(Box<GateArgs>),
    /// `approve NAME`: the gate a plan waits at passes.
    Approve {
        set: Name,
    },
    /// `abort NAME`: the forced rollback of the set (`steer::abort`, as `ststui abort` and the
    /// console's abort key): its plan ended as aborted, the template back, its stuck pods
    /// deleted.
    Abort {
        set: Name,
    },
    /// A fault of the served API (`api-down`, `api-latency`, `drop-watches`, `compact`).
    Api(crate::sim::ApiFault),
    Pause,
    Resume,
    Step(u32),
    /// `wait DUR`, in virtual milliseconds.
    Wait(u64),
    /// `settle [max=DUR]`, the bound in virtual milliseconds.
    Settle {
        max_ms: u64,
    },
    Expect {
        set: Name,
        checks: Vec<Check>,
    },
}

impl Command {
    /// The cluster write this line is (the steering lines: image, scale, partition, strategy,
    /// maxunavailable, undo, restart, delete-pod, evict, freeze, unfreeze), on the simulator and on a
    /// cluster alike; `None` for every other line.
    pub fn cluster_op(&self) -> Option<crate::backend::ClusterOp> {
        use crate::backend::ClusterOp;
        Some(match self {
            Command::Image { set, image } => {
                ClusterOp::SetImage { set: set.as_ref(), image: image.clone() }
            }
            Command::Scale { set, replicas } => {
                ClusterOp::Scale { set: set.as_ref(), replicas: *replicas }
            }
            Command::Partition { set, partition } => {
                ClusterOp::SetPartition { set: set.as_ref(), partition: *partition }
            }
            Command::Strategy { set, kind } => {
                ClusterOp::SetStrategy { set: set.as_ref(), kind: *kind, rolling: None }
            }
            Command::MaxUnavailable { set, value } => {
                ClusterOp::SetMaxUnavailable { set: set.as_ref(), value: value.clone() }
            }
            Command::Undo { set, revision } => {
                ClusterOp::Undo { set: set.as_ref(), revision: *revision }
            }
            Command::Restart { set } => ClusterOp::Restart { set: set.as_ref() },
            Command::DeletePod { pod, force } => {
                ClusterOp::DeletePod { pod: pod.as_ref(), force: *force, uid: None }
            }
            Command::Evict { pod } => ClusterOp::EvictPod { pod: pod.as_ref(), uid: None },
            Command::Freeze { set, on: true } => ClusterOp::Freeze { set: set.as_ref() },
            Command::Freeze { set, on: false } => {
                ClusterOp::Unfreeze { set: set.as_ref(), force: false }
            }
            _ => return None,
        })
    }

    /// The set or pod the line names, if it names one (`apply` names its sets in the manifest).
    pub fn name_mut(&mut self) -> Option<&mut Name> {
        match self {
            Command::Create(a) => Some(&mut a.set),
            Command::Image { set, .. }
            | Command::Scale { set, .. }
            | Command::Partition { set, .. }
            | Command::Strategy { set, .. }
            | Command::MaxUnavailable { set, .. }
            | Command::Undo { set, .. }
            | Command::Restart { set }
            | Command::Delete { set, .. }
            | Command::Freeze { set, .. }
            | Command::Approve { set }
            | Command::Abort { set }
            | Command::Expect { set, .. } => Some(set),
            Command::Rollout(a) => Some(&mut a.set),
            Command::Gate(g) => Some(&mut g.name),
            Command::Budget(b) => Some(&mut b.name),
            Command::DeleteBudget { name } => Some(name),
            Command::DeletePod { pod, .. }
            | Command::Evict { pod }
            | Command::Fail { pod }
            | Command::SetReady { pod, .. } => Some(pod),
            Command::Apply(_)
            | Command::Kubelet(_)
            | Command::BrokenImage { .. }
            | Command::Storage { .. }
            | Command::Quota { .. }
            | Command::Gc { .. }
            | Command::Api(_)
            | Command::Pause
            | Command::Resume
            | Command::Step(_)
            | Command::Wait(_)
            | Command::Settle { .. } => None,
        }
    }
}

pub use crate::value::BadValue;

/// Why one script line cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("empty line")]
    Empty,
    /// The first word names no command; `near` is the command it is closest to, if any.
    #[error(
        "unknown command {cmd:?}{}; expected one of {}",
        near.map(|n| format!(" (did you mean {n:?}?)")).unwrap_or_default(),
        parse::USAGE.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", ")
    )]
    UnknownCommand { cmd: String, near: Option<&'static str> },
    /// The command's arguments are wrong: what is wrong, and the command's usage.
    #[error("{cmd}: {problem}; usage: {usage}")]
    Usage { cmd: String, usage: &'static str, problem: String },
}

/// A script that cannot be run: where, what was wrong, what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ScriptError {
    pub file: String,
    /// 1-based; 0 when the error is about the file as a whole.
    pub line: usize,
    pub message: String,
    /// Further bad lines of the same script (line, message), so one run names every typo.
    pub more: Vec<(usize, String)>,
}

impl ScriptError {
    /// `file:line: message`, or `file: message` when it is about the whole file.
    fn render(&self) -> String {
        let mut out = match self.line {
            0 => format!("{}: {}", self.file, self.message),
            n => format!("{}:{n}: {}", self.file, self.message),
        };
        for (n, m) in &self.more {
            out.push_str(&format!("\n{}:{n}: {m}", self.file));
        }
        out
    }
}
