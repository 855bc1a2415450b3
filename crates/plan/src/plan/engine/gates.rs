//! The engine's gates: a gate the decision asks for is recorded on the set as running (so every
//! console and `explain` say what the plan waits on), handed to the adapter to run
//! ([`Act::Gate`]), and its outcome ([`Engine::gated`]) judged by the contract: a pass is
//! remembered for this run and recorded, a "not yet" asked again after the interval within the
//! budget of tries, a failure halts the plan with the gate's last output. Every run is said on
//! the timeline with its result and duration.
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;
use crate::plan::gate::{
    Gate, GateKind, GatePod, GateState, GateStatus, KEPT, Key, Outcome, Verdict,
};

/// A gate for the adapter to run (this invocation's gate, never the record's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRun {
    pub kind: GateKind,
    pub gate: Gate,
    /// As typed (`cmd:./drain.sh {pod}`).
    pub text: String,
    pub pod: Option<GatePod>,
    /// The environment and the placeholders' values (the adapter adds STSTUI_ZONE).
    pub env: Vec<(&'static str, String)>,
    /// One run is given up (killed) after this long.
    pub timeout_ms: u64,
}

/// A gate under way.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InFlight {
    key: Key,
    kind: GateKind,
    pod: Option<GatePod>,
    /// Pods still to update when it started (`--last-by`'s answer is valid for that many).
    left: usize,
    outcome: Option<Outcome>,
}

/// Defaults when an invocation states none (`ststui rollout`'s flags).
const INTERVAL_S: u64 = 10;
const TIMEOUT_S: u64 = 120;
const TRIES: u32 = 180;

impl Engine {
    /// A gate under way whose outcome is not in: what the run waits on.
    pub(super) fn gate_pending(&self) -> Option<String> {
        let g = self.gate_run.as_ref().filter(|g| g.outcome.is_none())?;
        Some(format!("running the {} gate{}", g.kind.word(), on(g.pod.as_ref())))
    }

    /// Whether a gate's outcome waits to be judged.
    pub(super) fn gate_done(&self) -> bool {
        self.gate_run.as_ref().is_some_and(|g| g.outcome.is_some())
    }

    /// How the gate run went (the adapter's report on [`Act::Gate`]).
    pub fn gated(&mut self, outcome: Outcome) {
        if let Some(g) = self.gate_run.as_mut().filter(|g| g.outcome.is_none()) {
            g.outcome = Some(outcome);
        }
    }

