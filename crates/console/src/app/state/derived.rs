//! The derived cache's shape: what the console computed from the mirror and the advisor for
//! the selected set, and what it was computed from. Computed by `app::derived`.

use crate::app::view::grid::GridView;
use crate::backend::{Mode, ObjRef};
use crate::core::explain::Step;

/// What the derived data was computed from: when any of it moves, it is computed again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub set: ObjRef,
    pub mirror_generation: u64,
    /// The Events held (a set's FailedCreate joins the controller pane).
    pub events_generation: u64,
    /// The advisor's identity (its mirror generation and backend time), if it has run.
    pub advisor: Option<(u64, Option<i64>)>,
    /// The backend clock, in whole seconds, when the words depend on it: while the controller
    /// waits (a pod stuck for a minute becomes a hint) or with minReadySeconds. A steady set
    /// is not derived again every second.
    pub second: Option<i64>,
    pub mode: Mode,
    /// Why the pods cannot be shown (`readings::pods_unknown`), and whether claims are unreadable.
    pub unknown: (Option<String>, bool),
    /// The keys the controller pane may name (writes allowed, credentials accepted).
    pub writes: (bool, bool, bool),
}

/// The selected set's derived view data.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub key: Key,
    pub grid: GridView,
    /// The controller pane's sentences, most important first.
    pub controller: Vec<ExplainLine>,
    /// What the next sync does, step by step (the pod detail's "next" row).
    pub steps: Vec<Step>,
    /// The set's verdict (`plan::verdict`): its word, what it waits on, what moves it on.
    pub verdict: crate::plan::verdict::Verdict,
    /// Each revision's change from the one before it (revision name, summary), for the
    /// revision history.
    pub revision_changes: Vec<(String, String)>,
}

/// What a controller-pane line is, for its style and its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineKind {
    /// What the controller does next.
    Next,
    /// Why it stopped early.
    Waiting,
    /// What the operator's configuration holds (partition, OnDelete).
    Held,
    /// Nothing left to do.
    Done,
    /// Something the operator may want to do.
    Hint,
    /// Something surprising the operator should know.
    Warning,
    /// A sync error.
    Error,
}

impl LineKind {
    /// The word that starts the line.
    pub fn label(self) -> &'static str {
        match self {
            LineKind::Next => "next",
            LineKind::Waiting => "waiting",
            LineKind::Held => "held",
            LineKind::Done => "done",
            LineKind::Hint => "hint",
            LineKind::Warning => "warning",
            LineKind::Error => "error",
        }
    }
}

/// One sentence of the controller pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainLine {
    pub kind: LineKind,
    pub text: String,
}

impl ExplainLine {
    pub(crate) fn new(kind: LineKind, text: impl Into<String>) -> Self {
        ExplainLine { kind, text: text.into() }
    }
}
