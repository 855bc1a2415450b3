//! Drive mode's effect side: each effect of a Plan as the API call upstream's
//! `StatefulPodControl`, history client and status updater make, with field manager `ststui`,
//! resourceVersion preconditions on every update (the object as read carries its version),
//! and the controller's Events in upstream's words (`SuccessfulCreate` "create Pod web-0 in
//! StatefulSet web successful", `FailedCreate` … "failed error: …").
//!
//! A status write that conflicts is read again and written once more on the fresh object
//! (upstream's `RetryOnConflict` around a re-get); any other conflict fails the sync, whose
//! retry reads again. What the server answered goes into the mirror at once.
//!
//! The calls block the controller's thread (as upstream's worker blocks on its client) on the
//! runtime's handle, each within [`CALL_TIMEOUT`]. Owns: the calls. Must not: decide.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::mirror::Mirror;
use crate::backend::{EventKind, FailureKind, ObjKind, ObjRef, Object};
use crate::control::{Read, Write, WriteError};
use crate::core::{Effect, Now};
use crate::kubelet::failure::Said;
use crate::steer::FIELD_MANAGER;

/// The longest one API call may take before the sync counts it failed.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The component the controller's Events are reported by.
pub const COMPONENT: &str = "ststui";

/// A namespaced object the controller creates and replaces.
trait Namespaced:
    kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Namespaced for K where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
{
}

/// Events posted and not yet answered, at most: more are dropped, as upstream's recorder drops
/// what its broadcaster's queue (of the same length) cannot take.
pub const EVENTS_IN_FLIGHT: usize = 1000;

/// The client and where to run its calls.
#[derive(Clone)]
pub struct Calls {
    pub(super) client: kube::Client,
    pub(super) handle: tokio::runtime::Handle,
    /// The runtime itself when the caller made one for the controller: it lives as long as the
    /// controller's thread, so a call still under way when the console quits ends as a call,
    /// never on a runtime shut down under it.
    _runtime: Option<Arc<tokio::runtime::Runtime>>,
    /// Events posted and not answered yet.
    events: Arc<std::sync::atomic::AtomicUsize>,
}

fn refused(e: &kube::Error) -> WriteError {
    match e {
        kube::Error::Api(s) => {
            WriteError { kind: FailureKind::from_status(s.code), message: s.message.clone() }
        }
        other => WriteError {
            kind: FailureKind::Unavailable,
            message: crate::cluster::trouble::brief(other),
        },
    }
}

fn timed_out() -> WriteError {
    WriteError {
        kind: FailureKind::Unavailable,
        message: format!("no answer within {} s", CALL_TIMEOUT.as_secs()),
    }
}

fn params() -> PostParams {
    PostParams { field_manager: Some(FIELD_MANAGER.into()), ..PostParams::default() }
}

impl Calls {
    /// Calls through `client`, run on `handle` (whose runtime `runtime` is, when the caller made
    /// one for the controller and it must live as long as the controller's thread).
    pub fn new(
        client: kube::Client,
        handle: tokio::runtime::Handle,
        runtime: Option<Arc<tokio::runtime::Runtime>>,
    ) -> Calls {
        Calls { client, handle, _runtime: runtime, events: Arc::default() }
    }

