//! [`AppState`]: everything the console knows, and the data types it is made of, by concern:
//! the overlays, status line and click map ([`screen`]), the timeline ([`timeline`]), a plan
//! the console runs ([`plan`]), the open log ([`log`]), the derived cache ([`derived`]).
//!
//! Data only: this folder imports no logic of the console (the reducer's files, the view's
//! selectors); the logic that fills these types lives beside the reducer, in impl blocks of its
//! own files (`app::derived`, `app::plan_run`, `app::logs`).
//!
//! Owns the state's shape and read-only helpers. Must not mutate itself from outside the
//! reducer: `update.rs` is the only writer (the event loop only clears [`AppState::dirty`]
//! after a draw, through `update` too). `ui` reads this state and never writes it.
//!
//! Field names are stable: fields are added, not renamed.

use std::collections::HashMap;
use std::time::Instant;

use k8s_openapi::api::apps::v1::{RollingUpdateStatefulSetStrategy, StatefulSet};
use k8s_openapi::jiff::Timestamp;
use ratatui::layout::Rect;

use super::mirror::Mirror;
use crate::backend::{Capabilities, Connection, Mode, ObjRef};
use crate::core::{Options, Plan};

mod derived;
mod group;
mod log;
mod plan;
mod prompt;
mod screen;
pub mod timeline;

pub use derived::{Derived, ExplainLine, Key, LineKind};
pub use group::{Column, GroupBy, GroupMatrix, GroupShown, MatrixKey, Motion};
pub use log::{LogView, MAX_LOG_LINES};
pub use plan::{Answer, Form, GroupForm, PlanRun};
pub use prompt::{Prompt, PromptKind, bump_image};
pub use screen::{
    Confirm, Hit, HitMap, HitRegion, Modal, RevisionChoice, RevisionPicker, Status, StatusKind,
    Then,
};
pub use timeline::{Origin, TIMELINE_CAPACITY, Timeline, TimelineEntry};

/// How far past the backend's last clock report the shown time may run, in backend ms.
pub const EXTRAPOLATE_MS: i64 = 1_000;

/// Unanswered writes remembered (the oldest is forgotten beyond: its answer is then told by
/// the timeline alone).
pub const WRITES_PENDING: usize = 32;

/// How long a status-line message stays, in one-second ticks.
pub const STATUS_TICKS: u8 = 6;

