//! PersistentVolumeClaims (spec 3.7, upstream `stateful_pod_control.go` and the claim helpers of
//! `stateful_set_utils.go`): the claim objects a pod needs, their creation, the retention-policy
//! ownerRef table, stale claims that block scale-up, and claims being deleted.
//!
//! Owns: every claim read and claim effect of a sync. Reads go through [`ClaimIndex`], the
//! lister view at the start of the sync: like upstream's informer cache it does **not** see
//! claims created or updated earlier in the same sync (so retention ownerRefs on a claim created
//! with its pod are added by a later sync, as upstream does). Must not touch: pods or the set.
//!
//! Deviation, documented: upstream may PUT the same claim twice in one sync from a stale lister
//! copy (the second PUT then fails with a conflict); here a claim is updated at most once per
//! sync. The `ConflictingController` warning event is not modelled (events are not effects).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::newpod::set_controller_ref;
use super::pod;
use super::spec;
use super::types::Effect;

/// The lister view of the namespace's claims, by name.
#[derive(Debug, Default)]
pub struct ClaimIndex<'a> {
    by_name: HashMap<&'a str, &'a PersistentVolumeClaim>,
}

impl<'a> ClaimIndex<'a> {
    /// Indexes the claims of `namespace`.
    pub fn new(namespace: &str, claims: &[&'a PersistentVolumeClaim]) -> Self {
        let by_name = claims
            .iter()
            .filter(|c| c.metadata.namespace.as_deref().unwrap_or_default() == namespace)
            .filter_map(|c| c.metadata.name.as_deref().map(|n| (n, *c)))
            .collect();
        ClaimIndex { by_name }
    }

    pub fn get(&self, name: &str) -> Option<&'a PersistentVolumeClaim> {
        self.by_name.get(name).copied()
    }
}

/// Where claim effects go, with the once-per-sync guard for claim updates.
#[derive(Debug, Default)]
pub struct Sink {
    pub effects: Vec<Effect>,
    /// The burst items among `effects`.
    pub burst: Vec<super::types::BurstItem>,
    updated_claims: HashSet<String>,
    created_claims: HashSet<String>,
    name_buf: String,
}

impl Sink {
    pub fn push(&mut self, e: Effect) {
        self.effects.push(e);
    }

    /// The effects from `start` on are one item of burst batch `batch`.
    pub fn note_item(&mut self, start: usize, batch: u32) {
        let end = self.effects.len();
        if end > start {
            self.burst.push(super::types::BurstItem { start, end, batch });
        }
    }
}

/// `<template>-<set>-<ordinal>` in a reused buffer.
fn fill<'b>(buf: &'b mut String, template: &str, set_name: &str, ordinal: i32) -> &'b str {
    buf.clear();
    let _ = write!(buf, "{template}-{set_name}-{ordinal}");
    buf
}

/// A claim that blocks pod creation because it is being deleted (3.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimTerminating {
    pub claim: String,
}

/// An ownerRef target: the set (`apps/v1 StatefulSet`) or a pod (`v1 Pod`).
#[derive(Debug, Clone, Copy)]
struct Owner<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
}

