//! ststui-console: the console's state and its one reducer, the keymap table and the view models
//! (`app`), and rendering only (`ui`). Above `ststui-plan`; never the simulator nor a cluster
//! (the backends reach it through `backend`'s contract). ARCHITECTURE.md's layer table.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod app;
pub mod ui;

// The layers below, under the names the modules use (`crate::core::…`).
use ststui_control::backend;
use ststui_core::{core, text, value};
use ststui_plan::{plan, steer};
