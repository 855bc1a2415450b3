//! The object store: StatefulSets, Pods, PersistentVolumeClaims, ControllerRevisions, Events
//! and PodDisruptionBudgets as
//! k8s-openapi objects keyed by namespace/name, with what the API server's storage layer adds:
//! uid (from a counter), resourceVersion (one global counter), generation, creationTimestamp,
//! and a journal of watch-style changes (Added / Modified / Deleted) interleaved with timeline
//! events, in the order they happened.
//!
//! Owns: storage, bookkeeping fields and the journal. Must not: default, validate, decide
//! graceful deletion or cascade (that is `api` and `gc`), or read anything but the virtual clock.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::clock::Clock;
use crate::backend::{Event, EventKind, ObjRef, Object};

pub use crate::control::ChangeKind;

/// One watch-style change. `object` is the new state (the last state for `Deleted`); `old` is
/// the previous state for `Modified` (what upstream's update handlers compare).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub kind: ChangeKind,
    pub object: Object,
    pub old: Option<Object>,
}

/// A journal entry: a store change or a timeline event (with the namespace it is about, when
/// one is), in the order they happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Change(Change),
    Timeline(Event, Option<String>),
}

/// Why the store refused a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("{kind} {key} already exists")]
    AlreadyExists { kind: &'static str, key: ObjRef },
    #[error("{kind} {key} not found")]
    NotFound { kind: &'static str, key: ObjRef },
    #[error("{kind} needs metadata.name")]
    NoName { kind: &'static str },
}

/// A namespaced table, ordered by namespace then name. Objects are shared (`Arc`): the watch
/// events, the console's mirror and the served API's watch history hold the same allocation as
/// the table, so a pod is held once however many readers see it.
#[derive(Debug, Clone)]
pub struct Table<T> {
    by_ns: BTreeMap<String, BTreeMap<String, Arc<T>>>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table { by_ns: BTreeMap::new() }
    }
}

impl<T> Table<T> {
    pub fn get(&self, key: &ObjRef) -> Option<&T> {
        self.by_ns.get(&key.namespace)?.get(&key.name).map(|v| &**v)
    }

    /// The shared object (to hand on without copying it).
    pub fn get_shared(&self, key: &ObjRef) -> Option<&Arc<T>> {
        self.by_ns.get(&key.namespace)?.get(&key.name)
    }

    fn insert(&mut self, key: &ObjRef, v: Arc<T>) -> Option<Arc<T>> {
        self.by_ns.entry(key.namespace.clone()).or_default().insert(key.name.clone(), v)
    }

    fn remove(&mut self, key: &ObjRef) -> Option<Arc<T>> {
        let ns = self.by_ns.get_mut(&key.namespace)?;
        let v = ns.remove(&key.name);
        if ns.is_empty() {
            self.by_ns.remove(&key.namespace);
        }
        v
    }

    /// Objects of one namespace, by name.
    pub fn in_namespace<'a>(&'a self, ns: &str) -> impl Iterator<Item = &'a T> + 'a {
        self.by_ns.get(ns).into_iter().flat_map(|m| m.values().map(|v| &**v))
    }

    /// All objects, by namespace then name.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.by_ns.values().flat_map(|m| m.values().map(|v| &**v))
    }

    /// Objects of one namespace, shared, by name.
    pub fn in_namespace_shared<'a>(&'a self, ns: &str) -> impl Iterator<Item = &'a Arc<T>> + 'a {
        self.by_ns.get(ns).into_iter().flat_map(|m| m.values())
    }

    /// All objects, shared, by namespace then name.
    pub fn iter_shared(&self) -> impl Iterator<Item = &Arc<T>> {
        self.by_ns.values().flat_map(|m| m.values())
    }

    pub fn len(&self) -> usize {
        self.by_ns.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_ns.is_empty()
    }
}

