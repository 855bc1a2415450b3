//! `ststui rollout --group a,b,c | --group 'ingester-zone-*' | -l rollout-group=ingester`: the
//! group engine (`plan::group::run`) adapted to a process beside a cluster, as `rollout NAME`
//! adapts the plan engine. Each set of the group is watched (one backend per set, fed through
//! one channel: `Sessions`); every verdict rests on a quorum read of every set of the group and
//! its pods; writes go through the console's write path; the rolling set's checks and gates run
//! here.
//!
//! Owns: choosing the group's sets (listed once, at the start), the adapter's IO, the output.
//! Exit codes as `rollout NAME`'s.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::checks::Checks;
use super::output::Output;
use super::{READ, ask, config, gates, plan_inputs, revert, wake, write};
use crate::backend::{Fresh, ObjRef};
use crate::cli::{OutputArg, RolloutArgs};
use crate::cluster::{Target, Writes};
use crate::core::pod::MinReady;
use crate::plan::engine::{Act, Stop};
use crate::plan::group::part::{self, ROLLOUT_GROUP};
use crate::plan::group::run::{GroupConfig, GroupEnd, GroupEngine, GroupView, Member, Step};
use crate::plan::group::{self, Order, Pick};
use crate::verbs::session::Sessions;
use crate::verbs::{Exit, SYNC_TIMEOUT, VerbError};

/// Runs (or resumes) the group's plan.
pub fn run(target: Target, args: &RolloutArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let (steps, bake_seconds) = plan_inputs(args)?;
    let (ns, listed) = crate::cluster::lookup::sets(
        &target,
        args.selector.as_deref(),
        crate::cluster::lookup::SETS_WITHIN,
    )
    .map_err(|e| VerbError::new(Exit::Api, e))?;
    let (pick, order) = pick(args)?;
    let refs: Vec<&StatefulSet> = listed.iter().collect();
    let names = group::members(&pick, &order, &refs).map_err(|e| {
        let exit = if e.usage() { Exit::Usage } else { Exit::Expectation };
        VerbError::new(exit, format!("the group: {e}"))
    })?;
    let name = group_name(args, &names);
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let mut sessions = Sessions::open(&target, &names)?;
    sessions.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    for s in &sessions.all {
        crate::verbs::warn_gitops("rollout", s.set());
    }
    let mut out = Output::new(args.output == OutputArg::Json);
    if let Some(image) = &args.image {
        image_everywhere(&mut sessions, &writes, image, limit, &mut out)?;
    }
    let host = crate::cluster::hostname();
    let sets: Vec<ObjRef> = names.iter().map(|n| ObjRef::new(ns.clone(), n.clone())).collect();
    let dead = sessions.all[0].set().and_then(|s| {
        crate::plan::record::lease_in(s, part::LEASE)
            .filter(|l| l.host == host && l.pid != std::process::id() && !super::alive(l.pid))
    });
    let cfg = GroupConfig {
        group: name,
        sets: sets.clone(),
        zone_bake_seconds: args.zone_bake / 1000,
        batches: args.batches.as_deref().and_then(|b| crate::value::batches(b).ok()),
        engine: config(sets[0].clone(), host, args, dead),
    };
    let ask = ask(args, steps, bake_seconds, writes.identity());
    let mut r = GroupRunner {
        engine: GroupEngine::new(cfg, ask),
        sessions,
        w: writes,
        out,
        limit,
        checks: Checks::new(Duration::from_millis(args.check_timeout)),
        gates: gates::Gates::new(Target { namespace: Some(ns), ..target }),
        fresh: None,
    };
    r.drive()
}

/// `--image` for a group: every set held first (frozen, unless held already) and its image set,
/// before the first set rolls — nothing rolls out of turn; then the watches show every new
/// template before the plan starts on them.
fn image_everywhere(
    sessions: &mut Sessions,
    w: &Writes,
    image: &str,
    limit: Option<Instant>,
    out: &mut Output,
) -> Result<(), VerbError> {
    let mut set_to = Vec::new();
    for s in &sessions.all {
        set_to.push(super::prepare::hold_and_set(s, w, image, limit, out)?);
    }
    let until = Instant::now() + Duration::from_secs(10);
    let shown =
        |all: &Sessions| all.all.iter().zip(&set_to).all(|(s, i)| super::prepare::shows(s, i));
    while Instant::now() < until && !shown(sessions) {
        sessions.next(Some(until.min(Instant::now() + Duration::from_millis(200))), true)?;
    }
    Ok(())
}

