//! ststui-plan: rollout plans (`plan`: their record, the one reader of it, the pure decision, the
//! one engine, the one verdict) and what the console's and the verbs' writes do to a set
//! (`steer`). Above `ststui-control`; below the simulator, the cluster adapters and the console.
//! ARCHITECTURE.md's layer table.

#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod plan;
pub mod steer;

// The layers below, under the names the modules use (`crate::core::…`).
use ststui_control::backend;
use ststui_core::{core, text, value};