    /// The decision asks for `kind` (for `pod`): recorded as running first, then run — unless
    /// its "not yet" waits out the interval.
    pub(super) fn start_gate(
        &mut self,
        view: &View<'_>,
        set: &StatefulSet,
        current: &Record,
        kind: GateKind,
        key: Key,
        pod: Option<GatePod>,
    ) -> Act {
        let now = view.now;
        if let Some(at) = self.gate_again.get(&key).copied()
            && now < at
        {
            let words = format!(
                "{}: {} gate{}: not yet; asked again at {}",
                said::at(current),
                kind.word(),
                on(pod.as_ref()),
                stamp(at)
            );
            return Act::Wait { until: Some(self.wake(at)), words };
        }
        // Budgets first: a pod's pre-delete gate is the last word before it goes, asked only
        // once nothing else holds it (its answer is stale in seconds for a broker or a database).
        if kind == GateKind::PreDelete
            && let Some(pdb) = super::run::budget_refusing(view)
        {
            // A wait, said as one (the runner's log says it once while it lasts).
            let words = format!(
                "{}: waits for {pdb} before asking the pre-delete gate{}",
                said::at(current),
                on(pod.as_ref())
            );
            let again = now + self.cfg.retry;
            return Act::Wait { until: Some(self.wake(again)), words };
        }
        let Some(text) = self.ask.gates.text(kind).map(str::to_string) else {
            let why =
                format!("the plan asks for a {} gate this command does not state", kind.word());
            return self.act(view, set, current, Next::Halt(decide::halted(current, now, why)));
        };
        let gate = match Gate::parse(&text) {
            Ok(g) => g,
            Err(e) => {
                let why = format!("{} gate: {e}", kind.word());
                return self.act(view, set, current, Next::Halt(decide::halted(current, now, why)));
            }
        };
        let tries = self.gate_tries.get(&key).copied().unwrap_or(0);
        let name = pod.as_ref().map(|p| p.name.clone());
        let recorded = current.gate.as_ref().is_some_and(|g| {
            g.gate == kind.word() && g.pod == name && g.status != GateStatus::Passed
        });
        if !recorded {
            let state = GateState {
                gate: kind.word().into(),
                pod: name,
                status: if tries > 0 { GateStatus::NotYet } else { GateStatus::Running },
                since: stamp(now),
                tries,
                output: Vec::new(),
            };
            let record = Record { gate: Some(state), ..current.clone() };
            let words = format!(
                "{}: {} gate `{}`{}: running",
                said::at(current),
                kind.word(),
                crate::text::escape_controls(&text),
                on(pod.as_ref())
            );
            return self.write_record(now, set, record, words);
        }
        let left = crate::plan::gated::old_left(current, &self.facts(view, set));
        self.gate_run = Some(InFlight { key, kind, pod: pod.clone(), left, outcome: None });
        let env = said::gate_env(&self.cfg.set, current, set, kind, pod.as_ref());
        let timeout_s = match self.ask.gates.timeout_seconds {
            0 => TIMEOUT_S,
            s => s,
        };
        Act::Gate(Box::new(GateRun { kind, gate, text, pod, env, timeout_ms: timeout_s * 1000 }))
    }

    /// A gate's outcome, judged on a fresh read: passed (remembered, recorded), not yet (asked
    /// again after the interval, within the tries), failed (the plan halts).
    pub(super) fn judge_gate(
        &mut self,
        view: &View<'_>,
        set: &StatefulSet,
        current: &Record,
    ) -> Act {
        let now = view.now;
        let Some(InFlight { key, kind, pod, left, outcome: Some(o) }) = self.gate_run.take() else {
            return Act::Wait { until: self.lease.renew_at(), words: String::new() };
        };
        let text = self.ask.gates.text(kind).unwrap_or_default().to_string();
        let took = crate::plan::duration_words(o.took_ms.max(1000));
        let at = said::at(current);
        let tries = self.gate_tries.get(&key).copied().unwrap_or(0) + 1;
        let kept: Vec<String> =
            o.tail.iter().rev().take(KEPT).rev().map(|l| l.chars().take(200).collect()).collect();
        let state = |status| GateState {
            gate: kind.word().into(),
            pod: pod.as_ref().map(|p| p.name.clone()),
            status,
            since: stamp(now),
            tries,
            output: kept.clone(),
        };
        let last = last_words(&o.tail);
        let shown = crate::text::escape_controls(&text).into_owned();
        let what = format!("{} gate `{shown}`{}", kind.word(), on(pod.as_ref()));
        match o.verdict {
            Verdict::Go => {
                if kind == GateKind::LastBy {
                    match leader(&o.tail) {
                        Some(name) => self.gating.leader = Some((name, left)),
                        None => {
                            let why = format!(
                                "{what} passed but printed no pod name (its first line is the \
                                 pod to roll last){last}"
                            );
                            return self.halt_on(
                                view,
                                set,
                                current,
                                state(GateStatus::Failed),
                                why,
                            );
                        }
                    }
                }
                self.gating.passed.insert(key.clone(), now);
                self.gating.progress = Some(now);
                self.gate_tries.remove(&key);
                self.gate_again.remove(&key);
                let record = Record { gate: Some(state(GateStatus::Passed)), ..current.clone() };
                let recheck = self.ask.gates.recheck_seconds;
                let extra = match (&self.gating.leader, kind, &key) {
                    (Some((name, _)), GateKind::LastBy, _) => {
                        format!("; {} rolls last", crate::text::escape_controls(name))
                    }
                    // The recheck's wait is on the timeline from its start.
                    (_, GateKind::BeforeStep, Key::Step(_, 0)) if recheck > 0 => format!(
                        "; asked again in {} (--recheck)",
                        crate::plan::duration_words(recheck.saturating_mul(1000))
                    ),
                    (_, GateKind::BeforeStep, Key::Step(_, 1)) => " (the recheck)".to_string(),
                    _ => String::new(),
                };
                let words = format!("{at}: {what}: passed ({}, {took}){extra}", o.how);
                self.write_record(now, set, record, words)
            }
            Verdict::NotYet => {
                let max = match self.ask.gates.tries {
                    0 => TRIES,
                    n => n,
                };
                if tries >= max {
                    let why =
                        format!("{what} still not ready after {tries} tries ({}){last}", o.how);
                    return self.halt_on(view, set, current, state(GateStatus::Failed), why);
                }
                let interval = match self.ask.gates.interval_seconds {
                    0 => INTERVAL_S,
                    s => s,
                };
                let again = crate::plan::later(
                    now,
                    SignedDuration::from_secs(i64::try_from(interval).unwrap_or(i64::MAX)),
                );
                self.gate_tries.insert(key.clone(), tries);
                self.gate_again.insert(key, again);
                let record = Record { gate: Some(state(GateStatus::NotYet)), ..current.clone() };
                let words = format!(
                    "{at}: {what}: not yet ({}, {took}){last}; asked again in {} (try {tries} of {max})",
                    o.how,
                    crate::plan::duration_words(interval * 1000)
                );
                self.write_record(now, set, record, words)
            }
            Verdict::Fail => {
                let why = format!("{what} failed ({}){last}", o.how);
                self.halt_on(view, set, current, state(GateStatus::Failed), why)
            }
        }
    }

