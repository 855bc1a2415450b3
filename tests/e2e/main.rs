//! The tests that drive the binary, one test binary: in a pseudo-terminal (the console), as a
//! process against a served simulator (the verbs, plans, play, the kubectl plugin), kubectl
//! against the served simulator, the backends' conformance, drive mode's faults and the soak.
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
    pub mod drive_proc;
    pub mod objects;
    pub mod pty_support;
    pub mod rig;
    pub mod runner;
    pub mod serve_common;
    pub mod wait;
}

mod backend_conformance;
mod cli_headless;
mod credentials;
mod drive_faults;
mod drive_headless;
mod e2e_cluster;
mod e2e_context;
mod e2e_pty;
mod e2e_serve;
mod plan;
mod plan_conformance;
mod play;
mod plugin;
mod serve_evict;
mod serve_kube;
mod serve_kubectl;
mod soak;
mod verbs;