/// A kind the store holds.
pub trait Kind: Clone + PartialEq + Metadata<Ty = ObjectMeta> {
    /// The `kind` word, for ownerReferences and messages.
    const WORD: &'static str;
    /// Whether the API server keeps a `metadata.generation` for the kind (bumped on spec
    /// changes).
    const GENERATION: bool = false;
    fn table(s: &Store) -> &Table<Self>;
    fn table_mut(s: &mut Store) -> &mut Table<Self>;
    fn into_object(this: Arc<Self>) -> Object;
}

macro_rules! kind {
    ($t:ty, $kind:literal, $field:ident, $variant:ident) => {
        kind!($t, $kind, $field, $variant, false);
    };
    ($t:ty, $kind:literal, $field:ident, $variant:ident, $generation:literal) => {
        impl Kind for $t {
            const WORD: &'static str = $kind;
            const GENERATION: bool = $generation;
            fn table(s: &Store) -> &Table<Self> {
                &s.$field
            }
            fn table_mut(s: &mut Store) -> &mut Table<Self> {
                &mut s.$field
            }
            fn into_object(this: Arc<Self>) -> Object {
                Object::$variant(this)
            }
        }
    };
}

kind!(StatefulSet, "StatefulSet", sets, Set, true);
kind!(Pod, "Pod", pods, Pod);
kind!(PersistentVolumeClaim, "PersistentVolumeClaim", claims, Claim);
kind!(ControllerRevision, "ControllerRevision", revisions, Revision);
kind!(KubeEvent, "Event", events, Event);
kind!(PodDisruptionBudget, "PodDisruptionBudget", budgets, Budget, true);

