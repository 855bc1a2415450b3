//! The group view's model ([`GroupMatrix`]): a rollout group's sets side by side — one column
//! per set in rolling order, one row per ordinal, each cell the pod's revision and state as the
//! grid classifies it — so the pods of one ordinal across zones (which hold the same data in
//! zone-partitioned systems) read across one row. Its header says who drives the group, which
//! set rolls, which are done, and why the next one waits (`plan::group::hold`, the rule the
//! group plan itself waits on: every ordinal the specs want, so a pod never created is named).
//!
//! Computed once per state change (`app::group::refresh`), each column's grid through its own
//! [`GridMemo`], never per frame. Values from the cluster (names, a part's reasons) are escaped
//! here. Must not touch: the terminal, styles, or the state it reads.

use std::collections::HashMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::grid::{GridMemo, GridView, RevClass};
use crate::app::state::{AppState, GroupShown};
pub use crate::app::state::{Column, GroupMatrix, MatrixKey, Motion};
use crate::backend::ObjRef;
use crate::plan::group::part::{self, ROLLOUT_GROUP, Reading, State};

impl MatrixKey {
    pub fn of(state: &AppState, shown: &GroupShown) -> MatrixKey {
        let min_ready = shown
            .sets
            .iter()
            .filter_map(|k| state.mirror.set(k))
            .any(|s| s.spec.min_ready_seconds.unwrap_or(0) > 0);
        MatrixKey {
            sets: shown.sets.clone(),
            mirror_generation: state.mirror.generation(),
            second: state.now.map(|t| t.as_second()).filter(|_| min_ready),
            unknown: crate::app::readings::pods_unknown(state),
        }
    }
}

impl GroupMatrix {
    /// The matrix of `shown` on what `state` holds, each column's grid read through its memo.
    pub fn build(
        state: &AppState,
        shown: &GroupShown,
        memos: &mut HashMap<ObjRef, GridMemo>,
    ) -> GroupMatrix {
        let key = MatrixKey::of(state, shown);
        let esc = |t: &str| crate::text::escape_controls(t).into_owned();
        let sets: Vec<Option<&StatefulSet>> =
            shown.sets.iter().map(|k| state.mirror.set(k)).collect();
        let columns: Vec<Column> = shown
            .sets
            .iter()
            .zip(&sets)
            .map(|(k, s)| column(state, k, *s, key.unknown.as_deref(), memos))
            .collect();
        let first = columns.iter().filter(|c| !c.grid.cells.is_empty()).map(|c| c.grid.first).min();
        let end = columns.iter().map(|c| c.grid.end()).max();
        let (first, end) = match (first, end) {
            (Some(f), Some(e)) if e > f => (f, e),
            _ => (0, 0),
        };
        // Why the next set waits first: on a small screen the header is cut from its end.
        let lines = vec![motion_line(state, shown, &sets, &columns), driver_line(shown, &sets)];
        let clusters = (shown.by == crate::app::state::GroupBy::Fleet).then(|| clusters(shown));
        GroupMatrix { key, name: esc(&shown.name), clusters, lines, columns, first, end }
    }

    /// The matrix of the group `state` shows: its cache when fresh, else computed now (a state
    /// whose batch never ended, in a test).
    pub fn of(state: &AppState) -> Option<std::borrow::Cow<'_, GroupMatrix>> {
        let shown = state.group.as_ref()?;
        match state.group_view.as_ref().filter(|m| m.is_fresh(state, shown)) {
            Some(m) => Some(std::borrow::Cow::Borrowed(m)),
            None => {
                let mut memos = HashMap::new();
                Some(std::borrow::Cow::Owned(GroupMatrix::build(state, shown, &mut memos)))
            }
        }
    }

    /// Whether this was computed from what `state` holds now for `shown`.
    pub fn is_fresh(&self, state: &AppState, shown: &GroupShown) -> bool {
        self.key == MatrixKey::of(state, shown)
    }

    /// The column of `set`, if it is one of the group's.
    pub fn column_of(&self, set: &ObjRef) -> Option<usize> {
        self.columns.iter().position(|c| &c.set == set)
    }
}

