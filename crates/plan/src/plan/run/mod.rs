//! The one plan loop over members: `ststui rollout`, the console's `P` and the simulator's
//! `rollout` lines run every plan through [`Run`] — one set's plan is a run of one member, a
//! rollout group's a run of several sets in one cluster — and carry out what [`Run::next`]
//! returns ([`Step`]: an [`Act`] or the run's [`RunEnd`]). Each member's steps are taken by the
//! set's plan engine ([`Engine`]); the run decides which member rolls, never two in motion.
//!
//! A group's turn: the group's lease (on its first set, taken before anything is written,
//! renewed, given back) → each member's part marked (`part`: waiting, rolling, done, halted) →
//! the next set held until every pod of every set of the group is updated or untouched, Ready
//! and available ([`super::group::hold`], on a fresh read) for the zone bake's length → its
//! plan run by an [`Engine`] whose acts pass through → its end recorded on its part: done moves
//! on, a halt halts the group (the other sets stay as they are), a refusal or a stop ends the
//! group there (a rerun resumes: the parts of the same run say which sets are done). A run of
//! one set has no group lease, parts or hold: its engine's acts and end are the run's.
//!
//! What runs comes from the invocation (the steps, bake, checks and gates of [`Ask`], the zone
//! bake); the parts on the sets say what happened and where a rerun resumes, never what runs.
//! A state machine without IO, as the engine is. Must not: use `app`, `ui`, `sim`, `steer`,
//! `cluster`.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::jiff::Timestamp;

use crate::backend::{ClusterOp, Failure, FailureKind, ObjRef, Write};
use crate::plan::ask::Ask;
use crate::plan::decide;
use crate::plan::engine::{Act, Config, End, Engine, Said, Stop, View};
use crate::plan::group::part::{self, Cluster, Part, State};
use crate::plan::holding::Holding;
use crate::plan::record::{self, Lease, Record, Runner, stamp};

/// How a rollout group runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// The group's name (recorded in each part).
    pub group: String,
    /// Its sets in rolling order; the first holds the group's lease.
    pub sets: Vec<ObjRef>,
    /// How long every pod of the group stays updated-or-untouched, Ready and available after a
    /// set is done before the next starts.
    pub zone_bake_seconds: u64,
    /// `--batches 1,2,4`: each set's steps are these batches of pods, the last repeated, up to
    /// all of them (resolved per set, on its replicas: [`batch_steps`]); `None`: the ask's steps.
    pub batches: Option<Vec<u32>>,
    /// Each set's engine (its `set` is the member's); its lease timings are the group's.
    pub engine: Config,
    /// A fleet's: each member's cluster (`sets` then names one set, or each set of a group, in
    /// each cluster, in the order the clusters roll). `None`: a group in one cluster.
    pub clusters: Option<Vec<Cluster>>,
    /// A fleet's: the bake before the first member of each next cluster (`zone_bake_seconds`
    /// is then the bake between a group's sets within a cluster).
    pub cluster_bake_seconds: u64,
    /// A fleet's: the first member of each next cluster waits for an approval on its part
    /// (`ststui approve`) before it starts.
    pub approve_between: bool,
    /// A fleet's `--image`: set on a member's (frozen) set when its turn comes, after the
    /// members before it are done and baked — so the clusters after a halt keep their template.
    /// `None`: the sets hold their new template already.
    pub image: Option<String>,
}

pub use crate::plan::member::Member;

/// What the runner sees now: every member, in the group's order.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    pub members: &'a [Member<'a>],
    pub now: Timestamp,
    /// Read from the server just now (every member), not from a watch.
    pub fresh: bool,
    pub budgets: &'a [&'a PodDisruptionBudget],
}

/// What the adapter does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// As for one plan ([`Act`], never `End`): about the set [`Run::active`] names
    /// while one rolls, else the group's own writes; [`Act::Read`] reads every member.
    Do(Act),
    End(RunEnd),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// Every set done.
    Done,
    /// A set's plan halted: the run halted there.
    Halted { set: ObjRef, record: Box<Record> },
    /// It could not begin (nothing written), or a set's plan could not.
    Refused { why: String, usage: bool },
    /// Stopped before the end: the sets stay where the plan left them; a rerun resumes.
    Stopped { why: String, kind: Stop },
}

