//! The ONE verdict of a set: its word, whether its rollout is done, stuck (the pod and the
//! rule) or waiting (on what), and the one command that moves it on. Every surface reads it:
//! the console's header and set list, the group matrix, `ststui explain` (text and JSON),
//! `ststui wait` (its exit code and its lines) and the runners; the Argo CD health script is
//! checked against it row by row ([`Row::ALL`], the table in docs/verdicts.md).
//!
//! **Judged by the pods.** Whether a set is done, rolling or untouched is read from its pods
//! and revisions (or, where the pods are not known, from its status, as Argo CD reads it).
//! Records — a plan's, a group's part, a freeze — say what a runner intended and what
//! happened; they say what a set waits on, never that it is done: a plan or part claiming
//! `done` for a set whose pods are not updated is judged by the pods. A plan's freeze is the
//! plan's: while a plan is under way the set is the plan's, never Frozen.
//!
//! Owns: the rules and their order ([`judge`]), the table ([`Row::about`]), the words. Must
//! not: do IO or read a clock (time is an input).

mod plan;
mod pods;
mod table;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::core::options::Semantics;

pub use plan::{current_plan, resume_move};
pub use pods::STUCK_AFTER_SECS;

/// The word a set is said with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Word {
    Healthy,
    Held,
    Progressing,
    Waiting,
    Stalled,
    Blocked,
    Paused,
    Frozen,
    Halted,
    Degraded,
    Unknown,
}

impl Word {
    pub fn word(self) -> &'static str {
        match self {
            Word::Healthy => "Healthy",
            Word::Held => "Held",
            Word::Progressing => "Progressing",
            Word::Waiting => "Waiting",
            Word::Stalled => "Stalled",
            Word::Blocked => "Blocked",
            Word::Paused => "Paused",
            Word::Frozen => "Frozen",
            Word::Halted => "Halted",
            Word::Degraded => "Degraded",
            Word::Unknown => "Unknown",
        }
    }
}

/// What `ststui wait` does with a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Done as the spec asks (exit 0).
    Done,
    /// Not yet: it keeps waiting (exit 1 at `--timeout`).
    Waiting,
    /// No waiting moves it on: exit 3, with the command that does.
    Stuck,
}

impl Kind {
    /// `ststui wait`'s exit code, or `None` while it waits.
    pub fn exit(self) -> Option<i32> {
        match self {
            Kind::Done => Some(0),
            Kind::Waiting => None,
            Kind::Stuck => Some(3),
        }
    }
}

/// An Argo CD health status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Argo {
    Healthy,
    Progressing,
    Suspended,
    Degraded,
}

impl Argo {
    pub fn word(self) -> &'static str {
        match self {
            Argo::Healthy => "Healthy",
            Argo::Progressing => "Progressing",
            Argo::Suspended => "Suspended",
            Argo::Degraded => "Degraded",
        }
    }
}

/// A row of the verdict table: one state a set can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Row {
    Healthy,
    Held,
    Rolling,
    Degraded,
    Blocked,
    Paused,
    Frozen,
    FrozenIdle,
    Plan,
    Approval,
    Stalled,
    Halted,
    Invalid,
    GroupWaiting,
    GroupHalted,
    GroupStalled,
    Unknown,
}

/// What a row means: its word, `wait`'s kind, Argo CD's status, when it holds and what moves it on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    pub id: &'static str,
    pub word: Word,
    pub kind: Kind,
    /// What the Argo CD script says of such a set (`None`: not a state of the set Argo CD can
    /// see — the simulator's pause, pods ststui cannot read).
    pub argo: Option<Argo>,
    pub when: &'static str,
    pub moves: &'static str,
}

impl Row {
    /// Every row, in the table's order (the rules' order is [`judge`]'s).
    pub const ALL: [Row; 17] = [
        Row::Healthy,
        Row::Held,
        Row::Rolling,
        Row::Degraded,
        Row::Blocked,
        Row::Paused,
        Row::Frozen,
        Row::FrozenIdle,
        Row::Plan,
        Row::Approval,
        Row::Stalled,
        Row::Halted,
        Row::Invalid,
        Row::GroupWaiting,
        Row::GroupHalted,
        Row::GroupStalled,
        Row::Unknown,
    ];

    /// What the row means (the table: [`table::about`]).
    pub fn about(self) -> About {
        table::about(self)
    }
}

/// What a set waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum On {
    /// The controller has not observed the spec.
    Spec,
    /// Pods to be created, updated, removed or to turn Ready.
    Pods,
    /// A plan's bake.
    Bake,
    /// A plan's checks.
    Checks,
    /// A plan's gate (pre-delete, post-ready, before-step, last-by).
    Gate,
    /// A disruption budget that allows no disruption.
    Budget,
    /// An operator's approval.
    Approval,
    /// A runner (gone).
    Runner,
    /// The sets before it in its rollout group.
    Group,
    /// An operator (a partition, OnDelete, a freeze).
    Operator,
}

