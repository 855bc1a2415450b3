//! Status computation (spec section 4 and 2.9): replica counts over pod lists, the completion
//! rule with its version switches, and the "skip the write?" test of `updateStatefulSetStatus`.
//!
//! Owns: `computeReplicaStatus`, `updateStatus`, `completeRollingUpdate`/`completeUpdate`,
//! `inconsistentStatus`. Must not touch: effects other than deciding on the status write.
//!
//! From 1.37 the computed status carries the set's conditions (the Recreate strategy's
//! `Progressing`, 3.8) and a change in them is written; before, the status has none and its
//! write drops what the set had.
//!
//! Upstream findings: `completeRollingUpdate` compares against `spec.replicas` (#120731) and in
//! 1.37 lost its strategy-type check (#136833, renamed `completeUpdate`). #139307 (require
//! `availableReplicas == spec.replicas`, fixing #136831) was still open when read:
//! [`Semantics::completion_requires_available`] is off by default. `inconsistentStatus`
//! compares observedGeneration (greater), replicas, currentReplicas, readyReplicas,
//! updatedReplicas, currentRevision, availableReplicas and updateRevision, and from 1.37 the
//! conditions; never collisionCount.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};

use super::condition;
use super::facts::Facts;
use super::options::Semantics;
use super::spec;
use super::types::Now;

/// The five counts of section 4.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
    pub current: i32,
    pub updated: i32,
}

impl Counts {
    /// Adds one pod from its precomputed facts (upstream `computeReplicaStatus` body).
    #[doc(alias = "computeReplicaStatus")]
    #[inline]
    pub fn add_facts(&mut self, f: &Facts) {
        let live = f.created && !f.terminating;
        self.replicas += i32::from(f.created);
        self.ready += i32::from(f.running_ready);
        self.available += i32::from(f.running_ready && f.available);
        self.current += i32::from(live && f.revision.is_current());
        self.updated += i32::from(live && f.revision.is_update());
    }

    /// These counts less `other`'s (field by field).
    pub fn minus(self, other: Counts) -> Counts {
        Counts {
            replicas: self.replicas - other.replicas,
            ready: self.ready - other.ready,
            available: self.available - other.available,
            current: self.current - other.current,
            updated: self.updated - other.updated,
        }
    }

    /// Writes the counts into a status.
    pub fn apply(self, status: &mut StatefulSetStatus) {
        status.replicas = self.replicas;
        status.ready_replicas = Some(self.ready);
        status.available_replicas = Some(self.available);
        status.current_replicas = Some(self.current);
        status.updated_replicas = Some(self.updated);
    }
}

/// The status skeleton of 3.2 step 2: generation, revision names and the collision count, and
/// from 1.37 the set's conditions (before, none: the write drops them).
pub fn base_status(
    set: &StatefulSet,
    current: &str,
    update: &str,
    collision_count: i32,
    sem: &Semantics,
) -> StatefulSetStatus {
    StatefulSetStatus {
        observed_generation: Some(set.metadata.generation.unwrap_or(0)),
        current_revision: Some(current.into()),
        update_revision: Some(update.into()),
        collision_count: Some(collision_count),
        conditions: if sem.keeps_conditions { conditions_of(set) } else { None },
        ..Default::default()
    }
}

/// The set's stored conditions, `None` when it has none (upstream appends them to a nil slice).
fn conditions_of(
    set: &StatefulSet,
) -> Option<Vec<k8s_openapi::api::apps::v1::StatefulSetCondition>> {
    let c = set.status.as_ref()?.conditions.as_ref()?;
    (!c.is_empty()).then(|| c.clone())
}

fn n(v: Option<i32>) -> i32 {
    v.unwrap_or(0)
}

/// Spec 2.9: when every replica is updated and ready (and, with #139307, available), the
/// current revision becomes the update revision. Before 1.37 only RollingUpdate sets complete.
/// A recreating set with a `Progressing` condition has it set to `RecreateCompleted` then.
#[doc(alias = "completeUpdate")]
#[doc(alias = "completeRollingUpdate")]
pub fn complete_update(
    set: &StatefulSet,
    status: &mut StatefulSetStatus,
    sem: &Semantics,
    now: Now,
) {
    let want = spec::replicas(set);
    let type_ok = sem.on_delete_completes || spec::strategy(set).rolling;
    let available_ok = !sem.completion_requires_available || n(status.available_replicas) == want;
    if type_ok
        && n(status.updated_replicas) == want
        && n(status.ready_replicas) == want
        && status.replicas == want
        && available_ok
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision.clone_from(&status.update_revision);
        if spec::strategy(set).recreates(sem) && condition::progressing(status).is_some() {
            let (reason, message) = (condition::COMPLETED, condition::DONE);
            condition::set_progressing(status, false, reason, message, now);
        }
    }
}

/// Spec 4.3 step 3 (upstream `inconsistentStatus`): whether the status write happens.
#[doc(alias = "inconsistentStatus")]
pub fn needs_write(set: &StatefulSet, status: &StatefulSetStatus, sem: &Semantics) -> bool {
    let fallback = StatefulSetStatus::default();
    let old = set.status.as_ref().unwrap_or(&fallback);
    if sem.keeps_conditions && status.conditions != old.conditions {
        return true;
    }
    status.observed_generation.unwrap_or(0) > old.observed_generation.unwrap_or(0)
        || status.replicas != old.replicas
        || n(status.current_replicas) != n(old.current_replicas)
        || n(status.ready_replicas) != n(old.ready_replicas)
        || n(status.updated_replicas) != n(old.updated_replicas)
        || status.current_revision.as_deref().unwrap_or_default()
            != old.current_revision.as_deref().unwrap_or_default()
        || n(status.available_replicas) != n(old.available_replicas)
        || status.update_revision.as_deref().unwrap_or_default()
            != old.update_revision.as_deref().unwrap_or_default()
}

/// Whether the status says the rollout is complete (`currentRevision == updateRevision`).
pub fn rolled_out(status: &StatefulSetStatus) -> bool {
    status.current_revision.is_some() && status.current_revision == status.update_revision
}
