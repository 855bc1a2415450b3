//! A rollout group's matrix in the grid pane: the header (who drives the group, which set
//! rolls, why the next waits), two heading rows (each set's name, where it stands), then one
//! row per ordinal with a cell per set — the pod's glyph, state, revision (current / update /
//! old and its short hash), restarts, and `held` below the set's partition — as far as the
//! column's width allows. The cursor's cell is highlighted; the layout is
//! `app::view::group::MatrixLayout`, which the click map reads too.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use super::theme::{Glyphs, Theme};
use super::util::{pane, put, put_spans, title};
use crate::app::view::group::{Column, GroupMatrix, MatrixLayout, Motion};
use crate::app::view::{PodState, Screen, short_hash};

/// The pane's title: the group, its sets and ordinals, and what is scrolled out of view.
fn heading(m: &GroupMatrix, l: &MatrixLayout) -> String {
    let n = m.columns.len();
    let sets = format!("{n} set{}", if n == 1 { "" } else { "s" });
    let mut t = match m.clusters {
        Some(c) => {
            format!("Fleet {}: {sets} in {c} cluster{}", m.name, if c == 1 { "" } else { "s" })
        }
        None => format!("Group {}: {sets}", m.name),
    };
    if m.end > m.first {
        t.push_str(&format!(", ordinals {}–{}", m.first, m.end - 1));
    }
    let total = usize::try_from(m.end.saturating_sub(m.first)).unwrap_or(0);
    if l.rows < total {
        t.push_str(&format!(" rows {}–{} of {total}", l.offset + 1, l.offset + l.rows));
    }
    if l.cols < n {
        t.push_str(&format!(" sets {}–{} of {n} (← →)", l.first_col + 1, l.first_col + l.cols));
    }
    t
}

/// Draws the matrix of `screen`'s group into the grid pane `area` laid out by `l`.
pub fn render(buf: &mut Buffer, area: Rect, screen: &Screen<'_>, l: &MatrixLayout, theme: &Theme) {
    let Some(m) = screen.group.as_deref() else { return };
    let inner = pane(buf, area, title(heading(m, l)), theme);
    for (i, line) in l.header.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
        if y < inner.y + inner.height {
            put(buf, inner.x, y, line, inner.width, theme.text);
        }
    }
    let right = inner.x + inner.width;
    let bottom = inner.y + inner.height;
    let at = screen.state.selected_set.as_ref().and_then(|k| m.column_of(k));
    let (y1, y2) = (l.heading_y(), l.heading_y() + 1);
    for c in l.first_col..l.first_col + l.cols {
        let (Some(x), Some(col)) = (l.col_x(c), m.columns.get(c)) else { continue };
        let w = l.col_w.saturating_sub(1);
        let style = if at == Some(c) { theme.title } else { theme.text };
        if y1 < bottom {
            put(buf, x, y1, "│", 1, theme.border);
            put(buf, x + 1, y1, &fit_name(&col.label(), usize::from(w)), w, style);
        }
        if y2 < bottom {
            put(buf, x, y2, "│", 1, theme.border);
            put(buf, x + 1, y2, &standing(col), w, motion_style(col.motion, theme));
        }
    }
    for i in 0..l.rows {
        let y = l.row_y(i);
        if y >= bottom {
            break;
        }
        let ordinal = m.first.saturating_add(i32::try_from(l.offset + i).unwrap_or(i32::MAX));
        let on_row = ordinal == screen.state.selected_ordinal;
        let pointer = if on_row { Glyphs::POINTER } else { ' ' };
        let ord_w = usize::from(l.ord_w.saturating_sub(1));
        let label = format!("{pointer} {ordinal:>w$}", w = ord_w.saturating_sub(2));
        put(buf, inner.x, y, &label, l.ord_w, if on_row { theme.title } else { theme.dim });
        for c in l.first_col..l.first_col + l.cols {
            let (Some(x), Some(col)) = (l.col_x(c), m.columns.get(c)) else { continue };
            put(buf, x, y, "│", 1, theme.border);
            let w = usize::from(l.col_w.saturating_sub(1));
            let spans = cell_spans(col, ordinal, w, theme);
            put_spans(buf, x + 1, y, &spans, (x + l.col_w).min(right));
            if on_row && at == Some(c) {
                let cell = Rect { x: x + 1, y, width: l.col_w.saturating_sub(1), height: 1 };
                buf.set_style(cell.intersection(inner), theme.selected);
            }
        }
    }
}

/// A set's name in `w` columns: whole, or its end (`…zone-a`: what tells zones apart).
fn fit_name(name: &str, w: usize) -> String {
    let name = crate::text::escape_controls(name);
    let n = name.chars().count();
    if n <= w {
        return name.into_owned();
    }
    let tail: String = name.chars().skip(n + 1 - w.max(1)).collect();
    format!("…{tail}")
}

/// The second heading: where the set stands, and its partition.
fn standing(col: &Column) -> String {
    match col.partition {
        Some(p) => format!("{} p={p}", col.words),
        None => col.words.clone(),
    }
}

fn motion_style(motion: Motion, theme: &Theme) -> ratatui::style::Style {
    match motion {
        Motion::Done => theme.good,
        Motion::Rolling => theme.warn,
        Motion::Stopped => theme.bad,
        Motion::Waiting | Motion::Unknown => theme.dim,
    }
}

/// One cell's pieces, each added only when it fits whole in `w` columns (the glyph always).
fn cell_spans<'a>(col: &Column, ordinal: i32, w: usize, theme: &Theme) -> Vec<Span<'a>> {
    let g = &col.grid;
    let Some(cell) = g.cell(ordinal) else {
        return Vec::new();
    };
    let style = theme.cell(cell.rev, cell.state);
    let mut spans = vec![Span::styled(Glyphs::cell(cell.rev, cell.state).to_string(), style)];
    let mut used = 1;
    let mut add = |spans: &mut Vec<Span<'a>>, text: String, style| {
        let n = text.chars().count() + 1;
        if used + n <= w {
            used += n;
            spans.push(Span::styled(format!(" {text}"), style));
        }
    };
    let state_style = match cell.state {
        PodState::Failed => theme.bad,
        PodState::Ready => theme.text,
        PodState::Placeholder | PodState::Absent | PodState::Unlisted => theme.dim,
        _ => theme.warn,
    };
    add(&mut spans, cell.state.word().to_string(), state_style);
    if cell.exists {
        add(&mut spans, cell.rev.word().to_string(), theme.rev(cell.rev));
        if let Some(r) = g.revision_name(cell) {
            add(&mut spans, short_hash(&g.set_name, r).to_string(), theme.rev(cell.rev));
        }
    }
    if cell.restarts > 0 {
        add(&mut spans, format!("↻{}", cell.restarts), theme.warn);
    }
    if cell.condemned && cell.exists {
        add(&mut spans, "condemned".into(), theme.bad);
    } else if col.partition.is_some_and(|p| ordinal < p) && cell.exists {
        add(&mut spans, "held".into(), theme.partition);
    }
    spans
}
