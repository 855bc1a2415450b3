//! A rollout group rehearsed: a scenario's `rollout group=NAME steps=… zone-bake=…` line rolls
//! the namespace's sets labelled `rollout-group=NAME` one at a time; with `clusters=eu,us,ap`
//! a fleet is rehearsed (the set, or the group, in each of those namespaces, each standing for
//! a cluster: the same run, its members' parts naming the clusters), by the one plan run
//! (`plan::run`, the one `ststui rollout -l rollout-group=NAME` runs), adapted as one set's
//! plan is (`planner`): writes through `ops`, answered at once; the store is the truth (no
//! fresh reads); the group's lease held until it ends.
//!
//! Owns: the group's start. Must not: read a wall clock.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::super::ops::OpError;
use super::super::world::World;
use super::{Rollout, Running, evaluate};
use crate::backend::ObjRef;
use crate::plan::group::part::{Cluster, ROLLOUT_GROUP};
use crate::plan::group::{self, Order, Pick};
use crate::plan::run::{GroupConfig, Run};

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
    /// `group=`: the members are the sets labelled `rollout-group=NAME` (else the set NAME).
    pub labelled: bool,
    /// A fleet's clusters, each a namespace of the simulation (`None`: the group's namespace).
    pub clusters: Option<Vec<String>>,
    pub cluster_bake_seconds: u64,
}

/// The key a group's (or fleet's) run is kept under (never a set's name: `/` is not in one).
fn key_of(r: &GroupRollout) -> ObjRef {
    match r.clusters.as_ref().and_then(|c| c.first()) {
        Some(first) => ObjRef::new(first.clone(), format!("fleet/{}", r.group.name)),
        None => ObjRef::new(r.group.namespace.clone(), format!("group/{}", r.group.name)),
    }
}

/// The members in `ns`: the sets labelled `rollout-group=NAME` in order, or the set NAME.
fn members_in(w: &World, r: &GroupRollout, ns: &str) -> Result<Vec<ObjRef>, OpError> {
    if !r.labelled {
        let key = ObjRef::new(ns, r.group.name.clone());
        if w.store.sets().get(&key).is_none() {
            return Err(OpError::Invalid(format!("fleet {}: no set {key}", r.group.name)));
        }
        return Ok(vec![key]);
    }
    let listed: Vec<&StatefulSet> = w
        .store
        .sets()
        .in_namespace(ns)
        .filter(|s| {
            s.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)) == Some(&r.group.name)
        })
        .collect();
    let order = r.tiers.clone().map_or(Order::Alphabetical, Order::Tiers);
    let names = group::members(&Pick::Listed, &order, &listed).map_err(|e| {
        OpError::Invalid(format!(
            "group {ns}/{}: {e} ({ROLLOUT_GROUP}={})",
            r.group.name, r.group.name
        ))
    })?;
    Ok(names.into_iter().map(|n| ObjRef::new(ns, n)).collect())
}

/// Starts the group's plan; refused at once (the line's error) when it cannot begin.
pub fn start(w: &mut World, r: GroupRollout) -> Result<(), OpError> {
    let spaces = r.clusters.clone().unwrap_or_else(|| vec![r.group.namespace.clone()]);
    let mut sets: Vec<ObjRef> = Vec::new();
    let mut clusters = Vec::new();
    for ns in &spaces {
        for key in members_in(w, &r, ns)? {
            // A simulated cluster's identity: its namespace's (what a real one's kube-system
            // uid is to a fleet's record).
            clusters.push(Cluster { uid: format!("sim-cluster-{ns}"), name: ns.clone() });
            sets.push(key);
        }
    }
    if sets.len() > group::MAX_SETS {
        return Err(OpError::Invalid(format!(
            "fleet {}: {} sets in all (at most {})",
            r.group.name,
            sets.len(),
            group::MAX_SETS
        )));
    }
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
        clusters: r.clusters.is_some().then_some(clusters),
        cluster_bake_seconds: r.cluster_bake_seconds,
        approve_between: false,
        image: None,
    };
    let g = Run::group(cfg, super::ask(&r.plan));
    let key = key_of(&r);
    if w.planner.runs.contains_key(&key) {
        return Err(OpError::Invalid(format!("group {} already rolls", r.group)));
    }
    let run = Running { line: r.plan.line, run: Box::new(g), wake: None, gate: None };
    w.planner.runs.insert(key.clone(), run);
    w.planner.dirty = true;
    if let Some(why) = evaluate(w, &key) {
        super::cancel_wake(w, &key);
        w.planner.runs.remove(&key);
        return Err(OpError::Invalid(why));
    }
    Ok(())
}
