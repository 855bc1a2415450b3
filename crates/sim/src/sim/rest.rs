//! The simulated cluster as a REST API sees it: get, list, create, update (main resource or
//! status) and delete of any stored kind, with the API server's semantics (defaulting and
//! validation, optimistic concurrency on resourceVersion, uid and resourceVersion preconditions,
//! graceful deletion, cascades, dry runs). What `serve` turns into HTTP.
//!
//! Owns: the verbs' semantics over [`Object`]s. Must not: know HTTP, or bypass `api`.

use std::sync::Arc;

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::api::{self, ApiError, Cascade, Deleted};
use super::store::{Kind, Store, StoreError, key_of};
use super::{Sim, checks, disruption};
use crate::backend::{ObjKind, ObjRef, Object};

/// The namespaces every cluster has.
pub const BUILTIN_NAMESPACES: &[&str] =
    &["default", "kube-node-lease", "kube-public", "kube-system"];

/// How to delete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds` (0 removes a pod at once).
    pub grace_seconds: Option<i64>,
    /// `propagationPolicy: Orphan`.
    pub orphan: bool,
    /// Preconditions.
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub dry_run: bool,
}

/// What a delete did: the object as it is now (terminating) or as it was (removed).
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    pub object: Object,
    pub removed: bool,
}

fn wrap<T: Kind>(o: &Arc<T>) -> Object {
    T::into_object(Arc::clone(o))
}

impl Sim {
    /// One object.
    pub fn rest_get(&self, kind: ObjKind, key: &ObjRef) -> Option<Object> {
        let s = &self.world.store;
        match kind {
            ObjKind::Set => s.sets().get_shared(key).map(wrap),
            ObjKind::Pod => s.pods().get_shared(key).map(wrap),
            ObjKind::Claim => s.claims().get_shared(key).map(wrap),
            ObjKind::Revision => s.revisions().get_shared(key).map(wrap),
            ObjKind::Event => s.events().get_shared(key).map(wrap),
            ObjKind::Budget => s.budgets().get_shared(key).map(wrap),
            // The simulator has no EvictionRequest API (as a 1.37 server with it off).
            ObjKind::Eviction => None,
        }
    }

    /// Every object of `kind` in `ns` (all namespaces when `None`), by namespace then name, and
    /// the resourceVersion the list is consistent with.
    pub fn rest_list(&self, kind: ObjKind, ns: Option<&str>) -> (Vec<Object>, u64) {
        fn all<T: Kind>(t: &super::store::Table<T>, ns: Option<&str>) -> Vec<Object> {
            match ns {
                Some(ns) => t.in_namespace_shared(ns).map(wrap).collect(),
                None => t.iter_shared().map(wrap).collect(),
            }
        }
        let s = &self.world.store;
        let items = match kind {
            ObjKind::Set => all(s.sets(), ns),
            ObjKind::Pod => all(s.pods(), ns),
            ObjKind::Claim => all(s.claims(), ns),
            ObjKind::Revision => all(s.revisions(), ns),
            ObjKind::Event => all(s.events(), ns),
            ObjKind::Budget => all(s.budgets(), ns),
            ObjKind::Eviction => Vec::new(),
        };
        (items, s.resource_version())
    }

