//! The header: the set, its strategy and pod management policy, replica counts, current and
//! update revision, observed generation, and the controller mode and speed (Argo Rollouts'
//! vocabulary). The words and where lines break come from [`crate::app::view::header`]; this
//! gives them their styles.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::app::view::Screen;
use crate::app::view::header::{Tone, lines};

use super::theme::Theme;
use super::util::put_spans;

/// Draws the header (two rows, more on a narrow terminal) into `area`.
pub fn render(buf: &mut Buffer, area: Rect, screen: &Screen<'_>, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let right = area.x + area.width;
    let Some(h) = &screen.header else {
        let spans = [Span::styled(" ststui ", theme.title), Span::styled("no set", theme.dim)];
        put_spans(buf, area.x, area.y, &spans, right);
        return;
    };
    for (y, line) in (area.y..area.y + area.height).zip(lines(h, area.width)) {
        let spans: Vec<Span<'_>> =
            line.iter().map(|p| Span::styled(p.text.as_str(), style(p.tone, theme))).collect();
        put_spans(buf, area.x, y, &spans, right);
    }
}

fn style(tone: Tone, theme: &Theme) -> Style {
    match tone {
        Tone::Title => theme.title,
        Tone::Text => theme.text,
        Tone::Dim => theme.dim,
        Tone::Good => theme.good,
        Tone::Warn => theme.warn,
        Tone::Partition => theme.partition,
        Tone::RevCurrent => theme.rev_current,
        Tone::RevUpdate => theme.rev_update,
        Tone::Separator => theme.border,
    }
}
