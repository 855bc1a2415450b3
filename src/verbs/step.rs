//! `ststui step NAME [--to N] [--force] [--wait]`: the console's partition step as a verb.
//! Lowering the partition opens the next ordinals to the rolling update; the step refuses while
//! the ordinals already open are not updated and Ready (naming them), and refuses to raise the
//! partition over updated pods, unless `--force`, so a pipeline cannot run ahead of a canary
//! that has not proved itself.
//!
//! Safe to retry: the write records the step on the set (`steer::step`) and the record goes once
//! the outcome is known; a rerun that finds a record whose step landed does not step again.
//!
//! Owns: the step's decision ([`decide`], pure) and its run.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::progress::Goal;
use super::session::Session;
use std::time::{Duration, Instant};

use super::{Exit, SYNC_TIMEOUT, VerbError, write_failure};
use crate::app::AppState;
use crate::app::view::grid::RevClass;
use crate::backend::{ClusterOp, ObjRef, Write, WriteKind};
use crate::cli::StepArgs;
use crate::cluster::{Target, Written};
use crate::core::spec;
use crate::plan::group::held::Held;
use crate::steer;

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write this partition; `opens` the ordinal indexes `to..from` (empty when raising).
    Write { from: i32, to: i32 },
    /// Nothing to write, and why.
    Nothing(String),
}