    /// The namespaces objects live in, and the built-in ones.
    pub fn namespaces(&self) -> BTreeSet<String> {
        let s = &self.world.store;
        let mut out: BTreeSet<String> = BUILTIN_NAMESPACES.iter().map(|n| n.to_string()).collect();
        let ns = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            m.namespace.clone().unwrap_or_default()
        };
        out.extend(s.sets().iter().map(|o| ns(&o.metadata)));
        out.extend(s.pods().iter().map(|o| ns(&o.metadata)));
        out.extend(s.claims().iter().map(|o| ns(&o.metadata)));
        out.extend(s.revisions().iter().map(|o| ns(&o.metadata)));
        out.extend(s.budgets().iter().map(|o| ns(&o.metadata)));
        out
    }

    /// POST. With `dry_run`, the object as it would be stored (defaulted, validated), unstored.
    pub fn rest_create(&mut self, obj: Object, dry_run: bool) -> Result<Object, ApiError> {
        let sem = self.world.controller.options().semantics;
        let store = &mut self.world.store;
        checks::object_meta(kind_word(&obj), obj.metadata())?;
        if dry_run {
            let key = key_of(obj.metadata());
            if exists(store, obj.kind(), &key) {
                return Err(StoreError::AlreadyExists { kind: kind_word(&obj), key }.into());
            }
            let mut obj = obj;
            if let Object::Set(s) = &mut obj {
                crate::core::defaults::set_defaults_stateful_set(Arc::make_mut(s), &sem);
                super::validate::validate_create_with(s, super::validate::SetOpts::of(&sem))?;
            }
            if let Object::Budget(b) = &obj {
                disruption::validate(b)?;
            }
            return Ok(obj);
        }
        let key = key_of(obj.metadata());
        let ns = key.namespace.clone();
        let kind = obj.kind();
        match obj {
            Object::Set(s) => {
                let created = api::create_set(store, Arc::unwrap_or_clone(s), &sem)?;
                return Ok(Object::Set(Arc::new(created)));
            }
            Object::Pod(p) => api::create_pod(store, &ns, Arc::unwrap_or_clone(p))?,
            Object::Claim(c) => api::create_claim(store, &ns, Arc::unwrap_or_clone(c))?,
            Object::Revision(r) => api::create_revision(store, &ns, Arc::unwrap_or_clone(r))?,
            Object::Event(e) => {
                store.create(Arc::unwrap_or_clone(e))?;
            }
            Object::Budget(b) => {
                disruption::create_budget(store, &ns, Arc::unwrap_or_clone(b))?;
            }
            Object::Eviction(_) => {
                return Err(StoreError::NotFound { kind: word(kind), key }.into());
            }
        }
        super::engine::dispatch(&mut self.world);
        self.rest_get(kind, &key)
            .ok_or(ApiError::Store(StoreError::NotFound { kind: "object", key }))
    }

    /// PUT of the main resource (`status: false`) or of `/status`. A resourceVersion in the
    /// object is a precondition (409 when stale).
    pub fn rest_update(
        &mut self,
        obj: Object,
        status: bool,
        dry_run: bool,
    ) -> Result<Object, ApiError> {
        let key = key_of(obj.metadata());
        let kind = obj.kind();
        let Some(current) = self.rest_get(kind, &key) else {
            return Err(StoreError::NotFound { kind: kind_word(&obj), key }.into());
        };
        let want = obj.metadata().resource_version.as_deref().filter(|v| !v.is_empty());
        if want.is_some_and(|v| Some(v) != current.metadata().resource_version.as_deref()) {
            return Err(ApiError::Conflict(
                "the object has been modified; please apply your changes to the latest version and try again".into(),
            ));
        }
        let sem = self.world.controller.options().semantics;
        let store = &mut self.world.store;
        let ns = key.namespace.clone();
        match (obj, current) {
            (Object::Set(new), Object::Set(old)) if status => {
                let st = new.status.clone().unwrap_or_default();
                checks::set_status(&key.name, old.status.as_ref(), &st)?;
                if !dry_run {
                    store.write_set_status(&key, st)?;
                }
            }
            (Object::Set(new), Object::Set(_)) => {
                if dry_run {
                    return Ok(Object::Set(new));
                }
                api::update_set(store, Arc::unwrap_or_clone(new), &sem)?;
            }
            (Object::Pod(new), Object::Pod(old)) if status => {
                if !dry_run {
                    store.modify::<Pod>(&key, |p| p.status = new.status.clone())?;
                }
                let _ = old;
            }
            (Object::Pod(new), Object::Pod(old)) => {
                checks::pod_update(&old, &new)?;
                if !dry_run {
                    api::update_pod(store, &ns, Arc::unwrap_or_clone(new))?;
                }
            }
            (Object::Claim(new), Object::Claim(_)) if status => {
                if !dry_run {
                    store
                        .modify::<PersistentVolumeClaim>(&key, |c| c.status = new.status.clone())?;
                }
            }
            (Object::Claim(new), Object::Claim(_)) => {
                if !dry_run {
                    api::update_claim(store, &ns, Arc::unwrap_or_clone(new))?;
                }
            }
            (Object::Revision(new), Object::Revision(old)) => {
                checks::revision_update(&old, &new)?;
                if !dry_run {
                    api::update_revision(store, &ns, Arc::unwrap_or_clone(new))?;
                }
            }
            (Object::Event(new), Object::Event(_)) => {
                if !dry_run {
                    store.update(Arc::unwrap_or_clone(new))?;
                }
            }
            (Object::Budget(new), Object::Budget(_)) if status => {
                let st = new.status.clone().unwrap_or_default();
                if !dry_run {
                    disruption::write_status(store, &key, st)?;
                }
            }
            (Object::Budget(new), Object::Budget(_)) => {
                disruption::validate(&new)?;
                if !dry_run {
                    disruption::update_budget(store, &ns, Arc::unwrap_or_clone(new))?;
                }
            }
            (other, _) => return Ok(other),
        }
        super::engine::dispatch(&mut self.world);
        self.rest_get(kind, &key)
            .ok_or(ApiError::Store(StoreError::NotFound { kind: "object", key }))
    }

    /// DELETE, with preconditions; pods and claims may terminate first.
    pub fn rest_delete(
        &mut self,
        kind: ObjKind,
        key: &ObjRef,
        opts: &DeleteOptions,
    ) -> Result<Deletion, ApiError> {
        let Some(current) = self.rest_get(kind, key) else {
            return Err(StoreError::NotFound { kind: word(kind), key: key.clone() }.into());
        };
        let m = current.metadata();
        if opts.uid.as_deref().is_some_and(|u| Some(u) != m.uid.as_deref()) {
            return Err(ApiError::Conflict(format!(
                "Precondition failed: UID in precondition: {}, UID in object meta: {}",
                opts.uid.as_deref().unwrap_or_default(),
                m.uid.as_deref().unwrap_or_default()
            )));
        }
        if opts
            .resource_version
            .as_deref()
            .is_some_and(|v| Some(v) != m.resource_version.as_deref())
        {
            return Err(ApiError::Conflict(format!(
                "Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {}",
                opts.resource_version.as_deref().unwrap_or_default(),
                m.resource_version.as_deref().unwrap_or_default()
            )));
        }
        if opts.dry_run {
            return Ok(Deletion { object: current, removed: false });
        }
        let store = &mut self.world.store;
        let outcome = match kind {
            ObjKind::Pod => api::delete_pod(store, key, opts.grace_seconds == Some(0))?,
            ObjKind::Claim => api::delete_claim(store, key)?,
            ObjKind::Set => {
                let cascade = if opts.orphan { Cascade::Orphan } else { Cascade::Background };
                api::delete_set(store, key, cascade)?;
                Deleted::Removed
            }
            ObjKind::Revision => {
                api::delete_revision(store, key)?;
                Deleted::Removed
            }
            ObjKind::Event => {
                store.remove::<KubeEvent>(key)?;
                Deleted::Removed
            }
            ObjKind::Budget => {
                store.remove::<PodDisruptionBudget>(key)?;
                Deleted::Removed
            }
            ObjKind::Eviction => {
                return Err(StoreError::NotFound { kind: word(kind), key: key.clone() }.into());
            }
        };
        super::engine::dispatch(&mut self.world);
        match outcome {
            Deleted::Removed => Ok(Deletion { object: current, removed: true }),
            Deleted::Terminating | Deleted::AlreadyTerminating => {
                let object = self.rest_get(kind, key).unwrap_or(current);
                Ok(Deletion { object, removed: false })
            }
        }
    }
}

