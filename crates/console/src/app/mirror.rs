//! [`Mirror`]: the console's copy of the objects a backend reports (StatefulSets, Pods,
//! PersistentVolumeClaims, ControllerRevisions, PodDisruptionBudgets), applied from [`BackendEvent::Applied`] and
//! [`BackendEvent::Deleted`], with pods indexed by set and ordinal.
//!
//! Owns the object maps and their indexes. Must not interpret objects beyond indexing (status
//! words, colours and explanations belong to the selectors in `view.rs` and to `core`), and
//! must never be written except through [`Mirror::apply`] / [`Mirror::delete`], called by the
//! reducer.
//!
//! [`BackendEvent::Applied`]: crate::backend::BackendEvent::Applied
//! [`BackendEvent::Deleted`]: crate::backend::BackendEvent::Deleted

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::facts;
use crate::backend::{ObjKind, ObjRef, Object, Scope};
use crate::core::labels::parent_and_ordinal;

/// The namespace used when an object has none.
pub use crate::backend::DEFAULT_NAMESPACE;

/// The objects a backend reported, as of the last event applied.
#[derive(Debug, Clone, Default)]
pub struct Mirror {
    sets: BTreeMap<ObjRef, Arc<StatefulSet>>,
    pods: BTreeMap<ObjRef, Arc<Pod>>,
    /// `(namespace, parent name)` → ordinal → pod, for every pod named `<parent>-<N>` (the
    /// same allocation as in `pods`: walking a set's pods looks nothing up).
    ordinals: BTreeMap<ObjRef, BTreeMap<i32, Arc<Pod>>>,
    claims: BTreeMap<ObjRef, Arc<PersistentVolumeClaim>>,
    revisions: BTreeMap<ObjRef, Arc<ControllerRevision>>,
    /// The PodDisruptionBudgets of the open set's namespace (what a step may disrupt).
    budgets: BTreeMap<ObjRef, Arc<PodDisruptionBudget>>,
    /// The open set's namespace's Evictions (`lifecycle.k8s.io/v1alpha1`, where served).
    evictions: BTreeMap<ObjRef, Arc<crate::backend::lifecycle::Eviction>>,
    /// The Events about the open set and the selected pod (not counted in `generation`: the
    /// advisor does not read them).
    events: super::events::EventLog,
    /// Bumped on every change that altered an object; the advisor recomputes when it moved.
    generation: u64,
}

impl Mirror {
    /// Adds or replaces an object. Returns whether anything changed (an identical re-send,
    /// e.g. a relist, changes nothing).
    pub fn apply(&mut self, obj: Object) -> bool {
        let changed = match obj {
            Object::Set(s) => put(&mut self.sets, s),
            Object::Claim(c) => put(&mut self.claims, c),
            Object::Revision(r) => put(&mut self.revisions, r),
            Object::Budget(b) => put(&mut self.budgets, b),
            Object::Eviction(e) => put(&mut self.evictions, e),
            Object::Event(e) => return self.events.apply(e),
            Object::Pod(p) => {
                let changed = put(&mut self.pods, Arc::clone(&p));
                if changed {
                    self.index_pod(p);
                }
                changed
            }
        };
        if changed {
            self.generation += 1;
        }
        changed
    }

    /// Removes an object (its last state is only used for its name). Returns whether it was
    /// present.
    pub fn delete(&mut self, obj: &Object) -> bool {
        let removed = match obj {
            Object::Set(s) => self.sets.remove(&ObjRef::of(s.metadata())).is_some(),
            Object::Claim(c) => self.claims.remove(&ObjRef::of(c.metadata())).is_some(),
            Object::Revision(r) => self.revisions.remove(&ObjRef::of(r.metadata())).is_some(),
            Object::Budget(b) => self.budgets.remove(&ObjRef::of(b.metadata())).is_some(),
            Object::Eviction(e) => self.evictions.remove(&ObjRef::of(&e.metadata)).is_some(),
            Object::Event(e) => return self.events.delete(e),
            Object::Pod(p) => {
                let key = ObjRef::of(p.metadata());
                let removed = self.pods.remove(&key).is_some();
                if let Some((parent, ordinal)) = ordinal_key(&key)
                    && let Some(m) = self.ordinals.get_mut(&parent)
                {
                    // Only if the index holds this pod (`web-01` and `web-1` share ordinal 1).
                    if m.get(&ordinal)
                        .is_some_and(|p| p.metadata.name.as_deref() == Some(key.name.as_str()))
                    {
                        m.remove(&ordinal);
                    }
                    if m.is_empty() {
                        self.ordinals.remove(&parent);
                    }
                }
                removed
            }
        };
        if removed {
            self.generation += 1;
        }
        removed
    }

