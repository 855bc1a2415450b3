//! A plan's checks: the operator's commands run with `sh -c`, the step in their environment,
//! their output kept (its last lines), killed at their timeout.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::plan::duration_words;

/// A check's end.
pub struct CheckOutcome {
    pub passed: Result<(), String>,
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
                passed: Err(format!("could not start: {e}")),
                code: None,
                tail: Vec::new(),
            },
            Ok(child) => wait_check(child, timeout),
        };
        let _ = tx.send(outcome);
    });
    rx
}

fn wait_check(mut child: std::process::Child, timeout: Duration) -> CheckOutcome {
    use std::io::BufRead as _;
    let (ltx, lrx) = mpsc::channel::<String>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let ltx = ltx.clone();
        readers.push(std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = ltx.send(line);
            }
        }));
    }
    if let Some(err) = child.stderr.take() {
        let ltx = ltx.clone();
        readers.push(std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                let _ = ltx.send(line);
            }
        }));
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
    let mut code = None;
    let passed = loop {
        match lrx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => keep(line, &mut tail),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait();
                crate::procs::ended(&child);
                code = status.as_ref().ok().and_then(|s| s.code());
                break match status {
                    Ok(s) if s.success() => Ok(()),
                    Ok(s) => Err(match s.code() {
                        Some(c) => format!("exited {c}"),
                        None => "was killed by a signal".to_string(),
                    }),
                    Err(e) => Err(format!("could not be waited for: {e}")),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                // Its whole group: what the shell started too.
                crate::procs::kill(&child);
                let _ = child.wait();
                crate::procs::ended(&child);
                break Err(format!(
                    "did not end within {}: killed",
                    duration_words(u64::try_from(timeout.as_millis()).unwrap_or(0))
                ));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    };
    for r in readers {
        let _ = r.join();
    }
    while let Ok(line) = lrx.try_recv() {
        keep(line, &mut tail);
    }
    CheckOutcome { passed, code, tail: tail.into() }
}

/// A check's end, or all checks passed.
enum News {
    One { cmd: String, outcome: CheckOutcome, took: Duration },
    All(Result<(), String>),
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
                    passed: Err("the check's runner stopped".into()),
                    code: None,
                    tail: Vec::new(),
                });
                let failed = outcome.passed.as_ref().err().map(|how| {
                    let last = outcome.tail.last().map(|l| format!(": {l}")).unwrap_or_default();
                    format!("check `{cmd}` {how}{last}")
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
    ) -> Option<Result<(), String>> {
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
