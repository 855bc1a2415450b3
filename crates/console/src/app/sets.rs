//! The StatefulSet list of a cluster (ststui opened without a NAME, or Esc from a set): its
//! rows as a view model — filtered by name (`/`), the sets that need the operator first
//! (Blocked, Degraded, Unknown, Progressing, then held and healthy ones), each with its plan's
//! progress — and the reducer's moves in it (highlight, open, back, filter). Opening a set
//! asks the backend to watch its objects; going back asks it to watch the sets only.
//!
//! Owns: the list's rows and its transitions. Only the reducer calls the transitions.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::action::Action;
use super::facts as f;
use super::health::{self, Health};
use super::msg::Command;
use super::notify::refuse;
use super::state::{AppState, Progress};
use crate::backend::{ObjRef, Op};

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
    /// The plan under way or halted, in few words (`2/4 baking`, `halted at 2/4`); empty
    /// without one.
    pub plan: String,
    /// The set's rollout group: its part (`ingester 2/3 rolling`), or the `rollout-group` label
    /// (`ingester`, `ingester (rollout-operator)` on an OnDelete set); empty without one.
    pub group: String,
}

/// Notes what `set`'s status says of its progress (the reducer, as a set arrives). The list
/// reads only the status (no pods), where a scale-up's newest pods, created and not Ready yet,
/// look like pods that failed: progress within [`health::STUCK_AFTER_SECS`] says they start.
pub fn note_progress(state: &mut AppState, set: &StatefulSet) {
    let st = set.status.as_ref();
    let (wanted, created, ready) = (
        f::replicas(set),
        st.map_or(0, |s| s.replicas),
        st.and_then(|s| s.ready_replicas).unwrap_or(0),
    );
    let key = ObjRef::of(&set.metadata);
    let now = state.now;
    let at = match state.set_progress.get(&key) {
        Some(p) if wanted > p.wanted || created > p.created || ready > p.ready => now,
        Some(p) => p.at,
        // First seen: nothing known of its way so far.
        None => None,
    };
    state.set_progress.insert(key, Progress { wanted, created, ready, at });
}

/// Whether `key`'s set made progress within [`health::STUCK_AFTER_SECS`].
fn progressing(state: &AppState, key: &ObjRef) -> bool {
    let (Some(now), Some(p)) = (state.now, state.set_progress.get(key)) else { return false };
    p.at.is_some_and(|at| now.duration_since(at).as_secs() < health::STUCK_AFTER_SECS)
}

/// Where a health sorts: what needs the operator first.
fn rank(h: Health) -> u8 {
    match h {
        Health::Blocked => 0,
        Health::Halted => 0,
        Health::Stalled => 0,
        Health::Waiting => 1,
        Health::Degraded => 1,
        Health::Unknown => 2,
        Health::Progressing => 3,
        Health::Paused => 4,
        Health::Frozen => 5,
        Health::Held => 5,
        Health::Healthy => 6,
    }
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

/// The rows the filter lets through: by health (what needs the operator first), then
/// namespace and name.
pub fn rows(state: &AppState) -> Vec<SetRow<'_>> {
    let filter = state.set_filter.to_lowercase();
    let mut rows: Vec<SetRow<'_>> = state
        .mirror
        .sets()
        .filter(|(key, _)| filter.is_empty() || key.to_string().to_lowercase().contains(&filter))
        .map(|(key, set)| {
            let mut r = row(key, set, state);
            if r.health == Health::Degraded && progressing(state, key) {
                r.health = Health::Progressing;
            }
            r
        })
        .collect();
    // Stable: namespace and name order within a health.
    rows.sort_by_key(|r| rank(r.health));
    rows
}

/// The list's heading: how many, the filter, what the keys do.
pub fn heading(state: &AppState, shown: usize) -> String {
    let all = state.mirror.sets().count();
    match state.set_filter.is_empty() {
        true => format!("StatefulSets ({all}) — Enter opens one, / filters"),
        false => format!(
            "StatefulSets ({shown} of {all} matching {:?}) — Enter opens one, / filters, Esc clears",
            state.set_filter
        ),
    }
}

