//! The pod half of a sync (spec 3.2 steps 1–12, 3.3, 3.4): over the claimed pods as `scan`
//! sorted them out (in-range replicas with placeholders, condemned pods), create/repair
//! replicas, fix claim ownerRefs of condemned pods, scale down, then hand over to the rolling
//! update (3.6).
//!
//! Owns: `updateStatefulSet`, `processReplica`, `processCondemned`, `runForAll` and
//! `slowStartBatch` semantics. Must not touch: revisions (resolved before) or the status write
//! decision (4.3, in `reconcile`). Pods are borrowed; only placeholders and pods it changes are
//! owned.
//!
//! Burst batches run "concurrently" upstream; here the items of a batch are processed in index
//! order, so effects within a batch come out in ordinal order.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;

use super::batch::{Flow, run_for_all};
pub use super::batch::{MAX_BATCH_SIZE, batch_sizes};
use super::ctx::Ctx;
pub use super::ctx::UpdateInput;
use super::facts::{FactEnv, Slot};
use super::newpod;
use super::options::Semantics;
use super::pod;
use super::pvc::{self, ClaimTerminating, Sink};
use super::recreate;
use super::rolling;
use super::scan::Scanned;
use super::spec;
use super::status::{Counts, base_status};
use super::types::{Blocker, BurstItem, DeleteReason, Effect, Hold, Now, PodWait, SyncError};

/// What `updateStatefulSet` returns, plus the reasons.
#[derive(Debug, Default)]
pub struct UpdateOutcome {
    pub status: StatefulSetStatus,
    pub effects: Vec<Effect>,
    pub waiting_on: Option<Blocker>,
    pub held_by: Option<Hold>,
    pub error: Option<SyncError>,
    /// Revision labels of claimed pods that are neither current nor update (live for 2.7).
    pub other_revisions: Vec<String>,
    /// The burst items among `effects`.
    pub burst: Vec<BurstItem>,
}

