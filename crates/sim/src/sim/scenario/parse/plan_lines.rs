//! The plan lines: `rollout` (with the gates it rehearses) and `gate` (how a rehearsed gate
//! answers).

use super::super::{Command, GateArgs, LineError};
use super::{Args, duration, int};
use crate::plan::gate::{GateKind, Gates};
use crate::value::BadValue;

/// The keys of a `rollout` line.
const ROLLOUT_KEYS: &[&str] = &[
    "group",
    "zone-bake",
    "order",
    "batches",
    "steps",
    "bake",
    "stuck-after",
    "on-failure",
    "gates",
    "last",
    "recheck",
    "gate-interval",
    "gate-tries",
    "replace-stuck",
    "image",
    "clusters",
    "cluster-bake",
];

/// `rollout NAME steps=LIST [bake=DUR] [stuck-after=DUR] [on-failure=hold|undo]
/// [gates=LIST] [last=POD] [recheck=DUR] [gate-interval=DUR] [gate-tries=N]
/// [replace-stuck=true|false] [image=IMAGE]`. `image=` is a Recreate set's: its plan sets the
/// image itself when its one step opens, after the step's gates (as `ststui rollout --image`).
///
/// `rollout group=NAME …` (the same keys, and `[zone-bake=DUR] [order=TIER,…]`): the
/// namespace's sets labelled `rollout-group=NAME` rolled one at a time.
///
/// `clusters=A,B,C [cluster-bake=DUR]` on either: a fleet rehearsed, each cluster a namespace
/// of the simulation (the set, or the group, in each, one cluster after the other).
pub(super) fn rollout(a: Args<'_>) -> Result<Command, LineError> {
    let mut a = a;
    let group = a.value("group");
    let set = match group {
        Some(g) => super::parse_name(g).map_err(|m| a.err(m))?,
        None => a.name("NAME")?,
    };
    if group.is_none() {
        for key in ["zone-bake", "order", "batches"] {
            if a.value(key).is_some() {
                return Err(a.err(format_args!(
                    "{key}= orders a group: give group=NAME instead of a set's name"
                )));
            }
        }
    }
    a.finish(ROLLOUT_KEYS)?;
    let clusters = a.parsed("clusters", clusters)?;
    if clusters.is_none() && a.value("cluster-bake").is_some() {
        return Err(a.err("cluster-bake= is a fleet's: give clusters=A,B,C too"));
    }
    if clusters.is_some() && a.value("image").is_some() {
        return Err(a.err("image= is a Recreate set's plan's, not a fleet's"));
    }
    if group.is_some() && a.value("image").is_some() {
        return Err(a.err("image= is a Recreate set's plan's: give the set's name, not group="));
    }
    let image = a.value("image").map(str::to_string);
    let batches = a.parsed("batches", crate::value::batches)?;
    let steps = match (a.parsed("steps", crate::plan::Steps::parse)?, &batches) {
        (Some(_), Some(_)) => return Err(a.err("give steps= or batches=, not both")),
        (Some(s), None) => s,
        // Resolved per set; this stands for them where one plan is shown.
        (None, Some(_)) => crate::plan::Steps(vec![crate::plan::StepSpec::Percent(100)]),
        (None, None) => {
            return Err(a.err("give steps=LIST, e.g. steps=1,50%,100% (pause for a manual gate)"));
        }
    };
    let bake_ms = a.parsed("bake", duration)?.unwrap_or(0);
    if !bake_ms.is_multiple_of(1000) {
        return Err(a.err(format_args!("bake={bake_ms}ms: expected whole seconds (e.g. 30s)")));
    }
    let stuck_after_ms = a.parsed("stuck-after", duration)?.unwrap_or(600_000);
    if stuck_after_ms == 0 {
        return Err(a.err("stuck-after=0: expected a duration above zero (e.g. 5m)"));
    }
    let on_failure = a.parsed("on-failure", |v| match v {
        "hold" => Ok(crate::plan::OnFailure::Hold),
        "undo" => Ok(crate::plan::OnFailure::Undo),
        _ => Err(BadValue::new(v, "is not an answer to a failure", "hold or undo")),
    })?;
    let mut gates = Gates::default();
    for kind in a.parsed("gates", kinds)?.unwrap_or_default() {
        *gates.slot(kind) = Some(crate::plan::gate::SIM.to_string());
    }
    gates.last = a.value("last").map(str::to_string);
    if gates.last.is_some() && gates.last_by.is_some() {
        return Err(a.err("last= and gates=…last-by both name the pod rolled last: give one"));
    }
    let seconds = |key: &str| -> Result<u64, LineError> {
        let ms = a.parsed(key, duration)?.unwrap_or(0);
        if !ms.is_multiple_of(1000) {
            return Err(a.err(format_args!("{key}={ms}ms: expected whole seconds (e.g. 30s)")));
        }
        Ok(ms / 1000)
    };
    gates.recheck_seconds = seconds("recheck")?;
    gates.interval_seconds = seconds("gate-interval")?;
    gates.tries = a
        .parsed("gate-tries", |v| match int(v) {
            Ok(n) if n >= 1 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
            _ => Err(BadValue::new(v, "is not a count of tries", "a number from 1")),
        })?
        .unwrap_or(0);
    let replace_stuck = a.parsed("replace-stuck", super::boolean)?.unwrap_or(false);
    let zone_bake_seconds = seconds("zone-bake")?;
    let cluster_bake_seconds = seconds("cluster-bake")?;
    let tiers = a.parsed("order", |v| {
        let tiers: Vec<String> = v.split(',').map(|t| t.trim().to_string()).collect();
        if tiers.iter().any(String::is_empty) {
            return Err(BadValue::new(v, "is not a tier order", "tiers like fe,be"));
        }
        Ok(tiers)
    })?;
    Ok(Command::Rollout(Box::new(super::super::RolloutArgs {
        group: group.is_some(),
        zone_bake_seconds,
        tiers,
        batches,
        set,
        steps,
        bake_seconds: bake_ms / 1000,
        stuck_after_ms,
        on_failure: on_failure.unwrap_or_default(),
        gates,
        replace_stuck,
        image,
        clusters,
        cluster_bake_seconds,
    })))
}