/// How the group's sets are named and ordered.
fn pick(args: &RolloutArgs) -> Result<(Pick, Order), VerbError> {
    if args.selector.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(VerbError::new(
            Exit::Usage,
            "-l/--selector: an empty selector lists every set of the namespace; name the \
             group's label, e.g. -l rollout-group=ingester",
        ));
    }
    let pick = match (&args.group, &args.selector) {
        (Some(g), _) if g.contains(['*', '?']) => Pick::Pattern(g.trim().to_string()),
        (Some(g), _) => {
            let names: Vec<String> =
                g.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            if names.is_empty() {
                return Err(VerbError::new(Exit::Usage, "--group: expected set names, a,b,c"));
            }
            Pick::Names(names)
        }
        (None, _) => Pick::Listed,
    };
    let order = match args.order.as_deref().map(str::trim) {
        None if matches!(pick, Pick::Names(_)) => Order::AsGiven,
        None | Some("alphabetical") => Order::Alphabetical,
        Some(list) => {
            let tiers: Vec<String> = list.split(',').map(|t| t.trim().to_string()).collect();
            if tiers.iter().any(String::is_empty) {
                return Err(VerbError::new(
                    Exit::Usage,
                    format!("--order {list:?}: expected alphabetical or tiers like fe,be"),
                ));
            }
            Order::Tiers(tiers)
        }
    };
    Ok((pick, order))
}

/// The group's name: the `rollout-group` label's value a selector names, else the dash-words
/// its sets' names share (`ingester-zone`), else the first set's name.
fn group_name(args: &RolloutArgs, names: &[String]) -> String {
    if let Some(sel) = &args.selector
        && let Some(v) = sel
            .split(',')
            .filter_map(|t| t.trim().split_once('='))
            .find(|(k, _)| k.trim() == ROLLOUT_GROUP)
            .map(|(_, v)| v.trim().trim_start_matches('=').to_string())
    {
        return v;
    }
    let words: Vec<Vec<&str>> = names.iter().map(|n| n.split('-').collect()).collect();
    let first = &words[0];
    let shared =
        (0..first.len()).take_while(|&i| words.iter().all(|w| w.get(i) == first.get(i))).count();
    match shared {
        0 => names[0].clone(),
        n => first[..n].join("-"),
    }
}

struct GroupRunner {
    engine: GroupEngine,
    sessions: Sessions,
    w: Writes,
    out: Output,
    limit: Option<Instant>,
    checks: Checks,
    gates: gates::Gates,
    /// Every set of the group and its pods as just read from the server, for the next turn.
    fresh: Option<Vec<Fresh>>,
}

impl GroupRunner {
    fn now(&self) -> Timestamp {
        self.sessions.all[0].state.now.unwrap_or_else(Timestamp::now)
    }

    fn drive(&mut self) -> Result<Exit, VerbError> {
        let mut timed_out = false;
        let mut interrupted = None;
        crate::procs::graceful();
        loop {
            if !timed_out && self.limit.is_some_and(|l| Instant::now() >= l) {
                timed_out = true;
                self.engine.stop("the timeout passed".into());
            }
            if let (None, Some(sig)) = (interrupted, crate::procs::interrupted()) {
                interrupted = Some(sig);
                self.engine.stop(format!("stopped by {}", crate::procs::signal_name(sig)));
            }
            let plan = self.engine.inner().and_then(|e| e.plan().cloned());
            if let Some(result) = self.checks.news(&mut self.out, plan.as_ref()) {
                self.engine.checked(result);
            }
            if let Some(o) = self.gates.outcome() {
                self.out.output("gate-output", &o.tail);
                self.engine.gated(o);
            }
            let step = self.turn();
            let active = self.engine.active().cloned();
            if let (Some(key), Some((set, start))) =
                (&active, self.engine.inner().and_then(|e| e.take_began()))
            {
                self.out.preview(key, &set, &start);
            }
            let group = self.engine.group().to_string();
            for (set, said) in self.engine.said() {
                match &said.record {
                    Some(r) => self.out.event(Some(r), &format!("{}: {}", set.name, said.text)),
                    None => self.out.event(None, &format!("group {group}: {}", said.text)),
                }
            }
            let act = match step {
                Step::End(end) => return Ok(self.finish(end, timed_out, interrupted)),
                Step::Do(act) => act,
            };
            let key = active.unwrap_or_else(|| self.engine.sets()[0].clone());
            match act {
                Act::Write(w) => {
                    let result = write(&self.w, &mut self.out, self.limit, w);
                    let now = self.now();
                    self.engine.wrote(now, result);
                }
                Act::Read => self.read(),
                Act::Check { checks, env } => self.checks.start(checks, env),
                Act::Gate(run) => self.gates.start(*run, &key.namespace),
                Act::Revert { basis, revision, .. } => {
                    let i = self.index(&key);
                    let pods: Vec<(i32, Pod)> = self.sessions.all[i]
                        .state
                        .mirror
                        .pods_of(&key)
                        .map(|(o, p)| (o, p.clone()))
                        .collect();
                    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
                    let result =
                        revert(&self.w, &mut self.out, &key, &basis, &revision, &pods, self.limit);
                    self.engine.reverted(result);
                }
                Act::Wait { until, words } => {
                    if !words.is_empty() {
                        let r = self.engine.inner().and_then(|e| e.plan().cloned());
                        let words = match &r {
                            Some(_) => format!("{}: {words}", key.name),
                            None => words,
                        };
                        self.out.waiting(r.as_ref(), &words);
                    }
                    self.pause(until)?;
                }
                Act::End(_) => {}
            }
        }
    }

