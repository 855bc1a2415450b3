//! Screen geometry: where each pane goes for a terminal size ([`ScreenAreas`]), which panes are
//! dropped or shrunk when space is short, and the clickable map of a frame ([`hit_map`]).
//!
//! Pure functions of the view models and a [`Rect`]: the renderer draws into these areas and
//! the reducer maps clicks with the [`HitMap`] built from the same ones, so a click always lands
//! on what was drawn. Must not touch the terminal or styles.
//!
//! Priorities when space is short (first kept longest): header, status line, footer, grid,
//! controller, pod detail, timeline, revision history.

use ratatui::layout::{Margin, Rect};

use crate::app::state::{HitMap, HitRegion};

use super::Screen;
use super::grid::{DETAILED_MAX, GROUP, GridLayout, GridMode, GridRow, compact_rows};
use super::group::MatrixLayout;

/// Terminal width from which panes go side by side with a right-hand column.
pub const WIDE: u16 = 110;

/// Every pane's outer area (borders included). `None` for a pane dropped for lack of space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScreenAreas {
    pub header: Rect,
    pub controller: Option<Rect>,
    pub grid: Rect,
    pub detail: Option<Rect>,
    pub timeline: Option<Rect>,
    pub history: Option<Rect>,
    pub footer: Rect,
    pub status: Rect,
}

impl ScreenAreas {
    /// The grid's inside (its block has a one-cell border).
    pub fn grid_inner(&self) -> Rect {
        self.grid.inner(Margin::new(1, 1))
    }
}

/// Splits `area` off the top of `rest`, at most `h` rows.
fn take_top(rest: &mut Rect, h: u16) -> Rect {
    let h = h.min(rest.height);
    let top = Rect { height: h, ..*rest };
    rest.y += h;
    rest.height -= h;
    top
}

/// Splits `area` off the bottom of `rest`.
fn take_bottom(rest: &mut Rect, h: u16) -> Rect {
    let h = h.min(rest.height);
    rest.height -= h;
    Rect { y: rest.y + rest.height, height: h, ..*rest }
}

/// Splits `w` columns off the right of `rest`.
fn take_right(rest: &mut Rect, w: u16) -> Rect {
    let w = w.min(rest.width);
    rest.width -= w;
    Rect { x: rest.x + rest.width, width: w, ..*rest }
}

/// Rows the grid would like: every ordinal and rule in detailed mode, plus borders.
fn grid_wants(screen: &Screen<'_>, width: u16) -> u16 {
    if let Some(m) = &screen.group {
        return super::group::wants(m, width.saturating_sub(2)).saturating_add(2);
    }
    let rows = screen.grid.cells.len() + screen.grid.rules.len();
    u16::try_from(rows.max(1) + 2).unwrap_or(u16::MAX)
}

/// Rows the controller pane wants at `width` columns (borders and padding included): its
/// sentences word-wrapped, at most `max_lines` rows of text.
fn controller_wants(screen: &Screen<'_>, max_lines: usize, width: u16) -> u16 {
    let text_w = usize::from(width.saturating_sub(4)).max(1);
    let rows: usize = screen
        .controller
        .iter()
        .map(|l| wrapped_rows(&format!("{}: {}", l.kind.label(), l.text), text_w))
        .sum();
    u16::try_from(rows.clamp(1, max_lines) + 2).unwrap_or(4)
}

pub use super::wrap::{wrap, wrapped_rows};

/// Where every pane goes on a terminal of `area`.
pub fn screen_areas(screen: &Screen<'_>, area: Rect) -> ScreenAreas {
    let mut rest = area;
    let header = take_top(&mut rest, super::header::height(screen.header.as_ref(), area.width));
    let status = take_bottom(&mut rest, 1);
    let footer = take_bottom(&mut rest, 1);
    let mut out = ScreenAreas { header, footer, status, ..ScreenAreas::default() };
    if screen.header.is_none() {
        out.grid = rest;
        return out;
    }
    if area.width >= WIDE {
        wide(screen, rest, &mut out);
    } else {
        narrow(screen, rest, &mut out);
    }
    out
}

