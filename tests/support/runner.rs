//! The binary under test, run as a process: bare, or against a served simulator's kubeconfig
//! with its log in the test's directory (never the user's default log file).

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `ststui`, the binary cargo built for these tests.
pub fn ststui() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ststui"))
}

/// `ststui ARGS --kubeconfig DIR/kubeconfig --log-file DIR/log`, stdin closed.
pub fn against(dir: &Path, args: &[&str]) -> Command {
    let mut c = ststui();
    c.args(args)
        .arg("--kubeconfig")
        .arg(dir.join("kubeconfig"))
        .arg("--log-file")
        .arg(dir.join("log"))
        .stdin(Stdio::null());
    c
}

/// Runs `c` to its end: (exit code, -1 for a signal; stdout; stderr).
pub fn outcome(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap_or_else(|e| panic!("cannot run ststui: {e}"));
    said(&out)
}

/// An ended process's (exit code, stdout, stderr).
pub fn said(out: &Output) -> (i32, String, String) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The state letter of process `pid` (`T` stopped, `Z` a zombie), from /proc; `None` once it is
/// gone.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// What a child writes on stdout, line by line as it comes (read on a thread of its own).
pub type Lines = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// Follows `child`'s stdout (piped) into [`Lines`].
pub fn follow(child: &mut std::process::Child) -> Lines {
    let lines: Lines = Lines::default();
    let sink = std::sync::Arc::clone(&lines);
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout not piped"));
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for l in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(l);
        }
    });
    lines
}
