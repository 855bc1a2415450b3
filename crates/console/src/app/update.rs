//! The ONE reducer: [`update`]`(&mut AppState, Msg) -> Vec<Command>`. Every change to
//! [`AppState`] happens here (and in `ops.rs` / `advisor.rs`, which only it calls).
//!
//! Owns key dispatch through the keymap, overlays (help, prompt, confirmation, picker),
//! selection, the mirror's updates from backend events, the status line and the timeline.
//! Must not touch the terminal, threads or a clock: time arrives as `Msg::Tick` and
//! `BackendEvent::Clock`; effects leave as [`Command`]s.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use super::action::Action;
use super::advisor;
use super::keymap::{self, Context};
use super::msg::{Command, Msg};
use super::notify::{info, log_operator, push_now, refuse};
use super::ops;
use super::selection::{next_set, select, select_by};
use super::state::Origin;
use super::state::PromptKind;
use super::state::{AppState, Hit, Modal};
use super::view;
use crate::app::refusal::Refusal;
use crate::backend::EventKind;
use crate::backend::Op;

/// Applies one message to the state; returns the effects to run, in order.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Key(k) => on_key(state, k),
        Msg::Mouse(m) => on_mouse(state, m),
        Msg::Resize(w, h) => {
            state.screen = Rect::new(0, 0, w, h);
            state.dirty = true;
            Vec::new()
        }
        Msg::Backend(ev) => super::backend_events::on_backend(state, ev),
        Msg::Tick => {
            on_tick(state);
            Vec::new()
        }
        Msg::Drawn(hits) => {
            state.hits = hits;
            state.dirty = false;
            Vec::new()
        }
        Msg::BatchEnd => {
            let mut cmds = super::group::refresh(state);
            advisor::refresh(state);
            super::derived::refresh(state);
            super::differs::settle(state);
            cmds.extend(super::navigate::follow_events(state));
            cmds.extend(super::plan_run::drive(state));
            cmds
        }
        Msg::Signal(_) => quit_now(state),
        Msg::Suspend => suspend(state),
        Msg::Exported { path, lines, error } => {
            super::navigate::exported(state, &path, lines, error);
            Vec::new()
        }
        Msg::Wall(at) => {
            state.wall = Some(at);
            Vec::new()
        }
        Msg::Start(start) => {
            state.can_pick = start.can_pick;
            if let Some(g) = start.group {
                state.selected_set = g.sets.first().cloned();
                state.group = Some(g);
            }
            match start.open {
                Some(set) => state.selected_set = Some(set),
                None if start.can_pick => state.picking = Some(0),
                None => {}
            }
            if let Some(speed) = start.speed {
                state.speed = speed;
            }
            state.dirty = true;
            Vec::new()
        }
    }
}

/// Job control: the loop gives the terminal back and stops; everything is drawn again after.
fn suspend(state: &mut AppState) -> Vec<Command> {
    state.dirty = true;
    vec![Command::Suspend]
}

/// `q`: quits, unless this console runs a plan — then it asks first (quitting stops the plan
/// where it is and gives its lease back; a second `q` or ctrl-c in the question quits).
fn quit(state: &mut AppState) -> Vec<Command> {
    let asked =
        matches!(&state.modal, Modal::Confirm(c) if c.then == Some(super::state::Then::Quit));
    let running = state.plan_run.as_ref().filter(|r| !r.ending());
    if let (Some(run), false) = (running, asked) {
        let set = run.set().clone();
        let now = state.now.unwrap_or_default();
        let words = state
            .mirror
            .set(&set)
            .and_then(|s| crate::plan::record::read(s).plan().map(|r| r.words(now)))
            .unwrap_or_default();
        // The command that resumes it is the verdict's (its group's own when it is in one).
        let resume = state.mirror.set(&set).and_then(|s| {
            let r = crate::plan::record::read(s).plan().cloned()?;
            Some(crate::plan::verdict::resume_move(s, &r).words())
        });
        let detail = match (run.run.group_name(), resume) {
            (None, Some(go)) => {
                format!("The set stays held at its step; {go} (or P in a console) from there.")
            }
            (Some(_), Some(go)) => format!(
                "The sets stay where the plan left them (the rolling one held at its step); \
                 {go} (or P in the group's view)."
            ),
            (_, None) => {
                "Its sets stay where the plan left them; P in a console resumes it.".to_string()
            }
        };
        state.modal = Modal::Confirm(super::state::Confirm {
            title: format!("Quit while this console runs {}?", run.words()),
            old: words,
            new: "stopped where it is, its lease given back".into(),
            details: vec![detail],
            then: Some(super::state::Then::Quit),
            ..Default::default()
        });
        return Vec::new();
    }
    quit_now(state)
}

