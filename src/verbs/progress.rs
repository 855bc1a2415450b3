//! When a rollout is done, when it is stuck, and the words for where it stands: the rules of
//! `ststui wait` and `ststui step --wait`.
//!
//! Done: the spec observed, every ordinal of the replica range has a pod that is Ready and not
//! terminating, nothing condemned is left, and every ordinal at or above the partition runs the
//! update revision (partition 0: the status names it current too). OnDelete updates pods only
//! when they are deleted, so there "done" asks for readiness only and says how many pods are on
//! an older revision. Stuck, at once: the forced-rollback case (an OrderedReady set waiting on a
//! pod of an old revision, kubernetes#67250) or a pod that failed twice (the controller deletes
//! and recreates it, and it fails again). Stuck after `--stuck-after`: nothing moved at all.
//!
//! Owns: those rules and the progress line. Reads the console's state, never writes it.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::time::{Duration, Instant};

use crate::app::AppState;
use crate::app::view::grid::{GridView, PodState, RevClass};
use crate::backend::ObjRef;
use crate::core::explain::{StuckReason, forced_rollback};
use crate::core::{Observed, spec};

/// What is waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Goal {
    /// The whole rollout ([`done`]).
    Rollout,
    /// After a step: the partition reads `partition` and the ordinals at indexes
    /// `partition..until` are updated and Ready.
    Opened { partition: i32, until: i32 },
}

/// Where the wait stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Done(String),
    Waiting(String),
    Stuck { pod: Option<String>, rule: String },
}

/// What a rollout (or a step) still lacks: why it is not done yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Missing(pub String);

/// Whether the rollout is done: `Ok(summary)` or `Err(what is missing)`.
pub fn done(state: &AppState, key: &ObjRef) -> Result<String, Missing> {
    let set = state.mirror.set(key).ok_or_else(|| Missing(format!("{key} is gone")))?;
    let grid = grid(state, key).ok_or_else(|| Missing(format!("{key} is gone")))?;
    observed(set)?;
    let st = spec::strategy(set);
    let start = spec::start_ordinal(set);
    let replicas = spec::replicas(set);
    let (mut ready, mut updated, mut old) = (0, 0, 0);
    let mut missing = Vec::new();
    for c in &grid.cells {
        let name = format!("{}-{}", key.name, c.ordinal);
        if c.condemned {
            if c.exists {
                missing.push(format!("{name} is condemned (beyond the replicas), not yet gone"));
            }
            continue;
        }
        let in_scope = !st.on_delete && !st.holds(start, i64::from(c.ordinal));
        match c.state {
            PodState::Ready => ready += 1,
            PodState::Placeholder => missing.push(format!("{name} is not created yet")),
            other => missing.push(format!("{name} is {}", other.word())),
        }
        if c.rev == RevClass::Update {
            updated += 1;
        } else if c.exists {
            old += 1;
            if in_scope {
                missing.push(format!("{name} is not on the update revision yet"));
            }
        }
    }
    if grid.hidden > 0 {
        missing.push(format!("{} more ordinals are not created yet", grid.hidden));
    }
    if !st.on_delete && st.partition <= 0 {
        use crate::app::facts::{current_revision, update_revision};
        let (cur, upd) = (current_revision(set).unwrap_or(""), update_revision(set).unwrap_or(""));
        if cur != upd && missing.is_empty() {
            missing.push(format!("the status still names {cur} current, not {upd}"));
        }
    }
    if let Some(first) = missing.first() {
        let more = match missing.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(Missing(format!("{first}{more}")));
    }
    let mut text = format!("{key}: {ready}/{replicas} Ready, {updated} on the update revision");
    if st.on_delete && old > 0 {
        text.push_str(&format!(
            "; OnDelete: {old} still on an older revision, updated when deleted"
        ));
    } else if st.partition > 0 && old > 0 {
        text.push_str(&format!("; {old} held below partition {}", st.partition));
    }
    Ok(text)
}

/// A freeze that holds an update back: no waiting finishes that rollout until it is resumed
/// (kubectl's partition-aware verdict would call it complete with 0 new pods).
fn held_by_freeze(set: &k8s_openapi::api::apps::v1::StatefulSet, key: &ObjRef) -> Option<String> {
    use crate::app::facts::{current_revision, update_revision};
    let f = crate::steer::holding(set)?;
    let pending = current_revision(set) != update_revision(set);
    pending.then(|| {
        format!(
            "{}: the update is held until `ststui resume {}` (the partition goes back to {})",
            f.words(),
            key.name,
            f.recorded()
        )
    })
}

fn observed(set: &k8s_openapi::api::apps::v1::StatefulSet) -> Result<(), Missing> {
    let seen = set.status.as_ref().and_then(|s| s.observed_generation).unwrap_or(0);
    let generation = set.metadata.generation.unwrap_or(0);
    if seen < generation {
        return Err(Missing(format!(
            "the controller has not observed generation {generation} yet"
        )));
    }
    Ok(())
}

