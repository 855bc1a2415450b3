//! The garbage collector (background propagation) and the pvc-protection finalizer.
//!
//! When an object leaves the store, every dependent whose ownerReferences name it is looked at:
//! if none of its owners exists any more it is deleted (pods gracefully, claims through
//! pvc-protection, revisions at once); if another owner still exists, only the dangling
//! reference is removed. The StatefulSet retention policy needs nothing special here: the core
//! expresses it as ownerReferences (set-owned claims go with the set, pod-owned claims with the
//! pod). When a pod leaves, terminating claims it was the last user of are released.
//!
//! The real collector works from its own informers and takes a moment: optionally (`gc
//! delay=DUR`, [`Gc::delay_ms`]) the collection runs that long after the owner left, so a
//! stale claim can block a scale-up for a while as it does upstream (`PodClaimIsStale`).
//!
//! Timeline: a `gc` event per pod or claim whose deletion the collector issued.
//! Owns: deciding what is collected. Must not: touch anything not named by an ownerReference.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::api;
use super::clock::{Agenda, Due};
use super::store::{Change, ChangeKind, Kind, Store};
use crate::backend::{EventKind, ObjRef, Object};

/// The collector's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gc {
    /// How long after an owner leaves its dependents are collected (0: at once).
    pub delay_ms: u64,
}

/// Reacts to a journal change: a removed object's dependents are collected (now, or after the
/// collector's delay).
pub fn observe(gc: Gc, change: &Change, store: &mut Store, agenda: &mut Agenda) {
    if change.kind != ChangeKind::Deleted {
        return;
    }
    let meta = change.object.metadata();
    let ns = meta.namespace.clone().unwrap_or_else(|| "default".into());
    if matches!(change.object, Object::Pod(_)) {
        api::release_claims(store, &ns);
    }
    if let Some(uid) = meta.uid.as_deref() {
        match gc.delay_ms {
            0 => collect(store, &ns, uid),
            delay => {
                let at = store.clock().now_ms().saturating_add(delay);
                agenda.schedule(at, Due::Collect { ns, uid: uid.to_string() });
            }
        }
    }
}

/// The ownerReferences of a dependent that still point at an existing object.
fn live_owner_uids(store: &Store, ns: &str, meta: &ObjectMeta) -> Vec<String> {
    meta.owner_references
        .iter()
        .flatten()
        .filter(|r| store.exists_with_uid(&r.kind, ns, &r.name, &r.uid))
        .map(|r| r.uid.clone())
        .collect()
}

fn strip_dangling<T: Kind>(store: &mut Store, key: &ObjRef, live: &[String]) {
    let _ = store.modify::<T>(key, |o| {
        if let Some(refs) = o.metadata_mut().owner_references.as_mut() {
            refs.retain(|r| live.contains(&r.uid));
        }
    });
}

/// Collects the dependents of the (now absent) owner `owner_uid` in namespace `ns`.
pub fn collect(store: &mut Store, ns: &str, owner_uid: &str) {
    for (kind, key) in store.dependents_of(owner_uid) {
        if key.namespace != ns {
            continue;
        }
        let meta = match kind {
            "Pod" => store.get::<Pod>(&key).map(|o| o.metadata.clone()),
            "PersistentVolumeClaim" => {
                store.get::<PersistentVolumeClaim>(&key).map(|o| o.metadata.clone())
            }
            "ControllerRevision" => {
                store.get::<ControllerRevision>(&key).map(|o| o.metadata.clone())
            }
            _ => None,
        };
        let Some(meta) = meta else { continue };
        let live = live_owner_uids(store, ns, &meta);
        if !live.is_empty() {
            match kind {
                "Pod" => strip_dangling::<Pod>(store, &key, &live),
                "PersistentVolumeClaim" => {
                    strip_dangling::<PersistentVolumeClaim>(store, &key, &live)
                }
                _ => strip_dangling::<ControllerRevision>(store, &key, &live),
            }
            continue;
        }
        if meta.deletion_timestamp.is_some() {
            continue;
        }
        match kind {
            "Pod" => {
                store.note_in(
                    &key.namespace,
                    EventKind::Gc { pod: Some(key.name.clone()), pvc: None },
                );
                let _ = api::delete_pod(store, &key, false);
            }
            "PersistentVolumeClaim" => {
                store.note_in(
                    &key.namespace,
                    EventKind::Gc { pod: None, pvc: Some(key.name.clone()) },
                );
                let _ = api::delete_claim(store, &key);
            }
            _ => {
                let _ = api::delete_revision(store, &key);
            }
        }
    }
}