#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Begin,
    /// Each member's part written, from `next`.
    Mark {
        next: usize,
    },
    /// Waiting to start member `index`; every pod of the group has been fine since `quiet`.
    Hold {
        index: usize,
        quiet: Option<Timestamp>,
    },
    Rolling {
        index: usize,
    },
    /// The last part written (`index`'s, as `state`), then the lease given back.
    Close {
        end: RunEnd,
        last: Option<(usize, State, Option<String>)>,
    },
    Over {
        end: RunEnd,
        released: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Sent {
    /// The group's lease, written at `at`.
    Lease {
        text: String,
        at: Timestamp,
    },
    Part {
        index: usize,
        part: Box<Part>,
    },
    /// The run's image on member `index`'s set.
    Image {
        index: usize,
    },
    Inner,
}

/// One plan run, over one set or a group's.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    cfg: GroupConfig,
    /// One set's plan: no group lease, parts or hold; its engine's acts and end are the run's.
    solo: bool,
    ask: Ask,
    stage: Stage,
    inner: Option<Engine>,
    /// The plan as the last member's engine to end left it (its record as this run wrote it).
    ended: Option<Record>,
    /// The run's start (its parts share it) and each part as last written.
    started: Option<String>,
    parts: Vec<Option<Part>>,
    /// Members whose set this run gave its image ([`GroupConfig::image`]).
    imaged: Vec<bool>,
    /// The group's lease, as this run holds it.
    lease: Holding,
    sent: Option<Sent>,
    trouble: Option<(String, Timestamp)>,
    /// What was said, by member (its place in the run).
    said: Vec<(usize, Said)>,
    /// The member the rolling plan's engine runs on, and the member the last act is about.
    inner_at: usize,
    acting: usize,
    /// What the last hold said (said again only when it changes).
    held: Option<String>,
    /// Since when the controller has not observed a member's spec (before anything begins).
    unobserved: Option<Timestamp>,
    /// Since when the fresh reads of the members have failed, none read since (while no
    /// member rolls: its engine judges its own).
    unread: Option<Timestamp>,
    /// Another group runner's lease that claims more than any runner writes, as first seen.
    overclaim: crate::plan::overclaim::Overclaim,
}

impl Run {
    /// A rollout group's plan.
    pub fn group(cfg: GroupConfig, ask: Ask) -> Run {
        Run::new(cfg, ask, false)
    }

    /// One set's plan (`cfg.set`).
    pub fn one(cfg: Config, ask: Ask) -> Run {
        let cfg = GroupConfig {
            group: String::new(),
            sets: vec![cfg.set.clone()],
            zone_bake_seconds: 0,
            batches: None,
            engine: cfg,
            clusters: None,
            cluster_bake_seconds: 0,
            approve_between: false,
            image: None,
        };
        Run::new(cfg, ask, true)
    }

    fn new(cfg: GroupConfig, ask: Ask, solo: bool) -> Run {
        let n = cfg.sets.len();
        Run {
            cfg,
            solo,
            ask,
            stage: Stage::Begin,
            inner: None,
            ended: None,
            started: None,
            parts: vec![None; n],
            imaged: vec![false; n],
            lease: Holding::default(),
            sent: None,
            trouble: None,
            said: Vec::new(),
            inner_at: 0,
            acting: 0,
            held: None,
            unobserved: None,
            unread: None,
            overclaim: Default::default(),
        }
    }

    /// The set rolling now (what a [`Step::Do`] of its plan is about).
    pub fn active(&self) -> Option<&ObjRef> {
        self.inner.as_ref().map(Engine::set)
    }

    /// The rolling set's plan as this run drives it.
    pub fn plan(&self) -> Option<&Record> {
        self.inner.as_ref().and_then(Engine::plan)
    }

    /// The rolling set's plan as this run last wrote it, also once its engine has ended (a
    /// closing line tells where the plan stays from this, never from a watch that may lag).
    pub fn last_plan(&self) -> Option<&Record> {
        self.plan().or(self.ended.as_ref())
    }

    /// A new plan just begun on the rolling set: the set as it was and the plan, once (an
    /// adapter prints the plan before its first move).
    pub fn take_began(&mut self) -> Option<(StatefulSet, crate::plan::start::Start)> {
        self.inner.as_mut().and_then(Engine::take_began)
    }

    /// The members, in rolling order.
    pub fn sets(&self) -> &[ObjRef] {
        &self.cfg.sets
    }

    /// The set a write or a line is about: the rolling set, else the first.
    pub fn about(&self) -> &ObjRef {
        self.active().unwrap_or(&self.cfg.sets[0])
    }

    /// Whether the run is over but for giving its lease back (or closing: its last part).
    pub fn ending(&self) -> bool {
        matches!(self.stage, Stage::Over { .. } | Stage::Close { .. })
            || (self.solo && self.inner.as_ref().is_some_and(Engine::ending))
    }

