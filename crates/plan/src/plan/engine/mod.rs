//! The plan loop, once for every runner: `ststui rollout`, the console's `P` and the
//! simulator's `rollout` line are adapters that carry out what [`Engine::next`] returns and
//! report how it went — as `control/` is the controller loop for the simulator and drive mode.
//!
//! One turn: the record on the set (read by [`record::read`], the one reader) → the lease (taken
//! before anything is written, renewed, retried within its slack, given back) → a fresh read
//! (every move — a step opened, a bake declared passed, a pod deleted, a halt, done — is decided
//! again on a quorum read of the set and its pods, never on a watch that may have stalled) →
//! [`decide`] (pure) → an act. The plan's own writes chain: the set a write produced (its answer,
//! or what was read back after a lost reply) is the basis of the next write until the view has
//! caught up, so a runner is never refused by its own lease.
//!
//! What runs comes from the invocation ([`Ask`]), never from the record ([`super::ask`]): the
//! checks are this run's, and a record whose steps, bake, checks or policy another writer
//! changes under the run halts it.
//!
//! A state machine without IO: no clock (the view carries `now`), no threads; adapters own
//! their IO (a blocking client, the console's commands, the simulator's store). Owns: the loop,
//! the lease's life, when to read fresh, what is said. Must not: use `app`, `ui`, `sim`,
//! `steer`, `cluster`.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::OnFailure;
use super::ask::{Ask, Begin, resolve};
use super::decide::{self, Baseline, Facts, Next};
use super::gate::{Gating, Key};
use super::holding::{Holding, Terms};
use super::record::{self, Lease, Phase, Reading, Record, Runner, stamp};
use super::said;
use super::start::Start;
use crate::backend::{ClusterOp, Failure, FailureKind, ObjRef, Write};
use crate::core::pod::MinReady;
pub use gates::GateRun;

/// A step's checks failed: which one, how it ended (its exit, a timeout, not started) and its
/// last output line (`: LINE`, or nothing). The plan halts with these words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("check `{check}` {how}{last}")]
pub struct CheckFailed {
    pub check: String,
    pub how: String,
    pub last: String,
}

/// How a runner runs: its nature and timings (its adapter's, not the operator's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub set: ObjRef,
    /// Written into the lease: where the runner runs (a runner killed on this host is taken
    /// over at once by the next one there) and its process.
    pub host: String,
    pub pid: u32,
    /// How long a lease holds unrenewed, how often it is renewed, how soon a failed write or
    /// read is tried again (within the lease's slack).
    pub hold: SignedDuration,
    pub renew: SignedDuration,
    pub retry: SignedDuration,
    /// Its view can lag the server (a watch): every move is decided again on a fresh read.
    pub fresh_reads: bool,
    /// How long a write whose outcome is not reported is awaited in the view.
    pub observe: SignedDuration,
    /// It can run the operator's checks (a process); the console and the simulator cannot: a
    /// step without checks ends at its bake.
    pub runs_checks: bool,
    pub stuck_after_ms: u64,
    /// A lease of this host whose process is gone (the adapter looked): taken over at once.
    pub dead: Option<Lease>,
    /// Another runner's live lease is waited out instead of refused.
    pub wait_lease: bool,
    /// Another runner's lease that claims more than any runner writes is taken over (`rollout
    /// --force`, `plan::overclaim`); the console and the simulator never take one over.
    pub take_overclaimed: bool,
    /// How far ahead of now another runner's lease is believed: [`BELIEVED`] where runners
    /// write our 30 s, the simulator's own term where its planner writes the leases.
    ///
    /// [`BELIEVED`]: crate::plan::overclaim::BELIEVED
    pub believe: SignedDuration,
    /// How long a plan waits for the controller to observe the spec before it refuses
    /// (`None`: as long as it takes, woken by the set's changes — the simulator, whose
    /// controller may be paused).
    pub observe_spec: Option<SignedDuration>,
    /// The rollout group whose runner runs this plan (`plan::run`); `None`: a plan of
    /// its own, refused on a set a group's plan has under way (it rolls in the group's turn).
    pub group: Option<String>,
}

