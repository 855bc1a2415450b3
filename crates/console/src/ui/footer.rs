//! The footer: the key hints of `app::view::footer` (derived from the keymap table), dimmed
//! when the action cannot apply now; whole hints are left out when they do not fit, keeping
//! help and quit.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::app::state::AppState;
use crate::app::view::footer::{Hint, hints};

use super::theme::Theme;
use super::util::put_spans;

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
    let mut shown = hints(state);
    let total = |h: &[Hint]| h.iter().map(|h| hint_width(&h.key, h.label)).sum::<usize>();
    while total(&shown) > usize::from(area.width) {
        match shown.iter().rposition(|h| !h.kept) {
            Some(i) => {
                shown.remove(i);
            }
            None => break,
        }
    }
    let mut spans = Vec::new();
    for h in shown {
        let (ks, ls) = if h.applies { (theme.key, theme.text) } else { (theme.dim, theme.dim) };
        spans.push(Span::styled(format!(" {}", h.key), ks));
        spans.push(Span::styled(format!(" {} ", h.label), ls));
    }
    put_spans(buf, area.x, area.y, &spans, area.x + area.width);
}
