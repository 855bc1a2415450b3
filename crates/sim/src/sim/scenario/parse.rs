//! The scenario parser: text to [`Script`]. Every line is a command, a comment or blank; anything
//! else is a [`ScriptError`] naming the file, the line, what was wrong and what was expected.
//!
//! Owns: tokenizing, argument shapes, value syntax (numbers, durations, enums, lists). Must not
//! touch: semantics the API server checks (e.g. `scale web -1` parses; the simulated API then
//! refuses it with the validation message, as a real cluster would).

use crate::core::spec::UpdateType;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::values::{
    boolean, count, int, int_or_percent, labels, list, parse_name, positive, retention, strategy,
};
use super::{
    BadValue, Cascade, Check, Command, CreateArgs, KubeletArgs, Line, LineError, Name, Policy,
    Retention, Script, ScriptError,
};
use crate::backend::ImageFailure;
use crate::sim::ApiFault;

mod plan_lines;
mod usage;
pub use usage::USAGE;

/// `settle` without `max=`.
pub const DEFAULT_SETTLE_MAX_MS: u64 = 10 * 60 * 1000;

/// Reads and parses a script file.
pub fn parse_file(path: &Path) -> Result<Script, ScriptError> {
    let text = crate::sim::textfile::read(path).map_err(|e| ScriptError {
        more: Vec::new(),
        file: path.display().to_string(),
        line: 0,
        message: format!("cannot read the script: {e}"),
    })?;
    parse(path, &text)
}

/// Bad lines named in one error (the rest are counted).
const ERRORS_NAMED: usize = 20;

/// Parses script text; `path` names it in errors and anchors `apply` paths. Every bad line is
/// named (up to [`ERRORS_NAMED`]), not only the first.
pub fn parse(path: &Path, text: &str) -> Result<Script, ScriptError> {
    let mut lines = Vec::new();
    let mut bad: Vec<(usize, String)> = Vec::new();
    let mut uncounted = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let code = raw.split('#').next().unwrap_or_default().trim();
        if code.is_empty() {
            continue;
        }
        let number = i + 1;
        match parse_line(path, code) {
            Ok(command) => lines.push(Line { number, text: code.to_string(), command }),
            Err(e) if bad.len() < ERRORS_NAMED => bad.push((number, e.to_string())),
            Err(_) => uncounted += 1,
        }
    }
    if bad.is_empty() {
        return Ok(Script { path: path.to_path_buf(), lines });
    }
    let (line, message) = bad.remove(0);
    if uncounted > 0 {
        let last = bad.last().map_or(line, |(n, _)| *n);
        bad.push((last, format!("… and {uncounted} more bad lines after this one")));
    }
    Err(ScriptError { file: path.display().to_string(), line, message, more: bad })
}

/// A tokenized command line: positional words and `key=value` pairs.
struct Args<'a> {
    cmd: &'a str,
    usage: &'static str,
    positional: Vec<&'a str>,
    pairs: Vec<(&'a str, &'a str)>,
    next: usize,
}

impl<'a> Args<'a> {
    fn err(&self, what: impl std::fmt::Display) -> LineError {
        LineError::Usage { cmd: self.cmd.to_string(), usage: self.usage, problem: what.to_string() }
    }

    /// The next positional argument, named `what` in the error when missing.
    fn word(&mut self, what: &str) -> Result<&'a str, LineError> {
        let w = self.positional.get(self.next).copied();
        self.next += 1;
        w.ok_or_else(|| self.err(format_args!("missing argument {what}")))
    }

    fn optional_word(&mut self) -> Option<&'a str> {
        let w = self.positional.get(self.next).copied();
        self.next += 1;
        w
    }

    fn name(&mut self, what: &str) -> Result<Name, LineError> {
        let w = self.word(what)?;
        parse_name(w).map_err(|m| self.err(m))
    }

    /// Fails on leftover positional words and on keys outside `allowed`.
    fn finish(&self, allowed: &[&str]) -> Result<(), LineError> {
        if let Some(extra) = self.positional.get(self.next) {
            return Err(self.err(format_args!("unexpected argument {extra:?}")));
        }
        let mut seen = BTreeSet::new();
        for (k, _) in &self.pairs {
            if !allowed.contains(k) {
                let expected = if allowed.is_empty() {
                    "this command takes no key=value arguments".to_string()
                } else {
                    format!("expected one of {}", allowed.join(", "))
                };
                return Err(self.err(format_args!("unknown key {k:?} ({expected})")));
            }
            if !seen.insert(*k) {
                return Err(self.err(format_args!("key {k:?} given twice")));
            }
        }
        Ok(())
    }

    fn value(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn parsed<T, E: std::fmt::Display>(
        &self,
        key: &str,
        f: impl Fn(&str) -> Result<T, E>,
    ) -> Result<Option<T>, LineError> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => f(v).map(Some).map_err(|m| self.err(format_args!("{key}={v}: {m}"))),
        }
    }
}

