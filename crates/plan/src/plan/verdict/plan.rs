//! The verdict of a set under a plan or in a rollout group: the plan's record says what the
//! runner is at (its phase, its gate), its lease whether anyone runs it, a group's parts where
//! the set stands in its group; the pods say what is still to move. A record never makes a set
//! done.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::pods::{at, observed, revisions};
use super::{Clock, Facts, Move, On, Pods, Row, Tally, Verdict, name_of};
use crate::core::pod as podf;
use crate::core::spec;
use crate::plan::group::held::{First, Held};
use crate::plan::group::part::{self, Part, State};
use crate::plan::record::{self, Phase, Reading, Record, Runner};

/// The set's plan when it is about the update revision the set rolls out now (a plan of an
/// older template is history).
pub fn current_plan(set: &StatefulSet) -> Option<Record> {
    let r = record::read(set).plan().cloned()?;
    current(set, &r).then_some(r)
}

fn current(set: &StatefulSet, r: &Record) -> bool {
    match crate::plan::decide::observed_update_revision(set) {
        Some(update) => update == r.revision,
        // Not observed yet: the record's template hash says whether it is the same spec.
        None => r.template.is_empty() || r.template == record::template_hash(set),
    }
}

/// The verdict of a set whose plan record is unreadable, or whose plan on the revision it
/// rolls out is under way or halted; `None` otherwise (a plan done or aborted says nothing of
/// the pods: they are judged).
pub(super) fn of(f: &Facts<'_>, tally: Tally) -> Option<Verdict> {
    let set = f.set;
    let name = name_of(set);
    let abort = || Move::new(format!("ststui abort {name}"), "rolls back to the previous revision");
    let r = match record::read(set) {
        Reading::None => return None,
        Reading::Invalid(why) => {
            let why = format!("the plan record ({}) is invalid: {why}", record::PLAN);
            let clear = Move::new(format!("ststui abort {name}"), "clears it");
            return Some(Verdict::of(Row::Invalid, None, why, tally).then(clear));
        }
        Reading::Plan(r) if current(set, &r) => *r,
        Reading::Plan(_) => return None,
    };
    let resume = rerun(set, &r);
    let now = f.now;
    match r.phase {
        Phase::Done | Phase::Aborted => return None,
        Phase::Halted => {
            let cont = Move::new(
                format!("{} --continue {}", resume.0, resume.1),
                &does("goes on once it is fixed", Some(&r)),
            );
            let v = Verdict::of(Row::Halted, None, r.words(now), tally);
            return Some(v.then(cont).or_else(abort()));
        }
        _ => {}
    }
    let runner = Runner::of(set, now);
    if !runner.alive() {
        let why = format!("{}: {}; {}", at_words(&r), r.phase.word(), runner.words());
        let v = Verdict::of(Row::Stalled, Some(On::Runner), why, tally);
        return Some(v.then(resume_move(set, &r)).or_else(abort()));
    }
    if r.phase == Phase::Gate {
        let approve = Move::new(format!("ststui approve {name}"), "passes the gate");
        let why = format!("{}: waiting for approval", at_words(&r));
        let v = Verdict::of(Row::Approval, Some(On::Approval), why, tally);
        return Some(v.then(approve).timed(r.since().map(Clock::Since)));
    }
    let (on, why, pod, clock) = waiting_on(f, &r);
    Some(Verdict::of(Row::Plan, Some(on), why, tally).naming(pod).timed(clock))
}

/// "plan 2/4 (50%)".
fn at_words(r: &Record) -> String {
    let step = r.parsed_steps().ok().and_then(|s| s.0.get(r.step.wrapping_sub(1)).copied());
    let what = step.map(|s| format!(" ({s})")).unwrap_or_default();
    format!("plan {}/{}{what}", r.step, r.of)
}

/// The command that runs the set's plan again (its group's, or its own) and the flags that
/// state the plan `r` records again.
fn rerun(set: &StatefulSet, r: &Record) -> (String, String) {
    match group_of_set(set) {
        Some((p, cmd)) => (cmd, restated(&p.steps, Some(r), p.zone_bake_seconds)),
        None => (format!("ststui rollout {}", name_of(set)), restated(&r.steps, Some(r), 0)),
    }
}

