//! The grid's geometry: detailed rows or the compact one-character map, the rule lines, the
//! scroll window, and hit-testing ([`GridLayout`]), over the view model of [`super::GridView`].

use ratatui::layout::Rect;

use super::{GridView, Rule};

/// How the grid is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridMode {
    /// One screen row per ordinal.
    Detailed,
    /// One character per ordinal, `cols` ordinals per row, grouped by ten.
    Compact { cols: u16 },
}

/// One screen row of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridRow {
    /// Detailed: one ordinal.
    Ordinal(i32),
    /// Compact: `len` ordinals from `from`.
    Span { from: i32, len: u16 },
    /// A rule line.
    Rule(Rule),
}

/// Where every visible grid row goes. Built from the view and the grid's inner area; the
/// renderer and hit-testing both read it, so a click lands on what was drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridLayout {
    pub area: Rect,
    pub mode: GridMode,
    /// The visible rows, top to bottom (at most `area.height`).
    pub rows: Vec<GridRow>,
    /// Index of the first visible row among all rows (the scroll offset).
    pub offset: usize,
    /// Total rows (visible or not).
    pub total: usize,
    /// Compact: width of the left gutter (pointer, row label, space).
    pub gutter: u16,
}

/// Ordinals per group in the compact map (a space separates groups).
pub const GROUP: u16 = 10;

/// Up to this many ordinals the grid keeps one detailed row per ordinal and scrolls (as k9s's
/// tables do) rather than switching to the compact map: names, revisions, states, ages,
/// restarts and nodes stay readable for the sets most operators run.
pub const DETAILED_MAX: usize = 100;

/// Rows (inside the pane) a scrolling detailed grid needs; below, the compact map is used.
pub const DETAILED_MIN_ROWS: u16 = 10;

/// Whether the grid is drawn as detailed rows on a pane `rows` high (inside).
pub fn detailed_fits(grid: &GridView, rows: u16) -> bool {
    let n = grid.cells.len();
    n + grid.rules.len() <= usize::from(rows) || (n <= DETAILED_MAX && rows >= DETAILED_MIN_ROWS)
}

impl GridLayout {
    /// Chooses detailed rows when every ordinal and rule fits, or when the set is small enough
    /// to scroll through row by row ([`DETAILED_MAX`], on a pane of at least
    /// [`DETAILED_MIN_ROWS`]); else the compact map. Scrolls so the `selected` ordinal is
    /// visible (centred when it can be).
    pub fn new(grid: &GridView, selected: Option<i32>, area: Rect) -> GridLayout {
        let height = usize::from(area.height);
        let mode = if detailed_fits(grid, area.height) {
            GridMode::Detailed
        } else {
            GridMode::Compact { cols: compact_cols(area.width.saturating_sub(gutter_width(grid))) }
        };
        let all = all_rows(grid, mode);
        let total = all.len();
        let sel_row = selected.and_then(|s| all.iter().position(|r| row_has(r, s)));
        let offset = match sel_row {
            Some(r) if total > height => r.saturating_sub(height / 2).min(total - height),
            _ => 0,
        };
        let rows = all.into_iter().skip(offset).take(height).collect();
        let gutter = if matches!(mode, GridMode::Compact { .. }) { gutter_width(grid) } else { 0 };
        GridLayout { area, mode, rows, offset, total, gutter }
    }

    /// Ordinals per compact row, or 1 in detailed mode: what "one row up" moves by.
    pub fn stride(&self) -> u16 {
        match self.mode {
            GridMode::Detailed => 1,
            GridMode::Compact { cols } => cols,
        }
    }

    /// Visible ordinal rows: what "one page" moves by.
    pub fn page(&self) -> usize {
        let rows = self.rows.iter().filter(|r| !matches!(r, GridRow::Rule(_))).count().max(1);
        rows * usize::from(self.stride())
    }

    /// The ordinal drawn at screen cell (`x`, `y`), if any.
    pub fn ordinal_at(&self, x: u16, y: u16) -> Option<i32> {
        if !self.area.contains(ratatui::layout::Position { x, y }) {
            return None;
        }
        let row = self.rows.get(usize::from(y - self.area.y))?;
        let dx = x - self.area.x;
        match *row {
            GridRow::Ordinal(o) => Some(o),
            GridRow::Span { from, len } => {
                let i = index_at_column(dx.checked_sub(self.gutter)?)?;
                (i < len).then(|| from + i32::from(i))
            }
            GridRow::Rule(_) => None,
        }
    }

    /// The screen column (relative to the area) of the `i`th ordinal of a compact row.
    pub fn column_of(&self, i: u16) -> u16 {
        self.gutter + i + i / GROUP
    }
}

/// Index within a compact row of the ordinal at column `dx` (after the gutter); `None` on a
/// group gap.
pub(super) fn index_at_column(dx: u16) -> Option<u16> {
    let group = dx / (GROUP + 1);
    let within = dx % (GROUP + 1);
    (within < GROUP).then_some(group * GROUP + within)
}

/// Width of the compact map's gutter: pointer, the widest row label, a space.
pub fn gutter_width(grid: &GridView) -> u16 {
    let widest = grid.end().saturating_sub(1).max(grid.first).max(0);
    let digits = widest.checked_ilog10().unwrap_or(0) + 1;
    u16::try_from(digits).unwrap_or(10) + 2
}

/// Ordinals per compact row for a map `width` columns wide: whole groups of ten plus their gaps.
pub fn compact_cols(width: u16) -> u16 {
    if width > GROUP { (width + 1) / (GROUP + 1) * GROUP } else { width.max(1) }
}

/// Rows the compact map of `grid` takes at `width` columns (the grid's inside), rules included.
pub fn compact_rows(grid: &GridView, width: u16) -> u16 {
    let cols = compact_cols(width.saturating_sub(gutter_width(grid)));
    u16::try_from(all_rows(grid, GridMode::Compact { cols }).len()).unwrap_or(u16::MAX)
}

fn row_has(row: &GridRow, ordinal: i32) -> bool {
    match *row {
        GridRow::Ordinal(o) => o == ordinal,
        GridRow::Span { from, len } => ordinal >= from && ordinal < from + i32::from(len),
        GridRow::Rule(_) => false,
    }
}

/// Every row of the grid in `mode`: the ordinals, cut by the rules, wrapped in compact mode.
fn all_rows(grid: &GridView, mode: GridMode) -> Vec<GridRow> {
    let end = grid.end();
    let mut rows = Vec::new();
    let mut from = grid.first;
    let mut rules = grid.rules.iter().peekable();
    loop {
        let seg_end = rules.peek().map_or(end, |r| r.before.clamp(from, end));
        match mode {
            GridMode::Detailed => rows.extend((from..seg_end).map(GridRow::Ordinal)),
            GridMode::Compact { cols } => {
                let mut o = from;
                while o < seg_end {
                    let len = (seg_end - o).min(i32::from(cols));
                    rows.push(GridRow::Span { from: o, len: u16::try_from(len).unwrap_or(cols) });
                    o += len;
                }
            }
        }
        from = seg_end;
        match rules.next() {
            Some(rule) => rows.push(GridRow::Rule(*rule)),
            None => break,
        }
    }
    rows
}
