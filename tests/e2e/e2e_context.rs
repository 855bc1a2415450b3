//! The operator's context end to end, on a served simulator through its kubeconfig (a real
//! cluster's paths: watches, Events by field selector, pods/log): why a crash-looping canary is
//! not Ready (the controller pane and the pod detail), its Events, its claim, its log (and the
//! previous container's), a log the user may not read, and the set list's filter.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]
#![cfg(unix)]

use crate::support::pty_support;

use pty_support::cluster::Cluster;

/// `web` (3 replicas, a claim each) whose last pod runs a crashing image.
const CRASHING: &str = "create web replicas=3 claims=data\nsettle\n\
    break-image app:bad failure=crash\nimage web app:bad\nwait 600s\n";

#[test]
fn a_crash_loop_is_explained_with_its_events_claim_and_log() {
    let k = Cluster::scripted("context", CRASHING);
    let mut c = k.console(&["web"]);
    // Tall enough for the pod detail to show its Events and claim beside the grid.
    c.resize(60, 160);
    c.wait_for("the reason in the controller pane", |s| {
        s.contains("web-2 not Ready (CrashLoopBackOff: exit 1")
    });
    c.press("G");
    c.wait_for("web-2's Events in the detail", |s| s.contains("warning    BackOff ×"));
    c.wait_for("its claim", |s| s.contains("data-web-2 Bound"));
    let screen = c.screen();
    assert!(screen.contains("why"), "{screen}");
    c.press("L");
    c.wait_for("its log", |s| {
        s.contains("Log: web-2 (current container)") && s.contains("exiting with code 1")
    });
    c.press("p");
    c.wait_for("the previous container's", |s| {
        s.contains("Log: web-2 (previous container)") && s.contains("exiting with code 1")
    });
    c.press("\x1b");
    c.wait_for("the log closed", |s| !s.contains("Log: web-2"));
    // The set list: a filter that matches nothing says so.
    c.press("\x1b");
    c.wait_for("the set list", |s| s.contains("StatefulSets"));
    c.press("/zz\r");
    c.wait_for("the filter", |s| s.contains("0 of 1"));
    c.press("q");
    assert!(c.wait_exit().success());
}

#[test]
fn a_log_the_user_may_not_read_says_which_permission() {
    let k = Cluster::start("nolog", &["--deny", "get:pods/log"]);
    let mut c = k.console(&["web"]);
    c.wait_for("the grid", |s| s.contains("web-0"));
    c.press("L");
    c.wait_for("the refusal", |s| s.contains("you may not read the log of pod web-0"));
    let screen = c.screen();
    assert!(screen.contains("get pods/log is forbidden in default"), "{screen}");
    c.press("q");
    c.press("q");
    assert!(c.wait_exit().success());
}
