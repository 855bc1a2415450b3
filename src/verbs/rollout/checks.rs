//! A plan's checks: the operator's commands run with `sh -c`, the step in their environment,
//! their output kept (its last lines), killed at their timeout.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::plan::duration_words;
use crate::plan::engine::CheckFailed;

/// How a check that did not pass ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckEnd {
    #[error("could not start: {0}")]
    NotStarted(String),
    #[error("exited {0}")]
    Exited(i32),
    #[error("was killed by a signal")]
    Signalled,
    #[error("could not be waited for: {0}")]
    Lost(String),
    /// It ran past its timeout (ms) and was killed, with what it started.
    #[error("did not end within {}: killed", duration_words(*.0))]
    TimedOut(u64),
    #[error("the check's runner stopped")]
    RunnerStopped,
}

/// A check's end.
pub struct CheckOutcome {
    pub passed: Result<(), CheckEnd>,
    /// Its exit code (`None`: killed, timed out, or never started).
    pub code: Option<i32>,
    /// Its output's last lines (stdout and stderr).
    pub tail: Vec<String>,
}

/// Lines of a check's output kept.
const TAIL: usize = 20;

/// Starts `sh -c cmd` with `env`; its outcome arrives on the channel (killed at `timeout`).
pub fn spawn_check(
    cmd: &str,
    env: &[(&str, String)],
    timeout: Duration,
) -> mpsc::Receiver<CheckOutcome> {
    let (tx, rx) = mpsc::channel();
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(cmd).stdin(std::process::Stdio::null());
    command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let child = crate::procs::spawn(&mut command);
    std::thread::spawn(move || {
        let outcome = match child {
            Err(e) => CheckOutcome {
                passed: Err(CheckEnd::NotStarted(e.to_string())),
                code: None,
                tail: Vec::new(),
            },
            Ok(child) => wait_check(child, timeout),
        };
        let _ = tx.send(outcome);
    });
    rx
}

