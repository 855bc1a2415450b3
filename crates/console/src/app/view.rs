//! Selectors: [`AppState`] → view models for `ui`. Pure, read-only, computed at most once per
//! frame ([`Screen::of`]); the grid is one `Vec` of `Copy` cells, everything else is bounded by
//! what fits on screen (one pod's detail, the visible timeline lines, the revision history).
//!
//! Owns: what the console shows, in words and numbers (header, grid cells, controller
//! sentences, revision rows, pod detail, timeline lines) and the screen geometry (`layout`)
//! that both the renderer and hit-testing read. Must not touch: the terminal, styles, the
//! backend, or the state (selectors never write).

pub mod claims;
pub mod events;
pub mod explain;
pub mod footer;
pub mod glyphs;
pub mod grid;
pub mod group;
pub mod header;
pub mod help;
pub mod layout;
pub mod timeline;
pub mod wrap;
pub use crate::core::why;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::app::facts::revisions_of;
use crate::app::health::Health;
use crate::app::state::AppState;
use crate::app::state::Derived;
use crate::backend::{Mode, ObjRef};
use crate::core::labels::REVISION_HASH_LABEL;

pub use crate::app::state::{ExplainLine, LineKind};
pub use grid::{
    GateMark, GridLayout, GridMode, GridRow, GridView, OrdinalCell, PodState, RevClass, Rule,
};

/// Everything a frame shows, selected once per frame. The expensive parts (the grid, the
/// controller's sentences) come from the state's per-change cache (`app::derived`).
#[derive(Debug, Clone)]
pub struct Screen<'a> {
    pub state: &'a AppState,
    /// `None` before a StatefulSet is known (the screen says why).
    pub header: Option<HeaderView<'a>>,
    pub grid: Cow<'a, GridView>,
    /// The selected ordinal.
    pub selected: Option<i32>,
    pub controller: Cow<'a, [ExplainLine]>,
    /// What the controller's next sync does with the selected ordinal, in words, if anything.
    pub selected_step: Option<String>,
    /// The set's ControllerRevisions, newest first.
    pub revisions: Vec<RevisionRow<'a>>,
    /// Why there is nothing to show, when there is nothing.
    pub empty: Option<&'static str>,
    /// The selected ordinal's detail, built once per frame (the layout sizes its pane by it).
    detail: Option<DetailView>,
    /// A rollout group shown as a whole: the grid pane shows its matrix.
    pub group: Option<Cow<'a, crate::app::state::GroupMatrix>>,
    /// The set's verdict (`plan::verdict`, through `app::health`): its word is the header's.
    pub verdict: Option<Cow<'a, crate::plan::verdict::Verdict>>,
}

impl<'a> Screen<'a> {
    /// Selects the frame's view models from the state.
    pub fn of(state: &'a AppState) -> Screen<'a> {
        let set = state.set();
        let Some((set, set_ref)) = set.zip(state.selected_set.as_ref()) else {
            let empty = if state.synced {
                "no StatefulSet yet: create one with a script or -f MANIFEST"
            } else {
                "loading: waiting for the backend's initial listing"
            };
            return Screen {
                state,
                header: None,
                grid: Cow::Owned(GridView::default()),
                selected: None,
                controller: Cow::Owned(Vec::new()),
                selected_step: None,
                revisions: Vec::new(),
                empty: Some(empty),
                detail: None,
                group: None,
                verdict: None,
            };
        };
        let cached = state.derived.as_ref().filter(|d| d.is_fresh(state));
        let computed = if cached.is_none() { Derived::of(state) } else { None };
        let (grid, controller, steps, verdict, changes) = match (cached, computed) {
            (Some(d), _) => (
                Cow::Borrowed(&d.grid),
                Cow::Borrowed(d.controller.as_slice()),
                Cow::Borrowed(d.steps.as_slice()),
                Some(Cow::Borrowed(&d.verdict)),
                Cow::Borrowed(d.revision_changes.as_slice()),
            ),
            (None, Some(d)) => (
                Cow::Owned(d.grid),
                Cow::Owned(d.controller),
                Cow::Owned(d.steps),
                Some(Cow::Owned(d.verdict)),
                Cow::Owned(d.revision_changes),
            ),
            (None, None) => (
                Cow::Owned(GridView::default()),
                Cow::Owned(Vec::new()),
                Cow::Owned(Vec::new()),
                None,
                Cow::Owned(Vec::new()),
            ),
        };
        let (current, update) = revisions_of(set, state.plan_for(set_ref));
        let history = state.mirror.revisions_of(set_ref);
        let mut revisions = revision_rows(&history, &grid, current, update);
        for r in &mut revisions {
            r.change = changes.iter().find(|(n, _)| n == r.name).map(|(_, c)| c.clone());
            r.broken = r.image.is_some_and(|i| state.broken_images.contains(i));
        }
        let pod = crate::core::labels::pod_name(&set_ref.name, state.selected_ordinal);
        let selected_step = crate::core::explain::step_for(&steps, &pod).map(|s| s.text.clone());
        let mut header = HeaderView::build(state, set, set_ref, &revisions, current, update);
        header.health = verdict.as_ref().map(|v| v.word());
        let mut screen = Screen {
            state,
            header: Some(header),
            grid,
            selected: Some(state.selected_ordinal),
            controller,
            selected_step,
            revisions,
            empty: None,
            detail: None,
            group: crate::app::state::GroupMatrix::of(state),
            verdict,
        };
        screen.detail = screen.build_detail();
        screen
    }

    /// The selected ordinal's cell, if it is on the grid.
    pub fn selected_cell(&self) -> Option<&OrdinalCell> {
        self.selected.and_then(|o| self.grid.cell(o))
    }

    /// The pod at `ordinal` of the set on screen, from the mirror.
    pub fn pod_at(&self, ordinal: i32) -> Option<&'a Pod> {
        self.state.mirror.pod_at(self.state.selected_set.as_ref()?, ordinal)
    }