/// The command that resumes the plan `r` on `set` (its group's when it is in one), stating what
/// it records: a resume takes its steps, bake and policy from the command, never from the
/// record, and refuses one that differs.
pub fn resume_move(set: &StatefulSet, r: &Record) -> Move {
    let (cmd, flags) = rerun(set, r);
    Move::new(format!("{cmd} {flags}"), &does("resumes it", Some(r)))
}

/// The flags that state a recorded plan again: its steps, a group's zone bake, the record's
/// bake and failure policy — values checked here, never a command. Checks and gates are
/// commands: a set's record is a claim, so ststui never prints one to be copied ([`does`]
/// asks for them instead).
fn restated(steps: &str, r: Option<&Record>, zone_bake: u64) -> String {
    let mut out = steps_flag(steps);
    if zone_bake > 0 {
        out.push_str(&format!(" --zone-bake {}", duration_flag(zone_bake)));
    }
    if let Some(r) = r {
        if r.bake_seconds > 0 {
            out.push_str(&format!(" --bake {}", duration_flag(r.bake_seconds)));
        }
        if r.on_failure == crate::plan::OnFailure::Undo.word() {
            out.push_str(" --on-failure undo");
        }
    }
    out
}

/// What a move does, and, when the plan it restates ran checks or gates, that they are to be
/// given again (the command above names none of them).
fn does(what: &str, r: Option<&Record>) -> String {
    match r.is_some_and(|r| !r.checks.is_empty() || !r.gates.is_empty()) {
        true => format!("{what}, given the checks and gates it began with again"),
        false => what.to_string(),
    }
}

/// `90s`, `5m`, `1h30m`: a duration as the flags take it, whole.
fn duration_flag(seconds: u64) -> String {
    let ms = seconds.saturating_mul(1000);
    let words = crate::plan::duration_words(ms);
    match crate::value::duration(&words) {
        Ok(back) if back == ms => words,
        _ => format!("{seconds}s"),
    }
}

/// `--steps 1,100%` (or `--batches 1,2,4` for a group's batches), as recorded.
fn steps_flag(steps: &str) -> String {
    let shown = crate::text::escape_controls(steps);
    match shown.strip_prefix("batches ") {
        Some(b) => format!("--batches {b}"),
        None => format!("--steps {shown}"),
    }
}

/// What a plan under way (not at its manual gate) waits on: its bake, its checks, a gate, a
/// budget, or the step's pods; in words without counters (the clock apart).
fn waiting_on(f: &Facts<'_>, r: &Record) -> (On, String, Option<String>, Option<Clock>) {
    let now = f.now;
    let at = at_words(r);
    let pods: &[(i32, &Pod)] = match f.pods {
        Pods::Seen(p) => p,
        _ => &[],
    };
    let opening_left = r.step < r.of || r.target.is_some();
    let on_delete = spec::strategy(f.set).on_delete;
    let bake_over = r.since().is_some_and(|s| {
        now.duration_since(s).as_secs() >= i64::try_from(r.bake_seconds).unwrap_or(i64::MAX)
    });
    let bake_end = r.since().and_then(|s| {
        s.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(
            i64::try_from(r.bake_seconds).unwrap_or(i64::MAX),
        ))
        .ok()
    });
    match r.phase {
        Phase::Baking if !(bake_over && opening_left && !on_delete) => {
            let bake = crate::plan::duration_words(r.bake_seconds.saturating_mul(1000));
            (On::Bake, format!("{at}: baking {bake}"), None, bake_end.map(Clock::Until))
        }
        Phase::Checking => (On::Checks, format!("{at}: running its checks"), None, None),
        Phase::Waiting if let Some(g) = r.gate_waiting() => {
            let shown = |t: &str| crate::text::escape_controls(t).into_owned();
            let on = g.pod.as_deref().map(|p| format!(" on {}", shown(p))).unwrap_or_default();
            let state = match g.status {
                crate::plan::gate::GateStatus::Running => "running",
                _ => "not yet",
            };
            let why = format!("{at}: waiting on the {} gate{on}: {state}", shown(&g.gate));
            let since = g.since.parse().ok().map(Clock::Since);
            (On::Gate, why, g.pod.clone(), since)
        }
        _ => {
            let pending = step_pending(f, r, pods);
            let name = name_of(f.set);
            let step = &at;
            let only_old = !pending.is_empty() && pending.iter().all(|(_, w)| w == TO_UPDATE);
            let may_open = if on_delete { only_old } else { pending.is_empty() && opening_left };
            if may_open && let Some(pdb) = budget(f, pods) {
                let why = if on_delete {
                    let next = pending.last().map(|(o, _)| *o).unwrap_or_default();
                    format!(
                        "{step}: waits to evict {}: {pdb}",
                        crate::core::labels::pod_name(&name, next)
                    )
                } else {
                    format!(
                        "{step}: waits to open: {pdb} (the controller deletes a rolling \
                         update's pods without asking it, so the plan asks)"
                    )
                };
                return (On::Budget, why, None, None);
            }
            if let Some((o, _)) = pending.first() {
                let list: Vec<(i32, &str)> =
                    pending.iter().map(|(o, w)| (*o, w.as_str())).collect();
                let words = crate::plan::decide::pending_words(&name, &list);
                let pod = crate::core::labels::pod_name(&name, *o);
                return (On::Pods, format!("{step}: waiting for {words}"), Some(pod), None);
            }
            let what = match r.phase {
                Phase::Approved => "approved, moving on",
                p => p.word(),
            };
            (On::Pods, format!("{at}: {what}"), None, None)
        }
    }
}

