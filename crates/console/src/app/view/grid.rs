//! The ordinal grid's view model ([`GridView`]: one [`OrdinalCell`] per ordinal, in order) and
//! its geometry ([`GridLayout`]: detailed rows or the compact one-character map, the rule lines,
//! the scroll window, and hit-testing).
//!
//! Owns: classifying pods (revision class, state, condemned) and placing ordinals on screen
//! rows. The view owns its data (one `Vec` of `Copy` cells, revision names interned), so the
//! console computes it once per state change (`app::derived`), not once per frame: at 10,000
//! pods touching every pod costs milliseconds. Must not touch: the terminal, styles, or the
//! state it reads.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::core::labels::{REVISION_LABEL, parent_and_ordinal};

mod layout;
mod memo;
pub use layout::{
    DETAILED_MAX, DETAILED_MIN_ROWS, GROUP, GridLayout, GridMode, GridRow, compact_cols,
    compact_rows, detailed_fits, gutter_width,
};
pub use memo::GridMemo;

/// Which revision a pod runs, relative to the set's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RevClass {
    /// `status.updateRevision`: the rollout's target.
    Update,
    /// `status.currentRevision` (and not the update revision).
    Current,
    /// Any other revision: a superseded one (a third revision during a rollback).
    Other,
    /// The pod has no revision label (or the ordinal has no pod).
    Unknown,
}

impl RevClass {
    /// The word used in detailed rows and the pod detail.
    pub fn word(self) -> &'static str {
        match self {
            RevClass::Update => "update",
            RevClass::Current => "current",
            RevClass::Other => "old",
            RevClass::Unknown => "-",
        }
    }
}

/// A pod's lifecycle as the console shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PodState {
    /// An ordinal in `[start, start + replicas)` with no pod yet.
    Placeholder,
    /// An ordinal outside the replica range with no pod (a gap among condemned pods).
    Absent,
    /// Phase Pending (or no phase yet).
    Pending,
    /// Running, Ready condition not True.
    Running,
    /// Running and Ready.
    Ready,
    /// Has a deletionTimestamp.
    Terminating,
    /// Phase Failed or Succeeded.
    Failed,
    /// An ordinal of the range whose pod is not known yet: the pods are still being listed.
    Unlisted,
}

impl PodState {
    pub fn word(self) -> &'static str {
        match self {
            PodState::Placeholder => "not created",
            PodState::Absent => "gone",
            PodState::Pending => "Pending",
            PodState::Running => "Running",
            PodState::Ready => "Ready",
            PodState::Terminating => "Terminating",
            PodState::Failed => "Failed",
            PodState::Unlisted => "not listed yet",
        }
    }

    /// The state of an existing pod.
    pub fn of(pod: &Pod) -> PodState {
        if pod.metadata.deletion_timestamp.is_some() {
            return PodState::Terminating;
        }
        let status = pod.status.as_ref();
        match status.and_then(|s| s.phase.as_deref()) {
            Some("Failed") | Some("Succeeded") => PodState::Failed,
            Some("Running") if crate::core::pod::is_ready(pod) => PodState::Ready,
            Some("Running") => PodState::Running,
            _ => PodState::Pending,
        }
    }
}

/// The revision name a pod was built from (its `controller-revision-hash` label).
pub fn pod_revision(pod: &Pod) -> Option<&str> {
    pod.metadata.labels.as_ref()?.get(REVISION_LABEL).map(String::as_str)
}

/// One ordinal. `Copy`, no strings: the revision is an index into [`GridView::revisions`], and
/// the pod itself is read from the mirror only for the few cells that show its particulars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrdinalCell {
    pub ordinal: i32,
    /// A pod exists at this ordinal (terminating ones included).
    pub exists: bool,
    pub state: PodState,
    pub rev: RevClass,
    /// The pod's revision (its `controller-revision-hash` label): an index into
    /// [`GridView::revisions`].
    pub revision: Option<u16>,
    /// Outside `[start, start + replicas)`: the controller deletes it.
    pub condemned: bool,
    /// Container restarts, summed.
    pub restarts: i32,
}

/// What a horizontal rule between ordinals marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Ordinals below `spec.ordinals.start` (condemned) end here.
    Start,
    /// The partition: ordinals before the line stay on the current revision.
    Partition,
    /// Ordinals from here on are beyond `replicas`: condemned.
    Condemned,
}

