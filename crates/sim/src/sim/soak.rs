//! `ststui sim --soak N --seed S`: N randomized scenarios, each generated from a seed as script
//! text (so a failing one can be saved and replayed as a scenario file) and played by the same
//! [`Player`] as any script, with the controller's invariants checked as it runs:
//!
//! - after every sync, `core::invariants::check_plan` on the sync's input and output (one pod per
//!   ordinal, OrderedReady progress, scale-down order, partition respected, claim ownerRefs as
//!   the retention policy says, status counts consistent with the pods);
//! - after every watch event, no claim of a Retain/Retain set disappears;
//! - at the end, once the faults have stopped, the set has converged (the generated script's last
//!   `expect`: every replica ready, available and updated, the rollout complete, nothing
//!   blocked, exactly the expected pods).
//!
//! Run `i` uses seed `S + i`, so `--soak 1 --seed S+i` replays it alone.
//!
//! Owns: script generation and the checking harness. Must not touch: simulation semantics.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io::Write;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use super::scenario::{self, Player};
use super::{ChangeKind, Reconciler, Sim, SimConfig, SimEvent};
use crate::backend::Object;
use crate::core::{Now, Observed, Options, Plan, invariants, labels, spec};

mod generate;
pub mod spacing;

pub use generate::{Profile, script, script_for, script_with};

/// The differential check's script of run `seed`: the cluster profile, spaced
/// ([`spacing::space`]) with `options`' controller semantics so that a cluster's latencies
/// cannot reorder a line and an event.
pub fn cluster_script(seed: u64, options: Options) -> String {
    spacing::space(&script_for(seed, Profile::Cluster), options)
}

/// One broken property, where and when it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Virtual milliseconds.
    pub t_ms: u64,
    pub message: String,
}

/// One soak run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub seed: u64,
    pub script: String,
    /// Events the simulation reported (watch changes and timeline lines).
    pub events: u64,
    pub violations: Vec<Violation>,
    /// Upstream's own behaviour the run showed (the nil-rollingUpdate livelock, and the
    /// non-convergence it causes): told apart from violations, which are the simulator's.
    pub upstream: Vec<Violation>,
}

/// The result of a soak.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    pub runs: u64,
    pub events: u64,
    pub violations: u64,
    /// The first run with a violation.
    pub first_failure: Option<Run>,
    /// Seeds of the runs with violations (at most [`MAX_LISTED`]).
    pub failing_seeds: Vec<u64>,
    /// Runs that showed upstream's own behaviour, and their seeds (at most [`MAX_LISTED`]).
    pub upstream_runs: u64,
    pub upstream_seeds: Vec<u64>,
}

/// How many failing seeds a report lists.
pub const MAX_LISTED: usize = 20;

impl Report {
    /// `N runs, M events, K violations`.
    pub fn summary(&self) -> String {
        let mut s =
            format!("{} runs, {} events, {} violations", self.runs, self.events, self.violations);
        if self.upstream_runs > 0 {
            s.push_str(&format!(
                "; {} runs showed upstream's own nil-rollingUpdate livelock (not a violation: \
                 kube-controller-manager loops the same way), seeds {}",
                self.upstream_runs,
                self.upstream_seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
            ));
        }
        s
    }
}

thread_local! {
    /// Violations found by [`checked_reconcile`] on this thread (the reconciler is a plain
    /// `fn`, so the checks report through here; each run drains it).
    static FOUND: RefCell<Vec<(u64, String)>> = const { RefCell::new(Vec::new()) };
    /// The reconciler under test (`core::reconcile` unless a test substitutes one).
    static INNER: Cell<Reconciler> = Cell::new(crate::core::reconcile);
}