fn tokenize<'a>(
    cmd: &'a str,
    usage: &'static str,
    words: &[&'a str],
) -> Result<Args<'a>, LineError> {
    let mut args = Args { cmd, usage, positional: Vec::new(), pairs: Vec::new(), next: 0 };
    for w in words {
        match w.split_once('=') {
            Some(("", _)) => return Err(args.err(format_args!("{w:?} has no key before `=`"))),
            Some((k, v)) => args.pairs.push((k, v)),
            None => args.positional.push(w),
        }
    }
    Ok(args)
}

#[expect(
    clippy::too_many_lines,
    reason = "one arm per scenario command, in the order spec/scenario.md lists them"
)]
fn parse_line(script: &Path, code: &str) -> Result<Command, LineError> {
    let words: Vec<&str> = code.split_whitespace().collect();
    let Some((&cmd, rest)) = words.split_first() else {
        return Err(LineError::Empty);
    };
    let Some(&(_, usage)) = USAGE.iter().find(|(c, _)| *c == cmd) else {
        return Err(unknown_command(cmd));
    };
    let mut a = tokenize(cmd, usage, rest)?;
    let command = match cmd {
        "create" => return parse_create(a),
        "apply" => {
            let file = a.word("FILE")?;
            Command::Apply(crate::sim::manifest::resolve(script, file))
        }
        "image" => Command::Image { set: a.name("NAME")?, image: a.word("IMG")?.to_string() },
        "scale" => Command::Scale { set: a.name("NAME")?, replicas: int_arg(&mut a, "N")? },
        "partition" => {
            Command::Partition { set: a.name("NAME")?, partition: int_arg(&mut a, "N")? }
        }
        "strategy" => {
            let set = a.name("NAME")?;
            let w = a.word("RollingUpdate|OnDelete|Recreate")?;
            Command::Strategy { set, kind: strategy(w).map_err(|m| a.err(m))? }
        }
        "maxunavailable" => {
            let set = a.name("NAME")?;
            let w = a.word("N|P%")?;
            Command::MaxUnavailable { set, value: int_or_percent(w).map_err(|m| a.err(m))? }
        }
        "undo" => {
            let set = a.name("NAME")?;
            let revision = match a.optional_word() {
                None => None,
                Some(w) => Some(positive(w).map_err(|m| a.err(format_args!("REVISION {m}")))?),
            };
            Command::Undo { set, revision }
        }
        "restart" => Command::Restart { set: a.name("NAME")? },
        "delete" => {
            let set = a.name("NAME")?;
            let cascade = a.parsed("cascade", |v| match v {
                "background" => Ok(Cascade::Background),
                "orphan" => Ok(Cascade::Orphan),
                _ => Err(BadValue::new(v, "is not a cascade", "background or orphan")),
            })?;
            a.finish(&["cascade"])?;
            return Ok(Command::Delete { set, cascade: cascade.unwrap_or(Cascade::Background) });
        }
        "delete-pod" => Command::DeletePod { pod: a.name("POD")?, force: false },
        "force-delete-pod" => Command::DeletePod { pod: a.name("POD")?, force: true },
        "evict" => Command::Evict { pod: a.name("POD")? },
        "pdb" => return parse_budget(a),
        "delete-pdb" => Command::DeleteBudget { name: a.name("NAME")? },
        "fail" => Command::Fail { pod: a.name("POD")? },
        "unready" => Command::SetReady { pod: a.name("POD")?, ready: false },
        "ready" => Command::SetReady { pod: a.name("POD")?, ready: true },
        "kubelet" => return parse_kubelet(a),
        "gc" => {
            a.finish(&["delay"])?;
            let Some(delay_ms) = a.parsed("delay", duration)? else {
                return Err(a.err("give delay=DUR (0s collects at once)"));
            };
            return Ok(Command::Gc { delay_ms });
        }
        "break-image" => {
            let image = a.word("IMG")?.to_string();
            a.finish(&["failure"])?;
            let how = a.parsed("failure", |v| v.parse::<ImageFailure>())?.unwrap_or_default();
            return Ok(Command::BrokenImage { image, broken: Some(how) });
        }
        "fix-image" => Command::BrokenImage { image: a.word("IMG")?.to_string(), broken: None },
        "break-storage" => Command::Storage { full: true },
        "fix-storage" => Command::Storage { full: false },
        "quota" => {
            let off = a.optional_word();
            a.finish(&["pods", "namespace"])?;
            let namespace = a.value("namespace").unwrap_or(super::DEFAULT_NAMESPACE).to_string();
            let pods = a.parsed("pods", |v| {
                v.parse::<u32>()
                    .map_err(|_| BadValue::new(v, "is not a pod count", "a number from 0"))
            })?;
            return match (off, pods) {
                (Some("off"), None) => Ok(Command::Quota { namespace, pods: None }),
                (None, Some(n)) => Ok(Command::Quota { namespace, pods: Some(n) }),
                (Some(w), _) if w != "off" => {
                    Err(a.err(format_args!("unexpected argument {w:?} (expected off or pods=N)")))
                }
                _ => Err(a.err("give pods=N (the quota's pod count) or off, not both")),
            };
        }
        "freeze" => Command::Freeze { set: a.name("NAME")?, on: true },
        "unfreeze" => Command::Freeze { set: a.name("NAME")?, on: false },
        "rollout" => return plan_lines::rollout(a),
        "gate" => return plan_lines::gate(a),
        "approve" => Command::Approve { set: a.name("NAME")? },
        "abort" => Command::Abort { set: a.name("NAME")? },
        "drop-watches" | "compact" => Command::Api(api_fault(cmd, &mut a)?),
        api if api.starts_with("api-") => Command::Api(api_fault(cmd, &mut a)?),
        "pause" => Command::Pause,
        "resume" => Command::Resume,
        "step" => {
            let n = match a.optional_word() {
                None => 1,
                Some(w) => u32::try_from(positive(w).map_err(|m| a.err(format_args!("N {m}")))?)
                    .map_err(|_| a.err("N is too large"))?,
            };
            Command::Step(n)
        }
        "wait" => Command::Wait(duration_arg(&mut a)?),
        "settle" => {
            let max = a.parsed("max", duration)?;
            a.finish(&["max"])?;
            return Ok(Command::Settle { max_ms: max.unwrap_or(DEFAULT_SETTLE_MAX_MS) });
        }
        "expect" => return parse_expect(a),
        _ => return Err(unknown_command(cmd)),
    };
    a.finish(&[])?;
    Ok(command)
}