/// A rule drawn before ordinal `before`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub before: i32,
    pub kind: RuleKind,
    /// The value the rule shows: the partition, the start ordinal, or the replica count.
    pub value: i32,
    /// For the partition: what the held pods run.
    pub held: HeldOn,
}

/// What the pods held by the partition run (each keeps the revision it has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldOn {
    /// The current revision (or no pods yet).
    Current,
    /// Revisions older than the current one (a rollback under way, a third revision).
    Older,
    /// Some current, some older.
    Mixed,
    /// Some already on the update revision (the partition was raised over them).
    SomeUpdated,
}

impl HeldOn {
    /// What the rule line says: "held on current".
    pub fn words(self) -> &'static str {
        match self {
            HeldOn::Current => "held on current",
            HeldOn::Older => "held on an older revision",
            HeldOn::Mixed => "held on current and older",
            HeldOn::SomeUpdated => "held (some already updated)",
        }
    }

    /// Of the existing pods below the partition.
    fn of(cells: &[OrdinalCell], below: i32) -> HeldOn {
        let held = cells.iter().filter(|c| c.exists && !c.condemned && c.ordinal < below);
        let (mut current, mut older, mut updated) = (false, false, false);
        for c in held {
            match c.rev {
                RevClass::Current => current = true,
                RevClass::Other | RevClass::Unknown => older = true,
                RevClass::Update => updated = true,
            }
        }
        match (current, older, updated) {
            (_, _, true) => HeldOn::SomeUpdated,
            (true, true, false) => HeldOn::Mixed,
            (false, true, false) => HeldOn::Older,
            _ => HeldOn::Current,
        }
    }
}

/// Placeholders shown past the last existing pod: a set asking for more replicas than exist
/// (a real cluster allows 2147483647) is drawn up to here and the rest counted, so the grid
/// allocates in proportion to the pods that exist, never to `spec.replicas`.
pub const PLACEHOLDER_TAIL: i32 = 10_000;

/// One past the last ordinal the grid shows: the replica range's end, or, for a range that
/// reaches [`PLACEHOLDER_TAIL`] beyond the last existing pod (or the start), that far.
pub fn shown_end(start: i32, range_end: i32, pods_end: Option<i32>) -> i32 {
    let base = pods_end.unwrap_or(start).max(start);
    let placeholders_end = range_end.min(base.saturating_add(PLACEHOLDER_TAIL));
    placeholders_end.max(pods_end.unwrap_or(placeholders_end))
}

/// The grid's view model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridView {
    pub set_name: String,
    /// Ordinal of `cells[0]`.
    pub first: i32,
    pub cells: Vec<OrdinalCell>,
    /// At most three, ordered by `before` (Start, Partition, Condemned).
    pub rules: Vec<Rule>,
    /// The revision names the pods carry (a set has a few), indexed by
    /// [`OrdinalCell::revision`].
    pub revisions: Vec<String>,
    /// Ordinals of the replica range not drawn (beyond [`PLACEHOLDER_TAIL`] placeholders past
    /// the last pod): none exists yet.
    pub hidden: i64,
    /// Why there are no cells although the set wants pods: its pods are still being listed, or
    /// may not be read. Never drawn as "not created".
    pub note: Option<String>,
    /// Ordinals whose pod exists and whose claim is not Bound: `data-web-3 Pending`
    /// (`view::claims::marks`, set by `app::derived`).
    pub claims: std::collections::BTreeMap<i32, String>,
    /// The pod a plan's gate runs for, and how it stands (`app::derived`, from the set's plan
    /// record).
    pub gate: Option<GateMark>,
}

/// A plan's gate on a pod, as its cell and its detail show it (read from the record once per
/// state change, not per frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateMark {
    pub ordinal: i32,
    /// The cell's mark while under way or failed: `pre-delete running`, `post-ready not yet
    /// ×3`, `pre-delete failed`.
    pub words: Option<String>,
    pub failed: bool,
    /// The detail's words (`pre-delete gate on web-2: not yet (3 tries)`) and its last output
    /// lines, escaped (a gate's output is about the cluster).
    pub detail: String,
    pub output: Vec<String>,
}