    /// What the run is, in a word: "fleet" (members in several clusters) or "group".
    pub fn kind_word(&self) -> &'static str {
        if self.cfg.clusters.is_some() { "fleet" } else { "group" }
    }

    /// The rollout group's name (`None`: one set's plan).
    pub fn group_name(&self) -> Option<&str> {
        (!self.solo).then_some(self.cfg.group.as_str())
    }

    /// The member (its place in [`Run::sets`]) the last [`Step::Do`] is about — where an adapter
    /// of several clusters carries it out ([`Act::Read`] reads every member).
    pub fn acting(&self) -> usize {
        self.acting
    }

    /// Member `i` in words: its set's name, or `cluster/name` in a fleet.
    pub fn label(&self, i: usize) -> String {
        let name = self.cfg.sets.get(i).map(|s| s.name.as_str()).unwrap_or_default();
        match self.cfg.clusters.as_ref().and_then(|c| c.get(i)) {
            Some(c) => format!("{}/{name}", c.shown()),
            None => name.to_string(),
        }
    }

    /// What was said since the last call, with the member each line is about (its place), in
    /// order: the rolling set's plan's lines (with its record) and the group's own (without).
    pub fn said(&mut self) -> Vec<(usize, Said)> {
        if let Some(inner) = self.inner.as_mut() {
            let at = self.inner_at;
            self.said.extend(inner.said().into_iter().map(|s| (at, s)));
        }
        std::mem::take(&mut self.said)
    }

    fn say(&mut self, index: usize, text: String) {
        self.said.push((index, Said { record: None, text }));
    }

    /// Stops the run (a timeout, a quitting console): a rolling set's plan stops first.
    pub fn stop(&mut self, why: String) {
        if let Some(inner) = self.inner.as_mut() {
            inner.stop(why);
            return;
        }
        if !matches!(self.stage, Stage::Over { .. } | Stage::Close { .. }) {
            let end = RunEnd::Stopped { why, kind: Stop::Asked };
            self.stage = Stage::Close { end, last: None };
        }
    }

    pub fn checked(&mut self, outcome: Result<(), crate::plan::engine::CheckFailed>) {
        if let Some(inner) = self.inner.as_mut() {
            inner.checked(outcome);
        }
    }

    pub fn gated(&mut self, outcome: crate::plan::gate::Outcome) {
        if let Some(inner) = self.inner.as_mut() {
            inner.gated(outcome);
        }
    }

    pub fn reverted(&mut self, outcome: Result<(), String>) {
        if let Some(inner) = self.inner.as_mut() {
            inner.reverted(outcome);
        }
    }

    /// The next thing to do on what `view` shows.
    pub fn next(&mut self, view: &RunView<'_>) -> Step {
        let now = view.now;
        if view.fresh {
            self.unread = None;
        }
        if self.sent.is_some() {
            return wait(None, "waiting for the server to answer the group's write");
        }
        if let Some(until) = self.lease.ran_out(now)
            && !matches!(self.stage, Stage::Over { .. })
        {
            let trouble = self.trouble.take().map(|(w, _)| format!(": {w}")).unwrap_or_default();
            let why = format!(
                "the group's lease could not be renewed before it ran out at {}{trouble}; the \
                 sets stay where the plan left them (rerun to resume)",
                stamp(until)
            );
            self.lease.expire();
            self.inner = None;
            self.stage = Stage::Over {
                end: RunEnd::Stopped { why, kind: Stop::Unreachable },
                released: true,
            };
        }
        if let Some((words, at)) = &self.trouble {
            if now < *at {
                return wait(Some(*at), &format!("{words} (trying again)"));
            }
            self.trouble = None;
        }
        if let Some(why) = self.aborted(view)
            && matches!(self.stage, Stage::Mark { .. } | Stage::Hold { .. } | Stage::Rolling { .. })
        {
            match self.inner.as_mut() {
                // Its own record says aborted too: it stops, and the group with it.
                Some(inner) => inner.stop(why),
                None => {
                    self.stage =
                        Stage::Close { end: RunEnd::Stopped { why, kind: Stop::Taken }, last: None }
                }
            }
        }
        if self.lease.due(now) && !matches!(self.stage, Stage::Over { .. }) {
            return self.lease_write(view, true);
        }
        match self.stage.clone() {
            Stage::Begin => self.begin(view),
            Stage::Mark { next } => self.mark(view, next),
            Stage::Hold { index, quiet } => self.hold(view, index, quiet),
            Stage::Rolling { index } => self.rolling(view, index),
            Stage::Close { end, last } => self.close(view, end, last),
            Stage::Over { end, released } => self.over(view, end, released),
        }
    }

    /// Whether `ststui abort` reverted a set of this run: the group stops.
    fn aborted(&self, view: &RunView<'_>) -> Option<String> {
        let started = self.started.as_deref()?;
        view.members.iter().zip(&self.cfg.sets).find_map(|(m, key)| {
            let p = part::read(m.set?).any()?.clone();
            (p.started == started && p.group == self.cfg.group && p.state == State::Aborted).then(
                || {
                    let by = p
                        .reason
                        .as_deref()
                        .map(|r| crate::text::shown(r, crate::plan::record::REASON_SAID));
                    format!("the group was aborted ({}: {})", key.name, by.unwrap_or_default())
                },
            )
        })
    }

    fn anchor<'v>(&self, view: &RunView<'v>) -> Option<&'v StatefulSet> {
        view.members.first().and_then(|m| m.set)
    }

    fn refuse(&mut self, why: String) -> Step {
        self.stage = Stage::Over { end: RunEnd::Refused { why, usage: false }, released: true };
        Step::End(self.end())
    }

    fn end(&self) -> RunEnd {
        match &self.stage {
            Stage::Over { end, .. } | Stage::Close { end, .. } => end.clone(),
            _ => RunEnd::Stopped { why: String::new(), kind: Stop::Asked },
        }
    }
}

