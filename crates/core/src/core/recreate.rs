//! The Recreate update strategy (spec 3.8; upstream v1.37 `recreateDeleteAndWait` and
//! `setProgressingCondition`): every created pod not on the update revision is deleted at once,
//! nothing is created until all of them are gone, then the replicas are created as the pod
//! management policy says.
//!
//! Owns: the first two phases (delete, wait for termination) and the `Progressing` condition
//! (its words and rule live in `condition`). Must not touch: the creation phase (the ordinary
//! replica pass of `update` runs it) or the status write decision.

use super::batch::{Flow, run_for_all};
use super::ctx::Ctx;
use super::facts::Slot;
use super::types::{Blocker, DeleteReason};

pub use super::condition::{
    COMPLETED, CREATING, DELETING, DONE, IN_PROGRESS, PROGRESSING, progressing, set_progressing,
};

/// Burst batch numbers of the deletion burst: apart from the replica (0…) and condemned
/// (`1 << 16`…) passes of the same sync.
const BATCH_BASE: u32 = 1 << 17;

/// What the first two phases found: the old-revision pods that are still there (terminating
/// or deleted this sync), in the order of the pass (replicas by ordinal, then the condemned).
#[derive(Debug, Default)]
pub(crate) struct Phase {
    pub old: Vec<String>,
}

impl Phase {
    /// Whether creation must wait: some old-revision pod exists.
    pub fn waiting(&self) -> bool {
        !self.old.is_empty()
    }

    /// The blocker a waiting sync reports: the pods it waits for.
    pub fn blocker(&self) -> Option<Blocker> {
        let left = i32::try_from(self.old.len()).unwrap_or(i32::MAX);
        self.waiting().then(|| Blocker::Recreate {
            pods: self.old.iter().take(super::types::RECREATE_NAMED).cloned().collect(),
            left,
        })
    }
}

impl Ctx<'_> {
    /// Upstream `recreateDeleteAndWait` over the replica slots (placeholders included, skipped
    /// as not created) and the condemned ones: a burst (`slowStartBatch`) whose every item
    /// deletes its pod when the pod is created, not on the update revision and not yet
    /// terminating. The delete is the same call whatever the pod; its reason says why the
    /// timeline shows it: out of range (scale-down), Failed/Succeeded, or the recreate itself.
    #[doc(alias = "recreateDeleteAndWait")]
    pub(crate) fn recreate_delete_and_wait(
        &mut self,
        replicas: &[Slot<'_>],
        condemned: &[Slot<'_>],
    ) -> Phase {
        let set = self.inp.set;
        let mut phase = Phase::default();
        let all = replicas.len() + condemned.len();
        let slot = |i: usize| {
            if i < replicas.len() { &replicas[i] } else { &condemned[i - replicas.len()] }
        };
        run_for_all(all, false, |i, b| {
            let s = slot(i);
            let f = &s.f;
            let Some(p) = s.pod.filter(|_| f.created && !f.revision.is_update()) else {
                return Flow::default();
            };
            let name = super::pod::name(p);
            phase.old.push(name.to_string());
            if f.terminating {
                return Flow::default();
            }
            let reason = if !super::spec::in_range(set, f.ordinal) {
                DeleteReason::ScaleDown
            } else if f.terminal {
                DeleteReason::Failed
            } else {
                DeleteReason::Recreate
            };
            let start = self.sink.effects.len();
            self.delete(name, reason);
            if let Some(b) = b {
                self.sink.note_item(start, b | BATCH_BASE);
            }
            Flow::default()
        });
        phase
    }
}
