//! The pipeline verbs: `ststui explain | step | freeze | resume | wait NAME` — the console's
//! knowledge and keys without a terminal, for CI pipelines and runbooks.
//!
//! A verb watches the set with the console's own cluster backend and feeds what it sees through
//! the console's own reducer ([`session`]), so the grid, the health word, the advisor's next
//! action and blocker and the forced-rollback hint are the console's, computed by the same code.
//! Writes go through the console's write path (`cluster::write_once`: the resourceVersion the
//! decision was made on, a 409 re-read and re-decided, never retried blindly).
//!
//! Exit codes (one table in the README): 0 done, 1 timeout or an expectation not met (a step
//! refused, a conflict), 2 bad usage (clap's own, or a kubeconfig that cannot be used), 3
//! stuck, 4 an API or permission failure.
//!
//! Owns: the verbs' decisions and output. May use: app (state, reducer, selectors), cluster,
//! backend, core. Must not: touch the terminal beyond plain lines, or tokio.

pub mod kubectl;
pub mod progress;
pub mod report;
pub mod session;
pub mod step;

use std::time::{Duration, Instant};

use crate::backend::{ClusterOp, FailureKind, ObjRef, Write};
use crate::cli::{Command, NameArgs, OutputArg};
use crate::cluster::Target;
use progress::{Goal, Progress, Verdict};
use session::Session;

/// How a verb ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Done = 0,
    /// The timeout passed, or an expectation was not met (a refused step, a conflict).
    Expectation = 1,
    Usage = 2,
    Stuck = 3,
    /// The API refused or could not be reached, or a permission is missing.
    Api = 4,
}

/// A verb's failure: its exit code and what to tell the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbError {
    pub exit: Exit,
    pub message: String,
}

impl VerbError {
    pub fn new(exit: Exit, message: impl Into<String>) -> VerbError {
        VerbError { exit, message: message.into() }
    }
}

/// Runs a verb; returns its exit status, having printed its output (stdout) and any error
/// (stderr, `ststui VERB: ...`).
pub fn run(cmd: &Command, mut target: Target) -> i32 {
    let name = cmd.name();
    let result = match cmd {
        Command::Sim(_) | Command::Play(_) | Command::FakeKubelet(_) => {
            Err(VerbError::new(Exit::Usage, "not a verb on one set"))
        }
        Command::Explain(a) => {
            target.name = Some(a.name.clone());
            explain(target, a.output)
        }
        Command::Step(a) => {
            target.name = Some(a.name.clone());
            step::run(target, a)
        }
        Command::Freeze(NameArgs { name }) => {
            target.name = Some(name.clone());
            freeze(target, true)
        }
        Command::Resume(NameArgs { name }) => {
            target.name = Some(name.clone());
            freeze(target, false)
        }
        Command::Wait(a) => {
            target.name = Some(a.name.clone());
            wait(target, a.timeout, a.stuck_after)
        }
    };
    match result {
        Ok(exit) => exit as i32,
        Err(e) => {
            eprintln!("ststui {name}: {}", e.message);
            e.exit as i32
        }
    }
}

/// `ststui explain NAME [-o text|json]`.
fn explain(target: Target, output: OutputArg) -> Result<Exit, VerbError> {
    let mut s = Session::open(target)?;
    s.sync(SYNC_TIMEOUT)?;
    let report = report::Report::of(&s.state, &s.key)
        .ok_or_else(|| VerbError::new(Exit::Api, format!("{} is gone", s.key)))?;
    match output {
        OutputArg::Json => {
            let text = serde_json::to_string_pretty(&report)
                .map_err(|e| VerbError::new(Exit::Api, e.to_string()))?;
            say(&text);
        }
        OutputArg::Text => say(report.text().trim_end_matches('\n')),
    }
    Ok(Exit::Done)
}