impl Config {
    /// Its lease's terms.
    pub fn terms(&self) -> Terms {
        Terms { hold: self.hold, renew: self.renew }
    }
}

/// What the runner sees now.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub set: &'a StatefulSet,
    /// The set's own pods with their ordinals, in ordinal order.
    pub pods: &'a [(i32, &'a Pod)],
    pub now: Timestamp,
    pub min_ready: MinReady,
    /// The operator's freeze holding the set, in its words.
    pub frozen: Option<&'a str>,
    /// Read from the server just now (a quorum read), not from a watch that may lag.
    pub fresh: bool,
    /// The PodDisruptionBudgets of the set's namespace (from the watch): a RollingUpdate step
    /// opens only while those that select the set's pods allow a disruption.
    pub budgets: &'a [&'a k8s_openapi::api::policy::v1::PodDisruptionBudget],
}

/// What the adapter does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Carry this write out and report with [`Engine::wrote`] (an adapter that learns outcomes
    /// only from its view may not: the engine then waits for the view to show it).
    Write(Write),
    /// Read the set and its pods from the server and call [`Engine::next`] with them (`fresh`),
    /// or report a failure with [`Engine::read_failed`].
    Read,
    /// Start these checks (this invocation's) with this environment; report with
    /// [`Engine::checked`] (meanwhile keep calling `next`: the lease is renewed).
    Check { checks: Vec<String>, env: Vec<(&'static str, String)> },
    /// Run this gate and report with [`Engine::gated`] (meanwhile keep calling `next`: the
    /// lease is renewed).
    Gate(Box<GateRun>),
    /// `--on-failure undo`: the template back to the previous revision, these pods (name, uid)
    /// stuck on `revision` deleted; report with [`Engine::reverted`].
    Revert { basis: Box<StatefulSet>, revision: String, stuck: Vec<(String, String)> },
    /// Nothing to do until the view changes or `until`.
    Wait { until: Option<Timestamp>, words: String },
    /// The run is over.
    End(End),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Done(Box<Record>),
    /// Halted: the record says why; the partition holds.
    Halted(Box<Record>),
    /// It could not begin; nothing was written. `usage`: a flag is missing.
    Refused {
        why: String,
        usage: bool,
    },
    /// It stopped before the plan ended: the set holds where the plan left it.
    Stopped {
        why: String,
        kind: Stop,
    },
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The server could not be reached, or refused a permission, for longer than the lease's
    /// slack.
    Unreachable,
    /// Another runner, or the set's removal, took the plan away.
    Taken,
    /// Someone aborted the plan (`ststui abort`, the console's abort): it will not go on.
    Aborted,
    /// The adapter asked ([`Engine::stop`]: a timeout, a quitting console).
    Asked,
}

/// A line a runner says about a move (the timeline's `plan` line, the verb's output).
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub record: Option<Record>,
    pub text: String,
}

/// A write sent and not yet settled.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    what: Sending,
    at: Timestamp,
    said: Option<Said>,
    /// The server said it was written (an adapter that learns no object): the view is waited
    /// for, and on a lagging view it counts as written all the same.
    answered: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Sending {
    Lease(String),
    Record(Box<Record>),
    Delete { pod: String, uid: String },
}

#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// Not begun: the plan resolved, the lease taken.
    Begin { since: Option<Timestamp> },
    /// The lease is ours; the plan runs (`mine`: as this run drives it, once begun).
    Run,
    /// Halted: recorded, reverted if asked, then over.
    Halt { record: Box<Record>, recorded: bool, reverted: bool },
    /// Over: the lease is given back, then [`Act::End`].
    Over { end: End, released: bool },
}

