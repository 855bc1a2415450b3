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

use super::session::Session;
use super::{Exit, SYNC_TIMEOUT, VerbError};
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::cli::{AbortArgs, NameArgs};
use crate::cluster::{Target, Writes};
use crate::plan::decide::{halted, observed_update_revision, stuck_on};
use crate::plan::record::{self, Phase, Record};

/// `ststui approve NAME`: the plan waiting at a gate goes on.
pub fn approve(target: Target, args: &NameArgs, start: Instant) -> Result<Exit, VerbError> {
    let deadline = start + Duration::from_millis(args.timeout);
    let mut s = Session::open(target.clone())?;
    let set = s.sync(deadline)?.clone();
    let key = s.key.clone();
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
    write(&writes, op, Some(&set), deadline)?;
    super::say(&format!("{key}: step {}/{} approved: the plan's runner goes on", r.step, r.of));
    Ok(Exit::Done)
}

fn current_plan(key: &ObjRef, set: &StatefulSet) -> Result<Record, VerbError> {
    match record::plan(set) {
        None => Err(VerbError::new(Exit::Expectation, format!("{key} has no rollout plan"))),
        Some(Err(why)) => Err(VerbError::new(Exit::Expectation, why)),
        Some(Ok(r)) => Ok(r),
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
    let kind = op.kind();
    let write = Write { op, basis: basis.cloned().map(Box::new) };
    w.write(write, super::left(by))
        .map(drop)
        .map_err(|f| super::write_failure(kind, crate::cluster::OnceError::Failed(f)))
}

/// `ststui abort NAME [--yes]`.
pub fn abort(target: Target, args: &AbortArgs, start: Instant) -> Result<Exit, VerbError> {
    let deadline = start + Duration::from_millis(args.timeout);
    let mut s = Session::open(target.clone())?;
    let set = s.sync(deadline)?.clone();
    let key = s.key.clone();
    let revision = observed_update_revision(&set).unwrap_or_default().to_string();
    let pods: Vec<(i32, Pod)> = s.state.mirror.pods_of(&key).map(|(o, p)| (o, p.clone())).collect();
    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
    let plan = record::plan(&set)
        .and_then(Result::ok)
        .filter(|r| !matches!(r.phase, Phase::Done | Phase::Halted));
    let revisions = s.state.mirror.revisions_of(&key);
    let back = crate::steer::undo_target(&key, &set, &revisions, None).map_err(|r| {
        VerbError::new(Exit::Expectation, format!("{}: nothing written", r.message))
    })?;
    let stuck = stuck_on(&revision, &pods);
    let mut lines = vec![format!(
        "abort {key}: the template goes back to revision {}{}",
        back.revision.unwrap_or(0),
        image_of(back).map(|i| format!(" ({i})")).unwrap_or_default()
    )];
    if let Some(r) = &plan {
        let now = s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
        lines.push(format!("  the plan is halted first ({})", r.words(now)));
    }
    lines.push(match stuck.is_empty() {
        true => "  no pod is stuck on the broken revision: none is deleted".to_string(),
        false => format!(
            "  deleted, stuck on {revision} (not Ready): {}",
            stuck.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
        ),
    });
    for l in &lines {
        super::say(l);
    }
    if !args.yes {
        confirm()?;
    }
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    if let Some(r) = plan {
        let now = s.state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
        let why = format!("aborted by {}", writes.identity());
        write(&writes, plan_op(&key, &halted(&r, now, why)), Some(&set), deadline)?;
    }
    let limit = Some(deadline);
    revert(&writes, &key, &set, &revision, &pods, limit, &mut |t| super::say(t))?;
    Ok(Exit::Done)
}

/// Asks on a terminal; refuses without one (a pipeline passes `--yes`).
fn confirm() -> Result<(), VerbError> {
    if !std::io::stdin().is_terminal() {
        return Err(VerbError::new(
            Exit::Usage,
            "abort changes the template and deletes pods: pass --yes to do it without a terminal; \
             nothing written",
        ));
    }
    eprint!("abort? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(VerbError::new(Exit::Expectation, "not aborted: nothing written"))
    }
}

fn image_of(r: &k8s_openapi::api::apps::v1::ControllerRevision) -> Option<String> {
    let t = crate::steer::revision_template(r)?;
    t.spec?.containers.first()?.image.clone()
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
        write(w, ClusterOp::DeletePod { pod, force: false, uid: Some(uid) }, None, by)?;
        say(&format!(
            "{key}: deleted {name} (stuck on {revision}): the controller recreates it on the reverted template"
        ));
    }
    Ok(())
}
