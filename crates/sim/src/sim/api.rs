//! The API-server layer over the [`Store`]: what a create, update or delete does beyond storing
//! the object. StatefulSets are defaulted and validated; pods get phase Pending and a node on
//! create and are deleted gracefully (deletionTimestamp; the kubelet finishes the job) unless
//! forced or already terminated; claims in use by a pod wait for it (pvc-protection); a
//! StatefulSet is deleted with cascade background (the garbage collector removes dependents) or
//! orphan (dependents lose their ownerReference to it first).
//!
//! Owns: the semantics of each verb. Must not: run the controller, the kubelet or the collector.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimStatus, Pod, PodCondition, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::SignedDuration;

use super::checks;
use super::store::{Kind, Store, StoreError, key_of};
use super::validate::{self, ValidationError};
use crate::backend::ObjRef;
use crate::core::Semantics;

/// The node every simulated pod is scheduled to.
pub const NODE_NAME: &str = "sim-node";
/// The finalizer that keeps a claim while a pod uses it.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// Upstream's default `terminationGracePeriodSeconds`.
const DEFAULT_GRACE_SECONDS: i64 = 30;

/// How a StatefulSet deletion treats its dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cascade {
    /// The set goes now; the garbage collector deletes what it owned.
    #[default]
    Background,
    /// Dependents lose their ownerReference to the set and stay.
    Orphan,
}

/// Why the API refused a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Validation failed; the message is what the API server would say.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// A claim the pod needs is being deleted (upstream: "pvc … is being deleted").
    #[error("persistentvolumeclaim {0} is being deleted")]
    ClaimTerminating(ObjRef),
    /// A ResourceQuota's pod count is reached (403, as the quota admission plugin says it).
    #[error("{0}")]
    Quota(String),
    /// A precondition (resourceVersion, uid) no longer holds: the object changed.
    #[error("{0}")]
    Conflict(String),
    /// An eviction refused by a disruption budget (or because the pod has several): the HTTP
    /// code (429, 403, 500), the API server's message, the budget's cause, the seconds a 429
    /// suggests waiting (0: none said), and the budget.
    #[error("{message}{}", cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Refused {
        code: u16,
        message: String,
        cause: Option<String>,
        retry_after: u32,
        budget: Option<String>,
    },
}

/// What a delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// The object is gone.
    Removed,
    /// A deletionTimestamp was set; it goes later (kubelet, finalizer).
    Terminating,
    /// It was already terminating; nothing changed.
    AlreadyTerminating,
}

/// API defaulting (`SetDefaults_StatefulSet` and the pod/claim template defaulters).
fn default_set(set: &mut StatefulSet, semantics: &Semantics) {
    crate::core::defaults::set_defaults_stateful_set(set, semantics);
}

/// The most replicas one simulated set may have: the simulator holds every pod in memory (a few
/// KB each), and the controller port allocates per replica as upstream does.
pub const MAX_SIM_REPLICAS: i32 = crate::core::spec::MAX_MODELLED_REPLICAS;

/// Refuses what the simulator cannot hold (the API server would accept it; a real cluster would
/// then fail elsewhere), as an invalid value naming the limit.
fn capacity(set: &StatefulSet) -> Result<(), ApiError> {
    let replicas = set.spec.replicas.unwrap_or(1);
    if replicas <= MAX_SIM_REPLICAS {
        return Ok(());
    }
    let name = set.metadata.name.clone().unwrap_or_default();
    Err(ValidationError {
        kind: "StatefulSet.apps",
        name,
        errors: vec![validate::FieldError::invalid(
            "spec.replicas",
            replicas.into(),
            format!("the simulator holds at most {MAX_SIM_REPLICAS} replicas per set"),
        )],
    }
    .into())
}

/// POST a StatefulSet: defaulted, validated, stored with generation 1.
pub fn create_set(
    store: &mut Store,
    mut set: StatefulSet,
    semantics: &Semantics,
) -> Result<StatefulSet, ApiError> {
    set.metadata.namespace.get_or_insert_with(|| "default".into());
    set.status = None;
    default_set(&mut set, semantics);
    validate::validate_create_with(&set, validate::SetOpts::of(semantics))?;
    capacity(&set)?;
    Ok(store.create(set)?.clone())
}

/// PUT a StatefulSet: defaulted, validated against the stored one; status is kept and
/// generation bumped when the spec changed.
pub fn update_set(
    store: &mut Store,
    mut set: StatefulSet,
    semantics: &Semantics,
) -> Result<StatefulSet, ApiError> {
    set.metadata.namespace.get_or_insert_with(|| "default".into());
    let key = key_of(&set.metadata);
    let Some(old) = store.sets().get(&key) else {
        return Err(StoreError::NotFound { kind: "StatefulSet", key }.into());
    };
    default_set(&mut set, semantics);
    validate::validate_update_with(old, &set, validate::SetOpts::of(semantics))?;
    capacity(&set)?;
    Ok(store.update_set(set)?.clone())
}

