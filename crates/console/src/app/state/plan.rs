//! A plan the console runs — one set's, or a rollout group's, through the one plan run
//! (`plan::run`) — and what the dialog asked for. Its turns are `app::plan_run`.

use crate::backend::{Failure, Fresh, ObjRef, WriteId};
use crate::plan::Steps;
use crate::plan::record::Record;
use crate::plan::run::Run;

/// A plan this console runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRun {
    pub run: Run,
    /// A fresh read of every member asked for: each member's answer as it arrives (in the
    /// run's order); the turn waits for all of them.
    pub(crate) reads: Option<Vec<Option<Answer>>>,
    /// The write sent last: its answer is the run's.
    pub(crate) sent: Option<WriteId>,
}

/// One member's answer to a fresh read.
pub type Answer = Result<Fresh, Box<Failure>>;

impl PlanRun {
    pub fn new(run: Run) -> PlanRun {
        PlanRun { run, reads: None, sent: None }
    }

    /// The set a write or a line is about: the rolling set (a group's first while none rolls).
    pub fn set(&self) -> &ObjRef {
        self.run.about()
    }

    /// Every set the run drives.
    pub fn sets(&self) -> &[ObjRef] {
        self.run.sets()
    }

    /// Whether the run drives `key`.
    pub fn covers(&self, key: &ObjRef) -> bool {
        self.sets().contains(key)
    }

    /// Whether the run is over but for giving its lease back.
    pub fn ending(&self) -> bool {
        self.run.ending()
    }

    /// The rolling set's plan as this run drives it.
    pub fn plan(&self) -> Option<&Record> {
        self.run.plan()
    }

    /// Stops the run (its lease given back at its next turn).
    pub fn stop(&mut self, why: String) {
        self.reads = None;
        self.run.stop(why);
    }

    /// What runs, in words: `the plan on default/web`, `the group plan of ingester (3 sets)`.
    pub fn words(&self) -> String {
        match self.run.group_name() {
            None => format!("the plan on {}", self.set()),
            Some(group) => format!(
                "the group plan of {} ({} sets)",
                crate::text::escape_controls(group),
                self.sets().len()
            ),
        }
    }
}

/// What the plan dialog asks for: `STEPS [bake=DUR] [stuck-after=DUR]`, the scenario
/// language's `rollout` words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub steps: Steps,
    pub bake_seconds: u64,
    pub stuck_after_ms: u64,
}

impl Form {
    /// As the scenario language's `rollout` line says it (the timeline's operator line).
    pub fn line(&self, set: &str) -> String {
        format!(
            "rollout {set} steps={} bake={}s stuck-after={}",
            self.steps,
            self.bake_seconds,
            crate::plan::duration_words(self.stuck_after_ms)
        )
    }
}

/// What the group plan dialog asks for: each set's steps (or `batches=1,2,4`), bake and
/// stuck-after as for one set, and the zone bake between sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupForm {
    /// Each set's plan (its steps stand for the batches when they are given).
    pub form: Form,
    pub zone_bake_seconds: u64,
    pub batches: Option<Vec<u32>>,
}

impl GroupForm {
    /// Each set's steps in words: `1,100%` or `batches 1,2,4`.
    pub fn steps_words(&self) -> String {
        match &self.batches {
            Some(b) => format!("batches {}", join(b)),
            None => self.form.steps.to_string(),
        }
    }

    /// As the scenario language's `rollout group=` line says it.
    pub fn line(&self, group: &str) -> String {
        let steps = match &self.batches {
            Some(b) => format!("batches={}", join(b)),
            None => format!("steps={}", self.form.steps),
        };
        format!(
            "rollout group={group} {steps} bake={}s zone-bake={}s stuck-after={}",
            self.form.bake_seconds,
            self.zone_bake_seconds,
            crate::plan::duration_words(self.form.stuck_after_ms)
        )
    }
}

fn join(b: &[u32]) -> String {
    b.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}
