//! The StatefulSet list of a cluster (ststui opened without a NAME, or Esc from a set): its
//! rows as a view model, and the reducer's moves in it (highlight, open, back). Opening a set
//! asks the backend to watch its objects; going back asks it to watch the sets only.
//!
//! Owns: the list's rows and its transitions. Only the reducer calls the transitions.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::action::Action;
use super::facts as f;
use super::health::{self, Health};
use super::msg::Command;
use super::notify::refuse;
use super::state::AppState;
use crate::backend::{ObjRef, Op, ViewOp};

/// One row of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct SetRow<'a> {
    pub key: &'a ObjRef,
    /// `ready/desired`.
    pub ready: String,
    pub updated: i32,
    /// `RollingUpdate p=2`, `OnDelete`.
    pub strategy: String,
    /// `7d9c5b8f4 → 5c4f8d6b9` (one hash when they agree).
    pub revisions: String,
    pub health: Health,
}

/// Why the list is empty: not listed yet, not readable (the permission named), or nothing in
/// the namespace listed (named, with how to look elsewhere).
pub fn empty_reason(state: &AppState) -> String {
    use crate::backend::ObjKind;
    if let Some(why) = state.unreadable.get(&ObjKind::Set) {
        return format!("statefulsets unknown: {why}");
    }
    if !state.synced {
        return "loading: waiting for the first listing".into();
    }
    let scope = state.listed.iter().find(|(k, _)| *k == ObjKind::Set).map(|(_, s)| s);
    match scope.and_then(|s| s.namespace.as_deref()) {
        Some(ns) => format!(
            "no StatefulSet in namespace {ns} (-n NAMESPACE looks in another, -A in every one)"
        ),
        None => "no StatefulSet in any namespace".into(),
    }
}

/// The rows, by namespace then name.
pub fn rows(state: &AppState) -> Vec<SetRow<'_>> {
    state.mirror.sets().map(|(key, set)| row(key, set)).collect()
}

fn row<'a>(key: &'a ObjRef, set: &StatefulSet) -> SetRow<'a> {
    let st = set.status.as_ref();
    let strategy = if f::on_delete(set) {
        "OnDelete".to_string()
    } else {
        format!("RollingUpdate p={}", f::partition(set))
    };
    let (cur, upd) = (
        f::current_revision(set).map(f::short_revision),
        f::update_revision(set).map(f::short_revision),
    );
    let revisions = match (cur, upd) {
        (Some(c), Some(u)) if c == u => c.to_string(),
        (Some(c), Some(u)) => format!("{c} → {u}"),
        (c, u) => c.or(u).unwrap_or("-").to_string(),
    };
    SetRow {
        key,
        ready: format!("{}/{}", st.and_then(|s| s.ready_replicas).unwrap_or(0), f::replicas(set)),
        updated: st.and_then(|s| s.updated_replicas).unwrap_or(0),
        strategy,
        revisions,
        health: health::of(set, None, false, false),
    }
}

/// A key in the list.
pub fn act(state: &mut AppState, action: Action) -> Vec<Command> {
    let count = state.mirror.sets().count();
    let Some(at) = state.picking else { return Vec::new() };
    match action {
        Action::Up => state.picking = Some(at.saturating_sub(1)),
        Action::Down => state.picking = Some((at + 1).min(count.saturating_sub(1))),
        Action::Accept => {
            let Some(key) = state.mirror.sets().nth(at).map(|(k, _)| k.clone()) else {
                refuse(state, "there is no StatefulSet to open here".into());
                return Vec::new();
            };
            return open(state, key);
        }
        _ => return Vec::new(),
    }
    state.dirty = true;
    Vec::new()
}

/// Opens `key`: the console shows it and the backend watches its objects.
pub fn open(state: &mut AppState, key: ObjRef) -> Vec<Command> {
    state.picking = None;
    state.selected_set = Some(key.clone());
    state.selected_seen = false;
    state.selected_ordinal = state.ordinal_span().map_or(0, |(lo, _)| lo);
    state.advisor = None;
    state.dirty = true;
    vec![Command::Backend(Op::View(ViewOp::Focus(Some(key))))]
}

/// Back to the list (the backend stops watching the set's objects).
pub fn back(state: &mut AppState) -> Vec<Command> {
    let at = state
        .selected_set
        .as_ref()
        .and_then(|r| state.mirror.sets().position(|(k, _)| k == r))
        .unwrap_or(0);
    state.picking = Some(at);
    state.dirty = true;
    vec![Command::Backend(Op::View(ViewOp::Focus(None)))]
}