/// Quits at once (a signal, or confirmed): a plan this console runs stops and gives its lease
/// back first.
fn quit_now(state: &mut AppState) -> Vec<Command> {
    let mut cmds = super::plan_run::quit(state, "this console quit");
    state.modal = Modal::None;
    state.quit = true;
    cmds.push(Command::Quit);
    cmds
}

fn on_key(state: &mut AppState, key: KeyEvent) -> Vec<Command> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    let ctx = state.context();
    let found = keymap::lookup(ctx, &state.caps, &key).or_else(|| {
        keymap::lookup_elsewhere(ctx, &key).filter(|a| !keymap::offered(*a, &state.caps))
    });
    let Some(action) = found else {
        match ctx {
            Context::Prompt => edit_prompt(state, &key),
            Context::Normal => {
                if let KeyCode::Char(c) = key.code {
                    let help = keymap::key_for(Context::Normal, Action::Help).unwrap_or_default();
                    refuse(state, format!("{c:?} is not bound: {help} lists the keys"));
                }
            }
            _ => {}
        }
        return Vec::new();
    };
    state.dirty = true;
    perform(state, action)
}

/// Runs `action` in the current context (keys, mouse and tests all come through here).
pub fn perform(state: &mut AppState, action: Action) -> Vec<Command> {
    if action == Action::Quit {
        return quit(state);
    }
    if action == Action::Suspend {
        return suspend(state);
    }
    let outcome = match state.context() {
        Context::Normal => normal(state, action),
        Context::Help => {
            help_action(state, action);
            Ok(Vec::new())
        }
        Context::Prompt => prompt_action(state, action),
        Context::Confirm => Ok(confirm_action(state, action)),
        Context::Picker => picker_action(state, action),
        Context::Log => Ok(super::logs::act(state, action)),
        Context::Sets => match action {
            Action::Help => {
                state.modal = Modal::Help { page: 0 };
                Ok(Vec::new())
            }
            Action::Reconnect => Ok(reconnect(state)),
            other => Ok(super::sets::act(state, other)),
        },
    };
    outcome.unwrap_or_else(|why| {
        refuse(state, why);
        Vec::new()
    })
}

/// In the help overlay: turn its pages (as many as this terminal needs), or close it.
fn help_action(state: &mut AppState, action: Action) {
    let Modal::Help { page } = state.modal else { return };
    let last = view::help::layout(state.screen, &state.caps).pages.len().saturating_sub(1);
    state.modal = match action {
        Action::PageDown => Modal::Help { page: (page + 1).min(last) },
        Action::PageUp => Modal::Help { page: page.min(last).saturating_sub(1) },
        _ => Modal::None,
    };
}

