//! Field evidence: on a real cluster the advisor (the core run on what the console sees) says
//! what the controller's next sync does. When the cluster's controller creates or deletes a pod
//! the advisor did not expect, the timeline and the log say so ("advisor expected delete
//! web-3, the cluster created web-5"): where the port and upstream differ, or where the console
//! saw the cluster late.
//!
//! Owns: the comparison. Called by the reducer before the change reaches the mirror, so the
//! plan is the one for the state the controller acted on. Watches of different kinds race (a
//! pod deleted for an update can arrive before the set's new partition), so a disagreement is
//! only a suspicion at first: it is dropped when the set's spec changes within [`GRACE_MS`],
//! and told when it does not.

use super::notify::push_now;
use super::state::{AppState, Origin, Suspect};
use crate::backend::EventKind;
use crate::core::{ControllerAction, DeleteReason, Effect, Observed, Plan, reconcile};

/// Compares a pod creation or deletion the cluster made with the advisor's plan for now.
pub fn check(state: &mut AppState, kind: &EventKind) {
    let EventKind::Controller { set, action, pod: Some(pod), reason, .. } = kind else { return };
    let deletion = *action == ControllerAction::DeletePod;
    if !(*action == ControllerAction::CreatePod
        || deletion && matches!(reason, Some(DeleteReason::Update | DeleteReason::ScaleDown)))
    {
        return;
    }
    if deletion && operator_deleted(state, pod) {
        return;
    }
    let Some(plan) = plan_now(state, set) else { return };
    let expected = plan.effects.iter().any(|e| match e {
        Effect::CreatePod(p) => !deletion && p.metadata.name.as_deref() == Some(pod.as_str()),
        Effect::DeletePod { name, .. } => deletion && name == pod,
        _ => false,
    });
    if expected {
        return;
    }
    let observed = format!("{} {pod}", if deletion { "deleted" } else { "created" });
    let generation = state
        .selected_set
        .as_ref()
        .and_then(|r| state.mirror.set(r))
        .and_then(|s| s.metadata.generation);
    let suspect = Suspect {
        set: set.clone(),
        generation,
        expected: expectation(&plan),
        observed,
        at_ms: state.elapsed_ms(),
    };
    state.suspects.push(suspect);
}

/// Backend time a disagreement waits for a spec change that would explain it.
pub const GRACE_MS: u64 = 2_000;

/// At the end of a batch: suspicions the set's spec has since explained are dropped; those
/// older than [`GRACE_MS`] are told (timeline and log).
pub fn settle(state: &mut AppState) {
    if state.suspects.is_empty() {
        return;
    }
    let now = state.elapsed_ms();
    let generation = state
        .selected_set
        .as_ref()
        .and_then(|r| state.mirror.set(r))
        .and_then(|s| s.metadata.generation);
    let suspects = std::mem::take(&mut state.suspects);
    for s in suspects {
        if s.generation != generation {
            continue;
        }
        if now.saturating_sub(s.at_ms) < GRACE_MS {
            state.suspects.push(s);
            continue;
        }
        tracing::warn!(set = %s.set, expected = %s.expected, observed = %s.observed, "the cluster's controller did what the advisor did not expect");
        let kind = EventKind::Differs { set: s.set, expected: s.expected, observed: s.observed };
        push_now(state, kind, Origin::Backend);
    }
}

/// Whether the operator asked to delete `pod` in the last few timeline entries.
fn operator_deleted(state: &AppState, pod: &str) -> bool {
    state.timeline.all().rev().take(50).any(|e| {
        e.origin == Origin::Operator
            && matches!(&e.kind, EventKind::Command { text, .. }
                if text.ends_with(&format!("delete-pod {pod}")))
    })
}

/// The advisor's plan for the selected set named `set`, on the mirror as it is now.
fn plan_now(state: &AppState, set: &str) -> Option<Plan> {
    let r = state.selected_set.as_ref().filter(|r| r.name == set)?;
    let s = state.mirror.set(r)?;
    let now = state.now?;
    if !state.synced {
        return None;
    }
    let ns = r.namespace.as_str();
    let pods: Vec<_> = state.mirror.pods_in(ns).collect();
    let claims: Vec<_> = state.mirror.claims_in(ns).collect();
    let revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
    let observed = Observed { set: s, pods: &pods, claims: &claims, revisions: &revisions };
    Some(reconcile(&observed, &state.options, now))
}

/// What the plan does with pods, in words: `create web-3`, `delete web-4`, or `nothing`.
fn expectation(plan: &Plan) -> String {
    let pods: Vec<String> = plan
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::CreatePod(p) => {
                Some(format!("create {}", p.metadata.name.as_deref().unwrap_or("?")))
            }
            Effect::DeletePod { name, .. } => Some(format!("delete {name}")),
            _ => None,
        })
        .collect();
    if pods.is_empty() { "nothing".into() } else { pods.join(", ") }
}
