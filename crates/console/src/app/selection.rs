//! The selection: the set on screen and the ordinal within it, moved by keys, clicks, the
//! set list and the navigation actions.
//!
//! Owns the clamping rules (an ordinal within the set's span; a new set starts at its first
//! ordinal) and the timeline filter that follows the selected pod. Only the reducer calls it.

use super::msg::Command;
use super::notify::refuse;
use super::state::AppState;

/// Moves the selection by `delta` ordinals, clamped to the set's span.
pub(super) fn select_by(state: &mut AppState, delta: i64) -> Vec<Command> {
    if let Some((lo, hi)) = state.ordinal_span() {
        let target = i64::from(state.selected_ordinal).saturating_add(delta);
        let clamped = target.clamp(i64::from(lo), i64::from(hi));
        select(state, i32::try_from(clamped).unwrap_or(lo));
    }
    Vec::new()
}

/// Selects `ordinal`, clamped to the span of the selected set.
pub(super) fn select(state: &mut AppState, ordinal: i32) {
    let clamped = match state.ordinal_span() {
        Some((lo, hi)) => ordinal.clamp(lo, hi),
        None => ordinal,
    };
    if clamped != state.selected_ordinal {
        state.selected_ordinal = clamped;
        state.dirty = true;
        // The timeline filtered to the selected pod follows the selection.
        if state.timeline.only_pod().is_some()
            && let Some(set) = state.selected_set.as_ref()
        {
            let pod = crate::core::labels::pod_name(&set.name, clamped);
            state.timeline.filter_pod(Some(pod));
        }
    }
}

pub(super) fn next_set(state: &mut AppState) {
    let sets: Vec<_> = state.mirror.sets().map(|(r, _)| r.clone()).collect();
    if sets.is_empty() {
        refuse(state, "there is no StatefulSet to select");
        return;
    }
    let next = match &state.selected_set {
        Some(cur) => sets.iter().position(|r| r == cur).map_or(0, |i| (i + 1) % sets.len()),
        None => 0,
    };
    choose_set(state, sets.get(next).cloned());
}

/// Makes `set` the selected set and selects its first ordinal.
pub(super) fn choose_set(state: &mut AppState, set: Option<crate::backend::ObjRef>) {
    if state.selected_set == set {
        return;
    }
    state.selected_set = set;
    state.selected_seen = false;
    state.selected_ordinal = state.ordinal_span().map_or(0, |(lo, _)| lo);
    state.dirty = true;
}