/// Prints one line of a verb's output on stdout (the verbs' output is the only thing they
/// print there; a closed pipe is not an error worth more than the exit code).
pub(crate) fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// `ststui freeze NAME` / `ststui resume NAME`: idempotent (a second run says so, exit 0).
fn freeze(target: Target, freeze: bool) -> Result<Exit, VerbError> {
    let name = target.name.clone().unwrap_or_default();
    let mut key = ObjRef::new("", name);
    let made = |ns: &str| {
        key.namespace = ns.to_string();
        let set = key.clone();
        let op = if freeze { ClusterOp::Freeze { set } } else { ClusterOp::Unfreeze { set } };
        Write { op, basis: None }
    };
    match crate::cluster::write_once(&target, made) {
        Ok(Some(said)) => say(&said),
        Ok(None) if freeze => {
            say(&format!("{key} frozen: partition set to replicas, the previous one recorded"))
        }
        Ok(None) => say(&format!("{key} resumed: the recorded partition is back")),
        Err(e) => return Err(write_failure(crate::backend::WriteKind::PatchSet, e)),
    }
    Ok(Exit::Done)
}

/// A write that did not happen as the verb's error: a kubeconfig that cannot be used is bad
/// usage (2), a conflict an expectation (1), a missing permission names it (4).
pub fn write_failure(kind: crate::backend::WriteKind, e: crate::cluster::OnceError) -> VerbError {
    let f = match e {
        crate::cluster::OnceError::Setup(message) => return VerbError::new(Exit::Usage, message),
        crate::cluster::OnceError::Failed(f) => f,
    };
    match f.kind {
        FailureKind::Conflict => VerbError::new(
            Exit::Expectation,
            format!(
                "{}: nothing written; read the set again (ststui explain) and decide",
                f.message
            ),
        ),
        FailureKind::Forbidden | FailureKind::Unauthorized => VerbError::new(
            Exit::Api,
            format!("permission denied: this needs {} ({})", kind.describe(), f.message),
        ),
        _ => VerbError::new(Exit::Api, format!("{}: {}", f.op, f.message)),
    }
}

/// How long a verb waits for its first complete view of the set.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// `ststui wait NAME`: a partition-aware rollout status.
fn wait(target: Target, timeout_ms: Option<u64>, stuck_after_ms: u64) -> Result<Exit, VerbError> {
    let mut s = Session::open(target)?;
    s.sync(SYNC_TIMEOUT)?;
    watch(&mut s, Goal::Rollout, timeout_ms, stuck_after_ms)
}

/// Watches until the goal is met (0), stuck (3) or the timeout passes (1; 4 if the server is
/// unreachable then). On a terminal a live progress line, otherwise one line per change.
pub fn watch(
    s: &mut Session,
    goal: Goal,
    timeout_ms: Option<u64>,
    stuck_after_ms: u64,
) -> Result<Exit, VerbError> {
    use std::io::IsTerminal;
    let start = Instant::now();
    let deadline = timeout_ms.map(|t| start + Duration::from_millis(t));
    let mut progress = Progress::new(Duration::from_millis(stuck_after_ms), start);
    let mut line = progress::Line::new(std::io::stdout().is_terminal());
    loop {
        let now = Instant::now();
        match progress.assess(&s.state, &s.key, &goal, now) {
            Verdict::Done(text) => {
                line.finish(&text);
                return Ok(Exit::Done);
            }
            Verdict::Stuck { pod, rule } => {
                let who = pod.map(|p| format!("{p}: ")).unwrap_or_default();
                line.finish(&format!("stuck: {who}{rule}"));
                return Ok(Exit::Stuck);
            }
            Verdict::Waiting(text) => {
                let text = match s.disconnected() {
                    Some(why) => format!("{text} [disconnected, retrying: {why}]"),
                    None => text,
                };
                line.show(&text, now.duration_since(start));
                if deadline.is_some_and(|d| now >= d) {
                    let waited = progress::human(now.duration_since(start));
                    line.finish(&format!("timed out after {waited}: {text}"));
                    if let Some(why) = s.disconnected() {
                        return Err(VerbError::new(
                            Exit::Api,
                            format!("the server could not be reached: {why}"),
                        ));
                    }
                    return Ok(Exit::Expectation);
                }
            }
        }
        let wake = now + Duration::from_secs(1);
        s.next(Some(deadline.map_or(wake, |d| d.min(wake))))?;
    }
}