    /// The plan halts on a gate: `gate` (failed) recorded with the halt's reason.
    fn halt_on(
        &mut self,
        view: &View<'_>,
        set: &StatefulSet,
        current: &Record,
        gate: GateState,
        why: String,
    ) -> Act {
        let halted = Record { gate: Some(gate), ..current.clone() };
        let next = Next::Halt(decide::halted(&halted, view.now, why));
        self.act(view, set, current, next)
    }

    /// Writes `record` (a gate's state), saying `words` once it landed.
    fn write_record(
        &mut self,
        now: Timestamp,
        set: &StatefulSet,
        record: Record,
        words: String,
    ) -> Act {
        let said = Said { record: Some(record.clone()), text: words };
        self.send(now, Sending::Record(Box::new(record.clone())), Some(said));
        let op =
            ClusterOp::Plan { set: self.cfg.set.clone(), partition: None, record: json(&record) };
        Act::Write(Write::on(op, Some(Box::new(set.clone()))))
    }
}

/// ` on web-3` for a pod's gate.
fn on(pod: Option<&GatePod>) -> String {
    pod.map(|p| format!(" on {}", p.name)).unwrap_or_default()
}

/// `--last-by`'s answer: its first non-empty line, when it is a pod name (a DNS label).
fn leader(tail: &[String]) -> Option<String> {
    let line = tail.iter().map(|l| l.trim()).find(|l| !l.is_empty())?;
    let ok = !line.is_empty()
        && line.len() <= 253
        && line
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'));
    ok.then(|| line.to_string())
}

/// `: LINE` for the last line of a gate's output that says something (escaped, at most 200
/// characters), or nothing.
fn last_words(tail: &[String]) -> String {
    tail.iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| {
            format!(": {}", crate::text::escape_controls(&l.chars().take(200).collect::<String>()))
        })
        .unwrap_or_default()
}