/// The reconciler under test, followed by the invariant checks on its input and output.
fn checked_reconcile(observed: &Observed<'_>, options: &Options, now: Now) -> Plan {
    let plan = INNER.with(Cell::get)(observed, options, now);
    let found = invariants::check_plan(observed, &plan, now, &options.semantics);
    if !found.is_empty() {
        let set = observed.set.metadata.name.clone().unwrap_or_default();
        let t_ms = u64::try_from(now.as_millisecond().saturating_sub(super::clock::EPOCH_UNIX_MS))
            .unwrap_or(0);
        FOUND.with(|f| {
            f.borrow_mut().extend(found.into_iter().map(|v| (t_ms, format!("{set}: {v}"))));
        });
    }
    plan
}

/// Watches the event stream for claims lost under Retain/Retain: a mirror of the sets (as last
/// seen, deleted ones included, since their claims must stay too) and the latest virtual time.
#[derive(Default)]
struct ClaimWatch {
    sets: BTreeMap<(String, String), SetClaims>,
    t_ms: u64,
}

/// What the claim check needs of a set: its name, claim templates and whether its retention
/// policy is Retain/Retain (kept instead of a copy of the whole set at every status write).
struct SetClaims {
    name: String,
    templates: Vec<String>,
    retain_retain: bool,
}

impl SetClaims {
    fn of(set: &k8s_openapi::api::apps::v1::StatefulSet) -> SetClaims {
        SetClaims {
            name: spec::name(set).to_string(),
            templates: spec::claim_templates(set)
                .iter()
                .filter_map(|t| t.metadata.name.clone())
                .collect(),
            retain_retain: spec::retention(set).is_retain_retain(),
        }
    }

    /// Whether `claim` (in the set's namespace) is one of this set's per-ordinal claims.
    fn owns(&self, claim: &PersistentVolumeClaim) -> bool {
        let claim_name = claim.metadata.name.as_deref().unwrap_or_default();
        self.templates.iter().any(|t| labels::claim_pod(claim_name, t, &self.name).is_some())
    }
}

impl ClaimWatch {
    /// Called for every event, in order.
    fn observe(&mut self, ev: &SimEvent) -> Option<Violation> {
        match ev {
            SimEvent::Timeline(t) => self.t_ms = t.t_ms,
            SimEvent::Watch { object: Object::Set(set), .. } => {
                let key = (
                    set.metadata.namespace.clone().unwrap_or_default(),
                    set.metadata.name.clone().unwrap_or_default(),
                );
                self.sets.insert(key, SetClaims::of(set));
            }
            SimEvent::Watch { kind: ChangeKind::Deleted, object: Object::Claim(claim) } => {
                let ns = claim.metadata.namespace.as_deref().unwrap_or_default();
                let set = self.sets.iter().find(|((n, _), s)| n == ns && s.owns(claim))?.1;
                if set.retain_retain && !invariants::collectable(claim) {
                    let name = claim_key(claim).1;
                    return Some(Violation {
                        t_ms: self.t_ms,
                        message: format!(
                            "claim {name} was deleted although its set's retention policy is \
                             Retain/Retain; expected it to be kept"
                        ),
                    });
                }
            }
            _ => {}
        }
        None
    }
}

fn claim_key(c: &PersistentVolumeClaim) -> (String, String) {
    (c.metadata.namespace.clone().unwrap_or_default(), c.metadata.name.clone().unwrap_or_default())
}

