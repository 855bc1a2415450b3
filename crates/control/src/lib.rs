//! ststui-control: the data contract between a backend and the console (`backend`), the
//! controller loop around the core (`control`) and the kubelet's model the simulator, the fake
//! kubelet and drive mode share (`kubelet`), and the one place that builds tokio runtimes
//! (`runtime`). Above `ststui-core`. ARCHITECTURE.md's layer table.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod backend;
pub mod control;
pub mod kubelet;
pub mod runtime;

// The layers below, under the names the modules use (`crate::core::…`).
use ststui_core::core;
