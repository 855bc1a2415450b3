//! The controller loop around the core, as upstream's `StatefulSetController` runs it
//! (spec 1.1–1.5): pod and set events enqueue the owning set; one sync at a time from a
//! deduplicated FIFO queue; a sync borrows an [`Observed`] snapshot from the store, calls the
//! reconciler at the virtual now and applies the Plan's effects in order through the API layer,
//! stopping at the first failure (failed syncs are re-added with exponential back-off).
//!
//! Timeline: `controller` per applied effect, `status` when the stored status changed,
//! `blocked` when the reason the sync waits changed, `error` when a sync failed (once per
//! distinct message).
//!
//! Owns: the work queue, delayed enqueues, pause, and the last Plan per set. Must not: decide
//! anything the core decides, or touch objects except through `api`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use super::api::{self, ApiError};
use super::clock::{Agenda, Due, Ticket};
use super::explain;
use super::kubelet::is_ready;
use super::store::{Change, ChangeKind, Store, StoreError, key_of};
use crate::backend::{EventKind, ObjRef, Object};
use crate::core::{DeleteReason, Effect, Now, Observed, Options, Plan};

/// The function a sync calls: `core::reconcile`, or a stand-in in tests.
pub type Reconciler = fn(&Observed<'_>, &Options, Now) -> Plan;

/// Upstream's default per-item back-off: 5 ms doubling, capped at 1000 s.
const BACKOFF_BASE_MS: u64 = 5;
const BACKOFF_MAX_MS: u64 = 1_000_000;

/// What the last sync of a set left behind.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SetRecord {
    /// The Plan the reconciler returned, without its effects (they were moved into the store).
    pub plan: Plan,
    /// The `blocked` sentence and pod last reported (None when the sync did not wait).
    pub blocked: Option<(String, Option<String>)>,
    /// The last sync error reported, if the last sync failed.
    pub error: Option<String>,
    /// Virtual time of that sync.
    pub at_ms: u64,
}

/// The controller: queue, delayed enqueues, pause state and per-set records.
#[derive(Debug)]
pub struct Controller {
    options: Options,
    reconcile: Reconciler,
    queue: VecDeque<ObjRef>,
    queued: BTreeSet<ObjRef>,
    delayed: BTreeMap<ObjRef, Ticket>,
    failures: BTreeMap<ObjRef, u32>,
    paused: bool,
    records: BTreeMap<ObjRef, SetRecord>,
    syncs: u64,
}

fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

/// Whether a (non-empty) selector matches `labels`, as `GetPodStatefulSets` uses it.
pub fn selector_matches(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let exprs = sel.match_expressions.as_deref().unwrap_or_default();
    let plain = sel.match_labels.as_ref();
    if plain.is_none_or(BTreeMap::is_empty) && exprs.is_empty() {
        return false;
    }
    let plain_ok = plain.iter().flat_map(|m| m.iter()).all(|(k, v)| labels.get(k) == Some(v));
    plain_ok
        && exprs.iter().all(|e| {
            let values = e.values.as_deref().unwrap_or_default();
            let got = labels.get(&e.key);
            match e.operator.as_str() {
                "In" => got.is_some_and(|v| values.contains(v)),
                "NotIn" => got.is_none_or(|v| !values.contains(v)),
                "Exists" => got.is_some(),
                "DoesNotExist" => got.is_none(),
                _ => false,
            }
        })
}

fn claim_name(effect: &Effect) -> Option<String> {
    match effect {
        Effect::CreateClaim(c) | Effect::UpdateClaim(c) => c.metadata.name.clone(),
        _ => None,
    }
}

fn pod_name(effect: &Effect) -> Option<String> {
    match effect {
        Effect::CreatePod(p) | Effect::UpdatePod(p) => p.metadata.name.clone(),
        Effect::DeletePod { name, .. }
        | Effect::AdoptPod { name, .. }
        | Effect::ReleasePod { name, .. } => Some(name.clone()),
        _ => None,
    }
}

fn revision_name(effect: &Effect) -> Option<String> {
    match effect {
        Effect::CreateRevision(r) | Effect::UpdateRevision(r) => r.metadata.name.clone(),
        Effect::DeleteRevision { name } | Effect::AdoptRevision { name, .. } => Some(name.clone()),
        // The revision the pod is created at (its controller-revision-hash label).
        Effect::CreatePod(p) => {
            Some(crate::core::pod::revision(p).to_string()).filter(|r| !r.is_empty())
        }
        _ => None,
    }
}