    fn index(&self, key: &ObjRef) -> usize {
        self.engine.sets().iter().position(|k| k == key).unwrap_or(0)
    }

    fn min_ready(&self, i: usize, set: &StatefulSet) -> MinReady {
        let sem = &self.sessions.all[i].state.options.semantics;
        crate::core::spec::min_ready(set, sem)
    }

    /// One turn on the fresh read when there is one, else on the watches.
    fn turn(&mut self) -> Step {
        let now = self.now();
        if let Some(fresh) = self.fresh.take() {
            let owns: Vec<Vec<(i32, &Pod)>> =
                fresh.iter().zip(self.engine.sets()).map(|(f, k)| f.own(&k.name)).collect();
            let frozen: Vec<Option<String>> =
                fresh.iter().map(|f| crate::steer::holding(&f.set).map(|h| h.words())).collect();
            let members: Vec<Member<'_>> = fresh
                .iter()
                .enumerate()
                .map(|(i, f)| Member {
                    set: Some(&*f.set),
                    pods: &owns[i],
                    min_ready: self.min_ready(i, &f.set),
                    frozen: frozen[i].as_deref(),
                })
                .collect();
            let ns = self.engine.sets()[0].namespace.clone();
            let budgets: Vec<_> = match fresh.first().and_then(|f| f.budgets.as_ref()) {
                Some(read) => read.iter().map(|b| &**b).collect(),
                None => self.sessions.all[0].state.mirror.budgets_in(&ns).collect(),
            };
            let view = GroupView { members: &members, now, fresh: true, budgets: &budgets };
            return self.engine.next(&view);
        }
        let sets: Vec<Option<StatefulSet>> =
            self.sessions.all.iter().map(|s| s.set().cloned()).collect();
        let pods: Vec<Vec<(i32, Pod)>> = self
            .sessions
            .all
            .iter()
            .map(|s| s.state.mirror.pods_of(&s.key).map(|(o, p)| (o, p.clone())).collect())
            .collect();
        let refs: Vec<Vec<(i32, &Pod)>> =
            pods.iter().map(|p| p.iter().map(|(o, p)| (*o, p)).collect()).collect();
        let frozen: Vec<Option<String>> = sets
            .iter()
            .map(|s| s.as_ref().and_then(crate::steer::holding).map(|h| h.words()))
            .collect();
        let members: Vec<Member<'_>> = sets
            .iter()
            .enumerate()
            .map(|(i, s)| Member {
                set: s.as_ref(),
                pods: &refs[i],
                min_ready: s
                    .as_ref()
                    .map_or(MinReady { seconds: 0, at_deadline: false }, |s| self.min_ready(i, s)),
                frozen: frozen[i].as_deref(),
            })
            .collect();
        let ns = self.engine.sets()[0].namespace.clone();
        let budgets: Vec<_> = self.sessions.all[0].state.mirror.budgets_in(&ns).collect();
        let view = GroupView { members: &members, now, fresh: false, budgets: &budgets };
        self.engine.next(&view)
    }

    /// A quorum read of every set of the group and its pods (one failure fails it).
    fn read(&mut self) {
        let mut all = Vec::with_capacity(self.engine.sets().len());
        for key in self.engine.sets().to_vec() {
            match self.w.read(&key, READ) {
                Ok(f) => all.push(f),
                Err(f) => {
                    tracing::info!("group: fresh read of {key} failed: {}", f.message);
                    let now = self.now();
                    self.engine.read_failed(now, *f);
                    return;
                }
            }
        }
        self.fresh = Some(all);
    }

    /// Between turns: what the watches bring until `until` (at most a second).
    fn pause(&mut self, until: Option<Timestamp>) -> Result<(), VerbError> {
        let busy = self.checks.running() || self.gates.running.is_some();
        let wake = wake(self.now(), until, self.limit, busy);
        self.sessions.next(Some(wake), true)
    }

    fn finish(&mut self, end: GroupEnd, timed_out: bool, interrupted: Option<i32>) -> Exit {
        match end {
            GroupEnd::Done => Exit::Done,
            GroupEnd::Halted { .. } => Exit::Stuck,
            GroupEnd::Refused { why, usage } => {
                crate::text::err_line(&format!(
                    "ststui rollout: group {}: {why}",
                    self.engine.group()
                ));
                if usage { Exit::Usage } else { Exit::Expectation }
            }
            GroupEnd::Stopped { why, kind } => {
                let why = match (interrupted, timed_out, kind) {
                    (Some(_), _, Stop::Asked) => format!(
                        "{why}: the leases given back, the sets held where the plan left them \
                         (the same command resumes the group)"
                    ),
                    (None, true, Stop::Asked) => {
                        "timed out; the sets stay where the plan left them (rerun to resume)"
                            .to_string()
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
}
