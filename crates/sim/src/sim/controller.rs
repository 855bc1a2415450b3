//! The simulator's side of the controller loop (`control`): the store is what the controller
//! reads and where its effects land (through the API layer, with its validation and
//! admission), and delayed enqueues are agenda items in virtual time.
//!
//! Owns: the mapping from effects to API calls and from the API's refusals to
//! [`WriteError`]s. Must not: decide anything the loop or the core decides.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::api::{self, ApiError};
use super::clock::{Agenda, Due, Ticket};
use super::store::{Store, StoreError};
use crate::backend::{EventKind, FailureKind, ObjRef};
use crate::control::{Read, Timers, Write, WriteError};
use crate::core::{Effect, Now};

pub use crate::control::{Controller, Reconciler, SetRecord, selector_matches};

impl Read for Store {
    fn set(&self, key: &ObjRef) -> Option<&StatefulSet> {
        self.sets().get(key)
    }
    fn sets_in(&self, ns: &str) -> Vec<&StatefulSet> {
        self.sets().in_namespace(ns).collect()
    }
    fn pods_in(&self, ns: &str) -> Vec<&Pod> {
        self.pods().in_namespace(ns).collect()
    }
    fn claims_in(&self, ns: &str) -> Vec<&PersistentVolumeClaim> {
        self.claims().in_namespace(ns).collect()
    }
    fn revisions_in(&self, ns: &str) -> Vec<&ControllerRevision> {
        self.revisions().in_namespace(ns).collect()
    }
    fn now_ms(&self) -> u64 {
        self.clock().now_ms()
    }
    fn now(&self) -> Now {
        self.clock().timestamp()
    }
}

fn refused(e: ApiError) -> WriteError {
    let kind = match &e {
        ApiError::Store(StoreError::NotFound { .. }) => FailureKind::NotFound,
        ApiError::Store(StoreError::AlreadyExists { .. }) | ApiError::Conflict(_) => {
            FailureKind::Conflict
        }
        _ => FailureKind::Invalid,
    };
    WriteError { kind, message: e.to_string() }
}

impl Write for Store {
    /// Applies one effect through the API layer, moving its object into the store (a burst of
    /// 10,000 pod creations is not copied a second time).
    fn apply(&mut self, set: &ObjRef, effect: Effect) -> Result<(), WriteError> {
        let ns = set.namespace.as_str();
        let key = |name: &str| ObjRef::new(ns, name);
        let done = match effect {
            Effect::AdoptRevision { revision: r, .. } | Effect::UpdateRevision(r) => {
                api::update_revision(self, ns, *r)
            }
            Effect::AdoptPod { pod: p, .. }
            | Effect::ReleasePod { pod: p, .. }
            | Effect::UpdatePod(p) => api::update_pod(self, ns, *p),
            Effect::CreateRevision(r) => api::create_revision(self, ns, *r),
            Effect::DeleteRevision { name } => api::delete_revision(self, &key(&name)),
            Effect::CreateClaim(c) => api::create_claim(self, ns, *c),
            Effect::UpdateClaim(c) => api::update_claim(self, ns, *c),
            Effect::CreatePod(p) => api::create_pod(self, ns, *p),
            Effect::DeletePod { name, .. } => api::delete_pod(self, &key(&name), false).map(drop),
            Effect::WriteStatus(s) => api::write_set_status(self, set, *s),
        };
        done.map_err(refused)
    }

    fn note(&mut self, ns: Option<&str>, kind: EventKind) {
        match ns {
            Some(ns) => self.note_in(ns, kind),
            None => Store::note(self, kind),
        }
    }
}

impl Timers for Agenda {
    fn schedule(&mut self, at_ms: u64, key: ObjRef) -> u64 {
        Agenda::schedule(self, at_ms, Due::Enqueue(key)).seq()
    }
    fn cancel(&mut self, at_ms: u64, id: u64) {
        Agenda::cancel(self, Ticket::new(at_ms, id));
    }
}
