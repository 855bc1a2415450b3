//! The ONE reducer: `update(&mut AppState, Msg) -> Vec<Command>`.

use super::msg::{Command, Msg};
use super::state::AppState;

/// Applies one message to the state; returns the effects to run.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Command> {
    let _ = (state, msg);
    Vec::new()
}