/// The served API's faults: `api-*`, `drop-watches`, `compact`.
fn api_fault(cmd: &str, a: &mut Args<'_>) -> Result<ApiFault, LineError> {
    Ok(match cmd {
        "api-down" => ApiFault::Down { ms: duration_arg(a)? },
        "api-latency" => ApiFault::Latency { ms: duration_arg(a)? },
        "api-unauthorized" => ApiFault::Unauthorized { ms: duration_arg(a)? },
        "drop-watches" => ApiFault::DropWatches,
        "compact" => ApiFault::Compact,
        "api-lose-replies" => ApiFault::LoseReplies { n: how_many(a, "writes")? },
        "api-stall-watches" => {
            let ms = duration_arg(a)?;
            let resource = match a.optional_word() {
                None => None,
                Some(w) => {
                    Some(crate::sim::WATCHABLE.into_iter().find(|r| *r == w).ok_or_else(|| {
                        a.err(format_args!(
                            "RESOURCE {w:?} is not watched: expected one of {}",
                            crate::sim::WATCHABLE.join(", ")
                        ))
                    })?)
                }
            };
            ApiFault::StallWatches { ms, resource }
        }
        "api-errors" => ApiFault::Errors { n: how_many(a, "requests")? },
        _ => return Err(unknown_command(cmd)),
    })
}

