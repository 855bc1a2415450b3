//! The sync entry point (spec 1.2 and 3.1): one call is one upstream `sync(key)` for one set.
//!
//! Owns: the order of the phases and their effects — adopt revisions (1.2 step 3), claim pods
//! (1.3), resolve revisions (2.5), `updateStatefulSet` (3.2), the status write decision (4.3),
//! `truncateHistory` (2.7, always), the minReadySeconds requeue (1.2 step 5) — and the error
//! precedence of 3.1. Must not touch: IO, clocks (`now` is an input), or the details of any
//! phase (they live in `claim`, `revisions`, `history`, `update`, `rolling`, `status`).
//!
//! When revision resolution or `ApplyRevision` fails upstream returns a nil status; the plan
//! then carries the set's last persisted status unchanged.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};

use super::claim::{self, ClaimEnv};
use super::history;
use super::options::{Options, Semantics};
use super::pod;
use super::pvc::ClaimIndex;
use super::revisions;
use super::scan::{self, Scanned};
use super::spec;
use super::status::{complete_update, needs_write};
use super::types::{
    Blocker, BurstItem, Effect, Now, Observed, Plan, SyncError, UNKNOWN_STRATEGY, Warning,
};
use super::update::{UpdateInput, fact_env, update_stateful_set};

/// One sync of `observed.set` at time `now`: the effects upstream would issue, in order, the
/// computed status, and why it stopped early. Pure and deterministic.
#[doc(alias = "sync")]
#[doc(alias = "syncStatefulSet")]
#[doc(alias = "UpdateStatefulSet")]
pub fn reconcile(observed: &Observed<'_>, options: &Options, now: Now) -> Plan {
    let set = observed.set;
    let mut plan = Plan {
        status: set.status.clone().unwrap_or_default(),
        min_ready: spec::min_ready(set, &options.semantics),
        ..Plan::default()
    };
    if let Some(message) = spec::beyond_model(set) {
        return failed(plan, SyncError { message, retry: false });
    }
    // The selector is compiled once; an invalid one fails the sync at revision listing, before
    // claiming, as upstream.
    let claim_env = match ClaimEnv::new(set) {
        Ok(c) => c,
        Err(e) => return failed(plan, e),
    };
    let listed = match claim::list_revisions_with(set, &claim_env.selector, observed.revisions) {
        Ok(l) => l,
        Err(e) => return failed(plan, e),
    };
    plan.effects.extend(listed.effects);
    let revs: Vec<&ControllerRevision> = listed.revisions.iter().map(AsRef::as_ref).collect();

    // Revision resolution reads no pods, so claiming can run after it, fused with the per-pod
    // summary the update needs; the claim effects still come first in the plan.
    let resolved = revisions::resolve_borrowed(set, &revs, observed.revisions, options);
    let truncation = match &resolved {
        Ok(r) => {
            let current = r.current.metadata.name.as_deref().unwrap_or_default();
            let update = r.update.metadata.name.as_deref().unwrap_or_default();
            let env = fact_env(set, current, update, now, &options.semantics);
            let (mut scanned, orphans) = scan::scan(&claim_env, &env, observed.pods);
            let adopted = scan::adopt(&claim_env, &orphans, &mut scanned.effects);
            let mut scanned = scanned.add_adopted(&adopted, &claim_env, &env);
            plan.effects.append(&mut scanned.effects);
            plan.effects.extend(r.effects.iter().cloned());
            let others = perform_update(&mut plan, observed, options, now, r, scanned);
            let mut live: HashSet<&str> = others.iter().map(String::as_str).collect();
            live.insert(current);
            live.insert(update);
            history::truncate_history(set, &revs, &live)
        }
        Err(e) => {
            let claimed = claim::claim_pods(set, observed.pods);
            let claimed = claimed.unwrap_or_default();
            plan.effects.extend(claimed.effects.iter().cloned());
            plan = failed(plan, e.clone());
            let live: HashSet<&str> = claimed.pods.iter().map(|p| pod::revision(p)).collect();
            history::truncate_history(set, &revs, &live)
        }
    };
    plan.effects.extend(truncation);
    plan
}