/// A command that moves a set on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    pub command: String,
    /// What it does ("resumes the plan").
    pub does: String,
}

impl Move {
    fn new(command: String, does: &str) -> Move {
        Move { command, does: does.to_string() }
    }

    /// "`ststui resume web` resumes it".
    pub fn words(&self) -> String {
        format!("`{}` {}", self.command, self.does)
    }
}

/// The counts a verdict's line says (from the pods, else the status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Tally {
    pub replicas: i32,
    /// Pods of the replica range on the update revision.
    pub updated: i32,
    /// Pods of the replica range Ready.
    pub ready: i32,
    /// Pods on an older revision the partition (or OnDelete) holds there.
    pub held: i32,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub row: Row,
    /// What it waits on, if it waits.
    pub on: Option<On>,
    /// Why: what it waits on, the rule that has it stuck, or what done means here.
    pub why: String,
    /// The pod a rule names.
    pub pod: Option<String>,
    /// The one command that moves it on.
    pub next: Option<Move>,
    /// The other way (abort, beside continue).
    pub or: Option<Move>,
    pub tally: Tally,
    /// A clock the state runs on (a bake's end, a gate asked since): shown live, never part
    /// of the words, so a log gets a line when the state changes, not each second.
    pub clock: Option<Clock>,
    /// A group member's `why` without its place in the group (what the group matrix shows
    /// after the set's name).
    pub short: Option<String>,
}

/// A time a live surface counts to or from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Since then (a wait for approval, a gate asked).
    Since(Timestamp),
    /// Until then (a bake).
    Until(Timestamp),
}

impl Clock {
    /// "1m12s left", "2m so far" at `now`.
    pub fn words(self, now: Timestamp) -> String {
        let ms = |a: Timestamp, b: Timestamp| {
            u64::try_from(b.duration_since(a).as_millis().max(0)).unwrap_or(0)
        };
        match self {
            Clock::Since(t) => format!("{} so far", super::duration_words(ms(t, now))),
            Clock::Until(t) => format!("{} left", super::duration_words(ms(now, t))),
        }
    }
}

impl Verdict {
    pub fn word(&self) -> Word {
        self.row.about().word
    }

    pub fn kind(&self) -> Kind {
        self.row.about().kind
    }

    /// Done as the spec asks (`wait`'s exit 0, `explain`'s `done`).
    pub fn done(&self) -> bool {
        self.kind() == Kind::Done
    }

    /// Every pod on the update revision and Ready (`wait --full`).
    pub fn complete(&self) -> bool {
        self.row == Row::Healthy
    }

    pub fn argo(&self) -> Option<Argo> {
        self.row.about().argo
    }

    /// "web: 2/3 updated, 3/3 Ready".
    pub fn counts(&self, name: &str) -> String {
        let t = &self.tally;
        format!("{name}: {}/{} updated, {}/{} Ready", t.updated, t.replicas, t.ready, t.replicas)
    }

    /// "why; `ststui resume web` resumes it".
    pub fn said(&self) -> String {
        let mut out = self.why.clone();
        for m in [&self.next, &self.or].into_iter().flatten() {
            out.push_str(&format!("; {}", m.words()));
        }
        out
    }
}

/// What the verdict reads.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub set: &'a StatefulSet,
    pub pods: Pods<'a>,
    pub now: Timestamp,
    /// The server's semantics (when a Ready pod counts as available).
    pub sem: &'a Semantics,
    /// The namespace's disruption budgets.
    pub budgets: &'a [&'a PodDisruptionBudget],
    /// The namespace's other sets as known (a rollout group's members), any order.
    pub sets: &'a [&'a StatefulSet],
    /// What the controller's advisor says.
    pub advisor: &'a Advisor,
    /// What a watcher remembers (`ststui wait`), if one watches.
    pub seen: Option<&'a Seen>,
    /// What holds the set's rollout group now (`plan::group::hold` on its members' pods), when
    /// they are watched.
    pub hold: Option<&'a crate::plan::group::Hold>,
}

/// The set's own pods, as far as they are known.
#[derive(Debug, Clone, Copy)]
pub enum Pods<'a> {
    /// Its pods with their ordinals, in ordinal order.
    Seen(&'a [(i32, &'a Pod)]),
    /// Not watched (the set list, Argo CD): judged by the status.
    Status,
    /// Not listed yet, or not readable: why.
    Unknown(&'a str),
}

/// What the controller's advisor says of the set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Advisor {
    /// A rule no waiting resolves (the forced rollback, a sync error): the pod and the rule.
    pub blocked: Option<(Option<String>, String)>,
    /// The simulator's controller is paused.
    pub paused: bool,
    /// What the controller waits for, in its words.
    pub waiting: Option<String>,
    /// A suspicion short of a rule (an update pod not Ready: the update may be broken), said
    /// with `--stuck-after`.
    pub suspect: Option<String>,
}

