//! Dialogs and the bottom line: the confirmation (what changes, old → new, and the warning),
//! the undo revision picker, the prompt line, and the status line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};
use unicode_width::UnicodeWidthStr;

use crate::app::keymap::{self, Context};
use crate::app::state::{AppState, Confirm, Modal, RevisionPicker, StatusKind};
use crate::backend::Capabilities;

use super::theme::{Glyphs, Theme};
use super::util::{centered, ellipsize, pane, put, put_spans, title};
use crate::app::view::footer::hints;

/// Draws the confirmation dialog centred in `area`. The title and the warning wrap at word
/// boundaries to the dialog's width (at most the terminal's), so nothing is cut; the dialog
/// grows as tall as that takes.
pub fn render_confirm(
    buf: &mut Buffer,
    area: Rect,
    c: &Confirm,
    caps: &Capabilities,
    theme: &Theme,
) {
    let change = format!("{}  →  {}", c.old, c.new);
    let warning = c.warning.as_deref().map(|w| format!("⚠ {w}"));
    let widest = [c.title.width(), change.width() + 4, 30]
        .into_iter()
        .chain(warning.iter().map(|w| w.width()))
        .chain(c.details.iter().map(|d| d.width()))
        .max()
        .unwrap_or(30);
    // Borders and a margin of one on each side; never wider than the terminal, and at most
    // 96 columns so a long warning reads as a paragraph.
    let w =
        u16::try_from(widest + 4).unwrap_or(u16::MAX).min(area.width.saturating_sub(2)).min(100);
    let text_w = usize::from(w.saturating_sub(4)).max(10);
    let wrap = |t: &str| -> Vec<String> {
        textwrap::wrap(t, text_w).into_iter().map(|l| l.into_owned()).collect()
    };
    let title_lines = wrap(&c.title);
    let change_lines = wrap(&change);
    let warning_lines = warning.as_deref().map(wrap).unwrap_or_default();
    let detail_lines: Vec<String> = c.details.iter().flat_map(|d| wrap(d)).collect();
    // Title, blank, change, details, warning, blank, answer, plus the borders.
    let body =
        title_lines.len() + 1 + change_lines.len() + detail_lines.len() + warning_lines.len() + 2;
    let h = u16::try_from(body + 2).unwrap_or(u16::MAX);
    let popup = centered(area, w, h);
    Clear.render(popup, buf);
    let inner = pane(buf, popup, title("Confirm"), theme);
    let right = inner.x + inner.width;
    let mut y = inner.y;
    let mut line = |spans: &[Span<'_>], y: &mut u16| {
        if *y < inner.y + inner.height {
            put_spans(buf, inner.x + 1, *y, spans, right);
        }
        *y += 1;
    };
    for t in &title_lines {
        line(&[Span::styled(t.as_str(), theme.title)], &mut y);
    }
    y += 1;
    if change_lines.len() == 1 {
        line(
            &[
                Span::styled(c.old.as_str(), theme.rev_current),
                Span::styled("  →  ", theme.text),
                Span::styled(c.new.as_str(), theme.rev_update),
            ],
            &mut y,
        );
    } else {
        for t in &change_lines {
            line(&[Span::styled(t.as_str(), theme.text)], &mut y);
        }
    }
    for t in &detail_lines {
        line(&[Span::styled(t.as_str(), theme.text)], &mut y);
    }
    for t in &warning_lines {
        line(&[Span::styled(t.as_str(), theme.warn)], &mut y);
    }
    y += 1;
    let answer: Vec<Span<'_>> = hints_spans(keymap::footer(Context::Confirm, caps), theme);
    line(&answer, &mut y);
}

fn hints_spans(hints: Vec<(String, &'static str)>, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for (key, label) in hints {
        spans.push(Span::styled(key, theme.key));
        spans.push(Span::styled(format!(" {label}   "), theme.text));
    }
    spans
}

/// Draws the undo revision picker centred in `area`.
pub fn render_picker(
    buf: &mut Buffer,
    area: Rect,
    p: &RevisionPicker,
    caps: &Capabilities,
    theme: &Theme,
) {
    // Each revision and, under it, what rolling back to it changes.
    let lines = p.choices.len() + p.choices.iter().filter(|c| c.change.is_some()).count();
    let h = u16::try_from(lines + 4).unwrap_or(u16::MAX);
    let popup = centered(area, 72.min(area.width.saturating_sub(2)), h);
    Clear.render(popup, buf);
    let inner = pane(buf, popup, title(format!("Undo {}: roll back to", p.set)), theme);
    let right = inner.x + inner.width;
    let last = inner.y + inner.height.saturating_sub(2);
    let mut y = inner.y;
    for (i, c) in p.choices.iter().enumerate() {
        if y >= last {
            break;
        }
        let marker = if i == p.selected { Glyphs::POINTER } else { ' ' };
        let role = match (c.current, c.update) {
            (true, true) => "current+update",
            (false, true) => "update",
            (true, false) => "current",
            (false, false) => "",
        };
        let text = format!(
            "{marker} #{:<3} {:<24} {:<20} {role}",
            c.revision,
            c.name,
            c.image.as_deref().unwrap_or("?")
        );
        put(buf, inner.x, y, &text, inner.width, theme.text);
        if i == p.selected {
            buf.set_style(Rect { y, height: 1, ..inner }, theme.selected);
        }
        y += 1;
        if let Some(change) = c.change.as_deref().filter(|_| y < last) {
            put(buf, inner.x, y, &format!("      undo changes {change}"), inner.width, theme.dim);
            y += 1;
        }
    }
    let y = inner.y + inner.height.saturating_sub(1);
    let footer = keymap::footer(Context::Picker, caps);
    put_spans(buf, inner.x + 1, y, &hints_spans(footer, theme), right);
}

/// Draws the bottom line: the prompt when one is open, else the status message, else a hint.
pub fn render_status(buf: &mut Buffer, area: Rect, state: &AppState, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let right = area.x + area.width;
    if let Modal::Prompt(p) = &state.modal {
        let error = p.error.as_deref().map(|e| format!("  {e}"));
        // The question gives way first: what was typed and what is wrong with it stay whole.
        let rest = p.input.width() + 1 + error.as_deref().map_or(0, UnicodeWidthStr::width);
        let room = usize::from(area.width).saturating_sub(rest + 3).max(16);
        let mut spans = vec![
            Span::styled(format!(" {}: ", ellipsize(&p.kind.label(), room)), theme.title),
            Span::styled(p.input.as_str(), theme.text),
            Span::styled("█", theme.text),
        ];
        if let Some(e) = error {
            spans.push(Span::styled(e, theme.bad));
        }
        put_spans(buf, area.x, area.y, &spans, right);
        return;
    }
    match &state.status {
        Some(s) => {
            let (tag, style) = match s.kind {
                StatusKind::Info => ("", theme.text),
                StatusKind::Refusal => ("can't: ", theme.warn),
                StatusKind::Error => ("error: ", theme.bad),
            };
            let spans =
                [Span::styled(format!(" {tag}"), style), Span::styled(s.text.as_str(), style)];
            put_spans(buf, area.x, area.y, &spans, right);
        }
        None => {
            let help = hints(state).into_iter().find(|h| h.label == "help");
            if let Some(h) = help {
                let spans = [
                    Span::styled(" press ", theme.dim),
                    Span::styled(h.key, theme.key),
                    Span::styled(" for every key", theme.dim),
                ];
                put_spans(buf, area.x, area.y, &spans, right);
            }
        }
    }
}