/// One member's column.
fn column(
    state: &AppState,
    key: &ObjRef,
    set: Option<&StatefulSet>,
    unknown: Option<&str>,
    memos: &mut HashMap<ObjRef, GridMemo>,
) -> Column {
    let Some(set) = set else {
        let words = "not found".to_string();
        let grid = GridView { set_name: key.name.clone(), ..GridView::default() };
        return Column { set: key.clone(), motion: Motion::Unknown, words, partition: None, grid };
    };
    if let Some(note) = unknown {
        let grid = GridView::unknown(set, note.to_string());
        let words = "pods unknown".to_string();
        return Column { set: key.clone(), motion: Motion::Unknown, words, partition: None, grid };
    }
    let (current, update) = crate::app::facts::revisions_of(set, None);
    let memo = memos.entry(key.clone()).or_default();
    let grid = GridView::build_memo(set, state.mirror.indexed(key), current, update, memo);
    let want = crate::core::spec::replicas(set).max(0);
    let updated =
        grid.cells.iter().filter(|c| c.exists && !c.condemned && c.rev == RevClass::Update).count();
    let strategy = crate::core::spec::strategy(set);
    let partition = (!strategy.on_delete && strategy.partition > 0 && update != current)
        .then_some(strategy.partition);
    let pending = !update.is_empty() && update != current;
    let held = strategy.on_delete || strategy.partition >= want;
    let mut motion = match (pending, updated) {
        (false, _) => Motion::Done,
        (true, 0) if held => Motion::Waiting,
        (true, _) => Motion::Rolling,
    };
    let counts = format!("{updated}/{want}");
    let mut words = match motion {
        Motion::Done => format!("done {counts}"),
        Motion::Rolling => format!("rolling {counts}"),
        _ => "waiting".to_string(),
    };
    // A group plan's part says what the plan made of the set (a halt, an abort), and that a
    // set whose pods are all updated is still the plan's while it bakes its last step.
    match part::read(set) {
        Reading::Part(p) | Reading::Fleet(p)
            if matches!(p.state, State::Halted | State::Aborted) =>
        {
            motion = Motion::Stopped;
            words = format!("{} {counts}", p.state.word());
        }
        Reading::Part(p) | Reading::Fleet(p)
            if p.state == State::Rolling && motion == Motion::Done =>
        {
            motion = Motion::Rolling;
            words = format!("rolling {counts}, its plan not over");
        }
        _ => {}
    }
    Column { set: key.clone(), motion, words, partition, grid }
}

/// Who drives the group, and each member as its part says it (or the label, read-only).
fn driver_line(shown: &GroupShown, sets: &[Option<&StatefulSet>]) -> String {
    let esc = |t: &str| crate::text::escape_controls(t).into_owned();
    if shown.by == crate::app::state::GroupBy::Fleet {
        return fleet_line(shown, sets);
    }
    let part = sets.iter().flatten().find_map(|s| match part::read(s) {
        Reading::Part(p) if p.group == shown.name => Some(p),
        _ => None,
    });
    if let Some(p) = part {
        let lookup = |n: &str| {
            sets.iter().flatten().copied().find(|s| s.metadata.name.as_deref() == Some(n))
        };
        let standing = part::whole(&p, lookup);
        return format!("ststui's group plan: {}", part::words(&p, &standing));
    }
    let present: Vec<&StatefulSet> = sets.iter().flatten().copied().collect();
    if present.len() == sets.len() && part::rollout_operator(&present).is_some() {
        return format!(
            "group {} is driven by grafana/rollout-operator ({ROLLOUT_GROUP}={}, OnDelete): \
             shown read-only, ststui does not drive it; {}",
            esc(&shown.name),
            esc(&shown.name),
            part::operator_next(&present)
        );
    }
    format!(
        "group {} ({} sets, by {}): no group plan recorded",
        esc(&shown.name),
        sets.len(),
        shown.by_words()
    )
}

