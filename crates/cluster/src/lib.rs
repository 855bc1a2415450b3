//! ststui-cluster: real clusters through kube-rs (`cluster`), ststui's controller on a real API
//! server (`drive`), the stand-in kubelet of the test control plane (`fakelet`) and the process
//! helpers they share (`procs`: signals, graceful ends). Above `ststui-plan`; beside the simulator
//! and the console, which it never uses. ARCHITECTURE.md's layer table.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod cluster;
pub mod drive;
pub mod fakelet;
pub mod procs;

// The layers below, under the names the modules use (`crate::core::…`).
use ststui_control::{backend, control, kubelet, runtime};
use ststui_core::{core, text, value};
use ststui_plan::{plan, steer};
