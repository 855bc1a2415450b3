//! What one invocation asks of a plan, against what the set's record says.
//!
//! The record on the set is shared, writable state: anyone who may patch the StatefulSet may
//! write it. It says what happened (the step, the phase, since when, who, why halted); it never
//! decides what this process executes or how long it waits. So the checks and gates a runner
//! runs, its bake and its failure policy come only from this invocation ([`Ask`]); a resume whose record
//! differs from them says so and refuses unless the operator passes `--force` (or `--continue`
//! past a halt, which states them anew), and the record is then rewritten with this
//! invocation's. A record asking for a shorter bake can therefore never shorten the one asked
//! for, and a command stored on the set is never run.
//!
//! Owns: [`resolve`] (new plan, resume, continue or refusal) and the differences in words.
//! Pure.

use super::gate::Gates;
use super::record::{Phase, Reading, Record};
use super::{OnFailure, Steps, duration_words};

/// What this invocation asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// `--steps`: needed for a new plan and for a resume (it states the recorded ones again:
    /// steps are never taken from the set).
    pub steps: Option<Steps>,
    pub bake_seconds: u64,
    /// The checks to run: this invocation's, never the record's.
    pub checks: Vec<String>,
    pub on_failure: OnFailure,
    /// Go on although the record differs from this invocation (this invocation's win and are
    /// recorded), or start a plan over an invalid record.
    pub force: bool,
    /// Go on past a halt (at the halted step, from waiting), with this invocation's bake, checks
    /// and failure policy.
    pub continue_halted: bool,
    /// Who starts a new plan (the cluster identity; empty: the write path fills it in).
    pub by: String,
    /// The gates to run and the ordering: this invocation's, never the record's.
    pub gates: Gates,
    /// `--replace-stuck`: a step's pods stuck broken on an older revision are replaced first,
    /// at no cost in availability (`core::stuck`). This invocation's, never the record's.
    pub replace_stuck: bool,
    /// `--max-restarts N`: a pod of the step whose containers restarted N times halts the plan
    /// at once (a crash-looping canary fails fast, not after `--stuck-after`). This
    /// invocation's, never the record's.
    pub max_restarts: Option<u32>,
    /// `rollout --image` on a Recreate set: the plan sets it itself when its step opens, after
    /// the step's gates (`plan::recreate`). `None` elsewhere (the adapter set it before the
    /// plan, under a freeze).
    pub image: Option<String>,
}

/// How a run begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// A new plan of the asked steps, from where the set is.
    New(Steps),
    /// The recorded plan goes on: as recorded (`rewrite: None`), or recorded again first as
    /// `rewrite` (this invocation's bake, checks and policy; a halted plan back to waiting).
    Resume { record: Box<Record>, rewrite: Option<Box<Record>> },
}

/// How the recorded plan differs from what this invocation asks, one phrase each (the record's
/// values escaped: they come from the cluster).
pub fn differences(record: &Record, ask: &Ask) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(steps) = &ask.steps
        && steps.to_string() != record.steps
    {
        out.push(format!("steps: recorded {}, asked {steps}", shown(&record.steps)));
    }
    if record.bake_seconds != ask.bake_seconds {
        out.push(format!(
            "bake: recorded {}, asked {}",
            duration_words(record.bake_seconds.saturating_mul(1000)),
            duration_words(ask.bake_seconds.saturating_mul(1000))
        ));
    }
    if record.checks != ask.checks {
        let list = |c: &[String]| match c.len() {
            0 => "none".to_string(),
            _ => c.iter().map(|c| format!("`{}`", shown(c))).collect::<Vec<_>>().join(", "),
        };
        out.push(format!("checks: recorded {}, asked {}", list(&record.checks), list(&ask.checks)));
    }
    if !record.gates.same(&ask.gates) {
        let (r, a) = (record.gates.words(), ask.gates.words());
        let (r, a) = match r == a {
            true => (record.gates.settings(), ask.gates.settings()),
            false => (r, a),
        };
        out.push(format!("gates: recorded {r}, asked {a}"));
    }
    if record.on_failure != ask.on_failure.word() {
        out.push(format!(
            "on failure: recorded {}, asked {}",
            shown(&record.on_failure),
            ask.on_failure.word()
        ));
    }
    out
}

fn shown(s: &str) -> String {
    crate::text::shown(s, 200)
}

/// Why a run cannot begin (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    /// Bad usage (exit 2: `--steps` missing) rather than an expectation not met (exit 1).
    pub usage: bool,
}

fn refuse(message: String) -> Refusal {
    Refusal { message, usage: false }
}

