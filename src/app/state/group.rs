//! A rollout group the console shows as a whole (`Z`): its sets, how they were found, and where
//! the console came from. Its matrix is `app::view::group`, its logic `app::group`.

use crate::backend::ObjRef;

/// How the group's members are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The sets a group plan's part names, in its order.
    Part,
    /// Every set of the namespace carrying `rollout-group=<name>`, by name (grafana's
    /// rollout-operator reads the same label); found again as sets come and go.
    Label,
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
        }
    }
}
