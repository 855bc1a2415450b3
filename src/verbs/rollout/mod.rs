//! `ststui rollout NAME --steps LIST [--bake DUR] [--check CMD]…`: a plan's runner. It watches
//! the set with the console's own session, decides with `plan::decide` (pure) and writes
//! through the console's write path (a partition with the plan's record in one patch, the
//! resourceVersion decided on as precondition, a lost reply read back), so a lost reply never
//! opens a step twice: the next decision reads the record the set holds.
//!
//! The set's record is the truth: each decision reads it (an `approve` or an `abort` from
//! elsewhere is seen as it lands), and after each write the runner waits until the watch shows
//! what it wrote. A lease on the set (renewed every [`RENEW`], held for [`HOLD`]) keeps a second
//! runner out; a runner killed on this host is taken over at once by the next one there.
//!
//! Owns: the runner's loop, the checks' processes, its output. Exit codes as `wait`'s: 0 done,
//! 1 timeout or refused, 3 halted, 4 unreachable or forbidden.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

mod checks;
mod output;

use checks::{CheckOutcome, spawn_check};
use output::Output;

use super::session::Session;
use super::{Exit, SYNC_TIMEOUT, VerbError};
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::cli::{OutputArg, RolloutArgs};
use crate::cluster::{Target, Writes};
use crate::core::pod::MinReady;
use crate::core::spec;
use crate::plan::decide::{self, Baseline, Facts, Next, Start};
use crate::plan::record::{self, Lease, Phase, Record, stamp};
use crate::plan::{OnFailure, Steps, duration_words};

/// How long a lease holds without renewal.
pub const HOLD: Duration = Duration::from_secs(30);
/// How often the runner renews it.
pub const RENEW: Duration = Duration::from_secs(10);
/// How long a written record is waited for on the watch before the set is read as it is.
const OBSERVE: Duration = Duration::from_secs(10);
/// How long a halt waits for a change that explains it to arrive on another watch.
const GRACE: Duration = Duration::from_secs(2);

/// Runs (or resumes) the plan.
pub fn run(target: Target, args: &RolloutArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let steps = args
        .steps
        .as_deref()
        .map(Steps::parse)
        .transpose()
        .map_err(|e| VerbError::new(Exit::Usage, format!("--steps: {e}")))?;
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let mut s = Session::open(target)?;
    s.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    super::warn_gitops("rollout", s.set());
    let mut r = Runner::new(s, writes, args, limit);
    r.take_lease()?;
    let result = r.drive(steps);
    r.release();
    result
}

/// The runner's state between decisions.
struct Runner<'a> {
    s: Session,
    w: Writes,
    key: ObjRef,
    args: &'a RolloutArgs,
    limit: Option<Instant>,
    host: String,
    /// The lease as last written (the precondition of the next renewal).
    lease: Option<String>,
    renew_at: Instant,
    out: Output,
    /// The set's pods when the bake under way began.
    baseline: Option<Baseline>,
}