    /// The selected ordinal's detail, if it is on the grid.
    pub fn detail(&self) -> Option<&DetailView> {
        self.detail.as_ref()
    }

    fn build_detail(&self) -> Option<DetailView> {
        let cell = *self.selected_cell()?;
        let pod = self.pod_at(cell.ordinal);
        let mut d = DetailView::build(cell, &self.grid, pod, &self.revisions, self.state);
        // Right after state and revision: on a short pane the pod's particulars are cut first.
        let mut at = d.rows.iter().position(|(l, _)| *l == "revision").unwrap_or(0) + 1;
        if let Some(set) = self.state.set() {
            let role = rollout_role(set, &cell);
            let role = self.waiting_role(&d.name, role);
            d.rows.insert(at.min(d.rows.len()), ("rollout", role));
            at += 1;
        }
        if let Some(step) = &self.selected_step {
            d.rows.insert(at.min(d.rows.len()), ("next", step.clone()));
        }
        Some(d)
    }
}

impl Screen<'_> {
    /// The rollout role in the light of what the controller waits on, so the pod detail and the
    /// controller pane tell one story: the pod it waits on says so (stuck for good when the
    /// health is Blocked), and an open pod behind it is replaced only after it.
    fn waiting_role(&self, pod: &str, role: String) -> String {
        let set = self.state.selected_set.as_ref();
        let plan = set.and_then(|s| self.state.plan_for(s));
        let Some(waited) = plan.and_then(crate::core::explain::waited_pod) else {
            return role;
        };
        let stuck = self.header.as_ref().and_then(|h| h.health) == Some(Health::Blocked);
        let open = role.starts_with("open");
        match (waited == pod, stuck) {
            (true, true) => "stuck: the controller waits on it and waiting will not help (see \
                             the controller's hint)"
                .into(),
            (true, false) => format!("{role}; the controller waits on it first"),
            (false, true) if open => {
                format!("open, but the rollout is stuck at {waited} (see the controller's hint)")
            }
            (false, false) if open => {
                format!("open: replaced once the controller stops waiting on {waited}")
            }
            _ => role,
        }
    }
}

/// Where the ordinal stands in the rollout, in words: held by the partition, open to the
/// rolling update, waiting for a manual delete (OnDelete), or condemned by scale-down.
fn rollout_role(set: &StatefulSet, cell: &OrdinalCell) -> String {
    use crate::core::spec;
    let st = spec::strategy(set);
    let held = st.holds(spec::start_ordinal(set), i64::from(cell.ordinal));
    match (cell.exists, cell.condemned) {
        (_, true) => "condemned: beyond the replicas, scale-down deletes it".into(),
        (false, _) if held => {
            format!(
                "not created; held by partition {}: comes at the current revision",
                st.partition
            )
        }
        (false, _) if crate::core::newpod::gets_current_revision(set, i64::from(cell.ordinal)) => {
            "not created; comes at the current revision (rollingUpdate unset)".into()
        }
        (false, _) => "not created; comes at the update revision".into(),
        (true, _) if st.on_delete => "OnDelete: updated only when it is deleted".into(),
        (true, _) if st.recreate && cell.rev == RevClass::Update => "on the update revision".into(),
        (true, _) if st.recreate => {
            "Recreate: deleted with every other old pod, created again once all are gone".into()
        }
        (true, _) if held => {
            format!("held by partition {}: stays on the revision it has", st.partition)
        }
        (true, _) if cell.rev == RevClass::Update => "on the update revision".into(),
        (true, _) => "open: the rolling update replaces it".into(),
    }
}