/// Spec 3.1 step 2 b–d: `updateStatefulSet`, then `updateStatefulSetStatus`, with the error
/// precedence (the sync error wins over the status error). Returns the claimed pods' revision
/// labels that are neither current nor update (live for `truncateHistory`).
#[doc(alias = "performUpdate")]
fn perform_update(
    plan: &mut Plan,
    observed: &Observed<'_>,
    options: &Options,
    now: Now,
    r: &revisions::ResolvedRef<'_>,
    scanned: Scanned<'_>,
) -> Vec<String> {
    let set = observed.set;
    let sem = &options.semantics;
    let next_available = scanned.next_available;
    let current_name = r.current.metadata.name.as_deref().unwrap_or_default();
    let update_name = r.update.metadata.name.as_deref().unwrap_or_default();
    plan.current_revision = current_name.into();
    plan.update_revision = update_name.into();
    // Revisions with the same data apply to the same set: decode it once.
    let same = (!current_name.is_empty() && current_name == update_name)
        || r.current.data == r.update.data;
    let views = history::apply_revision(set, &r.current).and_then(|c| {
        let u = if same { None } else { Some(history::apply_revision(set, &r.update)?) };
        Ok((c, u))
    });
    let (current_set, update_set) = match &views {
        Ok((c, u)) => (c, u.as_ref().unwrap_or(c)),
        Err(e) => {
            plan.waiting_on = Some(Blocker::Error { message: e.message.clone() });
            plan.error = Some(e.clone());
            // Every claimed pod's label is current, update or one of these.
            return scanned.other_revisions;
        }
    };
    // 1.37 with the Recreate gate off: a Warning and an error each sync, no status (3.8).
    if let Some(message) = spec::recreate_refused(set, sem) {
        plan.warning = Some(Warning { reason: UNKNOWN_STRATEGY, message: message.clone() });
        plan.waiting_on = Some(Blocker::Error { message: message.clone() });
        plan.error = Some(SyncError { message, retry: true });
        return scanned.other_revisions;
    }
    let claims = ClaimIndex::new(spec::namespace(set), observed.claims);
    let out = update_stateful_set(
        UpdateInput {
            set,
            current_set,
            update_set,
            current_revision: current_name,
            update_revision: update_name,
            collision_count: r.collision_count,
            claims: &claims,
            sem,
            now,
        },
        scanned,
    );
    let offset = plan.effects.len();
    plan.burst = out
        .burst
        .iter()
        .map(|b| BurstItem { start: b.start + offset, end: b.end + offset, ..*b })
        .collect();
    plan.effects.extend(out.effects);
    plan.waiting_on = out.waiting_on;
    plan.held_by = out.held_by;
    let mut status = out.status;
    complete_update(set, &mut status, sem, now);
    let status_error =
        if sem.max_unavailable_gate { spec::max_unavailable(set).err() } else { None };
    if status_error.is_none() && needs_write(set, &status, sem) {
        plan.effects.push(Effect::WriteStatus(Box::new(status.clone())));
    }
    plan.error = out.error.or(status_error);
    if plan.waiting_on.is_none()
        && let Some(e) = &plan.error
    {
        plan.waiting_on = Some(Blocker::Error { message: e.message.clone() });
    }
    if plan.error.is_none() {
        plan.requeue_after_ms = availability_requeue(set, &status, next_available, now, sem);
    }
    plan.status = status;
    out.other_revisions
}

/// Spec 1.2 step 5, the requeue that lets availability be observed without a pod event. From
/// v1.36 (`precise_availability_requeue`): while some Ready pod is not yet available, at the
/// first instant one becomes available (`minReadySeconds` when none says when). Before: after
/// `minReadySeconds` whenever `availableReplicas != replicas`.
fn availability_requeue(
    set: &StatefulSet,
    status: &StatefulSetStatus,
    next_available: Option<Now>,
    now: Now,
    sem: &Semantics,
) -> Option<u64> {
    let secs = u64::try_from(spec::min_ready_seconds(set)).ok().filter(|s| *s > 0)?;
    let available = status.available_replicas.unwrap_or(0);
    if !sem.precise_availability_requeue {
        return (available != spec::replicas(set)).then_some(secs * 1000);
    }
    if status.ready_replicas.unwrap_or(0) == available {
        return None;
    }
    Some(next_available.map_or(secs * 1000, |t| ms_until(now, t)))
}

/// Whole milliseconds from `now` until `t`, rounded up (0 when `t` has passed).
fn ms_until(now: Now, t: Now) -> u64 {
    let nanos = t.duration_since(now).as_nanos().max(0);
    u64::try_from((nanos + 999_999) / 1_000_000).unwrap_or(u64::MAX)
}

/// A plan for a sync that returned `e` before computing a status.
fn failed(mut plan: Plan, e: SyncError) -> Plan {
    plan.waiting_on = Some(Blocker::Error { message: e.message.clone() });
    plan.error = Some(e);
    plan
}