/// A fleet's view: its plan as its members' parts say it (each member found in the view by its
/// cluster's context and name), or that none is recorded; it is shown read-only.
fn fleet_line(shown: &GroupShown, sets: &[Option<&StatefulSet>]) -> String {
    let esc = |t: &str| crate::text::escape_controls(t).into_owned();
    let part =
        sets.iter().flatten().find_map(|s| part::read(s).any().filter(|p| p.fleet()).cloned());
    let Some(p) = part else {
        return format!(
            "fleet {} ({} sets in {} clusters): no fleet plan recorded; shown read-only",
            esc(&shown.name),
            sets.len(),
            clusters(shown)
        );
    };
    let find = |i: usize| {
        let cluster = p.clusters.as_ref().and_then(|c| c.get(i)).map(|c| c.name.as_str());
        let at = shown.sets.iter().position(|k| {
            k.name == p.sets[i] && k.namespace.split_once('/').map(|(c, _)| c) == cluster
        });
        match at.and_then(|j| sets.get(j).copied().flatten()) {
            Some(s) => part::Found::Set(s),
            None => part::Found::Unread("not in this view"),
        }
    };
    let standing = part::whole_by(&p, find);
    format!("ststui's fleet plan (shown read-only): {}", part::words(&p, &standing))
}

/// How many clusters a fleet's view shows.
fn clusters(shown: &GroupShown) -> usize {
    let mut seen: Vec<&str> =
        shown.sets.iter().filter_map(|k| k.namespace.split_once('/').map(|(c, _)| c)).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// Which set rolls, and why the next one waits: the group plan's own rule.
fn motion_line(
    state: &AppState,
    shown: &GroupShown,
    sets: &[Option<&StatefulSet>],
    columns: &[Column],
) -> String {
    let esc = |t: &str| crate::text::escape_controls(t).into_owned();
    let rolling: Vec<&Column> = columns.iter().filter(|c| c.motion == Motion::Rolling).collect();
    let next = columns.iter().find(|c| c.motion == Motion::Waiting);
    let mut out: Vec<String> = Vec::new();
    match rolling.as_slice() {
        [] => {}
        [one] => out.push(format!("{} rolls ({})", esc(&one.label()), one.words)),
        many => {
            let names: Vec<String> = many.iter().map(|c| esc(&c.label())).collect();
            out.push(format!("{} sets in motion at once: {}", many.len(), names.join(", ")));
        }
    }
    let done: Vec<String> =
        columns.iter().filter(|c| c.motion == Motion::Done).map(|c| esc(&c.label())).collect();
    // A group plan's waiting set says what the one verdict says of it (wait and explain say
    // the same): the set before it, the zone bake, the hold, the runner gone.
    let judged = next
        .and_then(|n| crate::app::health::verdict(state, &n.set, Some(&[]), None))
        .filter(|v| {
            use crate::plan::verdict::Row;
            matches!(v.row, Row::GroupWaiting | Row::GroupHalted | Row::GroupStalled)
        });
    if let (Some(next), Some(v)) = (next, judged) {
        let clock = v.clock.map(|c| format!(" ({})", c.words(state.now.unwrap_or_default())));
        let what = v.short.as_deref().unwrap_or(&v.why);
        out.push(format!("{} waits: {what}{}", esc(&next.label()), clock.unwrap_or_default()));
    } else if let Some(next) = next {
        let name = esc(&next.label());
        out.push(match rolling.first() {
            Some(r) => format!("{name} waits: {} rolls first", esc(&r.label())),
            None => match hold(state, shown, sets) {
                Some(h) => format!("{name} waits: {} {}", esc(&h.pod), h.why),
                None => format!(
                    "{name} may start: every pod of the group is updated or untouched, Ready \
                     and available"
                ),
            },
        });
    } else if rolling.is_empty() && done.len() == columns.len() {
        out.push("every set done".into());
    }
    if !done.is_empty() && done.len() < columns.len() {
        out.push(format!("done: {}", done.join(", ")));
    }
    if out.is_empty() {
        out.push("nothing in motion".into());
    }
    out.join(" · ")
}

/// The group plan's hold (`plan::group::hold`) on what the mirror shows.
fn hold(
    state: &AppState,
    shown: &GroupShown,
    sets: &[Option<&StatefulSet>],
) -> Option<crate::plan::group::Hold> {
    let pods: Vec<Vec<(i32, &Pod)>> =
        shown.sets.iter().map(|k| state.mirror.pods_of(k).collect()).collect();
    let semantics = &state.options.semantics;
    let members: Vec<crate::plan::member::Member<'_>> = sets
        .iter()
        .zip(&pods)
        .filter_map(|(s, p)| Some(crate::plan::member::Member::of((*s)?, p, semantics)))
        .collect();
    crate::plan::group::hold(&members, state.now.unwrap_or_default())
}

/// Where the matrix goes inside its pane: the header's lines (wrapped), the two heading rows,
/// the columns shown (all, or a window around the cursor's when they do not fit) and the
/// ordinal rows shown (a window keeping the cursor's in view). The renderer and the click map
/// both read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixLayout {
    pub area: ratatui::layout::Rect,
    pub header: Vec<String>,
    /// The ordinal column's width (pointer, ordinal, space).
    pub ord_w: u16,
    /// Each column's width, its separator included.
    pub col_w: u16,
    /// The columns shown: `first_col..first_col + cols`.
    pub first_col: usize,
    pub cols: usize,
    /// The ordinal rows shown: `first + offset ..`, `rows` of them.
    pub offset: usize,
    pub rows: usize,
}

