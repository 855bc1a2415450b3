//! The pipeline verbs: `ststui explain | step | freeze | resume | wait NAME` — the console's
//! knowledge and keys without a terminal, for CI pipelines and runbooks.
//!
//! A verb watches the set with the console's own cluster backend and feeds what it sees through
//! the console's own reducer ([`session`]), so the grid, the health word, the advisor's next
//! action and blocker and the forced-rollback hint are the console's, computed by the same code.
//! Writes go through the console's write path (`cluster::write_once`: the resourceVersion the
//! decision was made on, a 409 re-read and re-decided, never retried blindly).
//!
//! Exit codes (one table in docs/verbs.md): 0 done, 1 timeout or an expectation not met (a step
//! refused, a conflict), 2 bad usage (clap's own, or a kubeconfig that cannot be used), 3
//! stuck, 4 an API or permission failure.
//!
//! Owns: the verbs' decisions and output. May use: app (state, reducer, selectors), cluster,
//! backend, core. Must not: touch the terminal beyond plain lines, or tokio.

pub mod abort;
pub mod kubectl;
pub mod progress;
pub mod report;
mod report_group;
pub mod rollout;
pub use rollout::fleet::fleet_members;
pub mod session;
pub mod step;

use std::time::{Duration, Instant};

use crate::backend::{ClusterOp, FailureKind, ObjRef, Write};
use crate::cli::{Command, ExplainOutput, NameArgs, ResumeArgs};
use crate::cluster::{Target, Written};
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
    /// A write was sent and its outcome is not known (its reply lost, no read-back).
    pub unknown_outcome: bool,
}

impl VerbError {
    pub fn new(exit: Exit, message: impl Into<String>) -> VerbError {
        VerbError { exit, message: message.into(), unknown_outcome: false }
    }
}

/// Runs a verb; returns its exit status, having printed its output (stdout) and any error
/// (stderr, `ststui VERB: ...`).
pub fn run(cmd: &Command, mut target: Target) -> i32 {
    let name = cmd.name();
    let start = Instant::now();
    let result = match cmd {
        Command::Sim(_)
        | Command::Play(_)
        | Command::Drive(_)
        | Command::FakeKubelet(_)
        | Command::Completion(_)
        | Command::Man(_) => Err(VerbError::new(Exit::Usage, "not a verb on one set")),
        Command::Explain(a) => {
            target.name = Some(a.name.clone());
            explain(target, a.output, start + Duration::from_millis(a.timeout))
        }
        Command::Step(a) => {
            target.name = Some(a.name.clone());
            step::run(target, a, start)
        }
        Command::Freeze(NameArgs { name, timeout }) => {
            target.name = Some(name.clone());
            freeze(target, None, start + Duration::from_millis(*timeout))
        }
        Command::Resume(ResumeArgs { name, force, timeout }) => {
            target.name = Some(name.clone());
            freeze(target, Some(*force), start + Duration::from_millis(*timeout))
        }
        Command::Wait(a) => {
            target.name = Some(a.name.clone());
            wait(target, a.timeout, a.stuck_after, a.full, start)
        }
        Command::Rollout(a) => match &a.name {
            _ if a.contexts.is_some() => {
                target.name.clone_from(&a.name);
                rollout::fleet::run(target, a, start)
            }
            Some(name) => {
                target.name = Some(name.clone());
                rollout::run(target, a, start)
            }
            None => rollout::group::run(target, a, start),
        },
        Command::Approve(a) => {
            target.name = Some(a.name.clone());
            abort::approve(target, a, start)
        }
        Command::Abort(a) => {
            target.name = Some(a.name.clone());
            abort::abort(target, a, start)
        }
    };
    match result {
        Ok(exit) => exit as i32,
        Err(e) => {
            crate::text::err_line(&format!("ststui {name}: {}", e.message));
            e.exit as i32
        }
    }
}

/// A fleet's members in the other clusters, each cluster read through the context of this
/// kubeconfig that reaches it (at most 5 s a cluster, within `deadline`).
fn reach_fleet(
    target: &Target,
    key: &crate::backend::ObjRef,
    p: &crate::plan::group::part::Part,
    deadline: Instant,
) -> report_group::Reached {
    let mut out = report_group::Reached::new();
    let Some(clusters) = &p.clusters else { return out };
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in clusters.iter().enumerate() {
        if p.beside(i).is_some() || seen.contains(&c.uid.as_str()) {
            continue;
        }
        seen.push(&c.uid);
        let at: Vec<usize> = (0..clusters.len()).filter(|j| clusters[*j].uid == c.uid).collect();
        let names: Vec<String> = at.iter().map(|j| p.sets[*j].clone()).collect();
        let within = left(deadline).min(Duration::from_secs(5));
        let read = crate::cluster::lookup::in_cluster(
            target,
            &c.uid,
            &c.name,
            &key.namespace,
            &names,
            within,
        );
        match read {
            Ok((_, sets)) => {
                let read = sets.into_iter().map(|s| report_group::Reach::Read(s.map(Box::new)));
                out.extend(at.into_iter().zip(read));
            }
            Err(why) => {
                let why = report_group::Reach::Unread(why.to_string());
                out.extend(at.into_iter().map(|j| (j, why.clone())));
            }
        }
    }
    out
}

