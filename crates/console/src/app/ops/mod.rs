//! The reducer's half that turns operator actions on the selected set or pod into backend
//! [`Op`]s: validation against what the mirror shows, refusals that say why, and confirmations
//! (old → new) for destructive or surprising changes. Cluster writes carry the set they were
//! decided on ([`Write::basis`]); a write the backend may not make now (disconnected,
//! read-only, a missing permission) is refused here with the reason, before anything is sent.
//!
//! Owns the rules "what may be asked now" (also for the footer: [`applies`]) and the wording
//! of refusals and confirmations. Only called from `update.rs` (the one reducer). Must not
//! touch the terminal or talk to a backend: it returns [`Command`]s.

mod abort;
mod pod;
mod prompts;
mod rollout;
mod sim;

use k8s_openapi::api::apps::v1::StatefulSet;

use super::action::Action;
use super::facts as f;
use super::keymap::{Context, key_for};
use super::msg::Command;
use super::notify::{info, log_operator};
use super::state::{AppState, Confirm, Modal};
pub use crate::app::readings::{applies, writable};
use crate::app::refusal::Refusal;
use crate::backend::{ClusterOp, ObjRef, Op, Write, WriteKind};

pub use pod::{force_delete, toggle_broken};
pub use rollout::{
    BIG_SCALE_FACTOR, BIG_SCALE_REPLICAS, is_big_scale_up, open_picker, pick_revision, scale_to,
    set_image, set_max_unavailable, set_partition,
};

/// `Err` is a refusal: the text for the status line.
pub type Outcome = Result<Vec<Command>, Refusal>;

/// Runs a Normal-context action that changes the cluster or the controller.
pub fn perform(state: &mut AppState, action: Action) -> Outcome {
    match action {
        Action::PartitionDown => rollout::partition_step(state, -1),
        Action::PartitionUp => rollout::partition_step(state, 1),
        Action::PartitionPrompt => prompts::partition(state),
        Action::ToggleStrategy => rollout::toggle_strategy(state),
        Action::MaxUnavailablePrompt => prompts::max_unavailable(state),
        Action::ScaleUp => {
            let (r, set) = selected(state)?;
            let old = f::replicas(set);
            scale_to(state, r, old, old.saturating_add(1))
        }
        Action::ScaleDown => {
            let (r, set) = selected(state)?;
            let old = f::replicas(set);
            if old <= 0 {
                return Err(format!("{} already has 0 replicas", r.name).into());
            }
            scale_to(state, r, old, old - 1)
        }
        Action::ScalePrompt => prompts::scale(state),
        Action::NewImage => prompts::image(state),
        Action::Restart => rollout::restart(state),
        Action::Undo => {
            // Refused before the picker opens, not on Enter.
            writable(state, WriteKind::PatchSet)?;
            open_picker(state, None)
        }
        Action::ToggleFreeze => rollout::toggle_freeze(state),
        Action::PlanPrompt => prompts::plan(state),
        Action::ApprovePlan => {
            writable(state, WriteKind::PatchSet)?;
            super::plan_run::approve(state)
        }
        Action::AbortSet => {
            writable(state, WriteKind::PatchSet)?;
            writable(state, WriteKind::EvictPod)?;
            abort::abort(state)
        }
        Action::TogglePause => sim::toggle_pause(state),
        Action::Step => sim::step(state),
        Action::SpeedUp => sim::speed(state, true),
        Action::SpeedDown => sim::speed(state, false),
        Action::DeletePod => pod::delete_pod(state, false),
        Action::ForceDeletePod => pod::delete_pod(state, true),
        Action::FailPod | Action::ToggleReady => pod::fault(state, action),
        Action::BreakImage => pod::break_image(state),
        _ => Ok(Vec::new()),
    }
}

/// The cluster write `op`, decided on the set as the mirror shows it now, or why it cannot be
/// sent.
fn write(state: &AppState, op: ClusterOp) -> Result<Op, Refusal> {
    writable(state, op.kind())?;
    let basis = match &op {
        ClusterOp::DeletePod { .. } | ClusterOp::EvictPod { .. } => None,
        other => state.mirror.set(other.target()).cloned().map(Box::new),
    };
    Ok(Op::Cluster(Write::on(op, basis)))
}

