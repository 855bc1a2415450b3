//! ControllerRevision mechanics (spec 2.1–2.4, 2.7): the template patch a revision stores (as Go
//! would serialize it), the FNV-1 hash and its safe encoding, revision equality, applying a
//! revision to a set, and history truncation.
//!
//! OWNER: core-rev helper. Signatures are the contract with the sync (`reconcile`).

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};

use super::types::{Effect, SyncError};

/// Spec 2.1 `ApplyRevision`: the set with its `spec.template` replaced by the stored one.
#[doc(alias = "ApplyRevision")]
pub fn apply_revision(
    set: &StatefulSet,
    revision: &ControllerRevision,
) -> Result<StatefulSet, SyncError> {
    let _ = revision;
    Ok(set.clone())
}

/// Spec 2.7 `truncateHistory`: delete the oldest non-live revisions beyond the limit.
/// `listed` is sorted ascending (as listed at the start of the sync); `live` holds the current
/// and update revision names and every claimed pod's revision label.
#[doc(alias = "truncateHistory")]
pub fn truncate_history(
    set: &StatefulSet,
    listed: &[&ControllerRevision],
    live: &HashSet<&str>,
) -> Vec<Effect> {
    let _ = (set, listed, live);
    Vec::new()
}