impl<'a> Owner<'a> {
    fn set(set: &'a StatefulSet) -> Self {
        Owner {
            api_version: "apps/v1",
            kind: "StatefulSet",
            name: spec::name(set),
            uid: spec::uid(set),
        }
    }
    fn pod(p: &'a Pod) -> Self {
        Owner { api_version: "v1", kind: "Pod", name: pod::name(p), uid: pod::uid(p) }
    }
    /// Upstream `matchesRef`: same apiVersion, kind and name (not UID).
    fn matches(&self, r: &OwnerReference) -> bool {
        r.api_version == self.api_version && r.kind == self.kind && r.name == self.name
    }
    fn controller_ref(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.into(),
            kind: self.kind.into(),
            name: self.name.into(),
            uid: self.uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

fn refs(c: &PersistentVolumeClaim) -> &[OwnerReference] {
    c.metadata.owner_references.as_deref().unwrap_or_default()
}

fn is_controller(r: &OwnerReference) -> bool {
    r.controller == Some(true)
}

/// The claims for the pod at `ordinal` (upstream `getPersistentVolumeClaims`): a copy of each
/// template named `<template>-<set>-<ordinal>` in the set's namespace, labels merged with the
/// selector's matchLabels (the selector wins), no ownerRefs. In template order.
#[doc(alias = "getPersistentVolumeClaims")]
pub fn claims_for(set: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
    spec::claim_templates(set).iter().map(|t| claim_for(set, t, ordinal)).collect()
}

/// One claim of [`claims_for`].
fn claim_for(
    set: &StatefulSet,
    template: &PersistentVolumeClaim,
    ordinal: i32,
) -> PersistentVolumeClaim {
    let match_labels = set.spec.selector.match_labels.as_ref();
    let mut c = template.clone();
    let tname = template.metadata.name.as_deref().unwrap_or_default();
    c.metadata.name = Some(format!("{tname}-{}-{ordinal}", spec::name(set)));
    c.metadata.namespace = Some(spec::namespace(set).into());
    c.metadata.labels = match (c.metadata.labels.take(), match_labels) {
        (Some(mut l), Some(m)) => {
            l.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(l)
        }
        (Some(l), None) => Some(l),
        (None, m) => m.cloned(),
    };
    c.status = None;
    c
}

/// Upstream `createPersistentVolumeClaims`: CREATE each missing claim; a claim that exists with
/// a deletionTimestamp is an error ("pvc … is being deleted") that blocks pod creation. Errors
/// are aggregated: every missing claim is still created. Returns the first terminating claim.
#[doc(alias = "createPersistentVolumeClaims")]
pub fn create_claims(
    set: &StatefulSet,
    ordinal: i32,
    index: &ClaimIndex<'_>,
    sink: &mut Sink,
) -> Result<(), ClaimTerminating> {
    let mut first_err = None;
    let set_name = spec::name(set);
    for t in spec::claim_templates(set) {
        let tname = t.metadata.name.as_deref().unwrap_or_default();
        let name = fill(&mut sink.name_buf, tname, set_name, ordinal);
        match index.get(name) {
            None => {
                // The lister does not see claims created earlier in this sync: upstream would
                // POST again and get AlreadyExists (an error, no event). Not modelled twice.
                if sink.created_claims.insert(name.to_string()) {
                    let c = claim_for(set, t, ordinal);
                    sink.effects.push(Effect::CreateClaim(Box::new(c)));
                }
            }
            Some(c) if c.metadata.deletion_timestamp.is_some() => {
                if first_err.is_none() {
                    first_err = Some(ClaimTerminating { claim: name.to_string() });
                }
            }
            Some(_) => {}
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// Upstream `PodClaimIsStale`: with whenScaled=Delete, an existing claim of the pod whose first
/// ref naming the pod carries another UID (a placeholder has none) blocks creation until GC
/// removes it. Returns the stale claim's name.
#[doc(alias = "PodClaimIsStale")]
pub fn stale_claim(
    set: &StatefulSet,
    p: &Pod,
    index: &ClaimIndex<'_>,
    sink: &mut Sink,
) -> Option<String> {
    if !spec::retention(set).when_scaled_delete {
        return None;
    }
    let ordinal = pod::ordinal(p);
    let set_name = spec::name(set);
    let owner = Owner::pod(p);
    for t in spec::claim_templates(set) {
        let tname = t.metadata.name.as_deref().unwrap_or_default();
        let name = fill(&mut sink.name_buf, tname, set_name, ordinal);
        if let Some(c) = index.get(name)
            && has_stale_ref(c, owner)
        {
            return Some(name.to_string());
        }
    }
    None
}

/// Upstream `hasStaleOwnerRef`: the first ref matching the owner by apiVersion/kind/name has a
/// different UID.
fn has_stale_ref(c: &PersistentVolumeClaim, owner: Owner<'_>) -> bool {
    refs(c).iter().find(|r| owner.matches(r)).is_some_and(|r| r.uid != owner.uid)
}

/// Upstream `hasOwnerRef`: any ref with the owner's UID (controller or not).
fn has_owner_ref(c: &PersistentVolumeClaim, owner: Owner<'_>) -> bool {
    refs(c).iter().any(|r| r.uid == owner.uid)
}

/// Upstream `hasUnexpectedController`: outside Retain/Retain, a ref naming our set or pod with
/// another UID, or a controller ref to anything else.
fn has_unexpected_controller(
    c: &PersistentVolumeClaim,
    set: Owner<'_>,
    p: Owner<'_>,
    retain_retain: bool,
) -> bool {
    if retain_retain {
        return false;
    }
    refs(c).iter().any(|r| {
        if set.matches(r) {
            r.uid != set.uid
        } else if p.matches(r) {
            r.uid != p.uid
        } else {
            is_controller(r)
        }
    })
}

/// Upstream `hasNonControllerOwner`: our set or pod (by UID) owns the claim but not as
/// controller.
fn has_non_controller_owner(c: &PersistentVolumeClaim, set: Owner<'_>, p: Owner<'_>) -> bool {
    refs(c).iter().any(|r| (r.uid == set.uid || r.uid == p.uid) && !is_controller(r))
}

/// Upstream `isClaimOwnerUpToDate` (3.7): stale refs and foreign controllers leave the claim
/// alone; otherwise the refs must match the retention table.
#[doc(alias = "isClaimOwnerUpToDate")]
pub fn is_claim_owner_up_to_date(c: &PersistentVolumeClaim, set: &StatefulSet, p: &Pod) -> bool {
    let (so, po) = (Owner::set(set), Owner::pod(p));
    if has_stale_ref(c, so) || has_stale_ref(c, po) {
        return true;
    }
    let policy = spec::retention(set);
    if has_unexpected_controller(c, so, po, policy.is_retain_retain()) {
        return !(has_owner_ref(c, so) || has_owner_ref(c, po));
    }
    if has_non_controller_owner(c, so, po) {
        return false;
    }
    let (set_ref, pod_ref) = (has_owner_ref(c, so), has_owner_ref(c, po));
    let scaled_down = !spec::in_range(set, pod::ordinal(p));
    match (policy.when_scaled_delete, policy.when_deleted_delete) {
        (false, false) => !set_ref && !pod_ref,
        (false, true) => set_ref && !pod_ref,
        (true, false) => !set_ref && scaled_down == pod_ref,
        (true, true) => scaled_down != set_ref && scaled_down == pod_ref,
    }
}

/// Upstream `updateClaimOwnerRefForSetAndPod`: scrub refs naming our set or pod, then (unless a
/// foreign controller is present) add controller refs per the retention table.
#[doc(alias = "updateClaimOwnerRefForSetAndPod")]
pub fn update_claim_owner_refs(c: &mut PersistentVolumeClaim, set: &StatefulSet, p: &Pod) {
    let (so, po) = (Owner::set(set), Owner::pod(p));
    let policy = spec::retention(set);
    let unexpected = has_unexpected_controller(c, so, po, policy.is_retain_retain());
    let mut list: Vec<OwnerReference> =
        refs(c).iter().filter(|r| !so.matches(r) && !po.matches(r)).cloned().collect();
    if !unexpected {
        let scaled_down = !spec::in_range(set, pod::ordinal(p));
        let want_set = policy.when_deleted_delete && !(policy.when_scaled_delete && scaled_down);
        let want_pod = policy.when_scaled_delete && scaled_down;
        if want_pod && !list.iter().any(|r| r.uid == po.uid) {
            list.push(po.controller_ref());
        }
        if want_set && !list.iter().any(|r| r.uid == so.uid) {
            list.push(so.controller_ref());
        }
    }
    c.metadata.owner_references = Some(list);
}

/// Upstream `ClaimsMatchRetentionPolicy`: every existing claim of the pod is up to date
/// (missing claims are picked up later).
#[doc(alias = "ClaimsMatchRetentionPolicy")]
pub fn claims_match_retention_policy(
    set: &StatefulSet,
    p: &Pod,
    index: &ClaimIndex<'_>,
    sink: &mut Sink,
) -> bool {
    let ordinal = pod::ordinal(p);
    let set_name = spec::name(set);
    spec::claim_templates(set).iter().all(|t| {
        let tname = t.metadata.name.as_deref().unwrap_or_default();
        let name = fill(&mut sink.name_buf, tname, set_name, ordinal);
        index.get(name).is_none_or(|c| is_claim_owner_up_to_date(c, set, p))
    })
}

/// Upstream `UpdatePodClaimForRetentionPolicy`: PUT each existing claim whose ownerRefs are not
/// up to date, with refs fixed per the table.
#[doc(alias = "UpdatePodClaimForRetentionPolicy")]
pub fn update_pod_claims_for_retention(
    set: &StatefulSet,
    p: &Pod,
    index: &ClaimIndex<'_>,
    sink: &mut Sink,
) {
    let ordinal = pod::ordinal(p);
    let set_name = spec::name(set);
    for t in spec::claim_templates(set) {
        let tname = t.metadata.name.as_deref().unwrap_or_default();
        let name = fill(&mut sink.name_buf, tname, set_name, ordinal);
        let Some(c) = index.get(name) else { continue };
        if is_claim_owner_up_to_date(c, set, p) || sink.updated_claims.contains(name) {
            continue;
        }
        let name = name.to_string();
        let mut updated = c.clone();
        update_claim_owner_refs(&mut updated, set, p);
        sink.updated_claims.insert(name);
        sink.effects.push(Effect::UpdateClaim(Box::new(updated)));
    }
}

/// Upstream `createMissingPersistentVolumeClaims` (3.3 c, Pending pods): create missing claims,
/// then fix retention ownerRefs.
#[doc(alias = "createMissingPersistentVolumeClaims")]
pub fn create_missing_claims(
    set: &StatefulSet,
    p: &Pod,
    index: &ClaimIndex<'_>,
    sink: &mut Sink,
) -> Result<(), ClaimTerminating> {
    create_claims(set, pod::ordinal(p), index, sink)?;
    update_pod_claims_for_retention(set, p, index, sink);
    Ok(())
}

/// The set controller ref, re-exported for claim tests and explanations.
pub fn set_owner_ref(set: &StatefulSet) -> OwnerReference {
    set_controller_ref(set)
}
