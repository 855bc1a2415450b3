//! A rollout group shown as a whole: `Z` on a set (or on the set list's row) opens its group —
//! the sets its group plan's part names, in order, or every set of the namespace carrying its
//! `rollout-group` label — as one matrix (`view::group`); the backend watches every member as
//! it watches one set. The cursor is a cell: ←/→ move between the sets (the selected set is the
//! column's, so the controller pane, the pod detail and every key act on it as on one set),
//! ↑/↓ between ordinals. `Z` or Esc goes back.
//!
//! Owns: finding a group's members, opening and closing its view, moving between columns, the
//! matrix's refresh. Only the reducer calls it.

use super::msg::Command;
use super::state::GroupMatrix;
use super::state::{AppState, GroupBy, GroupShown};
use crate::app::refusal::Refusal;
use crate::backend::{ObjRef, Op, ViewOp};
use crate::plan::group::MAX_SETS;
use crate::plan::group::part::{self, ROLLOUT_GROUP, Reading};

/// The group `key` is in, from what the console holds: its part's sets, else its label's.
pub fn of(state: &AppState, key: &ObjRef, from_list: bool) -> Result<GroupShown, Refusal> {
    let set = state.mirror.set(key).ok_or_else(|| format!("{key} is not known here"))?;
    let ns = key.namespace.clone();
    if let Reading::Part(p) = part::read(set) {
        let sets = p.sets.iter().take(MAX_SETS).map(|n| ObjRef::new(ns.clone(), n.clone()));
        let (name, sets) = (p.group.clone(), sets.collect());
        return Ok(GroupShown { namespace: ns, name, by: GroupBy::Part, sets, from_list });
    }
    let Some(label) = set.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)) else {
        return Err(format!(
            "{} is in no rollout group: it carries no group plan's part ({}, written by `ststui \
             rollout --group …`) and no {ROLLOUT_GROUP} label",
            crate::text::escape_controls(&key.name),
            part::PART
        )
        .into());
    };
    let name = label.clone();
    let sets = labelled(state, &ns, &name);
    too_many(&name, sets.len())?;
    Ok(GroupShown { namespace: ns, name, by: GroupBy::Label, sets, from_list })
}

/// A group by label of more than [`MAX_SETS`] sets is refused, as `ststui rollout -l` refuses
/// it: never a group cut short without a word.
pub(crate) fn too_many(name: &str, n: usize) -> Result<(), Refusal> {
    if n <= MAX_SETS {
        return Ok(());
    }
    let why = crate::plan::group::BadGroup::TooMany(n);
    let name = crate::text::escape_controls(name);
    Err(format!("rollout group {name}: {why} (the {ROLLOUT_GROUP} label is on {n} sets)").into())
}

/// The namespace's sets labelled `rollout-group=name`, by name.
pub(crate) fn labelled(state: &AppState, ns: &str, name: &str) -> Vec<ObjRef> {
    let mut sets: Vec<ObjRef> = state
        .mirror
        .sets()
        .filter(|(k, s)| {
            k.namespace == ns
                && s.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)).map(String::as_str)
                    == Some(name)
        })
        .map(|(k, _)| k.clone())
        .collect();
    sets.sort();
    sets
}

/// Opens the group of `key`: its matrix shown, every member watched; the cursor on `key`.
pub fn open(state: &mut AppState, key: ObjRef, from_list: bool) -> Result<Vec<Command>, Refusal> {
    let shown = of(state, &key, from_list)?;
    state.picking = None;
    if state.selected_set.as_ref() != Some(&key) {
        state.selected_set = Some(key.clone());
        state.selected_seen = false;
        state.selected_ordinal = state.ordinal_span().map_or(0, |(lo, _)| lo);
        state.advisor = None;
    }
    state.group = Some(shown);
    state.group_view = None;
    state.dirty = true;
    Ok(vec![Command::Backend(Op::View(view_op(state)))])
}

