//! Simulator-only actions: pause / resume reconciliation, step one sync, speed. On a backend
//! without them they are refused, saying they exist in the simulator only (and what a cluster
//! offers instead).

use super::{Outcome, key, send};
use crate::app::action::Action;
use crate::app::state::AppState;
use crate::backend::{Mode, SPEED_RANGE, SimOp};

pub(super) fn toggle_pause(state: &mut AppState) -> Outcome {
    if !state.caps.pause_reconcile {
        return Err(format!(
            "pausing reconciliation exists in the simulator only: on a cluster, {} freezes the \
             rollout (the partition holds every ordinal)",
            key(Action::ToggleFreeze)
        ));
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
        ));
    }
    Ok(send(state, SimOp::Step { n: 1 }.into(), "step".into(), "one controller sync".into()))
}

pub(super) fn speed(state: &mut AppState, factor: f64) -> Outcome {
    if !state.caps.speed {
        return Err("speed exists in the simulator only (its virtual clock)".into());
    }
    let (lo, hi) = SPEED_RANGE;
    let new = (state.speed * factor).clamp(lo, hi);
    if (new - state.speed).abs() < f64::EPSILON {
        let which = if factor > 1.0 { "fastest" } else { "slowest" };
        return Err(format!("already at the {which} speed ({}×)", state.speed));
    }
    let old = state.speed;
    state.speed = new;
    state.dirty = true;
    Ok(send(
        state,
        SimOp::SetSpeed { speed: new }.into(),
        format!("speed {new}"),
        format!("speed {old}× → {new}×"),
    ))
}