fn require_rolling(set: &StatefulSet) -> Result<(), Refusal> {
    let kind = crate::core::spec::UpdateType::of(set);
    if kind != crate::core::spec::UpdateType::RollingUpdate {
        let what = if kind == crate::core::spec::UpdateType::Recreate {
            "Recreate replaces every pod at once"
        } else {
            "OnDelete replaces a pod when it is deleted"
        };
        return Err(format!(
            "the partition applies to RollingUpdate; this set is {kind}: {what} ({} switches)",
            key(Action::ToggleStrategy)
        )
        .into());
    }
    Ok(())
}

/// The selected set, or why there is none.
fn selected(state: &AppState) -> Result<(ObjRef, &StatefulSet), Refusal> {
    let r = state.selected_set.clone().ok_or_else(|| {
        if state.synced {
            "nothing selected: there is no StatefulSet (a script or -f MANIFEST creates one)"
                .to_string()
        } else {
            "nothing selected yet: waiting for the backend's first listing".to_string()
        }
    })?;
    let set = state.mirror.set(&r).ok_or_else(|| format!("{r} no longer exists"))?;
    Ok((r, set))
}

/// Sends one op, logs it in the timeline (scenario-language text) and says so.
fn send(state: &mut AppState, op: Op, log: String, said: String) -> Vec<Command> {
    // A set a GitOps controller manages: ask first, saying it may be reverted.
    if let Some(warning) = gitops_warning(state, std::slice::from_ref(&op)) {
        let confirm = Confirm {
            title: format!("{log}?"),
            old: String::new(),
            new: log.clone(),
            warning: Some(warning),
            ops: vec![op],
            log,
            ..Default::default()
        };
        state.modal = Modal::Confirm(confirm);
        return Vec::new();
    }
    let now = sent(state, std::slice::from_ref(&op), &log, said);
    log_operator(state, log);
    info(state, now);
    vec![Command::Backend(op)]
}

/// What the status line says of writes just sent: what they did, in the simulator (it applies
/// them at once); on a cluster that they are sent, until the server answers (`said` then, at
/// [`BackendEvent::OpDone`]; a failure names itself).
///
/// [`BackendEvent::OpDone`]: crate::backend::BackendEvent::OpDone
pub(super) fn sent(state: &mut AppState, ops: &[Op], log: &str, said: String) -> String {
    let writes: Vec<crate::backend::WriteId> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Cluster(w) => Some(w.id),
            _ => None,
        })
        .collect();
    if !state.caps.writes_answered_later || writes.is_empty() {
        return said;
    }
    for w in writes {
        if state.writes_pending.len() >= crate::app::state::WRITES_PENDING {
            state.writes_pending.pop_front();
        }
        state.writes_pending.push_back((w, said.clone()));
    }
    format!("{log}: sent, waiting for the server …")
}

fn ask(state: &mut AppState, mut confirm: Confirm) -> Vec<Command> {
    if let Some(w) = gitops_warning(state, &confirm.ops) {
        confirm.warning = Some(match confirm.warning.take() {
            Some(first) => format!("{first}; {w}"),
            None => w,
        });
    }
    state.modal = Modal::Confirm(confirm);
    Vec::new()
}

/// The warning for writes to the spec of a set a GitOps controller manages (a pod's deletion
/// is not something it reverts).
fn gitops_warning(state: &AppState, ops: &[Op]) -> Option<String> {
    ops.iter().find_map(|op| match op {
        Op::Cluster(w)
            if !matches!(w.op, ClusterOp::DeletePod { .. } | ClusterOp::EvictPod { .. }) =>
        {
            let set = state.mirror.set(w.op.target())?;
            crate::steer::gitops::manager(&set.metadata).map(|m| m.warning())
        }
        _ => None,
    })
}

fn key(action: Action) -> String {
    key_for(Context::Normal, action).unwrap_or_else(|| "?".into())
}
