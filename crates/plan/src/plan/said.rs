//! What a plan's moves are called, the same in every runner's output and timeline: a step
//! opened (`step 1/3: partition 4 → 3 (opens web-3)`; an OnDelete plan speaks of pods, not
//! partition numbers), a phase entered, a halt (with the partition the server holds), and the
//! checks' environment.
//!
//! Owns: these words. Pure.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::decide;
use super::facts::previous_partition;
use super::record::{Phase, Record, steps_words};
use super::start::Start;
use super::{Target, duration_words};
use crate::backend::ObjRef;
use crate::core::spec;

/// `step 2/3`.
pub fn at(r: &Record) -> String {
    format!("step {}/{}", r.step, r.of)
}

/// A step opened by moving the partition from `from` to `to`.
pub fn opened(set: &StatefulSet, r: &Record, from: i32, to: i32) -> String {
    format!("{}: partition {from} → {to}{}", at(r), decide::opens(set, to, from))
}

/// A Recreate step opened by the plan's template write.
pub fn recreating(set: &StatefulSet, r: &Record, image: &str) -> String {
    let name = set.metadata.name.as_deref().unwrap_or_default();
    format!(
        "{}: image {} set on {name} (Recreate: the controller deletes every old pod now, then \
         creates the new ones)",
        at(r),
        crate::text::shown(image, 200)
    )
}

/// The pods a step of an OnDelete plan updates (`web-3`, `web-3, web-2`, `web-3 … web-1, 3
/// pods`), from the partition it stands for to the one before.
fn step_pods(set: &StatefulSet, r: &Record) -> String {
    let name = set.metadata.name.as_deref().unwrap_or_default();
    let start = spec::start_ordinal(set);
    let before = previous_partition(r, spec::replicas(set)).min(spec::replicas(set));
    let (hi, lo) = (start + before - 1, start + r.partition);
    match before - r.partition {
        n if n <= 0 => "no pod".into(),
        1 => format!("{name}-{hi}"),
        2 => format!("{name}-{hi}, {name}-{lo}"),
        n => format!("{name}-{hi} … {name}-{lo}, {n} pods"),
    }
}

/// A phase entered (the record written).
pub fn entered(set: &StatefulSet, r: &Record) -> String {
    match r.phase {
        Phase::Waiting if spec::strategy(set).recreate => match r.target {
            Some(_) => format!(
                "{}: every pod of {} (Recreate: the plan sets the image once its gates pass, and \
                 the controller replaces them all at once)",
                at(r),
                set.metadata.name.as_deref().unwrap_or_default()
            ),
            None => format!(
                "{}: every pod of {} (Recreate: the controller replaces them all at once): waiting for them",
                at(r),
                set.metadata.name.as_deref().unwrap_or_default()
            ),
        },
        Phase::Waiting if spec::strategy(set).on_delete => format!(
            "{}: updates {} (OnDelete: each evicted in turn, highest first, once the one before \
             is back updated and Ready)",
            at(r),
            step_pods(set, r)
        ),
        Phase::Waiting => match r.target {
            Some(to) => format!(
                "{}: partition {} → {to}{} through its gates, one pod at a time",
                at(r),
                r.partition,
                decide::opens(set, to, r.partition)
            ),
            None => format!(
                "{}: partition {} (its pods open already): waiting for them",
                at(r),
                r.partition
            ),
        },
        Phase::Done => {
            let st = spec::strategy(set);
            let end = match (st.on_delete, st.recreate) {
                (true, _) => "every pod of its steps updated".to_string(),
                (_, true) => "every pod recreated on the new revision".to_string(),
                _ => format!("partition {}", r.partition),
            };
            format!("plan done: {} ({}), {end}", steps_words(r.of), r.steps)
        }
        _ => r.phase_words(),
    }
}

/// A halt, with what holds now: the partition the server holds, or the freeze.
pub fn halted(
    r: &Record,
    set: &StatefulSet,
    now: k8s_openapi::jiff::Timestamp,
    frozen: bool,
) -> String {
    let st = spec::strategy(set);
    let holds = if frozen {
        "the set is frozen: nothing further opens".to_string()
    } else if st.on_delete {
        "no further pod is deleted".to_string()
    } else {
        format!("the partition holds at {}: nothing further opens", st.partition)
    };
    format!("{}; {holds}", r.words(now))
}

/// The checks' environment for step `r` of `key`.
pub fn check_env(key: &ObjRef, r: &Record, set: &StatefulSet) -> Vec<(&'static str, String)> {
    let start = spec::start_ordinal(set);
    let replicas = spec::replicas(set);
    let before = previous_partition(r, replicas);
    let pods: Vec<String> = (r.partition..before.min(replicas))
        .map(|i| format!("{}-{}", key.name, start + i))
        .collect();
    vec![
        ("STSTUI_NAMESPACE", key.namespace.clone()),
        ("STSTUI_SET", key.name.clone()),
        ("STSTUI_STEP", r.step.to_string()),
        ("STSTUI_STEPS", r.of.to_string()),
        ("STSTUI_PARTITION", r.partition.to_string()),
        ("STSTUI_PODS", pods.join(" ")),
        ("STSTUI_BAKE", duration_words(r.bake_seconds.saturating_mul(1000))),
    ]
}