/// Applies one effect through the API layer, moving its object into the store (a burst of
/// 10,000 pod creations is not copied a second time).
fn apply_effect(store: &mut Store, ns: &str, set: &ObjRef, effect: Effect) -> Result<(), ApiError> {
    let key = |name: &str| ObjRef::new(ns, name);
    match effect {
        Effect::AdoptRevision { revision: r, .. } | Effect::UpdateRevision(r) => {
            api::update_revision(store, ns, *r)
        }
        Effect::AdoptPod { pod: p, .. }
        | Effect::ReleasePod { pod: p, .. }
        | Effect::UpdatePod(p) => api::update_pod(store, ns, *p),
        Effect::CreateRevision(r) => api::create_revision(store, ns, *r),
        Effect::DeleteRevision { name } => api::delete_revision(store, &key(&name)),
        Effect::CreateClaim(c) => api::create_claim(store, ns, *c),
        Effect::UpdateClaim(c) => api::update_claim(store, ns, *c),
        Effect::CreatePod(p) => api::create_pod(store, ns, *p),
        // Upstream's rolling-update deletes treat NotFound as success (spec 3.6.1; the 1.37
        // Parallel two-phase path returns it instead, a difference that only changes whether
        // the key is retried). Failed-pod and scale-down deletes report it as an error.
        Effect::DeletePod { name, reason } => match api::delete_pod(store, &key(&name), false) {
            Err(ApiError::Store(StoreError::NotFound { .. })) if reason == DeleteReason::Update => {
                Ok(())
            }
            other => other.map(drop),
        },
        Effect::WriteStatus(s) => api::write_set_status(store, set, *s),
    }
}

/// What the timeline says about an effect, read before the effect is applied (and moved).
struct Note {
    action: Option<&'static str>,
    pod: Option<String>,
    pvc: Option<String>,
    revision: Option<String>,
    reason: Option<String>,
    revision_step: bool,
}

impl Note {
    fn of(effect: &Effect) -> Note {
        Note {
            action: effect.action(),
            pod: pod_name(effect),
            pvc: claim_name(effect),
            revision: revision_name(effect),
            reason: match effect {
                Effect::DeletePod { reason, .. } => Some(reason.as_str().to_string()),
                _ => None,
            },
            revision_step: matches!(effect, Effect::CreateRevision(_) | Effect::UpdateRevision(_)),
        }
    }

    fn failure(&self, key: &ObjRef, e: &ApiError) -> String {
        let what = self.action.unwrap_or("write-status");
        let name = self.pod.as_ref().or(self.pvc.as_ref()).or(self.revision.as_ref());
        format!("sync {key}: {what} {} failed: {e}", name.unwrap_or(&key.name))
    }
}

type StatusFields = (i32, i32, i32, i32, i32, String, String, i64);

fn status_fields(set: &StatefulSet) -> Option<StatusFields> {
    let s = set.status.as_ref()?;
    Some((
        s.replicas,
        s.ready_replicas.unwrap_or(0),
        s.available_replicas.unwrap_or(0),
        s.current_replicas.unwrap_or(0),
        s.updated_replicas.unwrap_or(0),
        s.current_revision.clone().unwrap_or_default(),
        s.update_revision.clone().unwrap_or_default(),
        s.observed_generation.unwrap_or(0),
    ))
}

