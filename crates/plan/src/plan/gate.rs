//! Per-pod gates: what the operators of stateful systems do around each pod (drain it before it
//! goes, wait for its data to be in sync after it is back), run by the plan itself, with nothing
//! installed on the cluster.
//!
//! A gate is this invocation's (`--pre-delete`, `--post-ready`, `--before-step`, `--last-by`):
//! a local command (`cmd:./isr-ok.sh`), a command in the pod through the API's exec
//! (`exec:CONTAINER -- nodetool drain`) or an HTTP request to the pod through the API server's
//! pod proxy (`http::9644/v1/broker/pre_restart_probe`). The contract: exit 0 or a 2xx answer
//! goes on; exit 75 (`EX_TEMPFAIL`) or HTTP 503/429 is "not yet" (asked again after the
//! interval, within a budget of tries); anything else fails and halts the plan. The record on
//! the set names the gates and the one under way (so every console and `explain` show it); a
//! gate's text is never taken from the record (`plan::ask`).
//!
//! Owns: the gates' vocabulary and parsing, the contract, what the decision knows of them
//! ([`Gating`]), the placeholders. Pure: running a gate is the adapter's.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Where a gate stands in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GateKind {
    /// Before ststui deletes a pod (OnDelete) or lowers the partition onto it (RollingUpdate).
    PreDelete,
    /// After a replaced pod is updated, Ready and available, before the next pod goes.
    PostReady,
    /// A whole-cluster gate before each step opens (again after `--recheck`).
    BeforeStep,
    /// Names the pod that rolls last (the leader, the primary, the active controller).
    LastBy,
}

impl GateKind {
    /// Every kind, in the order a step meets them: the one list the words, the flags, the
    /// record's words and the scenario's `gates=` follow (a new kind is a variant, its word
    /// here, its slot in [`Gates::slot`] and its rule in `plan::gated`).
    pub const ALL: [GateKind; 4] =
        [GateKind::BeforeStep, GateKind::PreDelete, GateKind::PostReady, GateKind::LastBy];

    /// Its word: the flag's name without `--`, the record's and the scenario's word.
    pub fn word(self) -> &'static str {
        match self {
            GateKind::PreDelete => "pre-delete",
            GateKind::PostReady => "post-ready",
            GateKind::BeforeStep => "before-step",
            GateKind::LastBy => "last-by",
        }
    }

    pub fn from_word(w: &str) -> Option<GateKind> {
        GateKind::ALL.into_iter().find(|k| k.word() == w)
    }

    /// `before-step, pre-delete, post-ready or last-by` (`joiner` before the last: "or", "and").
    pub fn all_words(joiner: &str) -> String {
        let words: Vec<&str> = GateKind::ALL.iter().map(|k| k.word()).collect();
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                format!("{} {joiner} {last}", rest.join(", "))
            }
            _ => words.concat(),
        }
    }
}

/// A gate as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// `cmd:COMMAND`: run here with `sh -c`, the pod and step in its environment.
    Cmd(String),
    /// `exec:CONTAINER -- ARGV…`: run in the pod's container through the API's exec (the
    /// arguments split as a shell would, never run by one).
    Exec { container: String, argv: Vec<String> },
    /// `http::PORT/PATH` (`https::…`): a GET to the pod through the API server's pod proxy.
    Http { tls: bool, port: u16, path: String },
    /// `sim:`: a gate the simulator rehearses (it answers as the scenario's `gate` lines say).
    Sim,
}

/// The rehearsed gate's text.
pub const SIM: &str = "sim:";

/// Why a gate does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("{0:?}: expected cmd:COMMAND, exec:CONTAINER -- COMMAND… or http::PORT/PATH")]
    Form(String),
    #[error("{0:?}: a gate's command is empty")]
    Empty(String),
    #[error(
        "{0:?}: sim: gates are the simulator's rehearsal; expected cmd:COMMAND, exec:CONTAINER -- COMMAND… or http::PORT/PATH"
    )]
    Rehearsal(String),
    #[error("{0:?}: expected exec:CONTAINER -- COMMAND… (the container, then -- and the command)")]
    Exec(String),
    #[error("{0:?}: expected http::PORT/PATH, a port from 1 to 65535 and a path from /")]
    Http(String),
    #[error(
        "{0:?}: unknown placeholder {1}: expected {{namespace}}, {{set}}, {{pod}}, {{ordinal}}, {{zone}}, {{old}}, {{new}} or {{step}}"
    )]
    Placeholder(String, String),
}