/// The console's grid of `key` (one cell per ordinal, classified against the status's revisions).
pub fn grid(state: &AppState, key: &ObjRef) -> Option<GridView> {
    use crate::app::facts::{current_revision, update_revision};
    let set = state.mirror.set(key)?;
    let (current, update) = (current_revision(set), update_revision(set));
    let pods = state.mirror.pods_in(&key.namespace);
    Some(GridView::build(set, pods, current.unwrap_or(""), update.unwrap_or("")))
}

/// Whether a step's newly opened ordinals are updated and Ready.
fn opened(state: &AppState, key: &ObjRef, partition: i32, until: i32) -> Result<String, Missing> {
    let set = state.mirror.set(key).ok_or_else(|| Missing(format!("{key} is gone")))?;
    let seen = spec::strategy(set).partition;
    if seen != partition {
        return Err(Missing(format!("the set still reads partition {seen}, not {partition}")));
    }
    observed(set)?;
    let grid = grid(state, key).ok_or_else(|| Missing(format!("{key} is gone")))?;
    let start = spec::start_ordinal(set);
    for c in grid.cells.iter().filter(|c| (start + partition..start + until).contains(&c.ordinal)) {
        let name = format!("{}-{}", key.name, c.ordinal);
        if c.rev != RevClass::Update {
            return Err(Missing(format!("{name} is not on the update revision yet")));
        }
        if c.state != PodState::Ready {
            return Err(Missing(format!("{name} is {}", c.state.word())));
        }
    }
    let names: Vec<String> =
        (partition..until).map(|i| format!("{}-{}", key.name, start + i)).collect();
    Ok(format!("{key}: {} updated and Ready", names.join(", ")))
}

/// What a wait remembers between looks: failures per ordinal, and when anything last moved.
pub struct Progress {
    stuck_after: Duration,
    failed: HashMap<i32, HashSet<String>>,
    fingerprint: u64,
    moved: Instant,
}

impl Progress {
    pub fn new(stuck_after: Duration, now: Instant) -> Progress {
        Progress { stuck_after, failed: HashMap::new(), fingerprint: 0, moved: now }
    }

    /// Where the wait stands now.
    pub fn assess(&mut self, state: &AppState, key: &ObjRef, goal: &Goal, now: Instant) -> Verdict {
        if let Some(rule) = state.mirror.set(key).and_then(|s| held_by_freeze(s, key)) {
            return Verdict::Stuck { pod: None, rule };
        }
        // A halted plan holds the partition until someone acts: waiting cannot help.
        if let Some(set) = state.mirror.set(key).filter(|s| crate::app::health::halted(s)) {
            let now = state.now.unwrap_or_default();
            let words = crate::plan::record::read(set).plan().map(|r| r.words(now));
            let rule = format!(
                "{} (the partition holds: `ststui rollout {} --continue` once fixed, or `ststui \
                 abort {}`)",
                words.unwrap_or_default(),
                key.name,
                key.name
            );
            return Verdict::Stuck { pod: None, rule };
        }
        let outcome = match goal {
            Goal::Rollout => done(state, key),
            Goal::Opened { partition, until } => opened(state, key, *partition, *until),
        };
        let waiting = match outcome {
            Ok(text) => return self.plan_or_done(state, key, text),
            Err(Missing(w)) => w,
        };
        let Some(set) = state.mirror.set(key) else {
            return Verdict::Stuck { pod: None, rule: format!("{key} was deleted") };
        };
        // Failed pods, per ordinal, by uid: the same ordinal failing again is a rule.
        for (ordinal, pod) in state.mirror.pods_of(key) {
            if crate::core::pod::phase(pod) == "Failed" {
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                let seen = self.failed.entry(ordinal).or_default();
                seen.insert(uid);
                if seen.len() >= 2 {
                    return Verdict::Stuck {
                        pod: Some(format!("{}-{ordinal}", key.name)),
                        rule: format!(
                            "failed {} times: the controller deletes and recreates it and it \
                             fails again",
                            seen.len()
                        ),
                    };
                }
            }
        }
        let plan = state.plan_for(key);
        let hint = plan.and_then(|plan| {
            let ns = key.namespace.as_str();
            let pods: Vec<_> = state.mirror.pods_in(ns).collect();
            let claims: Vec<_> = state.mirror.claims_in(ns).collect();
            let revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
            let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
            forced_rollback(&observed, plan, state.now.unwrap_or_default())
        });
        if let Some(h) =
            hint.as_ref().filter(|h| matches!(h.reason, StuckReason::OldRevision { .. }))
        {
            return Verdict::Stuck { pod: Some(h.pod.clone()), rule: h.to_string() };
        }
        let print = self.print(state, key);
        if print != self.fingerprint {
            self.fingerprint = print;
            self.moved = now;
        }
        if now.duration_since(self.moved) >= self.stuck_after {
            let waiting_on = plan
                .and_then(|p| p.waiting_on.as_ref())
                .map(|b| crate::core::explain::blocker_step(b).text)
                .unwrap_or_else(|| waiting.clone());
            let pod = hint.as_ref().map(|h| h.pod.clone());
            let why = match hint {
                Some(h) => format!("; {h}"),
                None => String::new(),
            };
            return Verdict::Stuck {
                pod,
                rule: format!(
                    "no progress for {} (--stuck-after): {waiting_on}{why}",
                    human(self.stuck_after)
                ),
            };
        }
        // What the controller waits for says more than the first missing ordinal.
        let now_waiting = plan
            .and_then(|p| p.waiting_on.as_ref())
            .map(|b| crate::core::explain::blocker_step(b).text)
            .map(|t| t.strip_prefix("waiting: ").map(str::to_string).unwrap_or(t))
            .unwrap_or(waiting);
        Verdict::Waiting(format!("{}: {now_waiting}", summary(state, key)))
    }