/// A gate's environment: the checks' and the gate, the pod and its ordinal, the old and the
/// new revision (the adapter adds STSTUI_ZONE, the pod's node's zone).
pub fn gate_env(
    key: &ObjRef,
    r: &Record,
    set: &StatefulSet,
    kind: super::gate::GateKind,
    pod: Option<&super::gate::GatePod>,
) -> Vec<(&'static str, String)> {
    let mut env = check_env(key, r, set);
    env.push(("STSTUI_GATE", kind.word().to_string()));
    if let Some(p) = pod {
        env.push(("STSTUI_POD", p.name.clone()));
        env.push(("STSTUI_ORDINAL", p.ordinal.to_string()));
    }
    env.push(("STSTUI_OLD_REVISION", old_revision(r, set, kind, pod)));
    env.push(("STSTUI_NEW_REVISION", r.revision.clone()));
    env
}

/// The revision a gate's pod leaves (`{old}`): a pod about to go runs it (its own label);
/// otherwise the revision the plan rolls from, as its record says — never the status's current
/// revision once it has moved on to the plan's (the last pod of a plan).
fn old_revision(
    r: &Record,
    set: &StatefulSet,
    kind: super::gate::GateKind,
    pod: Option<&super::gate::GatePod>,
) -> String {
    if let Some(p) = pod.filter(|p| {
        kind == super::gate::GateKind::PreDelete
            && !p.revision.is_empty()
            && p.revision != r.revision
    }) {
        return p.revision.clone();
    }
    if !r.from.is_empty() {
        return r.from.clone();
    }
    // A record older than `from`: the status's current revision while it is not the plan's.
    let current = set.status.as_ref().and_then(|s| s.current_revision.clone()).unwrap_or_default();
    if current == r.revision { String::new() } else { current }
}

/// The plan in words before it starts: each step with the partition it moves from and to (an
/// OnDelete set: the pods it updates).
pub fn preview(key: &ObjRef, set: &StatefulSet, start: &Start) -> Vec<String> {
    let replicas = spec::replicas(set);
    let st = spec::strategy(set);
    let mut lines = vec![if st.recreate {
        format!(
            "plan for {key}: {replicas} replicas, Recreate (the controller replaces every pod at \
             once when the template changes)"
        )
    } else if st.on_delete {
        format!("plan for {key}: {replicas} replicas, OnDelete (ststui deletes each pod in turn)")
    } else {
        format!("plan for {key}: {replicas} replicas, partition {} now", st.partition)
    }];
    let mut before = if st.on_delete { replicas } else { st.partition.min(replicas) };
    let name = &key.name;
    let first = spec::start_ordinal(set);
    for (i, (spec, t)) in start.steps.0.iter().zip(start.steps.targets(replicas)).enumerate() {
        lines.push(match t {
            Target::Update { updated, partition } => {
                let how = if st.recreate {
                    "every pod at once".to_string()
                } else if st.on_delete {
                    match before - partition {
                        n if n <= 0 => "no further pod".to_string(),
                        1 => format!("updates {name}-{}", first + partition),
                        n => format!(
                            "updates {name}-{} … {name}-{}, {n} pods",
                            first + before - 1,
                            first + partition
                        ),
                    }
                } else if partition < before {
                    format!("partition {before} → {partition}")
                } else {
                    format!("partition {partition} (open already: its pods are checked)")
                };
                before = before.min(partition);
                format!("  step {}: {spec} → {updated} of {replicas} updated ({how})", i + 1)
            }
            Target::Gate => {
                format!("  step {}: pause until `ststui approve {}`", i + 1, key.name)
            }
        });
    }
    let checks = if start.checks.is_empty() {
        "no checks".to_string()
    } else {
        let list: Vec<String> = start.checks.iter().map(|c| format!("`{c}`")).collect();
        format!("checks {}", list.join(", "))
    };
    lines.push(format!(
        "  then: wait for the step's pods to be updated, Ready and available; bake {}; {checks}; \
         on failure: {}",
        duration_words(start.bake_seconds * 1000),
        start.on_failure.word()
    ));
    if !start.gates.is_empty() {
        let how = if st.recreate {
            "(before-step before the template changes, post-ready on each pod as it is back)"
        } else if st.on_delete {
            "around each pod ststui evicts"
        } else {
            "around each pod: the partition opens one ordinal at a time"
        };
        lines.push(format!("  gates {how}: {}", start.gates.words()));
    }
    lines
}

/// `text` with what counts masked: numbers followed by a unit of time (`20s`, `1m12s`,
/// `250ms`), times of day, tries (`try 2 of 180`, `3 tries`).
pub fn counters_masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
            .unwrap_or(tail.len());
        let (run, after) = tail.split_at(end);
        let unit_len = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        let unit = &after[..unit_len];
        let timed = matches!(unit, "s" | "ms" | "m" | "h" | "tries" | "try")
            || run.contains(':')
            || unit.chars().all(|c| "hms".contains(c)) && !unit.is_empty();
        let counted = out.ends_with("try ") || out.ends_with(" of ") && after.starts_with(')');
        if timed || counted {
            if !out.ends_with('#') {
                out.push('#');
            }
            rest = if timed { &after[unit_len..] } else { after };
        } else {
            out.push_str(run);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}