mod answers;
mod approval;
mod begin;
mod turns;

/// The steps of `batches` for a set of `replicas`: cumulative counts (1,2,4 → 1, 3, 7, 11, …,
/// the last batch repeated) while short of the replicas, then 100%.
pub fn batch_steps(batches: &[u32], replicas: i32) -> crate::plan::Steps {
    use crate::plan::StepSpec;
    let replicas = i64::from(replicas.max(1));
    let (mut out, mut total) = (Vec::new(), 0i64);
    let last = i64::from(batches.last().copied().unwrap_or(1).max(1));
    for i in 0.. {
        let b = batches.get(i).map_or(last, |b| i64::from((*b).max(1)));
        total += b;
        if total >= replicas || i > 10_000 {
            break;
        }
        out.push(StepSpec::Count(i32::try_from(total).unwrap_or(i32::MAX)));
    }
    out.push(StepSpec::Percent(100));
    crate::plan::Steps(out)
}

fn wait(until: Option<Timestamp>, words: &str) -> Step {
    Step::Do(Act::Wait { until, words: words.to_string() })
}

/// Why `set` rolls by itself now: a RollingUpdate set whose update revision differs and whose
/// partition opens pods to it (`None`: held, OnDelete, or nothing to roll).
fn unheld(set: &StatefulSet) -> Option<String> {
    let st = crate::core::spec::strategy(set);
    let status = set.status.as_ref()?;
    let (current, update) =
        (status.current_revision.as_deref()?, status.update_revision.as_deref()?);
    let replicas = crate::core::spec::replicas(set);
    if st.on_delete || current == update || st.partition >= replicas {
        return None;
    }
    if record::read(set).under_way().is_some() {
        return None;
    }
    Some(format!("partition {} of {replicas} replicas, update revision {update}", st.partition))
}

/// Whether every pod the set's spec wants runs its (observed) update revision and its status
/// says so: the set has nothing to roll.
/// Whether the set's pods say its part of the plan is done: nothing to roll, or its own plan
/// done on this revision with every pod the partition opened on the update revision (a plan
/// opens at least one pod: a partition at the replicas is never done).
fn done_by_pods(set: &StatefulSet, pods: &[(i32, &Pod)]) -> bool {
    if nothing_to_roll(set, pods) {
        return true;
    }
    let Some(update) = decide::observed_update_revision(set) else { return false };
    let st = crate::core::spec::strategy(set);
    let replicas = crate::core::spec::replicas(set);
    let start = crate::core::spec::start_ordinal(set);
    let plan_done = crate::plan::verdict::current_plan(set)
        .is_some_and(|r| r.phase == record::Phase::Done && r.partition == st.partition);
    let opened = (start + st.partition.max(0)..start + replicas)
        .all(|o| pods.iter().any(|(i, p)| *i == o && crate::core::pod::revision(p) == update));
    !st.on_delete && plan_done && st.partition < replicas && opened
}

fn nothing_to_roll(set: &StatefulSet, pods: &[(i32, &Pod)]) -> bool {
    let Some(update) = decide::observed_update_revision(set) else { return false };
    let status = set.status.as_ref();
    let current = status.and_then(|s| s.current_revision.as_deref()).unwrap_or_default();
    let replicas = crate::core::spec::replicas(set);
    current == update
        && usize::try_from(replicas).is_ok_and(|r| pods.len() == r)
        && pods.iter().all(|(_, p)| crate::core::pod::revision(p) == update)
}
