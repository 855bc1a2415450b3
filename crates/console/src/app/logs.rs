//! The log view: the selected pod's log, followed (the last lines, new ones as they come), or
//! its previous container's; scrolled with the keys of its context; closed with Esc.
//!
//! Bounded: at most [`MAX_LOG_LINES`](super::state::MAX_LOG_LINES) lines are held (the oldest
//! dropped, and counted), each already cut by the backend. Owns the view's state and its
//! transitions; only the reducer calls it.

use super::action::Action;
use super::msg::Command;
use super::state::{AppState, LogView, Modal};
use crate::app::refusal::Refusal;
use crate::backend::{LogChunk, LogRequest, ObjRef, Op, ViewOp};

fn ask(req: Option<LogRequest>) -> Vec<Command> {
    vec![Command::Backend(Op::View(ViewOp::Logs(req)))]
}

/// `L`: opens the selected pod's log.
pub fn open(state: &mut AppState) -> Result<Vec<Command>, Refusal> {
    let set = state.selected_set.clone().ok_or("no StatefulSet is shown: no pod to read")?;
    let name = crate::core::labels::pod_name(&set.name, state.selected_ordinal);
    let pod = ObjRef::new(set.namespace.clone(), name);
    if state.mirror.pod(&pod).is_none() {
        return Err(format!("{} does not exist: it has no log", pod.name).into());
    }
    let request = LogRequest { pod, previous: false };
    state.modal = Modal::Log(LogView::new(request.clone()));
    Ok(ask(Some(request)))
}

/// A key in the log view.
pub fn act(state: &mut AppState, action: Action) -> Vec<Command> {
    let page = usize::from(state.screen.height.saturating_sub(6)).max(1);
    let Modal::Log(view) = &mut state.modal else { return Vec::new() };
    let most = view.lines.len().saturating_sub(1);
    match action {
        Action::Up => view.back = (view.back + 1).min(most),
        Action::Down => view.back = view.back.saturating_sub(1),
        Action::PageUp => view.back = (view.back + page).min(most),
        Action::PageDown => view.back = view.back.saturating_sub(page),
        Action::First => view.back = most,
        Action::Last => view.back = 0,
        Action::PreviousLog => {
            let request =
                LogRequest { pod: view.request.pod.clone(), previous: !view.request.previous };
            *view = LogView::new(request.clone());
            return ask(Some(request));
        }
        _ => {
            state.modal = Modal::None;
            return ask(None);
        }
    }
    Vec::new()
}

/// A piece of the log from the backend (dropped unless it is the one shown).
pub fn on_chunk(state: &mut AppState, request: &LogRequest, chunk: LogChunk) {
    let Modal::Log(view) = &mut state.modal else { return };
    if view.request != *request {
        return;
    }
    match chunk {
        LogChunk::Replace(lines) => {
            view.lines.clear();
            view.note = None;
            view.ended = false;
            view.push(lines);
        }
        LogChunk::Append(lines) => {
            // Scrolled back, the same lines stay in view as new ones arrive.
            if view.back > 0 {
                view.back += lines.len();
            }
            view.push(lines);
        }
        LogChunk::Failed(why) => {
            view.note = Some(why);
            view.ended = true;
        }
        LogChunk::Ended => {
            view.note = Some("the log ended (the server closed the stream)".into());
            view.ended = true;
        }
    }
    view.back = view.back.min(view.lines.len().saturating_sub(1));
    state.dirty = true;
}
