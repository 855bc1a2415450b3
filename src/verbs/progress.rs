//! `ststui wait` and `ststui step --wait`: the one verdict (`plan::verdict`, through
//! `app::health`) watched until it is done or stuck, with what only a watcher knows — a pod that
//! failed again after the controller recreated it, nothing moving for `--stuck-after` — and a
//! step's own goal (its newly opened ordinals updated and Ready).
//!
//! Owns: those watcher's rules and the progress line. Reads the console's state, never writes it.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::time::{Duration, Instant};

use crate::app::AppState;
use crate::app::view::grid::{GridView, PodState, RevClass};
use crate::backend::ObjRef;
use crate::core::spec;
use crate::plan::verdict::{Kind, Row, Seen};

/// What is waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Goal {
    /// The rollout as the spec asks (`full`: every pod on the update revision, whatever the
    /// partition).
    Rollout { full: bool },
    /// After a step: the partition reads `partition` and the ordinals at indexes
    /// `partition..until` are updated and Ready.
    Opened { partition: i32, until: i32 },
}

/// Where the wait stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Done(String),
    /// The words (no counters: a log gets a line when they change) and a live clock's words
    /// (`1m12s left`; empty without one).
    Waiting(String, String),
    Stuck {
        pod: Option<String>,
        rule: String,
    },
}

/// What a rollout (or a step) still lacks: why it is not done yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Missing(pub String);

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
            return Err(Missing(format!("waiting for {name} to be updated")));
        }
        if c.state != PodState::Ready {
            return Err(Missing(format!("waiting for {name} ({})", c.state.word())));
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
        if state.mirror.set(key).is_none() {
            return Verdict::Stuck { pod: None, rule: format!("{key} was deleted") };
        }
        let seen = self.seen(state, key, now);
        let screen = crate::app::view::Screen::of(state);
        let lines: &[crate::app::view::ExplainLine] = &screen.controller;
        let Some(v) = crate::app::health::verdict(state, key, Some(lines), Some(&seen)) else {
            return Verdict::Stuck { pod: None, rule: format!("{key} was deleted") };
        };
        let said =
            |v: &crate::plan::verdict::Verdict| format!("{}: {}", v.counts(&key.name), v.said());
        match goal {
            Goal::Opened { partition, until } => match opened(state, key, *partition, *until) {
                Ok(text) => Verdict::Done(text),
                Err(_) if v.kind() == Kind::Stuck && v.row != Row::Frozen => {
                    Verdict::Stuck { pod: v.pod.clone(), rule: v.said() }
                }
                Err(Missing(w)) => {
                    Verdict::Waiting(format!("{}: {w}", v.counts(&key.name)), String::new())
                }
            },
            Goal::Rollout { full } => {
                let clock = v.clock.map(|c| c.words(state.now.unwrap_or_default()));
                let clock = clock.unwrap_or_default();
                match v.kind() {
                    Kind::Done if *full && !v.complete() => Verdict::Waiting(
                        format!("{} (--full waits for every pod on the update revision)", said(&v)),
                        clock,
                    ),
                    Kind::Done => Verdict::Done(format!("{key}: {}", v.said())),
                    Kind::Stuck => Verdict::Stuck { pod: v.pod.clone(), rule: v.said() },
                    Kind::Waiting => Verdict::Waiting(said(&v), clock),
                }
            }
        }
    }

    /// What this watcher saw: a pod that failed again after it was recreated, nothing moving
    /// for `--stuck-after`.
    fn seen(&mut self, state: &AppState, key: &ObjRef, now: Instant) -> Seen {
        let mut failed = None;
        for (ordinal, pod) in state.mirror.pods_of(key) {
            if crate::core::pod::phase(pod) == "Failed" {
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                let seen = self.failed.entry(ordinal).or_default();
                seen.insert(uid);
                if seen.len() >= 2 && failed.is_none() {
                    failed = Some((format!("{}-{ordinal}", key.name), seen.len()));
                }
            }
        }
        let print = self.print(state, key);
        if print != self.fingerprint {
            self.fingerprint = print;
            self.moved = now;
        }
        let still =
            (now.duration_since(self.moved) >= self.stuck_after).then(|| human(self.stuck_after));
        Seen { failed, still }
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

    /// `text` (a line in a log each time it changes), with `live` after it on a terminal only
    /// (a clock, the time waited: what changes each second never makes a line of its own).
    pub fn show(&mut self, text: &str, live: &str) {
        let text = &*crate::text::escape_controls(text);
        let mut out = std::io::stdout().lock();
        if self.tty {
            let live = crate::text::escape_controls(live);
            let live = if live.is_empty() { String::new() } else { format!(" ({live})") };
            let _ = write!(out, "\r\x1b[2K{text}{live}");
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