/// Decides a step on what the state holds and how its rollout group holds it (a group's
/// runner driving it refuses a step by hand unless `--force`); an `Err` is the refusal (exit 1).
pub fn decide(
    state: &AppState,
    key: &ObjRef,
    (to, force): (Option<i32>, bool),
    held: &Held,
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
            "{}: run `ststui resume {}` first (it restores partition {})",
            f.of_set(&key.to_string()),
            key.name,
            f.recorded()
        ));
    }
    if let Some(p) = held.part().filter(|_| held.driven() && !force) {
        return refuse(format!(
            "{key} is {}: the group moves it in turn, and a step by hand would put a second set \
             of the group in motion (ststui explain {} shows the group; --force steps it all the \
             same)",
            p.place_words(),
            key.name
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
    if target > from && !force {
        let updated = updated_held(state, key, set, from, target);
        let over = if updated.is_empty() {
            String::new()
        } else {
            format!(" over updated pods ({}), which stay updated", updated.join(", "))
        };
        return refuse(format!(
            "{key}: --to {target} raises the partition from {from}{over}: raising never reverts \
             a pod; pass --force to raise it"
        ));
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
    match super::progress::grid(state, key) {
        Some(grid) => crate::app::view::grid::not_ready_open(&grid, set, partition),
        None => Vec::new(),
    }
}

/// The updated pods a raise from `from` to `to` holds behind the partition.
fn updated_held(
    state: &AppState,
    key: &ObjRef,
    set: &StatefulSet,
    from: i32,
    to: i32,
) -> Vec<String> {
    let Some(grid) = super::progress::grid(state, key) else { return Vec::new() };
    let start = spec::start_ordinal(set);
    let held = (start + from.max(0))..(start + to);
    grid.cells
        .iter()
        .filter(|c| c.exists && c.rev == RevClass::Update && held.contains(&c.ordinal))
        .map(|c| format!("{}-{}", key.name, c.ordinal))
        .collect()
}

/// Runs the step (and the wait, with `--wait`). `--timeout` bounds it all; without it the first
/// view and the write have [`SYNC_TIMEOUT`] each and the wait no limit.
pub fn run(target: Target, args: &StepArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let mut s = Session::open(target)?;
    s.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    let key = s.key.clone();
    let write_by = limit.unwrap_or_else(|| Instant::now() + SYNC_TIMEOUT);
    let replicas = s.set().map(spec::replicas).unwrap_or(0);
    // An earlier run's step whose outcome that run never learnt.
    if let Some(p) = s.set().and_then(steer::pending)
        && s.set().is_some_and(|set| spec::strategy(set).partition == p.to)
    {
        settle(&s.target, &key, write_by);
        super::say(&format!(
            "{key}: partition {} → {} was written at {} by {} (that run never learnt it): not \
             stepping again",
            p.from,
            p.to,
            crate::text::shown(&p.at, 40),
            crate::text::shown(&p.by, 100)
        ));
        return after(&mut s, args, (p.from, p.to, replicas), (limit, start));
    }
    let held = s.set().map_or(Held::Free, |set| super::group_held(&s.target, set, write_by));
    let (from, to) = match decide(&s.state, &key, (args.to, args.force), &held)? {
        Decision::Nothing(why) => {
            super::say(&why);
            return Ok(Exit::Done);
        }
        Decision::Write { from, to } => {
            if let Held::Orphaned { part, runner } = &held {
                super::say(&format!(
                    "{key} is {}, and the group has {}: nothing drives it, the step is by hand",
                    part.place_words(),
                    crate::text::shown(&runner.words(), 200)
                ));
            }
            (from, to)
        }
    };
    super::warn_gitops("step", "", s.set());
    let basis = s.set().cloned().map(Box::new);
    let write = Write::on(ClusterOp::Step { set: key.clone(), from, to }, basis);
    let read_back = match write_partition(&s.target, write, write_by) {
        Ok(Written::Unchanged(said)) => {
            super::say(&said);
            return Ok(Exit::Done);
        }
        Ok(Written::Done) => "",
        Ok(Written::ReadBack(_)) => " (the reply was lost; read back)",
        Err(mut e) => {
            if e.unknown_outcome {
                e.message.push_str(&format!(
                    "; rerunning `ststui step {}` is safe: it finds this step's record on the \
                     set and does not step twice",
                    key.name
                ));
            }
            return Err(e);
        }
    };
    settle(&s.target, &key, write_by);
    let opened = opens(&key, &s, to, from.min(replicas));
    super::say(&format!("{key}: partition {from} → {to}{opened}{read_back}"));
    after(&mut s, args, (from, to, replicas), (limit, start))
}

/// With `--wait`: waits for the ordinals the step opened.
fn after(
    s: &mut Session,
    args: &StepArgs,
    (from, to, replicas): (i32, i32, i32),
    (limit, start): (Option<Instant>, Instant),
) -> Result<Exit, VerbError> {
    if !args.wait || to >= from.min(replicas) {
        return Ok(Exit::Done);
    }
    let goal = Goal::Opened { partition: to, until: from.min(replicas) };
    super::watch(s, goal, limit, args.stuck_after, start)
}

/// Removes the step's record now that its outcome is known (best effort: a record left behind
/// only makes the next step check the partition).
fn settle(target: &Target, key: &ObjRef, by: Instant) {
    let write = Write::new(ClusterOp::StepSettled { set: key.clone() });
    if let Err(e) = crate::cluster::write_once(target, super::left(by), |_| write, |_| {}) {
        let e = write_failure(WriteKind::PatchSet, e);
        crate::text::err_line(&format!(
            "ststui step: the step's record stays on the set: {}",
            e.message
        ));
    }
}

/// Writes the partition as the console does (its resourceVersion as the precondition; a 409
/// re-read and re-decided: through when only the status moved, a conflict naming the change
/// otherwise; a lost reply read back until `by`).
pub fn write_partition(target: &Target, write: Write, by: Instant) -> Result<Written, VerbError> {
    crate::cluster::write_once(target, super::left(by), |_| write, |_| {})
        .map_err(|e| write_failure(WriteKind::PatchSet, e))
}

fn opens(key: &ObjRef, s: &Session, to: i32, until: i32) -> String {
    if to >= until {
        return String::new();
    }
    let start = s.set().map(spec::start_ordinal).unwrap_or(0);
    let names: Vec<String> = (to..until).map(|i| format!("{}-{}", key.name, start + i)).collect();
    format!(" (opens {})", names.join(", "))
}
