//! The in-process tests, one binary (a module per file; one link instead of one per file):
//! the core, the simulator, the console's reducer and views, rendering, real-cluster mode on
//! the mock API, the scenarios, the docs and the spec citations.
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
    pub mod app_fixtures;
    pub mod core_harness;
    pub mod kube_mock;
    pub mod objects;
    pub mod played;
    pub mod sim_world_common;
    pub mod ui_support;
}

mod app_console;
mod app_contract;
mod app_events;
mod app_force;
mod app_fresh;
mod app_gitops;
mod app_logs;
mod app_mirror;
mod app_plan;
mod app_reducer;
mod app_sets;
mod app_time;
mod app_timeline;
mod app_words;
mod cluster_backend;
mod cluster_events;
mod cluster_faults;
mod core_budget;
mod core_claim;
mod core_explain;
mod core_invariants;
mod core_props;
mod core_pvc;
mod core_recreate;
mod core_revisions;
mod core_rolling;
mod core_scale;
mod core_scan;
mod core_status;
mod core_sync;
mod house;
mod install;
mod readme;
mod scenarios;
mod sim_api_strict;
mod sim_budget;
mod sim_failures;
mod sim_fleet;
mod sim_group;
mod sim_plan;
mod sim_plan_recreate;
mod sim_script_manifest;
mod sim_script_parse;
mod sim_script_player;
mod sim_script_validate;
mod sim_world;
mod sim_world_core;
mod sim_world_driver;
mod sim_world_props;
mod spec_refs;
mod ui_claims;
mod ui_console;
mod ui_context;
mod ui_evictions;
mod ui_gates;
mod ui_group;
mod ui_panes;
mod ui_props;
mod ui_screens;
mod ui_screenshot;
mod ui_sim;
mod ui_why;
mod verdicts;
