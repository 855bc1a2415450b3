//! The core's contract: what goes into a sync ([`Observed`], [`Options`]) and what comes out
//! ([`Plan`]: effects as data, the computed status, and why the sync stopped early).
//!
//! Everything here is plain data over k8s-openapi types. Nothing in this module performs IO,
//! reads a clock or logs; callers (the simulator, the real-cluster advisor, the console) decide
//! what to do with a [`Plan`].

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;

use super::options::Semantics;

/// A consistent snapshot of everything one sync of one StatefulSet reads, as upstream's listers
/// would return it. Borrowed, so a caller never clones its store to run a sync.
///
/// The slices hold whole-namespace listings: pod claiming (spec 1.3) lists *all* pods in the
/// namespace, revision listing (2.6) filters by selector and owner itself, and revision creation
/// needs every revision name in the namespace to detect hash collisions (2.5 d).
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The set as the informer cache holds it (assumed fresh: the "can adopt" live GET reads it).
    pub set: &'a StatefulSet,
    /// All pods in the set's namespace.
    pub pods: &'a [&'a Pod],
    /// All PersistentVolumeClaims in the set's namespace.
    pub claims: &'a [&'a PersistentVolumeClaim],
    /// All ControllerRevisions in the set's namespace.
    pub revisions: &'a [&'a ControllerRevision],
}

/// What the controller did, as the timeline's `controller` lines name it (`create-pod`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerAction {
    CreatePod,
    UpdatePod,
    DeletePod,
    AdoptPod,
    ReleasePod,
    CreatePvc,
    UpdatePvc,
    CreateRevision,
    UpdateRevision,
    DeleteRevision,
    AdoptRevision,
}

impl ControllerAction {
    pub const ALL: [ControllerAction; 11] = [
        ControllerAction::CreatePod,
        ControllerAction::UpdatePod,
        ControllerAction::DeletePod,
        ControllerAction::AdoptPod,
        ControllerAction::ReleasePod,
        ControllerAction::CreatePvc,
        ControllerAction::UpdatePvc,
        ControllerAction::CreateRevision,
        ControllerAction::UpdateRevision,
        ControllerAction::DeleteRevision,
        ControllerAction::AdoptRevision,
    ];

    /// The timeline's word.
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerAction::CreatePod => "create-pod",
            ControllerAction::UpdatePod => "update-pod",
            ControllerAction::DeletePod => "delete-pod",
            ControllerAction::AdoptPod => "adopt-pod",
            ControllerAction::ReleasePod => "release-pod",
            ControllerAction::CreatePvc => "create-pvc",
            ControllerAction::UpdatePvc => "update-pvc",
            ControllerAction::CreateRevision => "create-revision",
            ControllerAction::UpdateRevision => "update-revision",
            ControllerAction::DeleteRevision => "delete-revision",
            ControllerAction::AdoptRevision => "adopt-revision",
        }
    }

    /// The action a timeline word names.
    pub fn parse(word: &str) -> Option<ControllerAction> {
        ControllerAction::ALL.into_iter().find(|a| a.as_str() == word)
    }
}

impl std::fmt::Display for ControllerAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a pod is deleted; mirrors the timeline's `delete-pod` reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeleteReason {
    /// Phase Failed or Succeeded (spec 3.3 a).
    Failed,
    /// Condemned: ordinal outside `[start, start + replicas)` (3.4).
    ScaleDown,
    /// Old revision replaced by a rolling update (3.6).
    Update,
    /// Old revision deleted by the Recreate strategy, every such pod at once (3.8).
    Recreate,
}

impl std::fmt::Display for DeleteReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DeleteReason {
    /// The reason a timeline word names.
    pub fn parse(word: &str) -> Option<DeleteReason> {
        [
            DeleteReason::Failed,
            DeleteReason::ScaleDown,
            DeleteReason::Update,
            DeleteReason::Recreate,
        ]
        .into_iter()
        .find(|r| r.as_str() == word)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DeleteReason::Failed => "failed",
            DeleteReason::ScaleDown => "scale-down",
            DeleteReason::Update => "update",
            DeleteReason::Recreate => "recreate",
        }
    }
}

