//! The controller pane's sentences: the next action and the blocker in words, from the advisor's
//! [`Plan`] through `core::explain`, plus the operator hints (the forced-rollback hint of
//! kubernetes#67250 with the key that acts on it, the raised-partition warning).
//!
//! Owns the pane's line kinds and the keys named in hints (from the keymap table, so they cannot
//! drift). Pure: reads the observed objects, the plan and the grid view model, never the state
//! or the terminal.

use crate::app::action::Action;
use crate::app::keymap::{Context, key_for};
use crate::core::explain::{self as core_explain, Step, StepKind, StuckReason};
use crate::core::{Hold, Now, Observed, Plan};

use super::grid::{GridView, RevClass};
pub use crate::app::state::{ExplainLine, LineKind};

/// How long (backend seconds since creation) a pod on the update revision must have failed to
/// become Ready before the pane suggests the update itself is broken.
pub const BROKEN_UPDATE_AFTER_SECS: i64 = 60;

/// The keys the console's sentences may name: only those that would be carried out now (a
/// frozen set's partition, a write the user may not make, are not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// `[` lowers the partition (not frozen, may patch the set).
    pub lower_partition: bool,
    /// `p` sets a partition.
    pub set_partition: bool,
    /// ctrl-d deletes a pod.
    pub delete_pod: bool,
    /// A rollout plan drives the partition: the hold says so instead of naming a key.
    pub planned: bool,
}

impl Offer {
    /// No key named (`ststui explain`), the plan said where one drives the set.
    pub fn words_only(planned: bool) -> Offer {
        Offer { lower_partition: false, set_partition: false, delete_pod: false, planned }
    }
}

/// The pane's lines, most important first: error, next, waiting, hint, held, warning. Words
/// come from `core::explain` (the plan in words, the kubernetes#67250 detection); `offer` says
/// which keys that act on them, from the keymap, would be carried out now and are named
/// ([`Offer::words_only`]: none, the sentences end where the key would be). `members` are the
/// set's pods in ordinal order, as the grid claimed them.
pub fn explain(
    observed: &Observed<'_>,
    members: &[(i32, &k8s_openapi::api::core::v1::Pod)],
    plan: &Plan,
    steps: &[Step],
    grid: &GridView,
    now: Now,
    offer: Offer,
) -> Vec<ExplainLine> {
    let (current, update) = (plan.current_revision.as_str(), plan.update_revision.as_str());
    let mut out = Vec::new();
    if let Some(err) = &plan.error {
        let retry = if err.retry { "retried with backoff" } else { "not retried" };
        out.push(ExplainLine::new(LineKind::Error, format!("{} ({retry})", err.message)));
    }
    let actions: Vec<&Step> = steps
        .iter()
        .filter(|s| !matches!(s.kind, StepKind::Wait | StepKind::Hold | StepKind::Error))
        .filter(|s| s.kind != StepKind::Status)
        .collect();
    if let Some(first) = actions.first() {
        let more = match actions.len() - 1 {
            0 => String::new(),
            n => format!(" (+{n} more)"),
        };
        out.push(ExplainLine::new(LineKind::Next, format!("{}{more}", first.text)));
    }
    for s in steps.iter().filter(|s| matches!(s.kind, StepKind::Wait | StepKind::Error)) {
        let kind = if s.kind == StepKind::Error { LineKind::Error } else { LineKind::Waiting };
        let text = s.text.strip_prefix("waiting: ").unwrap_or(&s.text);
        out.push(ExplainLine::new(kind, with_reason(text, s.pod.as_deref(), observed)));
    }
    // The old-revision deadlock is certain: its hint comes before the hold. A broken update is
    // only a suspicion: it is offered after the hold, once the pod has waited a while.
    let stuck = core_explain::forced_rollback(observed, plan, now);
    let hint = |s: &core_explain::ForcedRollback| {
        let how = format!("select it and press {}", key(Action::DeletePod));
        let text = format!("{s}{}", press(offer.delete_pod, how));
        ExplainLine::new(LineKind::Hint, text)
    };
    if let Some(s) = stuck.as_ref().filter(|s| matches!(s.reason, StuckReason::OldRevision { .. }))
    {
        out.push(hint(s));
    }
    let stuck_pod = stuck.as_ref().map(|s| s.pod.as_str());
    let broken: Vec<_> = crate::core::stuck::replaceable(observed.set, members, update)
        .into_iter()
        .filter(|r| Some(r.pod.as_str()) != stuck_pod)
        .collect();
    if !broken.is_empty() && current != update {
        out.push(replace_hint(&broken, &offer));
    }
    if let Some(hold) = &plan.held_by {
        out.push(held_line(observed, plan, steps, hold, &offer));
    }
    let suspect = |s: &&core_explain::ForcedRollback| {
        s.reason == StuckReason::BrokenUpdate
            && s.stuck_for_secs.is_some_and(|t| t >= BROKEN_UPDATE_AFTER_SECS)
    };
    if let Some(s) = stuck.as_ref().filter(suspect) {
        out.push(hint(s));
    }
    if let Some(w) = raised_partition_warning(grid, current, update) {
        out.push(w);
    }
    if current != update && crate::core::spec::strategy(observed.set).rolling_block_unset() {
        out.push(unset_warning(&offer));
    }
    if out.is_empty() {
        let text = if !update.is_empty() && current == update {
            format!("rollout complete: every pod on {update}")
        } else {
            "nothing to do".to_string()
        };
        out.push(ExplainLine::new(LineKind::Done, text));
    }
    // Written by whoever may patch the set: escaped, and only while it is recent (after the rest).
    if let Some(forced) = crate::steer::forced::of(observed.set).filter(|f| f.recent(now)) {
        let text = crate::text::escape_controls(&forced.words(now)).into_owned();
        out.push(ExplainLine::new(LineKind::Warning, text));
    }
    out
}

