//! Console and script operations ([`Op`]) applied to the simulation: StatefulSet writes
//! ([`ClusterOp`], computed by `steer` exactly as a cluster backend computes them, then stored
//! through the API layer), pod deletion, kubelet faults, and pause / resume / step.
//!
//! Bad input is refused with an [`OpError`] that names what was wrong and what is expected, and
//! has a [`FailureKind`]. Owns: turning an Op into API calls. Must not: bypass the API layer, or
//! handle speed (the real-time driver's business).

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};

use super::api::{self, ApiError};
use super::kubelet::FaultError;
use super::store::{Store, StoreError};
use super::world::World;
use crate::backend::{ClusterOp, FailureKind, Fault, ObjRef, Op, SimOp, Write};
use crate::steer::{self, Change, Refused};

/// Who the simulator says froze a rollout (the console's operator; a served simulator's
/// clients name themselves on the cluster side).
pub const SIM_IDENTITY: &str = "ststui-sim";

/// Why an operation was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpError {
    #[error("statefulset {0} not found: expected the name of an existing StatefulSet")]
    SetNotFound(ObjRef),
    #[error("pod {0} not found: expected the name of an existing pod (e.g. web-0)")]
    PodNotFound(ObjRef),
    /// A bad value: the message says what was wrong and what is expected.
    #[error("{0}")]
    Invalid(String),
    /// Refused before it reached the API (client-side, as kubectl refuses).
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Fault(#[from] FaultError),
    #[error("step needs the controller paused (press space to pause first)")]
    NotPaused,
    #[error("step is the simulator's scheduler's: apply it through the simulator")]
    StepNotHere,
    #[error("speed applies to the real-time console; a headless run has no wall clock")]
    SpeedNeedsDriver,
}

impl OpError {
    /// The failure kind a client acts on.
    pub fn kind(&self) -> FailureKind {
        match self {
            OpError::SetNotFound(_) | OpError::PodNotFound(_) => FailureKind::NotFound,
            OpError::Refused(r) => r.kind,
            OpError::Api(ApiError::Store(StoreError::NotFound { .. })) => FailureKind::NotFound,
            OpError::Api(ApiError::Store(StoreError::AlreadyExists { .. })) => {
                FailureKind::Conflict
            }
            OpError::Api(_) | OpError::Invalid(_) | OpError::Fault(_) => FailureKind::Invalid,
            OpError::NotPaused | OpError::StepNotHere => FailureKind::Invalid,
            OpError::SpeedNeedsDriver => FailureKind::Unsupported,
        }
    }
}

/// A short description of an op, for failures and logs (see [`Op::describe`]).
pub fn describe(op: &Op) -> String {
    op.describe()
}

/// [`describe`] for a cluster write.
pub fn describe_write(op: &ClusterOp) -> String {
    op.describe()
}

/// Applies `op`. Effects show up as events once the world runs (`advance`/`settle`/`step`).
/// A write whose `steer` outcome is "nothing to change" succeeds without a write.
pub fn apply(w: &mut World, op: Op) -> Result<(), OpError> {
    match op {
        Op::Cluster(write) => apply_write(w, write),
        Op::Sim(SimOp::Fault(f)) => apply_fault(w, f),
        Op::Sim(SimOp::Pause) => {
            w.set_paused(true);
            Ok(())
        }
        Op::Sim(SimOp::Resume) => {
            w.set_paused(false);
            Ok(())
        }
        // The scheduler's: `Sim::apply_op` runs it before it reaches here.
        Op::Sim(SimOp::Step { .. }) => Err(OpError::StepNotHere),
        Op::Sim(SimOp::SetSpeed { .. }) => Err(OpError::SpeedNeedsDriver),
        // The simulator sends every object whatever the console shows; nothing to reconnect.
        Op::View(_) => Ok(()),
    }
}

fn apply_fault(w: &mut World, f: Fault) -> Result<(), OpError> {
    match f {
        Fault::FailPod { pod } => Ok(w.kubelet.fail(&pod, &mut w.store, &mut w.agenda)?),
        Fault::SetPodReady { pod, ready } => {
            Ok(w.kubelet.set_ready(&pod, ready, &mut w.store, &mut w.agenda)?)
        }
        Fault::BrokenImage { image, broken } => {
            w.kubelet.set_image_broken(&image, broken, &mut w.store, &mut w.agenda);
            let images = w.kubelet.broken_images().map(|(i, _)| i.to_string()).collect();
            w.out.push(super::SimEvent::BrokenImages(images));
            Ok(())
        }
        Fault::Quota { namespace, pods } => {
            match pods {
                Some(n) => w.store.pod_quota.insert(namespace, n),
                None => w.store.pod_quota.remove(&namespace),
            };
            // The controller tries again on its back-off (a FailedCreate fails the sync).
            Ok(())
        }
        Fault::Storage { full } => {
            w.store.storage_full = full;
            if !full {
                w.kubelet.storage_fixed(&mut w.store, &mut w.agenda);
            }
            Ok(())
        }
    }
}

