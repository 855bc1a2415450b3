//! Real-cluster mode end to end: the `ststui` console in a pseudo-terminal on a served
//! simulator (`ststui sim --headless --serve`, a child process) through its kubeconfig: the
//! grid, stepping the partition (read back through the API with kubectl), freeze and resume
//! (recorded on the set), a denied permission shown as read-only, the API going down (banner,
//! last data kept, recovery) and quit restoring the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]
#![cfg(unix)]

mod pty_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pty_support::*;

struct Cluster {
    child: Child,
    dir: std::path::PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Cluster {
    /// A served demo (web, 5 replicas, a new revision held by partition 5).
    fn start(test: &str, extra: &[&str]) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("ststui-e2e-cluster-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let kc = dir.join("kubeconfig");
        let child = Command::new(env!("CARGO_BIN_EXE_ststui"))
            .args(["sim", "--headless", "--serve", "127.0.0.1:0", "--write-kubeconfig"])
            .arg(&kc)
            .arg("--log-file")
            .arg(dir.join("serve.log"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        while !kc.exists() {
            assert!(start.elapsed() < DEADLINE, "the served simulator did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Cluster { child, dir }
    }

    fn kubeconfig(&self) -> String {
        self.dir.join("kubeconfig").display().to_string()
    }

    /// A served simulation playing `script` (a scenario) instead of the demo.
    /// The script plays at ×2: its waits and faults take half their virtual time (the
    /// console's own retries run on wall time, as on a real cluster).
    fn scripted(test: &str, script: &str) -> Cluster {
        let path = std::env::temp_dir()
            .join(format!("ststui-e2e-cluster-{test}-{}.scenario", std::process::id()));
        std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
        let script_arg = path.display().to_string();
        let cluster = Cluster::start(test, &["--script", &script_arg, "--speed", "2"]);
        // The script is read before the server answers (start waits for that).
        let _ = std::fs::remove_file(&path);
        cluster
    }

    fn console(&self, args: &[&str]) -> Console {
        let (kc, log) = (self.kubeconfig(), self.dir.join("console.log").display().to_string());
        let mut all = vec!["--kubeconfig", kc.as_str(), "--log-file", log.as_str()];
        all.extend_from_slice(args);
        Console::start(&all)
    }

    fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("kubectl is needed for this test (it is not optional): {e}")
            });
        assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls kubectl until `f` holds for what it prints.
    fn until(&self, c: &mut Console, args: &[&str], f: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let out = self.kubectl(args);
            if f(&out) {
                return out;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "kubectl {args:?} never satisfied the check: {out}"
            );
            c.pump(Duration::from_millis(100));
        }
    }
}

fn partition(k: &Cluster, c: &mut Console, want: &str) {
    let args =
        ["get", "sts", "web", "-o", "jsonpath={.spec.updateStrategy.rollingUpdate.partition}"];
    k.until(c, &args, |p| p == want);
}

#[test]
fn the_grid_steps_and_freezes_a_served_set_and_quit_restores_the_terminal() {
    let k = Cluster::start("steer", &[]);
    let mut c = k.console(&["web"]);
    c.wait_for("the grid on the cluster", |s| {
        header(s).contains("partition=5")
            && s.contains("web-4")
            && s.contains("connected to http://127.0.0.1")
    });
    assert!(
        c.screen().contains("space freeze"),
        "the footer offers freeze, not pause:\n{}",
        c.screen()
    );

    // Step the partition: the set is patched (read back through the API).
    c.press("[");
    c.wait_for("partition=4 on screen", |s| header(s).contains("partition=4"));
    partition(&k, &mut c, "4");
    // The replacement: web-4 deleted, gone and created again. (Had the watch skipped its
    // terminating state, the deletion is still told, inferred: see the README's known issues.)
    c.wait_for("web-4 replaced in the timeline", |s| {
        s.contains("delete-pod web-4") && s.contains("create-pod web-4")
    });

    // Freeze: the partition holds everything and the set records who and what.
    c.press(" ");
    c.wait_for("frozen in the header", |s| s.contains("frozen by ststui-sim-operator"));
    partition(&k, &mut c, "5");
    let ann = k.kubectl(&["get", "sts", "web", "-o", "jsonpath={.metadata.annotations}"]);
    assert!(ann.contains("ststui.io/frozen-partition") && ann.contains("\"4\""), "{ann}");
    c.press("[");
    c.wait_for("the step refused while frozen", |s| {
        s.contains("frozen by ststui-sim-operator since")
    });

    // Resume asks, then restores the recorded partition.
    c.press(" ");
    c.wait_for("the resume confirmation", |s| s.contains("Resume the rollout"));
    c.press("y");
    partition(&k, &mut c, "4");
    c.wait_for("no longer frozen", |s| !s.contains("frozen by"));

    c.press("q");
    assert!(c.wait_exit().success());
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
    #[cfg(target_os = "linux")]
    {
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & (ICANON | ECHO), ICANON | ECHO, "raw mode off after quitting");
    }
}

#[test]
fn the_set_list_opens_a_set_and_esc_comes_back() {
    let k = Cluster::start("picker", &[]);
    let mut c = k.console(&[]);
    c.wait_for("the set list", |s| {
        s.contains("StatefulSets (1)")
            && s.contains("default/web")
            && s.contains("RollingUpdate p=5")
    });
    c.press("\r");
    c.wait_for("the set", |s| header(s).contains("default/web") && s.contains("web-4"));
    c.press("\x1b");
    c.wait_for("the list again", |s| s.contains("StatefulSets (1)"));
    c.press("q");
    assert!(c.wait_exit().success());
}

#[test]
fn a_denied_write_is_read_only_with_the_reason() {
    let k = Cluster::start("deny", &["--deny", "patch:statefulsets"]);
    let mut c = k.console(&["web"]);
    c.wait_for("the grid", |s| header(s).contains("partition=5"));
    // Permissions arrive once the server answered the reviews; then the key says why.
    let start = Instant::now();
    loop {
        c.press("[");
        c.pump(Duration::from_millis(200));
        if c.screen().contains("read-only: you may not patch statefulsets (apps) in default") {
            break;
        }
        assert!(!header(&c.screen()).contains("partition=4"), "the write went through");
        assert!(start.elapsed() < DEADLINE, "no read-only refusal:\n{}", c.screen());
    }
    c.press("q");
    assert!(c.wait_exit().success());
}

#[test]
fn the_api_going_down_shows_a_banner_keeps_the_data_and_recovers() {
    let k = Cluster::scripted(
        "faults",
        "create web replicas=3\nwait 6s\napi-down 10s\nwait 14s\ncompact\ndrop-watches\nwait 600s\n",
    );
    let mut c = k.console(&["web"]);
    c.wait_for("the grid", |s| s.contains("web-2") && header(s).contains("live"));
    c.wait_for("the banner", |s| s.contains("unreachable since"));
    assert!(
        c.screen().contains("web-2"),
        "the last data stays while disconnected:\n{}",
        c.screen()
    );
    // A write still goes out; the refused connection is known to have written nothing.
    c.press("+");
    c.wait_for("the write told as not written", |s| s.contains("nothing was written"));
    c.wait_for("recovered", |s| s.contains("reconnected") && header(s).contains("live"));
    // After the compaction and the dropped watches, a re-list: the badge, and the grid intact.
    c.wait_for("the re-list badge", |s| header(s).contains("↻"));
    assert!(c.screen().contains("web-2"), "{}", c.screen());
    c.press("q");
    assert!(c.wait_exit().success());
}

#[test]
fn refused_credentials_say_so_and_r_reconnects() {
    let k = Cluster::scripted(
        "401",
        "create web replicas=2\nwait 5s\napi-unauthorized 6s\nwait 600s\n",
    );
    let mut c = k.console(&["web"]);
    c.wait_for("the grid", |s| s.contains("web-1") && header(s).contains("live"));
    c.wait_for("the credentials refused", |s| s.contains("credentials refused"));
    assert!(c.screen().contains("R reconnects"), "{}", c.screen());
    assert!(c.screen().contains("web-1"), "the last data stays");
    c.press("R");
    // The status line says so while it reads them; once read, the timeline keeps it (a loaded
    // machine may draw only the second).
    c.wait_for("reconnecting", |s| {
        s.contains("reading the credentials again") || s.contains("credentials read again")
    });
    c.wait_for("live again", |s| header(s).contains("● live"));
    c.press("q");
    assert!(c.wait_exit().success());
}
