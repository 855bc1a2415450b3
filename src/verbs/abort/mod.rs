//! `ststui approve NAME` (a plan's manual gate passes) and `ststui abort NAME [--yes]` (the
//! forced rollback: the template goes back to the previous revision and the pods stuck on the
//! broken one are deleted, kubernetes#67250 — with or without a plan; a plan under way is
//! halted first). Abort shows what it will revert and delete before it does anything, and asks
//! on a terminal; a pipeline passes `--yes`.
//!
//! Owns: those two verbs and the revert that `rollout --on-failure undo` shares.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

mod fleet;
mod group;

use super::session::{Session, SetView};
use super::{Exit, SYNC_TIMEOUT, VerbError};
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::cli::{AbortArgs, NameArgs};
use crate::cluster::{Target, Writes};
use crate::plan::decide::stuck_on;
use crate::plan::record::{self, Phase, Reading, Record};

/// `ststui approve NAME`: the plan waiting at a gate goes on. A reply lost on the way is judged
/// by what the server holds: the approval, or a plan past that gate (its runner acted on it) —
/// approved; the gate still waiting as it was — nothing written; anything else — not known.
pub fn approve(target: Target, args: &NameArgs, start: Instant) -> Result<Exit, VerbError> {
    let deadline = start + Duration::from_millis(args.timeout);
    let mut s = Session::open(target.clone())?;
    let set = s.sync(deadline)?.clone();
    let key = s.key.clone();
    if let Some(p) = crate::plan::group::part::read(&set).any().filter(|p| asks(p)) {
        return approve_cluster(&target, &key, &set, p.clone(), deadline);
    }
    let r = current_plan(&key, &set)?;
    if r.phase != Phase::Gate {
        let now = s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
        return Err(VerbError::new(
            Exit::Expectation,
            format!("{key}: no plan waits for approval ({}); nothing written", r.words(now)),
        ));
    }
    let approved = Record {
        phase: Phase::Approved,
        since: record::stamp(s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now)),
        ..r.clone()
    };
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let op = plan_op(&key, &approved);
    let done = format!("{key}: step {}/{} approved: the plan's runner goes on", r.step, r.of);
    let e = match write(&writes, op, Some(&set), deadline) {
        Ok(()) => {
            super::say(&done);
            return Ok(Exit::Done);
        }
        Err(e) => e,
    };
    // Refused before anything was sent, or a permission: as it is.
    if !matches!(e.exit, Exit::Api | Exit::Expectation) || e.message.contains("permission denied") {
        return Err(e);
    }
    let within = super::left(deadline).max(Duration::from_secs(5));
    let now = match writes.read(&key, within) {
        Ok(fresh) => fresh.set,
        Err(_) => return Err(e),
    };
    match past_gate(&r, &record::read(&now)) {
        Some(true) => {
            super::say(&format!("{done} (the reply was lost; the set shows it: {})", {
                let t = s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
                record::read(&now).plan().map(|p| p.words(t)).unwrap_or_default()
            }));
            Ok(Exit::Done)
        }
        Some(false) => Err(VerbError::new(
            Exit::Expectation,
            format!(
                "{key}: not approved ({}): the plan still waits at its gate; nothing written",
                e.message
            ),
        )),
        None => Err(VerbError {
            unknown_outcome: true,
            ..VerbError::new(
                Exit::Api,
                format!(
                    "{key}: whether the approval landed is not known ({}); the set shows another \
                     plan state now (ststui explain)",
                    e.message
                ),
            )
        }),
    }
}

/// Whether a fleet's part asks for an approval not given yet (`--approve-between`).
fn asks(p: &crate::plan::group::part::Part) -> bool {
    p.approval.as_ref().is_some_and(|a| !a.given())
}