fn apply_write(w: &mut World, write: Write) -> Result<(), OpError> {
    if let ClusterOp::DeletePod { pod, force, uid } = &write.op {
        return delete_pod(w, pod, *force, uid.as_deref());
    }
    if let ClusterOp::EvictPod { pod, uid } = &write.op {
        return evict_pod(w, pod, uid.clone());
    }
    let key = write.op.target().clone();
    let set: StatefulSet =
        w.store.sets().get(&key).cloned().ok_or_else(|| OpError::SetNotFound(key.clone()))?;
    let revisions: Vec<&ControllerRevision> =
        w.store.revisions().in_namespace(&key.namespace).collect();
    let inputs = steer::Inputs {
        now: w.store.clock().timestamp(),
        identity: SIM_IDENTITY,
        revisions: &revisions,
    };
    let change = steer::decide(&write.op, &key, write.basis.as_deref(), &set, inputs)?;
    let Change::Set(new) = change else {
        return Ok(());
    };
    let semantics = w.controller.options().semantics;
    api::update_set(&mut w.store, *new, &semantics)?;
    Ok(())
}

fn delete_pod(w: &mut World, pod: &ObjRef, force: bool, uid: Option<&str>) -> Result<(), OpError> {
    let stored = w.store.pods().get(pod).ok_or_else(|| OpError::PodNotFound(pod.clone()))?;
    if let Some(uid) = uid
        && stored.metadata.uid.as_deref() != Some(uid)
    {
        return Err(recreated(pod, uid));
    }
    match api::delete_pod(&mut w.store, pod, force) {
        Err(ApiError::Store(StoreError::NotFound { .. })) => Err(OpError::PodNotFound(pod.clone())),
        other => other.map(drop).map_err(OpError::from),
    }
}

/// A pod removal refused: the pod of that name is not the one decided on (another uid).
fn recreated(pod: &ObjRef, uid: &str) -> OpError {
    OpError::Refused(Refused {
        kind: FailureKind::Conflict,
        message: format!(
            "{pod} was recreated since you decided (its uid is not {uid}): nothing deleted"
        ),
    })
}

/// An eviction through the simulated API's `pods/eviction` (`disruption::evict`); a budget's
/// refusal names it as it stands.
fn evict_pod(w: &mut World, pod: &ObjRef, uid: Option<String>) -> Result<(), OpError> {
    let opts = super::disruption::EvictOptions { uid: uid.clone(), ..Default::default() };
    match super::disruption::evict(&mut w.store, pod, &opts) {
        Ok(_) => Ok(()),
        Err(ApiError::Store(StoreError::NotFound { .. })) => Err(OpError::PodNotFound(pod.clone())),
        Err(ApiError::Conflict(_)) => Err(recreated(pod, uid.as_deref().unwrap_or_default())),
        Err(ApiError::Refused { code, message, cause, budget, .. }) => {
            let key = budget.map(|b| ObjRef::new(pod.namespace.clone(), b));
            let pdb = key.as_ref().and_then(|k| w.store.budgets().get(k));
            let kind = match code {
                429 => FailureKind::Disruption,
                403 => FailureKind::Forbidden,
                _ => FailureKind::Unavailable,
            };
            let message = crate::core::budget::refusal(pdb, cause.as_deref(), &message);
            Err(OpError::Refused(Refused { kind, message }))
        }
        Err(e) => Err(e.into()),
    }
}

/// The ControllerRevisions `set` controls, by revision number (what `kubectl rollout history`
/// lists).
pub(crate) fn controlled_revisions<'s>(
    store: &'s Store,
    set: &StatefulSet,
) -> Vec<&'s ControllerRevision> {
    let ns = set.metadata.namespace.as_deref().unwrap_or_default();
    let all: Vec<&ControllerRevision> = store.revisions().in_namespace(ns).collect();
    steer::controlled_revisions(set, &all)
}
