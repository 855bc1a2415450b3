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
    Binding { keys: String, help: &'static str },
}

fn context_name(c: Context) -> &'static str {
    match c {
        Context::Normal => "Console",
        Context::Help => "Help overlay",
        Context::Prompt => "Prompt",
        Context::Confirm => "Confirmation",
        Context::Picker => "Revision picker (undo)",
    }
}

/// Every row of the overlay, in order: the console's groups, then the dialogs' bindings.
pub fn rows() -> Vec<HelpRow> {
    let mut out = Vec::new();
    for (group, lines) in help_sections() {
        out.push(HelpRow::Heading(group.title().to_string()));
        out.extend(lines.into_iter().map(|l| HelpRow::Binding { keys: l.keys, help: l.help }));
    }
    for ctx in [Context::Help, Context::Prompt, Context::Confirm, Context::Picker] {
        out.push(HelpRow::Heading(context_name(ctx).to_string()));
        for b in BINDINGS.iter().filter(|b| b.context == ctx) {
            let keys = b.keys.iter().map(Key::label).collect::<Vec<_>>().join(" ");
            out.push(HelpRow::Binding { keys, help: b.help });
        }
    }
    out
}

/// Draws the overlay over `area`.
pub fn render(buf: &mut Buffer, area: Rect, theme: &Theme) {
    let rows = rows();
    let key_w = rows
        .iter()
        .filter_map(|r| match r {
            HelpRow::Binding { keys, .. } => Some(keys.chars().count()),
            HelpRow::Heading(_) => None,
        })
        .max()
        .unwrap_or(0);
    let popup = centered(area, area.width.saturating_sub(2).min(160), area.height);
    Clear.render(popup, buf);
    let inner = pane(buf, popup, title("Help — every key (Esc closes)"), theme);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let per_col = usize::from(inner.height);
    let ncols = rows.len().div_ceil(per_col).max(1);
    let col_w = inner.width / u16::try_from(ncols).unwrap_or(1).max(1);
    for (i, row) in rows.iter().enumerate() {
        let col = u16::try_from(i / per_col).unwrap_or(0);
        let x = inner.x + col * col_w;
        let y = inner.y + u16::try_from(i % per_col).unwrap_or(0);
        let right = (x + col_w).min(inner.x + inner.width);
        let spans = match row {
            HelpRow::Heading(h) => vec![Span::styled(format!(" {h}"), theme.title)],
            HelpRow::Binding { keys, help } => vec![
                Span::styled(format!(" {keys:>key_w$} "), theme.key),
                Span::styled(*help, theme.text),
            ],
        };
        put_spans(buf, x, y, &spans, right.saturating_sub(1));
    }
}
