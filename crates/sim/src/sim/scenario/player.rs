//! The [`Player`]: executes a parsed [`Script`] against a [`Sim`], one command at a time.
//!
//! Two ways to drive it:
//! - headless: [`Player::run`] plays to the end on virtual time (`wait` advances the clock,
//!   `settle` advances until nothing is pending or its bound) and hands every event to a sink;
//! - real time: the interactive driver attaches it as a [`driver::Script`] and calls
//!   [`Player::poll`] whenever the virtual time it asked for has come.
//!
//! Every command line emits a `command` event; `expect` emits an `expect` event; an operation
//! the simulated API refuses emits an `error` event and the script goes on (as `kubectl` would
//! print the error and the next line would run). Owns: command semantics. Must not touch: the
//! store directly (everything goes through the `Sim` facade), stdout.

use std::collections::BTreeMap;

use super::build::{build_set, evaluate};
use super::{Command, Line, Script, ScriptError};
use crate::backend::{EventKind, Fault, ObjRef};
use crate::sim::manifest::{self, Manifest};
use crate::sim::{Cascade as SimCascade, KubeletConfig, Sim, SimEvent, driver};

/// A failed `expect`: the script line and what differed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub line: usize,
    pub text: String,
    pub detail: String,
}

/// How a finished (or partly played) script went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// `expect` lines evaluated.
    pub expects: usize,
    /// Those that did not hold, in order.
    pub failures: Vec<Failure>,
    /// `error` events the script caused (refused operations).
    pub errors: usize,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What the player is doing between polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// Ready to run the next line.
    No,
    /// A `wait` ends at this virtual time.
    Until(u64),
    /// A `settle` gives up at this virtual time.
    Settle(u64),
}

/// Plays one script.
#[derive(Debug, Clone)]
pub struct Player {
    script: Script,
    /// Manifests of `apply` lines, read when the player was built (by line number).
    manifests: BTreeMap<usize, Manifest>,
    warnings: Vec<String>,
    next: usize,
    waiting: Waiting,
    outcome: Outcome,
}

impl Player {
    /// Prepares `script`, reading every manifest its `apply` lines name, so that a bad manifest
    /// is reported (with the script line) before anything runs.
    pub fn new(script: Script) -> Result<Self, ScriptError> {
        let mut manifests = BTreeMap::new();
        let mut warnings = Vec::new();
        for line in &script.lines {
            if let Command::Apply(path) = &line.command {
                let m = manifest::load(path).map_err(|e| ScriptError {
                    more: Vec::new(),
                    file: script.path.display().to_string(),
                    line: line.number,
                    message: format!("apply: {e}"),
                })?;
                warnings.extend(m.warnings.iter().cloned());
                manifests.insert(line.number, m);
            }
        }
        Ok(Player {
            script,
            manifests,
            warnings,
            next: 0,
            waiting: Waiting::No,
            outcome: Outcome::default(),
        })
    }

