//! A plan's record on its set, so that every console and `ststui explain` show it, a rerun
//! resumes it, and two runners never drive one plan:
//!
//! - `ststui.io/plan`: the plan ([`Record`], JSON): its steps, bake and checks, the update
//!   revision it rolls out, the step it is at and in what phase since when, who started it, and
//!   a halt's reason.
//! - `ststui.io/plan-lease`: the runner driving it ([`Lease`], JSON): who, on which host and
//!   process, until when. Written with the set's resourceVersion as precondition and renewed
//!   while the runner lives; a second runner refuses while it holds.
//!
//! [`read`] is the one reader of the record: every surface (the console's header and set list,
//! `explain`, `wait`, the runners) reads it through it, so a record is read one way everywhere —
//! a plan, none, or invalid (naming what is wrong). The record says what happened; it never
//! decides what a runner executes (`plan::ask`).
//!
//! Owns: the two formats, their validity and what they say in words. Pure.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::gate::{GateKind, GateState, GateStatus, Gates};
use super::{OnFailure, Steps, duration_words};

/// The plan's record.
pub const PLAN: &str = "ststui.io/plan";
/// The runner's lease.
pub const LEASE: &str = "ststui.io/plan-lease";

/// Where a plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The step's ordinals are open; waiting for them to be updated, Ready and available.
    Waiting,
    /// They are; every pod of the set must stay Ready for the bake.
    Baking,
    /// The operator's checks run.
    Checking,
    /// A manual gate: waiting for `ststui approve`.
    Gate,
    /// The gate was passed; the runner moves on.
    Approved,
    /// Stopped on something wrong; the partition holds where the plan put it.
    Halted,
    /// Every step done.
    Done,
    /// Rolled back by `ststui abort` (the template reverted, the partition back where the plan
    /// began).
    Aborted,
}

impl Phase {
    /// The phase as the record's JSON names it (`waiting`, `gate`, …).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting",
            Phase::Baking => "baking",
            Phase::Checking => "checking",
            Phase::Gate => "gate",
            Phase::Approved => "approved",
            Phase::Halted => "halted",
            Phase::Done => "done",
            Phase::Aborted => "aborted",
        }
    }

    /// Whether the plan is over (nothing drives the partition any more): done, halted, aborted.
    pub fn over(self) -> bool {
        matches!(self, Phase::Done | Phase::Halted | Phase::Aborted)
    }

    pub fn word(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting",
            Phase::Baking => "baking",
            Phase::Checking => "checking",
            Phase::Gate => "waiting for approval",
            Phase::Approved => "approved",
            Phase::Halted => "halted",
            Phase::Done => "done",
            Phase::Aborted => "aborted",
        }
    }
}

/// A plan as recorded on its set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// As `--steps` takes them (`1,25%,50%,100%`).
    pub steps: String,
    pub bake_seconds: u64,
    #[serde(default)]
    pub checks: Vec<String>,
    pub on_failure: String,
    /// The update revision the plan rolls out (`status.updateRevision` when it started).
    pub revision: String,
    /// A hash of the pod template it rolls out ([`template_hash`]): a change is seen at once,
    /// before the controller names a new revision.
    #[serde(default)]
    pub template: String,
    /// The step it is at, from 1.
    pub step: usize,
    /// How many steps.
    pub of: usize,
    pub phase: Phase,
    /// When the phase began (RFC 3339, UTC).
    pub since: String,
    /// The partition the plan set for this step (for OnDelete, the one it stands for).
    pub partition: i32,
    pub by: String,
    pub started: String,
    /// Why it halted (or who aborted it).
    #[serde(default)]
    pub reason: Option<String>,
    /// The partition before the plan's first step (what `ststui abort` puts back); absent in
    /// records older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub began_at: Option<i32>,
    /// The revision it rolls from (the status's current revision when it began): a gate's
    /// `{old}` once the status has moved on. Absent in records older than it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// The gates and ordering this plan was started (or last restated) with: shown and
    /// compared, never run from here (`plan::ask`).
    #[serde(default, skip_serializing_if = "Gates::is_empty")]
    pub gates: Gates,
    /// A step opening gradually (gates before its pods go): the partition it opens to, while
    /// `partition` is where it has got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<i32>,
    /// The gate under way, or the last one passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateState>,
}

