//! The footer's hints for the active context: the bindings that have a footer label, in table
//! order, each with whether it applies now (the reducer's own rule, `readings::applies`) and whether
//! it must stay on screen when space runs out (help and quit). What the backend never offers
//! (the simulator's step and speed on a cluster) is left out, and so are the partition keys on a
//! set that has no partition to step (OnDelete, Recreate).

use crate::app::action::Action;
use crate::app::keymap;
use crate::app::state::AppState;

/// One footer hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub key: String,
    pub label: &'static str,
    /// The action can apply now (otherwise it is dimmed).
    pub applies: bool,
    /// Kept when the footer is too narrow (help and quit).
    pub kept: bool,
}

/// The hints of the active context, in table order.
pub fn hints(state: &AppState) -> Vec<Hint> {
    let ctx = state.context();
    // The partition keys are left out for a set that has no partition to step (OnDelete,
    // Recreate): pressed, they say why.
    let no_partition =
        state.selected_set.as_ref().and_then(|r| state.mirror.set(r)).is_some_and(|s| {
            !crate::core::spec::strategy(s).steps_partition(&state.options.semantics)
        });
    let partition_key = |a: Action| matches!(a, Action::PartitionDown | Action::PartitionUp);
    keymap::bindings(ctx, &state.caps)
        .filter(|b| keymap::offered(b.action, &state.caps))
        .filter(|b| !(no_partition && partition_key(b.action)))
        .filter_map(|b| {
            // The pause key says what it does now: resume while the controller is paused.
            let label = match (b.action, state.mode) {
                (Action::TogglePause, crate::backend::Mode::Paused) => "resume",
                _ => b.footer?,
            };
            Some(Hint {
                key: b.keys.first()?.label(),
                label,
                applies: crate::app::readings::applies(b.action, state),
                kept: matches!(b.action, Action::Help | Action::Quit),
            })
        })
        .collect()
}