/// The placeholders a gate may name, and the environment variable each is also in.
pub const PLACEHOLDERS: [(&str, &str); 8] = [
    ("namespace", "STSTUI_NAMESPACE"),
    ("set", "STSTUI_SET"),
    ("pod", "STSTUI_POD"),
    ("ordinal", "STSTUI_ORDINAL"),
    ("zone", "STSTUI_ZONE"),
    ("old", "STSTUI_OLD_REVISION"),
    ("new", "STSTUI_NEW_REVISION"),
    ("step", "STSTUI_STEP"),
];

impl Gate {
    pub fn parse(text: &str) -> Result<Gate, GateError> {
        let t = text.trim();
        let err_form = || GateError::Form(text.to_string());
        let gate = if t == SIM {
            Gate::Sim
        } else if let Some(cmd) = t.strip_prefix("cmd:") {
            if cmd.trim().is_empty() {
                return Err(GateError::Empty(text.to_string()));
            }
            Gate::Cmd(cmd.trim().to_string())
        } else if let Some(rest) = t.strip_prefix("exec:") {
            let bad = || GateError::Exec(text.to_string());
            let words = shlex::split(rest).ok_or_else(bad)?;
            let (container, argv) = match words.iter().position(|w| w == "--") {
                Some(1) => (words[0].clone(), words[2..].to_vec()),
                _ => return Err(bad()),
            };
            if argv.is_empty() || container.is_empty() {
                return Err(bad());
            }
            Gate::Exec { container, argv }
        } else if let Some((tls, rest)) = t
            .strip_prefix("http::")
            .map(|r| (false, r))
            .or_else(|| t.strip_prefix("https::").map(|r| (true, r)))
        {
            let bad = || GateError::Http(text.to_string());
            let (port, path) = rest.split_at(rest.find('/').ok_or_else(bad)?);
            let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(bad)?;
            if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(bad());
            }
            Gate::Http { tls, port, path: path.to_string() }
        } else {
            return Err(err_form());
        };
        for word in placeholders(t) {
            if !PLACEHOLDERS.iter().any(|(p, _)| *p == word) {
                return Err(GateError::Placeholder(text.to_string(), format!("{{{word}}}")));
            }
        }
        Ok(gate)
    }
}

/// The `{word}`s in `text`.
fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let word = &after[..close];
        if !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase()) {
            out.push(word);
        }
        rest = &after[close + 1..];
    }
    out
}

/// `text` with its placeholders replaced by `env`'s values (`quote`: each value quoted for a
/// shell). A value that is not a plain word (letters, digits, `.`, `_`, `-`) is refused: the
/// values come from the cluster (a node's zone label, names) and must never become syntax.
pub fn expand(text: &str, env: &[(&str, String)], quote: bool) -> Result<String, NotPlain> {
    let mut out = text.to_string();
    for (word, var) in PLACEHOLDERS {
        let key = format!("{{{word}}}");
        if !out.contains(&key) {
            continue;
        }
        let value = env.iter().find(|(k, _)| *k == var).map(|(_, v)| v.as_str()).unwrap_or("");
        if !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            return Err(NotPlain { key, value: crate::text::escape_controls(value).into_owned() });
        }
        let value = if quote { format!("'{value}'") } else { value.to_string() };
        out = out.replace(&key, &value);
    }
    Ok(out)
}

/// A placeholder whose value is not a plain word: the gate is not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} is {value:?}, not a plain word: the gate is not run")]
pub struct NotPlain {
    /// The placeholder (`{zone}`).
    pub key: String,
    /// Its value, escaped.
    pub value: String,
}

/// A gate run's verdict, by the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Go,
    NotYet,
    Fail,
}

impl Verdict {
    /// A process's exit code: 0 goes, 75 (EX_TEMPFAIL) is "not yet".
    pub fn of_exit(code: Option<i32>) -> Verdict {
        match code {
            Some(0) => Verdict::Go,
            Some(75) => Verdict::NotYet,
            _ => Verdict::Fail,
        }
    }

    /// An HTTP answer: 2xx goes, 503 and 429 are "not yet".
    pub fn of_http(status: u16) -> Verdict {
        match status {
            200..=299 => Verdict::Go,
            503 | 429 => Verdict::NotYet,
            _ => Verdict::Fail,
        }
    }
}

/// How a gate run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    /// In a few words: `exit 0`, `exit 75`, `HTTP 503`, `timed out after 2m: killed`.
    pub how: String,
    /// Its output's last lines (as produced: escaped where shown).
    pub tail: Vec<String>,
    pub took_ms: u64,
}