/// What does not hold together in a plan record (written by others: its values are shown
/// escaped, never believed): the field and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("its steps {steps:?} do not parse: {why}")]
    Steps { steps: String, why: String },
    #[error("it counts {of} steps, but its steps {steps:?} are {count}")]
    Count { of: usize, steps: String, count: usize },
    #[error("it is at step {step} of {of}")]
    Step { step: usize, of: usize },
    #[error(
        "its bake of {} is longer than {} (the longest a plan bakes)",
        duration_words(.0.saturating_mul(1000)),
        duration_words(MAX_BAKE_SECONDS * 1000)
    )]
    Bake(u64),
    #[error("its onFailure {0:?} is neither hold nor undo")]
    OnFailure(String),
    #[error("its partition {0} is negative")]
    Partition(i32),
    #[error("its since {since:?} {why}", since = .0, why = time_trouble(.0))]
    Since(String),
    #[error("its target partition {target} is not below its partition {partition}")]
    Target { target: i32, partition: i32 },
    /// Its gate's word (escaped, at most 40 characters).
    #[error("its gate {0:?} is none of {kinds}", kinds = GateKind::all_words("or"))]
    Gate(String),
}

/// Why `text` is no time a record may hold: written as one (RFC 3339, with its offset) but past
/// the range times are kept in, or not written as one.
pub fn time_trouble(text: &str) -> &'static str {
    let written = k8s_openapi::jiff::fmt::temporal::Pieces::parse(text)
        .is_ok_and(|p| p.time().is_some() && p.offset().is_some());
    if written {
        "is out of range (times run from -009999-01-02 to 9999-12-30T22:00:00Z)"
    } else {
        "is not a time (RFC 3339)"
    }
}

impl Record {
    /// The record's steps, parsed (a record another version wrote may not parse).
    pub fn parsed_steps(&self) -> Result<Steps, super::StepsError> {
        Steps::parse(&self.steps)
    }

    pub fn on_failure(&self) -> OnFailure {
        if self.on_failure == "undo" { OnFailure::Undo } else { OnFailure::Hold }
    }

    /// When the phase began, if the record says.
    pub fn since(&self) -> Option<Timestamp> {
        self.since.parse().ok()
    }

    /// "plan 2/4 (50%): baking, 1m12s left", "plan halted at 2/4: check `…` exited 1".
    /// What entering this phase means, for a runner's progress line: `step 1/3: updated,
    /// Ready and available: baking 2m`.
    pub fn phase_words(&self) -> String {
        let at = format!("step {}/{}", self.step, self.of);
        match self.phase {
            Phase::Baking => format!(
                "{at}: updated, Ready and available: baking {}",
                duration_words(self.bake_seconds * 1000)
            ),
            Phase::Checking if self.checks.is_empty() => format!("{at}: done"),
            Phase::Checking => format!("{at}: running {} check(s)", self.checks.len()),
            Phase::Gate => format!("{at}: a manual gate: `ststui approve` passes it"),
            Phase::Done => format!("plan done: {} ({})", steps_words(self.of), self.steps),
            p => format!("{at}: {}", p.word()),
        }
    }

    /// Whether the record holds together: its steps parse and count `of`, its step is one of
    /// them, its bake is at most [`MAX_BAKE_SECONDS`], its failure policy and times are words
    /// this version knows.
    pub fn check(&self) -> Result<(), Invalid> {
        let steps = self
            .parsed_steps()
            .map_err(|e| Invalid::Steps { steps: self.steps.clone(), why: e.to_string() })?;
        if self.of != steps.0.len() {
            let (of, count) = (self.of, steps.0.len());
            return Err(Invalid::Count { of, steps: self.steps.clone(), count });
        }
        if self.step < 1 || self.step > self.of {
            return Err(Invalid::Step { step: self.step, of: self.of });
        }
        if self.bake_seconds > MAX_BAKE_SECONDS {
            return Err(Invalid::Bake(self.bake_seconds));
        }
        if !matches!(self.on_failure.as_str(), "hold" | "undo") {
            return Err(Invalid::OnFailure(self.on_failure.clone()));
        }
        if self.partition < 0 {
            return Err(Invalid::Partition(self.partition));
        }
        if self.since().is_none() {
            return Err(Invalid::Since(self.since.clone()));
        }
        if let Some(t) = self.target
            && (t < 0 || t >= self.partition)
        {
            return Err(Invalid::Target { target: t, partition: self.partition });
        }
        if let Some(g) = &self.gate
            && GateKind::from_word(&g.gate).is_none()
        {
            let cut: String = g.gate.chars().take(40).collect();
            return Err(Invalid::Gate(crate::text::escape_controls(&cut).into_owned()));
        }
        Ok(())
    }

    /// The timeline's `plan` line for a move of this record on `set`, said as `text`.
    pub fn event(&self, set: &str, text: String) -> crate::backend::EventKind {
        crate::backend::EventKind::Plan {
            set: set.to_string(),
            step: self.step,
            of: self.of,
            phase: self.phase.name().into(),
            partition: self.partition,
            text,
        }
    }