/// The hash part of a revision name `<set>-<hash>` (the whole name when it does not match).
pub fn short_hash<'a>(set_name: &str, revision: &'a str) -> &'a str {
    revision.strip_prefix(set_name).and_then(|r| r.strip_prefix('-')).unwrap_or(revision)
}

/// The set's update strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrategyView {
    /// `unset`: the strategy has no `rollingUpdate` at all (a type-only switch), which the
    /// controller treats differently from partition 0 when it creates pods.
    RollingUpdate {
        partition: i32,
        max_unavailable: Option<String>,
        unset: bool,
    },
    OnDelete,
    /// 1.37's Recreate: every old pod deleted at once, then the new ones created.
    Recreate,
}

/// A revision as the header names it: short hash and number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevLabel<'a> {
    pub name: &'a str,
    pub hash: &'a str,
    pub number: Option<i64>,
}

/// The header: Argo Rollouts' vocabulary for a StatefulSet.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderView<'a> {
    pub set: &'a ObjRef,
    pub strategy: StrategyView,
    pub policy: &'a str,
    pub desired: i32,
    pub current: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    pub current_rev: RevLabel<'a>,
    pub update_rev: RevLabel<'a>,
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    pub mode: Mode,
    /// ststui's controller drives a real API server (`--drive`).
    pub drives: bool,
    /// `--drive` as a standby: who holds the drive lease.
    pub standby: Option<&'a str>,
    /// Simulator speed, when the backend has one.
    pub speed: Option<f64>,
    /// The speed the simulator achieves while it cannot keep up.
    pub pace: Option<f64>,
    /// Backend time since start.
    pub elapsed_ms: u64,
    /// How many sets the backend reported (Tab cycles).
    pub set_count: usize,
    /// The set's freeze, when it is frozen (`steer::frozen`).
    pub frozen: Option<crate::steer::Frozen>,
    /// A rollout plan under way or halted on the set (`ststui rollout`, from any console or
    /// pipeline): its words, and whether it halted.
    pub plan: Option<(String, bool)>,
    /// A GitOps controller that manages the set (Argo CD, Flux): it may revert writes.
    pub manager: Option<crate::steer::gitops::Manager>,
    /// The connection to the cluster (always up in the simulator).
    pub connection: &'a crate::backend::Connection,
    /// Complete re-listings since the start (410 Gone, reconnects).
    pub relists: u64,
    /// How the set is doing (readiness beside the controller's completion).
    pub health: Option<Health>,
    /// Writes this console will not make (`--read-only`, a missing permission): the badge.
    pub read_only: ReadOnly,
}

/// The header's read-only badge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// Every write is allowed.
    No,
    /// Some writes are not (a missing permission).
    Partly,
    /// No write at all.
    Wholly,
}

impl<'a> HeaderView<'a> {
    fn build(
        state: &'a AppState,
        set: &'a StatefulSet,
        set_ref: &'a ObjRef,
        revisions: &[RevisionRow<'a>],
        current: &'a str,
        update: &'a str,
    ) -> HeaderView<'a> {
        let spec = &set.spec;
        let strategy = spec.update_strategy.as_ref();
        let strategy = match strategy.and_then(|s| s.type_.as_deref()) {
            Some("OnDelete") => StrategyView::OnDelete,
            Some("Recreate") => StrategyView::Recreate,
            _ => {
                let ru = strategy.and_then(|s| s.rolling_update.as_ref());
                StrategyView::RollingUpdate {
                    partition: ru.and_then(|r| r.partition).unwrap_or(0),
                    max_unavailable: ru.and_then(|r| r.max_unavailable.as_ref()).map(|v| match v {
                        IntOrString::String(s) => s.clone(),
                        IntOrString::Int(n) => n.to_string(),
                    }),
                    unset: crate::core::spec::strategy(set).rolling_block_unset(),
                }
            }
        };
        let status = set.status.as_ref();
        let label = |name: &'a str| RevLabel {
            name,
            hash: short_hash(&set_ref.name, name),
            number: revisions.iter().find(|r| r.name == name).map(|r| r.number),
        };
        HeaderView {
            set: set_ref,
            strategy,
            policy: spec.pod_management_policy.as_deref().unwrap_or("OrderedReady"),
            desired: spec.replicas.unwrap_or(1),
            current: status.map_or(0, |s| s.replicas),
            updated: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            available: status.and_then(|s| s.available_replicas).unwrap_or(0),
            current_rev: label(current),
            update_rev: label(update),
            generation: set.metadata.generation,
            observed_generation: status.and_then(|s| s.observed_generation),
            mode: state.mode,
            drives: state.caps.drives,
            standby: state.caps.standby.as_deref(),
            speed: state.caps.speed.then_some(state.speed),
            pace: state.pace,
            elapsed_ms: state.elapsed_ms(),
            set_count: state.mirror.sets().count(),
            frozen: crate::steer::frozen(set),
            plan: plan_words(set, state.now),
            manager: crate::steer::gitops::manager(&set.metadata),
            connection: &state.connection,
            relists: state.relists,
            health: None,
            read_only: match state.caps.denied.len() {
                0 => ReadOnly::No,
                n if n >= crate::backend::WriteKind::ALL.len() => ReadOnly::Wholly,
                _ => ReadOnly::Partly,
            },
        }
    }
}

