//! The selected ordinal's detail: name, state, why it is not Ready, revision, phase, readiness,
//! image, restarts, its containers, its newest Events (Warnings marked), age and node.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::view::DetailView;

use super::theme::{Glyphs, Theme};
use super::util::{pane, put, title};

/// Draws the pane; `detail` is `None` when nothing is selected.
pub fn render(buf: &mut Buffer, area: Rect, detail: Option<&DetailView>, theme: &Theme) {
    let Some(d) = detail else {
        let inner = pane(buf, area, title("Pod"), theme);
        if inner.height > 0 {
            put(buf, inner.x + 1, inner.y, "no ordinal selected", inner.width, theme.dim);
        }
        return;
    };
    let glyph = Glyphs::cell(d.cell.rev, d.cell.state);
    let inner = pane(buf, area, title(format!("{glyph} {}", d.name)), theme);
    let label_w = d.rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0) as u16 + 2;
    let x = inner.x + 1 + label_w;
    let value_w = usize::from((inner.x + inner.width).saturating_sub(x)).max(1);
    let bottom = inner.y + inner.height;
    let mut y = inner.y;
    // Long values (the rollout role, the next step) wrap under themselves.
    for (label, value) in &d.rows {
        if y >= bottom {
            break;
        }
        put(buf, inner.x + 1, y, label, inner.width.saturating_sub(1), theme.dim);
        let style = match *label {
            "revision" => theme.rev(d.cell.rev),
            "state" => theme.cell(d.cell.rev, d.cell.state),
            "why" | "warning" => theme.warn,
            _ => theme.text,
        };
        for piece in textwrap::wrap(value, value_w) {
            if y >= bottom {
                break;
            }
            put(buf, x, y, &piece, u16::try_from(value_w).unwrap_or(u16::MAX), style);
            y += 1;
        }
    }
}
