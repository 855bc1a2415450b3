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
use crate::app::action::Action;
use crate::app::keymap::{Context, key_for};
use crate::app::view::glyphs::LegendEntry;

/// The grid pane's title: which ordinals, how many.
pub fn grid_title(screen: &Screen<'_>) -> String {
    let g = &screen.grid;
    let hidden = match g.hidden {
        0 => String::new(),
        n => format!("; {n} more not created, not drawn"),
    };
    if let Some(note) = &g.note {
        return format!("Ordinals: {note}");
    }
    match g.cells.len() {
        0 => "Ordinals (none)".to_string(),
        n => format!("Ordinals {}–{} ({n}{hidden})", g.first, g.end() - 1),
    }
}

/// The title with the scroll position when not every row is on screen (`rows 1–33 of 91`).
pub fn scrolled_title(screen: &Screen<'_>, layout: &GridLayout) -> String {
    let mut heading = grid_title(screen);
    if layout.total > layout.rows.len() {
        let last = layout.offset + layout.rows.len();
        heading.push_str(&format!(" rows {}–{} of {}", layout.offset + 1, last, layout.total));
    }
    heading
}

/// The legend for the block's bottom border: whole entries only; when the pane is too narrow
/// for all of them, the last says which key shows the complete legend (the help overlay).
pub fn legend(theme: &Theme, width: u16) -> Line<'static> {
    let entries = Glyphs::legend();
    let help = key_for(Context::Normal, Action::Help).unwrap_or_default();
    let more = format!("… {help} ");
    let text_w = |e: &LegendEntry| {
        let glyphs = e.glyphs.chars().count();
        glyphs + usize::from(glyphs > 0) + e.short.chars().count() + 2
    };
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (i, e) in entries.iter().enumerate() {
        let rest = entries.len() - i - 1;
        // The last entry can do without its trailing two spaces; a cut legend needs room for
        // the pointer to the help.
        let need = if rest == 0 { text_w(e) - 2 } else { text_w(e) + more.chars().count() };
        if used + need > usize::from(width) {
            spans.push(Span::styled(more, theme.dim));
            break;
        }
        used += text_w(e);
        let style = match e.short {
            "update" => theme.rev_update,
            "current" => theme.rev_current,
            "other" => theme.rev_other,
            "failed" => theme.bad,
            _ => theme.text,
        };
        if !e.glyphs.is_empty() {
            spans.push(Span::styled(e.glyphs, style));
            spans.push(Span::raw(" "));
        }
        spans.push(Span::styled(format!("{}  ", e.short), theme.dim));
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
        title(scrolled_title(screen, layout)),
        legend(theme, area.width.saturating_sub(2)),
        theme,
    );
    let name_w = screen.grid.set_name.len() + 1 + digits(screen.grid.end().saturating_sub(1));
    let visible = || {
        layout.rows.iter().filter_map(|r| match r {
            GridRow::Ordinal(o) => screen.grid.cell(*o),
            _ => None,
        })
    };
    let hash_w = visible()
        .filter_map(|c| screen.grid.revision_name(c))
        .map(|r| short_hash(&screen.grid.set_name, r).chars().count())
        .max()
        .unwrap_or(0);
    let restarts_w = visible().map(|c| c.restarts).max().filter(|r| *r > 0).map_or(0, |r| {
        // "↻12" and a space.
        2 + digits(r)
    });
    let cols = Columns { name: name_w, hash: hash_w, restarts: restarts_w };
    for (i, row) in layout.rows.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
        match row {
            GridRow::Ordinal(o) => {
                if let Some(cell) = screen.grid.cell(*o) {
                    let selected = screen.selected == Some(*o);
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
    /// Width of the restarts column (0 when no visible pod restarted).
    restarts: usize,
}

/// Columns of a detailed row before the optional ones: pointer and name, glyph, hash and
/// number, role word, state (and "condemned").
fn fixed_width(cols: Columns) -> usize {
    2 + cols.name + 3 + cols.hash + 6 + 8 + 12
}

#[expect(clippy::too_many_arguments, reason = "one row drawn from its parts, called in one place")]
fn render_row(
    buf: &mut Buffer,
    inner: Rect,
    y: u16,
    cell: &OrdinalCell,
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
    let (hash, number) = match g.revision_name(cell) {
        Some(r) => {
            let n = screen.revisions.iter().find(|x| x.name == r).map(|x| x.number);
            (short_hash(&g.set_name, r), n.map(|n| format!("#{n}")).unwrap_or_default())
        }
        None => ("", String::new()),
    };
    spans.push(Span::styled(format!("{hash:<w$} {number:<4}", w = cols.hash), theme.rev(cell.rev)));
    let word = if cell.exists { cell.rev.word() } else { "" };
    spans.push(Span::styled(format!("{word:<8}"), theme.rev(cell.rev)));
    let state_style = match cell.state {
        PodState::Failed => theme.bad,
        PodState::Ready => theme.text,
        PodState::Placeholder | PodState::Absent | PodState::Unlisted => theme.dim,
        _ => theme.warn,
    };
    spans.push(Span::styled(format!("{:<12}", cell.state.word()), state_style));
    // The pod's particulars, as far as the width allows: age, restarts, node (k9s's columns).
    let mut room = usize::from(inner.width).saturating_sub(fixed_width(cols));
    let mut take = |w: usize| {
        let fits = w <= room;
        if fits {
            room -= w;
        }
        fits
    };
    if cell.condemned {
        spans.push(Span::styled("condemned ", theme.bad));
        take(10);
    }
    // A claim that is not Bound: what a Pending pod of a database waits on.
    if let Some(claim) = g.claims.get(&cell.ordinal) {
        let full = format!("claim {claim} ");
        if take(full.chars().count()) {
            spans.push(Span::styled(full, theme.warn));
        } else if take(7) {
            spans.push(Span::styled("claim! ", theme.warn));
        }
    }
    // A plan's gate on this pod: waiting on pre-delete, post-ready pending, failed.
    let mark = g.gate.as_ref().filter(|m| m.ordinal == cell.ordinal);
    if let Some((mark, words)) = mark.and_then(|m| Some((m, m.words.as_ref()?))) {
        let full = format!("gate {words} ");
        let style = if mark.failed { theme.bad } else { theme.warn };
        if take(full.chars().count()) {
            spans.push(Span::styled(full, style));
        } else if take(6) {
            spans.push(Span::styled("gate! ", style));
        }
    }
    let pod = if cell.exists { screen.pod_at(cell.ordinal) } else { None };
    if let Some(age) = pod.and_then(|p| age(screen, p)).filter(|_| take(10)) {
        spans.push(Span::styled(format!("age {age:<6}"), theme.dim));
    }
    if cols.restarts > 0 && take(cols.restarts) {
        let text = if cell.restarts > 0 { format!("↻{}", cell.restarts) } else { String::new() };
        spans.push(Span::styled(format!("{text:<w$}", w = cols.restarts), theme.warn));
    }
    let node = pod.and_then(|p| p.spec.as_ref()?.node_name.as_deref());
    if let Some(node) = node.filter(|n| take(n.chars().count().min(8))) {
        spans.push(Span::styled(node.to_string(), theme.dim));
    }
    let right = inner.x + inner.width;
    put_spans(buf, inner.x, y, &spans, right);
    if selected {
        let row = Rect { y, height: 1, ..inner };
        buf.set_style(row, theme.selected);
    }
}

/// A pod's age on the backend clock, compact (`2m05s`), like `kubectl get pods`' AGE.
fn age(screen: &Screen<'_>, pod: &k8s_openapi::api::core::v1::Pod) -> Option<String> {
    let created = pod.metadata.creation_timestamp.as_ref()?.0;
    let now = screen.state.now?;
    let secs = now.as_second().saturating_sub(created.as_second()).max(0);
    let ms = u64::try_from(secs).unwrap_or(0).saturating_mul(1000);
    Some(crate::app::view::timeline::duration_text(ms))
}

/// The words on a rule line.
pub fn rule_text(rule: &Rule) -> String {
    match rule.kind {
        RuleKind::Partition => {
            format!(" partition={} ▲ {} · ▼ updated ", rule.value, rule.held.words())
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
