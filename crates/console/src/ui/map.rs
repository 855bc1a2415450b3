//! The ordinal grid as a compact map: one character per ordinal, rows of whole groups of ten,
//! each row labelled with its first ordinal, the partition and scale-down rules as full lines,
//! and the selected ordinal highlighted (reversed, and `▶` in the gutter of its row). Scrolls so
//! the selection stays visible. Drawn straight into the buffer: a 10,000-ordinal frame costs one
//! cell write per visible ordinal.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::view::{GridLayout, GridRow, Screen};

use super::grid::{legend, render_rule, scrolled_title};
use super::theme::{Glyphs, Theme};
use super::util::{pane_with_legend, put, title};

/// Draws the pane as a compact map laid out by `layout` (computed on this pane's inside).
pub fn render(
    buf: &mut Buffer,
    area: Rect,
    screen: &Screen<'_>,
    layout: &GridLayout,
    theme: &Theme,
) {
    let inner = pane_with_legend(
        buf,
        area,
        title(scrolled_title(screen, layout)),
        legend(theme, area.width.saturating_sub(2)),
        theme,
    );
    let label_w = usize::from(layout.gutter.saturating_sub(2));
    let right = inner.x + inner.width;
    for (i, row) in layout.rows.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
        match *row {
            GridRow::Span { from, len } => {
                let sel = screen.selected.filter(|s| *s >= from && *s < from + i32::from(len));
                let pointer = if sel.is_some() { Glyphs::POINTER } else { ' ' };
                let label = format!("{pointer}{from:>label_w$} ");
                let label_style = if sel.is_some() { theme.title } else { theme.dim };
                put(buf, inner.x, y, &label, layout.gutter.min(inner.width), label_style);
                render_span(buf, inner, y, from, len, screen, layout, theme, right);
            }
            GridRow::Rule(rule) => render_rule(buf, inner, y, &rule, theme),
            GridRow::Ordinal(_) => {}
        }
    }
}

#[expect(clippy::too_many_arguments, reason = "one row drawn from its parts, called in one place")]
fn render_span(
    buf: &mut Buffer,
    inner: Rect,
    y: u16,
    from: i32,
    len: u16,
    screen: &Screen<'_>,
    layout: &GridLayout,
    theme: &Theme,
    right: u16,
) {
    for i in 0..len {
        let x = inner.x + layout.column_of(i);
        if x >= right {
            break;
        }
        let ordinal = from + i32::from(i);
        let Some(cell) = screen.grid.cell(ordinal) else { continue };
        let mut style = theme.cell(cell.rev, cell.state);
        if screen.selected == Some(ordinal) {
            style = style.patch(theme.selected);
        }
        if let Some(c) = buf.cell_mut((x, y)) {
            c.set_char(Glyphs::cell(cell.rev, cell.state)).set_style(style);
        }
    }
}
