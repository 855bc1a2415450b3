//! The rolling update (spec 3.6): the legacy one-pod-at-a-time path (3.6.1) and the
//! maxUnavailable path (3.6.2) with its version-dependent forms.
//!
//! Owns: which outdated pods a RollingUpdate sync deletes and the `currentReplicas` decrements.
//! Must not touch: creation (done in 3.3) or the status write.
//!
//! Upstream findings (#137666, merged form, read from the patch to
//! `updateStatefulSetAfterInvariantEstablished`): for Parallel sets it counts
//! `unavailablePodsNeedingUpdate` (unavailable, not on the update revision, not terminating,
//! over *all* in-range replicas), returns early only when `unavailablePods >= maxUnavailable`
//! and that count is 0; phase 1 deletes, from the top down to the partition, every outdated pod
//! that is not runningAndAvailable and not terminating, **without** a budget cap (an earlier
//! iteration capped it at maxUnavailable — reviewers asked to drop the cap); phase 2 deletes
//! outdated, runningAndAvailable, non-terminating pods while `maxUnavailable − unavailablePods`
//! lasts. OrderedReady keeps the single pass. Phase-1/2 delete errors return without the
//! NotFound exemption the single pass has (not modelled: effects do not fail here).
//!
//! Blockers: a sync that returns early is reported as waiting only when the early return holds
//! back an outdated pod at or above the partition; waiting for the last updated pod to become
//! available with nothing left to update is not a stop.

use k8s_openapi::api::apps::v1::StatefulSetStatus;

use super::ctx::Ctx;
use super::facts::Slot;
use super::spec;
use super::types::{Blocker, DeleteReason, PodWait, SyncError};