    /// Events posted and not answered yet.
    pub fn events_in_flight(&self) -> usize {
        self.events.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn run<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, WriteError> {
        self.handle
            .block_on(async { tokio::time::timeout(CALL_TIMEOUT, f).await })
            .map_err(|_| timed_out())?
            .map_err(|e| refused(&e))
    }

    fn api<K>(&self, ns: &str) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), ns)
    }

    fn create<K: Namespaced>(&self, ns: &str, o: &K) -> Result<K, WriteError>
    where
        K::DynamicType: Default,
    {
        self.run(self.api::<K>(ns).create(&params(), o))
    }

    fn replace<K: Namespaced>(&self, ns: &str, o: &K) -> Result<K, WriteError>
    where
        K::DynamicType: Default,
    {
        let name = o.meta().name.clone().unwrap_or_default();
        self.run(self.api::<K>(ns).replace(&name, &params(), o))
    }

    /// Posts `event` without waiting for the answer (upstream's recorder is asynchronous too:
    /// a burst of a thousand creations is not slowed by a thousand Events). At most
    /// [`EVENTS_IN_FLIGHT`] wait for their answer; beyond, an Event is dropped and logged.
    fn post_event(&self, about: &str, event: KubeEvent) {
        use std::sync::atomic::Ordering::Relaxed;
        let reason = event.reason.clone().unwrap_or_default();
        if self.events.fetch_add(1, Relaxed) >= EVENTS_IN_FLIGHT {
            self.events.fetch_sub(1, Relaxed);
            tracing::debug!("event {reason} about {about} dropped: {EVENTS_IN_FLIGHT} in flight");
            return;
        }
        let ns = event.metadata.namespace.clone().unwrap_or_default();
        let api: Api<KubeEvent> = self.api(&ns);
        let (events, about) = (Arc::clone(&self.events), about.to_string());
        self.handle.spawn(async move {
            let answer = tokio::time::timeout(CALL_TIMEOUT, api.create(&params(), &event)).await;
            events.fetch_sub(1, Relaxed);
            match answer {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::debug!("event {reason} about {about} not recorded: {e}"),
                Err(_) => tracing::debug!("event {reason} about {about} not answered"),
            }
        });
    }

    /// Deletes; the object still terminating, or `None` when it is gone.
    fn delete<K>(&self, ns: &str, name: &str) -> Result<Option<K>, WriteError>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        let gone = self.run(self.api::<K>(ns).delete(name, &DeleteParams::default()))?;
        Ok(gone.left())
    }
}

/// The controller's view for one sync: the mirror it reads, the calls it makes, and the
/// timeline lines it leaves.
pub struct Live<'a> {
    pub mirror: &'a mut Mirror,
    pub calls: &'a Calls,
    /// Where the sync's timeline lines go, each as it happens (a burst of a thousand pods is
    /// one sync: its lines reach the console one by one, not when it ends).
    pub say: &'a mut dyn FnMut(crate::backend::Event),
    /// Set when the operator pauses: the writes of a sync under way stop there (a Parallel
    /// burst of a thousand pods is one sync), the rest waits for resume or a step. `None`
    /// for a step, which runs its sync whole.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    /// The lease's write gate, asked before every write (a step's too): a driver past its
    /// renew deadline writes nothing. `None`: no election.
    pub gate: Option<&'a super::lease::Gate>,
}

/// The refusal of a write the operator's pause came before.
pub const PAUSED: &str = "not sent: reconciliation was paused during the sync";

/// The refusal of a write when this driver does not hold the lease (any more).
pub const NOT_LEADING: &str =
    "not sent: this ststui does not hold the drive lease (another drives, or its renewal is late)";

impl Read for Live<'_> {
    fn set(&self, key: &ObjRef) -> Option<&StatefulSet> {
        self.mirror.set(key)
    }
    fn sets_in(&self, ns: &str) -> Vec<&StatefulSet> {
        self.mirror.sets_in(ns)
    }
    fn pods_in(&self, ns: &str) -> Vec<&Pod> {
        self.mirror.pods_in(ns)
    }
    fn claims_in(&self, ns: &str) -> Vec<&PersistentVolumeClaim> {
        self.mirror.claims_in(ns)
    }
    fn revisions_in(&self, ns: &str) -> Vec<&ControllerRevision> {
        self.mirror.revisions_in(ns)
    }
    fn now_ms(&self) -> u64 {
        self.mirror.now_ms()
    }
    fn now(&self) -> Now {
        self.mirror.now()
    }
    fn unseen(&self, key: &ObjRef) -> Option<crate::control::Unseen> {
        self.mirror.unseen(key)
    }
}

