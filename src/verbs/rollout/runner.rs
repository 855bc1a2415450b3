//! The verb's one runner of the plan run (`plan::run`): one set's plan or a group's, carried out
//! beside a cluster — every verdict on a quorum read of every member and its pods, writes through
//! the console's write path, this invocation's checks and gates run here, each move said. What
//! watches the members is the setup's ([`Watch`]: one set's session, or a group's sessions); the
//! runner does not know which.
//!
//! Owns: the turns' IO, the output of what the run says, the exit. Must not: choose the members
//! (the setups in `rollout` and `rollout::group` do).

use std::time::Instant;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::checks::Checks;
use super::output::Output;
use super::{READ, gates, gone, revert, wake, write};
use crate::app::AppState;
use crate::backend::Fresh;
use crate::cluster::Writes;
use crate::plan::engine::{Act, Stop};
use crate::plan::record;
use crate::plan::run::{Member, Run, RunEnd, RunView, Step};
use crate::verbs::session::{Session, Sessions};
use crate::verbs::{Exit, VerbError};

/// What watches the run's members: each member's state (in the run's order) and the wait
/// between turns, a watch that fails meanwhile tolerated (the fresh reads and the lease decide).
pub(super) trait Watch {
    fn state(&self, member: usize) -> &AppState;
    fn pause(&mut self, wake: Instant) -> Result<(), VerbError>;
}

impl Watch for Session {
    fn state(&self, _: usize) -> &AppState {
        &self.state
    }

    fn pause(&mut self, wake: Instant) -> Result<(), VerbError> {
        self.next_lenient(Some(wake))
    }
}

impl Watch for Sessions {
    fn state(&self, member: usize) -> &AppState {
        self.member(member).state
    }

    fn pause(&mut self, wake: Instant) -> Result<(), VerbError> {
        self.next(Some(wake), true)
    }
}

/// The adapter's state.
pub(super) struct Runner<W: Watch> {
    pub run: Run,
    pub watch: W,
    /// The write paths, one per cluster (one but for a fleet), and each member's.
    pub w: Vec<Writes>,
    pub cluster_of: Vec<usize>,
    pub out: Output,
    pub limit: Option<Instant>,
    /// The checks under way.
    pub checks: Checks,
    /// The gates' runner (a gate under way reports there).
    pub gates: gates::Gates,
    /// Every member and its pods as just read from the server, for the next turn.
    pub fresh: Option<Vec<Fresh>>,
}

impl<W: Watch> Runner<W> {
    fn now(&self) -> Timestamp {
        self.watch.state(0).now.unwrap_or_else(Timestamp::now)
    }

    /// The run's turns, carried out until it ends.
    pub fn drive(&mut self) -> Result<Exit, VerbError> {
        let mut timed_out = false;
        let mut interrupted = None;
        crate::procs::graceful();
        loop {
            if !timed_out && self.limit.is_some_and(|l| Instant::now() >= l) {
                timed_out = true;
                self.run.stop("the timeout passed".into());
            }
            if let (None, Some(sig)) = (interrupted, crate::procs::interrupted()) {
                interrupted = Some(sig);
                self.run.stop(format!("stopped by {}", crate::procs::signal_name(sig)));
            }
            let plan = self.run.plan().cloned();
            if let Some(result) = self.checks.news(&mut self.out, plan.as_ref()) {
                self.run.checked(result);
            }
            if let Some(o) = self.gates.outcome() {
                self.out.output("gate-output", &o.tail);
                self.run.gated(o);
            }
            let step = self.turn()?;
            self.say();
            let act = match step {
                Step::End(end) => return Ok(self.finish(end, timed_out, interrupted)),
                Step::Do(act) => act,
            };
            self.act(act)?;
        }
    }

    /// The verdict for JSON lines, a new plan's preview, then what the run said.
    fn say(&mut self) {
        let about = self.run.about().clone();
        let group = self.run.group_name().map(str::to_string);
        if self.out.is_json() && group.is_none() {
            let state = self.watch.state(0);
            let screen = crate::app::view::Screen::of(state);
            let v = crate::app::health::verdict(state, &about, Some(&screen.controller), None);
            self.out.verdict(v.as_ref());
        }
        // A new plan is printed before its first move is said.
        if let Some((set, start)) = self.run.take_began() {
            self.out.preview(&about, &set, &start);
        }
        for (i, said) in self.run.said() {
            match (&said.record, &group) {
                (r, None) => self.out.event(r.as_ref(), &said.text),
                (Some(r), Some(_)) => {
                    self.out.event(Some(r), &format!("{}: {}", self.run.label(i), said.text));
                }
                (None, Some(group)) => {
                    let kind = self.run.kind_word();
                    self.out.event(None, &format!("{kind} {group}: {}", said.text))
                }
            }
        }
    }