/// The gates one invocation asks, as recorded on the set (their texts: shown and compared,
/// never run from there).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gates {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_ready: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_by: Option<String>,
    /// `--last POD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// A "not yet" is asked again after this long, at most `tries` times; one run is killed
    /// after `timeout_seconds`.
    #[serde(default)]
    pub interval_seconds: u64,
    #[serde(default)]
    pub timeout_seconds: u64,
    #[serde(default)]
    pub tries: u32,
    /// `--before-step` is asked again this long after it first passed.
    #[serde(default)]
    pub recheck_seconds: u64,
}

impl Gates {
    /// Whether any gate or ordering is asked.
    pub fn is_empty(&self) -> bool {
        GateKind::ALL.iter().all(|k| self.text(*k).is_none()) && self.last.is_none()
    }

    /// Whether `self` and `other` ask the same (timings count only where a gate is asked: a
    /// record without gates does not store them).
    pub fn same(&self, other: &Gates) -> bool {
        (self.is_empty() && other.is_empty()) || self == other
    }

    /// The gate of `kind`, as typed.
    pub fn text(&self, kind: GateKind) -> Option<&str> {
        match kind {
            GateKind::PreDelete => self.pre_delete.as_deref(),
            GateKind::PostReady => self.post_ready.as_deref(),
            GateKind::BeforeStep => self.before_step.as_deref(),
            GateKind::LastBy => self.last_by.as_deref(),
        }
    }

    /// Where the gate of `kind` is kept (the record's field of that name).
    pub fn slot(&mut self, kind: GateKind) -> &mut Option<String> {
        match kind {
            GateKind::PreDelete => &mut self.pre_delete,
            GateKind::PostReady => &mut self.post_ready,
            GateKind::BeforeStep => &mut self.before_step,
            GateKind::LastBy => &mut self.last_by,
        }
    }

    /// `pre-delete cmd:./drain.sh, post-ready http::9644/ready, last web-0` (escaped: a record's
    /// gates come from the cluster).
    pub fn words(&self) -> String {
        let mut out: Vec<String> = GateKind::ALL
            .into_iter()
            .filter_map(|k| self.text(k).map(|t| format!("{} `{}`", k.word(), shown(t))))
            .collect();
        if let Some(p) = &self.last {
            out.push(format!("last {}", shown(p)));
        }
        if out.is_empty() { "none".into() } else { out.join(", ") }
    }

    /// `interval 10s, timeout 120s, tries 180, recheck 0s`: what differs when the gates' words
    /// do not.
    pub fn settings(&self) -> String {
        format!(
            "interval {}s, timeout {}s, tries {}, recheck {}s",
            self.interval_seconds, self.timeout_seconds, self.tries, self.recheck_seconds
        )
    }
}

fn shown(s: &str) -> String {
    crate::text::shown(s, 200)
}

/// Where the gate under way stands, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateStatus {
    Running,
    NotYet,
    Passed,
    Failed,
}

/// The gate under way (or last passed), on the record: what `explain`, JSON and the grid say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateState {
    /// `pre-delete`, `post-ready`, `before-step`, `last-by`.
    pub gate: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    pub status: GateStatus,
    /// Since when it stands so (RFC 3339).
    pub since: String,
    #[serde(default)]
    pub tries: u32,
    /// The last run's last lines (at most [`KEPT`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
}

/// Output lines a record keeps of a gate run (the set's annotations are small).
pub const KEPT: usize = 5;

impl GateState {
    /// `pre-delete gate on web-3: not yet (3 tries)` (escaped).
    pub fn words(&self) -> String {
        let on = self.pod.as_deref().map(|p| format!(" on {}", shown(p))).unwrap_or_default();
        let state = match self.status {
            GateStatus::Running => "running".to_string(),
            GateStatus::NotYet => match self.tries {
                1 => "not yet (1 try)".to_string(),
                n => format!("not yet ({n} tries)"),
            },
            GateStatus::Passed => "passed".to_string(),
            GateStatus::Failed => "failed".to_string(),
        };
        format!("{} gate{on}: {state}", shown(&self.gate))
    }
}

/// A pod a gate runs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatePod {
    pub name: String,
    pub ordinal: i32,
    pub uid: String,
    /// Its revision (its `controller-revision-hash`) when the gate was decided.
    pub revision: String,
}

/// What passed in this run, by gate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// A per-pod gate for the pod of this uid.
    Pod(GateKind, String),
    /// `--before-step` for this step, first run (0) or the recheck (1).
    Step(usize, u8),
}

