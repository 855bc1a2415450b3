//! Steering: the changes the console's writes make to a StatefulSet, computed client-side as
//! kubectl computes them (undo's template copy, restart's annotation, `set image`), plus the
//! console's own freeze / resume and the strategy switch that keeps `rollingUpdate`. Pure
//! functions of the set as decided on (and the time, an input), shared by both backends: the
//! simulator stores the new object through its API layer; a cluster backend sends the
//! difference as a JSON merge patch ([`merge_patch`]) with the basis's resourceVersion as its
//! precondition.
//!
//! Owns: what each [`ClusterOp`] does to a set, and the words for what changed between two
//! sets ([`describe_change`]). Must not: do IO, read a clock, or know which backend runs it.

pub mod abort;
mod diff;
pub mod forced;
mod freeze;
pub mod gitops;
mod plan;
mod step;
mod undo;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::jiff::Timestamp;

pub use diff::{describe_change, merge_patch};
pub use freeze::{FIELD_MANAGER, FROZEN_AT, FROZEN_BY, FROZEN_PARTITION, Frozen, frozen, holding};
pub use step::{Pending, STEP_PENDING, pending};
pub use undo::{controlled_revisions, revision_template, undo_target};

/// The annotation recording pods deleted past their disruption budget (`ststui abort
/// --force-delete REASON`, the console's force-delete): JSON with who, when, the pods, the
/// reason and the refusal ([`forced`]).
pub const FORCE_DELETED: &str = "ststui.io/force-deleted";

use crate::backend::{ClusterOp, FailureKind, ObjRef};
use crate::core::labels::RESTARTED_AT_ANNOTATION;

/// Why a write was refused before it was sent: a [`FailureKind`] and a message saying what was
/// wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    pub kind: FailureKind,
    pub message: String,
}

impl Refused {
    fn invalid(message: impl Into<String>) -> Refused {
        Refused { kind: FailureKind::Invalid, message: message.into() }
    }
}

/// What a write does to the set.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The set as it should be stored.
    Set(Box<StatefulSet>),
    /// Nothing to do; the sentence says why (`kubectl rollout undo` prints "skipped rollback").
    Unchanged(String),
}

/// What a write needs besides the set: the time (restart, freeze), who writes (freeze) and the
/// namespace's ControllerRevisions (undo).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub now: Timestamp,
    pub identity: &'a str,
    pub revisions: &'a [&'a ControllerRevision],
}

/// Applies a set write to `set` (`key` names it in messages). [`ClusterOp::DeletePod`] is not a
/// set write and is refused here.
pub fn apply(
    op: &ClusterOp,
    key: &ObjRef,
    set: &StatefulSet,
    inputs: Inputs<'_>,
) -> Result<Change, Refused> {
    let mut new = set.clone();
    match op {
        ClusterOp::SetPartition { partition, .. } => {
            refuse_frozen(set, key, "the partition")?;
            rolling(&mut new.spec, key, "partition")?.partition = Some(*partition);
        }
        ClusterOp::SetStrategy { kind, rolling, .. } => {
            let strategy = new.spec.update_strategy.get_or_insert_with(Default::default);
            strategy.type_ = Some(kind.as_str().into());
            if *kind != crate::core::spec::UpdateType::RollingUpdate {
                strategy.rolling_update = None;
            } else if rolling.is_some() {
                strategy.rolling_update.clone_from(rolling);
            }
        }
        ClusterOp::SetMaxUnavailable { value, .. } => {
            rolling(&mut new.spec, key, "maxUnavailable")?.max_unavailable = Some(value.clone());
        }
        ClusterOp::Scale { replicas, .. } => new.spec.replicas = Some(*replicas),
        ClusterOp::SetImage { image, .. } => set_image(&mut new.spec, key, image)?,
        ClusterOp::Restart { .. } => {
            let at = inputs.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            let meta = new.spec.template.metadata.get_or_insert_with(Default::default);
            meta.annotations
                .get_or_insert_with(Default::default)
                .insert(RESTARTED_AT_ANNOTATION.into(), at);
        }
        ClusterOp::Undo { revision, .. } => {
            let target = undo_target(key, set, inputs.revisions, *revision)?;
            let template = revision_template(target).ok_or_else(|| {
                let name = target.metadata.name.clone().unwrap_or_default();
                Refused::invalid(format!(
                    "revision {name} holds no pod template: expected spec.template in its data"
                ))
            })?;
            if set.spec.template == template {
                return Ok(Change::Unchanged(format!(
                    "skipped rollback: the template already matches revision {}",
                    target.revision.unwrap_or(0)
                )));
            }
            new.spec.template = template;
        }
        ClusterOp::Step { from, to, .. } => {
            refuse_frozen(set, key, "the partition")?;
            return step::step(key, set, (*from, *to), inputs);
        }
        ClusterOp::StepSettled { .. } => return Ok(step::settled(key, set)),
        ClusterOp::Freeze { .. } => return freeze::freeze(key, set, inputs),
        ClusterOp::ForceDeleted { pods, reason, refused, .. } => {
            let record =
                forced::record(inputs.identity, inputs.now, pods, reason, refused.as_deref());
            new.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(FORCE_DELETED.into(), record);
        }
        ClusterOp::Unfreeze { force, .. } => return freeze::unfreeze(key, set, *force),
        ClusterOp::Plan { partition, record, .. } => {
            return plan::record(key, set, *partition, record, inputs.identity);
        }
        ClusterOp::PlanRecreate { image, record, .. } => {
            return plan::recreate(key, set, image, record, inputs.identity);
        }
        ClusterOp::PlanLease { lease, seen, .. } => {
            return plan::lease(
                key,
                set,
                lease.as_deref(),
                seen.as_deref(),
                inputs.identity,
                false,
            );
        }
        ClusterOp::GroupLease { lease, seen, .. } => {
            return plan::lease(key, set, lease.as_deref(), seen.as_deref(), inputs.identity, true);
        }
        ClusterOp::GroupPart { part, .. } => {
            return plan::part(key, set, part.as_deref(), inputs.identity);
        }
        ClusterOp::DeletePod { pod, .. } | ClusterOp::EvictPod { pod, .. } => {
            return Err(Refused::invalid(format!("removing {pod} is not a StatefulSet write")));
        }
    }
    if new == *set {
        return Ok(Change::Unchanged(format!("{key} already is as asked: nothing to change")));
    }
    Ok(Change::Set(Box::new(new)))
}

