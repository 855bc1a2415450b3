//! A plan the console runs: the engine and what the dialog asked for. Its turns are
//! `app::plan_run`.

use crate::backend::ObjRef;
use crate::plan::Steps;
use crate::plan::engine::Engine;

/// A plan this console runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRun {
    pub engine: Engine,
    /// The write sent last: its answer is the engine's.
    pub(crate) sent: Option<crate::backend::WriteId>,
}

impl PlanRun {
    pub fn set(&self) -> &ObjRef {
        self.engine.set()
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