/// What this invocation does with the set's record: `update` is the update revision the
/// controller reports for the set's spec (`None` while not observed), `name` the set's name.
pub fn resolve(
    reading: &Reading,
    update: Option<&str>,
    ask: &Ask,
    name: &str,
) -> Result<Begin, Refusal> {
    let new = || match &ask.steps {
        Some(s) => Ok(Begin::New(s.clone())),
        None => Err(Refusal {
            message: "no plan to resume: --steps is needed (e.g. --steps 1,50%,100%)".into(),
            usage: true,
        }),
    };
    let r: &Record = match reading {
        Reading::None => return new(),
        Reading::Invalid(why) if ask.force && ask.steps.is_some() => {
            let _ = why;
            return new();
        }
        Reading::Invalid(why) => return Err(refuse(Reading::invalid_words(why, name))),
        Reading::Plan(r) => r,
    };
    // A plan over, or of another revision, is history: a new plan starts. A Recreate step
    // opened by its own write records no revision until the controller names it: rerun with
    // the image it set, it is resumed (`plan::recreate::learn` judges it on the template).
    let opened_by_its_write = r.revision.is_empty() && ask.image.is_some();
    if matches!(r.phase, Phase::Done | Phase::Aborted)
        || (update != Some(r.revision.as_str()) && !opened_by_its_write)
    {
        return new();
    }
    let diffs = differences(r, ask);
    let steps_differ = ask.steps.as_ref().is_some_and(|s| s.to_string() != r.steps);
    if r.phase == Phase::Halted {
        let why = shown(r.reason.as_deref().unwrap_or("no reason recorded"));
        if !ask.continue_halted && !ask.force {
            return Err(refuse(format!(
                "the plan halted at {}/{}: {why}; `--continue` goes on from that step \
                 once what halted it is fixed (stating the bake and checks again), `ststui \
                 abort {name}` rolls back, or `--steps … --force` starts a plan over it",
                r.step, r.of
            )));
        }
        if let Some(no_steps) = steps_stated(r, ask) {
            return Err(no_steps);
        }
        if steps_differ {
            return new();
        }
        return Ok(Begin::Resume {
            record: Box::new(r.clone()),
            rewrite: Some(Box::new(restated(r, ask))),
        });
    }
    if let Some(no_steps) = steps_stated(r, ask) {
        return Err(no_steps);
    }
    if diffs.is_empty() {
        return Ok(Begin::Resume { record: Box::new(r.clone()), rewrite: None });
    }
    if !ask.force {
        return Err(refuse(format!(
            "the plan under way ({}/{}, {}) differs from this command: {}. Commands, \
             bake and policy are never taken from the set: state them as recorded to resume \
             it, or pass --force to go on with this command's (they are recorded)",
            r.step,
            r.of,
            r.phase.word(),
            diffs.join("; ")
        )));
    }
    if steps_differ {
        return new();
    }
    Ok(Begin::Resume { record: Box::new(r.clone()), rewrite: Some(Box::new(restated(r, ask))) })
}

/// A resume that states no steps: refused, naming the recorded ones.
fn steps_stated(r: &Record, ask: &Ask) -> Option<Refusal> {
    // Steps are never taken from the set: a record anyone may write would choose how many pods
    // open at once. A resume states them (the record's, shown, to copy if they are right).
    if ask.steps.is_some() {
        return None;
    }
    Some(Refusal {
        message: format!(
            "the plan {} ({}/{}) records steps {}: a resume states its steps \
                 (`--steps {}` to go on as recorded); none is taken from the set",
            if r.phase == Phase::Halted { "halted" } else { "under way" },
            r.step,
            r.of,
            shown(&r.steps),
            shown(&r.steps)
        ),
        usage: true,
    })
}

