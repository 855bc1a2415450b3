//! The reducer's half for what a backend reports ([`BackendEvent`]): the mirror (objects,
//! complete re-listings and their badge), the clock, the mode, capabilities, the server's
//! version, the connection, failed ops (a conflict asks again), notices and the timeline
//! (where, on a cluster, the advisor is compared with what the controller did).
//!
//! Owns those transitions. Only `update` calls it. Must not touch the terminal or a backend.

use super::msg::Command;
use super::notify::{self, info, push_now};
use super::selection::{choose_set, select};
use super::state::{AppState, Confirm, Modal, Origin, TimelineEntry};
use crate::backend::{BackendEvent, Connection, EventKind, Failure, FailureKind, Mode, Op};

pub(super) fn on_backend(state: &mut AppState, ev: BackendEvent) -> Vec<Command> {
    match ev {
        BackendEvent::Applied(obj) => {
            if let crate::backend::Object::Set(set) = &obj {
                super::sets::note_progress(state, set);
            }
            if state.mirror.apply(obj) {
                return after_mirror_change(state);
            }
        }
        BackendEvent::Deleted(obj) => {
            if let crate::backend::Object::Set(set) = &obj {
                state.set_progress.remove(&crate::backend::ObjRef::of(&set.metadata));
            }
            if state.mirror.delete(&obj) {
                return after_mirror_change(state);
            }
        }
        BackendEvent::Listed { kind, scope, objects } => {
            if on_listed(state, kind, scope, objects) {
                return after_mirror_change(state);
            }
        }
        BackendEvent::Log { request, chunk } => super::logs::on_chunk(state, &request, chunk),
        BackendEvent::Synced => {
            state.synced = true;
            state.dirty = true;
            return after_mirror_change(state);
        }
        BackendEvent::Timeline(ev) => on_timeline(state, ev),
        BackendEvent::Clock { now, speed } => on_clock(state, now, speed),
        BackendEvent::Mode(m) => {
            if state.mode != m {
                state.mode = m;
                let word = match m {
                    Mode::Live => "live: the controller reconciles",
                    Mode::Paused => "paused: reconciliation stopped",
                };
                info(state, word.into());
            }
        }
        BackendEvent::Pace { asked, achieved } => on_pace(state, asked, achieved),
        BackendEvent::BrokenImages(images) => {
            state.broken_images = images.into_iter().collect();
            state.dirty = true;
        }
        BackendEvent::Capabilities(caps) => {
            if state.caps != caps {
                state.caps = caps;
                state.dirty = true;
            }
        }
        BackendEvent::Server { version } => on_server(state, version),
        BackendEvent::Access { kind, denied } => {
            let changed = match denied {
                Some(why) => state.unreadable.insert(kind, why.clone()) != Some(why),
                None => state.unreadable.remove(&kind).is_some(),
            };
            if changed {
                state.listing.remove(&kind);
                return after_mirror_change(state);
            }
        }
        BackendEvent::Listing { kind, so_far, objects } => {
            return on_listing(state, kind, so_far, objects);
        }
        BackendEvent::Connection(c) => on_connection(state, c),
        BackendEvent::OpFailed(failure) => {
            answered(state, failure.id);
            super::plan_run::answered(state, failure.id, Some(&failure));
            let after = chained(state, failure.id);
            let failed = failure.op.clone();
            on_failure(state, failure);
            if let Some((_, op)) = after {
                let what = op.describe();
                notify::error(state, format!("{what}: not sent, as {failed} failed"));
            }
        }
        BackendEvent::Read { set, read } => return super::plan_run::fresh(state, &set, read),
        BackendEvent::OpDone { id, said } => {
            super::plan_run::answered(state, Some(id), None);
            // With words of its own the server's answer was told as a notice already.
            if let Some(done) = answered(state, Some(id)).filter(|_| said.is_none()) {
                info(state, done);
            }
            if let Some((_, op)) = chained(state, Some(id)) {
                let text = op.describe();
                let done = format!("{text}: done");
                let said = super::ops::sent(state, std::slice::from_ref(&op), &text, done);
                info(state, said);
                return vec![Command::Backend(op)];
            }
        }
        BackendEvent::Error(message) => notify::error(state, message),
        BackendEvent::Notice(text) => {
            push_now(state, EventKind::Notice { text: text.clone() }, Origin::Notice);
            info(state, text);
        }
    }
    Vec::new()
}

