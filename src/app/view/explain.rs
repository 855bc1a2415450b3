//! The controller pane's sentences: the next action and the blocker in words, from the advisor's
//! [`Plan`], plus the operator hints the plan alone does not say (the forced-rollback hint of
//! kubernetes#67250, the raised-partition warning).
//!
//! Owns wording only. Pure: reads the plan and the grid view model, never the state or the
//! terminal. Keys named in hints come from the keymap table, so they cannot drift.

use crate::app::action::Action;
use crate::app::keymap::{Context, key_for};
use crate::core::{Blocker, DeleteReason, Effect, Hold, Plan, PodWait};

use super::grid::{GridView, PodState, RevClass, pod_revision};

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
    fn new(kind: LineKind, text: impl Into<String>) -> Self {
        ExplainLine { kind, text: text.into() }
    }
}

/// The pane's lines, most important first: error, next, waiting, hint, held, warning.
pub fn explain(plan: &Plan, grid: &GridView<'_>, current: &str, update: &str) -> Vec<ExplainLine> {
    let mut out = Vec::new();
    if let Some(err) = &plan.error {
        let retry = if err.retry { "retried with backoff" } else { "not retried" };
        out.push(ExplainLine::new(LineKind::Error, format!("{} ({retry})", err.message)));
    }
    let listed: Vec<&Effect> = plan.effects.iter().filter(|e| e.action().is_some()).collect();
    if let Some(first) = listed.first() {
        let more = match listed.len() - 1 {
            0 => String::new(),
            n => format!(" (+{n} more)"),
        };
        out.push(ExplainLine::new(
            LineKind::Next,
            format!("{}{more}", next_text(first, grid, update)),
        ));
    }
    if let Some(blocker) = &plan.waiting_on {
        let kind = if matches!(blocker, Blocker::Error { .. }) {
            LineKind::Error
        } else {
            LineKind::Waiting
        };
        out.push(ExplainLine::new(kind, blocker_text(blocker)));
        if let Some(hint) = forced_rollback_hint(blocker, grid, update) {
            out.push(hint);
        }
    }
    if let Some(hold) = &plan.held_by {
        out.push(ExplainLine::new(LineKind::Held, hold_text(hold, grid)));
    }
    if let Some(w) = raised_partition_warning(grid, current, update) {
        out.push(w);
    }
    if listed.is_empty() && plan.waiting_on.is_none() && plan.held_by.is_none() {
        let text = if !update.is_empty() && current == update {
            format!("rollout complete: every pod on {update}")
        } else {
            "nothing to do".to_string()
        };
        out.push(ExplainLine::new(LineKind::Done, text));
    }
    out
}

fn key(action: Action) -> String {
    key_for(Context::Normal, action).unwrap_or_else(|| "?".into())
}

/// "delete web-3 for update (web-7d9 → web-5c4)" and friends.
pub fn next_text(effect: &Effect, grid: &GridView<'_>, update: &str) -> String {
    let name_of = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        meta.name.clone().unwrap_or_default()
    };
    match effect {
        Effect::CreatePod(pod) => {
            let rev = pod_revision(pod).unwrap_or(update);
            format!("create {} at {rev}", name_of(&pod.metadata))
        }
        Effect::DeletePod { name, reason } => match reason {
            DeleteReason::Update => {
                let from = pod_rev_by_name(grid, name).unwrap_or("?");
                format!("delete {name} for update ({from} → {update})")
            }
            DeleteReason::ScaleDown => format!("delete {name} for scale-down (condemned ordinal)"),
            DeleteReason::Failed => format!("delete {name}: it failed; recreated once gone"),
        },
        Effect::UpdatePod(pod) => {
            format!("update {} (repair identity, storage or labels)", name_of(&pod.metadata))
        }
        Effect::CreateRevision(r) => {
            format!("create revision {} (#{})", name_of(&r.metadata), r.revision.unwrap_or(0))
        }
        Effect::UpdateRevision(r) => format!(
            "renumber revision {} to #{} (back to an earlier template)",
            name_of(&r.metadata),
            r.revision.unwrap_or(0)
        ),
        Effect::DeleteRevision { name } => {
            format!("delete revision {name} (revisionHistoryLimit)")
        }
        Effect::CreateClaim(c) => format!("create claim {}", name_of(&c.metadata)),
        Effect::UpdateClaim(c) => {
            format!("update claim {} (retention policy)", name_of(&c.metadata))
        }
        Effect::AdoptRevision { name, .. } | Effect::AdoptPod { name, .. } => {
            format!("adopt {name}")
        }
        Effect::ReleasePod { name, .. } => format!("release {name}"),
        Effect::WriteStatus(_) => "write status".to_string(),
    }
}

fn pod_rev_by_name<'a>(grid: &GridView<'a>, name: &str) -> Option<&'a str> {
    let (_, ordinal) = crate::core::labels::parent_and_ordinal(name)?;
    grid.cell(ordinal)?.pod.and_then(pod_revision)
}