/// What the Event of an effect says: verb, kind and name of the object.
fn event_words(effect: &Effect) -> Option<(&'static str, String)> {
    match effect {
        Effect::CreatePod(p) => Some(("create", format!("Pod {}", p.metadata.name.clone()?))),
        Effect::DeletePod { name, .. } => Some(("delete", format!("Pod {name}"))),
        Effect::UpdatePod(p) => Some(("update", format!("Pod {}", p.metadata.name.clone()?))),
        Effect::CreateClaim(c) => {
            let claim = c.metadata.name.clone()?;
            Some(("create", format!("Claim {claim}")))
        }
        _ => None,
    }
}

impl Live<'_> {
    fn write(&mut self, set: &ObjRef, effect: Effect) -> Result<(), WriteError> {
        let ns = set.namespace.as_str();
        let c = self.calls;
        let put = |m: &mut Mirror, o: Object| m.wrote(o);
        // Writes the set's next sync waits to read back (read your own writes).
        let ours = |m: &mut Mirror, o: Object| m.wrote_for(&set.name, o);
        match effect {
            Effect::CreatePod(p) => match c.create(ns, &*p) {
                Ok(made) => {
                    self.mirror.answered_create(p.metadata.name.as_deref().unwrap_or_default());
                    ours(self.mirror, Object::Pod(Arc::new(made)));
                }
                Err(e) => {
                    if e.kind == FailureKind::Unavailable {
                        self.mirror
                            .unanswered_create(p.metadata.name.as_deref().unwrap_or_default());
                    }
                    return Err(e);
                }
            },
            Effect::UpdatePod(p)
            | Effect::AdoptPod { pod: p, .. }
            | Effect::ReleasePod { pod: p, .. } => {
                ours(self.mirror, Object::Pod(Arc::new(c.replace(ns, &*p)?)));
            }
            Effect::DeletePod { name, .. } => match c.delete::<Pod>(ns, &name)? {
                Some(p) => put(self.mirror, Object::Pod(Arc::new(p))),
                None => self.mirror.removed(ObjKind::Pod, &name),
            },
            Effect::CreateClaim(cl) => {
                ours(self.mirror, Object::Claim(Arc::new(c.create(ns, &*cl)?)));
            }
            Effect::UpdateClaim(cl) => {
                ours(self.mirror, Object::Claim(Arc::new(c.replace(ns, &*cl)?)));
            }
            Effect::CreateRevision(r) => {
                put(self.mirror, Object::Revision(Arc::new(c.create(ns, &*r)?)));
            }
            Effect::UpdateRevision(r) | Effect::AdoptRevision { revision: r, .. } => {
                put(self.mirror, Object::Revision(Arc::new(c.replace(ns, &*r)?)));
            }
            Effect::DeleteRevision { name } => {
                if let Some(r) = c.delete::<ControllerRevision>(ns, &name)? {
                    put(self.mirror, Object::Revision(Arc::new(r)));
                } else {
                    self.mirror.removed(ObjKind::Revision, &name);
                }
            }
            Effect::WriteStatus(s) => self.write_status(set, *s)?,
        }
        Ok(())
    }

    /// `updateStatefulSetStatus`: the status on the set as read; on a conflict, once more on
    /// the set read again.
    fn write_status(
        &mut self,
        key: &ObjRef,
        status: k8s_openapi::api::apps::v1::StatefulSetStatus,
    ) -> Result<(), WriteError> {
        let api: Api<StatefulSet> = self.calls.api(&key.namespace);
        let Some(held) = self.mirror.set(key).cloned() else {
            return Err(WriteError {
                kind: FailureKind::NotFound,
                message: format!("statefulset {key} is no longer there"),
            });
        };
        let mut attempt = held;
        for round in 0..2 {
            let mut next = attempt.clone();
            next.status = Some(status.clone());
            match self.calls.run(api.replace_status(&key.name, &params(), &next)) {
                Ok(written) => {
                    self.mirror.wrote_for(&key.name, Object::Set(Arc::new(written)));
                    return Ok(());
                }
                Err(e) if e.kind == FailureKind::Conflict && round == 0 => {
                    let fresh = self.calls.run(api.get(&key.name))?;
                    tracing::info!(
                        "status write of {key} conflicted at resourceVersion {}: read again",
                        attempt.metadata.resource_version.as_deref().unwrap_or("?")
                    );
                    self.mirror.wrote(Object::Set(Arc::new(fresh.clone())));
                    attempt = fresh;
                }
                Err(e) => return Err(e),
            }
        }
        Err(WriteError { kind: FailureKind::Conflict, message: "the set kept changing".into() })
    }

    /// Records the controller's Event about the set (best effort: a refused Event never fails
    /// the sync, as upstream's recorder drops what it cannot write).
    fn record(&self, set: &ObjRef, verb: &str, what: &str, failed: Option<&WriteError>) {
        let said = match failed {
            None => {
                let reason = match verb {
                    "create" => "SuccessfulCreate",
                    "delete" => "SuccessfulDelete",
                    _ => "SuccessfulUpdate",
                };
                let tail = if what.starts_with("Claim") { "success" } else { "successful" };
                let message = format!("{verb} {what} in StatefulSet {} {tail}", set.name);
                Said { reason, message, warning: false }
            }
            Some(e) => {
                let reason = match verb {
                    "create" => "FailedCreate",
                    "delete" => "FailedDelete",
                    _ => "FailedUpdate",
                };
                let message =
                    format!("{verb} {what} in StatefulSet {} failed error: {e}", set.name);
                Said { reason, message, warning: true }
            }
        };
        self.post(set, said);
    }

    /// Posts the controller's Event `said` about `set`.
    fn post(&self, set: &ObjRef, said: Said) {
        let Some(held) = self.mirror.set(set) else { return };
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(self.mirror.now());
        let meta = ObjectMeta {
            generate_name: Some(format!("{}.", set.name)),
            namespace: Some(set.namespace.clone()),
            ..Default::default()
        };
        let about = ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("StatefulSet".into()),
            name: Some(set.name.clone()),
            namespace: Some(set.namespace.clone()),
            uid: held.metadata.uid.clone(),
            resource_version: held.metadata.resource_version.clone(),
            ..Default::default()
        };
        let event = crate::kubelet::event::event_object(meta, about, &said, COMPONENT, None, now);
        self.calls.post_event(&set.to_string(), event);
    }
}