const TO_UPDATE: &str = "to be updated";

/// The ordinals the plan's step has opened that are not yet updated, Ready and available.
fn step_pending(f: &Facts<'_>, r: &Record, pods: &[(i32, &Pod)]) -> Vec<(i32, String)> {
    if !matches!(f.pods, Pods::Seen(_)) || !observed(f.set) {
        return Vec::new();
    }
    let (update, _) = revisions(f.set);
    let min_ready = spec::min_ready(f.set, f.sem);
    crate::plan::decide::opened(f.set, r.partition)
        .filter_map(|o| {
            let what = match at(pods, o) {
                None => "to be created".to_string(),
                Some(p) if podf::is_terminating(p) => "to be gone (terminating)".into(),
                Some(p) if podf::revision(p) != update => TO_UPDATE.into(),
                Some(p) if !podf::is_running_and_ready(p) => match crate::core::why::reason(p) {
                    Some(w) => format!("to be Ready ({})", crate::text::escape_controls(&w)),
                    None => "to be Ready".into(),
                },
                Some(p) if !podf::is_running_and_available(p, min_ready, f.now) => {
                    "to be available (minReadySeconds)".into()
                }
                Some(_) => return None,
            };
            Some((o, what))
        })
        .collect()
}

/// A disruption budget over the set's pods that allows no disruption, described.
fn budget(f: &Facts<'_>, pods: &[(i32, &Pod)]) -> Option<String> {
    let pdb = f.budgets.iter().copied().find(|b| {
        let allowed = b.status.as_ref().and_then(|s| s.disruptions_allowed).unwrap_or(0);
        allowed <= 0 && pods.iter().any(|(_, p)| crate::core::budget::selects(b, p))
    })?;
    Some(crate::text::escape_controls(&crate::core::budget::describe(pdb)).into_owned())
}

/// The set's group part (when it has one that holds together) and the command that runs its
/// group: by its `rollout-group` label when every member carries it, else by name.
fn group_of(f: &Facts<'_>) -> Option<(Part, String)> {
    group_of_set(f.set)
}

fn group_of_set(set: &StatefulSet) -> Option<(Part, String)> {
    let p = part::read(set).part().cloned()?;
    let label = |s: &StatefulSet| {
        s.metadata.labels.as_ref().and_then(|l| l.get(part::ROLLOUT_GROUP)).cloned()
    };
    let group = crate::text::escape_controls(&p.group).into_owned();
    let cmd = if label(set).as_deref() == Some(p.group.as_str()) {
        format!("ststui rollout -l {}={group}", part::ROLLOUT_GROUP)
    } else {
        let names: Vec<String> =
            p.sets.iter().map(|s| crate::text::escape_controls(s).into_owned()).collect();
        format!("ststui rollout --group {}", names.join(","))
    };
    Some((p, cmd))
}