impl Ctx<'_> {
    /// Runs one `runForAll` item; in a burst (`batch`), notes which effects it wrote.
    fn item(&mut self, batch: Option<u32>, f: impl FnOnce(&mut Self) -> Flow) -> Flow {
        let start = self.sink.effects.len();
        let flow = f(self);
        if let Some(b) = batch {
            self.sink.note_item(start, b);
        }
        flow
    }

    /// The placeholder object for `ordinal` (3.5), built only when needed. A placeholder past
    /// int32 has ordinal −1 (what its name parses to): upstream builds it from an ordinal past
    /// int32, and every such ordinal gives the same pod, `<set>--1`.
    fn placeholder(&self, ordinal: i32) -> Pod {
        let i = &self.inp;
        let (cur, upd) = (i.current_revision, i.update_revision);
        let ordinal = if ordinal < 0 { i64::from(i32::MAX) + 1 } else { i64::from(ordinal) };
        newpod::new_versioned_pod(i.current_set, i.update_set, cur, upd, ordinal)
    }

    /// Spec 3.3 `processReplica`. A healthy replica is decided from its facts alone (its pod
    /// object is only read when something is to be done).
    #[doc(alias = "processReplica")]
    #[inline(never)] // keeps its large frame out of the caller's settled-replica fast path
    fn process_replica(&mut self, slot: &Slot<'_>) -> Flow {
        if self.settled(slot) {
            return Flow::go_on();
        }
        let f = &slot.f;
        let owned;
        let p = match slot.pod {
            Some(p) => p,
            None => {
                owned = self.placeholder(f.ordinal);
                &owned
            }
        };
        let (set, ord) = (self.inp.set, f.ordinal);
        let name = || pod::name(p).to_string();
        if f.terminal {
            if !f.terminating {
                self.delete(pod::name(p), DeleteReason::Failed);
            }
            return Flow::exit(Blocker::TerminalPod { pod: name(), ordinal: ord });
        }
        if !f.created {
            if let Some(claim) = pvc::stale_claim(set, p, self.inp.claims, &mut self.sink) {
                return Flow::exit(Blocker::StaleClaim { pod: name(), claim });
            }
            if let Err(c) = self.create_stateful_pod(p) {
                return Flow::claim_error(pod::name(p), c);
            }
            if self.monotonic {
                let wait = PodWait::NotCreated;
                return Flow::exit(Blocker::Ordered { pod: name(), ordinal: ord, wait });
            }
        }
        if f.pending
            && let Err(c) = pvc::create_missing_claims(set, p, self.inp.claims, &mut self.sink)
        {
            return Flow::claim_error(pod::name(p), c);
        }
        if self.monotonic
            && let Some(wait) = f.ordered_wait(self.mrs)
        {
            return Flow::exit(Blocker::Ordered { pod: name(), ordinal: ord, wait });
        }
        let update_set = self.inp.update_set;
        let retention_match = self.no_claim_templates
            || pvc::claims_match_retention_policy(update_set, p, self.inp.claims, &mut self.sink);
        if f.identity_and_storage && retention_match {
            return Flow::go_on();
        }
        match self.update_stateful_pod(p) {
            Ok(()) => Flow::go_on(),
            Err(c) => Flow::claim_error(pod::name(p), c),
        }
    }

    /// A created, settled replica with its identity and storage, and no claims to check: every
    /// step of [`Ctx::process_replica`] passes (in its order) without reading the pod.
    #[inline]
    fn settled(&self, slot: &Slot<'_>) -> bool {
        let f = &slot.f;
        f.created
            && !f.terminal
            && !f.pending
            && (!self.monotonic || f.ordered_wait(self.mrs).is_none())
            && f.identity_and_storage
            && self.no_claim_templates
    }

    /// Spec 3.7 `CreateStatefulPod`: claims, the pod, then retention ownerRefs (read from the
    /// lister, so claims created just now are not seen).
    #[doc(alias = "CreateStatefulPod")]
    fn create_stateful_pod(&mut self, p: &Pod) -> Result<(), ClaimTerminating> {
        let set = self.inp.set;
        pvc::create_claims(set, pod::ordinal(p), self.inp.claims, &mut self.sink)?;
        self.sink.push(Effect::CreatePod(Box::new(p.clone())));
        pvc::update_pod_claims_for_retention(set, p, self.inp.claims, &mut self.sink);
        Ok(())
    }

    /// Spec 3.3 `UpdateStatefulPod`: repair identity, storage (creating missing claims) and
    /// retention ownerRefs; PUT the pod if anything was inconsistent.
    #[doc(alias = "UpdateStatefulPod")]
    fn update_stateful_pod(&mut self, p: &Pod) -> Result<(), ClaimTerminating> {
        let set = self.inp.update_set;
        let mut copy = p.clone();
        let mut dirty = false;
        if !newpod::identity_matches(set, &copy) {
            newpod::update_identity(set, &mut copy);
            dirty = true;
        }
        if !newpod::storage_matches(set, &copy) {
            newpod::update_storage(set, &mut copy);
            dirty = true;
            pvc::create_claims(set, pod::ordinal(&copy), self.inp.claims, &mut self.sink)?;
        }
        if !pvc::claims_match_retention_policy(set, &copy, self.inp.claims, &mut self.sink) {
            pvc::update_pod_claims_for_retention(set, &copy, self.inp.claims, &mut self.sink);
            dirty = true;
        }
        if dirty {
            self.sink.push(Effect::UpdatePod(Box::new(copy)));
        }
        Ok(())
    }

    /// Spec 3.4 `processCondemned`.
    #[doc(alias = "processCondemned")]
    fn process_condemned(&mut self, slot: &Slot<'_>, first_unavailable: Option<&str>) -> Flow {
        let (Some(p), f) = (slot.pod, &slot.f) else { return Flow::go_on() };
        let name = pod::name(p);
        if f.terminating {
            if self.monotonic {
                return Flow::exit(Blocker::CondemnedTerminating { pod: name.into() });
            }
            return Flow::go_on();
        }
        if self.monotonic && !f.available && first_unavailable != Some(name) {
            return Flow::exit(Blocker::CondemnedUnhealthy {
                pod: name.into(),
                first_unavailable: first_unavailable.map(str::to_string),
            });
        }
        self.delete(name, DeleteReason::ScaleDown);
        Flow::exit(Blocker::ScaleDownStep { pod: name.into() })
    }
}

/// Spec 3.2 step 6: the lowest-ordinal unavailable in-range pod, else the lowest unavailable
/// condemned pod.
fn first_unavailable(
    set: &StatefulSet,
    replicas: &[Slot<'_>],
    condemned: &[Slot<'_>],
) -> Option<String> {
    let in_range = replicas.iter().find(|s| s.f.unavailable);
    let first = in_range.or_else(|| condemned.iter().rev().find(|s| s.f.unavailable));
    first.map(|s| s.name(set).into_owned())
}

/// The per-pod facts environment of a sync of `set` on these revisions.
pub fn fact_env<'a>(
    set: &'a StatefulSet,
    current: &'a str,
    update: &'a str,
    now: Now,
    sem: &'a Semantics,
) -> FactEnv<'a> {
    FactEnv { set, current, update, min_ready: spec::min_ready(set, sem), now, sem }
}