impl GateMark {
    /// The gate `set`'s plan record (`reading`) names, when it is on one of its pods.
    pub fn of(set: &StatefulSet, reading: &crate::plan::record::Reading) -> Option<GateMark> {
        use crate::plan::gate::GateStatus;
        let r = reading.plan()?;
        let g = r.gate.as_ref()?;
        let name = set.metadata.name.as_deref()?;
        let ordinal: i32 = g.pod.as_deref()?.strip_prefix(name)?.strip_prefix('-')?.parse().ok()?;
        let kind = crate::plan::gate::GateKind::from_word(&g.gate)?.word();
        let words = match (g.status, r.phase) {
            (GateStatus::Failed, _) => Some(format!("{kind} failed")),
            (GateStatus::Running, crate::plan::record::Phase::Waiting) => {
                Some(format!("{kind} running"))
            }
            (GateStatus::NotYet, crate::plan::record::Phase::Waiting) => {
                Some(format!("{kind} not yet ×{}", g.tries))
            }
            _ => None,
        };
        let output =
            g.output.iter().map(|l| crate::text::escape_controls(l).into_owned()).collect();
        Some(GateMark {
            ordinal,
            words,
            failed: g.status == GateStatus::Failed,
            detail: g.words(),
            output,
        })
    }
}

impl GridView {
    /// Builds the cells of `set` from the pods of its namespace (non-members are skipped).
    /// `update` / `current` are the revision names pods are compared with.
    pub fn build<'a>(
        set: &'a StatefulSet,
        pods: impl IntoIterator<Item = &'a Pod>,
        current: &str,
        update: &str,
    ) -> GridView {
        let set_name = set.metadata.name.as_deref().unwrap_or_default();
        let mut revisions: Vec<String> = Vec::new();
        let spec = &set.spec;
        let replicas = spec.replicas.unwrap_or(1).max(0);
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let end = start.saturating_add(replicas);
        // The controller's own rules decide which pods are the set's (ownership, selector,
        // `<set>-<digits>`); a selector the API would refuse falls back to the name alone.
        let env = crate::core::claim::ClaimEnv::new(set).ok();
        // One pass over the pods reads everything a cell needs: at 10,000 pods the cost is the
        // cache misses of touching each pod, so each pod is touched once.
        let members: Vec<OrdinalCell> = pods
            .into_iter()
            .filter_map(|p| {
                let (parent, ordinal) = parent_and_ordinal(p.metadata.name.as_deref()?)?;
                if parent != set_name || ordinal < 0 || env.as_ref().is_some_and(|e| !e.claims(p)) {
                    return None;
                }
                let name = pod_revision(p);
                let rev = classify(name, current, update);
                let revision = name.map(|n| intern(&mut revisions, n));
                let condemned = ordinal < start || ordinal >= end;
                let state = PodState::of(p);
                let restarts = restarts(p);
                let exists = true;
                Some(OrdinalCell { ordinal, exists, state, rev, revision, condemned, restarts })
            })
            .collect();
        Self::assemble(set, members, revisions)
    }

    /// The grid of `set` from its members' cells: placeholders between them, the rules.
    pub(super) fn assemble(
        set: &StatefulSet,
        members: Vec<OrdinalCell>,
        revisions: Vec<String>,
    ) -> GridView {
        let set_name = set.metadata.name.as_deref().unwrap_or_default();
        let spec = &set.spec;
        let replicas = spec.replicas.unwrap_or(1).max(0);
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let end = start.saturating_add(replicas);
        let lo = members.iter().map(|c| c.ordinal).min().map_or(start, |o| o.min(start));
        let pods_end = members.iter().map(|c| c.ordinal.saturating_add(1)).max();
        let hi = shown_end(start, end, pods_end);
        let hidden = i64::from(end) - i64::from(hi.max(start).min(end));
        let mut cells: Vec<OrdinalCell> = (lo..hi)
            .map(|ordinal| {
                let condemned = ordinal < start || ordinal >= end;
                let state = if condemned { PodState::Absent } else { PodState::Placeholder };
                let rev = RevClass::Unknown;
                let (exists, revision, restarts) = (false, None, 0);
                OrdinalCell { ordinal, exists, state, rev, revision, condemned, restarts }
            })
            .collect();
        for m in members {
            if let Some(cell) = usize::try_from(m.ordinal - lo).ok().and_then(|i| cells.get_mut(i))
            {
                *cell = m;
            }
        }
        let mut rules = Vec::with_capacity(3);
        if lo < start {
            let held = HeldOn::Current;
            rules.push(Rule { before: start, kind: RuleKind::Start, value: start, held });
        }
        if let Some(p) = partition_of(set).filter(|p| *p > 0) {
            let before = start.saturating_add(p.min(replicas));
            if before <= hi {
                let held = HeldOn::of(&cells, before);
                rules.push(Rule { before, kind: RuleKind::Partition, value: p, held });
            }
        }
        if hi > end {
            let held = HeldOn::Current;
            rules.push(Rule { before: end, kind: RuleKind::Condemned, value: replicas, held });
        }
        let set_name = set_name.to_string();
        let hidden = hidden.max(0);
        GridView { set_name, first: lo, cells, rules, revisions, hidden, ..GridView::default() }
    }

    /// This grid of the pods listed so far, the rest of the listing still to come: an ordinal
    /// without a pod is not known yet (never "not created"), and `note` says how far the
    /// listing is. The cells the grid draws in proportion to the pods known, as ever.
    pub fn listing(mut self, note: String) -> GridView {
        for c in self.cells.iter_mut().filter(|c| c.state == PodState::Placeholder) {
            c.state = PodState::Unlisted;
        }
        self.hidden = 0;
        self.note = Some(note);
        self
    }

    /// A grid without cells for `set`, saying why (its pods are being listed, or unknown).
    pub fn unknown(set: &StatefulSet, note: String) -> GridView {
        let set_name = set.metadata.name.clone().unwrap_or_default();
        GridView { set_name, note: Some(note), ..GridView::default() }
    }

    /// The cell of `ordinal`, if it is on the grid.
    pub fn cell(&self, ordinal: i32) -> Option<&OrdinalCell> {
        let i = usize::try_from(ordinal.checked_sub(self.first)?).ok()?;
        self.cells.get(i)
    }

    /// The revision name of a cell's pod, if it has one.
    pub fn revision_name(&self, cell: &OrdinalCell) -> Option<&str> {
        self.revisions.get(usize::from(cell.revision?)).map(String::as_str)
    }

    /// One past the last ordinal.
    pub fn end(&self) -> i32 {
        self.first.saturating_add(i32::try_from(self.cells.len()).unwrap_or(i32::MAX))
    }
}

