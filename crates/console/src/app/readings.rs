//! What the console's state says before any view is built, asked by the reducer, the views and
//! the footer alike (a leaf: it reads the state, nothing of the console's logic): whether an
//! action can apply now as far as the backend goes ([`applies`], [`writable`]), and whether the
//! selected set's pods are known ([`pods_unknown`]).

use super::action::Action;
use super::refusal::Refusal;
use super::state::AppState;
use crate::backend::{Connection, Mode, WriteKind};

/// Whether `action` can apply now, as far as the backend goes (what it offers, the connection,
/// permissions): the footer dims what cannot. The reducer says why when it is pressed.
pub fn applies(action: Action, state: &AppState) -> bool {
    let write = |kind| writable(state, kind).is_ok();
    match action {
        Action::TogglePause => state.caps.pause_reconcile,
        Action::Step => state.caps.pause_reconcile && state.mode == Mode::Paused,
        Action::SpeedUp | Action::SpeedDown => state.caps.speed,
        Action::FailPod | Action::ToggleReady | Action::BreakImage => state.caps.inject_faults,
        Action::ScaleUp | Action::ScaleDown | Action::ScalePrompt => write(WriteKind::Scale),
        Action::DeletePod => write(WriteKind::EvictPod),
        Action::ForceDeletePod => write(WriteKind::DeletePod),
        Action::PartitionDown
        | Action::PartitionUp
        | Action::PartitionPrompt
        | Action::ToggleStrategy
        | Action::MaxUnavailablePrompt
        | Action::NewImage
        | Action::Restart
        | Action::Undo
        | Action::ToggleFreeze
        | Action::PlanPrompt
        | Action::ApprovePlan => write(WriteKind::PatchSet),
        Action::AbortSet => write(WriteKind::PatchSet) && write(WriteKind::EvictPod),
        _ => true,
    }
}

/// Why writes of `kind` cannot be sent now: refused credentials, read-only or a missing
/// permission (the backend's reason). An unreachable or failing server does not stop a write:
/// it carries the resourceVersion it was decided on, so a server that moved meanwhile refuses
/// it (and it is decided again), and its outcome is told as the server holds it.
pub fn writable(state: &AppState, kind: WriteKind) -> Result<(), Refusal> {
    if let Connection::Unauthorized { error } = &state.connection {
        return Err(format!("the server refuses our credentials: {error}").into());
    }
    match state.caps.denied(kind) {
        Some(why) => Err(format!("read-only: {why}").into()),
        None => Ok(()),
    }
}

/// Why the selected set's pods (or revisions, which classify them) cannot be shown: not yet
/// listed (`listing pods … 1500 so far`), or not readable (the permission named).
pub fn pods_unknown(state: &AppState) -> Option<String> {
    use crate::backend::ObjKind;
    for (kind, plural) in [(ObjKind::Pod, "pods"), (ObjKind::Revision, "controllerrevisions")] {
        if let Some(why) = state.unreadable.get(&kind) {
            return Some(format!("{plural} unknown: {why}"));
        }
    }
    pods_listing(state).map(|n| match n {
        0 => "listing pods …".to_string(),
        n => format!("listing pods … {n} so far"),
    })
}

/// While the pods' first listing is under way (and nothing is unreadable): how many have
/// arrived so far.
pub fn pods_listing(state: &AppState) -> Option<usize> {
    use crate::backend::ObjKind;
    let unreadable =
        [ObjKind::Pod, ObjKind::Revision].iter().any(|k| state.unreadable.contains_key(k));
    state.listing.get(&ObjKind::Pod).copied().filter(|_| !unreadable)
}
