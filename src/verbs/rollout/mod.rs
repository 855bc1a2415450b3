//! `ststui rollout NAME --steps LIST [--bake DUR] [--check CMD]…`: the plan run (`plan::run`)
//! adapted to a process beside a cluster by the one runner (`runner`), a group's too (`group`
//! chooses its sets). It watches the set with the console's own session, reads the set and its
//! pods fresh from the server when the run asks (every verdict rests on such a read), writes
//! through the console's write path (the set a write produced — its answer, or what was read
//! back after a lost reply — is the next write's basis), runs this invocation's checks (never
//! the record's), and says each move.
//!
//! With `--image`, the set is first held (frozen, unless already held) and its first container's
//! image set, so the update waits for the plan: one command instead of three.
//!
//! Owns: the adapter (IO for the engine), the checks' processes, the gates' runs, the output. Exit codes as
//! `wait`'s: 0 done, 1 timeout or refused, 2 bad usage, 3 halted, 4 unreachable or forbidden.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

mod checks;
pub mod fleet;
mod gates;
pub mod group;
mod output;
mod prepare;
mod runner;

use checks::Checks;
use output::Output;
use runner::Runner;

use super::session::Session;
use super::{Exit, SYNC_TIMEOUT, VerbError};
use crate::backend::ObjRef;
use crate::cli::{OutputArg, RolloutArgs};
use crate::cluster::{Target, Writes};
use crate::plan::ask::Ask;
use crate::plan::engine::Config;
use crate::plan::record::{self, MAX_BAKE_SECONDS};
use crate::plan::run::Run;
use crate::plan::{Steps, duration_words};

/// How long a lease holds without renewal, and how often the runner renews it: 20 s of slack
/// for a server that blips.
pub const HOLD: Duration = Duration::from_secs(30);
pub const RENEW: Duration = Duration::from_secs(10);
/// How soon a failed write or read is tried again.
const RETRY: Duration = Duration::from_secs(2);
/// How long a fresh read may take.
pub(super) const READ: Duration = Duration::from_secs(10);

/// Runs (or resumes) the plan.
pub fn run(target: Target, args: &RolloutArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let (steps, bake_seconds) = plan_inputs(args)?;
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let gate_runner = gates::Gates::new(target.clone());
    let mut s = Session::open(target)?;
    s.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    super::warn_gitops("rollout", "", s.set());
    let mut out = Output::new(args.output == OutputArg::Json);
    let set = s.set().cloned().ok_or_else(|| gone(&s.key))?;
    // A Recreate set's plan sets the image itself, after its gates: the controller deletes
    // every old pod the moment the template changes, so nothing could hold it.
    let recreate = crate::plan::recreate::applies(&set);
    let plan_image = match &args.image {
        Some(image) if recreate => Some(prepare::named(&set, &s.key, image)?),
        Some(image) => {
            prepare::image(&mut s, &writes, image, limit, &mut out)?;
            None
        }
        None => None,
    };
    let host = crate::cluster::hostname();
    let set = s.set().cloned().ok_or_else(|| gone(&s.key))?;
    if (args.last.is_some() || args.last_by.is_some())
        && !crate::core::spec::strategy(&set).on_delete
        && !recreate
    {
        return Err(VerbError::new(
            Exit::Usage,
            format!(
                "--last and --last-by order an OnDelete plan; {} rolls by partition, from the \
                 highest ordinal down",
                s.key
            ),
        ));
    }
    let dead = record::lease(&set)
        .filter(|l| l.host == host && l.pid != std::process::id() && !alive(l.pid));
    let cfg = config(s.key.clone(), host, args, dead);
    let ask = Ask { image: plan_image, ..ask(args, steps, bake_seconds, writes.identity()) };
    let mut r = Runner {
        run: Run::one(cfg, ask),
        watch: s,
        w: vec![writes],
        cluster_of: Vec::new(),
        out,
        limit,
        checks: Checks::new(Duration::from_millis(args.check_timeout)),
        gates: gate_runner,
        fresh: None,
    };
    r.drive()
}

