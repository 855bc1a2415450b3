//! The StatefulSet list (a cluster opened without a NAME): one row per set, live, with the
//! highlighted row; name, ready/desired, updated, strategy and partition, current → update
//! revision, the health word and a plan's progress; what needs the operator first, filtered by
//! name (`app::sets`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::app::health::Health;
use crate::app::sets::rows;
use crate::app::state::AppState;

use super::theme::{Glyphs, Theme};
use super::util::{pane, put, put_spans, title};

/// Draws the list over `area`.
pub fn render(buf: &mut Buffer, area: Rect, state: &AppState, theme: &Theme) {
    let rows = rows(state);
    let heading = crate::app::sets::heading(state, rows.len());
    let inner = pane(buf, area, title(heading), theme);
    if inner.height == 0 {
        return;
    }
    let right = inner.x + inner.width;
    if rows.is_empty() {
        let why = crate::app::sets::empty_reason(state);
        put(buf, inner.x + 1, inner.y, &why, inner.width.saturating_sub(1), theme.dim);
        return;
    }
    let name_w = rows.iter().map(|r| r.key.to_string().chars().count()).max().unwrap_or(4).max(4);
    // The GROUP column only when a set is in one.
    let group_w = rows.iter().map(|r| r.group.chars().count()).max().unwrap_or(0);
    let group_w = if group_w == 0 { 0 } else { group_w.max(5) + 2 };
    let group_head = if group_w == 0 { String::new() } else { format!("{:<group_w$}", "GROUP") };
    let header = format!(
        "  {:<name_w$}  {:>7}  {:>7}  {:<20}  {:<24}  {:<12}{group_head}{}",
        "NAME", "READY", "UPDATED", "STRATEGY", "REVISIONS", "HEALTH", "PLAN"
    );
    put(buf, inner.x, inner.y, &header, inner.width, theme.dim);
    let visible = usize::from(inner.height.saturating_sub(1));
    let selected = state.picking.unwrap_or(0);
    let first = selected.saturating_sub(visible.saturating_sub(1));
    for (i, r) in rows.iter().enumerate().skip(first).take(visible) {
        let y = inner.y + 1 + u16::try_from(i - first).unwrap_or(0);
        let marker = if i == selected { Glyphs::POINTER } else { ' ' };
        let text = format!(
            "{marker} {:<name_w$}  {:>7}  {:>7}  {:<20}  {:<24}  ",
            r.key.to_string(),
            r.ready,
            r.updated,
            r.strategy,
            r.revisions
        );
        let health = match r.health {
            Health::Healthy => theme.good,
            Health::Progressing | Health::Paused | Health::Unknown => theme.text,
            Health::Frozen | Health::Degraded | Health::Held | Health::Waiting => theme.warn,
            Health::Blocked | Health::Halted | Health::Stalled => theme.bad,
        };
        put_spans(
            buf,
            inner.x,
            y,
            &[
                Span::styled(text, theme.text),
                Span::styled(format!("{:<12}", r.health.word()), health),
                Span::styled(format!("{:<group_w$}", r.group), theme.text),
                Span::styled(r.plan.clone(), theme.text),
            ],
            right,
        );
        if i == selected {
            buf.set_style(Rect { y, height: 1, ..inner }, theme.selected);
        }
    }
}
