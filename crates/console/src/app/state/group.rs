//! A rollout group the console shows as a whole (`Z`): its sets, how they were found, and where
//! the console came from. Its matrix is `app::view::group`, its logic `app::group`.

use crate::app::view::grid::GridView;
use crate::backend::ObjRef;

/// How the group's members are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The sets a group plan's part names, in its order.
    Part,
    /// Every set of the namespace carrying `rollout-group=<name>`, by name (grafana's
    /// rollout-operator reads the same label); found again as sets come and go.
    Label,
    /// A fleet's members, one or a group in each cluster the console was given (`ststui
    /// --contexts`): each cluster's sets in a namespace of its own, `CONTEXT/NAMESPACE`.
    Fleet,
}

/// The group shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupShown {
    pub namespace: String,
    /// The part's group name, or the label's value (from the cluster: escaped when shown).
    pub name: String,
    pub by: GroupBy,
    /// Its sets in rolling order, one column each.
    pub sets: Vec<ObjRef>,
    /// Opened from the set list (Esc goes back there), else from one of its sets (Esc goes back
    /// to the set).
    pub from_list: bool,
}

impl GroupShown {
    /// How the members were found, in words.
    pub fn by_words(&self) -> &'static str {
        match self.by {
            GroupBy::Part => "its plan's parts",
            GroupBy::Label => "the rollout-group label",
            GroupBy::Fleet => "the contexts given",
        }
    }
}

/// What the matrix was computed from: when any of it moves, it is computed again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixKey {
    pub sets: Vec<ObjRef>,
    pub mirror_generation: u64,
    /// The backend clock in whole seconds while a member's minReadySeconds makes the hold
    /// depend on it.
    pub second: Option<i64>,
    pub unknown: Option<String>,
}

/// Where a member stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// Every pod on the update revision (or nothing to roll).
    Done,
    /// Pods moving to the update revision.
    Rolling,
    /// A new revision waits, no pod of it yet, the set held.
    Waiting,
    /// The group plan halted or was aborted on it.
    Stopped,
    /// Not found, or its pods unknown.
    Unknown,
}

/// One member: its grid and what the column's heading says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub set: ObjRef,
    pub motion: Motion,
    /// `done 4/4`, `rolling 2/4`, `waiting`, `halted`, `not found`.
    pub words: String,
    /// The partition, when it holds some ordinals back.
    pub partition: Option<i32>,
    pub grid: GridView,
}

impl Column {
    /// The column's heading: the set's name, `cluster/name` in a fleet's view (its namespace
    /// `CONTEXT/NAMESPACE`; a namespace's own name never holds a `/`).
    pub fn label(&self) -> String {
        match self.set.namespace.split_once('/') {
            Some((cluster, _)) => format!("{cluster}/{}", self.set.name),
            None => self.set.name.clone(),
        }
    }
}

/// The whole group, as the view draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMatrix {
    pub key: MatrixKey,
    /// The group's name, escaped.
    pub name: String,
    /// A fleet's view: how many clusters its columns are in (`None`: a group in one).
    pub clusters: Option<usize>,
    /// The header: who drives it and where each set stands; which set rolls and why the next
    /// waits.
    pub lines: Vec<String>,
    pub columns: Vec<Column>,
    /// The rows: ordinals `first..end` (the union of the columns').
    pub first: i32,
    pub end: i32,
}