    /// One act carried out.
    fn act(&mut self, act: Act) -> Result<(), VerbError> {
        let key = self.run.about().clone();
        match act {
            Act::Write(w) => {
                let w_at = pick(&self.w, &self.cluster_of, self.run.acting());
                let result = write(w_at, &mut self.out, self.limit, w);
                let now = self.now();
                self.run.wrote(now, result);
            }
            Act::Read => self.read(),
            Act::Check { checks, mut env } => {
                let cluster = cluster(&self.cluster_of, self.run.acting());
                if let Some(c) = self.gates.context(cluster).filter(|_| self.w.len() > 1) {
                    env.push(("STSTUI_CONTEXT", c.to_string()));
                }
                self.checks.start(checks, env)
            }
            Act::Gate(run) => {
                let cluster = cluster(&self.cluster_of, self.run.acting());
                self.gates.start(*run, &key.namespace, cluster);
            }
            Act::Revert { basis, revision, .. } => {
                let i = self.run.acting();
                let state = self.watch.state(i);
                let pods: Vec<(i32, Pod)> =
                    state.mirror.pods_of(&key).map(|(o, p)| (o, p.clone())).collect();
                let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
                let result = revert(
                    pick(&self.w, &self.cluster_of, i),
                    &mut self.out,
                    &key,
                    &basis,
                    &revision,
                    &pods,
                    self.limit,
                );
                self.run.reverted(result);
            }
            Act::Wait { until, words } => {
                if !words.is_empty() {
                    let r = self.run.plan().cloned();
                    let words = match (&r, self.run.group_name()) {
                        (Some(_), Some(_)) => {
                            format!("{}: {words}", self.run.label(self.run.acting()))
                        }
                        _ => words,
                    };
                    self.out.waiting(r.as_ref(), &words);
                }
                let busy = self.checks.running() || self.gates.running.is_some();
                let wake = wake(self.now(), until, self.limit, busy);
                self.watch.pause(wake)?;
            }
            Act::End(_) => {}
        }
        Ok(())
    }

    /// One turn on the fresh read when there is one, else on the watches.
    fn turn(&mut self) -> Result<Step, VerbError> {
        let now = self.now();
        let keys = self.run.sets().to_vec();
        let ns = keys[0].namespace.clone();
        let semantics: Vec<_> =
            (0..keys.len()).map(|i| self.watch.state(i).options.semantics).collect();
        if let Some(fresh) = self.fresh.take() {
            let owns: Vec<Vec<(i32, &Pod)>> =
                fresh.iter().zip(&keys).map(|(f, k)| f.own(&k.name)).collect();
            let sets: Vec<Option<&StatefulSet>> = fresh.iter().map(|f| Some(&*f.set)).collect();
            // The budgets as read with the first set, or — not read — as the watch has them.
            let budgets: Vec<_> = match fresh.first().and_then(|f| f.budgets.as_ref()) {
                Some(read) => read.iter().map(|b| &**b).collect(),
                None => self.watch.state(0).mirror.budgets_in(&ns).collect(),
            };
            let seen = Seen::of(&sets, &owns, semantics);
            let view = RunView { members: &seen.members(), now, fresh: true, budgets: &budgets };
            return Ok(self.run.next(&view));
        }
        let states: Vec<&AppState> = (0..keys.len()).map(|i| self.watch.state(i)).collect();
        let sets: Vec<Option<&StatefulSet>> =
            states.iter().zip(&keys).map(|(s, k)| s.mirror.set(k)).collect();
        // One set's plan ends when its set is gone from the watch; a group's run says which.
        if self.run.group_name().is_none() && sets[0].is_none() {
            return Err(gone(&keys[0]));
        }
        let pods: Vec<Vec<(i32, &Pod)>> =
            states.iter().zip(&keys).map(|(s, k)| s.mirror.pods_of(k).collect()).collect();
        let budgets: Vec<_> = states[0].mirror.budgets_in(&ns).collect();
        let seen = Seen::of(&sets, &pods, semantics);
        let view = RunView { members: &seen.members(), now, fresh: false, budgets: &budgets };
        Ok(self.run.next(&view))
    }