    pub fn words(&self, now: Timestamp) -> String {
        let step =
            self.parsed_steps().ok().and_then(|s| s.0.get(self.step.wrapping_sub(1)).copied());
        let what = step.map(|s| format!(" ({s})")).unwrap_or_default();
        let at = format!("{}/{}{what}", self.step, self.of);
        let since = self.since().map(|t| now.duration_since(t).as_secs().max(0)).unwrap_or(0);
        let since_ms = u64::try_from(since).unwrap_or(0) * 1000;
        match self.phase {
            Phase::Halted => {
                let why = self.reason_said().unwrap_or("no reason recorded".into());
                format!("plan halted at {at}: {why}")
            }
            Phase::Done => format!("plan done: {} ({})", steps_words(self.of), self.steps),
            Phase::Aborted => {
                let who = self.reason_said().unwrap_or("aborted".into());
                format!("plan aborted at {at}: {who}")
            }
            Phase::Baking => {
                let left = (self.bake_seconds * 1000).saturating_sub(since_ms);
                format!("plan {at}: baking, {} left", duration_words(left))
            }
            Phase::Gate => format!(
                "plan {at}: waiting for approval, {} so far (A in a console, or ststui approve)",
                duration_words(since_ms)
            ),
            Phase::Waiting if self.gate_waiting().is_some() => {
                let g = self.gate_waiting().map(GateState::words).unwrap_or_default();
                format!("plan {at}: waiting on the {g}, {} so far", duration_words(since_ms))
            }
            p => format!("plan {at}: {}, {} so far", p.word(), duration_words(since_ms)),
        }
    }

    /// Why it halted (or who aborted it) as any surface says it: clipped to [`REASON_SAID`]
    /// characters (the record is anyone's to write; a 50,000-character reason is not printed).
    pub fn reason_said(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.reason.as_deref().map(|r| crate::text::clip(r, REASON_SAID))
    }

    /// The gate the plan waits on (running or "not yet"), if any.
    pub fn gate_waiting(&self) -> Option<&GateState> {
        let g = self.gate.as_ref()?;
        let waiting = matches!(g.status, GateStatus::Running | GateStatus::NotYet);
        (waiting && self.phase == Phase::Waiting).then_some(g)
    }
}

/// "1 step", "3 steps".
pub fn steps_words(n: usize) -> String {
    if n == 1 { "1 step".into() } else { format!("{n} steps") }
}

/// The most characters of a recorded reason any surface says (ours are a sentence and a few
/// lines of a check's output).
pub const REASON_SAID: usize = 600;

/// The longest bake a plan takes (a record asking for more is invalid; `--bake` refuses more).
pub const MAX_BAKE_SECONDS: u64 = 24 * 3600;

/// What the set's plan record says: the one reading every surface uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// No plan is recorded.
    None,
    /// A record that cannot be read or does not hold together: why, in words (the record's
    /// own text escaped and cut short: it is written by whoever may patch the set).
    Invalid(String),
    /// A plan.
    Plan(Box<Record>),
}

impl Reading {
    /// The plan, when the record is one.
    pub fn plan(&self) -> Option<&Record> {
        match self {
            Reading::Plan(r) => Some(r),
            _ => None,
        }
    }

    /// The plan while it is under way (not done, halted nor aborted): it drives the partition.
    pub fn under_way(&self) -> Option<&Record> {
        self.plan().filter(|r| !r.phase.over())
    }

    /// What to do about an invalid record, for a message.
    pub fn invalid_words(why: &str, set: &str) -> String {
        format!(
            "the plan record ({PLAN}) is invalid: {why}; `ststui abort {set}` clears it, or \
             `ststui rollout {set} --steps … --force` starts a plan over it"
        )
    }
}

/// Reads the set's plan record (the one reader).
pub fn read(set: &StatefulSet) -> Reading {
    let Some(raw) = set.metadata.annotations.as_ref().and_then(|a| a.get(PLAN)) else {
        return Reading::None;
    };
    let shown = || crate::text::shown(raw, 120);
    match serde_json::from_str::<Record>(raw) {
        Err(e) => Reading::Invalid(format!("it cannot be read ({e}): {}", shown())),
        Ok(r) => match r.check() {
            Ok(()) => Reading::Plan(Box::new(r)),
            Err(why) => Reading::Invalid(why.to_string()),
        },
    }
}

/// The set's plan while it is under way (not over): it drives the partition.
pub fn under_way(set: &StatefulSet) -> Option<Record> {
    read(set).under_way().cloned()
}

/// A runner's lease on a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// Who (the cluster identity).
    pub holder: String,
    pub host: String,
    pub pid: u32,
    /// Until when (RFC 3339, UTC); renewed well before.
    pub expires: String,
}

impl Lease {
    /// Whether it still holds at `now` (an unreadable expiry holds: never take over a lease
    /// that cannot be read).
    pub fn holds(&self, now: Timestamp) -> bool {
        self.expires.parse::<Timestamp>().map_or(true, |t| t > now)
    }

