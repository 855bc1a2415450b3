//! Pod and revision ownership (spec 1.2 step 3, 1.3, 2.6): which pods and ControllerRevisions a
//! sync works on, and the adopt/release patches upstream's ControllerRefManager would issue.
//!
//! OWNER: core-rev helper. Signatures are the contract with the sync (`reconcile`).

use std::borrow::Cow;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;

use super::types::{Effect, SyncError};

/// The pods a sync works on: kept and adopted (adopted ones carry the new ownerRef).
#[derive(Debug, Default)]
pub struct Claimed<'a> {
    pub pods: Vec<Cow<'a, Pod>>,
    /// AdoptPod / ReleasePod effects, in upstream order.
    pub effects: Vec<Effect>,
}

/// Spec 1.3: claim pods from *all* pods of the namespace.
#[doc(alias = "getPodsForStatefulSet")]
pub fn claim_pods<'a>(set: &StatefulSet, all_pods: &[&'a Pod]) -> Result<Claimed<'a>, SyncError> {
    let _ = set;
    Ok(Claimed { pods: all_pods.iter().map(|p| Cow::Borrowed(*p)).collect(), effects: Vec::new() })
}

/// The revisions a sync works on: owned by the set or orphaned (and then adopted), sorted
/// ascending by `.revision`, ties by creationTimestamp then name (spec 2.5, 2.6).
#[derive(Debug, Default)]
pub struct ListedRevisions<'a> {
    pub revisions: Vec<Cow<'a, ControllerRevision>>,
    /// AdoptRevision effects.
    pub effects: Vec<Effect>,
}

/// Spec 2.6 and 1.2 step 3 (`adoptOrphanRevisions`).
#[doc(alias = "ListRevisions")]
#[doc(alias = "adoptOrphanRevisions")]
pub fn list_revisions<'a>(
    set: &StatefulSet,
    all: &[&'a ControllerRevision],
) -> Result<ListedRevisions<'a>, SyncError> {
    let _ = set;
    Ok(ListedRevisions {
        revisions: all.iter().map(|r| Cow::Borrowed(*r)).collect(),
        effects: Vec::new(),
    })
}
