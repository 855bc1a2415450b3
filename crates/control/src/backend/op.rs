//! What the console asks of a backend: [`Op`], either a [`Write`] a cluster can carry out
//! ([`ClusterOp`], decided on a [`Basis`]) or a simulator-only [`SimOp`] (pause, step, speed,
//! faults). A new fault widens [`SimOp`] only, never what a cluster backend must answer.
//! A failed op comes back as a [`Failure`] with a [`FailureKind`].

use super::ObjRef;
pub use super::cluster_op::{ClusterOp, WriteKind, describe_rbac};

/// One request to a backend.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A write to the cluster (both backends).
    Cluster(Write),
    /// A simulator-only operation.
    Sim(SimOp),
    /// What the console shows changed (a backend watches only that).
    View(ViewOp),
}

/// What the console shows, for a backend that watches only that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewOp {
    /// One set opened (its pods, revisions, claims and events watched), or none (the picker:
    /// only the sets).
    Focus(Option<ObjRef>),
    /// Several sets opened as one (a rollout group's view): each watched as [`ViewOp::Focus`]
    /// watches one, and the namespace's sets (a group by label finds its members among them).
    Group(Vec<ObjRef>),
    /// Read the credentials again and reconnect (after a 401).
    Reconnect,
    /// Send the Events about this pod (a listing, then changes), and no longer those about the
    /// pod before; `None`: no pod's.
    PodEvents(Option<ObjRef>),
    /// Follow this pod's log ([`BackendEvent::Log`]) instead of the one before; `None`: stop.
    ///
    /// [`BackendEvent::Log`]: crate::backend::BackendEvent::Log
    Logs(Option<LogRequest>),
    /// Read this set and its pods from the server now (a quorum read, not the watch): a plan's
    /// verdict rests on it. Answered with [`BackendEvent::Read`].
    ///
    /// [`BackendEvent::Read`]: crate::backend::BackendEvent::Read
    Read(ObjRef),
}

/// Which log to follow: a pod's first container, now or before its last restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    pub pod: ObjRef,
    /// The container's previous instance (`kubectl logs --previous`).
    pub previous: bool,
}

/// A piece of a followed log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogChunk {
    /// The log so far (the last lines), replacing what was shown.
    Replace(Vec<String>),
    /// New lines.
    Append(Vec<String>),
    /// It cannot be read: why (the server's words, or the permission missing).
    Failed(String),
    /// The stream ended (the container stopped, or the server closed it).
    Ended,
}

impl Op {
    /// A short description, in scenario words (e.g. `partition default/web 2`), for failures
    /// and logs.
    pub fn describe(&self) -> String {
        match self {
            Op::Cluster(w) => w.op.describe(),
            Op::View(ViewOp::Read(set)) => format!("read {set}"),
            Op::Sim(SimOp::Pause) => "pause".into(),
            Op::Sim(SimOp::Resume) => "resume".into(),
            Op::Sim(SimOp::Step { n }) => format!("step {n}"),
            Op::Sim(SimOp::SetSpeed { speed }) => format!("speed {speed}"),
            Op::Sim(SimOp::Fault(Fault::FailPod { pod })) => format!("fail {pod}"),
            Op::Sim(SimOp::Fault(Fault::SetPodReady { pod, ready: true })) => {
                format!("ready {pod}")
            }
            Op::Sim(SimOp::Fault(Fault::SetPodReady { pod, ready: false })) => {
                format!("unready {pod}")
            }
            Op::Sim(SimOp::Fault(Fault::BrokenImage {
                image,
                broken: Some(ImageFailure::Probe),
            })) => {
                format!("break-image {image}")
            }
            Op::Sim(SimOp::Fault(Fault::BrokenImage { image, broken: Some(how) })) => {
                format!("break-image {image} failure={how}")
            }
            Op::Sim(SimOp::Fault(Fault::BrokenImage { image, broken: None })) => {
                format!("fix-image {image}")
            }
            Op::Sim(SimOp::Fault(Fault::Storage { full: true })) => "break-storage".into(),
            Op::Sim(SimOp::Fault(Fault::Storage { full: false })) => "fix-storage".into(),
            Op::Sim(SimOp::Fault(Fault::Quota { namespace, pods: Some(n) })) => {
                format!("quota pods={n} namespace={namespace}")
            }
            Op::Sim(SimOp::Fault(Fault::Quota { namespace, pods: None })) => {
                format!("quota off namespace={namespace}")
            }
            Op::View(ViewOp::Focus(Some(set))) => format!("open {set}"),
            Op::View(ViewOp::Focus(None)) => "open the picker".into(),
            Op::View(ViewOp::Group(sets)) => {
                let names: Vec<String> = sets.iter().map(ToString::to_string).collect();
                format!("open the group {}", names.join(", "))
            }
            Op::View(ViewOp::Reconnect) => "reconnect".into(),
            Op::View(ViewOp::PodEvents(Some(pod))) => format!("watch the events of {pod}"),
            Op::View(ViewOp::PodEvents(None)) => "watch no pod's events".into(),
            Op::View(ViewOp::Logs(Some(r))) => {
                format!(
                    "follow the log of {}{}",
                    r.pod,
                    if r.previous { " (previous)" } else { "" }
                )
            }
            Op::View(ViewOp::Logs(None)) => "stop following the log".into(),
        }
    }
}

