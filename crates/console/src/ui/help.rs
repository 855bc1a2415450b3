//! The help overlay: draws the page of [`crate::app::view::help::layout`] the state asks for —
//! every binding of the keymap table, the console's grouped, then each dialog's — with the
//! page number and the page keys in the title when it takes more than one page.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};

use crate::app::action::Action;
use crate::app::keymap::{Context, key_for};
use crate::app::view::help::{HelpLine, layout};
use crate::backend::Capabilities;

use super::theme::Theme;
use super::util::{pane, put_spans, title};

/// Draws the overlay over `area`, showing page `page` (clamped to the last).
pub fn render(buf: &mut Buffer, area: Rect, page: usize, caps: &Capabilities, theme: &Theme) {
    let help = layout(area, caps);
    let (shown, columns) = help.page(page);
    let close = key_for(Context::Help, Action::Cancel).unwrap_or_default();
    let heading = if help.pages.len() > 1 {
        let next = key_for(Context::Help, Action::PageDown).unwrap_or_default();
        let prev = key_for(Context::Help, Action::PageUp).unwrap_or_default();
        format!(
            "Help — every key — page {} of {} ({next} / {prev} turn, {close} closes)",
            shown + 1,
            help.pages.len()
        )
    } else {
        format!("Help — every key ({close} closes)")
    };
    Clear.render(help.popup, buf);
    let inner = pane(buf, help.popup, title(heading), theme);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let key_w = help.key_width;
    for (c, column) in columns.iter().enumerate() {
        let x = inner.x + u16::try_from(c).unwrap_or(0) * help.column_width;
        let right = (x + help.column_width).min(inner.x + inner.width).saturating_sub(1);
        for (i, line) in column.iter().enumerate().take(usize::from(inner.height)) {
            let y = inner.y + u16::try_from(i).unwrap_or(0);
            let spans = match line {
                HelpLine::Heading(h) => vec![Span::styled(format!(" {h}"), theme.title)],
                HelpLine::Binding { keys, text } => vec![
                    Span::styled(format!(" {keys:>key_w$} "), theme.key),
                    Span::styled(text.as_str(), theme.text),
                ],
            };
            put_spans(buf, x, y, &spans, right);
        }
    }
}