/// A `DUR` positional argument.
fn duration_arg(a: &mut Args<'_>) -> Result<u64, LineError> {
    let w = a.word("DUR")?;
    duration(w).map_err(|m| a.err(m))
}

fn unknown_command(cmd: &str) -> LineError {
    let near = USAGE
        .iter()
        .map(|(n, _)| (edit_distance(n, &cmd.to_ascii_lowercase()), *n))
        .min()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, n)| n);
    LineError::UnknownCommand { cmd: cmd.to_string(), near }
}

/// Levenshtein distance, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

fn parse_create(a: Args<'_>) -> Result<Command, LineError> {
    let mut a = a;
    let set = a.name("NAME")?;
    a.finish(&[
        "replicas",
        "image",
        "policy",
        "strategy",
        "partition",
        "maxUnavailable",
        "minReadySeconds",
        "startOrdinal",
        "claims",
        "historyLimit",
        "whenDeleted",
        "whenScaled",
        "labels",
    ])?;
    let policy = a.parsed("policy", |v| match v {
        "OrderedReady" => Ok(Policy::OrderedReady),
        "Parallel" => Ok(Policy::Parallel),
        _ => Err(BadValue::new(v, "is not a pod management policy", "OrderedReady or Parallel")),
    })?;
    let image = a.parsed("image", |v| {
        if v.is_empty() {
            Err(BadValue::new(v, "is not an image", "an image such as nginx:1.25"))
        } else {
            Ok(v.to_string())
        }
    })?;
    Ok(Command::Create(Box::new(CreateArgs {
        set,
        replicas: a.parsed("replicas", int)?.unwrap_or(1),
        image: image.unwrap_or_else(|| "nginx:1.25".into()),
        policy: policy.unwrap_or(Policy::OrderedReady),
        strategy: a.parsed("strategy", strategy)?.unwrap_or(UpdateType::RollingUpdate),
        partition: a.parsed("partition", int)?,
        max_unavailable: a.parsed("maxUnavailable", int_or_percent)?,
        min_ready_seconds: a.parsed("minReadySeconds", int)?.unwrap_or(0),
        start_ordinal: a.parsed("startOrdinal", int)?,
        claims: a.parsed("claims", list)?.unwrap_or_default(),
        history_limit: a.parsed("historyLimit", int)?.unwrap_or(10),
        when_deleted: a.parsed("whenDeleted", retention)?.unwrap_or(Retention::Retain),
        when_scaled: a.parsed("whenScaled", retention)?.unwrap_or(Retention::Retain),
        labels: a.parsed("labels", labels)?.unwrap_or_default(),
    })))
}

fn parse_budget(a: Args<'_>) -> Result<Command, LineError> {
    let mut a = a;
    let name = a.name("NAME")?;
    a.finish(&["min-available", "max-unavailable", "set", "unhealthy"])?;
    let min_available = a.parsed("min-available", int_or_percent)?;
    let max_unavailable = a.parsed("max-unavailable", int_or_percent)?;
    if min_available.is_none() && max_unavailable.is_none() {
        return Err(a.err("give min-available=N|P% or max-unavailable=N|P%"));
    }
    let unhealthy = a.parsed("unhealthy", |v| match v {
        "IfHealthyBudget" | "AlwaysAllow" => Ok(v.to_string()),
        _ => Err(BadValue::new(
            v,
            "is not an unhealthy pod eviction policy",
            "IfHealthyBudget or AlwaysAllow",
        )),
    })?;
    let set = match a.value("set") {
        None => name.name.clone(),
        Some(s) if !s.is_empty() && !s.contains('/') => s.to_string(),
        Some(s) => {
            return Err(
                a.err(format_args!("set={s}: expected a set's name in {}'s namespace", name.name))
            );
        }
    };
    Ok(Command::Budget(Box::new(super::BudgetArgs {
        name,
        set,
        min_available,
        max_unavailable,
        unhealthy,
    })))
}