/// A dependent as the owner index records it: (kind, namespace/name).
pub type Dependent = (&'static str, ObjRef);

/// The store. Reads are free; every write goes through a method that keeps the bookkeeping
/// fields and the journal right.
#[derive(Debug, Default)]
pub struct Store {
    pub(crate) clock: Clock,
    /// No volume can be provisioned (`break-storage`): new claims stay Pending.
    pub(crate) storage_full: bool,
    /// A ResourceQuota's pod limit per namespace (`quota` fault): a pod created beyond it is
    /// refused.
    pub(crate) pod_quota: std::collections::BTreeMap<String, u32>,
    sets: Table<StatefulSet>,
    pods: Table<Pod>,
    claims: Table<PersistentVolumeClaim>,
    revisions: Table<ControllerRevision>,
    events: Table<KubeEvent>,
    budgets: Table<PodDisruptionBudget>,
    uid_counter: u64,
    rv_counter: u64,
    /// owner uid → dependents whose ownerReferences name it (for the garbage collector).
    owners: BTreeMap<String, BTreeSet<Dependent>>,
    journal: VecDeque<Entry>,
}

/// The namespace/name of an object's metadata (namespace defaults to `default`).
pub fn key_of(meta: &ObjectMeta) -> ObjRef {
    ObjRef::new(
        meta.namespace.clone().unwrap_or_else(|| "default".to_string()),
        meta.name.clone().unwrap_or_default(),
    )
}

fn owner_uids(meta: &ObjectMeta) -> impl Iterator<Item = &String> {
    meta.owner_references.iter().flatten().map(|r| &r.uid)
}

impl Store {
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn sets(&self) -> &Table<StatefulSet> {
        &self.sets
    }
    pub fn pods(&self) -> &Table<Pod> {
        &self.pods
    }
    pub fn claims(&self) -> &Table<PersistentVolumeClaim> {
        &self.claims
    }
    pub fn revisions(&self) -> &Table<ControllerRevision> {
        &self.revisions
    }
    pub fn events(&self) -> &Table<KubeEvent> {
        &self.events
    }
    pub fn budgets(&self) -> &Table<PodDisruptionBudget> {
        &self.budgets
    }

    /// The last resourceVersion handed out (what a list made now is consistent with).
    pub fn resource_version(&self) -> u64 {
        self.rv_counter
    }

    /// Any object by kind and key.
    pub fn get<T: Kind>(&self, key: &ObjRef) -> Option<&T> {
        T::table(self).get(key)
    }

    /// The dependents whose ownerReferences name `owner_uid`, in a stable order.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<Dependent> {
        self.owners.get(owner_uid).map(|s| s.iter().cloned().collect()).unwrap_or_default()
    }

    /// Whether an object of `kind` named `name` in `ns` exists with `uid`.
    pub fn exists_with_uid(&self, kind: &str, ns: &str, name: &str, uid: &str) -> bool {
        let key = ObjRef::new(ns, name);
        let meta = match kind {
            "StatefulSet" => self.sets.get(&key).map(|o| &o.metadata),
            "Pod" => self.pods.get(&key).map(|o| &o.metadata),
            "PersistentVolumeClaim" => self.claims.get(&key).map(|o| &o.metadata),
            "ControllerRevision" => self.revisions.get(&key).map(|o| &o.metadata),
            "Event" => self.events.get(&key).map(|o| &o.metadata),
            "PodDisruptionBudget" => self.budgets.get(&key).map(|o| &o.metadata),
            // Kinds the simulator does not model are assumed to exist (never collected).
            _ => return true,
        };
        meta.is_some_and(|m| m.uid.as_deref() == Some(uid))
    }

    /// Appends a timeline event stamped with the current virtual time.
    pub fn note(&mut self, kind: EventKind) {
        let t_ms = self.clock.now_ms();
        self.journal.push_back(Entry::Timeline(Event { t_ms, kind }, None));
    }

    /// [`Store::note`] about something in namespace `ns` (the event recorder needs it).
    pub fn note_in(&mut self, ns: &str, kind: EventKind) {
        let t_ms = self.clock.now_ms();
        self.journal.push_back(Entry::Timeline(Event { t_ms, kind }, Some(ns.to_string())));
    }

    /// Takes the oldest journal entry.
    pub(crate) fn pop_entry(&mut self) -> Option<Entry> {
        self.journal.pop_front()
    }

    fn next_rv(&mut self) -> String {
        self.rv_counter += 1;
        self.rv_counter.to_string()
    }

    fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.uid_counter)
    }

    fn index(
        &mut self,
        kind: &'static str,
        key: &ObjRef,
        old: Option<&ObjectMeta>,
        new: &ObjectMeta,
    ) {
        let old_uids: BTreeSet<&String> = old.map(|m| owner_uids(m).collect()).unwrap_or_default();
        let new_uids: BTreeSet<&String> = owner_uids(new).collect();
        if old_uids == new_uids {
            return;
        }
        for uid in old_uids.difference(&new_uids) {
            if let Some(set) = self.owners.get_mut(*uid) {
                set.remove(&(kind, key.clone()));
                if set.is_empty() {
                    self.owners.remove(*uid);
                }
            }
        }
        for uid in new_uids.difference(&old_uids) {
            self.owners.entry((*uid).clone()).or_default().insert((kind, key.clone()));
        }
    }

    /// POST: assigns uid, resourceVersion, creationTimestamp (and generation 1 for the kinds
    /// that have one: sets and budgets).
    pub fn create<T: Kind>(&mut self, mut obj: T) -> Result<&T, StoreError> {
        let meta = obj.metadata_mut();
        if meta.name.as_deref().is_none_or(str::is_empty) {
            return Err(StoreError::NoName { kind: T::WORD });
        }
        meta.namespace.get_or_insert_with(|| "default".to_string());
        let key = key_of(obj.metadata());
        if T::table(self).get(&key).is_some() {
            return Err(StoreError::AlreadyExists { kind: T::WORD, key });
        }
        let uid = self.next_uid();
        let rv = self.next_rv();
        let now = self.clock.time();
        let meta = obj.metadata_mut();
        meta.uid = Some(uid);
        meta.resource_version = Some(rv);
        meta.creation_timestamp = Some(now);
        meta.deletion_timestamp = None;
        meta.generation = T::GENERATION.then_some(1);
        self.index(T::WORD, &key, None, obj.metadata());
        let obj = Arc::new(obj);
        let change =
            Change { kind: ChangeKind::Added, object: T::into_object(obj.clone()), old: None };
        self.journal.push_back(Entry::Change(change));
        T::table_mut(self).insert(&key, obj);
        T::table(self).get(&key).ok_or(StoreError::NotFound { kind: T::WORD, key })
    }

    /// PUT: replaces the object, keeping uid and creationTimestamp, with a new resourceVersion.
    /// `generation` is kept as is; [`Store::update_set`] bumps it on spec changes.
    pub fn update<T: Kind>(&mut self, obj: T) -> Result<&T, StoreError> {
        self.put(obj, None)
    }

    fn put<T: Kind>(&mut self, mut obj: T, generation: Option<i64>) -> Result<&T, StoreError> {
        let key = key_of(obj.metadata());
        let Some(old) = T::table(self).get(&key) else {
            return Err(StoreError::NotFound { kind: T::WORD, key });
        };
        let old_meta = old.metadata().clone();
        let meta = obj.metadata_mut();
        meta.namespace = old_meta.namespace.clone();
        meta.uid = old_meta.uid.clone();
        meta.creation_timestamp = old_meta.creation_timestamp.clone();
        meta.generation = generation.or(old_meta.generation);
        meta.resource_version.clone_from(&old_meta.resource_version);
        // As the API server's storage: a write that changes nothing stores nothing (same
        // resourceVersion, no watch event).
        if obj == *old {
            return T::table(self).get(&key).ok_or(StoreError::NotFound { kind: T::WORD, key });
        }
        let rv = self.next_rv();
        obj.metadata_mut().resource_version = Some(rv);
        self.index(T::WORD, &key, Some(&old_meta), obj.metadata());
        let obj = Arc::new(obj);
        let new_obj = T::into_object(obj.clone());
        let old = T::table_mut(self).insert(&key, obj).map(T::into_object);
        self.journal.push_back(Entry::Change(Change {
            kind: ChangeKind::Modified,
            object: new_obj,
            old,
        }));
        T::table(self).get(&key).ok_or(StoreError::NotFound { kind: T::WORD, key })
    }

    /// Changes an object in place through `f` (a status write, a patch), as [`Store::update`].
    pub fn modify<T: Kind>(
        &mut self,
        key: &ObjRef,
        f: impl FnOnce(&mut T),
    ) -> Result<&T, StoreError> {
        let Some(mut obj) = T::table(self).get(key).cloned() else {
            return Err(StoreError::NotFound { kind: T::WORD, key: key.clone() });
        };
        f(&mut obj);
        obj.metadata_mut().name = Some(key.name.clone());
        obj.metadata_mut().namespace = Some(key.namespace.clone());
        self.update(obj)
    }

    /// PUT of a StatefulSet's main resource: the stored status is kept, and generation is bumped
    /// when the spec differs (status and metadata changes never bump it).
    pub fn update_set(&mut self, set: StatefulSet) -> Result<&StatefulSet, StoreError> {
        self.put_main(set, |new, old| {
            new.status.clone_from(&old.status);
            new.spec != old.spec
        })
    }

    /// PUT of a PodDisruptionBudget's main resource: as [`Store::update_set`].
    pub fn update_budget(
        &mut self,
        pdb: PodDisruptionBudget,
    ) -> Result<&PodDisruptionBudget, StoreError> {
        self.put_main(pdb, |new, old| {
            new.status.clone_from(&old.status);
            new.spec != old.spec
        })
    }

    /// A main-resource PUT of a kind with a status and a generation: `keep` copies the stored
    /// status into the new object and says whether the spec changed (generation + 1).
    fn put_main<T: Kind>(
        &mut self,
        mut obj: T,
        keep: impl FnOnce(&mut T, &T) -> bool,
    ) -> Result<&T, StoreError> {
        let key = key_of(obj.metadata());
        let Some(old) = T::table(self).get(&key) else {
            return Err(StoreError::NotFound { kind: T::WORD, key });
        };
        let generation = old.metadata().generation.unwrap_or(1);
        let spec_changed = keep(&mut obj, old);
        self.put(obj, spec_changed.then_some(generation + 1))
    }

    /// PUT /status of a StatefulSet: only the status changes; generation stays.
    pub fn write_set_status(
        &mut self,
        key: &ObjRef,
        status: StatefulSetStatus,
    ) -> Result<&StatefulSet, StoreError> {
        self.modify::<StatefulSet>(key, |s| s.status = Some(status))
    }

    /// Removes an object now (the end of a graceful deletion, a force delete, or a delete of a
    /// kind without grace). Emits `Deleted` with the last state.
    pub fn remove<T: Kind>(&mut self, key: &ObjRef) -> Result<Arc<T>, StoreError> {
        let Some(obj) = T::table_mut(self).remove(key) else {
            return Err(StoreError::NotFound { kind: T::WORD, key: key.clone() });
        };
        let empty = ObjectMeta::default();
        let old_meta = obj.metadata().clone();
        self.index(T::WORD, key, Some(&old_meta), &empty);
        // The deleted object carries a resourceVersion of its own, as the API server's watch
        // event does: a copy of the last state (shared with readers that still hold it).
        let mut last = Arc::unwrap_or_clone(obj);
        last.metadata_mut().resource_version = Some(self.next_rv());
        let last = Arc::new(last);
        self.journal.push_back(Entry::Change(Change {
            kind: ChangeKind::Deleted,
            object: T::into_object(last.clone()),
            old: None,
        }));
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::StatefulSetSpec;

    fn set(name: &str, replicas: i32) -> StatefulSet {
        StatefulSet {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            spec: StatefulSetSpec { replicas: Some(replicas), ..Default::default() },
            ..Default::default()
        }
    }

    fn drain(s: &mut Store) -> Vec<(ChangeKind, String)> {
        std::iter::from_fn(|| s.pop_entry())
            .filter_map(|e| match e {
                Entry::Change(c) => {
                    let rv = match &c.object {
                        Object::Set(s) => s.metadata.resource_version.clone(),
                        Object::Pod(p) => p.metadata.resource_version.clone(),
                        _ => None,
                    };
                    Some((c.kind, rv.unwrap_or_default()))
                }
                Entry::Timeline(..) => None,
            })
            .collect()
    }

    #[test]
    fn generation_moves_with_spec_only_and_rv_with_every_write() {
        let mut s = Store::default();
        let created = s.create(set("web", 1)).cloned().unwrap();
        assert_eq!(created.metadata.generation, Some(1));
        assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
        let key = key_of(&created.metadata);
        let st = StatefulSetStatus { replicas: 1, ..Default::default() };
        let after_status = s.write_set_status(&key, st).cloned().unwrap();
        assert_eq!(after_status.metadata.generation, Some(1));
        let mut relabeled = after_status.clone();
        relabeled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
        let after_label = s.update_set(relabeled).cloned().unwrap();
        assert_eq!(after_label.metadata.generation, Some(1));
        assert_eq!(after_label.status, after_status.status, "a main-resource PUT keeps status");
        let after_scale = s.update_set(set("web", 3)).cloned().unwrap();
        assert_eq!(after_scale.metadata.generation, Some(2));
        assert_eq!(after_scale.metadata.uid, created.metadata.uid);
        let events = drain(&mut s);
        let kinds: Vec<_> = events.iter().map(|e| e.0).collect();
        assert_eq!(
            kinds,
            [ChangeKind::Added, ChangeKind::Modified, ChangeKind::Modified, ChangeKind::Modified]
        );
        let rvs: Vec<u64> = events.iter().map(|e| e.1.parse().unwrap()).collect();
        assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");
        s.remove::<StatefulSet>(&key).unwrap();
        assert_eq!(drain(&mut s)[0].0, ChangeKind::Deleted);
        assert!(s.sets().is_empty());
    }

    #[test]
    fn create_refuses_duplicates_and_uids_are_distinct() {
        let mut s = Store::default();
        let a = s.create(set("a", 1)).cloned().unwrap();
        let b = s.create(set("b", 1)).cloned().unwrap();
        assert_ne!(a.metadata.uid, b.metadata.uid);
        assert!(matches!(s.create(set("a", 2)), Err(StoreError::AlreadyExists { .. })));
        assert!(matches!(s.update(set("zzz", 1)), Err(StoreError::NotFound { .. })));
    }
}