fn normal(state: &mut AppState, action: Action) -> ops::Outcome {
    match action {
        Action::Help => {
            state.modal = Modal::Help { page: 0 };
            Ok(Vec::new())
        }
        Action::Back if state.group.is_some() => {
            state.status = None;
            Ok(super::sets::close_group(state))
        }
        Action::Back => {
            state.status = None;
            if !state.can_pick {
                return Ok(Vec::new());
            }
            Ok(super::sets::back(state))
        }
        Action::Reconnect => Ok(reconnect(state)),
        Action::Group => super::sets::toggle_group(state),
        // In a group's matrix the sets are the columns, the ordinals the rows.
        Action::Left | Action::Right if state.group.is_some() => {
            super::group::column_by(state, if action == Action::Left { -1 } else { 1 }, false);
            Ok(Vec::new())
        }
        Action::NextSet if state.group.is_some() => {
            super::group::column_by(state, 1, true);
            Ok(Vec::new())
        }
        Action::Up | Action::Down if state.group.is_some() => {
            Ok(select_by(state, if action == Action::Up { -1 } else { 1 }))
        }
        Action::Left => Ok(select_by(state, -1)),
        Action::Right => Ok(select_by(state, 1)),
        Action::Up => Ok(select_by(state, -i64::from(state.hits.grid_columns.max(1)))),
        Action::Down => Ok(select_by(state, i64::from(state.hits.grid_columns.max(1)))),
        Action::PageUp => Ok(select_by(state, -i64::from(state.hits.page.max(1)))),
        Action::PageDown => Ok(select_by(state, i64::from(state.hits.page.max(1)))),
        Action::First => Ok(select_by(state, i64::MIN / 2)),
        Action::Last => Ok(select_by(state, i64::MAX / 2)),
        Action::TimelineOlder => scroll_timeline(state, 1).map(|()| Vec::new()),
        Action::TimelineFilter => {
            super::navigate::toggle_timeline_filter(state).map(|()| Vec::new())
        }
        Action::JumpToWaited => super::navigate::jump_to_waited(state).map(|()| Vec::new()),
        Action::Logs => super::logs::open(state),
        Action::ExportTimeline => Ok(super::navigate::export_timeline(state)),
        Action::TimelineNewer => scroll_timeline(state, -1).map(|()| Vec::new()),
        Action::JumpPrompt => {
            let (Some(set), Some((lo, hi))) = (state.selected_set.clone(), state.ordinal_span())
            else {
                return Err("there is no ordinal to go to yet".into());
            };
            let kind = PromptKind::Jump { set, lo, hi };
            state.modal = Modal::Prompt(crate::app::state::Prompt::new(kind, ""));
            Ok(Vec::new())
        }
        Action::NextSet => {
            next_set(state);
            Ok(Vec::new())
        }
        other => ops::perform(state, other),
    }
}

/// Asks the backend to read the credentials again and reconnect.
fn reconnect(state: &mut AppState) -> Vec<Command> {
    if !state.caps.reconnect {
        refuse(state, "the simulator has no credentials to read again");
        return Vec::new();
    }
    info(state, "reading the credentials again and reconnecting".into());
    vec![Command::Backend(Op::View(crate::backend::ViewOp::Reconnect))]
}

fn edit_prompt(state: &mut AppState, key: &KeyEvent) {
    let Modal::Prompt(p) = &mut state.modal else {
        return;
    };
    match key.code {
        KeyCode::Backspace => p.backspace(),
        KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => p.clear(),
        KeyCode::Char(c)
            if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            p.push(c);
        }
        _ => return,
    }
    // The set list filters as the name is typed (as k9s does).
    if p.kind == PromptKind::SetFilter {
        let text = p.input.trim().to_string();
        super::sets::filter(state, text);
    }
    state.dirty = true;
}

fn prompt_action(state: &mut AppState, action: Action) -> ops::Outcome {
    match action {
        Action::Cancel => {
            // Esc in the set list's filter clears it (typing applied it already).
            if matches!(&state.modal, Modal::Prompt(p) if p.kind == PromptKind::SetFilter) {
                super::sets::filter(state, String::new());
            }
            state.modal = Modal::None;
            Ok(Vec::new())
        }
        Action::Accept => submit_prompt(state),
        _ => Ok(Vec::new()),
    }
}

