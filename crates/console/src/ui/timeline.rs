//! The timeline pane: the newest controller actions, kubelet events, operator and script
//! commands, with their backend times (newest at the bottom).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::app::action::Action;
use crate::app::keymap::{Context, key_for};
use crate::app::state::AppState;
use crate::app::view::timeline::{Source, last_lines, title as view_title};
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;
use super::util::{pane, put_spans, title};

fn source_style(source: Source, theme: &Theme) -> ratatui::style::Style {
    match source {
        Source::Controller => theme.title,
        Source::Operator | Source::Script | Source::Plan => theme.key,
        Source::Blocked | Source::Warning | Source::Differs => theme.warn,
        Source::Error => theme.bad,
        Source::Kubelet | Source::Gc | Source::Status | Source::Event | Source::Notice => theme.dim,
    }
}

/// Draws the pane: as many of the newest entries as fit.
pub fn render(buf: &mut Buffer, area: Rect, state: &AppState, theme: &Theme) {
    let rows = usize::from(area.height.saturating_sub(2));
    let newer = key_for(Context::Normal, Action::TimelineNewer).unwrap_or_default();
    let heading = view_title(state, rows, &newer);
    let inner = pane(buf, area, title(heading), theme);
    let lines = last_lines(state, usize::from(inner.height));
    let time_w = lines.iter().map(|l| l.time.chars().count()).max().unwrap_or(0);
    // With several sets, a column names each line's set (at most 16 columns of it).
    let set_w = lines.iter().filter_map(|l| l.set.as_ref()).map(|s| s.width().min(16)).max();
    let right = inner.x + inner.width;
    for (i, l) in lines.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        let mut spans = vec![
            Span::styled(format!(" {:>time_w$} ", l.time), theme.dim),
            Span::styled(format!("{:<8}", l.source.tag()), source_style(l.source, theme)),
        ];
        if let Some(w) = set_w {
            let set: String = l.set.as_deref().unwrap_or("").chars().take(16).collect();
            spans.push(Span::styled(format!("{set:<w$} "), theme.title));
        }
        spans.push(Span::styled(l.text.as_str(), theme.text));
        put_spans(buf, inner.x, y, &spans, right);
    }
    if lines.is_empty() && inner.height > 0 {
        put_spans(buf, inner.x, inner.y, &[Span::styled(" nothing yet", theme.dim)], right);
    }
}