/// One plan run.
#[derive(Debug, Clone, PartialEq)]
pub struct Engine {
    cfg: Config,
    ask: Ask,
    stage: Stage,
    /// The plan as this run drives it: its steps, bake, checks, policy and revision are fixed.
    mine: Option<Record>,
    /// `mine` was decided at the start (a new plan, or a resumed one rewritten) and its write
    /// not yet seen to land: a fresh read without it means it never did (the server away, a
    /// reply lost and not read back), and the run begins again on what the set holds.
    landing: bool,
    /// Our lease as last written (the next write's precondition), until when it holds, when
    /// it is renewed next.
    lease: Holding,
    /// The set as our last write left it: the basis of the next write until the view catches
    /// up.
    known: Option<StatefulSet>,
    sent: Option<Sent>,
    /// A fresh read asked for then.
    reading: Option<Timestamp>,
    /// The last failure and when to try again.
    trouble: Option<(String, Timestamp)>,
    /// What has failed since the last write or read that went through (the server away).
    failing: Option<String>,
    /// A disruption budget's refusal last said (said again only when it changes).
    held: Option<String>,
    /// `--replace-stuck` offered (the step's broken pods on an older revision) when the last
    /// eviction was asked: said with a budget's refusal of it (often those pods' doing).
    offer: String,
    baseline: Option<Baseline>,
    /// Checks started (`None`: their outcome not yet in).
    checking: Option<Option<Result<(), CheckFailed>>>,
    /// `--on-failure undo`'s revert: whether it went through (`None`: not carried out yet).
    undone: Option<bool>,
    /// The undone plan's end (aborted, the partition back) sent.
    restored: bool,
    said: Vec<Said>,
    /// The precondition of the lease's release.
    seen_at_end: Option<String>,
    /// A new plan begun: the set it began on and how (for a preview), until taken.
    began: Option<(Box<StatefulSet>, Start)>,
    /// The plan was shown (once per run).
    previewed: bool,
    /// The gates asked and what passed in this run.
    gating: Gating,
    gate_run: Option<gates::InFlight>,
    /// A gate's "not yet"s so far, and when it is asked again.
    gate_tries: std::collections::BTreeMap<Key, u32>,
    gate_again: std::collections::BTreeMap<Key, Timestamp>,
    /// Another runner's lease that claims more than any runner writes, as first seen.
    overclaim: crate::plan::overclaim::Overclaim,
}

impl Engine {
    pub fn new(cfg: Config, ask: Ask) -> Engine {
        let gating = Gating::of(&ask.gates);
        Engine {
            cfg,
            ask,
            stage: Stage::Begin { since: None },
            mine: None,
            landing: false,
            lease: Holding::default(),
            known: None,
            sent: None,
            reading: None,
            trouble: None,
            failing: None,
            held: None,
            offer: String::new(),
            baseline: None,
            checking: None,
            undone: None,
            restored: false,
            said: Vec::new(),
            seen_at_end: None,
            began: None,
            previewed: false,
            gating,
            gate_run: None,
            gate_tries: Default::default(),
            gate_again: Default::default(),
            overclaim: Default::default(),
        }
    }

    /// The set this run drives.
    pub fn set(&self) -> &ObjRef {
        &self.cfg.set
    }

    /// The plan as this run drives it, once begun.
    pub fn plan(&self) -> Option<&Record> {
        self.mine.as_ref()
    }

    /// A new plan just begun: the set as it was and the plan, once (an adapter prints the plan
    /// before its first move; nothing is printed for a plan that could not begin).
    pub fn take_began(&mut self) -> Option<(StatefulSet, Start)> {
        // Shown once per run (a start tried again after a wait is not a second plan).
        let began = self.began.take().filter(|_| !self.previewed);
        self.previewed |= began.is_some();
        began.map(|(s, start)| (*s, start))
    }

    /// What was said since the last call, in order.
    pub fn said(&mut self) -> Vec<Said> {
        std::mem::take(&mut self.said)
    }

    /// Whether the run is over or ending.
    pub fn ending(&self) -> bool {
        matches!(self.stage, Stage::Over { .. })
    }

    fn say(&mut self, record: Option<&Record>, text: String) {
        self.said.push(Said { record: record.cloned(), text });
    }

    /// Stops the run (a timeout, a quitting console): the lease is given back, the set holds
    /// where the plan left it.
    pub fn stop(&mut self, why: String) {
        if !self.ending() {
            self.stage =
                Stage::Over { end: End::Stopped { why, kind: Stop::Asked }, released: false };
        }
    }

