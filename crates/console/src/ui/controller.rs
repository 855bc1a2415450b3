//! The controller pane: the advisor's next action and blocker in words, with the hints and
//! warnings (`next:`, `waiting:`, `held:`, `hint:`, `warning:`), wrapped to the pane.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::view::{ExplainLine, LineKind};

use super::theme::Theme;
use super::util::{pane, title};

/// The style of a line's label.
fn label_style(kind: LineKind, theme: &Theme) -> ratatui::style::Style {
    match kind {
        LineKind::Next => theme.title,
        LineKind::Waiting | LineKind::Held | LineKind::Hint | LineKind::Warning => theme.warn,
        LineKind::Done => theme.good,
        LineKind::Error => theme.bad,
    }
}

/// The lines as styled text: `next: delete web-3 for update (web-7d9 → web-5c4)`.
pub fn lines<'a>(explain: &'a [ExplainLine], theme: &Theme) -> Vec<Line<'a>> {
    explain
        .iter()
        .map(|l| {
            Line::from(vec![
                Span::styled(format!("{}: ", l.kind.label()), label_style(l.kind, theme)),
                Span::styled(l.text.as_str(), theme.text),
            ])
        })
        .collect()
}

/// Draws the pane.
pub fn render(buf: &mut Buffer, area: Rect, explain: &[ExplainLine], theme: &Theme) {
    let inner = pane(buf, area, title("Controller"), theme);
    let inner = inner.inner(ratatui::layout::Margin::new(1, 0));
    Paragraph::new(lines(explain, theme)).wrap(Wrap { trim: true }).render(inner, buf);
}
