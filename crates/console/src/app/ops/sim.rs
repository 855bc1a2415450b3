//! Simulator-only actions: pause / resume reconciliation, step one sync, speed. On a backend
//! without them they are refused, saying they exist in the simulator only (and what a cluster
//! offers instead).

use super::{Outcome, key, send};
use crate::app::action::Action;
use crate::app::state::AppState;
use crate::app::view::header::speed_text;
use crate::backend::{Mode, SPEED_RANGE, SimOp};

pub(super) fn toggle_pause(state: &mut AppState) -> Outcome {
    if !state.caps.pause_reconcile {
        return Err(format!(
            "pausing reconciliation exists in the simulator only: on a cluster, {} freezes the \
             rollout (the partition holds every ordinal)",
            key(Action::ToggleFreeze)
        )
        .into());
    }
    Ok(match state.mode {
        Mode::Paused => {
            send(state, SimOp::Resume.into(), "resume".into(), "resuming the controller".into())
        }
        Mode::Live => send(
            state,
            SimOp::Pause.into(),
            "pause".into(),
            format!("pausing the controller: {} steps one sync", key(Action::Step)),
        ),
    })
}

pub(super) fn step(state: &mut AppState) -> Outcome {
    if !state.caps.pause_reconcile {
        return Err("stepping single syncs exists in the simulator only".into());
    }
    if state.mode != Mode::Paused {
        return Err(format!(
            "step runs one sync while paused: press {} to pause first",
            key(Action::TogglePause)
        )
        .into());
    }
    Ok(send(state, SimOp::Step { n: 1 }.into(), "step".into(), "one controller sync".into()))
}

/// The speeds `<` and `>` step through: a ladder through ×1, so stepping back always returns to
/// real time whatever speed the console started at (`--speed 3` goes to ×4 or ×2).
pub const SPEED_STEPS: [f64; 17] = [
    0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0,
    1000.0,
];

/// The next speed on [`SPEED_STEPS`] above (`faster`) or below the current one, if any.
pub fn next_speed(now: f64, faster: bool) -> Option<f64> {
    let eps = 1e-9;
    if faster {
        SPEED_STEPS.iter().copied().find(|s| *s > now + eps)
    } else {
        SPEED_STEPS.iter().rev().copied().find(|s| *s < now - eps)
    }
}

pub(super) fn speed(state: &mut AppState, faster: bool) -> Outcome {
    if !state.caps.speed {
        return Err("speed exists in the simulator only (its virtual clock)".into());
    }
    let (lo, hi) = SPEED_RANGE;
    let Some(new) = next_speed(state.speed, faster).map(|s| s.clamp(lo, hi)) else {
        let which = if faster { "fastest" } else { "slowest" };
        return Err(format!("already at the {which} speed (×{})", speed_text(state.speed)).into());
    };
    let old = state.speed;
    state.speed = new;
    state.dirty = true;
    Ok(send(
        state,
        SimOp::SetSpeed { speed: new }.into(),
        format!("speed {new}"),
        format!("speed ×{} → ×{}", speed_text(old), speed_text(new)),
    ))
}