/// What the decision knows of gates: which this invocation asks, and what passed in this run
/// (a pass is never read from the set: a resumed plan asks again).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gating {
    /// The kinds this invocation asks.
    pub asked: std::collections::BTreeSet<GateKind>,
    pub recheck_ms: u64,
    /// `--last POD`.
    pub last: Option<String>,
    pub passed: BTreeMap<Key, Timestamp>,
    /// `--last-by`'s answer, and how many pods were still to update when it was asked (asked
    /// again before each deletion: leadership moves as pods restart).
    pub leader: Option<(String, usize)>,
    /// When a gate last passed: progress, for `--stuck-after`.
    pub progress: Option<Timestamp>,
}

impl Gating {
    /// The gating of `gates` with nothing passed yet.
    pub fn of(gates: &Gates) -> Gating {
        Gating {
            asked: GateKind::ALL.into_iter().filter(|k| gates.text(*k).is_some()).collect(),
            recheck_ms: gates.recheck_seconds.saturating_mul(1000),
            last: gates.last.clone(),
            ..Gating::default()
        }
    }

    /// Whether a pod-by-pod gate is asked (a RollingUpdate step then opens one ordinal at a
    /// time).
    pub fn per_pod(&self) -> bool {
        self.asks(GateKind::PreDelete) || self.asks(GateKind::PostReady)
    }

    /// Whether this invocation asks the gate of `kind`.
    pub fn asks(&self, kind: GateKind) -> bool {
        self.asked.contains(&kind)
    }

    /// Whether a step opens gradually: any gate before its pods go.
    pub fn any(&self) -> bool {
        self.per_pod() || self.asks(GateKind::BeforeStep)
    }

    pub fn passed(&self, key: &Key) -> Option<Timestamp> {
        self.passed.get(key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_into_their_three_forms_and_bad_ones_are_named() {
        assert_eq!(Gate::parse("cmd:./isr-ok.sh {pod}"), Ok(Gate::Cmd("./isr-ok.sh {pod}".into())));
        assert_eq!(
            Gate::parse("exec:cassandra -- nodetool drain"),
            Ok(Gate::Exec {
                container: "cassandra".into(),
                argv: vec!["nodetool".into(), "drain".into()]
            })
        );
        assert_eq!(
            Gate::parse("exec:db -- sh -c 'test -f /ready'"),
            Ok(Gate::Exec {
                container: "db".into(),
                argv: vec!["sh".into(), "-c".into(), "test -f /ready".into()]
            })
        );
        assert_eq!(
            Gate::parse("http::9644/v1/broker/pre_restart_probe"),
            Ok(Gate::Http { tls: false, port: 9644, path: "/v1/broker/pre_restart_probe".into() })
        );
        for bad in [
            "./x.sh",
            "cmd:",
            "exec:db nodetool",
            "exec:-- x",
            "http::0/x",
            "http::80",
            "http::x/y",
        ] {
            assert!(Gate::parse(bad).is_err(), "{bad}");
        }
        let e = Gate::parse("cmd:x {host}").unwrap_err();
        assert!(e.to_string().contains("unknown placeholder {host}"), "{e}");
    }

    #[test]
    fn placeholders_take_plain_words_only() {
        let env = vec![("STSTUI_POD", "web-3".to_string()), ("STSTUI_ZONE", "a;rm -rf /".into())];
        assert_eq!(expand("./x.sh {pod}", &env, true).unwrap(), "./x.sh 'web-3'");
        assert_eq!(expand("/p/{pod}", &env, false).unwrap(), "/p/web-3");
        let e = expand("./x.sh {zone}", &env, true).unwrap_err();
        assert_eq!(e.key, "{zone}");
        assert!(e.to_string().contains("not a plain word"), "{e}");
    }

    #[test]
    fn the_contract_maps_exits_and_answers() {
        assert_eq!(Verdict::of_exit(Some(0)), Verdict::Go);
        assert_eq!(Verdict::of_exit(Some(75)), Verdict::NotYet);
        assert_eq!(Verdict::of_exit(Some(1)), Verdict::Fail);
        assert_eq!(Verdict::of_exit(None), Verdict::Fail);
        assert_eq!(Verdict::of_http(204), Verdict::Go);
        assert_eq!(Verdict::of_http(503), Verdict::NotYet);
        assert_eq!(Verdict::of_http(429), Verdict::NotYet);
        assert_eq!(Verdict::of_http(500), Verdict::Fail);
    }
}
