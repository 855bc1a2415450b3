//! `ststui abort NAME` on a set of a rollout group: the sets the group's plan touched (rolling,
//! done or halted in this run, as their parts say) are reverted newest first, each as `abort`
//! reverts one set — and never two in motion: the next is reverted only once every pod of the
//! group exists, Ready and available again (read fresh). Each reverted set's part then says
//! aborted, which stops a group runner still holding the group.
//!
//! Owns: the group's abort. The per-set abort is `abort::abort_set`'s.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;

use super::{abort_set, confirm};
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::cli::AbortArgs;
use crate::cluster::{Target, Writes};
use crate::plan::group::part::{self, Part, State};
use crate::plan::member::Member;
use crate::plan::record::stamp;
use crate::verbs::session::Sessions;
use crate::verbs::{Exit, VerbError};

pub fn abort(
    target: &Target,
    args: &AbortArgs,
    part: &Part,
    deadline: Instant,
) -> Result<Exit, VerbError> {
    let mut sessions = Sessions::open(target, &part.sets)?;
    sessions.sync(deadline)?;
    let writes = Writes::open(target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let parts: Vec<Option<Part>> = sessions
        .members()
        .map(|s| s.set().and_then(|set| part::read(set).part().cloned()))
        .collect();
    let labels = part.sets.clone();
    let members = Members { sessions, writes: vec![writes], cluster_of: Vec::new(), labels };
    revert_touched(members, &parts, part, args, deadline)
}

/// The members of a group's or a fleet's abort: their sessions, the write paths (one per
/// cluster) and which is each member's, and each member in words.
pub(super) struct Members {
    pub sessions: Sessions,
    pub writes: Vec<Writes>,
    pub cluster_of: Vec<usize>,
    pub labels: Vec<String>,
}

impl Members {
    fn writes(&self, i: usize) -> &Writes {
        &self.writes[self.cluster_of.get(i).copied().unwrap_or(0).min(self.writes.len() - 1)]
    }
}

/// The members `part`'s run touched (rolling, done or halted, as their `parts` say), reverted
/// newest first, each once every pod of the others is settled; each part then says aborted.
pub(super) fn revert_touched(
    mut m: Members,
    parts: &[Option<Part>],
    part: &Part,
    args: &AbortArgs,
    deadline: Instant,
) -> Result<Exit, VerbError> {
    let kind = if part.fleet() { "fleet" } else { "group" };
    let group = format!("{kind} {}", crate::text::escape_controls(&part.group));
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
                "{group}: its plan touched no set (each is waiting or aborted); nothing written"
            ),
        ));
    }
    let names: Vec<&str> = touched.iter().map(|&i| m.labels[i].as_str()).collect();
    crate::verbs::say(&format!(
        "{group}: abort will revert {} (newest first), each once every pod of the {kind} is \
         Ready and available again",
        names.join(", then ")
    ));
    if !args.yes {
        confirm()?;
    }
    for (k, &i) in touched.iter().enumerate() {
        if k > 0 {
            settle(&mut m, &group, i, deadline)?;
        }
        let writes = m.writes(i);
        let who = writes.identity();
        abort_set(m.sessions.member(i), writes, args, deadline, false)?;
        let now = k8s_openapi::jiff::Timestamp::now();
        let Some(mine) = parts[i].clone() else { continue };
        let aborted = Part {
            state: State::Aborted,
            since: stamp(now),
            by: String::new(),
            reason: Some(format!("aborted by {who} at {}", stamp(now))),
            ..mine
        };
        let key = m.sessions.member(i).key.clone();
        let op = ClusterOp::GroupPart {
            set: key.clone(),
            part: Some(serde_json::to_string(&aborted).unwrap_or_default()),
        };
        writes.write_returning(Write::new(op), crate::verbs::left(deadline)).map_err(|f| {
            crate::verbs::write_failure(
                crate::backend::WriteKind::PatchSet,
                crate::cluster::OnceError::Failed(f),
            )
        })?;
        crate::verbs::say(&format!(
            "{group}: {} reverted ({}/{})",
            m.labels[i],
            k + 1,
            touched.len()
        ));
    }
    Ok(Exit::Done)
}

/// Waits until every pod of the group exists, Ready and available, before `next` is reverted:
/// on the watches, the verdict that it is settled confirmed by a fresh read of every set (at
/// most one a second: a watch behind the server is never taken for settled). At the deadline,
/// says what still holds it.
fn settle(m: &mut Members, group: &str, next: usize, deadline: Instant) -> Result<(), VerbError> {
    let mut said = String::new();
    let mut read_at: Option<Instant> = None;
    loop {
        let mut hold = watched(&m.sessions);
        if hold.is_none() && read_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            read_at = Some(Instant::now());
            hold = read(m, deadline)?;
            if hold.is_none() {
                return Ok(());
            }
        }
        if let Some(h) = hold {
            let words = format!("{group}: {} waits: {h}", m.labels[next]);
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
                crate::verbs::say(&words);
                said = words;
            }
        }
        m.sessions.next(Some(Instant::now() + Duration::from_secs(1)), true)?;
    }
}

/// What holds the group on the watches (a set not seen yet holds it too).
fn watched(sessions: &Sessions) -> Option<String> {
    let mut sets = Vec::with_capacity(sessions.len());
    for s in sessions.members() {
        match s.set() {
            Some(set) => sets.push(set),
            None => return Some(format!("{} not seen yet", s.key.name)),
        }
    }
    let owns: Vec<Vec<(i32, &Pod)>> =
        sessions.members().map(|s| s.state.mirror.pods_of(s.key).collect()).collect();
    let sem = sessions.member(0).state.options.semantics;
    let members: Vec<Member<'_>> =
        sets.iter().zip(&owns).map(|(set, pods)| Member::of(set, pods, &sem)).collect();
    unsettled(sessions, &members)
}

/// What holds the group on a fresh read of every set.
fn read(m: &Members, deadline: Instant) -> Result<Option<String>, VerbError> {
    let sessions = &m.sessions;
    let keys: Vec<ObjRef> = sessions.members().map(|s| s.key.clone()).collect();
    let mut fresh = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let within = crate::verbs::left(deadline).min(Duration::from_secs(10));
        match m.writes(i).read(k, within) {
            Ok(f) => fresh.push(f),
            Err(f) => {
                return Err(VerbError::new(Exit::Api, format!("reading {k}: {}", f.message)));
            }
        }
    }
    let owns: Vec<Vec<(i32, &Pod)>> =
        fresh.iter().zip(&keys).map(|(f, k)| f.own(&k.name)).collect();
    let sem = sessions.member(0).state.options.semantics;
    let members: Vec<Member<'_>> =
        fresh.iter().zip(&owns).map(|(f, pods)| Member::of(&f.set, pods, &sem)).collect();
    Ok(unsettled(sessions, &members))
}

fn unsettled(sessions: &Sessions, members: &[Member<'_>]) -> Option<String> {
    let now = sessions.member(0).state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
    crate::plan::group::unsettled(members, now).map(|h| h.to_string())
}