    /// Replaces every object of `kind` inside `scope` with `objects` (a complete listing: what
    /// it lacks is gone). Returns whether anything changed.
    pub fn replace(&mut self, kind: ObjKind, scope: &Scope, objects: Vec<Object>) -> bool {
        let keep: std::collections::BTreeSet<ObjRef> =
            objects.iter().map(|o| ObjRef::of(o.metadata())).collect();
        let stale: Vec<Object> = match kind {
            ObjKind::Set => stale_in(&self.sets, scope, &keep, Object::Set),
            ObjKind::Pod => stale_in(&self.pods, scope, &keep, Object::Pod),
            ObjKind::Claim => stale_in(&self.claims, scope, &keep, Object::Claim),
            ObjKind::Revision => stale_in(&self.revisions, scope, &keep, Object::Revision),
            ObjKind::Budget => stale_in(&self.budgets, scope, &keep, Object::Budget),
            ObjKind::Eviction => stale_in(&self.evictions, scope, &keep, Object::Eviction),
            ObjKind::Event => return self.replace_events(scope, objects),
        };
        let mut changed = false;
        for o in &stale {
            changed |= self.delete(o);
        }
        for o in objects.into_iter().filter(|o| o.kind() == kind) {
            changed |= self.apply(o);
        }
        changed
    }

    fn index_pod(&mut self, pod: Arc<Pod>) {
        if let Some((parent, ordinal)) = ordinal_key(&ObjRef::of(pod.metadata())) {
            self.ordinals.entry(parent).or_default().insert(ordinal, pod);
        }
    }

    /// A listing of the Events about `scope.about` (`Kind/name`) in its namespace.
    fn replace_events(&mut self, scope: &Scope, objects: Vec<Object>) -> bool {
        let Some((kind, name)) = scope.about.as_deref().and_then(|a| a.split_once('/')) else {
            return false;
        };
        let ns = scope.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
        let listed = objects
            .into_iter()
            .filter_map(|o| match o {
                Object::Event(e) => Some(e),
                _ => None,
            })
            .collect();
        self.events.replace(kind, ns, name, listed)
    }

    /// Forgets the Events about pods other than `keep` (the selection moved).
    pub fn keep_pod_events(&mut self, keep: Option<&ObjRef>) -> bool {
        self.events.keep_pod(keep)
    }

    /// The Events held: about the open set and the selected pod.
    pub fn events(&self) -> &super::events::EventLog {
        &self.events
    }

    /// Changes so far; compare two readings to know whether the mirror moved.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// All StatefulSets, by namespace then name.
    pub fn sets(&self) -> impl Iterator<Item = (&ObjRef, &StatefulSet)> {
        self.sets.iter().map(|(k, v)| (k, &**v))
    }

    /// The names of the sets, for attributing timeline lines (a few sets: a small Vec).
    pub fn set_names(&self) -> Vec<&str> {
        self.sets.keys().map(|k| k.name.as_str()).collect()
    }

    pub fn set(&self, r: &ObjRef) -> Option<&StatefulSet> {
        self.sets.get(r).map(|s| &**s)
    }

    pub fn claim(&self, r: &ObjRef) -> Option<&PersistentVolumeClaim> {
        self.claims.get(r).map(|c| &**c)
    }

    pub fn pod(&self, r: &ObjRef) -> Option<&Pod> {
        self.pods.get(r).map(|p| &**p)
    }

