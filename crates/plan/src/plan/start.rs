//! A plan's start, pure: where a new plan begins on what the set and its pods show (the first
//! step not wholly behind the partition; a freeze it finds taken over, its partition the one the
//! plan came from), or why none can (the spec not observed, nothing to roll, every step open).
//!
//! Owns: [`Start`] and [`begin`]. Must not: do IO or read a clock.

use super::Target;
use super::decide::enter;
use super::facts::{Facts, Next, observed_update_revision, partition_now};
use super::record::{Phase, Record, stamp};
use crate::core::pod as podf;
use crate::core::spec;

/// How a plan is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub steps: super::Steps,
    pub bake_seconds: u64,
    pub checks: Vec<String>,
    pub on_failure: super::OnFailure,
    /// Who starts it (the cluster identity).
    pub by: String,
    /// Its gates and ordering (recorded).
    pub gates: super::gate::Gates,
}

/// Why no plan can start on a set now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoStart {
    /// The controller has not observed the spec (its generation).
    #[error(
        "the controller has not observed {name}'s spec yet (generation {generation}): try again in a moment"
    )]
    Unobserved { name: String, generation: i64 },
    /// Every pod runs the update revision already.
    #[error(
        "nothing to roll out: every pod of {name} runs {update}, the update revision (change the template first, with the partition at the replicas or the set frozen)"
    )]
    Nothing { name: String, update: String },
    /// The partition is past every step of the plan.
    #[error(
        "the partition is {partition}: every step of the plan is open already (its last leaves partition {last})"
    )]
    AllOpen { partition: i32, last: i32 },
    /// A Recreate set with nothing to roll and no image asked: its plan sets the image itself
    /// (the controller deletes every old pod the moment the template changes).
    #[error(
        "nothing to roll out on {name}, and it uses the Recreate strategy: the controller deletes every old pod the moment the template changes, so a plan on it sets the image itself, after its gates (`ststui rollout {name} --steps 100% --image IMAGE`)"
    )]
    Recreate { name: String },
    /// A Recreate plan of partial steps.
    #[error(
        "{name} uses the Recreate strategy: a plan on it is one step of every pod (--steps 100%, pauses around it allowed); {steps} would leave {updated} of {replicas} updated after a step, and Recreate deletes every old pod at once (switch it to RollingUpdate or OnDelete for a stepped plan)"
    )]
    RecreateSteps { name: String, steps: String, updated: i32, replicas: i32 },
    /// A `--before-step` gate on a Recreate set whose template changed already.
    #[error(
        "{name} uses the Recreate strategy and its template changed already: its old pods are going, so --before-step (asked before a step's pods go) comes too late; give --image for the plan to set the image once the gate passed, or drop --before-step to follow this rollout"
    )]
    RecreateBeforeStep { name: String },
    /// A Recreate set in a rollout group: the group holds its sets and sets their images
    /// first, which a Recreate set cannot be held for.
    #[error(
        "{name} uses the Recreate strategy: a group holds its sets before their images change, and a Recreate set cannot be held (every old pod goes the moment its template changes); roll it on its own with `ststui rollout {name} --steps 100% --image IMAGE`, after the group"
    )]
    RecreateInGroup { name: String },
    /// A per-pod ordering or pre-delete gate on a Recreate set: no pod is taken one at a time.
    #[error(
        "{name} uses the Recreate strategy: the controller deletes every old pod at once, so there is no pod for {flag} to go before or after (--before-step runs before the plan sets the image, --post-ready on each pod as it is back)"
    )]
    RecreatePerPod { name: String, flag: &'static str },
}

/// The first move of a new plan on what `facts` show: the record of its first step not yet
/// behind the partition, and the write that opens it.
pub fn begin(start: &Start, facts: &Facts<'_>) -> Result<Next, NoStart> {
    let set = facts.set;
    let name = set.metadata.name.as_deref().unwrap_or_default();
    if super::recreate::applies(set) {
        return super::recreate::begin(start, facts);
    }
    let Some(update) = observed_update_revision(set) else {
        let generation = set.metadata.generation.unwrap_or(0);
        return Err(NoStart::Unobserved { name: name.into(), generation });
    };
    let current = set.status.as_ref().and_then(|s| s.current_revision.as_deref()).unwrap_or("");
    let all_updated = facts.pods.iter().all(|(_, p)| podf::revision(p) == update);
    if current == update && all_updated {
        return Err(NoStart::Nothing { name: name.into(), update: update.into() });
    }
    let replicas = spec::replicas(set);
    let targets = start.steps.targets(replicas);
    let now_partition = partition_now(set);
    // A plan begun on a frozen set takes the freeze over: the partition it came from is the
    // one the freeze recorded (what an abort puts back), not the replicas the freeze set.
    let began = super::freeze::holding(set)
        .and_then(|f| f.partition.ok())
        .filter(|_| now_partition.is_some())
        .or(now_partition)
        .unwrap_or(replicas);
    let first = match now_partition {
        None => 1,
        Some(p) => {
            // The first step not wholly behind the partition: one whose partition is the
            // partition now is entered (its pods checked, baked), never counted as done.
            let at = p.min(replicas);
            let below = targets
                .iter()
                .position(|t| matches!(t, Target::Update { partition, .. } if *partition <= at));
            let last = last_partition(&targets).unwrap_or(0);
            match below {
                Some(i) if at >= last => i + 1,
                _ => return Err(NoStart::AllOpen { partition: p, last }),
            }
        }
    };
    // A gate right before the first step to open stays: start at it.
    let first =
        if first > 1 && targets.get(first - 2) == Some(&Target::Gate) { first - 1 } else { first };
    let partition = now_partition.unwrap_or(replicas);
    let record = start.record(facts, (update, current), partition, Some(began));
    Ok(enter(&record, first, &targets, facts))
}

impl Start {
    /// The record of a new plan before its first step, on the revisions `(update, current)`
    /// the set shows, at `partition`, begun at `began_at` (what an abort puts back).
    pub fn record(
        &self,
        facts: &Facts<'_>,
        (update, current): (&str, &str),
        partition: i32,
        began_at: Option<i32>,
    ) -> Record {
        Record {
            steps: self.steps.to_string(),
            bake_seconds: self.bake_seconds,
            checks: self.checks.clone(),
            on_failure: self.on_failure.word().to_string(),
            revision: update.to_string(),
            template: super::record::template_hash(facts.set),
            step: 0,
            of: self.steps.targets(spec::replicas(facts.set)).len(),
            phase: Phase::Waiting,
            since: stamp(facts.now),
            partition,
            by: self.by.clone(),
            started: stamp(facts.now),
            reason: None,
            began_at,
            from: current.to_string(),
            gates: self.gates.clone(),
            target: None,
            gate: None,
        }
    }
}

/// The partition the plan's last opening step leaves.
pub fn last_partition(targets: &[Target]) -> Option<i32> {
    targets.iter().rev().find_map(|t| match t {
        Target::Update { partition, .. } => Some(*partition),
        Target::Gate => None,
    })
}