    /// A quorum read of every member and its pods (one failure fails it).
    fn read(&mut self) {
        let mut all = Vec::with_capacity(self.run.sets().len());
        for (i, key) in self.run.sets().to_vec().into_iter().enumerate() {
            match pick(&self.w, &self.cluster_of, i).read(&key, READ) {
                Ok(f) => all.push(f),
                Err(f) => {
                    tracing::info!("plan: fresh read of {key} failed: {}", f.message);
                    let now = self.now();
                    self.run.read_failed(now, i, *f);
                    return;
                }
            }
        }
        self.fresh = Some(all);
    }

    /// The run's last words and exit code.
    fn finish(&mut self, end: RunEnd, timed_out: bool, interrupted: Option<i32>) -> Exit {
        match end {
            RunEnd::Done => Exit::Done,
            // The run said why, with what holds.
            RunEnd::Halted { .. } => Exit::Stuck,
            RunEnd::Refused { why, usage } => {
                let what = match self.run.group_name() {
                    Some(group) => format!("{} {group}", self.run.kind_word()),
                    None => self.run.about().to_string(),
                };
                crate::text::err_line(&format!("ststui rollout: {what}: {why}"));
                if usage { Exit::Usage } else { Exit::Expectation }
            }
            RunEnd::Stopped { why, kind } => {
                let why = match (interrupted, timed_out, kind) {
                    (Some(_), _, Stop::Asked) | (None, true, Stop::Asked) => {
                        self.stopped_words(&why, interrupted.is_some())
                    }
                    _ => why,
                };
                self.out.finish(&why);
                match kind {
                    Stop::Unreachable => Exit::Api,
                    // Aborted from elsewhere: it will not go on, as a halt.
                    Stop::Aborted => Exit::Stuck,
                    Stop::Taken | Stop::Asked => Exit::Expectation,
                }
            }
        }
    }

    /// A run stopped by a signal (`interrupted`) or the timeout: where it stays and what
    /// resumes it.
    fn stopped_words(&self, why: &str, interrupted: bool) -> String {
        if self.run.group_name().is_some() {
            return match interrupted {
                true => format!(
                    "{why}: the leases given back, the sets held where the plan left them (the \
                     same command resumes the group)"
                ),
                false => "timed out; the sets stay where the plan left them (rerun to resume)"
                    .to_string(),
            };
        }
        let key = self.run.about();
        let set = self.watch.state(0).mirror.set(key);
        let now = self.now();
        // The record this run last wrote, before the watch's copy of it: the watch may not
        // have caught up with the last write when the signal came.
        let mine = || {
            self.run
                .last_plan()
                .cloned()
                .or_else(|| set.and_then(|s| record::read(s).plan().cloned()))
        };
        let words = mine().map(|r| r.words(now)).unwrap_or_default();
        let resume = set.and_then(|s| {
            let r = mine()?;
            let go = crate::plan::verdict::resume_move(s, &r);
            Some(format!(
                "{}, `ststui abort {}` rolls back",
                go.words(),
                crate::text::escape_controls(&key.name)
            ))
        });
        let resume = resume.unwrap_or_else(|| "rerun to resume".into());
        match interrupted {
            true => format!(
                "{why}: {words}; the plan's lease given back, the set held where the plan left \
                 it: {resume}",
            ),
            false => format!("timed out: {words}; the set stays where the plan left it: {resume}"),
        }
    }
}

/// Member `i`'s write path: its cluster's (`cluster_of` empty: the one cluster's).
fn pick<'w>(w: &'w [Writes], cluster_of: &[usize], i: usize) -> &'w Writes {
    &w[cluster(cluster_of, i).min(w.len() - 1)]
}

/// Member `i`'s cluster (its place in the runner's clusters; `cluster_of` empty: the one).
fn cluster(cluster_of: &[usize], i: usize) -> usize {
    cluster_of.get(i).copied().unwrap_or(0)
}

/// Every member as a turn sees it: its set, pods, freeze and `minReadySeconds`.
struct Seen<'a> {
    sets: &'a [Option<&'a StatefulSet>],
    pods: &'a [Vec<(i32, &'a Pod)>],
    frozen: Vec<Option<String>>,
    semantics: Vec<crate::core::options::Semantics>,
}

impl<'a> Seen<'a> {
    fn of(
        sets: &'a [Option<&'a StatefulSet>],
        pods: &'a [Vec<(i32, &'a Pod)>],
        semantics: Vec<crate::core::options::Semantics>,
    ) -> Seen<'a> {
        let frozen =
            sets.iter().map(|s| s.and_then(crate::steer::holding).map(|h| h.words())).collect();
        Seen { sets, pods, frozen, semantics }
    }

    fn members(&self) -> Vec<Member<'_>> {
        crate::plan::member::members(self.sets, self.pods, &self.frozen, |i| self.semantics[i])
    }
}