/// Applies `op` to `fresh` (the set as stored now), decided on `basis` (the set as the operator
/// saw it; `None`: no basis). When something the operator could have decided on changed between
/// the two (the spec, or a freeze), the write is refused as a [`FailureKind::Conflict`] that
/// says what changed; a change of status alone is no conflict.
pub fn decide(
    op: &ClusterOp,
    key: &ObjRef,
    basis: Option<&StatefulSet>,
    fresh: &StatefulSet,
    inputs: Inputs<'_>,
) -> Result<Change, Refused> {
    if let Some(basis) = basis {
        let changed = describe_change(basis, fresh);
        if !changed.is_empty() {
            return Err(Refused {
                kind: FailureKind::Conflict,
                message: format!("{key} changed since you decided: {changed}"),
            });
        }
    }
    apply(op, key, fresh, inputs)
}

/// A frozen set refuses manual partition moves: the freeze records the partition it restores.
fn refuse_frozen(set: &StatefulSet, key: &ObjRef, what: &str) -> Result<(), Refused> {
    match frozen(set) {
        Some(f) => Err(Refused {
            kind: FailureKind::Conflict,
            message: format!("{}: resume it before changing {what}", f.of_set(&key.to_string())),
        }),
        None => Ok(()),
    }
}

/// `spec.updateStrategy.rollingUpdate`, created when absent; refused for OnDelete and Recreate
/// sets (validation allows the block under RollingUpdate only).
fn rolling<'s>(
    spec: &'s mut StatefulSetSpec,
    key: &ObjRef,
    field: &str,
) -> Result<&'s mut k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy, Refused> {
    let strategy = spec.update_strategy.get_or_insert_with(Default::default);
    if let Some(other @ ("OnDelete" | "Recreate")) = strategy.type_.as_deref() {
        return Err(Refused::invalid(format!(
            "{field} applies to the RollingUpdate strategy; {key} uses {other} (switch the strategy first)"
        )));
    }
    Ok(strategy.rolling_update.get_or_insert_with(Default::default))
}

/// `kubectl set image`: the first container's image.
pub(super) fn set_image(
    spec: &mut StatefulSetSpec,
    key: &ObjRef,
    image: &str,
) -> Result<(), Refused> {
    if image.trim().is_empty() {
        return Err(Refused::invalid(
            "image is empty: expected an image reference like nginx:1.27",
        ));
    }
    let containers = &mut spec.template.spec.get_or_insert_with(Default::default).containers;
    let Some(first) = containers.first_mut() else {
        return Err(Refused::invalid(format!("{key} has no containers: expected at least one")));
    };
    first.image = Some(image.to_string());
    Ok(())
}

#[cfg(test)]
mod tests;