impl Controller {
    pub fn new(options: Options, reconcile: Reconciler) -> Self {
        Controller {
            options,
            reconcile,
            queue: VecDeque::new(),
            queued: BTreeSet::new(),
            delayed: BTreeMap::new(),
            failures: BTreeMap::new(),
            paused: false,
            records: BTreeMap::new(),
            syncs: 0,
        }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn set_reconciler(&mut self, reconcile: Reconciler) {
        self.reconcile = reconcile;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Keys waiting for a sync, in order.
    pub fn queued(&self) -> impl Iterator<Item = &ObjRef> {
        self.queue.iter()
    }

    /// Whether a sync would run now (something queued and not paused).
    pub fn runnable(&self) -> bool {
        !self.paused && !self.queue.is_empty()
    }

    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Syncs run so far.
    pub fn sync_count(&self) -> u64 {
        self.syncs
    }

    pub fn record(&self, key: &ObjRef) -> Option<&SetRecord> {
        self.records.get(key)
    }

    /// Adds a key unless it is already waiting (workqueue dedup).
    pub fn enqueue(&mut self, key: ObjRef) {
        if self.queued.insert(key.clone()) {
            self.queue.push_back(key);
        }
    }

    /// `AddAfter`: an earlier pending time wins, as in the delaying queue.
    pub fn enqueue_after(&mut self, key: ObjRef, delay_ms: u64, now_ms: u64, agenda: &mut Agenda) {
        let at = now_ms.saturating_add(delay_ms);
        if let Some(t) = self.delayed.get(&key) {
            if t.at_ms <= at {
                return;
            }
            agenda.cancel(*t);
        }
        let ticket = agenda.schedule(at, Due::Enqueue(key.clone()));
        self.delayed.insert(key, ticket);
    }

    /// A delayed enqueue came due.
    pub fn fire_delayed(&mut self, key: &ObjRef) {
        self.delayed.remove(key);
        self.enqueue(key.clone());
    }

    /// Resolves a controller ref to a set key (kind, name in the namespace, uid).
    fn resolve(store: &Store, ns: &str, r: &OwnerReference) -> Option<ObjRef> {
        if r.kind != "StatefulSet" {
            return None;
        }
        let key = ObjRef::new(ns, &r.name);
        let set = store.sets().get(&key)?;
        (set.metadata.uid.as_deref() == Some(r.uid.as_str())).then_some(key)
    }

    fn matching_sets(store: &Store, pod: &Pod) -> Vec<ObjRef> {
        let empty = BTreeMap::new();
        let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        store
            .sets()
            .in_namespace(ns)
            .filter(|s| selector_matches(&s.spec.selector, labels))
            .map(|s| key_of(&s.metadata))
            .collect()
    }

    /// The event handlers of spec 1.4 and 1.5.
    pub fn observe(&mut self, change: &Change, store: &Store, agenda: &mut Agenda) {
        let pod = match &change.object {
            Object::Set(s) => return self.enqueue(key_of(&s.metadata)),
            Object::Pod(p) => p,
            _ => return,
        };
        let ns = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let new_ref = controller_ref(&pod.metadata);
        let deleting = change.kind == ChangeKind::Deleted
            || (change.kind == ChangeKind::Added && pod.metadata.deletion_timestamp.is_some());
        if deleting {
            if let Some(key) = new_ref.and_then(|r| Self::resolve(store, &ns, r)) {
                self.enqueue(key);
            }
            return;
        }
        let old = match &change.old {
            Some(Object::Pod(old)) => Some(old.as_ref()),
            _ => None,
        };
        let old_ref = old.and_then(|o| controller_ref(&o.metadata));
        if change.kind == ChangeKind::Modified
            && old_ref != new_ref
            && let Some(key) = old_ref.and_then(|r| Self::resolve(store, &ns, r))
        {
            self.enqueue(key);
        }
        if let Some(r) = new_ref {
            let Some(key) = Self::resolve(store, &ns, r) else { return };
            self.enqueue(key.clone());
            let became_ready = old.is_some_and(|o| !is_ready(o)) && is_ready(pod);
            let min_ready =
                store.sets().get(&key).and_then(|s| s.spec.min_ready_seconds).unwrap_or(0);
            if became_ready && min_ready > 0 {
                // "+ 1 s to avoid millisecond skew" until v1.36 made the requeues exact.
                let skew = u64::from(!self.options.semantics.precise_availability_requeue);
                let delay = (u64::try_from(min_ready).unwrap_or(0) + skew) * 1000;
                self.enqueue_after(key, delay, store.clock().now_ms(), agenda);
            }
            return;
        }
        let changed = match old {
            None => true,
            Some(o) => o.metadata.labels != pod.metadata.labels || old_ref != new_ref,
        };
        if changed {
            for key in Self::matching_sets(store, pod) {
                self.enqueue(key);
            }
        }
    }

    /// Runs the next queued sync (even while paused: `step` uses this). `false` when the queue
    /// is empty.
    pub fn sync_next(&mut self, store: &mut Store, agenda: &mut Agenda) -> bool {
        let Some(key) = self.queue.pop_front() else { return false };
        self.queued.remove(&key);
        self.sync(&key, store, agenda);
        true
    }

    /// Calls the reconciler on a borrowed snapshot.
    fn plan(&self, set: &StatefulSet, store: &Store) -> Plan {
        let ns = set.metadata.namespace.as_deref().unwrap_or("default");
        let pods: Vec<&Pod> = store.pods().in_namespace(ns).collect();
        let claims: Vec<_> = store.claims().in_namespace(ns).collect();
        let revisions: Vec<_> = store.revisions().in_namespace(ns).collect();
        let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
        (self.reconcile)(&observed, &self.options, store.clock().timestamp())
    }

    /// Upstream `sync(key)` plus the worker's requeue handling.
    fn sync(&mut self, key: &ObjRef, store: &mut Store, agenda: &mut Agenda) {
        self.syncs += 1;
        let Some(set) = store.sets().get(key) else {
            // "has been deleted": nothing to do; GC removes what it owned.
            self.failures.remove(key);
            self.records.remove(key);
            return;
        };
        let before = status_fields(set);
        let mut plan = self.plan(set, store);
        let failure = self.apply(key, &mut plan, store);
        if let Some(after) = store.sets().get(key).and_then(status_fields)
            && Some(&after) != before.as_ref()
        {
            let (replicas, ready, available, current, updated, cur_rev, upd_rev, gen_) = after;
            store.note(EventKind::Status {
                set: key.name.clone(),
                replicas,
                ready_replicas: ready,
                available_replicas: available,
                current_replicas: current,
                updated_replicas: updated,
                current_revision: cur_rev,
                update_revision: upd_rev,
                observed_generation: gen_,
            });
        }
        let record = self.records.entry(key.clone()).or_default();
        let blocked = plan.waiting_on.as_ref().map(explain::blocker);
        if blocked != record.blocked
            && let Some((reason, pod)) = blocked.clone()
        {
            store.note(EventKind::Blocked { set: key.name.clone(), reason, pod });
        }
        record.blocked = blocked;
        let retry_error =
            failure.or_else(|| plan.error.as_ref().map(|e| format!("sync {key}: {}", e.message)));
        if retry_error.is_some() && retry_error != record.error {
            let message = retry_error.clone().unwrap_or_default();
            store.note(EventKind::Error { line: None, message });
        }
        record.error = retry_error.clone();
        record.at_ms = store.clock().now_ms();
        let now_ms = store.clock().now_ms();
        let retry = plan.error.as_ref().is_none_or(|e| e.retry);
        match retry_error {
            Some(_) if retry => {
                let n = self.failures.entry(key.clone()).or_insert(0);
                let delay =
                    BACKOFF_BASE_MS.saturating_mul(1u64 << (*n).min(40)).min(BACKOFF_MAX_MS);
                *n += 1;
                self.enqueue_after(key.clone(), delay, now_ms, agenda);
            }
            _ => {
                self.failures.remove(key);
                if let Some(delay) = plan.requeue_after_ms {
                    self.enqueue_after(key.clone(), delay, now_ms, agenda);
                }
            }
        }
        if let Some(r) = self.records.get_mut(key) {
            r.plan = plan;
        }
    }

    /// Applies the effects in order. After the first failure the sync stops as upstream's
    /// `UpdateStatefulSet` does: no further pod, claim or revision writes, but the status is
    /// still written (unless revision resolution itself failed: then there is no status) and
    /// history truncation still runs. In a Parallel burst the failing batch is finished first:
    /// its other pods' writes were concurrent upstream (only the failing pod's later writes are
    /// not sent). Returns the first failure.
    fn apply(&self, key: &ObjRef, plan: &mut Plan, store: &mut Store) -> Option<String> {
        let mut failure: Option<(String, bool)> = None;
        // The burst batch that failed, and where its failing item ends.
        let mut failing: Option<(u32, usize)> = None;
        // The effects are moved into the store; the record keeps the rest of the plan.
        let effects = std::mem::take(&mut plan.effects);
        for (i, effect) in effects.into_iter().enumerate() {
            let item = plan.burst_item(i);
            if let Some((batch, skip_to)) = failing {
                match item {
                    Some(it) if it.batch == batch && i < skip_to => continue,
                    Some(it) if it.batch == batch => {}
                    _ => failing = None,
                }
            }
            if let Some((_, before_status)) = failure.as_ref().filter(|_| failing.is_none()) {
                let still = match effect {
                    Effect::WriteStatus(_) => !before_status,
                    Effect::DeleteRevision { .. } => true,
                    _ => false,
                };
                if !still {
                    continue;
                }
            }
            let note = Note::of(&effect);
            if let Err(e) = apply_effect(store, &key.namespace, key, effect) {
                if failure.is_none() {
                    failure = Some((note.failure(key, &e), note.revision_step));
                }
                failing = item.map(|it| (it.batch, it.end));
                continue;
            }
            let Some(action) = note.action else { continue };
            store.note_in(
                &key.namespace,
                EventKind::Controller {
                    set: key.name.clone(),
                    action: action.to_string(),
                    pod: note.pod,
                    pvc: note.pvc,
                    revision: note.revision,
                    reason: note.reason,
                },
            );
        }
        failure.map(|(message, _)| message)
    }
}