/// `ststui approve NAME` on the first set of a fleet's next cluster: the approval written on its
/// part, where the fleet's runner reads it and starts the cluster.
fn approve_cluster(
    target: &Target,
    key: &ObjRef,
    set: &StatefulSet,
    mut p: crate::plan::group::part::Part,
    deadline: Instant,
) -> Result<Exit, VerbError> {
    let writes = Writes::open(target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let now = record::stamp(k8s_openapi::jiff::Timestamp::now());
    if let Some(a) = p.approval.as_mut() {
        a.by = Some(writes.identity());
        a.at = Some(now);
    }
    let text = serde_json::to_string(&p).unwrap_or_default();
    let op = ClusterOp::GroupPart { set: key.clone(), part: Some(text) };
    write(&writes, op, Some(set), deadline)?;
    super::say(&format!(
        "{key}: approved: fleet {}'s runner starts this cluster ({}/{})",
        crate::text::escape_controls(&p.group),
        p.place + 1,
        p.sets.len()
    ));
    Ok(Exit::Done)
}

/// Whether the set's record shows the gate of `was` passed (`Some(true)`: our approval or a
/// state that follows from it), still waiting as it was (`Some(false)`), or neither (`None`).
fn past_gate(was: &Record, now: &Reading) -> Option<bool> {
    let r = now.plan()?;
    if r.started != was.started || r.revision != was.revision {
        return None;
    }
    if r.step > was.step || (r.step == was.step && r.phase == Phase::Approved) {
        return Some(true);
    }
    if r.step == was.step && r.phase == Phase::Gate && r.since == was.since {
        return Some(false);
    }
    None
}

fn current_plan(key: &ObjRef, set: &StatefulSet) -> Result<Record, VerbError> {
    match record::read(set) {
        Reading::None => {
            Err(VerbError::new(Exit::Expectation, format!("{key} has no rollout plan")))
        }
        Reading::Invalid(why) => {
            Err(VerbError::new(Exit::Expectation, Reading::invalid_words(&why, &key.name)))
        }
        Reading::Plan(r) => Ok(*r),
    }
}

fn plan_op(key: &ObjRef, r: &Record) -> ClusterOp {
    let text = serde_json::to_string(r).unwrap_or_default();
    ClusterOp::Plan { set: key.clone(), partition: None, record: text }
}

fn write(
    w: &Writes,
    op: ClusterOp,
    basis: Option<&StatefulSet>,
    by: Instant,
) -> Result<(), VerbError> {
    written(w, op, basis, by).map(drop)
}

/// [`write`], with the set as the write left it when the server said.
fn written(
    w: &Writes,
    op: ClusterOp,
    basis: Option<&StatefulSet>,
    by: Instant,
) -> Result<Option<StatefulSet>, VerbError> {
    let kind = op.kind();
    let write = Write::on(op, basis.cloned().map(Box::new));
    w.write_returning(write, super::left(by))
        .map(|(_, set)| set)
        .map_err(|f| super::write_failure(kind, crate::cluster::OnceError::Failed(f)))
}

/// `ststui abort NAME [--yes]`: NAME reverted. `--group`: the rollout group NAME is in, its
/// touched sets newest first (`group`) — only when asked: a part on a set is written by
/// whoever may patch it, and never widens an abort by itself.
pub fn abort(target: Target, args: &AbortArgs, start: Instant) -> Result<Exit, VerbError> {
    let deadline = start + Duration::from_millis(args.timeout);
    if let Some(list) = &args.contexts {
        return fleet::abort(&target, args, list, deadline);
    }
    let mut s = Session::open(target.clone())?;
    let set = s.sync(deadline)?.clone();
    let reading = crate::plan::group::part::read(&set);
    if let Some(p) = reading.any().filter(|p| p.fleet()) {
        let contexts: Vec<String> =
            p.clusters.iter().flatten().map(crate::plan::group::part::Cluster::shown).collect();
        let how = format!("`ststui abort {} --contexts {}`", s.key.name, contexts.join(","));
        if args.group {
            return Err(VerbError::new(
                Exit::Usage,
                format!(
                    "{} is {}: {how} reverts the fleet; nothing written",
                    s.key,
                    p.place_words()
                ),
            ));
        }
        super::say(&format!(
            "{} is {}: only {} is reverted ({how} reverts the fleet's clusters, newest first)",
            s.key,
            p.place_words(),
            s.key.name
        ));
    }
    let part = reading.part().cloned();
    match (&part, args.group) {
        (Some(p), true) => return group::abort(&target, args, p, deadline),
        (None, true) => {
            return Err(VerbError::new(
                Exit::Usage,
                format!("{}: --group: it is in no rollout group's plan; nothing written", s.key),
            ));
        }
        (Some(p), false) => {
            if let Some(why) = group_runner_live(&target, &set, &s.key, deadline) {
                return Err(VerbError::new(Exit::Expectation, why));
            }
            super::say(&format!(
                "{} is {}: only {} is reverted (`ststui abort {} --group` reverts the group's \
                 sets, newest first)",
                s.key,
                p.place_words(),
                s.key.name,
                s.key.name
            ));
        }
        (None, false) => {}
    }
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    abort_set(s.view(), &writes, args, deadline, !args.yes)?;
    Ok(Exit::Done)
}

/// Why NAME may not be aborted alone: its group's runner holds the group's lease while the
/// group moves NAME in turn (two writers); the words name the runner and `--group`. A runner
/// not seen from here does not refuse it (abort is the way out of a group that is stuck).
fn group_runner_live(
    target: &Target,
    set: &StatefulSet,
    key: &ObjRef,
    deadline: Instant,
) -> Option<String> {
    use crate::plan::group::held::Held;
    let Held::Driven { part, runner } = super::group_held(target, set, deadline) else {
        return None;
    };
    Some(format!(
        "{key} is {}, driven by {}: it would roll on over a revert of one set; \
         `ststui abort {} --group` reverts the group, or stop its runner first; nothing \
         written",
        part.place_words(),
        crate::text::shown(&runner.words(), 200),
        key.name
    ))
}

/// The server's judgement of each eviction `a` would make, now (a dry run): a budget that would
/// refuse is said before anything is asked or written.
fn judge_evictions(
    a: &crate::steer::abort::Abort,
    key: &ObjRef,
    writes: &Writes,
    args: &AbortArgs,
    deadline: Instant,
) {
    let mut refused = false;
    for (name, uid) in &a.stuck {
        let pod = ObjRef::new(key.namespace.clone(), name.clone());
        let within = super::left(deadline).min(Duration::from_secs(10));
        match writes.would_evict(&pod, Some(uid), within) {
            Ok(()) => {}
            Err(f) if f.kind == crate::backend::FailureKind::Disruption => {
                refused = true;
                super::say(&format!("  {name}: its eviction would be refused now: {}", f.message));
            }
            Err(f) => {
                super::say(&format!("  {name}: a dry run of its eviction failed: {}", f.message))
            }
        }
    }
    if refused && args.force_delete.is_none() {
        super::say(
            "  abort would stop there, the template reverted, unless the budget allows it by \
             then (--force-delete REASON deletes such a pod past its budget, recorded on the set)",
        );
    }
    if let (Some(reason), false) = (&args.force_delete, a.stuck.is_empty()) {
        super::say(&format!(
            "a stuck pod its disruption budget will not let go is deleted past it (--force-delete: \
             {reason}), recorded on the set ({})",
            crate::steer::FORCE_DELETED
        ));
    }
}

/// Aborts the session's set (asking first when `ask`).
pub(super) fn abort_set(
    s: SetView<'_>,
    writes: &Writes,
    args: &AbortArgs,
    deadline: Instant,
    ask: bool,
) -> Result<(), VerbError> {
    let set =
        s.set().cloned().ok_or_else(|| VerbError::new(Exit::Api, format!("{} is gone", s.key)))?;
    let key = s.key.clone();
    let pods: Vec<(i32, Pod)> = s.state.mirror.pods_of(&key).map(|(o, p)| (o, p.clone())).collect();
    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
    let now = s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
    let revisions = s.state.mirror.revisions_of(&key);
    let a = crate::steer::abort::abort(&key, &set, &revisions, &pods, now, &writes.identity())
        .map_err(|r| {
            VerbError::new(Exit::Expectation, format!("{}: nothing written", r.message))
        })?;
    for l in a.preview() {
        super::say(&l);
    }
    judge_evictions(&a, &key, writes, args, deadline);
    if ask {
        confirm()?;
    }
    let by = |w: &crate::backend::Write| w.op.kind();
    let run = |w: crate::backend::Write| {
        let kind = by(&w);
        writes
            .write_returning(w, super::left(deadline))
            .map(|(_, set)| set)
            .map_err(|f| super::write_failure(kind, crate::cluster::OnceError::Failed(f)))
    };
    // The plan's end (with the partition back, any freeze lifted) before the undo, decided on
    // the set it left; after it when it lowers the partition (the broken revision would roll
    // in between).
    let said_end = |a: &crate::steer::abort::Abort| match a.restore {
        Some((from, to)) if from == to => {
            format!("{key}: the plan is aborted; the freeze lifted, partition {to}")
        }
        Some((from, to)) => {
            format!("{key}: the plan is aborted; partition {from} → {to}, where the plan began")
        }
        None => format!("{key}: the plan is aborted"),
    };
    let mut basis = Some(set.clone());
    if let Some(end) = a.end_plan().filter(|_| !a.lowers()) {
        basis = run(end)?;
        super::say(&said_end(&a));
    }
    run(a.undo(basis))?;
    super::say(&format!("{key}: template reverted to revision {}", a.back));
    if let Some(end) = a.end_plan().filter(|_| a.lowers()) {
        run(end)?;
        super::say(&said_end(&a));
    }
    if let Some(release) = a.release() {
        run(release)?;
        super::say(&format!("{key}: the plan's lease, which no runner held, removed"));
    }
    let mut forced: Vec<String> = Vec::new();
    for (w, (name, uid)) in a.deletions().into_iter().zip(&a.stuck) {
        let refused = match writes.write_returning(w, super::left(deadline)) {
            Ok(_) => None,
            Err(f) if f.kind == crate::backend::FailureKind::Disruption => Some(f),
            Err(f) => {
                let kind = crate::backend::WriteKind::EvictPod;
                return Err(super::write_failure(kind, crate::cluster::OnceError::Failed(f)));
            }
        };
        let Some(f) = refused else {
            super::say(&format!(
                "{key}: evicted {name} (stuck on {}): the controller recreates it on the \
                 reverted template",
                a.revision
            ));
            continue;
        };
        let Some(reason) = &args.force_delete else {
            return Err(VerbError::new(
                Exit::Expectation,
                format!(
                    "{}: {}; the template is reverted and {name} stays on {}: abort again once \
                     the budget allows a disruption, or pass --force-delete REASON to delete it \
                     past the budget",
                    f.op, f.message, a.revision
                ),
            ));
        };
        // The bypass is recorded on the set before the deletion it allows.
        forced.push(name.clone());
        run(Write::new(ClusterOp::ForceDeleted {
            set: key.clone(),
            pods: forced.clone(),
            reason: reason.clone(),
            refused: Some(f.message.clone()),
        }))?;
        let pod = ObjRef::new(key.namespace.clone(), name.clone());
        run(Write::new(ClusterOp::DeletePod { pod, force: false, uid: Some(uid.clone()) }))?;
        super::say(&format!(
            "{key}: deleted {name} (stuck on {}) past its disruption budget ({}): \
             --force-delete: {reason}; recorded on the set ({})",
            a.revision,
            f.message,
            crate::steer::FORCE_DELETED
        ));
    }
    Ok(())
}

/// Asks on a terminal; refuses without one (a pipeline passes `--yes`).
pub(super) fn confirm() -> Result<(), VerbError> {
    if !std::io::stdin().is_terminal() {
        return Err(VerbError::new(
            Exit::Usage,
            "abort changes the template and deletes pods: pass --yes to do it without a terminal; \
             nothing written",
        ));
    }
    // A closed stderr is no answer either: never a panic.
    let _ = write!(std::io::stderr(), "abort? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(VerbError::new(Exit::Expectation, "not aborted: nothing written"))
    }
}

/// The forced rollback: the template to the previous revision (`kubectl rollout undo`), then
/// the pods stuck on `revision` deleted (each with its uid as precondition), each said.
pub fn revert(
    w: &Writes,
    key: &ObjRef,
    set: &StatefulSet,
    revision: &str,
    pods: &[(i32, &Pod)],
    limit: Option<Instant>,
    say: &mut dyn FnMut(&str),
) -> Result<(), VerbError> {
    let by = limit.unwrap_or_else(|| Instant::now() + SYNC_TIMEOUT);
    write(w, ClusterOp::Undo { set: key.clone(), revision: None }, Some(set), by)?;
    say(&format!("{key}: template reverted to the previous revision"));
    for (name, uid) in stuck_on(revision, pods) {
        let pod = ObjRef::new(key.namespace.clone(), name.clone());
        write(w, ClusterOp::EvictPod { pod, uid: Some(uid) }, None, by)?;
        say(&format!(
            "{key}: evicted {name} (stuck on {revision}): the controller recreates it on the reverted template"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Record {
        Record {
            steps: "1,pause,100%".into(),
            bake_seconds: 0,
            checks: Vec::new(),
            on_failure: "hold".into(),
            revision: "web-b".into(),
            template: String::new(),
            step: 2,
            of: 3,
            phase: Phase::Gate,
            since: "2026-01-01T00:00:00Z".into(),
            partition: 3,
            by: "ana".into(),
            started: "2026-01-01T00:00:00Z".into(),
            reason: None,
            began_at: Some(4),
            from: String::new(),
            gates: Default::default(),
            target: None,
            gate: None,
        }
    }

    /// An approval whose reply was lost is judged by what the server holds: the approval, or
    /// the runner already past the gate — approved; the gate as it was — nothing written;
    /// another plan or a gate entered again — not known. Never "someone else changed it:
    /// nothing written" for an approval that landed.
    #[test]
    fn a_lost_approval_is_judged_by_the_plan_past_its_gate() {
        let was = gate();
        let plan = |r: Record| Reading::Plan(Box::new(r));
        let approved =
            Record { phase: Phase::Approved, since: "2026-01-01T00:01:00Z".into(), ..gate() };
        assert_eq!(past_gate(&was, &plan(approved)), Some(true));
        let acted = Record { step: 3, phase: Phase::Waiting, partition: 0, ..gate() };
        assert_eq!(past_gate(&was, &plan(acted)), Some(true), "the runner acted on it");
        assert_eq!(past_gate(&was, &plan(gate())), Some(false), "still at the gate");
        let again = Record { since: "2026-01-01T00:05:00Z".into(), ..gate() };
        assert_eq!(past_gate(&was, &plan(again)), None);
        let other = Record { started: "2026-02-01T00:00:00Z".into(), ..gate() };
        assert_eq!(past_gate(&was, &plan(other)), None, "another plan");
        assert_eq!(past_gate(&was, &Reading::None), None);
    }
}