/// A pod's wait, in words: "not Ready", "Pending", ...
pub fn wait_text(wait: PodWait) -> String {
    match wait {
        PodWait::NotCreated => "not created yet".into(),
        PodWait::Pending => "Pending".into(),
        PodWait::NotReady => "not Ready".into(),
        PodWait::NotAvailable { min_ready_seconds } => {
            format!("Ready but not yet available (minReadySeconds={min_ready_seconds})")
        }
        PodWait::Terminating => "terminating".into(),
        PodWait::Terminal => "failed; recreated once gone".into(),
    }
}

/// "web-2 not Ready — OrderedReady holds the rollout" and friends.
pub fn blocker_text(blocker: &Blocker) -> String {
    match blocker {
        Blocker::SetDeleting => {
            "the StatefulSet is being deleted — nothing is created, updated or deleted".into()
        }
        Blocker::Ordered { pod, wait, .. } => {
            format!("{pod} {} — OrderedReady holds the rollout", wait_text(*wait))
        }
        Blocker::TerminalPod { pod, .. } => {
            format!("{pod} failed — it is recreated once it is gone")
        }
        Blocker::StaleClaim { pod, claim } => format!(
            "claim {claim} still belongs to a previous {pod} — creation waits for garbage collection"
        ),
        Blocker::ClaimTerminating { pod, claim } => {
            format!("claim {claim} is being deleted — {pod} is created once it is gone")
        }
        Blocker::CondemnedTerminating { pod } => {
            format!("{pod} terminating — OrderedReady scale-down removes one pod at a time")
        }
        Blocker::CondemnedUnhealthy { pod, first_unavailable } => match first_unavailable {
            Some(first) => format!("{pod} unhealthy — scale-down waits for {first} first"),
            None => format!("{pod} unhealthy — OrderedReady scale-down waits"),
        },
        Blocker::ScaleDownStep { pod } => {
            format!("deleted {pod} — the next scale-down waits for it to go")
        }
        Blocker::UpdateStep { pod } => {
            format!("deleted {pod} for update — one pod per sync")
        }
        Blocker::UpdateWaiting { pod, wait } => {
            format!("{pod} {} — the rolling update waits for it", wait_text(*wait))
        }
        Blocker::MaxUnavailable { unavailable, max } => {
            format!("{unavailable} unavailable, maxUnavailable={max} — the budget is used up")
        }
        Blocker::Error { message } => message.clone(),
    }
}

/// "partition=3 keeps web-0..web-2 on the current revision" and the OnDelete equivalent.
pub fn hold_text(hold: &Hold, grid: &GridView<'_>) -> String {
    let name = grid.set_name;
    match hold {
        Hold::Partition { partition, first_held, last_held, outdated } => format!(
            "partition={partition} keeps {name}-{first_held}..{name}-{last_held} back \
             ({outdated} outdated) — {} lowers it",
            key(Action::PartitionDown)
        ),
        Hold::OnDelete { outdated } => format!(
            "OnDelete: {outdated} outdated pod(s) change only when deleted — {} deletes the \
             selected pod",
            key(Action::DeletePod)
        ),
    }
}

/// kubernetes#67250: a pod on a superseded revision that never becomes Ready blocks an
/// OrderedReady rollout forever (the controller waits for it instead of replacing it); the
/// operator must delete it.
pub fn forced_rollback_hint(
    blocker: &Blocker,
    grid: &GridView<'_>,
    update: &str,
) -> Option<ExplainLine> {
    let ordinal = match blocker {
        Blocker::Ordered { ordinal, wait: PodWait::Pending | PodWait::NotReady, .. } => *ordinal,
        Blocker::UpdateWaiting { pod, wait: PodWait::Pending | PodWait::NotReady } => {
            crate::core::labels::parent_and_ordinal(pod)?.1
        }
        _ => return None,
    };
    let cell = grid.cell(ordinal)?;
    let stuck = matches!(cell.state, PodState::Pending | PodState::Running);
    if !stuck || !matches!(cell.rev, RevClass::Other | RevClass::Current) {
        return None;
    }
    let from = cell.revision().unwrap_or("?");
    Some(ExplainLine::new(
        LineKind::Hint,
        format!(
            "{}-{ordinal} is stuck on superseded revision {from}; the controller will not replace \
             it (kubernetes#67250) — delete it ({}) to force the rollback to {update}",
            grid.set_name,
            key(Action::DeletePod)
        ),
    ))
}

/// Pods held back by the partition that already run the update revision: raising the partition
/// never reverts them.
pub fn raised_partition_warning(
    grid: &GridView<'_>,
    current: &str,
    update: &str,
) -> Option<ExplainLine> {
    if current == update {
        return None;
    }
    let line = grid.rules.iter().find(|r| r.kind == super::grid::RuleKind::Partition)?;
    let updated: Vec<i32> = grid
        .cells
        .iter()
        .filter(|c| c.ordinal < line.before && !c.condemned && c.rev == RevClass::Update)
        .map(|c| c.ordinal)
        .collect();
    let first = *updated.first()?;
    let who = match updated.len() {
        1 => format!("{}-{first}", grid.set_name),
        n => format!("{n} pods from {}-{first}", grid.set_name),
    };
    Some(ExplainLine::new(
        LineKind::Warning,
        format!(
            "{who} below the partition already run {update}: raising the partition never \
             reverts updated pods"
        ),
    ))
}