/// The whole console state.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The objects the backend reported.
    pub mirror: Mirror,
    /// The backend's initial listing is complete: the mirror can be trusted (before this, the
    /// screen says "loading" and the advisor does not run).
    pub synced: bool,
    /// The StatefulSet on screen. Chosen automatically (the first one) once a set exists.
    pub selected_set: Option<ObjRef>,
    /// The selected ordinal within the set's [`AppState::ordinal_span`], clamped on change.
    pub selected_ordinal: i32,
    /// The pod whose Events the backend was last asked for (`navigate::follow_events`).
    pub events_pod: Option<ObjRef>,
    /// Live, paused (simulator) or frozen (real cluster).
    pub mode: Mode,
    /// Virtual seconds per wall second (simulator); 1.0 on a real cluster.
    pub speed: f64,
    /// The backend's clock (virtual time in the simulator); `None` until the first report.
    pub now: Option<Timestamp>,
    /// The backend's time zero: operator timeline entries and [`AppState::elapsed_ms`] count
    /// from it. Taken as the first clock reading minus the latest backend timeline time seen,
    /// and moved back whenever a backend entry is later than it implies, so operator and
    /// backend entries share one time axis.
    pub clock_origin: Option<Timestamp>,
    /// The latest `t_ms` of a backend timeline entry.
    pub backend_t_ms: u64,
    /// The wall instant of the current batch (from `Msg::Wall`; `None` in tests that send
    /// none). Only used to extrapolate the backend clock between its reports.
    pub wall: Option<Instant>,
    /// The wall instant at which `now` was last reported.
    pub clock_wall: Option<Instant>,
    /// What the backend offers (pause, faults, speed) and which writes it refuses.
    pub caps: Capabilities,
    /// Controller semantics the advisor reproduces.
    pub options: Options,
    /// Controller actions, kubelet events, operator commands and errors, oldest first.
    pub timeline: Timeline,
    /// The open overlay, if any: help, a prompt, a confirmation, the revision picker.
    pub modal: Modal,
    /// The status line (info or refusal), if any.
    pub status: Option<Status>,
    /// Each set's RollingUpdate settings (partition, maxUnavailable) from before the operator
    /// switched it to OnDelete here, restored when it is switched back.
    pub rolling_before_on_delete: HashMap<ObjRef, RollingUpdateStatefulSetStrategy>,
    /// The advisor: `core::reconcile` on the mirror for the selected set at `now`. In the
    /// simulator it is exactly what the next sync will do; on a real cluster what
    /// kube-controller-manager should do next. Recomputed once per drained batch, only when the
    /// mirror, the selection or the clock moved.
    pub advisor: Option<Advisor>,
    /// The selected set's grid, controller sentences and health, computed once per state
    /// change (`app::derived`), never per frame.
    pub derived: Option<Derived>,
    /// What the grid read of each pod version (`view::grid::GridMemo`), so a rebuild reads
    /// only the pods that changed.
    pub grid_memo: super::view::grid::GridMemo,
    /// Images the simulator was told are broken (`b`, a script's `break-image`): their pods
    /// never become Ready. Shown on the revisions and the pod detail.
    pub broken_images: std::collections::BTreeSet<String>,
    /// Cluster writes sent and not answered yet: the write's id and what the status line says
    /// once it is done. Bounded ([`WRITES_PENDING`]).
    pub writes_pending: std::collections::VecDeque<(crate::backend::WriteId, String)>,
    /// An op sent once the write named is done, dropped when it fails (a force-delete after
    /// its reason is recorded on the set: [`Then::After`]).
    pub after_write: Option<(crate::backend::WriteId, crate::backend::Op)>,
    /// A rollout plan this console runs (`P`), if any.
    pub plan_run: Option<PlanRun>,
    /// The StatefulSet list's filter: rows whose `namespace/name` holds it (any case).
    pub set_filter: String,
    /// The set highlighted in the list, so the highlight stays on it when the list re-sorts.
    pub picked: Option<ObjRef>,
    /// Each set's way to its replicas as its status says it (`sets::note_progress`): a set
    /// short of Ready pods that made progress lately is starting them, not Degraded.
    pub set_progress: std::collections::HashMap<ObjRef, Progress>,
    /// Clickable regions from the last draw (filled by the ui, passed in by the loop).
    pub hits: HitMap,
    /// The terminal's size, from the last resize (the help overlay's pages depend on it).
    pub screen: Rect,
    /// Something visible changed since the last draw.
    pub dirty: bool,
    /// The operator asked to quit.
    pub quit: bool,
    /// The connection to a real cluster (always up in the simulator). While it is not, the
    /// data shown is the last known (marked stale) and writes are refused.
    pub connection: Connection,
    /// The API server's version as the backend reported it.
    pub server_version: Option<String>,
    /// The simulator's achieved speed while it cannot keep up with [`AppState::speed`].
    pub pace: Option<f64>,
    /// The StatefulSet list is shown, with this row highlighted (a cluster opened without a
    /// NAME, or Esc from a set).
    pub picking: Option<usize>,
    /// The set list exists here (a real cluster): Esc goes back to it, a deleted set offers it.
    pub can_pick: bool,
    /// The (kind, scope) listings seen: one seen again is a re-list.
    pub listed: Vec<(crate::backend::ObjKind, crate::backend::Scope)>,
    /// Disagreements between the advisor and the cluster not yet told (see `differs`).
    pub suspects: Vec<Suspect>,
    /// Complete re-listings after the initial one (a 410 Gone or a reconnect), for the badge.
    pub relists: u64,
    /// Kinds the user may not list, with why (the permission): unknown, never shown as empty.
    pub unreadable: std::collections::BTreeMap<crate::backend::ObjKind, String>,
    /// First listings under way: objects received so far, by kind.
    pub listing: std::collections::BTreeMap<crate::backend::ObjKind, usize>,
    /// The selected set has been seen since it was selected: when it goes it was deleted;
    /// otherwise it never existed (a typo, the wrong namespace).
    pub selected_seen: bool,
    /// After an outage, backend timeline lines until this backend time (ms) are the catch-up:
    /// changes that happened during the outage, seen late.
    pub catch_up_until_ms: Option<u64>,
    /// A rollout group shown as a whole (`Z`): the grid pane shows its matrix, the selected set
    /// is the column under the cursor.
    pub group: Option<GroupShown>,
    /// The group's matrix, computed once per state change (`app::group::refresh`).
    pub group_view: Option<GroupMatrix>,
    /// What each member's column read of each pod version (as [`AppState::grid_memo`]).
    pub group_memos: HashMap<ObjRef, super::view::grid::GridMemo>,
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new(Capabilities::default(), Options::default())
    }
}

