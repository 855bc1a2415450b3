//! The suites that need the upstream control plane (`--ignored`; `.ci/run` runs them inside
//! `tests/control-plane/run`, filtered by module): the differential check of the core against
//! kube-controller-manager, real-cluster mode end to end, and drive mode end to end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "a test asserts by panicking, prints what it saw, tells one story start to end, and \
              #[tokio::test] builds its own runtime"
)]

/// The shared support this binary uses (`tests/support/`, listed in CONTRIBUTING.md): only
/// those modules, so a binary compiles none of the others' rigs.
#[path = "../support"]
#[allow(dead_code, unused_imports, reason = "each test binary uses part of the shared support")]
mod support {
    pub mod cp_support;
    pub mod drive_proc;
    pub mod objects;
    pub mod pty_support;
    pub mod runner;
}

mod differential;
mod drive_headless;
mod drive_lease;
mod e2e_control_plane;
mod e2e_drive;
mod harness;