/// `--steps` parsed and `--bake` checked.
fn plan_inputs(args: &RolloutArgs) -> Result<(Option<Steps>, u64), VerbError> {
    let steps = args
        .steps
        .as_deref()
        .map(Steps::parse)
        .transpose()
        .map_err(|e| VerbError::new(Exit::Usage, format!("--steps: {e}")))?;
    let bake_seconds = args.bake / 1000;
    if bake_seconds > MAX_BAKE_SECONDS {
        return Err(VerbError::new(
            Exit::Usage,
            format!("--bake: at most {}", duration_words(MAX_BAKE_SECONDS * 1000)),
        ));
    }
    Ok((steps, bake_seconds))
}

/// How this process runs a plan on `set` (`dead`: a lease of this host whose process is gone).
fn config(set: ObjRef, host: String, args: &RolloutArgs, dead: Option<record::Lease>) -> Config {
    Config {
        set,
        host,
        pid: std::process::id(),
        hold: signed(HOLD),
        renew: signed(RENEW),
        retry: signed(RETRY),
        fresh_reads: true,
        observe: SignedDuration::from_secs(10),
        runs_checks: true,
        stuck_after_ms: args.stuck_after,
        dead,
        wait_lease: args.wait_lease,
        take_overclaimed: args.force,
        believe: crate::plan::overclaim::BELIEVED,
        observe_spec: Some(SignedDuration::from_secs(30)),
        group: None,
    }
}

/// What this invocation asks (by `by`).
fn ask(args: &RolloutArgs, steps: Option<Steps>, bake_seconds: u64, by: String) -> Ask {
    Ask {
        steps,
        bake_seconds,
        checks: args.checks.clone(),
        on_failure: args.on_failure.into(),
        force: args.force,
        continue_halted: args.continue_halted,
        gates: args.gates(),
        by,
        replace_stuck: args.replace_stuck,
        max_restarts: args.max_restarts,
        image: None,
    }
}

/// A plan's write carried out (a lost reply read back, said): the set it left, when known.
fn write(
    w: &Writes,
    out: &mut Output,
    limit: Option<Instant>,
    write: crate::backend::Write,
) -> Result<Option<StatefulSet>, Box<crate::backend::Failure>> {
    let by = limit.map_or(crate::cluster::READ_BACK, super::left);
    let (written, set) = w.write_returning(write, by.max(RETRY))?;
    if let crate::cluster::Written::ReadBack(said) = written {
        out.event(None, &said);
    }
    Ok(set)
}

/// When a runner's pause ends: at `until` (on the backend's clock, `now`), within a second, by
/// the limit, and within 200 ms while checks or a gate run (`busy`).
fn wake(now: Timestamp, until: Option<Timestamp>, limit: Option<Instant>, busy: bool) -> Instant {
    let mut wake = Instant::now() + Duration::from_secs(1);
    if let Some(t) = until {
        match Duration::try_from(t.duration_since(now)) {
            Ok(d) => wake = wake.min(Instant::now() + d.max(Duration::from_millis(10))),
            Err(_) => wake = Instant::now() + Duration::from_millis(10),
        }
    }
    if let Some(l) = limit {
        wake = wake.min(l);
    }
    if busy {
        wake = wake.min(Instant::now() + Duration::from_millis(200));
    }
    wake
}

/// `--on-failure undo` carried out on `key` (each move said): the revert's outcome.
fn revert(
    w: &Writes,
    out: &mut Output,
    key: &ObjRef,
    basis: &StatefulSet,
    revision: &str,
    pods: &[(i32, &Pod)],
    limit: Option<Instant>,
) -> Result<(), String> {
    super::abort::revert(w, key, basis, revision, pods, limit, &mut |t| out.event(None, t))
        .map_err(|e| e.message)
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::ZERO)
}

fn gone(key: &ObjRef) -> VerbError {
    VerbError::new(Exit::Api, format!("{key} is gone"))
}

/// Whether process `pid` lives on this host (unknown: assumed alive; a zombie — killed, not
/// yet reaped — is not).
pub(super) fn alive(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    if !proc.exists() {
        return true;
    }
    match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => {
            stat.rsplit_once(')').and_then(|(_, r)| r.trim_start().chars().next()) != Some('Z')
        }
        Err(_) => proc.join(pid.to_string()).exists(),
    }
}
