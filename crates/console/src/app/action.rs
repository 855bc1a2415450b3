//! [`Action`]: every intent a key or a mouse gesture can bind to.
//!
//! Owns the vocabulary only. Which key means which action lives in `keymap.rs`; what an action
//! does to the state lives in `update.rs`. Must not touch the terminal or the backend.

/// A bindable intent. The reducer decides, from the state, whether it applies now; when it does
/// not, it says why in the status line instead of doing nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    // --- rollout ------------------------------------------------------------------------
    /// Lower the partition by one: one more ordinal may move to the update revision.
    PartitionDown,
    /// Raise the partition by one. Asks for confirmation when the newly held ordinals are
    /// already updated (raising the partition never reverts them).
    PartitionUp,
    /// Prompt for a partition number.
    PartitionPrompt,
    /// Cycle the update strategy: RollingUpdate, OnDelete, Recreate (where the gate is on).
    ToggleStrategy,
    /// Prompt for maxUnavailable (a number or a percentage).
    MaxUnavailablePrompt,
    /// Scale up by one replica.
    ScaleUp,
    /// Scale down by one replica (to 0 asks for confirmation).
    ScaleDown,
    /// Prompt for a replica count.
    ScalePrompt,
    /// Prompt for a new image (prefilled with the current image, its tag bumped): a new
    /// template, so a new revision.
    NewImage,
    /// `kubectl rollout restart`.
    Restart,
    /// Pick a ControllerRevision to roll the template back to (`kubectl rollout undo`).
    Undo,
    /// Freeze the rollout (the partition holds every ordinal; recorded in annotations on the
    /// set), or resume a frozen one.
    ToggleFreeze,
    /// Prompt for a rollout plan (steps and bake) this console then runs.
    PlanPrompt,
    /// Pass a rollout plan's manual gate.
    ApprovePlan,
    /// The forced rollback of the whole set (`ststui abort`): a plan ended as aborted, the
    /// template back to the previous revision, the pods stuck on the broken one deleted —
    /// shown first, asked.
    AbortSet,
    /// The StatefulSet list: filter it by name.
    FilterSets,

    // --- controller (simulator) -----------------------------------------------------------
    /// Pause / resume reconciliation.
    TogglePause,
    /// While paused: run one controller sync.
    Step,
    /// Double the simulator speed.
    SpeedUp,
    /// Halve the simulator speed.
    SpeedDown,

    // --- the selected pod -------------------------------------------------------------------
    /// Graceful delete of the selected pod (confirmation).
    DeletePod,
    /// Immediate removal of the selected pod (confirmation).
    ForceDeletePod,
    /// Fault: the selected pod's phase becomes Failed.
    FailPod,
    /// Fault: flip the selected pod's Ready condition.
    ToggleReady,
    /// Fault: the selected pod's image is broken (every pod of it never becomes Ready), or
    /// fixed when it already is.
    BreakImage,

    // --- navigation --------------------------------------------------------------------------
    /// Previous ordinal.
    Left,
    /// Next ordinal.
    Right,
    /// One grid row up (previous ordinal in a one-column layout).
    Up,
    /// One grid row down.
    Down,
    /// One page of ordinals back.
    PageUp,
    /// One page of ordinals forward.
    PageDown,
    /// The first ordinal.
    First,
    /// The last ordinal.
    Last,
    /// Select the next StatefulSet (when a script created several); in a group's view, the
    /// next set of the group.
    NextSet,
    /// The selected set's rollout group as one matrix, or back to the set (`app::group`).
    Group,
    /// Prompt for an ordinal to select (large sets).
    JumpPrompt,
    /// Scroll the timeline back (older entries).
    TimelineOlder,
    /// Scroll the timeline forward (newer entries); at the bottom it follows new ones again.
    TimelineNewer,
    /// Show only the selected set's timeline lines, or every line again.
    TimelineFilter,
    /// Select the pod the controller waits on (or the next action is about).
    JumpToWaited,
    /// Show the selected pod's log.
    Logs,
    /// Write the session's timeline to a JSONL file.
    ExportTimeline,
    /// In the log: the previous container's instead (or the current one again).
    PreviousLog,

    // --- overlays and the app ----------------------------------------------------------------
    /// Open / close the help overlay.
    Help,
    /// Close the overlay, cancel the prompt or the confirmation.
    Cancel,
    /// Accept: submit the prompt, confirm, pick the highlighted revision.
    Accept,
    /// Quit the console.
    Quit,
    /// Suspend to the shell (job control; `fg` comes back).
    Suspend,
    /// Back: clear the status line; with none, from a set to the set list (on a cluster).
    Back,
    /// Read the credentials again and reconnect (on a cluster, after a 401).
    Reconnect,
}
