//! Choosing the current and update revision on every sync (spec 2.5 `getStatefulSetRevisions`):
//! reuse, rollback by renumbering, semantic comparison, creation with collision handling.
//!
//! OWNER: core-rev helper. Signatures are the contract with the sync (`reconcile`).

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};

use super::types::{Effect, SyncError};

/// The outcome of spec 2.5.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub current: ControllerRevision,
    pub update: ControllerRevision,
    /// `status.collisionCount` plus any increments from this sync.
    pub collision_count: i32,
    /// CreateRevision / UpdateRevision effects, in order.
    pub effects: Vec<Effect>,
}

/// Spec 2.5. `listed` is the sorted output of `claim::list_revisions`; `all_in_namespace` is
/// every revision in the namespace (a name clash with a foreign revision is a hash collision).
#[doc(alias = "getStatefulSetRevisions")]
pub fn resolve(
    set: &StatefulSet,
    listed: &[&ControllerRevision],
    all_in_namespace: &[&ControllerRevision],
) -> Result<Resolved, SyncError> {
    let _ = (set, listed, all_in_namespace);
    Err(SyncError { message: "revision resolution is not implemented yet".into(), retry: true })
}