/// What the backend is to watch now: what is shown — the group's sets, one set, or the list's
/// sets only — and the sets of a plan this console runs, whatever is shown (its turns read
/// them; its writes are decided on them).
pub fn view_op(state: &AppState) -> ViewOp {
    let mut shown: Vec<ObjRef> = match (&state.group, &state.selected_set, state.picking) {
        (Some(g), _, _) => g.sets.clone(),
        (None, Some(key), None) => vec![key.clone()],
        _ => Vec::new(),
    };
    let run = state.plan_run.as_ref().map_or(&[][..], |r| r.sets());
    let extra: Vec<ObjRef> = run.iter().filter(|k| !shown.contains(k)).cloned().collect();
    if state.group.is_none() && extra.is_empty() {
        return ViewOp::Focus(shown.pop());
    }
    shown.extend(extra);
    ViewOp::Group(shown)
}

/// The group's view gone (one set or the list opened), its matrix and memos with it; returns
/// the group that was shown.
pub fn forget(state: &mut AppState) -> Option<GroupShown> {
    let shown = state.group.take()?;
    state.group_view = None;
    state.group_memos.clear();
    state.dirty = true;
    Some(shown)
}

/// ←/→ (`wrap`: Tab) in the group's view: the set `delta` columns over, the ordinal kept
/// (clamped to that set's).
pub fn column_by(state: &mut AppState, delta: i64, wrap: bool) {
    let Some(shown) = &state.group else { return };
    let n = i64::try_from(shown.sets.len()).unwrap_or(0);
    if n == 0 {
        return;
    }
    let at = state.selected_set.as_ref().and_then(|k| shown.sets.iter().position(|s| s == k));
    let at = i64::try_from(at.unwrap_or(0)).unwrap_or(0);
    let to = if wrap { (at + delta).rem_euclid(n) } else { (at + delta).clamp(0, n - 1) };
    select_column(state, usize::try_from(to).unwrap_or(0));
}

/// The cursor on the group's `index`th set, the ordinal kept (clamped to that set's).
pub fn select_column(state: &mut AppState, index: usize) {
    let Some(key) = state.group.as_ref().and_then(|g| g.sets.get(index)).cloned() else {
        return;
    };
    if state.selected_set.as_ref() == Some(&key) {
        return;
    }
    state.selected_set = Some(key);
    state.selected_seen = false;
    state.advisor = None;
    if let Some((lo, hi)) = state.ordinal_span() {
        state.selected_ordinal = state.selected_ordinal.clamp(lo, hi);
    }
    state.dirty = true;
}

/// At the end of a batch: a group by label finds its members again (a set labelled or
/// unlabelled since, the backend then told); the matrix computed again when what it reads moved.
pub fn refresh(state: &mut AppState) -> Vec<Command> {
    let Some(shown) = state.group.as_ref() else { return Vec::new() };
    let mut cmds = Vec::new();
    if shown.by == GroupBy::Label && state.synced {
        let now = labelled(state, &shown.namespace, &shown.name);
        // Grown past a group's size: the members stay as shown (a plan refuses it, named).
        if !now.is_empty() && now != shown.sets && now.len() <= MAX_SETS {
            if let Some(g) = state.group.as_mut() {
                g.sets = now;
            }
            cmds.push(Command::Backend(Op::View(view_op(state))));
        }
    }
    let Some(shown) = state.group.clone() else { return cmds };
    if !shown.sets.is_empty() && state.selected_set.as_ref().is_none_or(|k| !shown.sets.contains(k))
    {
        // The set under the cursor left the group: the cursor goes to its first set.
        state.selected_set = shown.sets.first().cloned();
        state.selected_seen = false;
        state.advisor = None;
        state.selected_ordinal = state.ordinal_span().map_or(0, |(lo, _)| lo);
        state.dirty = true;
    }
    if state.group_view.as_ref().is_some_and(|m| m.is_fresh(state, &shown)) {
        return cmds;
    }
    let mut memos = std::mem::take(&mut state.group_memos);
    memos.retain(|k, _| shown.sets.contains(k));
    let matrix = GroupMatrix::build(state, &shown, &mut memos);
    state.group_memos = memos;
    if state.group_view.as_ref() != Some(&matrix) {
        state.dirty = true;
    }
    state.group_view = Some(matrix);
    cmds
}
