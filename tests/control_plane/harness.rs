//! The harness itself: `tests/control-plane/run` stopped by SIGTERM while its command runs ends
//! at once (not when the command ends), with the command, all the command started, and the
//! control plane gone. Runs the harness itself (outside any other run of it): `.ci/run` runs
//! it after the suites that run inside one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether a live process (not a zombie) has `needle` in its command line; which one.
fn running_with(needle: &str) -> Option<String> {
    let procs = std::fs::read_dir("/proc").ok()?;
    for entry in procs.flatten() {
        let dir = entry.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let pid = entry.file_name().to_str().and_then(|p| p.parse().ok()).unwrap_or(0);
        let zombie = crate::support::runner::process_state(pid) == Some('Z');
        if cmdline.contains(needle) && !zombie {
            return Some(format!("{}: {cmdline}", dir.display()));
        }
    }
    None
}

fn until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "starts the upstream control plane itself (tests/control-plane/run); .ci/run runs it"]
fn sigterm_mid_command_stops_the_command_and_the_control_plane_at_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = std::env::temp_dir().join(format!("ststui-harness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let marker = scratch.join("child");
    // A command that starts a child of its own (the way cargo starts test binaries) and waits.
    let script = format!("sleep 600 & echo $! > {}; wait", marker.display());
    let log = std::fs::File::create(scratch.join("run.log")).unwrap();
    let mut run = Command::new(root.join("tests/control-plane/run"))
        .args(["--", "sh", "-c", &script])
        .env("STSTUI_BIN", env!("CARGO_BIN_EXE_ststui"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // The control plane is built once (cached); starting it takes seconds.
    until("the command started under the control plane", Duration::from_secs(1_200), || {
        if let Ok(Some(status)) = run.try_wait() {
            let said = std::fs::read_to_string(scratch.join("run.log")).unwrap_or_default();
            panic!("the harness ended before its command ran ({status}): {said}");
        }
        std::fs::read_to_string(&marker).is_ok_and(|s| s.ends_with('\n'))
    });
    let said = std::fs::read_to_string(scratch.join("run.log")).unwrap();
    let work = said
        .lines()
        .find_map(|l| l.split("(logs in ").nth(1))
        .map(|w| w.trim_end_matches(')').to_string())
        .unwrap_or_else(|| panic!("no work directory said: {said}"));
    assert!(running_with(&work).is_some(), "no control-plane process of {work} runs");
    let child: i32 = std::fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
    let started = Instant::now();
    // SAFETY: a signal to the process this test started.
    unsafe {
        libc::kill(i32::try_from(run.id()).unwrap(), libc::SIGTERM);
    }
    let mut status = None;
    until("the harness ended after SIGTERM", Duration::from_secs(30), || {
        status = run.try_wait().unwrap();
        status.is_some()
    });
    let took = started.elapsed();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{status:?}");
    // The command's sleep had ten minutes to go: ending within seconds means it was stopped.
    assert!(took < Duration::from_secs(20), "the harness took {took:?} to stop");
    let child_gone = || {
        let state = crate::support::runner::process_state(u32::try_from(child).unwrap_or(0));
        state.is_none_or(|s| s == 'Z')
    };
    until("the command's own child gone", Duration::from_secs(5), child_gone);
    until("the control plane gone", Duration::from_secs(5), || running_with(&work).is_none());
    let _ = std::fs::remove_dir_all(&scratch);
}