    /// The pod's first container image: its spec's where the pod holds one (the simulator);
    /// else its revision's template (the revision its `controller-revision-hash` label names,
    /// what the controller built it from: a cluster's pods arrive without container specs,
    /// `cluster::lean`); else what its first container runs (`status.containerStatuses`).
    pub fn pod_image<'a>(&'a self, pod: &'a Pod) -> Option<&'a str> {
        let spec = pod.spec.as_ref().and_then(|s| s.containers.first()?.image.as_deref());
        spec.or_else(|| {
            let ns = pod.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
            let rev = self.revisions.get(&ObjRef::new(ns, facts::pod_revision(pod)?))?;
            facts::revision_image(rev)
        })
        .or_else(|| {
            let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
            statuses.first()?.image.as_str().into()
        })
        .filter(|i| !i.is_empty())
    }

    /// The pod named `<set>-<ordinal>` in the set's namespace, if it exists and no other
    /// controller owns it.
    pub fn pod_at(&self, set: &ObjRef, ordinal: i32) -> Option<&Pod> {
        let pod = self.ordinals.get(set)?.get(&ordinal)?;
        let uid = self.sets.get(set).and_then(|s| s.metadata.uid.as_deref());
        let other = crate::core::claim::controller_of(&pod.metadata)
            .is_some_and(|o| uid.is_some_and(|u| o.uid != u));
        (!other).then_some(&**pod)
    }

    /// The set's pods in ordinal order: those the controller counts as the set's (its
    /// ownership, selector and naming rules, `ClaimEnv::claims`).
    pub fn pods_of<'a>(&'a self, set: &ObjRef) -> impl Iterator<Item = (i32, &'a Pod)> + 'a {
        let env = self.sets.get(set).and_then(|s| crate::core::claim::ClaimEnv::new(s).ok());
        self.ordinals.get(set).into_iter().flat_map(|m| m.iter()).filter_map(move |(o, pod)| {
            env.as_ref().is_none_or(|e| e.claims(pod)).then_some((*o, &**pod))
        })
    }

    /// Every pod indexed under `set`'s name (`<set>-<N>`), in ordinal order, claimed or not:
    /// what the grid's memo walks (`GridView::build_memo`).
    pub fn indexed<'a>(
        &'a self,
        set: &ObjRef,
    ) -> impl Iterator<Item = (i32, &'a Arc<Pod>)> + Clone + 'a {
        self.ordinals.get(set).into_iter().flat_map(|m| m.iter()).map(|(o, p)| (*o, p))
    }

    /// The lowest and highest ordinal the grid shows for `set`: the desired range
    /// `[start, start + replicas)` widened to every existing pod (condemned ordinals stay
    /// visible until they are gone). `None` when the set is unknown or has nothing to show.
    pub fn ordinal_span(&self, set: &ObjRef) -> Option<(i32, i32)> {
        let s = self.sets.get(set)?;
        let start = crate::core::spec::start_ordinal(s);
        let replicas = crate::core::spec::replicas(s);
        // The lowest and highest claimed pods, looked for from each end of the ordinal index
        // (not a walk over every pod: this runs on every change of the mirror).
        let env = crate::core::claim::ClaimEnv::new(s).ok();
        let claimed =
            |(o, pod): (&i32, &Arc<Pod>)| env.as_ref().is_none_or(|e| e.claims(pod)).then_some(*o);
        let index = self.ordinals.get(set);
        let lo_pod = index.and_then(|m| m.iter().find_map(claimed));
        let hi_pod = index.and_then(|m| m.iter().rev().find_map(claimed));
        // As far as the grid draws placeholders (`shown_end`), never per replica.
        let range_end = crate::app::view::grid::shown_end(
            start,
            start.saturating_add(replicas),
            hi_pod.map(|p| p.saturating_add(1)),
        );
        let (mut lo, mut hi) = if replicas > 0 && range_end > start {
            (Some(start), Some(range_end - 1))
        } else {
            (None, None)
        };
        if let Some(p) = lo_pod {
            lo = Some(lo.map_or(p, |l| l.min(p)));
        }
        if let Some(p) = hi_pod {
            hi = Some(hi.map_or(p, |h| h.max(p)));
        }
        Some((lo?, hi?))
    }

    /// Every pod in `namespace` (what a pod lister returns).
    pub fn pods_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Pod> + 'a {
        self.pods.iter().filter(move |(k, _)| k.namespace == namespace).map(|(_, v)| &**v)
    }

    /// Every claim in `namespace`.
    pub fn claims_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a PersistentVolumeClaim> + 'a {
        self.claims.iter().filter(move |(k, _)| k.namespace == namespace).map(|(_, v)| &**v)
    }

    /// The Evictions of the pod `name` with `uid` (what its detail shows).
    pub fn evictions_of<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        uid: &'a str,
    ) -> impl Iterator<Item = &'a crate::backend::lifecycle::Eviction> + 'a {
        self.evictions
            .iter()
            .filter(move |(k, e)| k.namespace == namespace && e.targets(name, uid))
            .map(|(_, v)| &**v)
    }

    /// Every PodDisruptionBudget in `namespace`.
    pub fn budgets_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a PodDisruptionBudget> + 'a {
        self.budgets.iter().filter(move |(k, _)| k.namespace == namespace).map(|(_, v)| &**v)
    }

    /// Every ControllerRevision in `namespace`.
    pub fn revisions_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a ControllerRevision> + 'a {
        self.revisions.iter().filter(move |(k, _)| k.namespace == namespace).map(|(_, v)| &**v)
    }

    /// The set's revision history, oldest first (by `.revision`, then name): revisions whose
    /// controller ownerRef is the set's uid, or orphans named `<set>-<hash>`.
    pub fn revisions_of<'a>(&'a self, set: &ObjRef) -> Vec<&'a ControllerRevision> {
        let uid = self.sets.get(set).and_then(|s| s.metadata.uid.clone());
        let prefix = format!("{}-", set.name);
        let mut out: Vec<&ControllerRevision> = self
            .revisions
            .iter()
            .filter(|(k, _)| k.namespace == set.namespace)
            .map(|(_, v)| &**v)
            .filter(|r| {
                let owners = r.metadata.owner_references.as_deref().unwrap_or_default();
                match owners.iter().find(|o| o.controller == Some(true)) {
                    Some(o) => uid.as_deref() == Some(o.uid.as_str()),
                    None => r.metadata.name.as_deref().is_some_and(|n| n.starts_with(&prefix)),
                }
            })
            .collect();
        out.sort_by(|a, b| a.revision.cmp(&b.revision).then(a.metadata.name.cmp(&b.metadata.name)));
        out
    }
}

