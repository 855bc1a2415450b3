//! Small drawing helpers shared by the panes: bordered blocks, padded text, centred popups.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use super::theme::Theme;

/// A pane's bordered block with its title; returns the inside.
pub fn pane(buf: &mut Buffer, area: Rect, title: Line<'_>, theme: &Theme) -> Rect {
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(title.style(theme.title));
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// A pane with a bottom-border line too (the grid's legend); returns the inside.
pub fn pane_with_legend(
    buf: &mut Buffer,
    area: Rect,
    title: Line<'_>,
    bottom: Line<'_>,
    theme: &Theme,
) -> Rect {
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(title.style(theme.title))
        .title_bottom(bottom);
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// A title with one space either side.
pub fn title(text: impl Into<String>) -> Line<'static> {
    Line::from(format!(" {} ", text.into()))
}

/// Writes `text` at (`x`, `y`) clipped to `max` columns; returns the column after it.
pub fn put(buf: &mut Buffer, x: u16, y: u16, text: &str, max: u16, style: Style) -> u16 {
    if max == 0 {
        return x;
    }
    buf.set_stringn(x, y, text, usize::from(max), style).0
}

/// Writes spans left to right from (`x`, `y`), clipped at `right` (exclusive).
pub fn put_spans(buf: &mut Buffer, x: u16, y: u16, spans: &[Span<'_>], right: u16) -> u16 {
    let mut x = x;
    for s in spans {
        x = put(buf, x, y, &s.content, right.saturating_sub(x), s.style);
    }
    x
}

pub use crate::app::view::layout::centered;

/// `text` cut to `width` characters, ending in `…` when cut.
pub fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        out.push('…');
    }
    out
}