impl AppState {
    pub fn new(caps: Capabilities, options: Options) -> AppState {
        AppState {
            mirror: Mirror::default(),
            synced: false,
            selected_set: None,
            selected_ordinal: 0,
            events_pod: None,
            mode: Mode::Live,
            speed: 1.0,
            now: None,
            clock_origin: None,
            backend_t_ms: 0,
            wall: None,
            clock_wall: None,
            caps,
            options,
            timeline: Timeline::default(),
            modal: Modal::None,
            status: None,
            rolling_before_on_delete: HashMap::new(),
            advisor: None,
            derived: None,
            grid_memo: Default::default(),
            broken_images: std::collections::BTreeSet::new(),
            writes_pending: std::collections::VecDeque::new(),
            after_write: None,
            plan_run: None,
            set_filter: String::new(),
            set_progress: std::collections::HashMap::new(),
            picked: None,
            hits: HitMap::default(),
            screen: Rect::default(),
            dirty: true,
            quit: false,
            connection: Connection::Up,
            server_version: None,
            pace: None,
            picking: None,
            can_pick: false,
            suspects: Vec::new(),
            listed: Vec::new(),
            relists: 0,
            unreadable: Default::default(),
            listing: Default::default(),
            selected_seen: false,
            catch_up_until_ms: None,
            group: None,
            group_view: None,
            group_memos: HashMap::new(),
        }
    }

    /// The advisor's plan, when it was computed for `set`.
    pub fn plan_for(&self, set: &ObjRef) -> Option<&Plan> {
        self.advisor.as_ref().filter(|a| &a.set == set).map(|a| &a.plan)
    }

    /// The selected StatefulSet object.
    pub fn set(&self) -> Option<&StatefulSet> {
        self.mirror.set(self.selected_set.as_ref()?)
    }

    /// The ordinals the grid shows for the selected set (see [`Mirror::ordinal_span`]).
    pub fn ordinal_span(&self) -> Option<(i32, i32)> {
        self.mirror.ordinal_span(self.selected_set.as_ref()?)
    }

    /// Whether the help overlay is open.
    pub fn help_open(&self) -> bool {
        matches!(self.modal, Modal::Help { .. })
    }

    /// Milliseconds of backend time since the backend's start (0 before any clock reading).
    /// Between two clock reports the backend clock is extrapolated from the wall time passed
    /// (× the speed achieved), by at most [`EXTRAPOLATE_MS`]: the simulator reports its clock
    /// about once a virtual second, so the shown time never runs ahead of it by more.
    pub fn elapsed_ms(&self) -> u64 {
        let (Some(origin), Some(now)) = (self.clock_origin, self.now) else {
            return 0;
        };
        let ms = now.as_millisecond().saturating_sub(origin.as_millisecond());
        let speed = self.pace.unwrap_or(self.speed);
        let since_report = match (self.wall, self.clock_wall) {
            (Some(w), Some(c)) => w.saturating_duration_since(c).as_secs_f64() * speed,
            _ => 0.0,
        };
        let extra = ((since_report * 1000.0) as i64).min(EXTRAPOLATE_MS);
        u64::try_from(ms.saturating_add(extra)).unwrap_or(0)
    }

    /// Whether the event loop should deliver one-second ticks (a status message is counting
    /// down). Otherwise the loop sleeps until input or a backend event.
    pub fn wants_tick(&self) -> bool {
        self.status.is_some()
    }
}

/// A pod creation or deletion the advisor did not expect, waiting for a spec change that
/// would explain it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub set: String,
    /// The set's generation when it was seen.
    pub generation: Option<i64>,
    pub expected: String,
    pub observed: String,
    /// Backend time it was seen.
    pub at_ms: u64,
}

/// The advisor's last result for one set.
#[derive(Debug, Clone, PartialEq)]
pub struct Advisor {
    pub set: ObjRef,
    /// `core::reconcile` on the mirror at `at`.
    pub plan: Plan,
    /// The backend time the plan was computed for.
    pub at: Option<Timestamp>,
    /// The mirror generation it was computed from.
    pub mirror_generation: u64,
}

/// A set's way to its replicas, as its status says: the counts last seen and when they last
/// moved toward the spec (the spec asked for more, a pod was created, one became Ready).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub wanted: i32,
    pub created: i32,
    pub ready: i32,
    pub at: Option<k8s_openapi::jiff::Timestamp>,
}
