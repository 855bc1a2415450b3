//! The console's side of the one verdict (`plan::verdict`): what the state holds of a set —
//! its pods (or that they are not watched, or not known), the namespace's budgets and sets, the
//! advisor's word, the simulator's pause — handed to `plan::verdict::judge`. The console's
//! header and set list, `ststui explain` and `ststui wait` all judge a set through here, so
//! they say the same thing.
//!
//! Owns: gathering the facts from the state. Must not: judge anything itself, or write state.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::state::AppState;
use super::state::{ExplainLine, LineKind};
use crate::backend::{Mode, ObjRef};
use crate::core::Observed;
use crate::plan::verdict::{Advisor, Facts, Pods, Seen, Verdict, judge};
pub use crate::plan::verdict::{STUCK_AFTER_SECS, Word as Health};

/// The verdict on `key` as the state shows it: its pods when they are watched (`None` for
/// `controller`: the set list, which reads the status where the pods are not watched), the
/// advisor's word read from the controller pane's lines (`controller`), and what a watcher
/// remembers (`seen`).
pub fn verdict(
    state: &AppState,
    key: &ObjRef,
    controller: Option<&[ExplainLine]>,
    seen: Option<&Seen>,
) -> Option<Verdict> {
    let pods: Vec<(i32, &Pod)> = state.mirror.pods_of(key).collect();
    judged(state, key, controller, seen, &pods)
}

/// [`verdict`] of the set on screen, its pods `pods` as its grid claimed them (in ordinal
/// order): the same judgement, without claiming the namespace's pods a second time.
pub fn verdict_on(
    state: &AppState,
    key: &ObjRef,
    controller: &[ExplainLine],
    pods: &[(i32, &Pod)],
) -> Option<Verdict> {
    judged(state, key, Some(controller), None, pods)
}

fn judged(
    state: &AppState,
    key: &ObjRef,
    controller: Option<&[ExplainLine]>,
    seen: Option<&Seen>,
    pods: &[(i32, &Pod)],
) -> Option<Verdict> {
    let set = state.mirror.set(key)?;
    let unknown = controller.and_then(|_| super::readings::pods_unknown(state));
    let watched = controller.is_some() || !pods.is_empty();
    let facts_pods = match &unknown {
        Some(why) => Pods::Unknown(why),
        None if watched => Pods::Seen(pods),
        None => Pods::Status,
    };
    let budgets: Vec<_> = state.mirror.budgets_in(&key.namespace).collect();
    let sets: Vec<&StatefulSet> = state
        .mirror
        .sets()
        .filter(|(k, _)| k.namespace == key.namespace && k != &key)
        .map(|(_, s)| s)
        .collect();
    let advisor = advisor(state, key, set, controller);
    let now = state.now.unwrap_or_default();
    let hold = group_hold(state, key, set, &sets);
    Some(judge(&Facts {
        set,
        pods: facts_pods,
        now,
        sem: &state.options.semantics,
        budgets: &budgets,
        sets: &sets,
        advisor: &advisor,
        seen,
        hold: hold.as_ref(),
    }))
}

/// What holds `set`'s rollout group now, when it carries a part and its members' pods are
/// watched (the group plan's own rule, `plan::group::hold`).
fn group_hold(
    state: &AppState,
    key: &ObjRef,
    set: &StatefulSet,
    others: &[&StatefulSet],
) -> Option<crate::plan::group::Hold> {
    let part = crate::plan::group::part::read(set).part().cloned()?;
    let find = |n: &str| -> Option<&StatefulSet> {
        if n == key.name {
            return Some(set);
        }
        others.iter().copied().find(|s| s.metadata.name.as_deref() == Some(n))
    };
    let members: Vec<&StatefulSet> = part.sets.iter().filter_map(|n| find(n)).collect();
    if members.len() != part.sets.len() {
        return None;
    }
    let pods: Vec<Vec<(i32, &k8s_openapi::api::core::v1::Pod)>> = members
        .iter()
        .map(|s| {
            state
                .mirror
                .pods_of(&ObjRef::new(key.namespace.clone(), crate::core::spec::name(s)))
                .collect()
        })
        .collect();
    // Members whose pods are not watched say nothing: no hold is claimed from them.
    if pods.iter().zip(&members).any(|(p, s)| p.is_empty() && crate::core::spec::replicas(s) > 0) {
        return None;
    }
    let sem = &state.options.semantics;
    let group: Vec<crate::plan::member::Member<'_>> = members
        .iter()
        .zip(&pods)
        .map(|(s, p)| crate::plan::member::Member::of(s, p, sem))
        .collect();
    crate::plan::group::hold(&group, state.now.unwrap_or_default())
}

/// What the advisor says of `set`: a rule no waiting resolves (a sync error, or a hint of the
/// controller pane: the forced rollback of kubernetes#67250, certain for an old-revision pod
/// OrderedReady waits on, suspected for an update pod not Ready for a minute), what the
/// controller waits for, and whether the simulator's controller is paused.
fn advisor(
    state: &AppState,
    key: &ObjRef,
    set: &StatefulSet,
    controller: Option<&[ExplainLine]>,
) -> Advisor {
    let paused = state.mode == Mode::Paused;
    let (Some(plan), Some(lines)) = (state.plan_for(key), controller) else {
        return Advisor { paused, ..Advisor::default() };
    };
    let ns = key.namespace.as_str();
    let pods: Vec<_> = state.mirror.pods_in(ns).collect();
    let claims: Vec<_> = state.mirror.claims_in(ns).collect();
    let revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
    let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
    let now = state.now.unwrap_or_default();
    // The rule in the advisor's own words (the pane's hint adds the console's key after " — ").
    let hint = lines
        .iter()
        .find(|l| l.kind == LineKind::Hint)
        .map(|l| l.text.split_once(" — ").map_or(l.text.as_str(), |(words, _)| words).to_string());
    let forced = crate::core::explain::forced_rollback(&observed, plan, now);
    let blocked = match (&plan.error, hint) {
        (Some(e), _) => Some((None, e.message.clone())),
        (None, Some(rule)) => Some((forced.as_ref().map(|s| s.pod.clone()), rule)),
        (None, None) => None,
    };
    let suspect = forced.map(|s| s.to_string());
    // What the controller waits for, with why a pod is not Ready as the pane says it.
    let waiting =
        lines.iter().find(|l| l.kind == LineKind::Waiting).map(|l| l.text.clone()).or_else(|| {
            plan.waiting_on
                .as_ref()
                .map(|b| crate::core::explain::blocker_step(b).text)
                .map(|t| t.strip_prefix("waiting: ").map(str::to_string).unwrap_or(t))
        });
    Advisor { blocked, paused, waiting, suspect }
}