    /// The set to decide on: the view's, or the one our last write produced while the view has
    /// not caught up with it.
    fn current<'v>(&'v self, view: &View<'v>) -> &'v StatefulSet {
        match &self.known {
            Some(k) if newer(k, view.set) => k,
            _ => view.set,
        }
    }

    fn facts<'f>(&'f self, view: &View<'f>, set: &'f StatefulSet) -> Facts<'f> {
        Facts {
            set,
            pods: view.pods,
            now: view.now,
            min_ready: view.min_ready,
            stuck_after_ms: self.cfg.stuck_after_ms,
            baseline: self.baseline.as_ref(),
            frozen: view.frozen,
            gating: (!self.ask.gates.is_empty()).then_some(&self.gating),
            replace_stuck: self.ask.replace_stuck,
            max_restarts: self.ask.max_restarts,
            image: self.ask.image.as_deref(),
        }
    }

    /// The next thing to do on what `view` shows.
    pub fn next(&mut self, view: &View<'_>) -> Act {
        let now = view.now;
        if self.known.as_ref().is_some_and(|k| !newer(k, view.set)) {
            self.known = None;
        }
        // Stopped (a timeout, a quitting console): the lease goes back now, whatever is in
        // flight.
        if let Stage::Over { end, released: false } = self.stage.clone()
            && matches!(end, End::Stopped { kind: Stop::Asked, .. })
        {
            // A lease in flight may have landed: given back too (its text the precondition).
            if let Some(Sent { what: Sending::Lease(text), .. }) = self.sent.take() {
                self.lease.adopt(text);
            }
            return self.over(view, end, false);
        }
        // Its lease given back: nothing in flight (a read, a retry) holds the end.
        if let Stage::Over { end, released: true } = &self.stage {
            return Act::End(end.clone());
        }
        if let Some(sent) = &self.sent {
            if shows(&sent.what, self.current(view)) {
                let sent = self.sent.take();
                self.settled(now, sent, None);
            } else if now < sent.at + self.cfg.observe {
                let words = "waiting for the server to show the plan's write".to_string();
                return Act::Wait { until: Some(sent.at + self.cfg.observe), words };
            } else if sent.answered {
                let sent = self.sent.take();
                self.settled(now, sent, None);
            } else {
                // Not answered yet: deciding again now could send a second write the first
                // (which may still land) makes stale — a lease refused by our own. The adapter
                // always reports the outcome (its write path times out and reads back), and
                // `now` can be a simulator's virtual clock, which runs ahead of a slow answer.
                let words = "waiting for the server to answer the plan's write".to_string();
                return Act::Wait { until: None, words };
            }
        }
        if let Some((words, at)) = &self.trouble
            && !self.renewal_due(now)
        {
            if now < *at {
                let words = format!("{words} (trying again)");
                return Act::Wait { until: Some(self.wake(*at)), words };
            }
            self.trouble = None;
        }
        let fresh = view.fresh || !self.cfg.fresh_reads;
        if fresh {
            self.reading = None;
        } else if let Some(at) = self.reading
            && now < at + self.cfg.observe
        {
            let until = Some(at + self.cfg.observe);
            return Act::Wait { until, words: "reading the set and its pods".into() };
        }
        if let Some(lost) = self.lapsed(now) {
            return lost;
        }
        match self.stage.clone() {
            Stage::Begin { since } => self.begin(view, since),
            Stage::Run => self.run(view, fresh),
            Stage::Halt { record, recorded, reverted } => {
                self.halting(view, *record, recorded, reverted)
            }
            Stage::Over { end, released } => self.over(view, end, released),
        }
    }

    /// When a wait ends: `at`, or the lease's renewal if sooner.
    fn wake(&self, at: Timestamp) -> Timestamp {
        self.lease.wake(at)
    }

    /// Our lease ran out before it could be renewed: the run stops (the set stays held).
    fn lapsed(&mut self, now: Timestamp) -> Option<Act> {
        let until = self.lease.ran_out(now)?;
        // Not failing (a process suspended, a slow turn): the renewal, with our lease as its
        // precondition, tells whether it is still ours.
        if self.ending() || self.failing.is_none() {
            return None;
        }
        let last = self.failing.take().map(|w| format!(": {w}")).unwrap_or_default();
        let trouble = last;
        let why = format!(
            "the plan's lease could not be renewed before it ran out at {}{trouble}; the set \
             stays where the plan left it (rerun to resume)",
            stamp(until)
        );
        self.lease.expire();
        self.stage =
            Stage::Over { end: End::Stopped { why, kind: Stop::Unreachable }, released: true };
        Some(self.end_act())
    }

    fn end_act(&self) -> Act {
        match &self.stage {
            Stage::Over { end, .. } => Act::End(end.clone()),
            _ => Act::Wait { until: None, words: String::new() },
        }
    }
}

