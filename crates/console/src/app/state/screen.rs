//! The screen's state: the open overlay ([`Modal`]) and what it holds, the status line, and
//! the clickable geometry of the last frame ([`HitMap`]).

use ratatui::layout::Rect;

use super::LogView;
use super::plan::Form;
use super::prompt::Prompt;
use crate::app::keymap::Context;
use crate::backend::{ObjRef, Op};

impl super::AppState {
    /// The context keys are read in, from the open overlay.
    pub fn context(&self) -> Context {
        match self.modal {
            Modal::None if self.picking.is_some() => Context::Sets,
            Modal::None => Context::Normal,
            Modal::Help { .. } => Context::Help,
            Modal::Prompt(_) => Context::Prompt,
            Modal::Confirm(_) => Context::Confirm,
            Modal::Picker(_) => Context::Picker,
            Modal::Log(_) => Context::Log,
        }
    }
}

/// The open overlay. At most one at a time.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Modal {
    #[default]
    None,
    /// The help overlay (derived from the keymap), showing one of its pages (a small terminal
    /// needs more than one).
    Help { page: usize },
    /// Number / text entry.
    Prompt(Prompt),
    /// A destructive or surprising action waiting for y/n.
    Confirm(Confirm),
    /// Undo: choose the revision to roll back to.
    Picker(RevisionPicker),
    /// The selected pod's log.
    Log(LogView),
}

/// A pending confirmation, held as data: what will happen (old → new), an optional warning,
/// and the Ops to send on "yes".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Confirm {
    /// What is asked, e.g. `Delete pod default/web-3?`.
    pub title: String,
    /// The value or state now, e.g. `partition 5`.
    pub old: String,
    /// What it becomes, e.g. `partition 2`.
    pub new: String,
    /// Something the operator may not expect (e.g. raising the partition never reverts
    /// updated pods).
    pub warning: Option<String>,
    /// Sent to the backend, in order, on "yes".
    pub ops: Vec<Op>,
    /// The timeline line for the operator command (scenario language, e.g. `partition web 2`).
    pub log: String,
    /// What will happen, step by step, shown under the change (a plan's steps, an abort's
    /// writes).
    pub details: Vec<String>,
    /// What the console itself starts on "yes", beside the ops (a plan it runs).
    pub then: Option<Then>,
}

/// What a confirmation starts in the console itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Then {
    /// Run this plan (`P`).
    Plan { set: ObjRef, form: Form },
    /// Run this group plan (`P` in a group's view).
    GroupPlan { group: super::GroupShown, form: super::GroupForm },
    /// Quit (while this console runs a plan: it stops and gives its lease back).
    Quit,
    /// Stop the plan this console runs (its lease given back) before the ops: an abort.
    StopPlan,
    /// Send `op` once the ops are done (a force-delete after its reason is recorded on the
    /// set: nothing is deleted when the record fails); `note` goes to the timeline.
    After { op: Box<Op>, note: String },
}

/// Undo's revision picker: the set's revisions, newest first, and the highlighted row.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionPicker {
    pub set: ObjRef,
    pub choices: Vec<RevisionChoice>,
    /// Index into `choices`.
    pub selected: usize,
}

/// One row of the revision picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionChoice {
    pub revision: i64,
    pub name: String,
    /// The first container's image in that revision, when it can be read.
    pub image: Option<String>,
    /// This is the set's status.currentRevision.
    pub current: bool,
    /// This is the set's status.updateRevision (rolling back to it changes nothing).
    pub update: bool,
    /// What rolling back to it changes, from the update revision's template
    /// (`image app: nginx:1.26 → nginx:1.25`); `None` when the templates are the same.
    pub change: Option<String>,
}

/// The status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub kind: StatusKind,
    /// One-second ticks left before it disappears.
    pub ticks_left: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    /// What just happened ("partition web 5 → 4").
    Info,
    /// A key that cannot apply now, and why.
    Refusal,
    /// An Op failed or the backend reported an error.
    Error,
}

/// Clickable geometry of the last frame, produced by the ui's draw and handed to the reducer
/// by the event loop (`Msg::Drawn`). The reducer maps a click to an ordinal with
/// [`HitMap::hit`] and moves with [`HitMap::grid_columns`] / [`HitMap::page`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HitMap {
    pub regions: Vec<HitRegion>,
    /// Ordinals per grid row (1 for a one-row-per-ordinal list). Up/Down move by this.
    pub grid_columns: u16,
    /// Ordinals visible at once (PgUp/PgDn move by this).
    pub page: u32,
    /// Lines the timeline pane shows (0 when it is not on screen).
    pub timeline_rows: u16,
}

/// A clickable region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HitRegion {
    /// Ordinal cells laid out row-major in `area`: each `cell_width × cell_height`,
    /// `columns` per row, the first cell is ordinal `first`, `count` cells in all.
    Grid { area: Rect, cell_width: u16, cell_height: u16, columns: u16, first: i32, count: u32 },
    /// One row of the revision history (click = open undo with it highlighted).
    Revision { area: Rect, revision: i64 },
    /// The timeline pane's inside.
    Timeline { area: Rect },
    /// A column of a group's matrix: one row per ordinal from `first`; `column` indexes the
    /// group's sets.
    Matrix { area: Rect, column: u16, first: i32 },
}

/// What a click landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Ordinal(i32),
    Revision(i64),
    /// The timeline pane (the mouse wheel scrolls it).
    Timeline,
    /// A cell of a group's matrix: the set's column, the ordinal.
    Cell {
        column: u16,
        ordinal: i32,
    },
}

impl HitMap {
    /// What is at terminal cell (`column`, `row`), if anything clickable.
    pub fn hit(&self, column: u16, row: u16) -> Option<Hit> {
        self.regions.iter().find_map(|r| r.hit(column, row))
    }
}

impl HitRegion {
    fn hit(&self, column: u16, row: u16) -> Option<Hit> {
        let inside = |a: &Rect| {
            column >= a.x && column < a.x + a.width && row >= a.y && row < a.y + a.height
        };
        match self {
            HitRegion::Grid { area, cell_width, cell_height, columns, first, count } => {
                if !inside(area) || *cell_width == 0 || *cell_height == 0 || *columns == 0 {
                    return None;
                }
                let cx = u32::from((column - area.x) / cell_width);
                let cy = u32::from((row - area.y) / cell_height);
                if cx >= u32::from(*columns) {
                    return None;
                }
                let idx = cy * u32::from(*columns) + cx;
                if idx >= *count {
                    return None;
                }
                let idx = i32::try_from(idx).ok()?;
                Some(Hit::Ordinal(first.checked_add(idx)?))
            }
            HitRegion::Revision { area, revision } => {
                inside(area).then_some(Hit::Revision(*revision))
            }
            HitRegion::Timeline { area } => inside(area).then_some(Hit::Timeline),
            HitRegion::Matrix { area, column: c, first } => {
                let below = i32::from(row.checked_sub(area.y)?);
                inside(area).then(|| Hit::Cell { column: *c, ordinal: first.saturating_add(below) })
            }
        }
    }
}