/// Create the set, or update it when one of that name exists (`kubectl apply`).
pub fn apply_set(
    store: &mut Store,
    set: StatefulSet,
    semantics: &Semantics,
) -> Result<StatefulSet, ApiError> {
    let mut key = key_of(&set.metadata);
    if set.metadata.namespace.is_none() {
        key.namespace = "default".into();
    }
    if store.sets().get(&key).is_some() {
        update_set(store, set, semantics)
    } else {
        create_set(store, set, semantics)
    }
}

/// PUT /status.
pub fn write_set_status(
    store: &mut Store,
    key: &ObjRef,
    status: StatefulSetStatus,
) -> Result<(), ApiError> {
    let old = store.sets().get(key).and_then(|s| s.status.as_ref());
    checks::set_status(&key.name, old, &status)?;
    store.write_set_status(key, status)?;
    Ok(())
}

/// DELETE a StatefulSet. Background: it goes now and the collector follows the ownerRefs.
/// Orphan: every dependent's ownerReference to it is removed first.
pub fn delete_set(store: &mut Store, key: &ObjRef, cascade: Cascade) -> Result<(), ApiError> {
    let Some(set) = store.sets().get(key) else {
        return Err(StoreError::NotFound { kind: "StatefulSet", key: key.clone() }.into());
    };
    let uid = set.metadata.uid.clone().unwrap_or_default();
    if cascade == Cascade::Orphan {
        for (kind, dep) in store.dependents_of(&uid) {
            let strip = |m: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
                if let Some(refs) = m.owner_references.as_mut() {
                    refs.retain(|r| r.uid != uid);
                }
            };
            match kind {
                "Pod" => store.modify::<Pod>(&dep, |o| strip(&mut o.metadata)).map(drop),
                "PersistentVolumeClaim" => store
                    .modify::<PersistentVolumeClaim>(&dep, |o| strip(&mut o.metadata))
                    .map(drop),
                "ControllerRevision" => {
                    store.modify::<ControllerRevision>(&dep, |o| strip(&mut o.metadata)).map(drop)
                }
                _ => Ok(()),
            }?;
        }
    }
    store.remove::<StatefulSet>(key)?;
    Ok(())
}

fn with_namespace<T: Kind>(mut obj: T, ns: &str) -> T {
    obj.metadata_mut().namespace.get_or_insert_with(|| ns.to_string());
    obj
}

/// POST a pod: scheduled at once (spec.nodeName), phase Pending.
pub fn create_pod(store: &mut Store, ns: &str, pod: Pod) -> Result<(), ApiError> {
    checks::object_meta("Pod", &pod.metadata)?;
    let mut pod = with_namespace(pod, ns);
    let key = key_of(&pod.metadata);
    for claim in claims_used_by(&pod) {
        let ck = ObjRef::new(&key.namespace, claim);
        if store.claims().get(&ck).is_some_and(|c| c.metadata.deletion_timestamp.is_some()) {
            return Err(ApiError::ClaimTerminating(ck));
        }
    }
    if let Some(&limit) = store.pod_quota.get(&key.namespace) {
        let used = store
            .pods()
            .in_namespace(&key.namespace)
            .filter(|p| {
                let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
                !matches!(phase, Some("Succeeded" | "Failed"))
            })
            .count();
        if used >= usize::try_from(limit).unwrap_or(usize::MAX) {
            return Err(ApiError::Quota(format!(
                "pods \"{}\" is forbidden: exceeded quota: pods, requested: pods=1, used: \
                 pods={used}, limited: pods={limit}",
                key.name
            )));
        }
    }
    let now = store.clock().time();
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name.get_or_insert_with(|| NODE_NAME.to_string());
    }
    pod.status = Some(PodStatus {
        phase: Some("Pending".into()),
        conditions: Some(vec![PodCondition {
            type_: "PodScheduled".into(),
            status: "True".into(),
            last_transition_time: Some(now),
            ..Default::default()
        }]),
        ..Default::default()
    });
    store.create(pod)?;
    Ok(())
}

/// PUT a pod's main resource: the stored status is kept.
pub fn update_pod(store: &mut Store, ns: &str, pod: Pod) -> Result<(), ApiError> {
    let mut pod = with_namespace(pod, ns);
    let key = key_of(&pod.metadata);
    let Some(old) = store.pods().get(&key) else {
        return Err(StoreError::NotFound { kind: "Pod", key }.into());
    };
    checks::pod_update(old, &pod)?;
    pod.status = old.status.clone();
    pod.metadata.deletion_timestamp = old.metadata.deletion_timestamp.clone();
    pod.metadata.deletion_grace_period_seconds = old.metadata.deletion_grace_period_seconds;
    store.update(pod)?;
    Ok(())
}