/// Sets the filter (empty: every set) and highlights the first row.
pub fn filter(state: &mut AppState, text: String) {
    state.set_filter = text;
    state.picking = Some(0);
    remember(state);
    state.dirty = true;
}

/// Notes which set the highlight is on.
fn remember(state: &mut AppState) {
    let at = state.picking.unwrap_or(0);
    state.picked = rows(state).get(at).map(|r| r.key.clone());
}

/// After the sets changed: the highlight follows its set as the list re-sorts (or stays in
/// range when its set left the list).
pub fn follow(state: &mut AppState) {
    let Some(at) = state.picking else { return };
    let rows = rows(state);
    let found = state.picked.as_ref().and_then(|k| rows.iter().position(|r| r.key == k));
    let len = rows.len();
    state.picking = Some(found.unwrap_or(at.min(len.saturating_sub(1))));
    if found.is_none() {
        remember(state);
    }
}

fn row<'a>(key: &'a ObjRef, set: &StatefulSet, state: &AppState) -> SetRow<'a> {
    let now = state.now;
    let st = set.status.as_ref();
    let kind = crate::core::spec::UpdateType::of(set);
    let strategy = if kind != crate::core::spec::UpdateType::RollingUpdate {
        kind.to_string()
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
        // Judged by its pods where they are watched (the set on screen, a group's members), by
        // its status elsewhere (a namespace's sets are watched, their pods are not).
        health: health::verdict(state, key, None, None).map_or(Health::Unknown, |v| v.word()),
        plan: plan_words(set, now),
        group: group_words(set),
    }
}

/// The set's group in few words (names from the cluster escaped and cut).
fn group_words(set: &StatefulSet) -> String {
    use crate::plan::group::part::{self, ROLLOUT_GROUP, Reading};
    let shown = |t: &str| {
        let t = crate::text::escape_controls(t);
        if t.chars().count() > 24 {
            format!("{}…", t.chars().take(23).collect::<String>())
        } else {
            t.into_owned()
        }
    };
    match part::read(set) {
        Reading::Part(p) => {
            format!("{} {}/{} {}", shown(&p.group), p.place + 1, p.sets.len(), p.state.word())
        }
        Reading::Fleet(p) => {
            let n = p.sets.len();
            format!("fleet {} {}/{n} {}", shown(&p.group), p.place + 1, p.state.word())
        }
        Reading::Invalid(_) => "invalid part".into(),
        Reading::None => {
            let Some(g) = set.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)) else {
                return String::new();
            };
            if crate::core::spec::strategy(set).on_delete {
                format!("{} (rollout-operator)", shown(g))
            } else {
                shown(g)
            }
        }
    }
}

fn plan_words(set: &StatefulSet, now: Option<k8s_openapi::jiff::Timestamp>) -> String {
    use crate::plan::record::{self, Phase, Reading, Runner};
    // A plan under way that nobody runs (its runner's lease ran out) says so.
    let orphan = |r: &record::Record| {
        let now = now.or_else(|| r.since()).unwrap_or_default();
        if Runner::of(set, now).alive() { "" } else { " (no runner)" }
    };
    match record::read(set) {
        Reading::Plan(r) => match r.phase {
            // A done plan of the revision rolled out now says so; an older one is history.
            Phase::Done if crate::plan::verdict::current_plan(set).is_some() => {
                format!("done ({} steps)", r.of)
            }
            Phase::Done => String::new(),
            Phase::Halted => format!("halted at {}/{}", r.step, r.of),
            Phase::Aborted => format!("aborted at {}/{}", r.step, r.of),
            Phase::Gate => format!("{}/{} waits for approval{}", r.step, r.of, orphan(&r)),
            p => format!("{}/{} {}{}", r.step, r.of, p.word(), orphan(&r)),
        },
        Reading::Invalid(_) => "invalid record".into(),
        Reading::None => String::new(),
    }
}