/// Enter in a prompt: validate, then close it and act (or keep it open with the error).
fn submit_prompt(state: &mut AppState) -> ops::Outcome {
    let Modal::Prompt(p) = &state.modal else {
        return Ok(Vec::new());
    };
    let kind = p.kind.clone();
    let parsed = match &kind {
        PromptKind::Partition { .. } | PromptKind::Scale { .. } => p.number().map(Value::Number),
        PromptKind::Image { .. } | PromptKind::BrokenImage { .. } => p.text().map(Value::Text),
        // Checked here, so a mistake keeps the prompt open with the error under it.
        PromptKind::Plan { .. } => {
            p.text().and_then(|t| super::plan_run::parse(&t).map(|_| t)).map(Value::Text)
        }
        PromptKind::GroupPlan { .. } => {
            p.text().and_then(|t| super::plan_run::parse_group(&t).map(|_| t)).map(Value::Text)
        }
        PromptKind::MaxUnavailable { .. } => p.int_or_percent().map(Value::IntOrPercent),
        PromptKind::SetFilter => Ok(Value::Text(p.input.trim().to_string())),
        PromptKind::ForceReason { .. } => {
            crate::value::reason(&p.input).map(Value::Text).map_err(super::refusal::Refusal::of)
        }
        PromptKind::Jump { lo, hi, .. } => p.number().and_then(|n| {
            if (*lo..=*hi).contains(&n) {
                Ok(Value::Number(n))
            } else {
                Err(format!("ordinal {n} is not on the grid: expected {lo} to {hi}").into())
            }
        }),
    };
    let value = match parsed {
        Ok(v) => v,
        Err(e) => {
            if let Modal::Prompt(p) = &mut state.modal {
                p.error = Some(e.0);
            }
            return Ok(Vec::new());
        }
    };
    state.modal = Modal::None;
    match (kind, value) {
        (PromptKind::Partition { set, current }, Value::Number(n)) => {
            ops::set_partition(state, set, current, n)
        }
        (PromptKind::Scale { set, current }, Value::Number(n)) => {
            ops::scale_to(state, set, current, n)
        }
        (PromptKind::Image { set, .. }, Value::Text(image)) => ops::set_image(state, set, image),
        (PromptKind::BrokenImage { .. }, Value::Text(image)) => ops::toggle_broken(state, image),
        (PromptKind::Plan { set }, Value::Text(text)) => {
            let form = super::plan_run::parse(&text)?;
            super::plan_run::offer(state, set, form)
        }
        (PromptKind::GroupPlan { group }, Value::Text(text)) => {
            let form = super::plan_run::parse_group(&text)?;
            super::plan_run::group::offer(state, group, form)
        }
        (PromptKind::MaxUnavailable { set, .. }, Value::IntOrPercent(v)) => {
            ops::set_max_unavailable(state, set, v)
        }
        (PromptKind::ForceReason { set, pod, uid, .. }, Value::Text(reason)) => {
            ops::force_delete(state, set, pod, uid, reason)
        }
        (PromptKind::SetFilter, Value::Text(filter)) => {
            super::sets::filter(state, filter);
            Ok(Vec::new())
        }
        (PromptKind::Jump { .. }, Value::Number(n)) => {
            select(state, n);
            Ok(Vec::new())
        }
        _ => Ok(Vec::new()),
    }
}

enum Value {
    Number(i32),
    Text(String),
    IntOrPercent(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString),
}

fn confirm_action(state: &mut AppState, action: Action) -> Vec<Command> {
    let Modal::Confirm(c) = std::mem::take(&mut state.modal) else {
        return Vec::new();
    };
    match action {
        Action::Accept => {
            if let Some(then) = c.then {
                let mut cmds: Vec<Command> = Vec::new();
                if then == super::state::Then::StopPlan {
                    cmds.extend(super::plan_run::stop(state, "aborted from this console"));
                }
                if !c.ops.is_empty() {
                    let said = ops::sent(state, &c.ops, &c.log, format!("{} → {}", c.old, c.new));
                    info(state, said);
                }
                if !c.log.is_empty() {
                    log_operator(state, c.log);
                }
                cmds.extend(c.ops.into_iter().map(Command::Backend));
                match then {
                    super::state::Then::Plan { set, form } => {
                        match super::plan_run::start(state, set, form) {
                            Ok(more) => cmds.extend(more),
                            Err(e) => refuse(state, e),
                        }
                    }
                    super::state::Then::GroupPlan { group, form } => {
                        match super::plan_run::group::start(state, group, form) {
                            Ok(more) => cmds.extend(more),
                            Err(e) => refuse(state, e),
                        }
                    }
                    super::state::Then::Quit => cmds.extend(quit_now(state)),
                    super::state::Then::StopPlan => {}
                    super::state::Then::After { op, note } => {
                        push_now(state, EventKind::Notice { text: note }, Origin::Operator);
                        cmds.extend(after(state, &cmds, *op));
                    }
                }
                return cmds;
            }
            let said = ops::sent(state, &c.ops, &c.log, format!("{} → {}", c.old, c.new));
            log_operator(state, c.log);
            info(state, said);
            c.ops.into_iter().map(Command::Backend).collect()
        }
        Action::Cancel => {
            info(state, "cancelled: nothing changed".into());
            Vec::new()
        }
        _ => {
            state.modal = Modal::Confirm(c);
            Vec::new()
        }
    }
}