/// What a watcher remembers between looks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// A pod that failed again after the controller recreated it: its name and how often.
    pub failed: Option<(String, usize)>,
    /// Nothing moved for this long (`--stuck-after`), in words.
    pub still: Option<String>,
}

/// The verdict on what `f` shows, the rules in this order: pods unknown; a plan on the
/// revision the set rolls out (halted, nobody running it, at its manual gate, under way); a
/// rollout group's plan having it wait; a freeze; the simulator's pause; what the advisor or
/// the watcher says no waiting resolves; then the pods (or the status).
pub fn judge(f: &Facts<'_>) -> Verdict {
    let tally = pods::tally(f);
    if let Pods::Unknown(why) = f.pods {
        return Verdict::of(Row::Unknown, None, why.to_string(), tally);
    }
    if let Some(v) = plan::of(f, tally) {
        return v;
    }
    let by_pods = pods::judge(f, tally);
    if let Some(v) = plan::group(f, tally, &by_pods) {
        return v;
    }
    if let Some(v) = frozen(f, tally, &by_pods) {
        return v;
    }
    if f.advisor.paused {
        let why = "the controller is paused: nothing moves until it runs".to_string();
        return Verdict::of(Row::Paused, None, why, tally);
    }
    if let Some(v) = stuck(f, tally, &by_pods) {
        return v;
    }
    by_pods
}

impl Verdict {
    fn of(row: Row, on: Option<On>, why: String, tally: Tally) -> Verdict {
        Verdict { row, on, why, pod: None, next: None, or: None, tally, clock: None, short: None }
    }

    fn then(mut self, next: Move) -> Verdict {
        self.next = Some(next);
        self
    }

    fn or_else(mut self, or: Move) -> Verdict {
        self.or = Some(or);
        self
    }

    fn timed(mut self, clock: Option<Clock>) -> Verdict {
        self.clock = clock;
        self
    }

    fn naming(mut self, pod: Option<String>) -> Verdict {
        self.pod = pod;
        self
    }
}

/// The verdict on `set` by its status alone (no pods, budgets, other sets or advisor): what
/// Argo CD's script sees, at `now`.
pub fn of_status(set: &StatefulSet, now: Timestamp) -> Verdict {
    let sem = crate::core::Options::default().semantics;
    judge(&Facts {
        set,
        pods: Pods::Status,
        now,
        sem: &sem,
        budgets: &[],
        sets: &[],
        advisor: &Advisor::default(),
        seen: None,
        hold: None,
    })
}

/// The set's name, escaped for words (written by whoever may create sets).
fn name_of(set: &StatefulSet) -> String {
    crate::text::escape_controls(crate::core::spec::name(set)).into_owned()
}

/// A freeze holding the set (a plan's freeze never gets here: the plan is judged first).
fn frozen(f: &Facts<'_>, tally: Tally, by_pods: &Verdict) -> Option<Verdict> {
    let fz = super::freeze::holding(f.set)?;
    let name = name_of(f.set);
    let resume = Move::new(format!("ststui resume {name}"), "lets it roll");
    let status = f.set.status.as_ref();
    let pending = tally.held > 0
        || by_pods.row != Row::Healthy
        || status.is_some_and(|s| s.current_revision != s.update_revision);
    if !pending {
        let why = format!("{}; nothing to roll out", fz.words());
        return Some(Verdict::of(Row::FrozenIdle, None, why, tally).then(resume));
    }
    let why = format!(
        "{}: the update is held until it is resumed (the partition goes back to {})",
        fz.words(),
        fz.recorded()
    );
    Some(Verdict::of(Row::Frozen, Some(On::Operator), why, tally).then(resume))
}

/// What no waiting resolves, by the advisor's or the watcher's word.
fn stuck(f: &Facts<'_>, tally: Tally, by_pods: &Verdict) -> Option<Verdict> {
    let name = name_of(f.set);
    let abort = || Move::new(format!("ststui abort {name}"), "rolls back to the previous revision");
    if let Some((pod, rule)) = &f.advisor.blocked {
        let v = Verdict::of(Row::Blocked, Some(On::Pods), rule.clone(), tally);
        return Some(v.naming(pod.clone()).then(abort()));
    }
    let seen = f.seen?;
    if let Some((pod, n)) = &seen.failed {
        let why =
            format!("failed {n} times: the controller deletes and recreates it and it fails again");
        let v = Verdict::of(Row::Blocked, Some(On::Pods), why, tally);
        return Some(v.naming(Some(pod.clone())).then(abort()));
    }
    if let Some(still) = &seen.still
        && by_pods.kind() == Kind::Waiting
    {
        let suspect = f.advisor.suspect.as_ref().map(|s| format!("; {s}")).unwrap_or_default();
        let why = format!("no progress for {still} (--stuck-after): {}{suspect}", by_pods.why);
        let v = Verdict::of(Row::Blocked, by_pods.on, why, tally);
        return Some(v.naming(by_pods.pod.clone()));
    }
    None
}

#[cfg(test)]
mod tests;
