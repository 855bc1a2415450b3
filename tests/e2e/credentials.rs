//! Exec credential plugins, end to end: the binary against a served simulator whose kubeconfig
//! names a plugin (a shell script). A plugin that answers is run once; one that never answers
//! is bounded by a verb's `--timeout` (exit 4, naming it), does not keep the console from
//! drawing and quitting on `q`, and leaves no process behind — after a timeout, a quit, or a
//! SIGTERM to the verb.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::objects::kubelet;
use crate::support::pty_support::Console;
use crate::support::rig::Served;
use crate::support::runner;
use crate::support::serve_common::set;

/// `web` served, its kubeconfig's user an exec plugin running `script` (a `sh` body).
fn rig(test: &str, script: &str) -> Served {
    use std::os::unix::fs::PermissionsExt as _;
    let r = Served::new("credentials", test, vec![set("web", 3)], &[], kubelet(100));
    let plugin = r.dir.join("get-token");
    std::fs::write(&plugin, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let kc = r.dir.join("kubeconfig");
    let text = std::fs::read_to_string(&kc).unwrap();
    let exec = format!(
        "user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
         command: {}\n      interactiveMode: Never\n",
        plugin.display()
    );
    assert!(text.contains("user: {}"), "{text}");
    std::fs::write(&kc, text.replace("user: {}", &exec)).unwrap();
    r
}

/// A plugin that starts a child, writes its pid, says something on stderr and never answers.
fn hanging(dir: &Path) -> String {
    format!(
        "sleep 600 & echo $! > {d}/child\n\
         echo 'waiting for the browser sign-in' >&2\nwait",
        d = dir.display()
    )
}

/// The pid written in `dir/name`, once it is there.
fn pid(dir: &Path, name: &str) -> i32 {
    let path = dir.join(name);
    crate::support::wait::until(&format!("{name} pid"), Duration::from_secs(10), || {
        std::fs::read_to_string(&path).is_ok_and(|s| s.ends_with('\n'))
    });
    std::fs::read_to_string(&path).unwrap().trim().parse().unwrap()
}

/// Whether process `pid` is gone (a zombie counts), waiting up to 5 s.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = runner::process_state(u32::try_from(pid).unwrap_or(0));
        if state.is_none_or(|s| s == 'Z') {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Processes running `script` (their command line names it), zombies aside.
fn running(script: &Path) -> Vec<u32> {
    let want = script.as_os_str().as_encoded_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(want.len()).any(|w| w == want))
        })
        .filter(|pid| runner::process_state(*pid).is_some_and(|s| s != 'Z'))
        .collect()
}

/// No process of the plugin is left: none running its script (the shell ststui started,
/// whether or not it got as far as writing its pid: on a loaded machine a plugin can be ended
/// at the verb's timeout before its first line ran), and its child, when it had started one.
fn assert_no_plugin_left(dir: &Path) {
    let script = dir.join("get-token");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !running(&script).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(running(&script), Vec::<u32>::new(), "the plugin's shell is still running");
    let child = std::fs::read_to_string(dir.join("child")).unwrap_or_default();
    if child.ends_with('\n') {
        let p: i32 = child.trim().parse().unwrap();
        // Killed with its group; on a loaded machine it is gone a moment later, not at once.
        while !gone(p) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(gone(p), "the plugin's child ({p}) is still running");
    }
}

#[test]
fn a_plugin_that_answers_is_run_once_and_the_verb_works() {
    let r = rig("answers", "");
    let runs = r.dir.join("runs");
    let script = format!(
        "echo run >> {}\nprintf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\
         \"kind\":\"ExecCredential\",\"status\":{{\"token\":\"t0ken\"}}}}'",
        runs.display()
    );
    std::fs::write(r.dir.join("get-token"), format!("#!/bin/sh\n{script}\n")).unwrap();
    let (code, out, err) = runner::outcome(&mut runner::against(&r.dir, &["explain", "web"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("web"), "{out}");
    // kube-rs ran a plugin up to three times while building one client; ststui runs it once.
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 1);
    // A writing verb makes two clients (its view and its writer): still one run.
    let (code, out, err) = runner::outcome(&mut runner::against(&r.dir, &["freeze", "web"]));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 2);
}

#[test]
fn a_hanging_plugin_ends_a_verb_at_its_timeout_naming_the_plugin() {
    let r = rig("hang-verb", "");
    std::fs::write(r.dir.join("get-token"), format!("#!/bin/sh\n{}\n", hanging(&r.dir))).unwrap();
    for verb in [&["explain", "web", "--timeout", "3s"][..], &["wait", "web", "--timeout", "3s"]] {
        let _ = std::fs::remove_file(r.dir.join("child"));
        let started = Instant::now();
        let (code, out, err) = runner::outcome(&mut runner::against(&r.dir, verb));
        let took = started.elapsed();
        assert_eq!(code, 4, "{verb:?}: {out}{err}");
        assert!(took < Duration::from_secs(15), "{verb:?} took {took:?}");
        assert!(err.contains("exec credential plugin \"get-token\""), "{err}");
        assert!(err.contains("had not answered"), "{err}");
        assert_no_plugin_left(&r.dir);
    }
}

#[test]
fn a_verb_stopped_by_sigterm_stops_its_plugin() {
    let r = rig("hang-term", "");
    std::fs::write(r.dir.join("get-token"), format!("#!/bin/sh\n{}\n", hanging(&r.dir))).unwrap();
    let mut child = runner::against(&r.dir, &["wait", "web", "--timeout", "60s"]).spawn().unwrap();
    let _ = pid(&r.dir, "child");
    // Seen running by its script's path: what `assert_no_plugin_left` then finds gone.
    assert!(!running(&r.dir.join("get-token")).is_empty(), "the plugin's shell runs");
    let ststui = i32::try_from(child.id()).unwrap();
    // SAFETY: a signal to the process this test started.
    unsafe {
        libc::kill(ststui, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGTERM));
    assert_no_plugin_left(&r.dir);
}

#[test]
fn the_console_draws_and_quits_while_a_plugin_hangs() {
    let r = rig("hang-console", "");
    std::fs::write(r.dir.join("get-token"), format!("#!/bin/sh\n{}\n", hanging(&r.dir))).unwrap();
    let kc = r.dir.join("kubeconfig").display().to_string();
    let log = r.dir.join("console.log").display().to_string();
    let mut c = Console::start(&["--kubeconfig", &kc, "--log-file", &log, "web"]);
    c.wait_for("the wait for credentials said", |s| s.contains("waiting for credentials"));
    let _ = pid(&r.dir, "child");
    c.press("q");
    let status = c.wait_exit();
    assert!(status.success(), "{status:?}");
    assert_no_plugin_left(&r.dir);
}