/// The objects of `map` inside `scope` whose keys are not in `keep`, as [`Object`]s (shared,
/// not copied: only their metadata is read, to delete them).
fn stale_in<T: Metadata<Ty = ObjectMeta>>(
    map: &BTreeMap<ObjRef, Arc<T>>,
    scope: &Scope,
    keep: &std::collections::BTreeSet<ObjRef>,
    wrap: impl Fn(Arc<T>) -> Object,
) -> Vec<Object> {
    map.iter()
        .filter(|(k, v)| !keep.contains(*k) && scope.covers(v.metadata()))
        .map(|(_, v)| wrap(Arc::clone(v)))
        .collect()
}

/// Stores `obj` (shared with the backend that reported it: the simulator's store holds the same
/// allocation, so 10,000 pods are held once, not twice).
fn put<T: Metadata<Ty = ObjectMeta> + PartialEq>(
    map: &mut BTreeMap<ObjRef, Arc<T>>,
    obj: Arc<T>,
) -> bool {
    let key = ObjRef::of(obj.metadata());
    match map.get(&key) {
        Some(old) if Arc::ptr_eq(old, &obj) || **old == *obj => false,
        _ => {
            map.insert(key, obj);
            true
        }
    }
}

/// `(namespace, parent)` and ordinal of a pod named `<parent>-<N>` with N ≥ 0.
fn ordinal_key(pod: &ObjRef) -> Option<(ObjRef, i32)> {
    let (parent, ordinal) = parent_and_ordinal(&pod.name)?;
    (ordinal >= 0).then(|| (ObjRef::new(pod.namespace.clone(), parent), ordinal))
}
