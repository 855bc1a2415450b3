//! The console and outside clients see one cluster: the console serving the demo
//! (`ststui sim --serve`), kubectl changing the partition (the console's header follows), the
//! console's `[` changing it (kubectl reads it back), and quit restoring the terminal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]
#![cfg(unix)]

use crate::support::pty_support;

use std::process::Command;
use std::time::{Duration, Instant};

use pty_support::*;

fn kubectl(kc: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is needed for this test (it is not optional): {e}"));
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_console_and_kubectl_steer_one_cluster() {
    let dir = std::env::temp_dir().join(format!("ststui-e2e-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let (kc, cache, log) = (dir.join("kubeconfig"), dir.join("cache"), dir.join("ststui.log"));
    let (kc_s, log_s) = (kc.display().to_string(), log.display().to_string());
    let mut c = Console::start(&[
        "sim",
        "--serve",
        "127.0.0.1:0",
        "--write-kubeconfig",
        &kc_s,
        "--log-file",
        &log_s,
    ]);
    c.wait_for("the demo set", |s| header(s).contains("partition=5"));
    c.wait_for("where it serves", |s| {
        s.contains("serving the simulated cluster at http://127.0.0.1:")
    });
    assert!(kc.exists());

    // kubectl lowers the partition: the console's header follows.
    kubectl(
        &kc,
        &cache,
        &[
            "patch",
            "sts",
            "web",
            "-p",
            r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":3}}}}"#,
        ],
    );
    c.wait_for("partition=3 from kubectl", |s| header(s).contains("partition=3"));

    // The console raises it back: kubectl reads what the console wrote.
    c.press("]");
    let start = Instant::now();
    loop {
        let p = kubectl(
            &kc,
            &cache,
            &["get", "sts", "web", "-o", "jsonpath={.spec.updateStrategy.rollingUpdate.partition}"],
        );
        if p == "4" {
            break;
        }
        // Raising the partition over an updated pod asks first (a slow machine gets there).
        if c.screen().contains("Change the partition") {
            c.press("y");
        }
        assert!(start.elapsed() < DEADLINE, "kubectl never saw partition 4 (saw {p})");
        c.pump(Duration::from_millis(100));
    }
    c.press("q");
    assert!(c.wait_exit().success());
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
    let _ = std::fs::remove_dir_all(&dir);
}
