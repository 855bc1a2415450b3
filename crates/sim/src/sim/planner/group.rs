//! A rollout group rehearsed: a scenario's `rollout group=NAME steps=… zone-bake=…` line rolls
//! the namespace's sets labelled `rollout-group=NAME` one at a time, by the group engine
//! (`plan::group::run`, the one `ststui rollout -l rollout-group=NAME` runs), adapted as the
//! single plan is: writes through `ops`, answered at once; the store is the truth (no fresh
//! reads); the group's lease held until it ends.
//!
//! Owns: the group's start and its turn's view. Must not: read a wall clock.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::super::ops::OpError;
use super::super::world::World;
use super::{Driver, Rollout, Run, evaluate, pods_of};
use crate::backend::ObjRef;
use crate::plan::group::part::ROLLOUT_GROUP;
use crate::plan::group::run::{GroupConfig, GroupEnd, GroupEngine, GroupView, Member, Step};
use crate::plan::group::{self, Order, Pick};

/// A `rollout group=…` line.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRollout {
    /// The group's namespace and name (the `rollout-group` label's value).
    pub group: ObjRef,
    /// Each set's plan (its `set` is unused).
    pub plan: Rollout,
    pub zone_bake_seconds: u64,
    /// `batches=1,2,4`: each set's steps as batches of pods.
    pub batches: Option<Vec<u32>>,
    /// `order=fe,be`: tiers; alphabetical otherwise.
    pub tiers: Option<Vec<String>>,
}

/// The key a group's run is kept under (never a set's name: `/` is not in one).
fn key_of(group: &ObjRef) -> ObjRef {
    ObjRef::new(group.namespace.clone(), format!("group/{}", group.name))
}

/// Starts the group's plan; refused at once (the line's error) when it cannot begin.
pub fn start(w: &mut World, r: GroupRollout) -> Result<(), OpError> {
    let ns = r.group.namespace.clone();
    let listed: Vec<&StatefulSet> = w
        .store
        .sets()
        .in_namespace(&ns)
        .filter(|s| {
            s.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)) == Some(&r.group.name)
        })
        .collect();
    let order = r.tiers.clone().map_or(Order::Alphabetical, Order::Tiers);
    let names = group::members(&Pick::Listed, &order, &listed).map_err(|e| {
        OpError::Invalid(format!("group {}: {e} ({ROLLOUT_GROUP}={})", r.group, r.group.name))
    })?;
    let sets: Vec<ObjRef> = names.iter().map(|n| ObjRef::new(ns.clone(), n.clone())).collect();
    if let Some(busy) = sets.iter().find(|s| w.planner.runs_on(s)) {
        return Err(OpError::Invalid(format!(
            "a plan already runs on {busy}: expected it to end before the group starts"
        )));
    }
    let mut cfg_engine = super::config(&r.plan);
    cfg_engine.set = sets[0].clone();
    let cfg = GroupConfig {
        group: r.group.name.clone(),
        sets,
        zone_bake_seconds: r.zone_bake_seconds,
        batches: r.batches.clone(),
        engine: cfg_engine,
    };
    let g = GroupEngine::new(cfg, super::ask(&r.plan));
    let key = key_of(&r.group);
    if w.planner.runs.contains_key(&key) {
        return Err(OpError::Invalid(format!("group {} already rolls", r.group)));
    }
    let run = Run { line: r.plan.line, driver: Driver::Group(Box::new(g)), wake: None, gate: None };
    w.planner.runs.insert(key.clone(), run);
    w.planner.dirty = true;
    if let Some(why) = evaluate(w, &key) {
        super::cancel_wake(w, &key);
        w.planner.runs.remove(&key);
        return Err(OpError::Invalid(why));
    }
    Ok(())
}

/// One turn of the group on the store as it is.
pub(super) fn turn(w: &World, g: &mut GroupEngine, now: Timestamp) -> Step {
    // Borrowed from the store: nothing cloned per evaluation.
    let sets: Vec<Option<&StatefulSet>> = g.sets().iter().map(|k| w.store.sets().get(k)).collect();
    let pods: Vec<Vec<(i32, &Pod)>> = g
        .sets()
        .iter()
        .zip(&sets)
        .map(|(k, s)| s.map(|s| pods_of(w, k, s)).unwrap_or_default())
        .collect();
    let frozen: Vec<Option<String>> =
        sets.iter().map(|s| s.and_then(crate::steer::holding).map(|f| f.words())).collect();
    let members: Vec<Member<'_>> = sets
        .iter()
        .zip(&pods)
        .zip(&frozen)
        .map(|((s, p), f)| Member {
            set: *s,
            pods: p,
            min_ready: s.map_or(super::min_ready_zero(), |s| super::min_ready(w, s)),
            frozen: f.as_deref(),
        })
        .collect();
    let ns = g.sets().first().map(|k| k.namespace.clone()).unwrap_or_default();
    let budgets: Vec<_> = w.store.budgets().in_namespace(&ns).collect();
    let view = GroupView { members: &members, now, fresh: true, budgets: &budgets };
    g.next(&view)
}

/// The group's run ended: a refusal is the line's error; a stop an error line.
pub(super) fn ended(w: &mut World, key: &ObjRef, end: GroupEnd) -> Option<String> {
    match end {
        GroupEnd::Refused { why, .. } => {
            Some(format!("rollout {}: {why}", key.name.replacen("group/", "group=", 1)))
        }
        GroupEnd::Stopped { why, .. } => {
            super::end(w, key, Some(format!("group plan stopped: {why}")));
            None
        }
        GroupEnd::Done | GroupEnd::Halted { .. } => {
            super::end(w, key, None);
            None
        }
    }
}