/// Pods stuck broken on an older revision, which a delete replaces at no cost in availability
/// (`core::stuck`): offered, never done unasked.
fn replace_hint(broken: &[crate::core::stuck::Replaceable], offer: &Offer) -> ExplainLine {
    let (verb, s, them) = if broken.len() == 1 { ("is", "s", "it") } else { ("are", "", "them") };
    let how = format!("select one and press {}", key(Action::DeletePod));
    let text = format!(
        "{} {verb} stuck on an older revision and serve{s} nothing: replacing {them} brings the \
         update revision at no cost in availability{}",
        crate::core::stuck::names(broken),
        press(offer.delete_pod, how)
    );
    ExplainLine::new(LineKind::Hint, text)
}

/// ` — how` when the key would be carried out now; nothing otherwise.
fn press(ok: bool, how: String) -> String {
    if ok { format!(" — {how}") } else { String::new() }
}

/// What holds the update back (a partition, OnDelete) and the key that lets it go.
fn held_line(
    observed: &Observed<'_>,
    plan: &Plan,
    steps: &[Step],
    hold: &Hold,
    offer: &Offer,
) -> ExplainLine {
    // `next_actions` already worded the hold (it is the only source of Hold steps).
    let step = steps
        .iter()
        .find(|s| s.kind == StepKind::Hold)
        .cloned()
        .unwrap_or_else(|| core_explain::hold_step(observed, plan, hold));
    let how = match hold {
        Hold::Partition { .. } if offer.planned => " — the rollout plan holds it".to_string(),
        Hold::Partition { .. } => press(
            offer.lower_partition,
            format!("press {} to lower it", key(Action::PartitionDown)),
        ),
        Hold::OnDelete { outdated } if offer.planned => {
            // Not a manual delete: the plan evicts them (asking their budgets), one at a time.
            let pods = if *outdated == 1 { "1 pod" } else { &format!("{outdated} pods") };
            let text = format!(
                "OnDelete: {pods} on an older revision — the rollout plan evicts them one at a \
                 time"
            );
            return ExplainLine::new(LineKind::Held, text);
        }
        Hold::OnDelete { .. } => press(
            offer.delete_pod,
            format!("select a pod on an older revision and press {}", key(Action::DeletePod)),
        ),
    };
    ExplainLine::new(LineKind::Held, format!("{}{how}", step.text))
}

/// The strategy type set alone (no rollingUpdate block) during an update.
fn unset_warning(offer: &Offer) -> ExplainLine {
    ExplainLine::new(
        LineKind::Warning,
        format!(
            "rollingUpdate is unset (the strategy type was set alone): a missing pod comes back \
             at the current revision, and with Parallel from 1.37 it is deleted again at once, \
             over and over{}",
            press(
                offer.set_partition,
                format!("press {} to set a partition", key(Action::PartitionPrompt))
            )
        ),
    )
}

fn key(action: Action) -> String {
    key_for(Context::Normal, action).unwrap_or_else(|| "?".into())
}

/// Pods held back by the partition that already run the update revision: raising the partition
/// never reverts them.
pub fn raised_partition_warning(
    grid: &GridView,
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

/// `text` about `pod` with why the pod is not Ready (its containers' reason, as
/// [`super::why::reason`] words it) after the pod's state: "web-4 not Ready (CrashLoopBackOff:
/// exit 1, 5 restarts) — OrderedReady waits for it before the next".
fn with_reason(text: &str, pod: Option<&str>, observed: &Observed<'_>) -> String {
    let found = pod
        .and_then(|name| observed.pods.iter().find(|p| p.metadata.name.as_deref() == Some(name)));
    // A Pending pod whose claim is not Bound waits on its claim first (the scheduler's
    // "unbound immediate PersistentVolumeClaims" says the same, less plainly).
    let claim = found.filter(|p| crate::core::pod::phase(p) == "Pending").and_then(|p| {
        let ordinal = crate::core::labels::ordinal_of(p.metadata.name.as_deref()?);
        let ns = p.metadata.namespace.as_deref();
        let find = |name: &str| {
            observed.claims.iter().copied().find(|c| {
                c.metadata.name.as_deref() == Some(name) && c.metadata.namespace.as_deref() == ns
            })
        };
        super::claims::unbound(observed.set, ordinal, find).map(|c| format!("claim {c}"))
    });
    let Some(why) = claim.or_else(|| found.and_then(|p| super::why::reason(p))) else {
        return text.to_string();
    };
    match text.split_once(" — ") {
        Some((head, tail)) => format!("{head} ({why}) — {tail}"),
        None => format!("{text} ({why})"),
    }
}