fn parse_kubelet(a: Args<'_>) -> Result<Command, LineError> {
    a.finish(&["start", "ready", "stop", "broken", "failure"])?;
    if a.pairs.is_empty() {
        return Err(a.err("give at least one of start=, ready=, stop=, broken=, failure="));
    }
    Ok(Command::Kubelet(KubeletArgs {
        start_ms: a.parsed("start", duration)?,
        ready_ms: a.parsed("ready", duration)?,
        stop_ms: a.parsed("stop", duration)?,
        broken: a.value("broken").map(str::to_string),
        failure: a.parsed("failure", |v| v.parse::<ImageFailure>())?,
    }))
}

fn parse_expect(a: Args<'_>) -> Result<Command, LineError> {
    let mut a = a;
    let set = a.name("NAME")?;
    let keys = [
        "replicas",
        "ready",
        "available",
        "current",
        "updated",
        "rolledOut",
        "pods",
        "blocked",
        "claims",
        "partition",
        "plan",
        "group",
    ];
    a.finish(&keys)?;
    if a.pairs.is_empty() {
        return Err(a.err("nothing to check: give at least one key=value"));
    }
    let mut checks = Vec::new();
    for (k, v) in &a.pairs {
        let bad = |m: BadValue| a.err(format_args!("{k}={v}: {m}"));
        let check = match *k {
            "replicas" => Check::Replicas(count(v).map_err(bad)?),
            "ready" => Check::Ready(count(v).map_err(bad)?),
            "available" => Check::Available(count(v).map_err(bad)?),
            "current" => Check::Current(count(v).map_err(bad)?),
            "updated" => Check::Updated(count(v).map_err(bad)?),
            "rolledOut" => Check::RolledOut(boolean(v).map_err(bad)?),
            "blocked" => Check::Blocked(boolean(v).map_err(bad)?),
            "claims" => Check::Claims(list(v).map_err(bad)?),
            "partition" => Check::Partition(count(v).map_err(bad)?),
            "plan" => Check::Plan(plan_phase(v).map_err(bad)?),
            "group" => Check::Group(group_state(v).map_err(bad)?),
            _ => Check::Pods(list(v).map_err(bad)?),
        };
        checks.push(check);
    }
    Ok(Command::Expect { set, checks })
}

/// The phases `expect plan=` takes.
pub const PLAN_PHASES: [&str; 10] = [
    "none", "waiting", "baking", "checking", "gate", "approved", "halted", "done", "aborted",
    "invalid",
];

fn plan_phase(v: &str) -> Result<String, BadValue> {
    match PLAN_PHASES.contains(&v) {
        true => Ok(v.to_string()),
        false => Err(BadValue::new(
            v,
            "is not a plan phase",
            format!("one of {}", PLAN_PHASES.join(", ")),
        )),
    }
}

/// The states `expect group=` takes.
pub const GROUP_STATES: [&str; 7] =
    ["none", "waiting", "rolling", "done", "halted", "aborted", "invalid"];

fn group_state(v: &str) -> Result<String, BadValue> {
    match GROUP_STATES.contains(&v) {
        true => Ok(v.to_string()),
        false => Err(BadValue::new(
            v,
            "is not a group state",
            format!("one of {}", GROUP_STATES.join(", ")),
        )),
    }
}

/// `N`, from 1: how many `what` a fault touches.
fn how_many(a: &mut Args<'_>, what: &str) -> Result<u32, LineError> {
    let w = a.word("N")?;
    w.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
        a.err(format!("{w:?} is not a count: expected the number of {what}, from 1"))
    })
}

fn int_arg(a: &mut Args<'_>, what: &str) -> Result<i32, LineError> {
    let w = a.word(what)?;
    int(w).map_err(|m| a.err(format_args!("{what} {m}")))
}

pub use crate::value::duration;

/// The path used for scripts given as text (tests, soak).
pub fn inline_path() -> PathBuf {
    PathBuf::from("<inline>")
}
