//! The help overlay: EVERY binding of the keymap table — the console's, grouped, then each
//! dialog's — flowed into as many columns as the terminal allows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};

use crate::app::keymap::{BINDINGS, Context, Key, help_sections};

use super::theme::Theme;
use super::util::{centered, pane, put_spans, title};

/// One line of the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpRow {
    Heading(String),
    Binding {
        keys: String,
        help: &'static str,
    },
    /// Every binding of one dialog on one line.
    Dialog {
        name: &'static str,
        bindings: String,
    },
}

fn context_name(c: Context) -> &'static str {
    match c {
        Context::Normal => "Console",
        Context::Help => "Help overlay",
        Context::Prompt => "Prompt",
        Context::Confirm => "Confirmation",
        Context::Picker => "Undo picker",
    }
}

/// Every row of the overlay, in order: the console's groups, then one line per dialog with
/// all of its bindings (`Enter apply · Esc cancel · ctrl-c quit`).
pub fn rows() -> Vec<HelpRow> {
    let mut out = Vec::new();
    for (group, lines) in help_sections() {
        out.push(HelpRow::Heading(group.title().to_string()));
        out.extend(lines.into_iter().map(|l| HelpRow::Binding { keys: l.keys, help: l.help }));
    }
    out.push(HelpRow::Heading("In dialogs".to_string()));
    for ctx in [Context::Help, Context::Prompt, Context::Confirm, Context::Picker] {
        let all: Vec<String> = BINDINGS
            .iter()
            .filter(|b| b.context == ctx)
            .map(|b| {
                let keys = b.keys.iter().map(Key::label).collect::<Vec<_>>().join("/");
                format!("{keys} {}", b.help)
            })
            .collect();
        out.push(HelpRow::Dialog { name: context_name(ctx), bindings: all.join(" · ") });
    }
    out
}

/// Draws the overlay over `area`.
pub fn render(buf: &mut Buffer, area: Rect, theme: &Theme) {
    let rows = rows();
    let popup = centered(area, area.width.saturating_sub(2).min(160), area.height);
    Clear.render(popup, buf);
    let inner = pane(buf, popup, title("Help — every key (Esc closes)"), theme);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let per_col = usize::from(inner.height);
    let ncols = rows.len().div_ceil(per_col).max(1);
    let col_w = inner.width / u16::try_from(ncols).unwrap_or(1).max(1);
    for (c, chunk) in rows.chunks(per_col).enumerate() {
        let x = inner.x + u16::try_from(c).unwrap_or(0) * col_w;
        let right = (x + col_w).min(inner.x + inner.width).saturating_sub(1);
        let key_w = chunk
            .iter()
            .filter_map(|r| match r {
                HelpRow::Binding { keys, .. } => Some(keys.chars().count()),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        for (i, row) in chunk.iter().enumerate() {
            let y = inner.y + u16::try_from(i).unwrap_or(0);
            let spans = match row {
                HelpRow::Heading(h) => vec![Span::styled(format!(" {h}"), theme.title)],
                HelpRow::Binding { keys, help } => vec![
                    Span::styled(format!(" {keys:>key_w$} "), theme.key),
                    Span::styled(*help, theme.text),
                ],
                HelpRow::Dialog { name, bindings } => vec![
                    Span::styled(format!(" {name}: "), theme.key),
                    Span::styled(bindings.as_str(), theme.text),
                ],
            };
            put_spans(buf, x, y, &spans, right);
        }
    }
}