/// Wide: grid and timeline on the left; controller, detail and history in a right column.
fn wide(screen: &Screen<'_>, mut rest: Rect, out: &mut ScreenAreas) {
    let right_w = (rest.width * 2 / 5).clamp(44, 72);
    let mut right = take_right(&mut rest, right_w);
    let ctrl_h = controller_wants(screen, 8, right.width);
    out.controller = Some(take_top(&mut right, ctrl_h));
    if right.height >= 5 {
        // Eleven rows, or what the pod has to say (why it is not Ready, its containers) while
        // six stay for the history.
        let wants = screen.detail().map_or(11, |d| detail_wants(d, right.width)).max(11);
        let detail_h = match right.height {
            h if h >= 18 => wants.min(h - 6),
            h => h,
        };
        out.detail = Some(take_top(&mut right, detail_h));
    }
    if right.height >= 4 {
        out.history = Some(right);
    }
    split_grid_timeline(screen, rest, out);
}

/// Rows the detail would like at `width`: each row's value wrapped under itself, and borders.
fn detail_wants(d: &super::DetailView, width: u16) -> u16 {
    use unicode_width::UnicodeWidthStr;
    let label_w = d.rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 2;
    let value_w = usize::from(width).saturating_sub(label_w + 3).max(1);
    let lines: usize = d.rows.iter().map(|(_, v)| v.width().div_ceil(value_w).max(1)).sum();
    u16::try_from(lines + 2).unwrap_or(u16::MAX)
}

/// Narrow: controller across the top, then grid with the detail beside it, then timeline.
fn narrow(screen: &Screen<'_>, mut rest: Rect, out: &mut ScreenAreas) {
    let ctrl_lines = if rest.height >= 16 { 3 } else { 1 };
    if rest.height >= 8 {
        let ctrl_h = controller_wants(screen, ctrl_lines, rest.width);
        out.controller = Some(take_top(&mut rest, ctrl_h));
    }
    if rest.width >= 64 {
        let detail_w = (rest.width / 3).clamp(26, 36);
        let mut right = take_right(&mut rest, detail_w);
        if right.height >= 16 {
            let h = right.height / 2;
            out.history = Some(take_bottom(&mut right, h));
        }
        out.detail = Some(right);
    }
    split_grid_timeline(screen, rest, out);
}

/// The grid gets what it needs (detailed rows) or the lion's share (compact map); the timeline
/// gets the rest when there is enough of it.
fn split_grid_timeline(screen: &Screen<'_>, rest: Rect, out: &mut ScreenAreas) {
    const TIMELINE_MIN: u16 = 5;
    let h = rest.height;
    let detailed = grid_wants(screen, rest.width);
    let grid_h = if detailed + TIMELINE_MIN <= h {
        detailed.max(h * 2 / 5)
    } else if h >= 24 && (screen.grid.cells.len() <= DETAILED_MAX || screen.group.is_some()) {
        // Detailed rows that scroll: most of the height, the timeline keeps a useful share.
        h - (h / 3).clamp(TIMELINE_MIN, 12)
    } else if h >= 24 {
        let inner_w = rest.width.saturating_sub(2);
        let compact = compact_rows(&screen.grid, inner_w).saturating_add(2);
        compact.max(h * 2 / 5).min(h - (h / 4).clamp(TIMELINE_MIN, 12))
    } else {
        h
    };
    let mut rest = rest;
    out.grid = take_top(&mut rest, grid_h);
    if rest.height >= TIMELINE_MIN {
        out.timeline = Some(rest);
    }
}

/// Rows of the history pane's inside where revision rows start (after the column header).
pub const HISTORY_HEADER_ROWS: u16 = 1;