/// `ststui explain NAME [-o text|json] [--timeout DUR]`.
fn explain(target: Target, output: ExplainOutput, deadline: Instant) -> Result<Exit, VerbError> {
    let mut s = Session::open(target)?;
    s.sync(deadline)?;
    s.see_group(deadline);
    let mut report = report::Report::of(&s.state, &s.key)
        .ok_or_else(|| VerbError::new(Exit::Api, format!("{} is gone", s.key)))?;
    // A set in a rollout group: the group as its sets say (one listing of the namespace's sets;
    // unreadable, the report goes without it).
    if let Some(set) = s.set()
        && (crate::plan::group::part::read(set) != crate::plan::group::part::Reading::None
            || set
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(crate::plan::group::part::ROLLOUT_GROUP)))
    {
        let within = left(deadline).min(Duration::from_secs(5));
        let reach =
            |p: &crate::plan::group::part::Part| reach_fleet(&s.target, &s.key, p, deadline);
        match crate::cluster::lookup::sets(&s.target, None, within) {
            Ok((_, sets)) => report.group = report_group::of(set, &sets, reach),
            Err(e) => crate::text::err_line(&format!("ststui explain: the group unknown: {e}")),
        }
    }
    match output {
        ExplainOutput::Json => {
            let text = serde_json::to_string_pretty(&report)
                .map_err(|e| VerbError::new(Exit::Api, e.to_string()))?;
            say(&text);
        }
        ExplainOutput::Yaml => {
            let text = serde_yaml_ng::to_string(&report)
                .map_err(|e| VerbError::new(Exit::Api, e.to_string()))?;
            say(text.trim_end_matches('\n'));
        }
        ExplainOutput::Text => say(report.text().trim_end_matches('\n')),
    }
    for (kind, why) in &s.state.unreadable {
        if *kind == crate::backend::ObjKind::Claim {
            crate::text::err_line(&format!("ststui explain: claims unknown: {why}"));
        }
    }
    Ok(Exit::Done)
}

/// Prints one line of a verb's output on stdout (the verbs' output is the only thing they
/// print there), its control characters escaped (`crate::text`): values from the cluster reach
/// these lines.
pub(crate) fn say(text: &str) {
    crate::text::out_line(text);
}

/// The time left until `deadline` (a lost reply is read back for at most that long).
pub fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// How `set`'s rollout group holds it, its first set (the group's lease) read from the server
/// when the part has it in turn (a verb's session watches NAME alone); a list that fails within
/// five seconds (or `deadline`) leaves it [`Held::Unknown`].
pub(crate) fn group_held(
    target: &Target,
    set: &k8s_openapi::api::apps::v1::StatefulSet,
    deadline: Instant,
) -> crate::plan::group::held::Held {
    use crate::plan::group::held::{First, Held};
    let now = k8s_openapi::jiff::Timestamp::now();
    let unseen = Held::of(set, |_| First::Unseen, now);
    if !matches!(unseen, Held::Unknown(_)) {
        return unseen;
    }
    let within = left(deadline).min(Duration::from_secs(5));
    let Ok((_, sets)) = crate::cluster::lookup::sets(target, None, within) else { return unseen };
    let first = |n: &str| {
        sets.iter()
            .find(|s| s.metadata.name.as_deref() == Some(n))
            .map_or(First::Absent, First::Seen)
    };
    Held::of(set, first, now)
}

/// On stderr before a verb writes a set Argo CD or Flux manages: the write may be reverted, and
/// the entry of the tool's configuration that leaves the partition alone (a pipeline is not
/// asked; it is told). `on`: the cluster, in a fleet (`eu: `).
pub fn warn_gitops(verb: &str, on: &str, set: Option<&k8s_openapi::api::apps::v1::StatefulSet>) {
    let Some(set) = set else { return };
    let Some(m) = crate::steer::gitops::manager(&set.metadata) else { return };
    let (ns, name) =
        (set.metadata.namespace.as_deref().unwrap_or_default(), crate::core::spec::name(set));
    let (ns, name) = (crate::text::shown(ns, 80), crate::text::shown(name, 80));
    let mut lines = vec![format!("ststui {verb}: warning: {on}{ns}/{name}: {}", m.warning())];
    lines.extend(m.prevents(&ns, &name));
    crate::text::err_line(&lines.join("\n"));
}