/// A first listing under way: `so_far` objects arrived, `objects` since the last report (the
/// grid draws the pods known so far; the complete listing replaces them).
fn on_listing(
    state: &mut AppState,
    kind: crate::backend::ObjKind,
    so_far: usize,
    objects: Vec<crate::backend::Object>,
) -> Vec<Command> {
    state.listing.insert(kind, so_far);
    state.dirty = true;
    let mut changed = false;
    for obj in objects {
        changed |= state.mirror.apply(obj);
    }
    if changed { after_mirror_change(state) } else { Vec::new() }
}

/// A complete listing of `kind` in `scope`: whether the mirror changed. A scope listed before
/// is listed again: a re-list (a 410 or a reconnect), counted for the badge.
fn on_listed(
    state: &mut AppState,
    kind: crate::backend::ObjKind,
    scope: crate::backend::Scope,
    objects: Vec<crate::backend::Object>,
) -> bool {
    state.listing.remove(&kind);
    let changed = state.mirror.replace(kind, &scope, objects);
    if state.listed.iter().any(|(k, s)| *k == kind && *s == scope) {
        state.relists += 1;
        state.dirty = true;
    } else if state.listed.len() < 64 {
        state.listed.push((kind, scope));
    }
    changed
}

/// A backend timeline entry: compared with the advisor (on a cluster), then kept.
fn on_timeline(state: &mut AppState, ev: crate::backend::Event) {
    if !state.caps.pause_reconcile {
        super::differs::check(state, &ev.kind);
    }
    state.backend_t_ms = state.backend_t_ms.max(ev.t_ms);
    let sets = state.mirror.set_names();
    let mut entry = TimelineEntry::new(ev.t_ms, ev.kind, Origin::Backend, &sets);
    entry.late = state.catch_up_until_ms.is_some_and(|until| ev.t_ms <= until);
    state.timeline.push(entry);
    state.dirty = true;
}

/// The backend's clock report: redrawn only when the shown second or the speed moved.
fn on_clock(state: &mut AppState, now: k8s_openapi::jiff::Timestamp, speed: f64) {
    let shown = |t: Option<k8s_openapi::jiff::Timestamp>| t.map(|t| t.as_second());
    if shown(state.now) != shown(Some(now)) || state.speed != speed {
        state.dirty = true;
    }
    state.now = Some(now);
    state.clock_wall = state.wall;
    state.speed = speed;
    align_origin(state);
}

/// The simulator's achieved speed while it cannot keep up (`None`: it keeps up again).
fn on_pace(state: &mut AppState, asked: f64, achieved: Option<f64>) {
    state.pace = achieved;
    state.dirty = true;
    if let Some(a) = achieved {
        let said = format!(
            "the simulator cannot keep up: ×{} asked, ×{} achieved",
            crate::app::view::header::speed_text(asked),
            crate::app::view::header::speed_text(a)
        );
        info(state, said);
    }
}

/// The op waiting for write `id` ([`AppState::after_write`]), taken.
fn chained(
    state: &mut AppState,
    id: Option<crate::backend::WriteId>,
) -> Option<(crate::backend::WriteId, Op)> {
    let id = id?;
    state.after_write.take_if(|(w, _)| *w == id)
}

/// A write was answered: it is no longer pending; what to say now that it is done.
fn answered(state: &mut AppState, id: Option<crate::backend::WriteId>) -> Option<String> {
    let id = id?;
    let i = state.writes_pending.iter().position(|(w, _)| *w == id)?;
    state.writes_pending.remove(i).map(|(_, said)| said)
}

/// The server's version: the advisor reproduces that release (said once when ststui does not
/// know it and uses the nearest one).
fn on_server(state: &mut AppState, version: String) {
    let (v, note) = crate::core::Version::for_server(&version);
    // The server's gates cannot be read: a stored Recreate set is taken as recreated.
    state.options = crate::core::Options::watching(v);
    state.server_version = Some(version);
    state.advisor = None;
    state.dirty = true;
    if let Some(note) = note {
        push_now(state, EventKind::Notice { text: note.clone() }, Origin::Notice);
        info(state, note);
    }
}

