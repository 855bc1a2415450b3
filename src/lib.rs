//! ststui: a terminal rollout console for Kubernetes StatefulSets.
//!
//! Layers: `core` (pure controller port), `control` (the controller loop), `plan` (rollout plans:
//! their record, the one reader of it, what an invocation asks, the pure decision and the one plan
//! engine the verb, the console and the simulator adapt), `sim` (simulated cluster), `backend` (the
//! data contract between a backend and the console), `cluster` (kube-rs), `drive` (ststui's
//! controller on a real API server), `serve` (the simulator as an API server), `steer` (what the
//! console's writes do to a set), `app` (state and the one reducer), `ui` (pure rendering), `verbs`
//! (the pipeline verbs), `play` (scripts on a cluster), `fakelet` (a stand-in kubelet), `kubelet`
//! (the kubelet's model the simulator, the fake kubelet and drive mode share), `logfile` (where the
//! log goes, opened privately), `text` (making others' text safe to print), `value` (durations and
//! bad values, as every input takes them), `cli`, `complete`. `main.rs` composes them. What may
//! depend on what, and where a feature and its test go: ARCHITECTURE.md.
//!
//! The layers are crates of one workspace (`crates/`), the compiler holding what may use what; this
//! crate holds the binary's own modules and re-exports every layer under its name (`ststui::core`,
//! `ststui::app`, …) for the binary, the tests and the benchmarks.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod cli;
pub mod complete;
pub mod logfile;
pub mod man;
pub mod play;
pub mod verbs;

pub use ststui_cluster::{cluster, drive, fakelet, procs};
pub use ststui_console::{app, ui};
pub use ststui_control::{backend, control, kubelet, runtime};
pub use ststui_core::{core, text, value};
pub use ststui_plan::{plan, steer};
pub use ststui_sim::{serve, sim};