/// One API call upstream would make, in the order it would make it. Creates carry the full
/// object (without uid/resourceVersion: the store assigns them); updates carry the full new
/// object; deletes carry the name (all objects are in the set's namespace).
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Patch a controller ownerRef onto an orphan ControllerRevision (spec 2.6, 1.2 step 3).
    AdoptRevision { name: String, revision: Box<ControllerRevision> },
    /// Patch a controller ownerRef onto an orphan pod (1.3).
    AdoptPod { name: String, pod: Box<Pod> },
    /// Remove our controller ownerRef from a pod that no longer belongs (1.3).
    ReleasePod { name: String, pod: Box<Pod> },
    /// POST a new ControllerRevision (2.5 d).
    CreateRevision(Box<ControllerRevision>),
    /// PUT an existing revision with a new `.revision` number (rollback, 2.5 b).
    UpdateRevision(Box<ControllerRevision>),
    /// DELETE a revision (history truncation, 2.7).
    DeleteRevision { name: String },
    /// POST a PersistentVolumeClaim (3.7).
    CreateClaim(Box<PersistentVolumeClaim>),
    /// PUT a claim whose ownerReferences changed (retention policy, 3.7).
    UpdateClaim(Box<PersistentVolumeClaim>),
    /// POST a pod (3.5, 3.7).
    CreatePod(Box<Pod>),
    /// PUT a pod whose identity, storage or labels were repaired (3.3 e).
    UpdatePod(Box<Pod>),
    /// DELETE a pod.
    DeletePod { name: String, reason: DeleteReason },
    /// PUT /status (4.3). Only emitted when upstream would not skip the write.
    WriteStatus(Box<StatefulSetStatus>),
}

impl Effect {
    /// The timeline's `action` for this effect, or `None` for effects the timeline does not
    /// list as actions (the status write).
    pub fn action(&self) -> Option<ControllerAction> {
        Some(match self {
            Effect::CreateRevision(_) => ControllerAction::CreateRevision,
            Effect::UpdateRevision(_) => ControllerAction::UpdateRevision,
            Effect::DeleteRevision { .. } => ControllerAction::DeleteRevision,
            Effect::CreateClaim(_) => ControllerAction::CreatePvc,
            Effect::UpdateClaim(_) => ControllerAction::UpdatePvc,
            Effect::CreatePod(_) => ControllerAction::CreatePod,
            Effect::UpdatePod(_) => ControllerAction::UpdatePod,
            Effect::DeletePod { .. } => ControllerAction::DeletePod,
            Effect::AdoptPod { .. } => ControllerAction::AdoptPod,
            Effect::ReleasePod { .. } => ControllerAction::ReleasePod,
            Effect::AdoptRevision { .. } => ControllerAction::AdoptRevision,
            Effect::WriteStatus(_) => return None,
        })
    }
}

/// Why a pod blocks OrderedReady progress (3.3 d, 3.4, 3.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PodWait {
    /// Not created yet, or just created (a placeholder has no phase).
    NotCreated,
    /// Phase Pending.
    Pending,
    /// Running but the Ready condition is not True.
    NotReady,
    /// Ready, but not yet for `minReadySeconds`.
    NotAvailable { min_ready_seconds: i32 },
    /// Has a deletionTimestamp.
    Terminating,
    /// Failed or Succeeded; deleted, and recreated once it is gone.
    Terminal,
}

/// Why the sync stopped early to wait (upstream returned before doing all it could).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// The set has a deletionTimestamp: nothing is created, updated or deleted (3.2 step 7).
    SetDeleting,
    /// OrderedReady: `pod` must be Running, Ready and available before anything after it
    /// (3.3 d). `ordinal` is the pod's ordinal.
    Ordered { pod: String, ordinal: i32, wait: PodWait },
    /// A Failed/Succeeded pod was deleted (or is already terminating); its replacement is
    /// created once it is gone (3.3 a).
    TerminalPod { pod: String, ordinal: i32 },
    /// A placeholder's claim still carries an ownerRef to a previous pod's UID; creation waits
    /// for garbage collection (3.3 b, `PodClaimIsStale`).
    StaleClaim { pod: String, claim: String },
    /// A claim the pod needs is being deleted (3.7): pod creation fails until it is gone.
    ClaimTerminating { pod: String, claim: String },
    /// OrderedReady scale-down waits for a condemned pod to finish terminating (3.4 step 1).
    CondemnedTerminating { pod: String },
    /// OrderedReady scale-down is blocked: `pod` is unhealthy and is not the first unavailable
    /// pod `first_unavailable` (3.4 steps 2–3).
    CondemnedUnhealthy { pod: String, first_unavailable: Option<String> },
    /// OrderedReady scale-down deleted `pod` this sync; the next waits for it to go.
    ScaleDownStep { pod: String },
    /// Legacy rolling update (3.6.1): deleted `pod` this sync, one pod per sync.
    UpdateStep { pod: String },
    /// Legacy rolling update (3.6.1): `pod` (already updated, terminating or missing) must be
    /// available before the next pod is updated.
    UpdateWaiting { pod: String, wait: PodWait },
    /// maxUnavailable path (3.6.2): the budget is used up.
    MaxUnavailable { unavailable: i32, max: i32 },
    /// Recreate (3.8): nothing is created while old-revision pods exist; `pods` names the
    /// first of them (at most [`RECREATE_NAMED`]), `left` counts them all.
    Recreate { pods: Vec<String>, left: i32 },
    /// The sync returned an error upstream would retry with rate limiting (e.g. an invalid
    /// selector is *not* retried; see [`Plan::error`]).
    Error { message: String },
}