/// The ordinals at or above `partition` (the open ones) whose pods are not on the update
/// revision and Ready, with what they are instead: `web-3 Terminating`, `web-4 not created`.
/// `[` asks before opening more, and `ststui step` refuses, while there are any.
pub fn not_ready_open(grid: &GridView, set: &StatefulSet, partition: i32) -> Vec<String> {
    let first = crate::core::spec::start_ordinal(set).saturating_add(partition);
    grid.cells
        .iter()
        .filter(|c| !c.condemned && c.ordinal >= first)
        .filter(|c| c.rev != RevClass::Update || c.state != PodState::Ready)
        .map(|c| {
            let what = match (c.rev, c.state) {
                (_, PodState::Placeholder) => "not created".to_string(),
                (RevClass::Update, s) => s.word().to_string(),
                (_, s) => format!("{}, not updated", s.word()),
            };
            format!("{}-{} {what}", grid.set_name, c.ordinal)
        })
        .collect()
}

/// The index of `name` in `names`, added when it is new (a set's pods carry a few revisions;
/// past `u16::MAX` distinct names the last index is reused, which no real set reaches).
fn intern(names: &mut Vec<String>, name: &str) -> u16 {
    if let Some(i) = names.iter().position(|n| n == name) {
        return u16::try_from(i).unwrap_or(u16::MAX);
    }
    if names.len() < usize::from(u16::MAX) {
        names.push(name.to_string());
    }
    u16::try_from(names.len() - 1).unwrap_or(u16::MAX)
}

/// Container restarts of a pod, summed.
pub fn restarts(pod: &Pod) -> i32 {
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    statuses.map_or(0, |cs| cs.iter().map(|c| c.restart_count).sum())
}

/// The partition of a RollingUpdate set, `None` for OnDelete and Recreate.
pub fn partition_of(set: &StatefulSet) -> Option<i32> {
    let strategy = set.spec.update_strategy.as_ref();
    match strategy.and_then(|s| s.type_.as_deref()) {
        Some("OnDelete" | "Recreate") => None,
        _ => Some(
            strategy.and_then(|s| s.rolling_update.as_ref()).and_then(|r| r.partition).unwrap_or(0),
        ),
    }
}

/// The revision class of a revision name.
pub fn classify(revision: Option<&str>, current: &str, update: &str) -> RevClass {
    match revision {
        None => RevClass::Unknown,
        Some(r) if !update.is_empty() && r == update => RevClass::Update,
        Some(r) if !current.is_empty() && r == current => RevClass::Current,
        Some(_) => RevClass::Other,
    }
}

#[cfg(test)]
mod tests;
