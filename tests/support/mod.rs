//! The tests' one support folder, shared by the three test binaries (`tests/it`, `tests/e2e`,
//! `tests/control_plane`; each includes it as `mod support`) and the render benchmark:
//!
//! | module | what it gives |
//! | --- | --- |
//! | [`objects`] | the common objects: the `web` set (`set`, `web`), kubelet timings |
//! | [`runner`] | the binary under test: `ststui()`, run against a kubeconfig, its outcome |
//! | [`rig`] | a served simulator with a scratch directory and its kubeconfig |
//! | [`app_fixtures`] | hand-built objects and a fake backend for the console's reducer |
//! | [`core_harness`] | an in-memory world around the controller core, invariants checked |
//! | [`sim_world_common`] | a stand-in reconciler for the simulator's loop |
//! | [`ui_support`] | a console state from hand-made objects, rendered to a test backend |
//! | [`kube_mock`] | a fake API server behind kube-rs (lost replies, silent watches) |
//! | [`serve_common`] | a served simulator on a free loopback port and clients for it |
//! | [`pty_support`] | the binary in a pseudo-terminal, its screen parsed |
//! | [`cp_support`] | a namespace of its own on the upstream control plane |
//! | [`wait`] | waiting on a condition, not for a while |
//!
//! Each binary uses part of it; what one does not use is not dead code there.
#![allow(dead_code, unused_imports)]

pub mod app_fixtures;
pub mod core_harness;
pub mod cp_support;
pub mod kube_mock;
pub mod objects;
pub mod pty_support;
pub mod rig;
pub mod runner;
pub mod serve_common;
pub mod sim_world_common;
pub mod ui_support;
pub mod wait;
