//! The actions that open a prompt: what may be typed now (refused before the prompt opens, not
//! on Enter), and what the prompt starts with.

use super::{Outcome, f, require_rolling, selected, writable};
use crate::app::state::{AppState, Modal};
use crate::app::state::{Prompt, PromptKind, bump_image};
use crate::backend::{ObjRef, WriteKind};
use k8s_openapi::api::apps::v1::StatefulSet;

/// `/` (partition prompt): the partition to set, typed.
pub(super) fn partition(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    require_rolling(set)?;
    super::rollout::refuse_frozen(set, &r, &state.caps)?;
    super::rollout::refuse_planned(set, &r, state)?;
    writable(state, WriteKind::PatchSet)?;
    let kind = PromptKind::Partition { set: r, current: f::partition(set) };
    state.modal = Modal::Prompt(Prompt::new(kind, ""));
    Ok(Vec::new())
}

/// maxUnavailable, typed (a number or a percentage).
pub(super) fn max_unavailable(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    require_rolling(set)?;
    writable(state, WriteKind::PatchSet)?;
    let current = set
        .spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.max_unavailable.as_ref())
        .map_or_else(|| "1".to_string(), crate::core::spec::int_or_string_text);
    let kind = PromptKind::MaxUnavailable { set: r, current };
    state.modal = Modal::Prompt(Prompt::new(kind, ""));
    Ok(Vec::new())
}

/// The replicas, typed.
pub(super) fn scale(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    writable(state, WriteKind::Scale)?;
    let kind = PromptKind::Scale { set: r, current: f::replicas(set) };
    state.modal = Modal::Prompt(Prompt::new(kind, ""));
    Ok(Vec::new())
}

/// A new image, typed (prefilled with the current one, its tag bumped).
pub(super) fn image(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    writable(state, WriteKind::PatchSet)?;
    let current = f::image(set)
        .ok_or_else(|| format!("{} has no container image to change", r.name))?
        .to_string();
    let rolls = rolls_at_once(set, &r);
    let kind = PromptKind::Image { set: r, current: current.clone(), rolls };
    state.modal = Modal::Prompt(Prompt::new(kind, bump_image(&current)));
    Ok(Vec::new())
}

/// A rollout plan, typed (prefilled with the set's last one).
pub(super) fn plan(state: &mut AppState) -> Outcome {
    if let Some(shown) = state.group.clone() {
        writable(state, WriteKind::PatchSet)?;
        return crate::app::plan_run::group::prompt(state, shown);
    }
    let (r, set) = selected(state)?;
    writable(state, WriteKind::PatchSet)?;
    if let Some(run) = &state.plan_run {
        return Err(format!("this console runs {} already: one at a time", run.words()).into());
    }
    let initial = crate::app::plan_run::last_plan(set);
    state.modal = Modal::Prompt(Prompt::new(PromptKind::Plan { set: r }, initial));
    Ok(Vec::new())
}

/// What a new image starts at once on `set`: with RollingUpdate, every ordinal at or above the
/// partition rolls with no plan and no bake (the hint that `F` holds it first and `P` runs a
/// plan); with Recreate, that every pod goes at once. Nothing for a set held (partition at the
/// replicas, frozen) or OnDelete.
fn rolls_at_once(set: &StatefulSet, r: &ObjRef) -> Option<String> {
    let st = crate::core::spec::strategy(set);
    let replicas = f::replicas(set);
    let n = replicas - st.partition.clamp(0, replicas);
    if st.on_delete || n <= 0 || crate::plan::record::under_way(set).is_some() {
        return None;
    }
    if st.recreate {
        return Some(format!(
            "Recreate: every old pod of {} is deleted at once, none created until all are gone",
            r.name
        ));
    }
    let pods = if n == 1 { "1 pod".to_string() } else { format!("{n} pods") };
    Some(format!(
        "partition {}: it rolls {pods} of {} at once — F holds the set first, then P runs a plan",
        st.partition, r.name
    ))
}