/// A set its rollout group's plan has waiting, while an update waits on its pods: waiting for
/// the sets before it (the group's runner live), or stuck (the group halted, or its runner
/// gone). A part saying anything else — rolling without a plan under way, done — is judged by
/// the pods.
pub(super) fn group(f: &Facts<'_>, tally: Tally, by_pods: &Verdict) -> Option<Verdict> {
    let (p, cmd) = group_of(f)?;
    if p.state != State::Waiting || by_pods.row == Row::Healthy {
        return None;
    }
    let own = crate::core::spec::name(f.set);
    let lookup = |n: &str| -> Option<&StatefulSet> {
        if n == own {
            return Some(f.set);
        }
        f.sets.iter().copied().find(|s| s.metadata.name.as_deref() == Some(n))
    };
    let standing = part::whole(&p, lookup);
    // The plan a member records (the group's steps, bake and policy stated again from it).
    let recorded = |n: &str| lookup(n).and_then(current_plan);
    let place = p.place_words();
    let shown = |s: &str| crate::text::escape_controls(s).into_owned();
    let clipped = |s: &str| crate::text::shown(s, record::REASON_SAID);
    if let Some(h) = standing.iter().find(|s| s.state == Some(State::Halted)) {
        let reason = h.reason.as_deref().map(|r| format!(": {}", clipped(r))).unwrap_or_default();
        let why = format!("{place}, and the group halted at {}{reason}", shown(&h.set));
        let r = recorded(&h.set);
        let cont = Move::new(
            format!("{cmd} --continue {}", restated(&p.steps, r.as_ref(), p.zone_bake_seconds)),
            &does("goes on once it is fixed", r.as_ref()),
        );
        let abort = Move::new(
            format!("ststui abort {} --group", shown(&h.set)),
            "rolls the group back, newest first",
        );
        let v = Verdict::of(Row::GroupHalted, Some(On::Group), why, tally);
        return Some(v.then(cont).or_else(abort));
    }
    let held = Held::of(f.set, |n| lookup(n).map_or(First::Unseen, First::Seen), f.now);
    if let Held::Orphaned { runner, .. } = &held {
        let why = format!("{place}; the group has {}", runner.words());
        let r = p.sets.iter().find_map(|n| recorded(n));
        let flags = restated(&p.steps, r.as_ref(), p.zone_bake_seconds);
        let go = Move::new(format!("{cmd} {flags}"), &does("resumes the group", r.as_ref()));
        return Some(Verdict::of(Row::GroupStalled, Some(On::Runner), why, tally).then(go));
    }
    let earlier = standing.iter().take(p.place).find(|s| s.state != Some(State::Done));
    let seen =
        if matches!(held, Held::Unknown(_)) { " (its runner not seen from here)" } else { "" };
    let v = |what: String| {
        let mut v =
            Verdict::of(Row::GroupWaiting, Some(On::Group), format!("{place}: {what}"), tally);
        v.short = Some(what);
        v
    };
    if let Some(e) = earlier {
        return Some(v(format!("{} rolls first{seen}", shown(&e.set))));
    }
    // The zone bake after the set before it: from when its part says it was done.
    let previous = p.place.checked_sub(1).and_then(|i| standing.get(i));
    let bake_end = previous
        .filter(|_| p.zone_bake_seconds > 0)
        .and_then(|s| s.since.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .and_then(|t| {
            let bake = i64::try_from(p.zone_bake_seconds).unwrap_or(i64::MAX);
            t.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(bake)).ok()
        })
        .filter(|end| *end > f.now);
    if let (Some(end), Some(prev)) = (bake_end, previous) {
        let bake = crate::plan::duration_words(p.zone_bake_seconds.saturating_mul(1000));
        let what = format!("the zone bake of {bake} after {} first{seen}", shown(&prev.set));
        return Some(v(what).timed(Some(Clock::Until(end))));
    }
    if let Some(h) = f.hold {
        return Some(v(format!("{} {}{seen}", shown(&h.pod), shown(&h.why))));
    }
    Some(v(format!("it starts next{seen}")))
}