/// `op` sent once the writes in `cmds` are done: at once where a write is applied as it is
/// sent (the simulator, which applies ops in order), else when the server answers the last.
fn after(state: &mut AppState, cmds: &[Command], op: crate::backend::Op) -> Vec<Command> {
    let last = cmds.iter().rev().find_map(|c| match c {
        Command::Backend(crate::backend::Op::Cluster(w)) => Some(w.id),
        _ => None,
    });
    match last {
        Some(id) if state.caps.writes_answered_later => {
            state.after_write = Some((id, op));
            Vec::new()
        }
        _ => vec![Command::Backend(op)],
    }
}

fn picker_action(state: &mut AppState, action: Action) -> ops::Outcome {
    match action {
        Action::Cancel => {
            state.modal = Modal::None;
            Ok(Vec::new())
        }
        Action::Up | Action::Down => {
            if let Modal::Picker(p) = &mut state.modal {
                let last = p.choices.len().saturating_sub(1);
                p.selected = match action {
                    Action::Up => p.selected.saturating_sub(1),
                    _ => (p.selected + 1).min(last),
                };
            }
            Ok(Vec::new())
        }
        Action::Accept => ops::pick_revision(state),
        _ => Ok(Vec::new()),
    }
}

fn on_mouse(state: &mut AppState, m: MouseEvent) -> Vec<Command> {
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => match state.hits.hit(m.column, m.row) {
            Some(Hit::Ordinal(o)) if state.modal == Modal::None => {
                select(state, o);
                Vec::new()
            }
            Some(Hit::Cell { column, ordinal }) if state.modal == Modal::None => {
                super::group::select_column(state, usize::from(column));
                select(state, ordinal);
                Vec::new()
            }
            Some(Hit::Revision(r)) if state.modal == Modal::None => {
                ops::open_picker(state, Some(r)).unwrap_or_else(|why| {
                    refuse(state, why);
                    Vec::new()
                })
            }
            _ => Vec::new(),
        },
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
            if state.modal == Modal::None
                && state.hits.hit(m.column, m.row) == Some(Hit::Timeline) =>
        {
            let by = if m.kind == MouseEventKind::ScrollUp { WHEEL_LINES } else { -WHEEL_LINES };
            let rows = usize::from(state.hits.timeline_rows);
            // At either end the wheel just stops (no message for a gesture).
            if state.timeline.scroll(by, rows).is_ok() {
                state.dirty = true;
            }
            Vec::new()
        }
        MouseEventKind::ScrollUp if state.modal == Modal::None => perform(state, Action::Up),
        MouseEventKind::ScrollDown if state.modal == Modal::None => perform(state, Action::Down),
        _ => Vec::new(),
    }
}

/// Lines one mouse-wheel notch scrolls the timeline.
const WHEEL_LINES: isize = 3;

/// `K` / `J`: half the timeline pane per press, towards older (`dir` 1) or newer (-1) entries.
fn scroll_timeline(state: &mut AppState, dir: isize) -> Result<(), Refusal> {
    let rows = usize::from(state.hits.timeline_rows);
    if rows == 0 {
        return Err("the timeline is not on screen at this terminal size".into());
    }
    let step = isize::try_from((rows / 2).max(1)).unwrap_or(1);
    state.timeline.scroll(dir * step, rows)
}

fn on_tick(state: &mut AppState) {
    if let Some(s) = &mut state.status {
        s.ticks_left = s.ticks_left.saturating_sub(1);
        if s.ticks_left == 0 {
            state.status = None;
            state.dirty = true;
        }
    }
}
