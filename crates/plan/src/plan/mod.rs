//! Rollout plans: health-gated canary steps for a native StatefulSet, run client-side with
//! nothing installed on the cluster. A plan is a list of steps — how many pods run the update
//! revision after each, counted from the highest ordinal down as the partition counts — with a
//! bake time and the operator's checks between steps; it halts (holding the partition) on
//! anything wrong.
//!
//! Owns: the plan's vocabulary ([`Steps`] and their rounding), its record on the set
//! ([`record`]: the plan's state and the runner's lease, in annotations, and the one reader of
//! them), what an invocation asks against what the record says ([`ask`]), the pure decision
//! ([`decide`]: given what the set and its pods show, what the runner does next), the words
//! for each move ([`said`]), and the ONE plan loop ([`engine`]) that `ststui rollout`, the
//! console and the simulator adapt. Must not: do IO, read a clock (time is an input), or use
//! `app`, `ui`, `sim`, `steer`, `cluster`.

pub mod ask;
pub mod decide;
pub mod engine;
pub mod facts;
pub mod freeze;
pub mod gate;
pub mod gated;
pub mod group;
pub mod holding;
pub mod member;
pub mod overclaim;
pub mod record;
pub mod recreate;
pub mod run;
pub mod said;
pub mod start;
pub mod stuck;
pub mod verdict;

use std::fmt;

/// One step of a plan, as typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSpec {
    /// This many pods on the update revision after the step.
    Count(i32),
    /// This percentage of the replicas (rounded as [`Steps::targets`] says).
    Percent(u8),
    /// A manual gate: wait for `ststui approve`.
    Pause,
}

impl fmt::Display for StepSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepSpec::Count(n) => write!(f, "{n}"),
            StepSpec::Percent(p) => write!(f, "{p}%"),
            StepSpec::Pause => write!(f, "pause"),
        }
    }
}

/// A plan's steps (`1,25%,pause,50%,100%`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steps(pub Vec<StepSpec>);

impl fmt::Display for Steps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        write!(f, "{}", words.join(","))
    }
}

/// What a plan step does, resolved against the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Have this many pods (the highest ordinals) on the update revision: the partition is
    /// `replicas - updated`.
    Update { updated: i32, partition: i32 },
    /// Wait for approval.
    Gate,
}

/// Why a plan's steps do not parse (steps are numbered from 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepsError {
    #[error("step {step} ({word:?}): expected a percentage from 1% to 100%")]
    Percent { step: usize, word: String },
    #[error("step {step} ({word:?}): expected a pod count from 1, a percentage like 25%, or pause")]
    Entry { step: usize, word: String },
    #[error("no step opens a pod: expected counts or percentages, e.g. 1,50%,100%")]
    NoPods,
    #[error(
        "step {step} ({amount}) is less than step {before} ({earlier}): a plan only opens more pods"
    )]
    Down { step: usize, amount: StepSpec, before: usize, earlier: StepSpec },
}

/// A duration a console's plan prompt does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a duration: expected e.g. 30s, 2m, 1h or 1m30s")]
pub struct BadDuration(pub String);

impl Steps {
    /// Parses `1,25%,pause,50%,100%`. Each entry is a count from 1 up, a percentage from 1% to
    /// 100%, or `pause`; at least one entry opens pods, and the amounts never go down.
    pub fn parse(text: &str) -> Result<Steps, StepsError> {
        let mut out = Vec::new();
        for (i, raw) in text.split(',').enumerate() {
            let word = raw.trim();
            let number = i + 1;
            let step = if word.eq_ignore_ascii_case("pause") {
                StepSpec::Pause
            } else if let Some(p) = word.strip_suffix('%') {
                match p.trim().parse::<u8>() {
                    Ok(p @ 1..=100) => StepSpec::Percent(p),
                    _ => return Err(StepsError::Percent { step: number, word: word.to_string() }),
                }
            } else {
                match word.parse::<i32>() {
                    Ok(n) if n >= 1 => StepSpec::Count(n),
                    _ => return Err(StepsError::Entry { step: number, word: word.to_string() }),
                }
            };
            out.push(step);
        }
        if !out.iter().any(|s| !matches!(s, StepSpec::Pause)) {
            return Err(StepsError::NoPods);
        }
        let amounts: Vec<(usize, StepSpec)> = out
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, s)| !matches!(s, StepSpec::Pause))
            .collect();
        for w in amounts.windows(2) {
            let (a, b) = (w[0].1, w[1].1);
            let down = match (a, b) {
                (StepSpec::Count(x), StepSpec::Count(y)) => y < x,
                (StepSpec::Percent(x), StepSpec::Percent(y)) => y < x,
                _ => false,
            };
            if down {
                let (step, before) = (w[1].0 + 1, w[0].0 + 1);
                return Err(StepsError::Down { step, amount: b, before, earlier: a });
            }
        }
        Ok(Steps(out))
    }

    /// The steps resolved against `replicas`. Rounding: a percentage rounds up (25% of 3 is 1,
    /// never 0); a step short of 100% (or of a count of all the replicas) never opens every pod
    /// (90% of 4 is 3, not 4); a step that would open nothing beyond the step before opens one
    /// more pod; counts beyond the replicas are the replicas. A last step short of the
    /// replicas leaves the rest held: the plan ends there.
    pub fn targets(&self, replicas: i32) -> Vec<Target> {
        let replicas = replicas.max(0);
        let mut before = 0;
        let mut out = Vec::with_capacity(self.0.len());
        for step in &self.0 {
            let wanted = match *step {
                StepSpec::Pause => {
                    out.push(Target::Gate);
                    continue;
                }
                StepSpec::Count(n) => n.min(replicas),
                StepSpec::Percent(100) => replicas,
                StepSpec::Percent(p) => {
                    let up = (i64::from(replicas) * i64::from(p) + 99) / 100;
                    let up = i32::try_from(up).unwrap_or(replicas).max(1);
                    up.min((replicas - 1).max(1))
                }
            };
            let updated = if wanted <= before { (before + 1).min(replicas) } else { wanted };
            before = updated;
            out.push(Target::Update { updated, partition: replicas - updated });
        }
        out
    }
}

/// How a plan reacts to a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// Leave the partition where the plan put it: nothing further opens.
    #[default]
    Hold,
    /// Revert the template to the previous revision and delete the step's pods stuck on the
    /// broken revision (the forced rollback of kubernetes#67250).
    Undo,
}

impl OnFailure {
    pub fn word(self) -> &'static str {
        match self {
            OnFailure::Hold => "hold",
            OnFailure::Undo => "undo",
        }
    }
}

/// Seconds in `90s`, `2m`, `1h`, `1m30s`, `0s`: what a console's plan prompt takes for bake.
pub fn duration_secs(text: &str) -> Result<u64, BadDuration> {
    let bad = || BadDuration(text.to_string());
    let (mut total, mut digits) = (0u64, String::new());
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return Err(bad()),
        };
        total = total.saturating_add(n.saturating_mul(unit));
        digits.clear();
    }
    if !digits.is_empty() || text.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// `1m12s` for a duration in milliseconds (whole seconds).
/// `t` plus `d`, saturating at the last time there is (a duration from a record or a flag never
/// panics a runner: jiff's `+` does on overflow).
pub fn later(
    t: k8s_openapi::jiff::Timestamp,
    d: k8s_openapi::jiff::SignedDuration,
) -> k8s_openapi::jiff::Timestamp {
    t.checked_add(d).unwrap_or(k8s_openapi::jiff::Timestamp::MAX)
}

pub fn duration_words(ms: u64) -> String {
    let s = ms / 1000;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
