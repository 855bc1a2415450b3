//! The footer: key hints for the active context, derived from the keymap table (the bindings
//! that have a footer label, in table order), dimmed when the action cannot apply now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::app::action::Action;
use crate::app::keymap::BINDINGS;
use crate::app::state::AppState;
use crate::backend::Mode;

use super::theme::Theme;
use super::util::put_spans;

/// Whether `action` can apply now (the reducer says why when it cannot; the footer only dims).
fn applies(action: Action, state: &AppState) -> bool {
    match action {
        Action::TogglePause => state.caps.pause_reconcile,
        Action::Step => state.caps.pause_reconcile && state.mode == Mode::Paused,
        Action::SpeedUp | Action::SpeedDown => state.caps.speed,
        _ => true,
    }
}

/// The hints: (key label, short label, applies now), in table order.
pub fn hints(state: &AppState) -> Vec<(String, &'static str, bool)> {
    let ctx = crate::app::update::context(state);
    BINDINGS
        .iter()
        .filter(|b| b.context == ctx)
        .filter_map(|b| {
            let label = b.footer?;
            let key = b.keys.first()?.label();
            Some((key, label, applies(b.action, state)))
        })
        .collect()
}

/// Width of one hint as drawn: ` key label `.
fn hint_width(key: &str, label: &str) -> usize {
    key.chars().count() + label.chars().count() + 3
}

/// Draws the footer row. When the hints do not fit, the last ones before help and quit are
/// left out (whole), so `? help` and `q quit` are always on screen.
pub fn render(buf: &mut Buffer, area: Rect, state: &AppState, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let ctx = crate::app::update::context(state);
    let protected = |label: &str| {
        BINDINGS.iter().any(|b| {
            b.context == ctx
                && b.footer == Some(label)
                && matches!(b.action, Action::Help | Action::Quit)
        })
    };
    let mut shown = hints(state);
    let total =
        |h: &[(String, &str, bool)]| h.iter().map(|(k, l, _)| hint_width(k, l)).sum::<usize>();
    while total(&shown) > usize::from(area.width) {
        match shown.iter().rposition(|(_, l, _)| !protected(l)) {
            Some(i) => {
                shown.remove(i);
            }
            None => break,
        }
    }
    let mut spans = Vec::new();
    for (key, label, ok) in shown {
        let (ks, ls) = if ok { (theme.key, theme.text) } else { (theme.dim, theme.dim) };
        spans.push(Span::styled(format!(" {key}"), ks));
        spans.push(Span::styled(format!(" {label} "), ls));
    }
    put_spans(buf, area.x, area.y, &spans, area.x + area.width);
}