/// The history pane's lines for `rows` rows: (revision index, whether it is the revision's
/// change line). Each revision with a change gets a line under it when every such line fits;
/// otherwise one line per revision. The renderer and hit-testing both read this.
pub fn history_lines(revisions: &[super::RevisionRow<'_>], rows: u16) -> Vec<(usize, bool)> {
    let changes = revisions.iter().filter(|r| r.change.is_some()).count();
    let with_changes = revisions.len() + changes <= usize::from(rows);
    let mut out = Vec::new();
    for (i, r) in revisions.iter().enumerate() {
        out.push((i, false));
        if with_changes && r.change.is_some() {
            out.push((i, true));
        }
    }
    out.truncate(usize::from(rows));
    out
}

/// The clickable regions of a frame drawn with `areas` and `grid` (from [`screen_areas`] and
/// [`GridLayout::new`] on the grid's inside), plus the movement strides for the reducer.
pub fn hit_map(screen: &Screen<'_>, areas: &ScreenAreas, grid: &GridLayout) -> HitMap {
    let mut regions = Vec::new();
    let area = grid.area;
    for (i, row) in grid.rows.iter().enumerate() {
        let y = area.y + u16::try_from(i).unwrap_or(u16::MAX);
        match *row {
            GridRow::Ordinal(o) => regions.push(HitRegion::Grid {
                area: Rect { y, height: 1, ..area },
                cell_width: area.width.max(1),
                cell_height: 1,
                columns: 1,
                first: o,
                count: 1,
            }),
            GridRow::Span { from, len } => {
                let mut i = 0;
                while i < len {
                    let n = (len - i).min(GROUP);
                    let x = area.x + grid.column_of(i);
                    let width = n.min((area.x + area.width).saturating_sub(x));
                    if width > 0 {
                        regions.push(HitRegion::Grid {
                            area: Rect { x, y, width, height: 1 },
                            cell_width: 1,
                            cell_height: 1,
                            columns: width,
                            first: from + i32::from(i),
                            count: u32::from(width),
                        });
                    }
                    i += n;
                }
            }
            GridRow::Rule(_) => {}
        }
    }
    if let Some(history) = areas.history {
        let inner = history.inner(Margin::new(1, 1));
        let top = inner.y + HISTORY_HEADER_ROWS;
        let rows = inner.height.saturating_sub(HISTORY_HEADER_ROWS);
        for (i, (index, _)) in history_lines(&screen.revisions, rows).into_iter().enumerate() {
            let Some(rev) = screen.revisions.get(index) else { continue };
            let y = top + u16::try_from(i).unwrap_or(0);
            let area = Rect { y, height: 1, ..inner };
            regions.push(HitRegion::Revision { area, revision: rev.number });
        }
    }
    let timeline_rows = match areas.timeline {
        Some(t) => {
            let inner = t.inner(Margin::new(1, 1));
            regions.push(HitRegion::Timeline { area: inner });
            inner.height
        }
        None => 0,
    };
    let grid_columns = match grid.mode {
        GridMode::Detailed => 1,
        GridMode::Compact { cols } => cols,
    };
    let mut page = u32::try_from(grid.page()).unwrap_or(u32::MAX);
    if let Some(m) = matrix_layout(screen, areas) {
        page = u32::try_from(m.rows).unwrap_or(u32::MAX);
        let first = screen.group.as_ref().map_or(0, |g| g.first);
        for c in m.first_col..m.first_col + m.cols {
            let (Some(x), Ok(column)) = (m.col_x(c), u16::try_from(c)) else { continue };
            let offset = i32::try_from(m.offset).unwrap_or(0);
            let rows = u16::try_from(m.rows).unwrap_or(0);
            let area = Rect { x, y: m.row_y(0), width: m.col_w, height: rows };
            regions.push(HitRegion::Matrix { area, column, first: first.saturating_add(offset) });
        }
    }
    HitMap { regions, grid_columns, page, timeline_rows }
}

/// The whole geometry of a frame on a terminal of `area`: pane areas and the grid layout.
pub fn frame_layout(screen: &Screen<'_>, area: Rect) -> (ScreenAreas, GridLayout) {
    let areas = screen_areas(screen, area);
    // A group's matrix takes the grid's place: the grid lays out nothing (no rows to click).
    let empty = super::GridView::default();
    let grid = if screen.group.is_some() { &empty } else { &screen.grid };
    let grid = GridLayout::new(grid, screen.selected, areas.grid_inner());
    (areas, grid)
}

/// The matrix's layout in the grid pane, when a group is shown.
pub fn matrix_layout(screen: &Screen<'_>, areas: &ScreenAreas) -> Option<MatrixLayout> {
    let m = screen.group.as_ref()?;
    let at = screen.state.selected_set.as_ref().and_then(|k| m.column_of(k));
    Some(MatrixLayout::new(m, (at, screen.state.selected_ordinal), areas.grid_inner()))
}

/// A rectangle of at most `w` × `h` centred in `area` (dialogs and overlays).
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

#[cfg(test)]
mod tests {
    use super::wrapped_rows;

    #[test]
    fn word_wrap_counts_rows_like_a_greedy_wrapper() {
        assert_eq!(wrapped_rows("", 10), 1);
        assert_eq!(wrapped_rows("abc def", 7), 1);
        assert_eq!(wrapped_rows("abc def", 6), 2);
        assert_eq!(wrapped_rows("abcdefghijkl", 5), 3);
        assert_eq!(wrapped_rows("ab abcdefghijkl", 5), 4);
    }
}
