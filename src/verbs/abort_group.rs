//! `ststui abort NAME` on a set of a rollout group: the sets the group's plan touched (rolling,
//! done or halted in this run, as their parts say) are reverted newest first, each as `abort`
//! reverts one set — and never two in motion: the next is reverted only once every pod of the
//! group exists, Ready and available again (read fresh). Each reverted set's part then says
//! aborted, which stops a group runner still holding the group.
//!
//! Owns: the group's abort. The per-set abort is `abort::abort_set`'s.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::abort::{abort_set, confirm};
use super::session::Sessions;
use super::{Exit, VerbError};
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::cli::AbortArgs;
use crate::cluster::{Target, Writes};
use crate::core::pod::MinReady;
use crate::plan::group::part::{self, Part, State};
use crate::plan::record::stamp;

pub fn abort(
    target: &Target,
    args: &AbortArgs,
    part: &Part,
    deadline: Instant,
) -> Result<Exit, VerbError> {
    let group = crate::text::escape_controls(&part.group);
    let mut sessions = Sessions::open(target, &part.sets)?;
    sessions.sync(deadline)?;
    let parts: Vec<Option<Part>> = sessions
        .all
        .iter()
        .map(|s| s.set().and_then(|set| part::read(set).part().cloned()))
        .collect();
    let touched: Vec<usize> = (0..parts.len())
        .rev()
        .filter(|&i| {
            parts[i].as_ref().is_some_and(|p| {
                p.same_run(part) && matches!(p.state, State::Rolling | State::Done | State::Halted)
            })
        })
        .collect();
    if touched.is_empty() {
        return Err(VerbError::new(
            Exit::Expectation,
            format!(
                "group {group}: its plan touched no set (each is waiting or aborted); nothing \
                 written"
            ),
        ));
    }
    let names: Vec<&str> = touched.iter().map(|&i| part.sets[i].as_str()).collect();
    super::say(&format!(
        "group {group}: abort will revert {} (newest first), each once every pod of the group \
         is Ready and available again",
        names.join(", then ")
    ));
    if !args.yes {
        confirm()?;
    }
    let writes = Writes::open(target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let who = writes.identity();
    for (k, &i) in touched.iter().enumerate() {
        if k > 0 {
            settle(&mut sessions, &writes, &group, &part.sets[i], deadline)?;
        }
        abort_set(&sessions.all[i], &writes, args, deadline, false)?;
        let now = k8s_openapi::jiff::Timestamp::now();
        let Some(mine) = parts[i].clone() else { continue };
        let aborted = Part {
            state: State::Aborted,
            since: stamp(now),
            by: String::new(),
            reason: Some(format!("aborted by {who} at {}", stamp(now))),
            ..mine
        };
        let key = sessions.all[i].key.clone();
        let op = ClusterOp::GroupPart {
            set: key.clone(),
            part: Some(serde_json::to_string(&aborted).unwrap_or_default()),
        };
        writes.write_returning(Write::new(op), super::left(deadline)).map_err(|f| {
            super::write_failure(
                crate::backend::WriteKind::PatchSet,
                crate::cluster::OnceError::Failed(f),
            )
        })?;
        super::say(&format!("group {group}: {} reverted ({}/{})", key.name, k + 1, touched.len()));
    }
    Ok(Exit::Done)
}

/// Waits (reading the group fresh each second) until every pod of the group exists, Ready and
/// available, before `next` is reverted; at the deadline, says what still holds it.
fn settle(
    sessions: &mut Sessions,
    writes: &Writes,
    group: &str,
    next: &str,
    deadline: Instant,
) -> Result<(), VerbError> {
    let mut said = String::new();
    loop {
        let keys: Vec<ObjRef> = sessions.all.iter().map(|s| s.key.clone()).collect();
        let mut fresh = Vec::new();
        for k in &keys {
            let within = super::left(deadline).min(Duration::from_secs(10));
            match writes.read(k, within) {
                Ok(f) => fresh.push(f),
                Err(f) => {
                    return Err(VerbError::new(Exit::Api, format!("reading {k}: {}", f.message)));
                }
            }
        }
        let owns: Vec<Vec<(i32, &Pod)>> =
            fresh.iter().zip(&keys).map(|(f, k)| f.own(&k.name)).collect();
        let members: Vec<crate::plan::group::Member<'_>> = fresh
            .iter()
            .zip(&owns)
            .map(|(f, pods)| crate::plan::group::Member { set: &f.set, pods })
            .collect();
        let sem = sessions.all[0].state.options.semantics;
        let min_ready =
            |s: &StatefulSet| MinReady::new(s.spec.min_ready_seconds.unwrap_or(0), &sem);
        let now = sessions.all[0].state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
        let Some(h) = crate::plan::group::unsettled(&members, min_ready, now) else {
            return Ok(());
        };
        let words = format!("group {group}: {next} waits: {h}");
        if Instant::now() >= deadline {
            return Err(VerbError::new(
                Exit::Expectation,
                format!(
                    "{words}; not reverted before the timeout (the sets reverted so far stay \
                     reverted): abort again to go on, or pass a longer --timeout"
                ),
            ));
        }
        if words != said {
            super::say(&words);
            said = words;
        }
        sessions.next(Some(Instant::now() + Duration::from_secs(1)), true)?;
    }
}
