//! `ststui step NAME [--to N] [--force] [--wait]`: the console's partition step as a verb.
//! Lowering the partition opens the next ordinals to the rolling update; the step refuses while
//! the ordinals already open are not updated and Ready (naming them), unless `--force`, so a
//! pipeline cannot run ahead of a canary that has not proved itself.
//!
//! Owns: the step's decision ([`decide`], pure) and its run.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::progress::Goal;
use super::session::Session;
use super::{Exit, SYNC_TIMEOUT, VerbError, write_failure};
use crate::app::AppState;
use crate::app::view::grid::{PodState, RevClass};
use crate::backend::{ClusterOp, ObjRef, Write, WriteKind};
use crate::cli::StepArgs;
use crate::cluster::Target;
use crate::core::spec;

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write this partition; `opens` the ordinal indexes `to..from` (empty when raising).
    Write { from: i32, to: i32 },
    /// Nothing to write, and why.
    Nothing(String),
}

/// Decides a step on what the state holds; an `Err` is the refusal (exit 1).
pub fn decide(
    state: &AppState,
    key: &ObjRef,
    to: Option<i32>,
    force: bool,
) -> Result<Decision, VerbError> {
    let refuse = |m: String| Err(VerbError::new(Exit::Expectation, m));
    let Some(set) = state.mirror.set(key) else { return refuse(format!("{key} is gone")) };
    let st = spec::strategy(set);
    if st.on_delete {
        return refuse(format!(
            "{key} is OnDelete: the partition applies to RollingUpdate only; pods update when \
             deleted (kubectl delete pod), or switch the strategy in the console (o)"
        ));
    }
    if let Some(f) = crate::steer::frozen(set) {
        return refuse(format!(
            "{key} is frozen by {} since {}: run `ststui resume {}` first (it restores \
             partition {})",
            f.by, f.at, key.name, f.partition
        ));
    }
    let replicas = spec::replicas(set);
    let from = st.partition;
    // A partition above the replicas holds everything: a step starts from the replicas.
    let effective = from.min(replicas);
    let target = match to {
        Some(n) => n,
        None if effective <= 0 => {
            return refuse(format!(
                "{key}: partition is {from}, every ordinal is open already: nothing to step"
            ));
        }
        None => effective - 1,
    };
    if target == from {
        return Ok(Decision::Nothing(format!(
            "{key}: partition is {from} already: nothing to change"
        )));
    }
    if target < effective && !force {
        let waiting = not_ready_open(state, key, set, effective);
        if !waiting.is_empty() {
            return refuse(format!(
                "{key}: the ordinals already open are not all updated and Ready ({}); wait for \
                 them (ststui wait {}) or pass --force",
                waiting.join(", "),
                key.name
            ));
        }
    }
    Ok(Decision::Write { from, to: target })
}

/// The pods at or above the partition that are not on the update revision and Ready.
fn not_ready_open(
    state: &AppState,
    key: &ObjRef,
    set: &StatefulSet,
    partition: i32,
) -> Vec<String> {
    let Some(grid) = super::progress::grid(state, key) else { return Vec::new() };
    let first = spec::start_ordinal(set) + partition;
    grid.cells
        .iter()
        .filter(|c| !c.condemned && c.ordinal >= first)
        .filter(|c| c.rev != RevClass::Update || c.state != PodState::Ready)
        .map(|c| format!("{}-{} {}", key.name, c.ordinal, describe(c.rev, c.state)))
        .collect()
}

fn describe(rev: RevClass, state: PodState) -> String {
    match (rev, state) {
        (_, PodState::Placeholder) => "not created".into(),
        (RevClass::Update, s) => s.word().to_string(),
        (_, s) => format!("{}, not updated", s.word()),
    }
}

/// Runs the step (and the wait, with `--wait`).
pub fn run(target: Target, args: &StepArgs) -> Result<Exit, VerbError> {
    let mut s = Session::open(target)?;
    s.sync(SYNC_TIMEOUT)?;
    let key = s.key.clone();
    let (from, to) = match decide(&s.state, &key, args.to, args.force)? {
        Decision::Nothing(why) => {
            super::say(&why);
            return Ok(Exit::Done);
        }
        Decision::Write { from, to } => (from, to),
    };
    let basis = s.set().cloned().map(Box::new);
    let replicas = s.set().map(spec::replicas).unwrap_or(0);
    let write = Write { op: ClusterOp::SetPartition { set: key.clone(), partition: to }, basis };
    match write_partition(&s.target, write) {
        Ok(Some(said)) => super::say(&said),
        Ok(None) => {
            let opened = opens(&key, &s, to, from.min(replicas));
            super::say(&format!("{key}: partition {from} → {to}{opened}"))
        }
        Err(e) => return Err(e),
    }
    if !args.wait || to >= from.min(replicas) {
        return Ok(Exit::Done);
    }
    let goal = Goal::Opened { partition: to, until: from.min(replicas) };
    super::watch(&mut s, goal, args.timeout, args.stuck_after)
}

/// Writes the partition as the console does (its resourceVersion as the precondition; a 409
/// re-read and re-decided: through when only the status moved, a conflict naming the change
/// otherwise).
pub fn write_partition(target: &Target, write: Write) -> Result<Option<String>, VerbError> {
    crate::cluster::write_once(target, |_| write).map_err(|e| write_failure(WriteKind::PatchSet, e))
}

fn opens(key: &ObjRef, s: &Session, to: i32, until: i32) -> String {
    if to >= until {
        return String::new();
    }
    let start = s.set().map(spec::start_ordinal).unwrap_or(0);
    let names: Vec<String> = (to..until).map(|i| format!("{}-{}", key.name, start + i)).collect();
    format!(" (opens {})", names.join(", "))
}
