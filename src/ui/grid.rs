//! The ordinal grid as detailed rows: one row per ordinal (pointer, pod name, revision glyph,
//! short hash and number, current/update word, state, notes), with the partition, start and
//! scale-down rules drawn between ordinals. Used when every ordinal fits; `map.rs` draws the
//! compact map otherwise.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::view::grid::RuleKind;
use crate::app::view::{GridLayout, GridRow, OrdinalCell, PodState, Rule, Screen, short_hash};

use super::theme::{Glyphs, Theme};
use super::util::{pane, pane_with_legend, put, put_spans, title};

/// The grid pane's title: which ordinals, how many.
pub fn grid_title(screen: &Screen<'_>) -> String {
    let g = &screen.grid;
    match g.cells.len() {
        0 => "Ordinals (none)".to_string(),
        n => format!("Ordinals {}–{} ({n})", g.first, g.end() - 1),
    }
}

/// The legend for the block's bottom border.
pub fn legend(theme: &Theme, width: u16) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (glyph, meaning) in Glyphs::legend() {
        // Whole entries only: on a narrow pane the last ones are left out, not cut.
        // (glyph, space, meaning, then two spaces the last entry can do without)
        let w = meaning.chars().count() + 4;
        if used + w - 2 > usize::from(width) {
            break;
        }
        used += w;
        let style = match meaning {
            "update" => theme.rev_update,
            "current" => theme.rev_current,
            "other rev" => theme.rev_other,
            "failed" => theme.bad,
            _ => theme.text,
        };
        spans.push(Span::styled(glyph.to_string(), style));
        spans.push(Span::styled(format!(" {meaning}  "), theme.dim));
    }
    Line::from(spans)
}

/// Draws the pane with detailed rows laid out by `layout` (computed on this pane's inside).
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
        title(grid_title(screen)),
        legend(theme, area.width.saturating_sub(2)),
        theme,
    );
    let name_w = screen.grid.set_name.len() + 1 + digits(screen.grid.end().saturating_sub(1));
    let hash_w = layout
        .rows
        .iter()
        .filter_map(|r| match r {
            GridRow::Ordinal(o) => screen.grid.cell(*o)?.revision,
            _ => None,
        })
        .map(|r| short_hash(screen.grid.set_name, r).chars().count())
        .max()
        .unwrap_or(0);
    for (i, row) in layout.rows.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
        match row {
            GridRow::Ordinal(o) => {
                if let Some(cell) = screen.grid.cell(*o) {
                    let selected = screen.grid.selected == Some(*o);
                    let cols = Columns { name: name_w, hash: hash_w };
                    render_row(buf, inner, y, cell, selected, screen, cols, theme);
                }
            }
            GridRow::Rule(rule) => render_rule(buf, inner, y, rule, theme),
            GridRow::Span { .. } => {}
        }
    }
}

/// Decimal digits of a non-negative number (1 for 0).
pub fn digits(n: i32) -> usize {
    usize::try_from(n.max(0).checked_ilog10().unwrap_or(0) + 1).unwrap_or(1)
}

#[derive(Clone, Copy)]
struct Columns {
    name: usize,
    hash: usize,
}

#[allow(clippy::too_many_arguments)]
fn render_row(
    buf: &mut Buffer,
    inner: Rect,
    y: u16,
    cell: &OrdinalCell<'_>,
    selected: bool,
    screen: &Screen<'_>,
    cols: Columns,
    theme: &Theme,
) {
    let g = &screen.grid;
    let style = theme.cell(cell.rev, cell.state);
    let pointer = if selected { Glyphs::POINTER } else { ' ' };
    let name =
        format!("{pointer} {:<w$}", format!("{}-{}", g.set_name, cell.ordinal), w = cols.name);
    let mut spans = vec![
        Span::styled(name, if selected { theme.title } else { theme.text }),
        Span::styled(format!(" {} ", Glyphs::cell(cell.rev, cell.state)), style),
    ];
    let (hash, number) = match cell.revision {
        Some(r) => {
            let n = screen.revisions.iter().find(|x| x.name == r).map(|x| x.number);
            (short_hash(g.set_name, r), n.map(|n| format!("#{n}")).unwrap_or_default())
        }
        None => ("", String::new()),
    };
    spans.push(Span::styled(format!("{hash:<w$} {number:<4}", w = cols.hash), theme.rev(cell.rev)));
    let word = if cell.pod.is_some() { cell.rev.word() } else { "" };
    spans.push(Span::styled(format!("{word:<8}"), theme.rev(cell.rev)));
    let state_style = match cell.state {
        PodState::Failed => theme.bad,
        PodState::Ready => theme.text,
        PodState::Placeholder | PodState::Absent => theme.dim,
        _ => theme.warn,
    };
    spans.push(Span::styled(format!("{:<12}", cell.state.word()), state_style));
    if cell.condemned {
        spans.push(Span::styled("condemned ", theme.bad));
    }
    let restarts = cell.pod.map_or(0, restarts);
    if restarts > 0 {
        spans.push(Span::styled(format!("↻{restarts} restarts"), theme.warn));
    }
    let right = inner.x + inner.width;
    put_spans(buf, inner.x, y, &spans, right);
    if selected {
        let row = Rect { y, height: 1, ..inner };
        buf.set_style(row, theme.selected);
    }
}

/// Container restarts of a pod, summed.
pub fn restarts(pod: &k8s_openapi::api::core::v1::Pod) -> i32 {
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    statuses.map_or(0, |cs| cs.iter().map(|c| c.restart_count).sum())
}

/// The words on a rule line.
pub fn rule_text(rule: &Rule) -> String {
    match rule.kind {
        RuleKind::Partition => {
            format!(" partition={} ▲ held on current · ▼ updated ", rule.value)
        }
        RuleKind::Condemned => format!(" replicas={} ▼ condemned ", rule.value),
        RuleKind::Start => format!(" start={} ▲ condemned ", rule.value),
    }
}

/// Draws a rule across `inner` at row `y`: `──── partition=3 ▲ held · ▼ updated ─────`.
pub fn render_rule(buf: &mut Buffer, inner: Rect, y: u16, rule: &Rule, theme: &Theme) {
    let style = match rule.kind {
        RuleKind::Partition => theme.partition,
        RuleKind::Condemned | RuleKind::Start => theme.bad,
    };
    let line: String = std::iter::repeat_n(Glyphs::RULE, usize::from(inner.width)).collect();
    put(buf, inner.x, y, &line, inner.width, style);
    put(
        buf,
        inner.x + 2.min(inner.width),
        y,
        &rule_text(rule),
        inner.width.saturating_sub(2),
        style,
    );
}

/// The pane when there is no set to show, with the reason.
pub fn render_empty(buf: &mut Buffer, area: Rect, reason: &str, theme: &Theme) {
    let inner = pane(buf, area, title("Ordinals"), theme);
    if inner.height > 0 {
        put(buf, inner.x + 1, inner.y, reason, inner.width.saturating_sub(1), theme.dim);
    }
}
