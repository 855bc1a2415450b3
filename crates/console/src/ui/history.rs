//! The revision history pane: the set's ControllerRevisions, newest first, with number, hash,
//! image, how many pods run each, and which are the current and the update revision (marked by
//! glyph and word, not colour alone); under each, when the pane has the rows, what changed
//! from the revision before it (a restart is told from its parent by its `restartedAt`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::app::view::layout::history_lines;
use crate::app::view::{RevClass, Screen};

use super::theme::{Glyphs, Theme};
use super::util::{ellipsize, pane, put_spans, title};

/// Draws the pane (a column header, then one row per revision).
pub fn render(buf: &mut Buffer, area: Rect, screen: &Screen<'_>, theme: &Theme) {
    let inner = pane(buf, area, title(format!("Revisions ({})", screen.revisions.len())), theme);
    if inner.height == 0 {
        return;
    }
    let right = inner.x + inner.width;
    let hash_w = screen.revisions.iter().map(|r| r.hash.chars().count()).max().unwrap_or(4).max(4);
    let head = format!("    #  {:<hash_w$}  pods  image", "hash");
    put_spans(buf, inner.x, inner.y, &[Span::styled(head, theme.dim)], right);
    let lines = history_lines(&screen.revisions, inner.height.saturating_sub(1));
    for (line, (index, change_line)) in lines.into_iter().enumerate() {
        let Some(r) = screen.revisions.get(index) else { continue };
        let y = inner.y + 1 + u16::try_from(line).unwrap_or(0);
        if change_line {
            let change = r.change.as_deref().unwrap_or_default();
            let text = ellipsize(&format!("      ↳ {change}"), usize::from(inner.width));
            put_spans(buf, inner.x, y, &[Span::styled(text, theme.dim)], right);
            continue;
        }
        let class = if r.update {
            RevClass::Update
        } else if r.current {
            RevClass::Current
        } else {
            RevClass::Other
        };
        let glyph = Glyphs::cell(class, crate::app::view::PodState::Ready);
        let role = match (r.current, r.update) {
            (true, true) => " current+update",
            (false, true) => " update",
            (true, false) => " current",
            (false, false) => "",
        };
        let spans = [
            Span::styled(format!(" {glyph} "), theme.rev(class)),
            Span::styled(format!("{:>2}  ", r.number), theme.text),
            Span::styled(format!("{:<hash_w$}  ", r.hash), theme.rev(class)),
            Span::styled(format!("{:>4}  ", r.pods), theme.text),
        ];
        let x = put_spans(buf, inner.x, y, &spans, right);
        // The image matters most (the glyph already tells the role): on a narrow pane the role
        // word is left out whole rather than cut, and the image is cut (with …) only when it
        // alone does not fit.
        let avail = usize::from(right.saturating_sub(x));
        let broken = if r.broken { " ✗broken" } else { "" };
        let image = ellipsize(r.image.unwrap_or("?"), avail.saturating_sub(broken.chars().count()));
        let fits = image.chars().count() + broken.chars().count() + role.chars().count() <= avail;
        let role = if fits { role } else { "" };
        let tail = [
            Span::styled(image, theme.text),
            Span::styled(broken, theme.bad),
            Span::styled(role, theme.rev(class)),
        ];
        put_spans(buf, x, y, &tail, right);
    }
}