/// `clusters=eu,us,ap`: a fleet's clusters, each a namespace of the simulation (a DNS label),
/// each once.
fn clusters(v: &str) -> Result<Vec<String>, BadValue> {
    let names: Vec<String> = v.split(',').map(|c| c.trim().to_string()).collect();
    let label = |c: &str| {
        !c.is_empty()
            && c.len() <= 63
            && c.chars().all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '-')
            && !c.starts_with('-')
            && !c.ends_with('-')
    };
    let expected = "namespaces (DNS labels), each once, e.g. eu,us,ap";
    if names.iter().any(|c| !label(c)) {
        return Err(BadValue::new(v, "is not a list of clusters", expected));
    }
    if names.iter().enumerate().any(|(i, c)| names[..i].contains(c)) {
        return Err(BadValue::new(v, "names a cluster twice", expected));
    }
    Ok(names)
}

/// `pre-delete,post-ready`.
fn kinds(v: &str) -> Result<Vec<GateKind>, BadValue> {
    v.split(',')
        .map(|w| {
            GateKind::from_word(w.trim())
                .ok_or_else(|| BadValue::new(w, "is not a gate", GateKind::all_words("or")))
        })
        .collect()
}

/// `gate NAME KIND [fail] [slow=DUR] [not-yet=N] [leader=POD] [pass]`: how the rehearsed gate of
/// KIND answers for pod NAME (the set's name for before-step and last-by).
pub(super) fn gate(a: Args<'_>) -> Result<Command, LineError> {
    let mut a = a;
    let name = a.name("NAME")?;
    let word = a.word("KIND")?;
    let kind = GateKind::from_word(word).ok_or_else(|| {
        a.err(format_args!("{word:?} is not a gate: expected {}", GateKind::all_words("or")))
    })?;
    let mut fail = false;
    let mut pass = false;
    while let Some(w) = a.optional_word() {
        match w {
            "fail" => fail = true,
            "pass" => pass = true,
            _ => {
                return Err(a.err(format_args!(
                    "unexpected argument {w:?} (expected fail, pass or key=value)"
                )));
            }
        }
    }
    a.finish(&["slow", "not-yet", "leader"])?;
    let slow_ms = a.parsed("slow", duration)?;
    let not_yet = a.parsed("not-yet", |v| match int(v) {
        Ok(n) if n >= 0 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        _ => Err(BadValue::new(v, "is not a count", "a number from 0")),
    })?;
    let leader = a.value("leader").map(str::to_string);
    if leader.is_some() && kind != GateKind::LastBy {
        return Err(a.err("leader= is what a last-by gate prints: give it with last-by"));
    }
    if pass && (fail || slow_ms.is_some() || not_yet.is_some()) {
        return Err(a.err("pass clears the gate's faults: give it alone"));
    }
    Ok(Command::Gate(Box::new(GateArgs { name, kind, fail, slow_ms, not_yet, leader })))
}