impl Write for Live<'_> {
    fn apply(&mut self, set: &ObjRef, effect: Effect) -> Result<(), WriteError> {
        if self.interrupt.is_some_and(|p| p.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(WriteError { kind: FailureKind::Unavailable, message: PAUSED.into() });
        }
        if self.gate.is_some_and(|g| !g.may_write()) {
            return Err(WriteError { kind: FailureKind::Unavailable, message: NOT_LEADING.into() });
        }
        let words = event_words(&effect);
        let done = self.write(set, effect);
        if let Some((verb, what)) = words {
            self.record(set, verb, &what, done.as_ref().err());
        }
        done
    }

    fn note(&mut self, ns: Option<&str>, kind: EventKind) {
        // The gate-off Recreate refusal is an Event upstream records on the set, too.
        if let (Some(ns), EventKind::Event { object, reason, message, warning: true }) = (ns, &kind)
            && reason == crate::core::UNKNOWN_STRATEGY
            && let Some(name) = object.strip_prefix("statefulset/")
        {
            let said = Said {
                reason: crate::core::UNKNOWN_STRATEGY,
                message: message.clone(),
                warning: true,
            };
            self.post(&ObjRef::new(ns, name), said);
        }
        (self.say)(crate::backend::Event { t_ms: self.mirror.now_ms(), kind });
    }
}
