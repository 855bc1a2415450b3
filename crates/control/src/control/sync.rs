//! One sync (upstream `sync(key)` and the worker's requeue handling) and the order its effects
//! are carried out in.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{BACKOFF_BASE_MS, BACKOFF_MAX_MS, Controller, Read, Timers, Unseen, Write, WriteError};
use crate::backend::{EventKind, FailureKind, ObjRef};
use crate::core::explain::blocker_step;
use crate::core::{ControllerAction, DeleteReason, Effect, Observed, Plan};

/// How long a set's syncs are held for its own writes before the timeline says so (a hold
/// usually lasts the few milliseconds a watch event takes).
pub const HOLD_SAID_MS: u64 = 1000;

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

/// What the timeline says about an effect, read before the effect is carried out (and moved).
struct Note {
    action: Option<ControllerAction>,
    pod: Option<String>,
    pvc: Option<String>,
    revision: Option<String>,
    reason: Option<DeleteReason>,
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
                Effect::DeletePod { reason, .. } => Some(*reason),
                _ => None,
            },
            revision_step: matches!(effect, Effect::CreateRevision(_) | Effect::UpdateRevision(_)),
        }
    }

    fn failure(&self, key: &ObjRef, e: &WriteError) -> String {
        let what = self.action.map_or("write-status", ControllerAction::as_str);
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

/// Carries out one effect; a rolling update's delete of a pod already gone is a success.
fn carry_out<B: Write>(b: &mut B, key: &ObjRef, effect: Effect) -> Result<(), WriteError> {
    // Upstream's rolling-update deletes treat NotFound as success (spec 3.6.1; the 1.37
    // Parallel two-phase path returns it instead, a difference that only changes whether the
    // key is retried). Failed-pod and scale-down deletes report it as an error; Recreate's
    // burst ignores it too (v1.37 `recreateDeleteAndWait`).
    let update_delete = matches!(
        effect,
        Effect::DeletePod { reason: DeleteReason::Update | DeleteReason::Recreate, .. }
    );
    match b.apply(key, effect) {
        Err(e) if update_delete && e.kind == FailureKind::NotFound => Ok(()),
        other => other,
    }
}

impl Controller {
    /// Calls the reconciler on a borrowed snapshot.
    fn plan<R: Read>(&self, set: &StatefulSet, r: &R) -> Plan {
        let ns = set.metadata.namespace.as_deref().unwrap_or("default");
        let pods = r.pods_in(ns);
        let claims = r.claims_in(ns);
        let revisions = r.revisions_in(ns);
        let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
        (self.reconcile)(&observed, &self.options, r.now())
    }

    /// Upstream `sync(key)` plus the worker's requeue handling.
    pub(super) fn sync<B: Read + Write>(&mut self, key: &ObjRef, b: &mut B, t: &mut dyn Timers) {
        if self.options.semantics.read_your_writes
            && let Some(unseen) = b.unseen(key)
        {
            self.hold(key, &unseen, b, t);
            return;
        }
        self.syncs += 1;
        if let Some(r) = self.records.get_mut(key)
            && let Some((since, true)) = r.held.take()
        {
            let secs = b.now_ms().saturating_sub(since) as f64 / 1000.0;
            let text = format!("sync {key}: its own writes read back after {secs:.1} s; synced");
            b.note(None, EventKind::Notice { text });
        }
        let Some(set) = b.set(key) else {
            // "has been deleted": nothing to do; GC removes what it owned.
            self.failures.remove(key);
            self.records.remove(key);
            return;
        };
        let before = status_fields(set);
        let mut plan = self.plan(set, b);
        let failure = self.apply(key, &mut plan, b);
        if let Some(after) = b.set(key).and_then(status_fields)
            && Some(&after) != before.as_ref()
        {
            let (replicas, ready, available, current, updated, cur_rev, upd_rev, gen_) = after;
            b.note(
                None,
                EventKind::Status {
                    set: key.name.clone(),
                    replicas,
                    ready_replicas: ready,
                    available_replicas: available,
                    current_replicas: current,
                    updated_replicas: updated,
                    current_revision: cur_rev,
                    update_revision: upd_rev,
                    observed_generation: gen_,
                },
            );
        }
        let record = self.records.entry(key.clone()).or_default();
        let blocked = plan.waiting_on.as_ref().map(|w| {
            let step = blocker_step(w);
            (step.text, step.pod)
        });
        if blocked != record.blocked
            && let Some((reason, pod)) = blocked.clone()
        {
            b.note(None, EventKind::Blocked { set: key.name.clone(), reason, pod });
        }
        record.blocked = blocked;
        let retry_error =
            failure.or_else(|| plan.error.as_ref().map(|e| format!("sync {key}: {}", e.message)));
        if retry_error.is_some() && retry_error != record.error {
            let message = retry_error.clone().unwrap_or_default();
            b.note(None, EventKind::Error { line: None, message });
            // The controller's Warning Event (the gate-off Recreate refusal): said once per
            // error, as the error line is.
            if let Some(w) = &plan.warning {
                b.note(
                    Some(&key.namespace),
                    EventKind::Event {
                        object: format!("statefulset/{}", key.name),
                        reason: w.reason.into(),
                        message: w.message.clone(),
                        warning: true,
                    },
                );
            }
        }
        record.error = retry_error.clone();
        let now_ms = b.now_ms();
        record.at_ms = now_ms;
        let retry = plan.error.as_ref().is_none_or(|e| e.retry);
        match retry_error {
            Some(_) if retry => self.back_off(key, now_ms, t),
            _ => {
                self.failures.remove(key);
                if let Some(delay) = plan.requeue_after_ms {
                    self.enqueue_after(key.clone(), delay, now_ms, t);
                }
            }
        }
        if let Some(r) = self.records.get_mut(key) {
            r.plan = plan;
        }
    }

    /// `AddRateLimited`: again after the key's next back-off.
    fn back_off(&mut self, key: &ObjRef, now_ms: u64, t: &mut dyn Timers) {
        let n = self.failures.entry(key.clone()).or_insert(0);
        let delay = BACKOFF_BASE_MS.saturating_mul(1u64 << (*n).min(40)).min(BACKOFF_MAX_MS);
        *n += 1;
        self.enqueue_after(key.clone(), delay, now_ms, t);
    }

    /// Upstream's `EnsureReady` refusing: the sync is skipped and the key tried again with the
    /// worker's back-off (the watch event of the awaited write enqueues it sooner). A hold that
    /// lasts [`HOLD_SAID_MS`], or meets a step, is said once, and its end then too.
    fn hold<B: Read + Write>(
        &mut self,
        key: &ObjRef,
        unseen: &Unseen,
        b: &mut B,
        t: &mut dyn Timers,
    ) {
        let now_ms = b.now_ms();
        let record = self.records.entry(key.clone()).or_default();
        let (since, said) = record.held.get_or_insert((now_ms, false));
        // A step (while paused) that meets a hold says it at once: the operator asked for it.
        if !*said && (self.paused || now_ms.saturating_sub(*since) >= HOLD_SAID_MS) {
            *said = true;
            let read = unseen.read.map_or_else(|| "nothing".to_string(), |r| format!("up to {r}"));
            let text = format!(
                "sync {key} held: the {} watch has not shown this controller's write of {} \
                 (resourceVersion {}; read {read}); a sync on an older view could redo or undo it",
                unseen.resource, unseen.name, unseen.wrote
            );
            b.note(None, EventKind::Notice { text });
        }
        self.back_off(key, now_ms, t);
    }

    /// Carries out the effects in order. After the first failure the sync stops as upstream's
    /// `UpdateStatefulSet` does: no further pod, claim or revision writes, but the status is
    /// still written (unless revision resolution itself failed: then there is no status) and
    /// history truncation still runs. In a Parallel burst the failing batch is finished first:
    /// its other pods' writes were concurrent upstream (only the failing pod's later writes are
    /// not sent). Returns the first failure.
    fn apply<B: Write>(&self, key: &ObjRef, plan: &mut Plan, b: &mut B) -> Option<String> {
        let mut failure: Option<(String, bool)> = None;
        // The burst batch that failed, and where its failing item ends.
        let mut failing: Option<(u32, usize)> = None;
        // The effects are moved into the backend; the record keeps the rest of the plan.
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
            if let Err(e) = carry_out(b, key, effect) {
                if failure.is_none() {
                    failure = Some((note.failure(key, &e), note.revision_step));
                }
                failing = item.map(|it| (it.batch, it.end));
                continue;
            }
            let Some(action) = note.action else { continue };
            b.note(
                Some(&key.namespace),
                EventKind::Controller {
                    set: key.name.clone(),
                    action,
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