/// Waits for a check: its output read as it comes (bounded: [`read_lines`]), its shell polled,
/// killed with its whole process group at `timeout` — whether or not its output is still open
/// (a shell that redirected its own output closes the pipes at once and runs on) — and, once
/// the shell ended, what it left running in its group killed too (a `sleep &` never outlives
/// the check, nor ststui).
fn wait_check(mut child: std::process::Child, timeout: Duration) -> CheckOutcome {
    let (ltx, lrx) = mpsc::sync_channel::<String>(LINES_IN_FLIGHT);
    for out in [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|e| Box::new(e) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let ltx = ltx.clone();
        // Not joined: a process that left the group and kept the pipe open would hold it.
        std::thread::spawn(move || read_lines(out, &ltx));
    }
    drop(ltx);
    let deadline = Instant::now() + timeout;
    let mut tail = std::collections::VecDeque::new();
    let keep = |line: String, tail: &mut std::collections::VecDeque<String>| {
        if tail.len() == TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    };
    let mut open = true;
    let mut code = None;
    let passed = loop {
        if open {
            match lrx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    keep(line, &mut tail);
                    if Instant::now() < deadline {
                        continue;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                // What it left running in its group goes with it.
                crate::procs::kill(&child);
                crate::procs::ended(&child);
                code = status.code();
                break match status.code() {
                    Some(0) => Ok(()),
                    Some(c) => Err(CheckEnd::Exited(c)),
                    None => Err(CheckEnd::Signalled),
                };
            }
            Ok(None) if Instant::now() < deadline => {}
            Ok(None) => {
                // Its whole group: what the shell started too.
                crate::procs::kill(&child);
                let _ = child.wait();
                crate::procs::ended(&child);
                break Err(CheckEnd::TimedOut(u64::try_from(timeout.as_millis()).unwrap_or(0)));
            }
            Err(e) => {
                crate::procs::kill(&child);
                let _ = child.wait();
                crate::procs::ended(&child);
                break Err(CheckEnd::Lost(e.to_string()));
            }
        }
    };
    // The last lines: the group is gone, so its pipes close (a moment to read what was left).
    let grace = Instant::now() + Duration::from_millis(500);
    while open && Instant::now() < grace {
        match lrx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => keep(line, &mut tail),
            Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    CheckOutcome { passed, code, tail: tail.into() }
}

/// Lines waiting between a check's readers and its waiter (the readers wait when it is full).
const LINES_IN_FLIGHT: usize = 256;
/// The most of one line kept (bytes); the rest of it is read and dropped, its cut marked `…`.
const LINE_MAX: usize = 512;

/// Reads `out` to its end in chunks, sending each line (clipped to [`LINE_MAX`]) as it ends:
/// memory stays bounded whatever a check writes (a 400 MB line is read through, one clipped
/// line kept). Stops when the waiter is gone.
fn read_lines(mut out: impl std::io::Read, tx: &mpsc::SyncSender<String>) {
    let mut chunk = [0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let send = |line: &mut Vec<u8>, cut: &mut bool| {
        let mut text = String::from_utf8_lossy(line).into_owned();
        if *cut {
            text.push('…');
        }
        line.clear();
        *cut = false;
        tx.send(text).is_ok()
    };
    loop {
        let n = match out.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while let Some(i) = rest.iter().position(|b| *b == b'\n') {
            let room = LINE_MAX.saturating_sub(line.len());
            line.extend_from_slice(&rest[..i.min(room)]);
            cut |= i > room;
            if !send(&mut line, &mut cut) {
                return;
            }
            rest = &rest[i + 1..];
        }
        let room = LINE_MAX.saturating_sub(line.len());
        line.extend_from_slice(&rest[..rest.len().min(room)]);
        cut |= rest.len() > room;
    }
    if !line.is_empty() || cut {
        let _ = send(&mut line, &mut cut);
    }
}

/// A check's end, or all checks passed.
enum News {
    One { cmd: String, outcome: CheckOutcome, took: Duration },
    All(Result<(), CheckFailed>),
}

/// A plan's checks under way: started one after the other on a thread of their own, their
/// news taken between the runner's turns.
pub struct Checks {
    timeout: Duration,
    rx: Option<mpsc::Receiver<News>>,
}

impl Checks {
    pub fn new(timeout: Duration) -> Checks {
        Checks { timeout, rx: None }
    }

    pub fn running(&self) -> bool {
        self.rx.is_some()
    }

    /// Starts `checks`, one after the other (the first failure ends them), with `env`.
    pub fn start(&mut self, checks: Vec<String>, env: Vec<(&'static str, String)>) {
        let (tx, rx) = mpsc::channel();
        let timeout = self.timeout;
        std::thread::spawn(move || {
            for cmd in checks {
                let started = Instant::now();
                let outcome = spawn_check(&cmd, &env, timeout).recv().unwrap_or(CheckOutcome {
                    passed: Err(CheckEnd::RunnerStopped),
                    code: None,
                    tail: Vec::new(),
                });
                let failed = outcome.passed.as_ref().err().map(|how| CheckFailed {
                    check: cmd.clone(),
                    how: how.to_string(),
                    last: outcome.tail.last().map(|l| format!(": {l}")).unwrap_or_default(),
                });
                let took = started.elapsed();
                let _ = tx.send(News::One { cmd, outcome, took });
                if let Some(why) = failed {
                    let _ = tx.send(News::All(Err(why)));
                    return;
                }
            }
            let _ = tx.send(News::All(Ok(())));
        });
        self.rx = Some(rx);
    }

    /// What the checks reported since: each said on `out` (under `plan`), and their outcome
    /// once all are in.
    pub fn news(
        &mut self,
        out: &mut super::output::Output,
        plan: Option<&crate::plan::record::Record>,
    ) -> Option<Result<(), CheckFailed>> {
        let rx = self.rx.as_ref()?;
        let mut news = Vec::new();
        while let Ok(n) = rx.try_recv() {
            news.push(n);
        }
        let mut all = None;
        for n in news {
            match n {
                News::One { cmd, outcome, took } => {
                    let took =
                        duration_words(u64::try_from(took.as_millis()).unwrap_or(0).max(1000));
                    if outcome.passed.is_ok() {
                        out.event(plan, &format!("check `{cmd}` passed ({took})"));
                    }
                    out.output("check-output", &outcome.tail);
                }
                News::All(result) => {
                    self.rx = None;
                    all = Some(result);
                }
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmd: &str, timeout: Duration) -> CheckOutcome {
        spawn_check(cmd, &[], timeout).recv().unwrap()
    }

    /// Whether process `pid` is gone (or a zombie), within 5 s.
    fn gone(pid: i32) -> bool {
        (0..100).any(|_| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
            let alive = state.is_some_and(|s| {
                s.rsplit(')').next().and_then(|r| r.split_whitespace().next()) != Some("Z")
            });
            if alive {
                std::thread::sleep(Duration::from_millis(50));
            }
            !alive
        })
    }

    fn pid_in(path: &std::path::Path) -> i32 {
        std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
    }

    #[test]
    fn a_check_that_redirects_its_own_output_is_killed_at_its_timeout_with_its_children() {
        let dir = std::env::temp_dir().join(format!("ststui-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (log, pid) = (dir.join("log"), dir.join("pid"));
        let cmd =
            format!("exec >>{} 2>&1; sleep 40 & echo $! > {}; wait", log.display(), pid.display());
        let started = Instant::now();
        let o = run(&cmd, Duration::from_secs(1));
        assert!(matches!(o.passed, Err(CheckEnd::TimedOut(1000))), "{:?}", o.passed);
        assert!(started.elapsed() < Duration::from_secs(30), "it ran its 40 s");
        assert!(gone(pid_in(&pid)), "its sleep outlived the timeout");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn what_a_passing_check_leaves_running_is_stopped_with_it() {
        let dir = std::env::temp_dir().join(format!("ststui-check-bg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid = dir.join("pid");
        let cmd = format!("sleep 123 >/dev/null 2>&1 & echo $! > {}; exit 0", pid.display());
        let o = run(&cmd, Duration::from_secs(20));
        assert_eq!((o.passed, o.code), (Ok(()), Some(0)));
        assert!(gone(pid_in(&pid)), "the check's background sleep outlived it");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The peak resident memory of this process so far (kB).
    fn peak_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    fn output_without_an_end_is_read_through_with_memory_bounded_and_lines_clipped() {
        let before = peak_kb();
        let o = run(
            "head -c 200000000 /dev/zero | tr '\\0' z; echo; echo last",
            Duration::from_secs(60),
        );
        assert_eq!(o.passed, Ok(()));
        let grew = peak_kb().saturating_sub(before);
        assert!(grew < 64 * 1024, "a 200 MB line took {grew} kB");
        assert_eq!(o.tail.last().map(String::as_str), Some("last"));
        let long = &o.tail[o.tail.len() - 2];
        assert!(long.len() <= LINE_MAX + '…'.len_utf8() && long.ends_with('…'), "{}", long.len());
    }
}