/// A key in the list.
pub fn act(state: &mut AppState, action: Action) -> Vec<Command> {
    let count = rows(state).len();
    let Some(at) = state.picking else { return Vec::new() };
    match action {
        Action::Up => {
            state.picking = Some(at.saturating_sub(1));
            remember(state);
        }
        Action::Down => {
            state.picking = Some((at + 1).min(count.saturating_sub(1)));
            remember(state);
        }
        Action::Accept => {
            let Some(key) = rows(state).get(at).map(|r| r.key.clone()) else {
                let why = match state.set_filter.is_empty() {
                    true => "there is no StatefulSet to open here".to_string(),
                    false => format!(
                        "no StatefulSet matches {:?}: Esc clears the filter",
                        state.set_filter
                    ),
                };
                refuse(state, why);
                return Vec::new();
            };
            return open(state, key);
        }
        Action::Group => {
            let Some(key) = rows(state).get(at).map(|r| r.key.clone()) else {
                refuse(state, "there is no StatefulSet here to open the group of");
                return Vec::new();
            };
            return match super::group::open(state, key, true) {
                Ok(cmds) => cmds,
                Err(why) => {
                    refuse(state, why);
                    Vec::new()
                }
            };
        }
        Action::FilterSets => {
            let kind = crate::app::state::PromptKind::SetFilter;
            let prompt = crate::app::state::Prompt::new(kind, state.set_filter.clone());
            state.modal = crate::app::state::Modal::Prompt(prompt);
        }
        Action::Cancel if !state.set_filter.is_empty() => filter(state, String::new()),
        _ => return Vec::new(),
    }
    state.dirty = true;
    Vec::new()
}

/// Opens `key`: the console shows it and the backend watches its objects.
pub fn open(state: &mut AppState, key: ObjRef) -> Vec<Command> {
    state.picking = None;
    super::group::forget(state);
    state.selected_set = Some(key.clone());
    state.selected_seen = false;
    state.selected_ordinal = state.ordinal_span().map_or(0, |(lo, _)| lo);
    state.advisor = None;
    state.dirty = true;
    vec![Command::Backend(Op::View(super::group::view_op(state)))]
}

/// `Z`: the selected set's group as a whole, or back to the set.
pub fn toggle_group(state: &mut AppState) -> Result<Vec<Command>, super::refusal::Refusal> {
    if state.group.is_some() {
        return Ok(close_group(state));
    }
    let key = state.selected_set.clone().ok_or("no StatefulSet is selected")?;
    super::group::open(state, key, false)
}

/// Leaves the group's view: back to the set list when it was opened there, else to the set
/// under the cursor alone.
pub fn close_group(state: &mut AppState) -> Vec<Command> {
    // A fleet's view is the console's only view: nothing to go back to.
    if state.group.as_ref().is_some_and(|g| g.by == super::state::GroupBy::Fleet) {
        let words = "a fleet's view: each member is a column (← →, Tab); q quits";
        super::notify::info(state, words.into());
        return Vec::new();
    }
    let Some(shown) = super::group::forget(state) else { return Vec::new() };
    if shown.from_list && state.can_pick {
        return back(state);
    }
    match state.selected_set {
        Some(_) => vec![Command::Backend(Op::View(super::group::view_op(state)))],
        None => Vec::new(),
    }
}

/// Back to the list (the backend stops watching the set's objects).
pub fn back(state: &mut AppState) -> Vec<Command> {
    let at = state
        .selected_set
        .as_ref()
        .and_then(|r| rows(state).iter().position(|row| row.key == r))
        .unwrap_or(0);
    state.picking = Some(at);
    state.picked = state.selected_set.clone();
    super::group::forget(state);
    state.dirty = true;
    vec![Command::Backend(Op::View(super::group::view_op(state)))]
}