mod begin;
mod gates;
mod outcome;
mod run;
#[cfg(test)]
mod tests;

/// The lease write: `lease` (or its removal) where the set's lease reads `seen`.
fn lease_write(set: &ObjRef, lease: Option<String>, seen: Option<String>) -> Act {
    Act::Write(Write::new(ClusterOp::PlanLease { set: set.clone(), lease, seen }))
}

fn json(r: &Record) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

fn millis(d: SignedDuration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(0)
}

/// Whether `a` is a later version of the set than `b` (resourceVersions compared as numbers,
/// as the API server and the simulator write them; otherwise never assumed).
fn newer(a: &StatefulSet, b: &StatefulSet) -> bool {
    let rv = |s: &StatefulSet| s.metadata.resource_version.as_deref()?.parse::<u64>().ok();
    matches!((rv(a), rv(b)), (Some(x), Some(y)) if x > y)
}

/// Whether lease text `held` (as the set holds it) is the lease `mine` (as written).
pub(crate) fn same_lease(held: Option<&str>, mine: &str) -> bool {
    let Some(held) = held else { return false };
    let parse = |t: &str| serde_json::from_str::<Lease>(t).ok();
    matches!((parse(held), parse(mine)), (Some(h), Some(m))
        if h.host == m.host && h.pid == m.pid && h.expires == m.expires
            && (m.holder.is_empty() || h.holder == m.holder))
}

/// Whether `set` shows what was sent.
fn shows(what: &Sending, set: &StatefulSet) -> bool {
    match what {
        Sending::Lease(text) => same_lease(record::lease_text(set).as_deref(), text),
        Sending::Record(w) => record::read(set).plan().is_some_and(|r| {
            (r.step, r.phase, &r.since, r.partition, r.target, &r.gate)
                == (w.step, w.phase, &w.since, w.partition, w.target, &w.gate)
        }),
        Sending::Delete { .. } => false,
    }
}

/// When a wait ends by itself: the bake is over, the step is stuck, or a before-step gate's
/// recheck is due.
fn wake(r: &Record, facts: &Facts<'_>) -> Option<Timestamp> {
    let recheck = facts.gating.and_then(|g| super::gated::due(r, g));
    let own = match r.phase {
        Phase::Baking => r.since().and_then(|t| {
            let bake = i64::try_from(r.bake_seconds).unwrap_or(i64::MAX / 2);
            t.checked_add(SignedDuration::from_secs(bake)).ok()
        }),
        Phase::Waiting => decide::stuck_deadline(r, facts)
            .and_then(|t| t.checked_add(SignedDuration::from_secs(1)).ok()),
        _ => None,
    };
    match (own, recheck) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Record {
    /// A record standing for `start` before its first step (what a refusal is said on).
    fn default_for(start: &Start) -> Record {
        Record {
            steps: start.steps.to_string(),
            bake_seconds: start.bake_seconds,
            checks: start.checks.clone(),
            on_failure: start.on_failure.word().into(),
            revision: String::new(),
            template: String::new(),
            step: 0,
            of: start.steps.0.len(),
            phase: Phase::Waiting,
            since: String::new(),
            partition: 0,
            by: start.by.clone(),
            started: String::new(),
            reason: None,
            began_at: None,
            from: String::new(),
            gates: start.gates.clone(),
            target: None,
            gate: None,
        }
    }
}