    /// The pods are where the partition asks; a plan under way on the update revision is not
    /// over, though: the rollout is done when the plan is. A plan nobody runs (its lease gone or
    /// run out) will not move: stuck, naming how to go on.
    fn plan_or_done(&self, state: &AppState, key: &ObjRef, text: String) -> Verdict {
        use crate::plan::record::Runner;
        let Some(set) = state.mirror.set(key) else { return Verdict::Done(text) };
        let Some(plan) = crate::app::health::plan_under_way(set) else {
            return Verdict::Done(text);
        };
        let now = state.now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
        let runner = Runner::of(set, now);
        if !runner.alive() {
            let rule = format!(
                "{}; {} (`ststui rollout {}` resumes it, `ststui abort {}` rolls back)",
                plan.words(now),
                runner.words(),
                key.name,
                key.name
            );
            return Verdict::Stuck { pod: None, rule };
        }
        Verdict::Waiting(format!("{}: {}", summary(state, key), plan.words(now)))
    }

    /// Everything whose change counts as progress: the set's status and each pod's uid, phase,
    /// readiness and revision.
    fn print(&self, state: &AppState, key: &ObjRef) -> u64 {
        let mut h = DefaultHasher::new();
        if let Some(set) = state.mirror.set(key) {
            serde_json::to_string(&set.status).unwrap_or_default().hash(&mut h);
            set.metadata.generation.hash(&mut h);
        }
        for (ordinal, pod) in state.mirror.pods_of(key) {
            (ordinal, &pod.metadata.uid, crate::core::pod::phase(pod)).hash(&mut h);
            (crate::core::pod::is_ready(pod), crate::core::pod::revision(pod)).hash(&mut h);
            pod.metadata.deletion_timestamp.is_some().hash(&mut h);
        }
        h.finish()
    }
}

/// `web: 2/3 updated, 1/3 Ready`.
fn summary(state: &AppState, key: &ObjRef) -> String {
    let Some(set) = state.mirror.set(key) else { return key.to_string() };
    let st = set.status.clone().unwrap_or_default();
    let replicas = spec::replicas(set);
    let strategy = spec::strategy(set);
    let wanted = if strategy.on_delete {
        replicas
    } else {
        replicas - strategy.partition.clamp(0, replicas)
    };
    format!(
        "{}: {}/{wanted} updated, {}/{replicas} Ready",
        key.name,
        st.updated_replicas.unwrap_or(0),
        st.ready_replicas.unwrap_or(0)
    )
}

/// A duration as people write it: `45s`, `10m`, `1h30m`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

/// The progress output: on a terminal one line rewritten in place; otherwise a plain line
/// each time the words change (a log keeps them).
pub struct Line {
    tty: bool,
    last: String,
}

impl Line {
    pub fn new(tty: bool) -> Line {
        Line { tty, last: String::new() }
    }

    /// Whether it rewrites one line in place (a terminal).
    pub fn is_live(&self) -> bool {
        self.tty
    }

    pub fn show(&mut self, text: &str, elapsed: Duration) {
        let text = &*crate::text::escape_controls(text);
        let mut out = std::io::stdout().lock();
        if self.tty {
            let _ = write!(out, "\r\x1b[2K{text} ({})", human(elapsed));
            let _ = out.flush();
        } else if text != self.last {
            let _ = writeln!(out, "{text}");
        }
        self.last = text.to_string();
    }

    /// The last line, kept.
    pub fn finish(&mut self, text: &str) {
        let text = &*crate::text::escape_lines(text);
        let mut out = std::io::stdout().lock();
        if self.tty {
            let _ = write!(out, "\r\x1b[2K");
        }
        let _ = writeln!(out, "{text}");
    }
}
