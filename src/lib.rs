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

pub mod app;
pub mod backend;
pub mod cli;
pub mod cluster;
pub mod complete;
pub mod control;
pub mod core;
pub mod drive;
pub mod fakelet;
pub mod kubelet;
pub mod logfile;
pub mod plan;
pub mod play;
pub mod procs;
pub mod serve;
pub mod sim;
pub mod steer;
pub mod text;
pub mod ui;
pub mod value;
pub mod verbs;