/// The connection went down, came back, or our credentials were refused.
fn on_connection(state: &mut AppState, c: Connection) {
    if state.connection == c {
        return;
    }
    let was = std::mem::replace(&mut state.connection, c.clone());
    state.dirty = true;
    match c {
        Connection::Up if was != Connection::Up => {
            let since = match &was {
                Connection::Unreachable { since, .. } | Connection::Failing { since, .. } => {
                    Some(*since)
                }
                _ => None,
            };
            let outage = match (since, state.now) {
                (Some(since), Some(now)) => {
                    let secs = now.as_second().saturating_sub(since.as_second()).max(0);
                    let ms = u64::try_from(secs).unwrap_or(0).saturating_mul(1000);
                    format!(
                        " after {} without the server (since {}); lines marked {} happened \
                         during the outage and carry the time they were seen",
                        crate::app::view::timeline::duration_text(ms),
                        since.strftime("%H:%M:%S"),
                        crate::app::view::timeline::LATE_MARK
                    )
                }
                _ => String::new(),
            };
            let text = format!("reconnected{outage}: watching again; the data is live");
            push_now(state, EventKind::Notice { text: text.clone() }, Origin::Notice);
            state.catch_up_until_ms = Some(state.elapsed_ms().saturating_add(CATCH_UP_MS));
            info(state, text);
        }
        Connection::Up => {}
        Connection::Unreachable { error, .. } => {
            notify::error(state, format!("lost the connection: {error}; retrying"));
        }
        Connection::Failing { error, .. } => {
            notify::error(state, format!("the server answers with errors: {error}; retrying"));
        }
        Connection::Unauthorized { error } => notify::error(state, error),
    }
}

/// How long after a reconnect the watches' replay of what happened meanwhile arrives (a resumed
/// watch replays at once; a re-list takes a page or a few): lines in it are marked late.
const CATCH_UP_MS: u64 = 3_000;

/// A failed op. A conflict on a write the operator decided shows what changed and asks again
/// (decided on the set as it is now); everything else is an error line.
fn on_failure(state: &mut AppState, f: Failure) {
    let said = format!("{} failed: {}", f.op, f.message);
    match (f.kind, f.write) {
        (FailureKind::Conflict, Some(write))
            if write.basis.is_some() && state.modal == Modal::None =>
        {
            notify::error(state, said);
            let target = write.op.target().clone();
            let confirm = Confirm {
                title: format!("{target} changed: apply your change to it as it is now?"),
                old: f.message,
                new: f.op.clone(),
                warning: Some("nothing was written yet; no means it stays as it is now".into()),
                log: f.op,
                ops: vec![Op::Cluster(write)],
                ..Default::default()
            };
            state.modal = Modal::Confirm(confirm);
        }
        // A budget refused an eviction: the way past it, when this console may take it.
        (FailureKind::Disruption, _)
            if super::readings::applies(super::action::Action::ForceDeletePod, state) =>
        {
            let key = super::keymap::key_for(
                super::keymap::Context::Normal,
                super::action::Action::ForceDeletePod,
            )
            .unwrap_or_default();
            let how = format!("{key} on it force-deletes past its budgets (asks why)");
            notify::error(state, format!("{said} — {how}"));
        }
        _ => notify::error(state, said),
    }
}

/// At a clock report (the backend reports its clock after the events up to it): keeps
/// `clock_origin` at or before `now - backend_t_ms` (see [`AppState::clock_origin`]).
fn align_origin(state: &mut AppState) {
    let Some(now) = state.now else {
        return;
    };
    let ms = i64::try_from(state.backend_t_ms).unwrap_or(i64::MAX);
    let implied =
        now.checked_sub(k8s_openapi::jiff::SignedDuration::from_millis(ms)).unwrap_or(now);
    if state.clock_origin.is_none_or(|o| implied < o) {
        state.clock_origin = Some(implied);
        state.dirty = true;
    }
}

/// After an object changed: pick a set if none is selected (or it went away), keep the
/// selected ordinal inside the span, and redraw. On a cluster the opened set is the one asked
/// for: when it is deleted (or was never there) the console says so and offers the set list.
fn after_mirror_change(state: &mut AppState) -> Vec<Command> {
    state.dirty = true;
    let gone = state.selected_set.as_ref().is_some_and(|r| state.mirror.set(r).is_none());
    if !gone && state.selected_set.is_some() {
        state.selected_seen = true;
    }
    let mut cmds = Vec::new();
    if state.can_pick {
        let readable = !state.unreadable.contains_key(&crate::backend::ObjKind::Set);
        if gone && state.synced && state.picking.is_none() && readable {
            let r =
                state.selected_set.clone().unwrap_or_else(|| crate::backend::ObjRef::new("", ""));
            let said = if state.selected_seen {
                format!("statefulset {r} was deleted: choose another")
            } else {
                format!(
                    "statefulset {} not found in namespace {}: choose one of its sets (-n picks \
                     another namespace)",
                    r.name, r.namespace
                )
            };
            notify::error(state, said);
            cmds = super::sets::back(state);
        }
        super::sets::follow(state);
    } else if state.selected_set.is_none() || gone {
        let first = state.mirror.sets().next().map(|(r, _)| r.clone());
        choose_set(state, first);
    }
    let ordinal = state.selected_ordinal;
    select(state, ordinal);
    cmds
}