/// `ststui freeze NAME` (`resume: None`) / `ststui resume NAME [--force]` (`Some(force)`):
/// idempotent (a second run says so, exit 0).
fn freeze(target: Target, resume: Option<bool>, deadline: Instant) -> Result<Exit, VerbError> {
    let name = target.name.clone().unwrap_or_default();
    let mut key = ObjRef::new("", name);
    let made = |ns: &str| {
        key.namespace = ns.to_string();
        let set = key.clone();
        let op = match resume {
            None => ClusterOp::Freeze { set },
            Some(force) => ClusterOp::Unfreeze { set, force },
        };
        Write::new(op)
    };
    let warn = |set: &k8s_openapi::api::apps::v1::StatefulSet| {
        if resume.is_none() {
            warn_gitops("freeze", "", Some(set));
        }
    };
    let result = crate::cluster::write_once(&target, left(deadline), made, warn);
    let done = |read_back: bool| {
        let how = if read_back { " (the reply was lost; read back)" } else { "" };
        match resume {
            None => {
                format!("{key} frozen: partition set to replicas, the previous one recorded{how}")
            }
            Some(_) => format!("{key} resumed: the recorded partition is back{how}"),
        }
    };
    match result {
        Ok(Written::Unchanged(said)) => say(&said),
        Ok(Written::Done) => say(&done(false)),
        Ok(Written::ReadBack(_)) => say(&done(true)),
        Err(e) => return Err(write_failure(crate::backend::WriteKind::PatchSet, e)),
    }
    Ok(Exit::Done)
}

/// A write that did not happen (or whose outcome is unknown) as the verb's error: a kubeconfig
/// that cannot be used is bad usage (2), a conflict or a refusal an expectation (1), a missing
/// permission, an unreachable server or an unknown outcome 4 — each message says whether
/// anything was written.
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
                f.message.trim_end_matches("; nothing written")
            ),
        ),
        FailureKind::Invalid => VerbError::new(Exit::Expectation, f.message),
        FailureKind::Disruption => VerbError::new(
            Exit::Expectation,
            format!("{}: {}; ask again once the budget allows a disruption", f.op, f.message),
        ),
        FailureKind::Forbidden | FailureKind::Unauthorized => VerbError::new(
            Exit::Api,
            format!("permission denied: this needs {} ({})", kind.describe(), f.message),
        ),
        FailureKind::Unknown => VerbError {
            unknown_outcome: true,
            ..VerbError::new(Exit::Api, format!("{}: {}", f.op, f.message))
        },
        _ => VerbError::new(Exit::Api, format!("{}: {}", f.op, f.message)),
    }
}

/// How long a verb waits for its first complete view when no `--timeout` says.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// `ststui wait NAME`: a partition-aware rollout status. `--timeout` bounds it all, the first
/// view included (without it, the first view has [`SYNC_TIMEOUT`]).
fn wait(
    target: Target,
    timeout_ms: Option<u64>,
    stuck_after_ms: u64,
    full: bool,
    start: Instant,
) -> Result<Exit, VerbError> {
    let deadline = timeout_ms.map(|t| start + Duration::from_millis(t));
    let mut s = Session::open(target)?;
    s.sync(deadline.unwrap_or(start + SYNC_TIMEOUT))?;
    s.see_group(deadline.unwrap_or(start + SYNC_TIMEOUT));
    watch(&mut s, Goal::Rollout { full }, deadline, stuck_after_ms, start)
}

/// Watches until the goal is met (0), stuck (3) or the deadline passes (1; 4 if the server is
/// unreachable or failing then). On a terminal a live progress line, otherwise one line per
/// change. `begun`: when the verb's `--timeout` began (its timeout is said from then, as given).
pub fn watch(
    s: &mut Session,
    goal: Goal,
    deadline: Option<Instant>,
    stuck_after_ms: u64,
    begun: Instant,
) -> Result<Exit, VerbError> {
    use std::io::IsTerminal;
    let start = Instant::now();
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
            Verdict::Waiting(text, clock) => {
                let text = match s.disconnected() {
                    Some(why) => format!("{text} [no answer, retrying: {why}]"),
                    None => text,
                };
                let waited = now.duration_since(start);
                let live = match (clock.is_empty(), waited.as_secs()) {
                    (true, 0) => String::new(),
                    (true, _) => format!("waited {}", progress::human(waited)),
                    (false, 0) => clock,
                    (false, _) => format!("{clock}; waited {}", progress::human(waited)),
                };
                line.show(&text, &live);
                if deadline.is_some_and(|d| now >= d) {
                    let waited = progress::human(now.duration_since(begun));
                    line.finish(&format!("timed out after {waited}: {text}"));
                    if let Some(why) = s.disconnected() {
                        return Err(VerbError::new(
                            Exit::Api,
                            format!("the server could not be reached until the timeout: {why}"),
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
