//! The event handlers of spec 1.4 and 1.5 (upstream `addPod`, `updatePod`, `deletePod`,
//! `enqueueStatefulSet`): which set a change of a pod or a set puts on the queue.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use super::{ChangeKind, Controller, Read, Seen, Timers};
use crate::backend::{ObjRef, Object};
use crate::core::pod::is_ready;

fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

fn key_of(meta: &ObjectMeta) -> ObjRef {
    ObjRef::new(
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// Whether a (non-empty) selector matches `labels`, as `GetPodStatefulSets` uses it: an empty
/// selector selects nothing here, nor does one that does not compile (`LabelSelectorAsSelector`
/// refuses it; the API server never stores one).
pub fn selector_matches(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let empty = sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && sel.match_expressions.as_deref().unwrap_or_default().is_empty();
    !empty
        && crate::core::selector::Selector::from_label_selector(Some(sel))
            .is_ok_and(|s| s.matches(Some(labels)))
}

/// Resolves a controller ref to a set key (kind, name in the namespace, uid).
fn resolve<R: Read + ?Sized>(r: &R, ns: &str, owner: &OwnerReference) -> Option<ObjRef> {
    if owner.kind != "StatefulSet" {
        return None;
    }
    let key = ObjRef::new(ns, &owner.name);
    let set = r.set(&key)?;
    (set.metadata.uid.as_deref() == Some(owner.uid.as_str())).then_some(key)
}

fn matching_sets<R: Read + ?Sized>(r: &R, pod: &Pod) -> Vec<ObjRef> {
    let empty = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    r.sets_in(ns)
        .into_iter()
        .filter(|s| selector_matches(&s.spec.selector, labels))
        .map(|s| key_of(&s.metadata))
        .collect()
}

impl Controller {
    /// The event handlers: a set's change enqueues it; a pod's change enqueues its controller
    /// (old and new), or every set whose selector matches an orphan; a pod turning Ready
    /// requeues its set after `minReadySeconds`.
    pub fn observe<R: Read>(&mut self, change: Seen<'_>, r: &R, t: &mut dyn Timers) {
        let pod = match change.object {
            Object::Set(s) => return self.enqueue(key_of(&s.metadata)),
            Object::Pod(p) => p,
            _ => return,
        };
        let ns = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let new_ref = controller_ref(&pod.metadata);
        let deleting = change.kind == ChangeKind::Deleted
            || (change.kind == ChangeKind::Added && pod.metadata.deletion_timestamp.is_some());
        if deleting {
            if let Some(key) = new_ref.and_then(|o| resolve(r, &ns, o)) {
                self.enqueue(key);
            }
            return;
        }
        let old = match change.old {
            Some(Object::Pod(old)) => Some(old.as_ref()),
            _ => None,
        };
        let old_ref = old.and_then(|o| controller_ref(&o.metadata));
        if change.kind == ChangeKind::Modified
            && old_ref != new_ref
            && let Some(key) = old_ref.and_then(|o| resolve(r, &ns, o))
        {
            self.enqueue(key);
        }
        if let Some(o) = new_ref {
            let Some(key) = resolve(r, &ns, o) else { return };
            self.enqueue(key.clone());
            let became_ready = old.is_some_and(|o| !is_ready(o)) && is_ready(pod);
            let min_ready = r.set(&key).and_then(|s| s.spec.min_ready_seconds).unwrap_or(0);
            if became_ready && min_ready > 0 {
                // "+ 1 s to avoid millisecond skew" until v1.36 made the requeues exact.
                let skew = u64::from(!self.options.semantics.precise_availability_requeue);
                let delay = (u64::try_from(min_ready).unwrap_or(0) + skew) * 1000;
                self.enqueue_after(key, delay, r.now_ms(), t);
            }
            return;
        }
        let changed = match old {
            None => true,
            Some(o) => o.metadata.labels != pod.metadata.labels || old_ref != new_ref,
        };
        if changed {
            for key in matching_sets(r, pod) {
                self.enqueue(key);
            }
        }
    }
}
