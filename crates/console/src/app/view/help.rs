//! The help overlay's content and geometry: every binding of the keymap table (the console's,
//! grouped, then each dialog's), word-wrapped into as many columns as the terminal width
//! allows, and into pages when even those do not hold it (a small terminal turns pages with
//! PgDn / PgUp instead of cutting text off).
//!
//! Pure: the renderer draws [`layout`]'s pages and the reducer reads the page count from the
//! same function, so the page keys always agree with what is on screen. Must not touch the
//! terminal or styles.

use ratatui::layout::Rect;

use crate::app::keymap::{Context, Key, help_sections};
use crate::backend::Capabilities;

use super::layout::centered;

/// The overlay is at most this wide; on wider terminals it is centred.
const MAX_WIDTH: u16 = 160;
/// Columns are at least this wide (keys and a help text without much wrapping).
const MIN_COLUMN: u16 = 44;

/// One line of the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpLine {
    /// A section title: `Rollout`, `Confirmation dialog`.
    Heading(String),
    /// A binding's keys (right-aligned by the renderer) and a piece of its help text. A help
    /// text wrapped over several lines has empty `keys` on the lines after the first.
    Binding { keys: String, text: String },
}

/// What the overlay shows on a terminal of a given size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLayout {
    /// The overlay's outer area (borders included).
    pub popup: Rect,
    /// Width of each column, in cells.
    pub column_width: u16,
    /// Width of the key column (the widest key list).
    pub key_width: usize,
    /// Pages of columns of lines. Never empty.
    pub pages: Vec<Vec<Vec<HelpLine>>>,
}

impl HelpLayout {
    /// The page to show when `page` is asked for (clamped to the last).
    pub fn page(&self, page: usize) -> (usize, &[Vec<HelpLine>]) {
        let i = page.min(self.pages.len().saturating_sub(1));
        (i, self.pages.get(i).map_or(&[][..], Vec::as_slice))
    }
}

/// A section of the overlay: its title and (keys, help text) rows.
type Section = (String, Vec<(String, &'static str)>);

/// Every section, in order: the console's groups, then one per dialog.
fn sections(caps: &Capabilities) -> Vec<Section> {
    let mut out: Vec<Section> = help_sections(Some(caps))
        .into_iter()
        .map(|(group, lines)| {
            (group.title().to_string(), lines.into_iter().map(|l| (l.keys, l.help)).collect())
        })
        .collect();
    let legend = super::glyphs::Glyphs::legend();
    out.push((
        "Grid legend".to_string(),
        legend.iter().map(|e| (e.key().to_string(), e.long)).collect(),
    ));
    let dialogs = [
        Context::Sets,
        Context::Log,
        Context::Help,
        Context::Prompt,
        Context::Confirm,
        Context::Picker,
    ];
    for ctx in dialogs {
        let rows: Vec<(String, &str)> = crate::app::keymap::bindings(ctx, caps)
            .map(|b| (b.keys.iter().map(Key::label).collect::<Vec<_>>().join(" "), b.help))
            .collect();
        if !rows.is_empty() {
            out.push((dialog_title(ctx).to_string(), rows));
        }
    }
    out
}

fn dialog_title(c: Context) -> &'static str {
    match c {
        Context::Normal => "Console",
        Context::Help => "This help",
        Context::Prompt => "Number / image prompt",
        Context::Confirm => "Confirmation",
        Context::Picker => "Undo: revision picker",
        Context::Sets => "StatefulSet list (cluster)",
        Context::Log => "A pod's log",
    }
}

/// Lays the overlay out for a terminal of `area`.
pub fn layout(area: Rect, caps: &Capabilities) -> HelpLayout {
    let popup = centered(area, area.width.saturating_sub(2).min(MAX_WIDTH), area.height);
    let inner_w = popup.width.saturating_sub(2);
    let inner_h = usize::from(popup.height.saturating_sub(2)).max(1);
    let ncols = (inner_w / MIN_COLUMN).max(1);
    let column_width = (inner_w / ncols).max(1);
    let sections = sections(caps);
    let key_width = sections
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(k, _)| k.chars().count()))
        .max()
        .unwrap_or(0);
    // A line is " keys help": one leading space, the key column, one space; the last column
    // of each column stays blank as a gutter.
    let text_width = usize::from(column_width).saturating_sub(key_width + 3).max(8);
    let mut columns: Vec<Vec<HelpLine>> = vec![Vec::new()];
    for (title, rows) in sections {
        let blocks: Vec<Vec<HelpLine>> =
            rows.into_iter().map(|(keys, help)| wrap_binding(keys, help, text_width)).collect();
        // A section that fits in a column is never split; a longer one breaks between
        // bindings, and its heading travels with its first binding.
        let whole = 1 + blocks.iter().map(Vec::len).sum::<usize>();
        let used = columns.last().map_or(0, Vec::len);
        if used > 0 && whole <= inner_h && used + whole > inner_h {
            columns.push(Vec::new());
        }
        for (i, block) in blocks.into_iter().enumerate() {
            let heading = (i == 0).then(|| HelpLine::Heading(title.clone()));
            let need = block.len() + usize::from(heading.is_some());
            let used = columns.last().map_or(0, Vec::len);
            if used > 0 && used + need > inner_h {
                columns.push(Vec::new());
            }
            if let Some(col) = columns.last_mut() {
                col.extend(heading);
                col.extend(block);
            }
        }
    }
    let pages: Vec<Vec<Vec<HelpLine>>> =
        columns.chunks(usize::from(ncols)).map(<[_]>::to_vec).collect();
    // One page: only as tall as its tallest column (centred again).
    let popup = match pages.as_slice() {
        [only] => {
            let tallest = only.iter().map(Vec::len).max().unwrap_or(0);
            let h = u16::try_from(tallest + 2).unwrap_or(u16::MAX).min(popup.height);
            centered(area, popup.width, h)
        }
        _ => popup,
    };
    HelpLayout { popup, column_width, key_width, pages }
}

/// One binding as lines: the help text wrapped to `width`, keys on the first line only.
fn wrap_binding(keys: String, help: &str, width: usize) -> Vec<HelpLine> {
    let mut keys = Some(keys);
    textwrap::wrap(help, width)
        .into_iter()
        .map(|piece| HelpLine::Binding {
            keys: keys.take().unwrap_or_default(),
            text: piece.into(),
        })
        .collect()
}