/// Why a rollout is not complete although the controller has nothing left to do: the operator's
/// own configuration holds it. These are not early stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// RollingUpdate with partition > 0: ordinals `start .. start + partition` stay on the current
    /// revision (3.5, the partition is an offset from start). `outdated` counts pods below the
    /// partition not on the update revision.
    Partition { partition: i32, first_held: i32, last_held: i32, outdated: i32 },
    /// OnDelete: `outdated` pods are on an older revision and change only when deleted by hand.
    OnDelete { outdated: i32 },
}

/// How many old-revision pods a [`Blocker::Recreate`] names.
pub const RECREATE_NAMED: usize = 8;

/// A Warning Event the controller records about the set this sync (upstream's recorder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub reason: &'static str,
    pub message: String,
}

/// The reason of the Warning a 1.37 controller with the Recreate gate off records each sync
/// of a Recreate set.
pub const UNKNOWN_STRATEGY: &str = "UnknownStrategy";

/// The result of one sync.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The API calls upstream would make, in order.
    pub effects: Vec<Effect>,
    /// The status computed by this sync (what upstream returns to `syncStatefulSet`), whether
    /// or not a [`Effect::WriteStatus`] was needed.
    pub status: StatefulSetStatus,
    /// Why the sync stopped early, if it did.
    pub waiting_on: Option<Blocker>,
    /// What holds an incomplete rollout when nothing is waiting.
    pub held_by: Option<Hold>,
    /// Re-enqueue after this many milliseconds (the minReadySeconds requeue, 1.2 step 5).
    pub requeue_after_ms: Option<u64>,
    /// When this sync counted a Ready pod as available.
    pub min_ready: MinReady,
    /// The effects upstream issues concurrently, by burst item (in effect order).
    pub burst: Vec<BurstItem>,
    /// The name of the current and update revision this sync resolved.
    pub current_revision: String,
    pub update_revision: String,
    /// A sync error upstream would return. `retry` false for non-transient errors (invalid
    /// selector) that are not requeued.
    pub error: Option<SyncError>,
    /// The Warning Event this sync records, if any.
    pub warning: Option<Warning>,
}

/// One item of a Parallel burst batch (upstream `slowStartBatch`): `effects[start..end]` are
/// one pod's writes, run concurrently with the other items of `batch`. After a failed write the
/// rest of its item is not sent, the other items of the batch still are, and nothing after the
/// batch is (but the status write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurstItem {
    pub start: usize,
    pub end: usize,
    pub batch: u32,
}

impl Plan {
    /// The burst item effect `i` belongs to, if any.
    pub fn burst_item(&self, i: usize) -> Option<BurstItem> {
        let at = self.burst.partition_point(|b| b.end <= i);
        self.burst.get(at).copied().filter(|b| b.start <= i)
    }
}

/// An error the sync would return.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SyncError {
    pub message: String,
    /// Whether upstream re-adds the key with rate limiting.
    pub retry: bool,
}

/// The time a sync runs at: taken once per sync by the caller (a virtual clock in the simulator)
/// and used for every availability decision in that sync (spec 4.2).
pub type Now = Timestamp;

/// When a Ready pod counts as available: after `seconds` (the set's minReadySeconds) of
/// readiness, the deadline itself included or not (`podutil.IsPodAvailable` compares `<=` from
/// v1.34, `<` before: [`Semantics::available_at_deadline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MinReady {
    pub seconds: i32,
    pub at_deadline: bool,
}

impl MinReady {
    pub fn new(seconds: i32, sem: &Semantics) -> Self {
        MinReady { seconds, at_deadline: sem.available_at_deadline }
    }

    /// The instant a pod Ready since `ready` becomes available: `lastTransitionTime +
    /// minReadySeconds` (`None` without a transition time, or when it overflows).
    pub fn deadline(self, ready: &k8s_openapi::api::core::v1::PodCondition) -> Option<Now> {
        let since = ready.last_transition_time.as_ref()?;
        since
            .0
            .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(i64::from(self.seconds)))
            .ok()
    }

    /// Whether a pod whose Ready condition is `ready` counts as available at `now`.
    pub fn reached(self, ready: &k8s_openapi::api::core::v1::PodCondition, now: Now) -> bool {
        if self.seconds <= 0 {
            return true;
        }
        self.deadline(ready).is_some_and(|t| if self.at_deadline { t <= now } else { t < now })
    }
}
