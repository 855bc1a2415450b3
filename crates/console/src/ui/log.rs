//! The log overlay: the selected pod's log over the panes (all but the header, the footer and
//! the status line), the newest lines at the bottom while following, a title that says whose
//! log, which instance and where the view stands, and why there is none when there is none.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::app::state::LogView;

use super::theme::Theme;
use super::util::{pane, put, title};

/// Draws `view` over `area`.
pub fn render(buf: &mut Buffer, area: Rect, view: &LogView, theme: &Theme) {
    let r = &view.request;
    let which = if r.previous { "previous container" } else { "current container" };
    let place = if view.following() && view.ended {
        "ended".to_string()
    } else if view.following() {
        "following".to_string()
    } else {
        format!("{} lines back", view.back)
    };
    let dropped = match view.dropped {
        0 => String::new(),
        n => format!(" · {n} older lines dropped"),
    };
    let heading = format!("Log: {} ({which}) · {place}{dropped}", r.pod.name);
    Clear.render(area, buf);
    let inner = pane(buf, area, title(heading), theme);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let mut rows = usize::from(inner.height);
    let mut y = inner.y;
    if let Some(note) = &view.note {
        put(buf, inner.x + 1, y, note, inner.width.saturating_sub(1), theme.warn);
        y += 1;
        rows = rows.saturating_sub(1);
    }
    if view.lines.is_empty() {
        if view.note.is_none() && rows > 0 {
            put(buf, inner.x + 1, y, "no lines yet", inner.width.saturating_sub(1), theme.dim);
        }
        return;
    }
    // The window ends `back` lines before the newest.
    let end = view.lines.len().saturating_sub(view.back);
    let start = end.saturating_sub(rows);
    for line in view.lines.range(start..end) {
        put(buf, inner.x + 1, y, line, inner.width.saturating_sub(1), theme.text);
        y += 1;
    }
}