    /// Warnings from reading manifests (skipped documents), for stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn script(&self) -> &Script {
        &self.script
    }

    /// The result so far.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Whether every line has run.
    pub fn finished(&self) -> bool {
        self.next >= self.script.lines.len() && self.waiting == Waiting::No
    }

    /// Headless: plays every line on virtual time, passing each event to `sink` as it happens.
    pub fn run(&mut self, sim: &mut Sim, sink: &mut dyn FnMut(&SimEvent)) -> Outcome {
        for ev in sim.drain_events() {
            sink(&ev);
        }
        while let Some(line) = self.script.lines.get(self.next).cloned() {
            self.next += 1;
            self.begin(sim, &line);
            match self.waiting {
                Waiting::No => {}
                Waiting::Until(t) => sim.advance_to_streaming(t, sink),
                Waiting::Settle(deadline) => {
                    sim.settle_streaming(deadline.saturating_sub(sim.now_ms()), sink);
                }
            }
            self.waiting = Waiting::No;
            for ev in sim.drain_events() {
                sink(&ev);
            }
        }
        self.outcome.clone()
    }

    /// Real time: runs every line that is due at `sim.now_ms()`. Returns the virtual time to be
    /// polled at next, or `None` when the script has finished.
    pub fn poll(&mut self, sim: &mut Sim) -> Option<u64> {
        loop {
            let now = sim.now_ms();
            match self.waiting {
                Waiting::Until(t) if now < t => return Some(t),
                Waiting::Settle(deadline) if now < deadline && sim.is_pending() => {
                    let next = sim.next_due().unwrap_or(deadline);
                    return Some(next.clamp(now, deadline));
                }
                _ => self.waiting = Waiting::No,
            }
            let line = self.script.lines.get(self.next).cloned()?;
            self.next += 1;
            self.begin(sim, &line);
        }
    }

    /// Emits the `command` event and performs the line (a `wait` / `settle` only records what
    /// to wait for).
    fn begin(&mut self, sim: &mut Sim, line: &Line) {
        sim.emit(EventKind::Command { line: line.number, text: line.text.clone() });
        let now = sim.now_ms();
        match &line.command {
            Command::Wait(ms) => self.waiting = Waiting::Until(now.saturating_add(*ms)),
            Command::Settle { max_ms } => {
                self.waiting = Waiting::Settle(now.saturating_add(*max_ms));
            }
            Command::Expect { set, checks } => {
                let (ok, detail) = evaluate(sim, set, checks);
                self.outcome.expects += 1;
                if !ok {
                    self.outcome.failures.push(Failure {
                        line: line.number,
                        text: line.text.clone(),
                        detail: detail.clone(),
                    });
                }
                sim.emit(EventKind::Expect { line: line.number, ok, detail });
            }
            other => {
                if let Err(message) = self.perform(sim, line.number, other) {
                    self.outcome.errors += 1;
                    sim.emit(EventKind::Error { line: Some(line.number), message });
                }
            }
        }
    }

    /// Performs an operation; `Err` carries the message of the `error` event.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per scenario command: what each does to the simulator, side by side"
    )]
    fn perform(&mut self, sim: &mut Sim, number: usize, command: &Command) -> Result<(), String> {
        if let Some(op) = command.cluster_op() {
            return sim.apply_op(op.into()).map_err(|e| e.to_string());
        }
        let fault = |sim: &mut Sim, f: Fault| sim.apply_op(f.into()).map_err(|e| e.to_string());
        match command {
            Command::Create(args) => {
                sim.create_set(build_set(args)).map(drop).map_err(|e| e.to_string())
            }
            Command::Apply(path) => {
                let Some(m) = self.manifests.get(&number) else {
                    return Err(format!("apply: {} was not read", path.display()));
                };
                let mut errors = Vec::new();
                for (place, set) in m.located() {
                    if let Err(e) = sim.apply_set(set.clone()) {
                        errors.push(format!("{place}: {e}"));
                    }
                }
                if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
            }
            Command::Delete { set, cascade } => {
                let cascade = match cascade {
                    super::Cascade::Background => SimCascade::Background,
                    super::Cascade::Orphan => SimCascade::Orphan,
                };
                sim.delete_set(&set.as_ref(), cascade).map_err(|e| e.to_string())
            }
            Command::Budget(b) => {
                let set = ObjRef::new(b.name.namespace.clone(), b.set.clone());
                let Some(selector) = sim.set(&set).map(|s| s.spec.selector.clone()) else {
                    return Err(format!(
                        "pdb {}: statefulset {set} not found: create the set first, or name it \
                         with set=SET",
                        b.name.name
                    ));
                };
                let pdb = super::build::build_budget(b, selector);
                sim.apply_budget(pdb).map_err(|e| e.to_string())
            }
            Command::DeleteBudget { name } => {
                sim.delete_budget(&name.as_ref()).map_err(|e| e.to_string())
            }
            Command::Fail { pod } => fault(sim, Fault::FailPod { pod: pod.as_ref() }),
            Command::SetReady { pod, ready } => {
                fault(sim, Fault::SetPodReady { pod: pod.as_ref(), ready: *ready })
            }
            Command::Api(fault) => {
                sim.api_fault(*fault);
                Ok(())
            }
            Command::BrokenImage { image, broken } => {
                fault(sim, Fault::BrokenImage { image: image.clone(), broken: *broken })
            }
            Command::Storage { full } => fault(sim, Fault::Storage { full: *full }),
            Command::Quota { namespace, pods } => {
                fault(sim, Fault::Quota { namespace: namespace.clone(), pods: *pods })
            }
            Command::Gc { delay_ms } => {
                sim.set_gc_delay(*delay_ms);
                Ok(())
            }
            Command::Kubelet(k) => {
                let mut config: KubeletConfig = sim.kubelet_config().clone();
                k.apply_to(&mut config);
                sim.set_kubelet(config);
                Ok(())
            }
            Command::Pause => {
                sim.pause();
                Ok(())
            }
            Command::Resume => {
                sim.resume();
                Ok(())
            }
            Command::Step(n) => sim.step(*n).map(drop).map_err(|e| e.to_string()),
            Command::Rollout(r) => {
                let plan = crate::sim::planner::Rollout {
                    set: r.set.as_ref(),
                    steps: r.steps.clone(),
                    bake_seconds: r.bake_seconds,
                    stuck_after_ms: r.stuck_after_ms,
                    on_failure: r.on_failure,
                    gates: r.gates.clone(),
                    replace_stuck: r.replace_stuck,
                    image: r.image.clone(),
                    line: number,
                };
                if r.group || r.clusters.is_some() {
                    let g = crate::sim::planner::GroupRollout {
                        group: r.set.as_ref(),
                        plan,
                        zone_bake_seconds: r.zone_bake_seconds,
                        batches: r.batches.clone(),
                        tiers: r.tiers.clone(),
                        labelled: r.group,
                        clusters: r.clusters.clone(),
                        cluster_bake_seconds: r.cluster_bake_seconds,
                    };
                    return sim.start_group(g).map_err(|e| e.to_string());
                }
                sim.start_rollout(plan).map_err(|e| e.to_string())
            }
            Command::Gate(g) => {
                sim.gate_fault(&g.name.as_ref(), g);
                Ok(())
            }
            Command::Approve { set } => sim.approve_plan(&set.as_ref()).map_err(|e| e.to_string()),
            Command::Abort { set } => sim.abort(&set.as_ref()),
            // The steering lines went through `cluster_op` above.
            _ => Ok(()),
        }
    }
}

impl driver::Script for Player {
    fn poll(&mut self, sim: &mut Sim) -> Option<u64> {
        Player::poll(self, sim)
    }

    /// `script finished: 9 expectations held` or `script finished: 1 of 9 expectations
    /// failed (first: line 12, ...)`.
    fn summary(&self) -> String {
        let o = &self.outcome;
        match o.failures.first() {
            None if o.expects == 0 => "script finished".into(),
            None => format!("script finished: {} expectation(s) held", o.expects),
            Some(f) => format!(
                "script finished: {} of {} expectation(s) failed (first: line {}: {})",
                o.failures.len(),
                o.expects,
                f.line,
                f.detail
            ),
        }
    }
}