impl From<ClusterOp> for Op {
    /// A write decided on whatever the backend holds when it runs (a script line, `kubectl
    /// patch` without a resourceVersion).
    fn from(op: ClusterOp) -> Op {
        Op::Cluster(Write::new(op))
    }
}

impl From<SimOp> for Op {
    fn from(op: SimOp) -> Op {
        Op::Sim(op)
    }
}

impl From<Fault> for Op {
    fn from(f: Fault) -> Op {
        Op::Sim(SimOp::Fault(f))
    }
}

/// A cluster write and the object it was decided on.
///
/// `basis` is the StatefulSet as the console saw it when the operator decided (`None`: act on
/// the set as it is, as a script line or `kubectl patch` does). A backend writes with the
/// basis's resourceVersion as the precondition. When that is stale (409), it re-reads the set:
/// if nothing the operator could have decided on changed (only status moved), the same decision
/// is applied to the fresh object; otherwise the write fails with [`FailureKind::Conflict`]
/// saying what changed (`steer::describe_change`), and the console asks again. Never a blind
/// retry.
///
/// `id` tells one write from every other this process makes (two writes with the same op are
/// two sends): a backend echoes it with the answer ([`BackendEvent::OpDone`],
/// [`Failure::id`]), so the console finds the write it answers without comparing words. A
/// write re-decided on a fresh set after a conflict is a new write, with an id of its own.
/// Equality compares the decision (`op` and `basis`), not the id: "the same write" to a test or
/// a confirmation is the same change on the same set; an answer is matched by `id` alone.
///
/// [`BackendEvent::OpDone`]: crate::backend::BackendEvent::OpDone
#[derive(Debug, Clone)]
pub struct Write {
    pub op: ClusterOp,
    pub basis: Option<Box<k8s_openapi::api::apps::v1::StatefulSet>>,
    pub id: WriteId,
}

impl PartialEq for Write {
    fn eq(&self, other: &Write) -> bool {
        self.op == other.op && self.basis == other.basis
    }
}

impl Write {
    /// A write decided on whatever the backend holds when it runs (a script line, a verb that
    /// reads the set first, `kubectl patch` without a resourceVersion).
    pub fn new(op: ClusterOp) -> Write {
        Write { op, basis: None, id: WriteId::next() }
    }

    /// A write decided on `basis`, the set as it was seen (`None`: as [`Write::new`]).
    pub fn on(op: ClusterOp, basis: Option<Box<k8s_openapi::api::apps::v1::StatefulSet>>) -> Write {
        Write { op, basis, id: WriteId::next() }
    }
}

/// The identity of one [`Write`]: unique in this process, never reused, never shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId(u64);

