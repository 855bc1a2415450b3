//! ststui: a terminal rollout console for Kubernetes StatefulSets.
//!
//! Layers (see DESIGN.md): `core` (pure controller port), `sim` (simulated cluster),
//! `backend` (the data contract between a backend and the console), `app` (state and the one
//! reducer), `ui` (pure rendering), `plan` (rollout plans: their record and pure decision).
//! `main.rs` composes them.

pub mod app;
pub mod backend;
pub mod cli;
pub mod cluster;
pub mod complete;
pub mod control;
pub mod core;
pub mod drive;
pub mod fakelet;
pub mod plan;
pub mod play;
pub mod serve;
pub mod sim;
pub mod steer;
pub mod text;
pub mod ui;
pub mod verbs;