/// Plays one generated script with the checks on.
pub fn run_one(seed: u64, options: Options) -> Run {
    let text = script_with(seed, options);
    let mut run =
        Run { seed, script: text.clone(), events: 0, violations: Vec::new(), upstream: Vec::new() };
    FOUND.with(|f| f.borrow_mut().clear());
    let parsed = scenario::parse(&scenario::parse::inline_path(), &text).and_then(Player::new);
    let mut player = match parsed {
        Ok(p) => p,
        Err(e) => {
            run.violations
                .push(Violation { t_ms: 0, message: format!("generated a bad script: {e}") });
            return run;
        }
    };
    let config = SimConfig { seed, options, ..Default::default() };
    let mut sim = Sim::new(config).with_reconciler(checked_reconcile);
    let mut claims = ClaimWatch::default();
    let mut events = 0u64;
    let mut lost = Vec::new();
    let outcome = player.run(&mut sim, &mut |ev| {
        events += 1;
        lost.extend(claims.observe(ev));
    });
    run.events = events;
    run.violations.extend(
        FOUND
            .with(|f| std::mem::take(&mut *f.borrow_mut()))
            .into_iter()
            .map(|(t_ms, message)| Violation { t_ms, message }),
    );
    run.violations.extend(lost);
    // The livelock guard: upstream's own loop is told apart; anything else is a violation.
    let mut upstream_loop = false;
    for l in sim.livelocks() {
        let v = Violation { t_ms: l.t_ms, message: l.message.clone() };
        if l.upstream {
            upstream_loop = true;
            run.upstream.push(v);
        } else {
            run.violations.push(v);
        }
    }
    for f in outcome.failures {
        let v = Violation {
            t_ms: sim.now_ms(),
            message: format!(
                "did not converge once faults stopped (line {}): {}",
                f.line, f.detail
            ),
        };
        // A set upstream keeps looping cannot converge: that is upstream's too.
        if upstream_loop { run.upstream.push(v) } else { run.violations.push(v) }
    }
    run
}

/// Runs `runs` scenarios with seeds `seed`, `seed + 1`, … against `core::reconcile`.
pub fn soak(runs: u64, seed: u64, options: Options) -> Report {
    soak_with(runs, seed, options, crate::core::reconcile)
}

/// [`soak`] against another reconciler (tests use a deliberately wrong one to show the checks
/// catch it).
pub fn soak_with(runs: u64, seed: u64, options: Options, reconcile: Reconciler) -> Report {
    INNER.with(|r| r.set(reconcile));
    let report = soak_runs(runs, seed, options);
    INNER.with(|r| r.set(crate::core::reconcile));
    report
}

fn soak_runs(runs: u64, seed: u64, options: Options) -> Report {
    let mut report = Report { runs, ..Report::default() };
    for i in 0..runs {
        let run = run_one(seed.wrapping_add(i), options);
        report.events += run.events;
        report.violations += run.violations.len() as u64;
        if !run.upstream.is_empty() {
            report.upstream_runs += 1;
            if report.upstream_seeds.len() < MAX_LISTED {
                report.upstream_seeds.push(run.seed);
            }
        }
        if !run.violations.is_empty() {
            if report.failing_seeds.len() < MAX_LISTED {
                report.failing_seeds.push(run.seed);
            }
            if report.first_failure.is_none() {
                report.first_failure = Some(run);
            }
        }
    }
    report
}

/// `ststui sim --soak N --seed S`: prints the summary; on violations, the failing seed, what
/// broke and the script, and returns 1.
pub fn run(runs: u64, seed: u64, options: Options) -> i32 {
    let report = soak(runs, seed, options);
    let stdout = std::io::stdout();
    print_report(&report, &mut stdout.lock())
}

/// Writes the summary (and, on violations, the first failing run) to `out`; returns the exit
/// code: 0 without violations, 1 with.
pub fn print_report(report: &Report, out: &mut dyn Write) -> i32 {
    let _ = writeln!(out, "{}", report.summary());
    let Some(run) = &report.first_failure else {
        return 0;
    };
    let _ = writeln!(
        out,
        "first failing run: seed {} (replay: ststui sim --soak 1 --seed {})",
        run.seed, run.seed
    );
    for v in &run.violations {
        let _ = writeln!(out, "  at {}: {}", super::timeline::seconds(v.t_ms), v.message);
    }
    let seeds: Vec<String> = report.failing_seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(out, "failing seeds: {}", seeds.join(" "));
    let _ = writeln!(
        out,
        "# --- script of seed {} (save as a .scenario file to replay it) ---",
        run.seed
    );
    let _ = write!(out, "{}", run.script);
    1
}