impl WriteId {
    /// The next id (a process-wide counter: every backend, verb and plan draws from it, so an
    /// answer never matches a write it was not for).
    pub fn next() -> WriteId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        WriteId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// Simulator-only operations.
#[derive(Debug, Clone, PartialEq)]
pub enum SimOp {
    /// Stop reconciliation (events still queue).
    Pause,
    Resume,
    /// While paused, run `n` queued syncs.
    Step {
        n: u32,
    },
    /// Virtual seconds per wall second.
    SetSpeed {
        speed: f64,
    },
    Fault(Fault),
}

/// Faults the simulator injects.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The pod's phase becomes Failed.
    FailPod { pod: ObjRef },
    /// Flip the Ready condition of a running pod.
    SetPodReady { pod: ObjRef, ready: bool },
    /// Every pod running `image`, now and later, never becomes Ready (a crash-looping image:
    /// running pods lose readiness at once); `broken: false` fixes it (they become Ready after
    /// the kubelet's ready delay). A property of the image, not of one pod: deleting a pod of
    /// a broken image brings it back just as broken (kubernetes#67250's lesson).
    BrokenImage { image: String, broken: Option<ImageFailure> },
    /// The volume provisioner cannot provision (`full`): new claims stay Pending and their
    /// pods unscheduled; fixed, the Pending claims bind and their pods start.
    Storage { full: bool },
    /// A ResourceQuota of `pods` pods in the namespace (`None`: lifted): the API server refuses
    /// a pod created beyond it (the StatefulSet controller's FailedCreate), so an ordinal the
    /// set wants is never created.
    Quota { namespace: String, pods: Option<u32> },
}

/// How pods of a broken image fail (the simulator's kubelet and the fake kubelet play it; the
/// words and states are `sim::kubelet::failure`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum ImageFailure {
    /// Runs, never Ready: the readiness probe fails.
    #[default]
    Probe,
    /// The image cannot be pulled: Pending, ErrImagePull / ImagePullBackOff.
    Pull,
    /// Starts and exits (code 1): CrashLoopBackOff, restarts counted.
    Crash,
}

/// The words a scenario and the console accept for an [`ImageFailure`].
pub const FAILURE_WORDS: &str = "probe, pull or crash";

/// A word that names no [`ImageFailure`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown failure {0:?}: expected {FAILURE_WORDS}")]
pub struct UnknownFailure(pub String);

impl std::str::FromStr for ImageFailure {
    type Err = UnknownFailure;
    fn from_str(s: &str) -> Result<Self, UnknownFailure> {
        match s {
            "probe" => Ok(ImageFailure::Probe),
            "pull" => Ok(ImageFailure::Pull),
            "crash" => Ok(ImageFailure::Crash),
            _ => Err(UnknownFailure(s.to_string())),
        }
    }
}

impl std::fmt::Display for ImageFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ImageFailure::Probe => "probe",
            ImageFailure::Pull => "pull",
            ImageFailure::Crash => "crash",
        })
    }
}

/// Why an op failed, as a client can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The object changed since the decision (409, or a changed generation).
    Conflict,
    /// Not allowed (403, or `--read-only`).
    Forbidden,
    /// The credentials were refused (401).
    Unauthorized,
    /// The object is gone (404).
    NotFound,
    /// The value was refused (422 validation, or refused before sending).
    Invalid,
    /// The server could not be reached or answered 5xx / 429; the write may be repeated.
    Unavailable,
    /// A disruption budget refused an eviction (429 from `pods/eviction`): nothing was
    /// deleted; it may be asked again once the budget allows a disruption.
    Disruption,
    /// This backend cannot do this at all (a simulator op on a cluster).
    Unsupported,
    /// The request was sent, its reply lost, and the object could not be read back: it may or
    /// may not be written.
    Unknown,
}

impl FailureKind {
    /// The kind for an HTTP status code.
    pub fn from_status(code: u16) -> FailureKind {
        match code {
            401 => FailureKind::Unauthorized,
            403 => FailureKind::Forbidden,
            404 | 410 => FailureKind::NotFound,
            409 => FailureKind::Conflict,
            400 | 422 => FailureKind::Invalid,
            _ => FailureKind::Unavailable,
        }
    }
}

/// A failed op: what was asked (in scenario words, e.g. `partition default/web 2`), the kind,
/// and a message saying what was wrong and what is expected. For a conflict, `write` is the
/// write that failed, so the console can show what changed and ask again. `id`: the failed
/// [`Write`]'s, when the op was one (what the console matches the answer with).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub op: String,
    pub kind: FailureKind,
    pub message: String,
    pub write: Option<Write>,
    pub id: Option<WriteId>,
}

impl Failure {
    pub fn new(op: String, kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure { op, kind, message: message.into(), write: None, id: None }
    }

    /// The same failure, as the answer to the write `id`.
    pub fn of(mut self, id: WriteId) -> Failure {
        self.id = Some(id);
        self
    }
}