/// Rows of the header at most (the last cut with `…`).
const HEADER_MAX: usize = 3;
/// The narrowest column.
const COL_MIN: u16 = 8;

impl MatrixLayout {
    pub fn new(m: &GroupMatrix, cursor: (Option<usize>, i32), area: ratatui::layout::Rect) -> Self {
        let width = usize::from(area.width);
        let mut header: Vec<String> =
            m.lines.iter().flat_map(|l| super::wrap::wrap(l, width.max(1))).collect();
        if header.len() > HEADER_MAX {
            header.truncate(HEADER_MAX);
            if let Some(last) = header.last_mut() {
                let keep: String = last.chars().take(width.saturating_sub(1)).collect();
                *last = format!("{keep}…");
            }
        }
        let digits = m.end.saturating_sub(1).max(0).checked_ilog10().unwrap_or(0) + 1;
        let ord_w = u16::try_from(digits.max(2) + 3).unwrap_or(8);
        let room = area.width.saturating_sub(ord_w);
        let n = m.columns.len().max(1);
        let fit = usize::from((room / COL_MIN).max(1));
        let cols = n.min(fit);
        let col_w = room / u16::try_from(cols).unwrap_or(1).max(1);
        let at = cursor.0.unwrap_or(0).min(n - 1);
        let first_col = (at + 1).saturating_sub(cols).min(n - cols);
        let above = u16::try_from(header.len()).unwrap_or(0) + 2;
        let rows = usize::from(area.height.saturating_sub(above));
        let total = usize::try_from(m.end.saturating_sub(m.first)).unwrap_or(0);
        let sel = usize::try_from(cursor.1.saturating_sub(m.first)).unwrap_or(0).min(total);
        let offset = (sel + 1).saturating_sub(rows).min(total.saturating_sub(rows));
        let rows = rows.min(total.saturating_sub(offset));
        MatrixLayout { area, header, ord_w, col_w, first_col, cols, offset, rows }
    }

    /// The row of the first heading (the sets' names); the second says where each stands.
    pub fn heading_y(&self) -> u16 {
        self.area.y + u16::try_from(self.header.len()).unwrap_or(0)
    }

    /// The screen row of the `i`th ordinal row shown.
    pub fn row_y(&self, i: usize) -> u16 {
        self.heading_y() + 2 + u16::try_from(i).unwrap_or(u16::MAX)
    }

    /// The left edge of column `c` (an index into the matrix's columns), when shown.
    pub fn col_x(&self, c: usize) -> Option<u16> {
        let i = c.checked_sub(self.first_col).filter(|i| *i < self.cols)?;
        Some(self.area.x + self.ord_w + self.col_w * u16::try_from(i).ok()?)
    }
}

/// The pane's inside rows the matrix would like at `width` (borders excluded): the header, the
/// headings, every ordinal.
pub fn wants(m: &GroupMatrix, width: u16) -> u16 {
    let header: usize = m
        .lines
        .iter()
        .map(|l| super::wrap::wrapped_rows(l, usize::from(width).max(1)))
        .sum::<usize>()
        .min(HEADER_MAX);
    let rows = usize::try_from(m.end.saturating_sub(m.first)).unwrap_or(0);
    u16::try_from(header + 2 + rows.max(1)).unwrap_or(u16::MAX)
}