/// `r` with this invocation's bake, checks and policy; a halted plan waits at its step again.
fn restated(r: &Record, ask: &Ask) -> Record {
    let mut out = Record {
        bake_seconds: ask.bake_seconds,
        checks: ask.checks.clone(),
        on_failure: ask.on_failure.word().to_string(),
        gates: ask.gates.clone(),
        ..r.clone()
    };
    if out.phase == Phase::Halted {
        out.phase = Phase::Waiting;
        out.reason = None;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::record::stamp;

    fn record(phase: Phase) -> Record {
        Record {
            steps: "1,50%,100%".into(),
            bake_seconds: 120,
            checks: vec!["./check.sh".into()],
            on_failure: "hold".into(),
            revision: "web-b".into(),
            template: String::new(),
            step: 1,
            of: 3,
            phase,
            since: stamp(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
            partition: 3,
            by: "ana".into(),
            started: stamp(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
            reason: (phase == Phase::Halted).then(|| "check `./check.sh` exited 1".into()),
            began_at: Some(4),
            from: String::new(),
            gates: Default::default(),
            target: None,
            gate: None,
        }
    }

    fn ask(checks: &[&str], bake: u64) -> Ask {
        Ask {
            steps: Some(Steps::parse("1,50%,100%").unwrap()),
            bake_seconds: bake,
            checks: checks.iter().map(|c| c.to_string()).collect(),
            on_failure: OnFailure::Hold,
            force: false,
            continue_halted: false,
            gates: Default::default(),
            by: "ana".into(),
            replace_stuck: false,
            max_restarts: None,
            image: None,
        }
    }

    #[test]
    fn a_stored_command_or_a_shorter_bake_is_refused_and_named_never_taken() {
        let mut evil = record(Phase::Baking);
        evil.checks = vec!["./check.sh; id > PWNED".into()];
        evil.bake_seconds = 0;
        let r = Reading::Plan(Box::new(evil.clone()));
        let e = resolve(&r, Some("web-b"), &ask(&["./check.sh"], 120), "web").unwrap_err();
        assert!(
            e.message.contains("recorded `./check.sh; id > PWNED`, asked `./check.sh`"),
            "{e:?}"
        );
        assert!(e.message.contains("bake: recorded 0s, asked 2m"), "{e:?}");
        assert!(e.message.contains("--force"), "{e:?}");
        // Forced: this invocation's, recorded; the stored command is gone from the record.
        let forced = Ask { force: true, ..ask(&["./check.sh"], 120) };
        let Ok(Begin::Resume { rewrite: Some(w), .. }) = resolve(&r, Some("web-b"), &forced, "web")
        else {
            panic!("forced resume")
        };
        assert_eq!((w.checks, w.bake_seconds), (vec!["./check.sh".to_string()], 120));
        // A rerun that states nothing does not inherit the stored checks: it is refused.
        let e = resolve(
            &Reading::Plan(Box::new(record(Phase::Baking))),
            Some("web-b"),
            &ask(&[], 120),
            "web",
        );
        assert!(e.unwrap_err().message.contains("checks: recorded `./check.sh`, asked none"));
    }

    #[test]
    fn the_same_command_resumes_a_halt_needs_continue_and_history_starts_over() {
        let same = ask(&["./check.sh"], 120);
        let r = Reading::Plan(Box::new(record(Phase::Baking)));
        assert!(matches!(
            resolve(&r, Some("web-b"), &same, "web"),
            Ok(Begin::Resume { rewrite: None, .. })
        ));
        let halted = Reading::Plan(Box::new(record(Phase::Halted)));
        let e = resolve(&halted, Some("web-b"), &same, "web").unwrap_err();
        assert!(e.message.contains("halted at 1/3: check `./check.sh` exited 1"), "{e:?}");
        assert!(e.message.contains("--continue"), "{e:?}");
        let go = Ask { continue_halted: true, checks: vec!["./fixed.sh".into()], ..same.clone() };
        let Ok(Begin::Resume { rewrite: Some(w), .. }) =
            resolve(&halted, Some("web-b"), &go, "web")
        else {
            panic!("continue")
        };
        assert_eq!(
            (w.phase, w.reason, w.checks),
            (Phase::Waiting, None, vec!["./fixed.sh".into()])
        );
        // Another revision: the record is history; without --steps nothing to do.
        let bare = Ask { steps: None, ..same.clone() };
        let e = resolve(&r, Some("web-c"), &bare, "web").unwrap_err();
        assert!(e.usage && e.message.contains("--steps is needed"), "{e:?}");
        let steps = Ask { steps: Some(Steps::parse("1,100%").unwrap()), ..same.clone() };
        assert!(matches!(resolve(&r, Some("web-c"), &steps, "web"), Ok(Begin::New(_))));
    }

    /// Steps are never taken from the set: a resume that states none is refused, naming the
    /// recorded ones; a record whose steps were rewritten differs from the command and is
    /// refused (a forged `1,100%` never opens every pod at once).
    #[test]
    fn a_resume_states_its_steps_and_a_rewritten_record_is_refused() {
        let same = ask(&["./check.sh"], 120);
        let bare = Ask { steps: None, ..same.clone() };
        let r = Reading::Plan(Box::new(record(Phase::Baking)));
        let e = resolve(&r, Some("web-b"), &bare, "web").unwrap_err();
        assert!(e.usage, "{e:?}");
        assert!(e.message.contains("`--steps 1,50%,100%` to go on as recorded"), "{e:?}");
        let go = Ask { continue_halted: true, ..bare.clone() };
        let halted = Reading::Plan(Box::new(record(Phase::Halted)));
        assert!(resolve(&halted, Some("web-b"), &go, "web").is_err(), "--continue states them too");
        let forged = Record { steps: "1,100%".into(), of: 2, ..record(Phase::Waiting) };
        let e = resolve(&Reading::Plan(Box::new(forged)), Some("web-b"), &same, "web").unwrap_err();
        assert!(e.message.contains("steps: recorded 1,100%, asked 1,50%,100%"), "{e:?}");
    }

    #[test]
    fn an_invalid_record_is_refused_unless_a_new_plan_is_forced_over_it() {
        let bad = Reading::Invalid("it is at step 99 of 3".into());
        let steps = Ask { steps: Some(Steps::parse("1,100%").unwrap()), ..ask(&[], 0) };
        let e = resolve(&bad, Some("web-b"), &steps, "web").unwrap_err();
        assert!(e.message.contains("is invalid: it is at step 99 of 3"), "{e:?}");
        let forced = Ask { force: true, ..steps };
        assert!(matches!(resolve(&bad, Some("web-b"), &forced, "web"), Ok(Begin::New(_))));
    }
}