/// DELETE a pod. Forced, unscheduled, Failed or Succeeded pods (and a zero grace period) go
/// now, as upstream's `podStrategy.CheckGracefulDelete` decides; others get a deletionTimestamp
/// of now + grace period and the kubelet removes them after its stop delay.
pub fn delete_pod(store: &mut Store, key: &ObjRef, force: bool) -> Result<Deleted, ApiError> {
    let Some(pod) = store.pods().get(key) else {
        return Err(StoreError::NotFound { kind: "Pod", key: key.clone() }.into());
    };
    let spec = pod.spec.as_ref();
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
    let mut grace =
        spec.and_then(|s| s.termination_grace_period_seconds).unwrap_or(DEFAULT_GRACE_SECONDS);
    if spec.and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty)
        || matches!(phase, "Failed" | "Succeeded")
        || force
    {
        grace = 0;
    }
    if grace <= 0 {
        store.remove::<Pod>(key)?;
        return Ok(Deleted::Removed);
    }
    if pod.metadata.deletion_timestamp.is_some() {
        return Ok(Deleted::AlreadyTerminating);
    }
    let now = store.clock().time();
    let at = Time(now.0.saturating_add(SignedDuration::from_secs(grace)).unwrap_or(now.0));
    store.modify::<Pod>(key, |p| {
        p.metadata.deletion_timestamp = Some(at);
        p.metadata.deletion_grace_period_seconds = Some(grace);
    })?;
    Ok(Deleted::Terminating)
}

/// The claim names a pod's volumes reference.
pub fn claims_used_by(pod: &Pod) -> impl Iterator<Item = &str> {
    pod.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()))
}

fn claim_in_use(store: &Store, key: &ObjRef) -> bool {
    store.pods().in_namespace(&key.namespace).any(|p| claims_used_by(p).any(|c| c == key.name))
}

/// POST a claim: bound at once (no volumes are modelled), or Pending while the storage is
/// broken (`break-storage`).
pub fn create_claim(
    store: &mut Store,
    ns: &str,
    claim: PersistentVolumeClaim,
) -> Result<(), ApiError> {
    let mut claim = with_namespace(claim, ns);
    let phase = if store.storage_full { "Pending" } else { "Bound" };
    claim.status =
        Some(PersistentVolumeClaimStatus { phase: Some(phase.into()), ..Default::default() });
    store.create(claim)?;
    Ok(())
}

/// PUT a claim (its ownerReferences, for the retention policy); status is kept.
pub fn update_claim(
    store: &mut Store,
    ns: &str,
    claim: PersistentVolumeClaim,
) -> Result<(), ApiError> {
    let mut claim = with_namespace(claim, ns);
    let key = key_of(&claim.metadata);
    let Some(old) = store.claims().get(&key) else {
        return Err(StoreError::NotFound { kind: "PersistentVolumeClaim", key }.into());
    };
    claim.status = old.status.clone();
    claim.metadata.deletion_timestamp = old.metadata.deletion_timestamp.clone();
    claim.metadata.finalizers = old.metadata.finalizers.clone();
    store.update(claim)?;
    Ok(())
}

/// DELETE a claim: removed now unless a pod still uses it, then it terminates (pvc-protection)
/// until [`release_claims`] sees no user left.
pub fn delete_claim(store: &mut Store, key: &ObjRef) -> Result<Deleted, ApiError> {
    let Some(claim) = store.claims().get(key) else {
        return Err(StoreError::NotFound { kind: "PersistentVolumeClaim", key: key.clone() }.into());
    };
    if claim.metadata.deletion_timestamp.is_some() {
        return Ok(Deleted::AlreadyTerminating);
    }
    if !claim_in_use(store, key) {
        store.remove::<PersistentVolumeClaim>(key)?;
        return Ok(Deleted::Removed);
    }
    let now = store.clock().time();
    store.modify::<PersistentVolumeClaim>(key, |c| {
        c.metadata.deletion_timestamp = Some(now);
        let fins = c.metadata.finalizers.get_or_insert_with(Vec::new);
        if !fins.iter().any(|f| f == PVC_PROTECTION) {
            fins.push(PVC_PROTECTION.into());
        }
    })?;
    Ok(Deleted::Terminating)
}

/// pvc-protection: removes terminating claims of `ns` that no pod uses any more.
pub fn release_claims(store: &mut Store, ns: &str) {
    let done: Vec<ObjRef> = store
        .claims()
        .in_namespace(ns)
        .filter(|c| c.metadata.deletion_timestamp.is_some())
        .map(|c| key_of(&c.metadata))
        .filter(|k| !claim_in_use(store, k))
        .collect();
    for key in done {
        let _ = store.remove::<PersistentVolumeClaim>(&key);
    }
}

/// POST a ControllerRevision.
pub fn create_revision(
    store: &mut Store,
    ns: &str,
    rev: ControllerRevision,
) -> Result<(), ApiError> {
    store.create(with_namespace(rev, ns))?;
    Ok(())
}

/// PUT a ControllerRevision (a rollback renumbers it).
pub fn update_revision(
    store: &mut Store,
    ns: &str,
    rev: ControllerRevision,
) -> Result<(), ApiError> {
    store.update(with_namespace(rev, ns))?;
    Ok(())
}

/// DELETE a ControllerRevision (immediate).
pub fn delete_revision(store: &mut Store, key: &ObjRef) -> Result<(), ApiError> {
    store.remove::<ControllerRevision>(key)?;
    Ok(())
}
