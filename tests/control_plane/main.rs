//! The suites that need the upstream control plane (`--ignored`; `.ci/run` runs them inside
//! `tests/control-plane/run`, filtered by module): the differential check of the core against
//! kube-controller-manager, real-cluster mode end to end, and drive mode end to end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

#[path = "../support/mod.rs"]
mod support;

mod differential;
mod e2e_control_plane;
mod e2e_drive;