/// What the rolling-update step decided.
#[derive(Debug, Default)]
pub(crate) struct RollingOutcome {
    pub blocker: Option<Blocker>,
    pub error: Option<SyncError>,
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `updateMin`: the partition as an index into `replicas` (0 without a rollingUpdate block).
fn update_min(ctx: &Ctx<'_>) -> usize {
    let st = spec::strategy(ctx.inp.set);
    if st.has_rolling_block { usize::try_from(st.partition).unwrap_or(0) } else { 0 }
}

fn decrement_current(status: &mut StatefulSetStatus) {
    status.current_replicas = Some(status.current_replicas.unwrap_or(0) - 1);
}

/// Spec 3.2 step 13: the maxUnavailable path when the gate is on, else the legacy path.
pub(crate) fn rolling_update(
    ctx: &mut Ctx<'_>,
    replicas: &[Slot<'_>],
    status: &mut StatefulSetStatus,
) -> RollingOutcome {
    if ctx.inp.sem.max_unavailable_gate {
        after_invariant_established(ctx, replicas, status)
    } else {
        legacy(ctx, replicas, status)
    }
}

/// Spec 3.6.1: from the highest index down to the partition, delete the first outdated,
/// non-terminating pod and stop; stop earlier at an unavailable pod.
fn legacy(
    ctx: &mut Ctx<'_>,
    replicas: &[Slot<'_>],
    status: &mut StatefulSetStatus,
) -> RollingOutcome {
    let min = update_min(ctx);
    for target in (min..replicas.len()).rev() {
        let (name, f) = (replicas[target].name(ctx.inp.set), &replicas[target].f);
        if f.deletable_for_update() {
            ctx.delete(&name, DeleteReason::Update);
            decrement_current(status);
            let blocker = Blocker::UpdateStep { pod: name.into_owned() };
            return RollingOutcome { blocker: Some(blocker), error: None };
        }
        if f.unavailable {
            let held_back = replicas[min..target].iter().any(|q| q.f.outdated());
            let blocker = held_back.then(|| Blocker::UpdateWaiting {
                pod: name.into_owned(),
                wait: f.ordered_wait(ctx.mrs).unwrap_or(PodWait::NotReady),
            });
            return RollingOutcome { blocker, error: None };
        }
    }
    RollingOutcome::default()
}

/// Spec 3.6.2 `updateStatefulSetAfterInvariantEstablished`.
#[doc(alias = "updateStatefulSetAfterInvariantEstablished")]
fn after_invariant_established(
    ctx: &mut Ctx<'_>,
    replicas: &[Slot<'_>],
    status: &mut StatefulSetStatus,
) -> RollingOutcome {
    let max = match spec::max_unavailable(ctx.inp.set) {
        Ok(m) => m,
        Err(e) => return RollingOutcome { blocker: None, error: Some(e) },
    };
    let unavailable = count(replicas.iter().filter(|s| s.f.unavailable).count());
    let min = update_min(ctx);
    let two_phase_mode = spec::is_parallel(ctx.inp.set) && ctx.inp.sem.parallel_two_phase;
    let mut deleted = vec![false; replicas.len()];
    let spent = if two_phase_mode {
        let needing =
            replicas.iter().filter(|s| s.f.unavailable && s.f.deletable_for_update()).count();
        if unavailable >= max && needing == 0 {
            return budget_blocker(replicas, min, unavailable, max, &deleted);
        }
        unavailable + two_phase(ctx, replicas, status, min, max - unavailable, &mut deleted)
    } else {
        if unavailable >= max {
            return budget_blocker(replicas, min, unavailable, max, &deleted);
        }
        unavailable + single_pass(ctx, replicas, status, min, max - unavailable, &mut deleted)
    };
    budget_blocker(replicas, min, spent, max, &deleted)
}

/// The 1.35/1.36 (and OrderedReady) single pass: delete up to `budget` outdated,
/// non-terminating pods from the top down to the partition.
fn single_pass(
    ctx: &mut Ctx<'_>,
    replicas: &[Slot<'_>],
    status: &mut StatefulSetStatus,
    min: usize,
    budget: i32,
    deleted: &mut [bool],
) -> i32 {
    let mut n = 0;
    for target in (min..replicas.len()).rev() {
        if n >= budget {
            break;
        }
        if replicas[target].f.deletable_for_update() {
            ctx.delete(&replicas[target].name(ctx.inp.set), DeleteReason::Update);
            decrement_current(status);
            deleted[target] = true;
            n += 1;
        }
    }
    n
}

/// The 1.37 Parallel two-phase deletion (#137666). Returns the number of phase-2 deletions:
/// only they add unavailability (phase-1 pods were already counted as unavailable).
fn two_phase(
    ctx: &mut Ctx<'_>,
    replicas: &[Slot<'_>],
    status: &mut StatefulSetStatus,
    min: usize,
    budget: i32,
    deleted: &mut [bool],
) -> i32 {
    for target in (min..replicas.len()).rev() {
        let f = replicas[target].f;
        if f.deletable_for_update() && !f.available {
            ctx.delete(&replicas[target].name(ctx.inp.set), DeleteReason::Update);
            decrement_current(status);
            deleted[target] = true;
        }
    }
    let mut phase2 = 0;
    for target in (min..replicas.len()).rev() {
        if phase2 >= budget {
            break;
        }
        let f = replicas[target].f;
        if f.deletable_for_update() && f.available {
            ctx.delete(&replicas[target].name(ctx.inp.set), DeleteReason::Update);
            decrement_current(status);
            deleted[target] = true;
            phase2 += 1;
        }
    }
    phase2
}

/// The maxUnavailable blocker, when the budget holds back an outdated pod at or above the
/// partition that was not deleted this sync.
fn budget_blocker(
    replicas: &[Slot<'_>],
    min: usize,
    unavailable: i32,
    max: i32,
    deleted: &[bool],
) -> RollingOutcome {
    if unavailable < max {
        return RollingOutcome::default();
    }
    let held_back = (min..replicas.len()).any(|i| !deleted[i] && replicas[i].f.outdated());
    let blocker = held_back.then_some(Blocker::MaxUnavailable { unavailable, max });
    RollingOutcome { blocker, error: None }
}