/// One ControllerRevision of the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionRow<'a> {
    pub number: i64,
    pub name: &'a str,
    pub hash: &'a str,
    pub image: Option<&'a str>,
    pub current: bool,
    pub update: bool,
    /// Pods on the grid built from it.
    pub pods: usize,
    /// What changed from the revision before it (`image app: a → b`, `restartedAt 10:02:11`).
    pub change: Option<String>,
    /// Its image is broken (the simulator's `b`): its pods never become Ready.
    pub broken: bool,
}

fn revision_rows<'a>(
    history: &[&'a ControllerRevision],
    grid: &GridView,
    current: &str,
    update: &str,
) -> Vec<RevisionRow<'a>> {
    // One pass over the grid: pods per interned revision name.
    let mut counts = vec![0usize; grid.revisions.len()];
    for i in grid.cells.iter().filter(|c| c.exists).filter_map(|c| c.revision) {
        if let Some(n) = counts.get_mut(usize::from(i)) {
            *n += 1;
        }
    }
    let per_revision: Vec<(&str, usize)> =
        grid.revisions.iter().map(String::as_str).zip(counts).collect();
    history
        .iter()
        .rev()
        .map(|r| {
            let name = r.metadata.name.as_deref().unwrap_or_default();
            let hash = r
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(REVISION_HASH_LABEL))
                .map_or_else(|| short_hash(&grid.set_name, name), String::as_str);
            RevisionRow {
                number: r.revision.unwrap_or(0),
                name,
                hash,
                image: crate::app::facts::revision_image(r),
                current: name == current,
                update: name == update,
                pods: per_revision.iter().find(|(n, _)| *n == name).map_or(0, |e| e.1),
                change: None,
                broken: false,
            }
        })
        .collect()
}

