//! The reducer's ways to tell the operator something: the status line (info, refusal, error)
//! and operator lines in the timeline. Called by `update` and `ops` (both halves of the one
//! reducer), so neither depends on the other for them.
//!
//! Owns: how a message lands in the state. Must not: decide what to say.

use super::refusal::Refusal;
use super::state::{AppState, Origin, STATUS_TICKS, Status, StatusKind, TimelineEntry};
use crate::backend::EventKind;

/// Shows an info message in the status line.
pub(super) fn info(state: &mut AppState, text: String) {
    set_status(state, text, StatusKind::Info);
}

/// Shows why a key cannot apply now.
pub(super) fn refuse(state: &mut AppState, why: impl Into<Refusal>) {
    set_status(state, why.into().0, StatusKind::Refusal);
}

/// Shows an error in the status line and the timeline.
pub(super) fn error(state: &mut AppState, message: String) {
    let kind = EventKind::Error { line: None, message: message.clone() };
    push_now(state, kind, Origin::Operator);
    set_status(state, message, StatusKind::Error);
}

pub(super) fn set_status(state: &mut AppState, text: String, kind: StatusKind) {
    state.status = Some(Status { text, kind, ticks_left: STATUS_TICKS });
    state.dirty = true;
}

/// Adds an operator line to the timeline at the backend's current time.
pub(super) fn log_operator(state: &mut AppState, text: String) {
    push_now(state, EventKind::Command { line: 0, text }, Origin::Operator);
}

/// Adds a timeline entry at the backend's current time.
pub(super) fn push_now(state: &mut AppState, kind: EventKind, origin: Origin) {
    let t_ms = state.elapsed_ms();
    let sets = state.mirror.set_names();
    state.timeline.push(TimelineEntry::new(t_ms, kind, origin, &sets));
    state.dirty = true;
}
