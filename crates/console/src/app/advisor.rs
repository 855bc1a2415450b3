//! The advisor: `core::reconcile` run on the mirror for the selected set at the backend's `now`.
//! In the simulator this is exactly what the next sync will do; on a real cluster, what
//! kube-controller-manager should do next and why it waits.
//!
//! Owns when the plan is recomputed: once per drained batch (`Msg::BatchEnd`), and only when
//! the mirror changed, the selection changed, or — for sets with `minReadySeconds` — the clock
//! moved a second. Never per event, never per frame. Must not write anything but
//! `AppState::advisor` (and `dirty` when the plan changed).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::state::{Advisor, AppState};
use crate::core::{Observed, reconcile};

/// Recomputes the advisor's plan if its inputs moved since the last computation.
pub fn refresh(state: &mut AppState) {
    let (Some(r), true) = (state.selected_set.clone(), state.synced) else {
        if state.advisor.take().is_some() {
            state.dirty = true;
        }
        return;
    };
    let Some(set) = state.mirror.set(&r) else {
        if state.advisor.take().is_some() {
            state.dirty = true;
        }
        return;
    };
    let Some(now) = state.now else {
        return;
    };
    // Pods or revisions not (yet) known: a plan on them would be made up.
    if super::readings::pods_unknown(state).is_some() {
        if state.advisor.take().is_some() {
            state.dirty = true;
        }
        return;
    }
    let generation = state.mirror.generation();
    let time_matters = set.spec.min_ready_seconds.unwrap_or(0) > 0;
    if let Some(a) = &state.advisor {
        let same_second = a.at.map(|t| t.as_second()) == Some(now.as_second());
        if a.set == r && a.mirror_generation == generation && (!time_matters || same_second) {
            return;
        }
    }
    let ns = r.namespace.as_str();
    let pods: Vec<&Pod> = state.mirror.pods_in(ns).collect();
    let claims: Vec<&PersistentVolumeClaim> = state.mirror.claims_in(ns).collect();
    let revisions: Vec<&ControllerRevision> = state.mirror.revisions_in(ns).collect();
    let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
    let mut plan = reconcile(&observed, &state.options, now);
    if state.unreadable.contains_key(&crate::backend::ObjKind::Claim) {
        // Claims the user may not read look missing: what the plan would do to them is not
        // known (the controller pane says so).
        plan.effects.retain(|e| {
            !matches!(e, crate::core::Effect::CreateClaim(_) | crate::core::Effect::UpdateClaim(_))
        });
    }
    let changed = state.advisor.as_ref().is_none_or(|a| a.plan != plan || a.set != r);
    state.advisor = Some(Advisor { set: r, plan, at: Some(now), mirror_generation: generation });
    if changed {
        state.dirty = true;
    }
}