/// The selected ordinal's detail: label/value pairs, computed for one pod only.
#[derive(Debug, Clone)]
pub struct DetailView {
    pub name: String,
    pub cell: OrdinalCell,
    pub rows: Vec<(&'static str, String)>,
}

impl DetailView {
    fn build(
        cell: OrdinalCell,
        grid: &GridView,
        pod: Option<&Pod>,
        revisions: &[RevisionRow<'_>],
        state: &AppState,
    ) -> DetailView {
        let set_name = grid.set_name.as_str();
        let name = crate::core::labels::pod_name(set_name, cell.ordinal);
        let mut rows: Vec<(&'static str, String)> = Vec::new();
        let condemned = if cell.condemned { " · condemned" } else { "" };
        rows.push(("state", format!("{}{condemned}", cell.state.word())));
        // Why it is not Ready comes first: on a short pane it is what the operator needs.
        if let Some(why) = pod.and_then(why::reason) {
            rows.push(("why", why));
        }
        if let Some(rev) = grid.revision_name(&cell) {
            let number = revisions.iter().find(|r| r.name == rev).map(|r| r.number);
            let n = number.map(|n| format!(" #{n}")).unwrap_or_default();
            let hash = short_hash(set_name, rev);
            rows.push(("revision", format!("{hash}{n} {}", cell.rev.word())));
        }
        if let Some(pod) = pod {
            pod_rows(pod, state, &mut rows);
        }
        if let Some(set_ref) = state.selected_set.as_ref()
            && let Some(set) = state.mirror.set(set_ref)
        {
            let ns = set_ref.namespace.as_str();
            let find = |n: &str| state.mirror.claim(&ObjRef::new(ns, n));
            rows.extend(claims::rows(set, cell.ordinal, find));
        }
        if let Some(g) = grid.gate.as_ref().filter(|g| g.ordinal == cell.ordinal) {
            rows.push(("gate", g.detail.clone()));
            if !g.output.is_empty() {
                rows.push(("gate output", g.output.join(" ⏎ ")));
            }
        }
        // Its eviction requests and responders (servers with the EvictionRequest API), escaped:
        // their names and messages are the cluster's.
        if let (Some(pod), Some(set_ref)) = (pod, state.selected_set.as_ref()) {
            let (ns, uid) = (set_ref.namespace.as_str(), crate::core::pod::uid(pod));
            let ago = |t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time| {
                ago(state, t.0).map_or_else(String::new, |a| a.trim_start().to_string())
            };
            for e in state.mirror.evictions_of(ns, &name, uid) {
                let seen = e.rows(ago);
                rows.extend(
                    seen.into_iter()
                        .map(|(k, v)| (k, crate::text::escape_controls(&v).into_owned())),
                );
            }
        }
        DetailView { name, cell, rows }
    }
}

fn pod_rows(pod: &Pod, state: &AppState, rows: &mut Vec<(&'static str, String)>) {
    let status = pod.status.as_ref();
    if let Some(phase) = status.and_then(|s| s.phase.as_deref()) {
        rows.push(("phase", phase.to_string()));
    }
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    if let Some(c) = ready {
        let since = c.last_transition_time.as_ref().and_then(|t| ago(state, t.0));
        rows.push(("ready", format!("{}{}", c.status, since.unwrap_or_default())));
    }
    let image = state.mirror.pod_image(pod).map(str::to_string);
    if let Some(image) = image {
        let broken = state.broken_images.contains(&image);
        rows.push(("image", if broken { format!("{image} (broken: never Ready)") } else { image }));
    }
    let restarts: i32 = status
        .and_then(|s| s.container_statuses.as_ref())
        .map_or(0, |cs| cs.iter().map(|c| c.restart_count).sum());
    rows.push(("restarts", restarts.to_string()));
    // Each container when one of them has something to say (not ready, restarted).
    let lines = why::containers(pod);
    let telling = status
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| !c.ready || c.restart_count > 0));
    if telling {
        for (name, words) in lines {
            let label = if name.starts_with("  ") { "  last" } else { "container" };
            let text = if label == "container" { format!("{name} {words}") } else { words };
            rows.push((label, text));
        }
    }
    let key = ObjRef::of(&pod.metadata);
    rows.extend(events::pod_rows(state, &key));
    if let Some(t) = pod.metadata.deletion_timestamp.as_ref() {
        rows.push(("deleting", format!("since{}", ago(state, t.0).unwrap_or_default())));
    }
    if let Some(age) = pod.metadata.creation_timestamp.as_ref().and_then(|t| ago(state, t.0)) {
        rows.push(("created", age.trim_start().to_string()));
    }
    if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_ref()) {
        rows.push(("node", node.clone()));
    }
}

/// " 12s ago" relative to the backend clock.
fn ago(state: &AppState, t: k8s_openapi::jiff::Timestamp) -> Option<String> {
    let now = state.now?;
    let secs = now.as_second().saturating_sub(t.as_second()).max(0);
    Some(format!(" {} ago", timeline::duration_text(u64::try_from(secs).unwrap_or(0) * 1000)))
}

/// The set's plan in the header's words, unless it is done: where it is and who runs it (a
/// plan under way whose runner's lease ran out says so: nothing drives it).
fn plan_words(
    set: &StatefulSet,
    now: Option<k8s_openapi::jiff::Timestamp>,
) -> Option<(String, bool)> {
    use crate::plan::record::{Phase, Reading, Runner};
    match crate::plan::record::read(set) {
        Reading::None => None,
        Reading::Plan(r) if r.phase == Phase::Done => None,
        Reading::Plan(r) => {
            let now = now.or_else(|| r.since()).unwrap_or_default();
            let words = r.words(now);
            if r.phase.over() {
                return Some((words, r.phase == Phase::Halted));
            }
            let runner = Runner::of(set, now);
            let words = match &runner {
                Runner::Live(l) => format!("{words} · {} on {}", l.holder, l.host),
                other => format!("{words} · {}", other.words()),
            };
            Some((words, !runner.alive()))
        }
        Reading::Invalid(why) => Some((format!("plan record invalid: {why}"), true)),
    }
}