/// Spec 3.2 `updateStatefulSet` (steps 1–13) over the claimed pods, already summarised and
/// sorted out by `scan` (steps 2–5).
#[doc(alias = "updateStatefulSet")]
pub fn update_stateful_set(inp: UpdateInput<'_>, mut scanned: Scanned<'_>) -> UpdateOutcome {
    let set = inp.set;
    let mrs = spec::min_ready_seconds(set);
    let (cur, upd) = (inp.current_revision, inp.update_revision);
    let env = fact_env(set, cur, upd, inp.now, inp.sem);
    scanned.finish(inp.current_set, &env);
    let placed = scanned.placed_counts();
    let Scanned { counts, replicas, condemned, other_revisions, .. } = scanned;
    debug_assert_eq!(placed, count(&replicas, &condemned));
    let mut status = base_status(set, cur, upd, inp.collision_count, inp.sem);
    counts.apply(&mut status);
    let mut out = UpdateOutcome { other_revisions, ..Default::default() };
    let first = first_unavailable(set, &replicas, &condemned);
    if set.metadata.deletion_timestamp.is_some() {
        out.status = status;
        out.waiting_on = Some(Blocker::SetDeleting);
        return out;
    }
    let monotonic = !spec::is_parallel(set);
    let no_claim_templates = spec::claim_templates(inp.update_set).is_empty();
    let mut ctx = Ctx { inp, monotonic, mrs, sink: Sink::default(), no_claim_templates };
    let recreating = spec::strategy(set).recreates(inp.sem);
    if recreating {
        let phase = ctx.recreate_delete_and_wait(&replicas, &condemned);
        if phase.waiting() {
            recreate::set_progressing(
                &mut status,
                true,
                recreate::IN_PROGRESS,
                recreate::DELETING,
                inp.now,
            );
            placed.apply(&mut status);
            out.waiting_on = phase.blocker();
            out.status = status;
            out.effects = ctx.sink.effects;
            out.burst = ctx.sink.burst;
            return out;
        }
        if cur != upd {
            recreate::set_progressing(
                &mut status,
                true,
                recreate::IN_PROGRESS,
                recreate::CREATING,
                inp.now,
            );
        }
    }
    let replica = |ctx: &mut Ctx<'_>, s: &Slot<'_>| {
        if ctx.settled(s) { Flow::go_on() } else { ctx.process_replica(s) }
    };
    // Burst batch numbers: the replicas' from 0, the condemned pods' from 1 << 16.
    let stop = run_for_all(replicas.len(), monotonic, |i, b| {
        ctx.item(b, |ctx| replica(ctx, &replicas[i]))
    })
    .or_else(|| {
        fix_condemned_claims(&mut ctx, &condemned);
        run_for_all(condemned.len(), monotonic, |i, b| {
            ctx.item(b.map(|b| b | 1 << 16), |ctx| {
                ctx.process_condemned(&condemned[i], first.as_deref())
            })
        })
    });
    placed.apply(&mut status);
    if let Some(stop) = stop {
        out.waiting_on = stop.blocker.filter(|_| monotonic || stop.error.is_some());
        out.error = stop.error;
    } else if spec::strategy(set).on_delete {
        out.held_by = on_delete_hold(&replicas);
    } else if !recreating {
        let r = rolling::rolling_update(&mut ctx, &replicas, &mut status);
        out.waiting_on = r.blocker;
        out.error = r.error;
        if out.waiting_on.is_none() && out.error.is_none() {
            out.held_by = partition_hold(set, &replicas);
        }
    }
    out.status = status;
    out.effects = ctx.sink.effects;
    out.burst = ctx.sink.burst;
    out
}

/// Upstream `updateStatus` over the slot lists.
fn count(a: &[Slot<'_>], b: &[Slot<'_>]) -> Counts {
    let mut c = Counts::default();
    for s in a.iter().chain(b) {
        c.add_facts(&s.f);
    }
    c
}

/// Spec 3.2 step 9: retention ownerRefs of condemned pods, before any of them is deleted.
fn fix_condemned_claims(ctx: &mut Ctx<'_>, condemned: &[Slot<'_>]) {
    let (us, claims) = (ctx.inp.update_set, ctx.inp.claims);
    if ctx.no_claim_templates {
        return;
    }
    for p in condemned.iter().filter_map(|c| c.pod) {
        if !pvc::claims_match_retention_policy(us, p, claims, &mut ctx.sink) {
            pvc::update_pod_claims_for_retention(us, p, claims, &mut ctx.sink);
        }
    }
}

fn count_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn on_delete_hold(replicas: &[Slot<'_>]) -> Option<Hold> {
    let outdated = replicas.iter().filter(|s| s.f.outdated()).count();
    (outdated > 0).then(|| Hold::OnDelete { outdated: count_i32(outdated) })
}

fn partition_hold(set: &StatefulSet, replicas: &[Slot<'_>]) -> Option<Hold> {
    let partition = spec::strategy(set).partition;
    if partition <= 0 || replicas.is_empty() {
        return None;
    }
    let held = usize::try_from(partition).unwrap_or(usize::MAX).min(replicas.len());
    let outdated = replicas[..held].iter().filter(|s| s.f.outdated()).count();
    let start = spec::start_ordinal(set);
    (outdated > 0).then(|| Hold::Partition {
        partition,
        first_held: start,
        last_held: start + count_i32(held) - 1,
        outdated: count_i32(outdated),
    })
}