    /// "ana on build-7 (pid 4242) until 10:02:11Z".
    pub fn words(&self) -> String {
        format!("{} on {} (pid {}) until {}", self.holder, self.host, self.pid, self.expires)
    }
}

/// The set's lease, if it holds a readable one.
pub fn lease(set: &StatefulSet) -> Option<Lease> {
    lease_in(set, LEASE)
}

/// The lease in `annotation` (the plan's, or a group's), if readable.
pub fn lease_in(set: &StatefulSet, annotation: &str) -> Option<Lease> {
    let raw = set.metadata.annotations.as_ref()?.get(annotation)?;
    serde_json::from_str(raw).ok()
}

/// The lease's text as the set holds it (the precondition of the next lease write).
pub fn lease_text(set: &StatefulSet) -> Option<String> {
    lease_text_in(set, LEASE)
}

/// The text of the lease in `annotation` (the plan's, or a group's) as the set holds it.
pub fn lease_text_in(set: &StatefulSet, annotation: &str) -> Option<String> {
    set.metadata.annotations.as_ref()?.get(annotation).cloned()
}

/// Who runs the set's plan, as its lease says at a time: every surface says it the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// No lease.
    None,
    /// A lease that cannot be read: held as live (never taken over).
    Unreadable,
    /// A lease that holds: the runner is alive as far as anyone can tell.
    Live(Lease),
    /// A lease that ran out: its runner stopped (killed, its machine gone) or cannot reach the
    /// server.
    Lapsed(Lease),
}

impl Runner {
    /// The set's runner at `now`.
    pub fn of(set: &StatefulSet, now: Timestamp) -> Runner {
        Runner::of_in(set, LEASE, now)
    }

    /// The runner the lease in `annotation` names (the plan's, or a group's).
    pub fn of_in(set: &StatefulSet, annotation: &str, now: Timestamp) -> Runner {
        if set.metadata.annotations.as_ref().and_then(|a| a.get(annotation)).is_none() {
            return Runner::None;
        }
        match lease_in(set, annotation) {
            None => Runner::Unreadable,
            Some(l) if l.holds(now) => Runner::Live(l),
            Some(l) => Runner::Lapsed(l),
        }
    }

    /// Whether a runner drives the plan now.
    pub fn alive(&self) -> bool {
        matches!(self, Runner::Live(_) | Runner::Unreadable)
    }

    /// "runner ana on build-7 (pid 4242), lease until 10:02:11Z", "no runner (its lease ran out
    /// at 10:02:11Z: ana on build-7, pid 4242)", "no runner".
    pub fn words(&self) -> String {
        match self {
            Runner::None => "no runner".into(),
            Runner::Unreadable => format!("a runner whose lease ({LEASE}) cannot be read"),
            Runner::Live(l) => format!("runner {}", l.words()),
            Runner::Lapsed(l) => format!(
                "no runner (its lease ran out at {}: {} on {}, pid {})",
                l.expires, l.holder, l.host, l.pid
            ),
        }
    }
}

/// A hash of the set's pod template (FNV-1 of its JSON), for [`Record::template`].
pub fn template_hash(set: &StatefulSet) -> String {
    let bytes = serde_json::to_vec(&set.spec.template).unwrap_or_default();
    format!("{:08x}", crate::core::fnv::fnv1_32(&bytes))
}

/// RFC 3339 in whole seconds, UTC (what the records hold).
pub fn stamp(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::at;

    fn record_at(partition: i32, step: usize) -> Record {
        let r = crate::plan::fixtures::record("1,100%", step, Phase::Waiting, partition, "b", 10);
        Record { bake_seconds: 0, since: stamp(at(0)), started: stamp(at(0)), ..r }
    }

    #[test]
    fn a_records_words_are_clipped_and_its_times_said_for_what_they_are() {
        let r = Record { since: "9999-12-31T23:59:59Z".into(), ..record_at(3, 1) };
        let e = r.check().unwrap_err().to_string();
        assert!(e.contains("is out of range"), "{e}");
        let r = Record { since: "yesterday".into(), ..record_at(3, 1) };
        assert!(r.check().unwrap_err().to_string().contains("is not a time (RFC 3339)"));
        let words = Reading::invalid_words("its step 9 is past 4", "web");
        assert!(!words.contains("  "), "one space between words: {words}");
        let halted =
            Record { phase: Phase::Halted, reason: Some("x".repeat(50_000)), ..record_at(3, 1) };
        let said = halted.words(at(0));
        assert!(said.chars().count() < REASON_SAID + 40, "{}", said.len());
        assert!(said.ends_with('…'), "the cut is marked");
    }
}
