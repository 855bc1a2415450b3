//! ststui-sim: the simulated cluster (`sim`: store, controller, kubelet model, clock, scenario
//! player, soak) and the simulator served as a Kubernetes API (`serve`). Above `ststui-plan`;
//! beside the cluster adapters and the console, which it never uses. ARCHITECTURE.md's layer table.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod serve;
pub mod sim;

// The layers below, under the names the modules use (`crate::core::…`).
use ststui_control::{backend, control, kubelet, runtime};
use ststui_core::{core, text, value};
use ststui_plan::{plan, steer};