impl Sim {
    /// POST `pods/eviction`: the pod's budgets judge it (see [`disruption::evict`]); when it
    /// goes, the pod as it is now (terminating) or as it was (removed).
    pub fn rest_evict(
        &mut self,
        key: &ObjRef,
        opts: &disruption::EvictOptions,
    ) -> Result<Deleted, ApiError> {
        let out = disruption::evict(&mut self.world.store, key, opts);
        super::engine::dispatch(&mut self.world);
        out
    }
}

fn exists(store: &Store, kind: ObjKind, key: &ObjRef) -> bool {
    match kind {
        ObjKind::Set => store.sets().get(key).is_some(),
        ObjKind::Pod => store.pods().get(key).is_some(),
        ObjKind::Claim => store.claims().get(key).is_some(),
        ObjKind::Revision => store.revisions().get(key).is_some(),
        ObjKind::Event => store.events().get(key).is_some(),
        ObjKind::Budget => store.budgets().get(key).is_some(),
        ObjKind::Eviction => false,
    }
}

fn kind_word(o: &Object) -> &'static str {
    word(o.kind())
}

fn word(kind: ObjKind) -> &'static str {
    match kind {
        ObjKind::Set => StatefulSet::WORD,
        ObjKind::Pod => Pod::WORD,
        ObjKind::Claim => PersistentVolumeClaim::WORD,
        ObjKind::Revision => "ControllerRevision",
        ObjKind::Event => "Event",
        ObjKind::Budget => PodDisruptionBudget::WORD,
        ObjKind::Eviction => "Eviction",
    }
}

impl super::Sim {
    /// A budget created, or its spec replaced when it exists (a scenario's `pdb` line).
    pub fn apply_budget(&mut self, pdb: PodDisruptionBudget) -> Result<(), ApiError> {
        let store = &mut self.world.store;
        let key = key_of(&pdb.metadata);
        let out = match store.budgets().get(&key).cloned() {
            Some(old) => {
                let pdb = PodDisruptionBudget { metadata: old.metadata, ..pdb };
                disruption::update_budget(store, &key.namespace, pdb)
            }
            None => disruption::create_budget(store, &key.namespace, pdb).map(drop),
        };
        // A scenario's budget is observed as it is made (a cluster's within moments).
        super::engine::dispatch(&mut self.world);
        super::engine::disrupt(&mut self.world);
        out
    }

    /// A budget deleted (a scenario's `delete-pdb` line).
    pub fn delete_budget(&mut self, key: &ObjRef) -> Result<(), ApiError> {
        self.world.store.remove::<PodDisruptionBudget>(key)?;
        super::engine::dispatch(&mut self.world);
        Ok(())
    }

    /// A budget as stored.
    pub fn budget(&self, key: &ObjRef) -> Option<&PodDisruptionBudget> {
        self.world.store.budgets().get(key)
    }
}