impl<'a> Runner<'a> {
    fn new(s: Session, w: Writes, args: &'a RolloutArgs, limit: Option<Instant>) -> Runner<'a> {
        let key = s.key.clone();
        let out = Output::new(args.output == OutputArg::Json);
        let host = hostname();
        Runner {
            s,
            w,
            key,
            args,
            limit,
            host,
            lease: None,
            renew_at: Instant::now(),
            out,
            baseline: None,
        }
    }

    fn set(&self) -> Result<&StatefulSet, VerbError> {
        self.s.set().ok_or_else(|| VerbError::new(Exit::Api, format!("{} is gone", self.key)))
    }

    fn now(&self) -> Timestamp {
        self.s.state.now.unwrap_or_else(Timestamp::now)
    }

    /// Takes the lease, refusing while another live runner holds it.
    fn take_lease(&mut self) -> Result<(), VerbError> {
        let set = self.set()?;
        let raw = set.metadata.annotations.as_ref().and_then(|a| a.get(record::LEASE)).cloned();
        if let Some(held) = record::lease(set)
            && held.holds(self.now())
            && !(held.host == self.host && !alive(held.pid) && held.pid != std::process::id())
        {
            return Err(VerbError::new(
                Exit::Expectation,
                format!(
                    "{}: a plan runner holds it: {}; two runners never drive one plan (wait for \
                     it to end, or stop it: its lease then runs out)",
                    self.key,
                    held.words()
                ),
            ));
        }
        self.lease = raw;
        self.renew()
    }

    /// Writes the lease again (every [`RENEW`]); a conflict means another runner took it.
    fn renew(&mut self) -> Result<(), VerbError> {
        let expires = self.now().checked_add(SignedDuration::try_from(HOLD).unwrap_or_default());
        let lease = Lease {
            holder: self.w.identity().to_string(),
            host: self.host.clone(),
            pid: std::process::id(),
            expires: stamp(expires.unwrap_or_else(|_| self.now())),
        };
        let text = serde_json::to_string(&lease).unwrap_or_default();
        let op = ClusterOp::PlanLease {
            set: self.key.clone(),
            lease: Some(text.clone()),
            seen: self.lease.clone(),
        };
        self.write(op, None, "the plan's lease")?;
        self.lease = Some(text);
        self.renew_at = Instant::now() + RENEW;
        Ok(())
    }

    /// Gives the lease back (best effort: it runs out anyway).
    fn release(&mut self) {
        if self.lease.is_none() {
            return;
        }
        let op =
            ClusterOp::PlanLease { set: self.key.clone(), lease: None, seen: self.lease.clone() };
        if self.write(op, None, "the plan's lease").is_ok() {
            self.lease = None;
        }
    }

    /// One write through the console's write path; its failure as the verb's error.
    fn write(
        &mut self,
        op: ClusterOp,
        basis: Option<&StatefulSet>,
        what: &str,
    ) -> Result<(), VerbError> {
        let kind = op.kind();
        let write = Write { op, basis: basis.cloned().map(Box::new) };
        let by = self.limit.unwrap_or_else(|| Instant::now() + SYNC_TIMEOUT);
        match self.w.write(write, super::left(by)) {
            Ok(crate::cluster::Written::ReadBack(said)) => {
                self.out.event(None, &format!("{what}: {said}"));
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(f) => {
                let mut e = super::write_failure(kind, crate::cluster::OnceError::Failed(f));
                e.message = format!("{what}: {}", e.message);
                Err(e)
            }
        }
    }

    /// The plan to drive: the set's (resumed) or a new one of `steps`.
    fn plan(&mut self, steps: Option<Steps>) -> Result<Option<Next>, VerbError> {
        let set = self.set()?.clone();
        let recorded = match record::plan(&set) {
            Some(Err(why)) => {
                return Err(VerbError::new(
                    Exit::Expectation,
                    format!("{why}: `ststui abort {}` clears it", self.key.name),
                ));
            }
            Some(Ok(r)) => Some(r),
            None => None,
        };
        let update = decide::observed_update_revision(&set).map(str::to_string);
        if let Some(r) = recorded
            .filter(|r| r.phase != Phase::Done && update.as_deref() == Some(r.revision.as_str()))
        {
            if let Some(steps) = &steps
                && steps.to_string() != r.steps
            {
                return Err(VerbError::new(
                    Exit::Expectation,
                    format!(
                        "{}: a plan of steps {} is at {}/{} ({}); rerun with --steps {} to resume it, \
                         or `ststui abort {}` first",
                        self.key,
                        r.steps,
                        r.step,
                        r.of,
                        r.phase.word(),
                        r.steps,
                        self.key.name
                    ),
                ));
            }
            if r.phase == Phase::Halted {
                let why = r.reason.clone().unwrap_or_default();
                self.out.event(
                    Some(&r),
                    &format!("resuming the plan halted at {}/{}: {why}", r.step, r.of),
                );
                let resumed =
                    Record { phase: Phase::Waiting, since: stamp(self.now()), reason: None, ..r };
                return Ok(Some(Next::Record(resumed)));
            }
            self.out.event(Some(&r), &format!("resuming: {}", r.words(self.now())));
            return Ok(None);
        }
        let Some(steps) = steps else {
            return Err(VerbError::new(
                Exit::Usage,
                format!(
                    "{} has no plan to resume: --steps is needed (e.g. --steps 1,50%,100%)",
                    self.key
                ),
            ));
        };
        let start = Start {
            steps,
            bake_seconds: self.args.bake / 1000,
            checks: self.args.checks.clone(),
            on_failure: self.args.on_failure.into(),
            by: self.w.identity().to_string(),
        };
        let pods = self.pods();
        let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
        let facts = self.facts(&set, &pods);
        let first = decide::begin(&start, &facts)
            .map_err(|e| VerbError::new(Exit::Expectation, format!("{}: {e}", self.key)))?;
        self.out.preview(&self.key, &set, &start);
        Ok(Some(first))
    }

    fn pods(&self) -> Vec<(i32, Pod)> {
        self.s.state.mirror.pods_of(&self.key).map(|(o, p)| (o, p.clone())).collect()
    }

    fn facts<'f>(&'f self, set: &'f StatefulSet, pods: &'f [(i32, &'f Pod)]) -> Facts<'f> {
        let seconds = set.spec.min_ready_seconds.unwrap_or(0);
        let min_ready = MinReady::new(seconds, &self.s.state.options.semantics);
        let (now, stuck_after_ms) = (self.now(), self.args.stuck_after);
        Facts { set, pods, now, min_ready, stuck_after_ms, baseline: self.baseline.as_ref() }
    }

    /// The loop: decide on what the set shows, carry it out, observe, again.
    fn drive(&mut self, steps: Option<Steps>) -> Result<Exit, VerbError> {
        let mut next = self.plan(steps)?;
        loop {
            let mut set = self.set()?.clone();
            let Some(Ok(current)) = record::plan(&set) else {
                if let Some(n) = next.take() {
                    self.carry_out(n, &set)?;
                    continue;
                }
                return Err(VerbError::new(
                    Exit::Expectation,
                    format!("{}: the plan's record is gone (aborted?)", self.key),
                ));
            };
            let n = match next.take() {
                Some(n) => n,
                None => match self.decide(&current, &set) {
                    // The watches of pods and of the set race: a pod's change can arrive before
                    // the spec change that explains it. A halt is decided again after a grace,
                    // with what arrived meanwhile — and that set is the basis of what
                    // follows (a halt recorded on the older one would be refused as a
                    // change since the decision).
                    Next::Halt(_) if current.phase != Phase::Halted => {
                        self.observe_for(GRACE)?;
                        set = self.set()?.clone();
                        self.decide(&current, &set)
                    }
                    n => n,
                },
            };
            match n {
                Next::Done => {
                    self.out.event(
                        Some(&current),
                        &format!(
                            "plan done: {} ({}), partition {}",
                            record::steps_words(current.of),
                            current.steps,
                            current.partition
                        ),
                    );
                    return Ok(Exit::Done);
                }
                Next::Halt(r) => return self.halt(r, &set),
                Next::Wait(words) => {
                    self.out.waiting(&current, &words);
                    self.pause()?;
                }
                Next::Check => {
                    let outcome = self.checks(&current, &set)?;
                    let pods = self.pods();
                    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
                    let set = self.set()?.clone();
                    next = Some(match outcome {
                        Ok(()) => decide::advance(&current, &self.facts(&set, &pods)),
                        Err(why) => Next::Halt(decide::halted(&current, self.now(), why)),
                    });
                }
                other => self.carry_out(other, &set)?,
            }
        }
    }

    /// The decision on what the set and its pods show now.
    fn decide(&self, current: &Record, set: &StatefulSet) -> Next {
        let pods = self.pods();
        let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
        decide::decide(current, &self.facts(set, &pods))
    }

    /// Applies what arrives for `d`.
    fn observe_for(&mut self, d: Duration) -> Result<(), VerbError> {
        let until = Instant::now() + d;
        while Instant::now() < until {
            self.s.next(Some(until))?;
        }
        Ok(())
    }

    /// Writes what `n` asks and waits until the watch shows it.
    fn carry_out(&mut self, n: Next, set: &StatefulSet) -> Result<(), VerbError> {
        match n {
            Next::Open { from, to, record } => {
                let opens = decide::opens(set, to, from);
                let text = json(&record);
                let op = ClusterOp::Plan {
                    set: self.key.clone(),
                    partition: Some((from, to)),
                    record: text.clone(),
                };
                self.write(op, Some(set), "opening the step")?;
                self.out.event(
                    Some(&record),
                    &format!("step {}/{}: partition {from} → {to}{opens}", record.step, record.of),
                );
                self.observe(|s| annotation(s) == Some(&text))
            }
            Next::Record(record) => {
                let text = json(&record);
                let op = ClusterOp::Plan {
                    set: self.key.clone(),
                    partition: None,
                    record: text.clone(),
                };
                self.write(op, Some(set), "recording the plan")?;
                if record.phase != Phase::Done {
                    self.out.event(Some(&record), &record.phase_words());
                }
                self.observe(|s| annotation(s) == Some(&text))?;
                self.baseline = (record.phase == Phase::Baking).then(|| {
                    let pods = self.pods();
                    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
                    decide::baseline(&pods)
                });
                Ok(())
            }
            Next::Delete { pod, uid, record } => {
                let pod_ref = ObjRef::new(self.key.namespace.clone(), pod.clone());
                let op =
                    ClusterOp::DeletePod { pod: pod_ref, force: false, uid: Some(uid.clone()) };
                self.write(op, None, "deleting a pod of the step")?;
                self.out.event(Some(&record), &format!("step {}/{}: deleted {pod} (OnDelete: it comes back on the update revision)", record.step, record.of));
                let key = self.key.clone();
                let name = pod.clone();
                self.observe_state(move |st| {
                    let found = st
                        .mirror
                        .pods_of(&key)
                        .find(|(_, p)| p.metadata.name.as_deref() == Some(name.as_str()));
                    found.is_none_or(|(_, p)| {
                        p.metadata.uid.as_deref() != Some(uid.as_str())
                            || p.metadata.deletion_timestamp.is_some()
                    })
                })
            }
            Next::Halt(r) => self.halt(r, set).map(drop),
            Next::Wait(_) | Next::Check | Next::Done => Ok(()),
        }
    }

    /// Waits until the set satisfies `seen` (at most [`OBSERVE`]).
    fn observe(&mut self, seen: impl Fn(&StatefulSet) -> bool) -> Result<(), VerbError> {
        let key = self.key.clone();
        self.observe_state(move |st| st.mirror.set(&key).is_some_and(&seen))
    }

    fn observe_state(
        &mut self,
        seen: impl Fn(&crate::app::AppState) -> bool,
    ) -> Result<(), VerbError> {
        let until = Instant::now() + OBSERVE;
        while !seen(&self.s.state) && Instant::now() < until {
            self.s.next(Some(until.min(Instant::now() + Duration::from_secs(1))))?;
        }
        Ok(())
    }

    /// Between decisions: new events (at most a second), the lease, the timeout.
    fn pause(&mut self) -> Result<(), VerbError> {
        if self.limit.is_some_and(|l| Instant::now() >= l) {
            let set = self.set()?;
            let words = record::plan(set)
                .and_then(Result::ok)
                .map(|r| r.words(self.now()))
                .unwrap_or_default();
            self.out.finish(&format!(
                "timed out: {words}; the set stays where the plan left it (rerun to resume)"
            ));
            return Err(VerbError::new(Exit::Expectation, "the timeout passed".to_string()));
        }
        if Instant::now() >= self.renew_at {
            self.renew()?;
        }
        let wake = Instant::now() + Duration::from_secs(1);
        self.s.next(Some(self.limit.map_or(wake, |l| l.min(wake))))
    }

    /// Records the halt, carries out `--on-failure undo`, says why: exit 3.
    fn halt(&mut self, r: Record, set: &StatefulSet) -> Result<Exit, VerbError> {
        let recorded = record::plan(set).and_then(Result::ok);
        if recorded.as_ref().is_none_or(|c| c.phase != Phase::Halted) {
            let text = json(&r);
            let op =
                ClusterOp::Plan { set: self.key.clone(), partition: None, record: text.clone() };
            self.write(op, Some(set), "recording the halt")?;
            self.observe(|s| annotation(s) == Some(&text))?;
        }
        let why = r.reason.clone().unwrap_or_default();
        self.out.finish(&format!("halted at step {}/{}: {why}", r.step, r.of));
        // A freeze is the operator's hold, not a failure: it is never undone.
        let frozen = crate::steer::holding(set).is_some();
        if r.on_failure() == OnFailure::Undo && !frozen {
            let set = self.set()?.clone();
            let pods = self.pods();
            let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
            super::abort::revert(
                &self.w,
                &self.key,
                &set,
                &r.revision,
                &pods,
                self.limit,
                &mut |t| self.out.event(None, t),
            )?;
        } else {
            let held = match frozen {
                true => "the set is frozen: nothing reverted, nothing further opens".to_string(),
                false => format!("the partition holds at {}: nothing further opens", r.partition),
            };
            self.out.event(None, &held);
        }
        Ok(Exit::Stuck)
    }

    /// Runs the step's checks one after the other, renewing the lease meanwhile.
    fn checks(&mut self, r: &Record, set: &StatefulSet) -> Result<Result<(), String>, VerbError> {
        let start = spec::start_ordinal(set);
        let replicas = spec::replicas(set);
        let before = previous_partition(r, replicas);
        let pods: Vec<String> = (r.partition..before.min(replicas))
            .map(|i| format!("{}-{}", self.key.name, start + i))
            .collect();
        let env = [
            ("STSTUI_NAMESPACE", self.key.namespace.clone()),
            ("STSTUI_SET", self.key.name.clone()),
            ("STSTUI_STEP", r.step.to_string()),
            ("STSTUI_STEPS", r.of.to_string()),
            ("STSTUI_PARTITION", r.partition.to_string()),
            ("STSTUI_PODS", pods.join(" ")),
        ];
        for cmd in &r.checks {
            let started = Instant::now();
            let rx = spawn_check(cmd, &env, Duration::from_millis(self.args.check_timeout));
            let outcome = loop {
                match rx.recv_timeout(Duration::from_secs(1)) {
                    Ok(o) => break o,
                    Err(mpsc::RecvTimeoutError::Timeout) => self.pause()?,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        break CheckOutcome {
                            passed: Err("the check's runner stopped".into()),
                            tail: Vec::new(),
                        };
                    }
                }
            };
            let took =
                duration_words(u64::try_from(started.elapsed().as_millis()).unwrap_or(0).max(1000));
            match outcome.passed {
                Ok(()) => {
                    self.out.event(Some(r), &format!("check `{cmd}` passed ({took})"));
                    self.out.output(&outcome.tail);
                }
                Err(how) => {
                    self.out.output(&outcome.tail);
                    let last = outcome.tail.last().map(|l| format!(": {l}")).unwrap_or_default();
                    return Ok(Err(format!("check `{cmd}` {how}{last}")));
                }
            }
        }
        Ok(Ok(()))
    }
}

/// The partition before step `r.step` (where the step's pods begin being new).
fn previous_partition(r: &Record, replicas: i32) -> i32 {
    let Ok(steps) = r.parsed_steps() else { return replicas };
    let targets = steps.targets(replicas);
    targets[..r.step.saturating_sub(1).min(targets.len())]
        .iter()
        .rev()
        .find_map(|t| match t {
            crate::plan::Target::Update { partition, .. } => Some(*partition),
            crate::plan::Target::Gate => None,
        })
        .unwrap_or(replicas)
}

fn json(r: &Record) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

fn annotation(set: &StatefulSet) -> Option<&String> {
    set.metadata.annotations.as_ref()?.get(record::PLAN)
}

/// This host's name (for the lease: a runner killed here is taken over at once).
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether process `pid` lives on this host (unknown: assumed alive).
fn alive(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.exists() || proc.join(pid.to_string()).exists()
}
